//! `skilleval score`: each wording judged by the probability of the behaviour it asks for. For
//! every sample and arm, the harness renders the prompt of each round as a run would, and the
//! model's probability of the sample's reference step (the call with its arguments as written,
//! no call where none is needed, the answer after the recorded result) is read under the run's
//! own sampler, with no decoding and no repeats: the expectation of what a sampled run draws
//! once per repeat (docs/score.md, decision 022).

pub mod agreement;
pub mod batch;
pub mod forcing;
pub mod measure;
pub mod reference;
pub mod report;
pub mod rows;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::eval::arm;
use crate::eval::law_cases::{self, Replayer};
use crate::eval::record::manifest::variant_label;
use crate::eval::runner::Prepared;
use crate::exec::run_id::{new_run_id, unused_run_id};
use crate::harness::backend::{Backend, Sampling};

use measure::{StepScore, Unscored};
use reference::Reference;
use rows::{Margin, ScoreComparison};

/// The files of a score folder.
pub const STEPS_FILE: &str = "steps.jsonl";
pub const SUMMARY_FILE: &str = "score.json";
pub const REPORT_MD: &str = "report.md";
pub const REPORT_HTML: &str = "report.html";

/// What a scored run found, as `score.json` keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScoreSummary {
    pub pack: String,
    pub model: Option<String>,
    pub sampling: Sampling,
    /// The margin of practical change.
    pub margin: Margin,
    /// The repeats of the planned sampled confirmation: a row whose expected draws under them
    /// are fewer than one in both arms is out of reach.
    pub confirm_repeats: u32,
    /// Replies drawn at each free-text step (answers, questions) for the laws to judge; 0: those
    /// steps are shown by their reference words only, as diagnostics.
    #[serde(default)]
    pub draws: u32,
    pub variants: Vec<String>,
    pub control: bool,
    pub samples: usize,
    /// Samples with no reference step (neither their fields nor the laws say what to do).
    pub without_reference: Vec<String>,
    /// (sample, arm) pairs the loop could not score, with why.
    pub unscored: Vec<Unscored>,
    pub comparisons: Vec<ScoreComparison>,
    pub prompt_tokens: u64,
    pub cached_prompt_tokens: u64,
    /// Tokens the model computed to score them: each arm's shared prefix once, then every
    /// sample's own tail and steps.
    #[serde(default)]
    pub computed_tokens: u64,
    /// Tokens generated for drawn replies.
    #[serde(default)]
    pub drawn_tokens: u64,
    pub secs: f64,
    /// The score against a sampled run of the same pack (`--against`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<agreement::Agreement>,
}

/// How a score is read: the margin, the planned confirmation, and the replies drawn at free-text
/// steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreSettings {
    pub margin: Margin,
    pub confirm_repeats: u32,
    pub draws: u32,
}

impl Default for ScoreSettings {
    fn default() -> Self {
        ScoreSettings {
            margin: rows::DEFAULT_MARGIN,
            confirm_repeats: rows::DEFAULT_CONFIRM_REPEATS,
            draws: 0,
        }
    }
}

/// A finished score: its summary, every step, and where it was written.
pub struct ScoreRun {
    pub summary: ScoreSummary,
    pub steps: Vec<StepScore>,
    pub id: String,
    pub dir: PathBuf,
}

/// Each sample's reference steps, from its fields, the laws and the judge cases. Checked before
/// the model loads.
pub fn references(prepared: &Prepared) -> anyhow::Result<Vec<(usize, Reference)>> {
    let pack = &prepared.opts.pack;
    let replayer = Replayer::new(pack)?;
    let cases_path = pack.dir.join(law_cases::CASES_FILE);
    let present = crate::base::input::optional_input_present(&cases_path)
        .with_context(|| format!("{}: cannot read judge cases", cases_path.display()))?;
    let cases = if present {
        let corpus = pack.corpus(prepared.opts.corpus.as_deref())?;
        law_cases::load_cases(&cases_path, pack, &corpus)?
    } else {
        Vec::new()
    };
    let corpus_path = prepared
        .opts
        .corpus
        .clone()
        .unwrap_or(pack.corpus_path.clone());
    let mut out = Vec::new();
    for (i, sample) in prepared.samples.iter().enumerate() {
        let found = reference::reference(pack, &replayer, &cases, sample)
            .map_err(|e| anyhow::anyhow!("{}:{}: {e}", corpus_path.display(), sample.line))?;
        if let Some(r) = found {
            out.push((i, r));
        }
    }
    Ok(out)
}

/// The labels of the variants (`A/A` names the baseline scored a second time).
pub fn variant_labels(prepared: &Prepared) -> Vec<String> {
    if prepared.trees.aa {
        return vec!["baseline again (A/A)".into()];
    }
    prepared
        .opts
        .variants
        .iter()
        .map(|p| variant_label(p))
        .collect()
}

/// Scores every (arm, sample) on `backend`, and compares the arms. Arm by arm: a first walk of
/// every sample collects the arm's score requests, the backend computes them together (the arm's
/// shared prefix once), and a second walk reads the answers (`batch`).
pub fn score(
    backend: &mut dyn Backend,
    prepared: &Prepared,
    references: &[(usize, Reference)],
    settings: ScoreSettings,
    drawer: Option<&dyn Backend>,
    progress: bool,
) -> anyhow::Result<(ScoreSummary, Vec<StepScore>)> {
    let started = Instant::now();
    let pack = &prepared.opts.pack;
    // In the order they are scored: the control (unless turned off), the baseline, each variant.
    let arms = arm::in_plan_order(prepared.opts.control, prepared.trees.variant_count());
    let mut steps = Vec::new();
    let mut unscored = Vec::new();
    let total = arms.len() * references.len();
    let mut done = 0;
    let (mut prompt_tokens, mut cached, mut drawn, mut computed) = (0u64, 0u64, 0u64, 0u64);
    for &arm in &arms {
        let tree = prepared.trees.tree(arm);
        let walk = |backend: &mut dyn Backend, index: usize, reference, draws, drawer| {
            measure::score_sample(
                backend,
                pack,
                tree,
                &prepared.registry,
                &prepared.samples[index],
                arm,
                reference,
                prepared.sampling,
                draws,
                drawer,
            )
        };
        let mut collecting = batch::Collecting::new(&*backend);
        for (index, reference) in references {
            let _ = walk(&mut collecting, *index, reference, 0, None);
        }
        let requests = collecting.requests;
        if progress {
            eprint!(
                "\rscoring arm {}: {} prompts at once   ",
                arm.name(),
                requests.len()
            );
        }
        let batch = backend.score_batch(&requests);
        computed += batch.computed_tokens;
        let mut answering = batch::Answering::new(backend, requests, batch.answers);
        for (index, reference) in references {
            match walk(&mut answering, *index, reference, settings.draws, drawer) {
                Ok(scored) => {
                    steps.extend(scored.steps);
                    prompt_tokens += scored.prompt_tokens;
                    cached += scored.cached_prompt_tokens;
                    drawn += scored.drawn_tokens;
                }
                Err(why) => unscored.push(why),
            }
            done += 1;
            if progress {
                eprint!("\rscoring {done}/{total} (arm {})   ", arm.name());
            }
        }
    }
    if progress && total > 0 {
        eprintln!();
    }
    if !unscored.is_empty() && steps.is_empty() {
        anyhow::bail!(
            "no step could be scored; the first sample said: {}",
            unscored[0].why
        );
    }
    let variants = variant_labels(prepared);
    let comparisons = rows::comparisons(
        &steps,
        &variants,
        prepared.opts.control,
        settings.margin,
        settings.confirm_repeats,
    );
    let scored: std::collections::BTreeSet<usize> = references.iter().map(|(i, _)| *i).collect();
    let summary = ScoreSummary {
        pack: pack.name.clone(),
        model: backend.info().model_name,
        sampling: prepared.sampling,
        margin: settings.margin,
        confirm_repeats: settings.confirm_repeats,
        draws: settings.draws,
        variants,
        control: prepared.opts.control,
        samples: references.len(),
        without_reference: prepared
            .samples
            .iter()
            .enumerate()
            .filter(|(i, _)| !scored.contains(i))
            .map(|(_, s)| s.id.clone())
            .collect(),
        unscored,
        comparisons,
        prompt_tokens,
        cached_prompt_tokens: cached,
        computed_tokens: computed,
        drawn_tokens: drawn,
        secs: started.elapsed().as_secs_f64(),
        agreement: None,
    };
    Ok((summary, steps))
}

/// A new score folder under `output_root`, named after the pack; created here, so that two
/// scores started in the same second never share one.
pub fn new_folder(output_root: &Path, pack: &str) -> anyhow::Result<(String, PathBuf)> {
    std::fs::create_dir_all(output_root)
        .with_context(|| format!("{}: cannot create the output folder", output_root.display()))?;
    let base = new_run_id(&format!("{pack}-score"));
    for _ in 0..100 {
        let id = unused_run_id(output_root, &base);
        let dir = output_root.join(&id);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok((id, dir)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("{}: cannot create the score folder", dir.display()))
            }
        }
    }
    anyhow::bail!("{}: no free score folder name", output_root.display())
}

/// Writes the steps, the summary and both reports into `dir`.
pub fn write_folder(dir: &Path, summary: &ScoreSummary, steps: &[StepScore]) -> anyhow::Result<()> {
    let mut lines = String::new();
    for step in steps {
        lines.push_str(&serde_json::to_string(step)?);
        lines.push('\n');
    }
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        crate::base::write::write_atomic(&path, text.as_bytes())
            .with_context(|| format!("{}: cannot write", path.display()))
    };
    write(STEPS_FILE, &lines)?;
    write(SUMMARY_FILE, &serde_json::to_string_pretty(summary)?)?;
    write(REPORT_MD, &report::markdown(summary))?;
    write(REPORT_HTML, &report::html(summary))?;
    Ok(())
}
