//! `skilleval run`: a pack's samples through the harness for every arm (control, baseline,
//! variant), judged, journaled, summarized and reported.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail};

use super::corpus::Sample;
use super::journal::{self, Journal, JournalEntry};
use super::judge;
use super::manifest::{self, Manifest};
use super::pack::{ControlPart, Pack};
use super::plan::{self, Unit};
use super::rejudge;
use super::replay::{self, LiveServices, RecordMode};
use super::report;
use super::reuse::{self, BaselineSource};
use super::shard::{Shard, ShardRecord};
use super::stats::{self, Arm, Summary};
use super::waves::{self, Sequential, SequentialRecord, Stop};
use crate::exec::profile::Profile;
use crate::exec::progress::Progress;
use crate::exec::run_id::{new_run_id, unused_run_id};
use crate::exec::scheduler;
use crate::harness::agent::{self, AgentRequest};
use crate::harness::backend::{Backend, Sampling, WithFamily};
use crate::harness::skills::SkillTree;
use crate::harness::tools::Registry;

#[derive(Clone)]
pub struct RunOptions {
    pub pack: Pack,
    pub skills_dir: Option<PathBuf>,
    pub variant: Option<PathBuf>,
    /// Further variants, each compared with the same baseline under the same seeds.
    pub more_variants: Vec<PathBuf>,
    pub corpus: Option<PathBuf>,
    pub repeats: u32,
    pub seed: u64,
    pub categories: Vec<String>,
    pub limit: Option<usize>,
    pub record: RecordMode,
    pub temperature: Option<f32>,
    pub top_k: Option<i32>,
    pub top_p: Option<f32>,
    pub output_root: PathBuf,
    pub resume: Option<String>,
    /// Show progress on stderr: a bar on a terminal, else a plain line every 10 s.
    pub progress: bool,
    pub live: LiveServices,
    /// Units run at once, each on its own handle of a backend that serves many callers.
    pub parallel: usize,
    /// Run the control arm (the skill with an empty body), to measure the skill's own effect.
    pub control: bool,
    /// Run only this slice of the plan (`--shard I/N`); `merge` puts the slices together.
    pub shard: Option<Shard>,
    /// Where the baseline may come from: an earlier run with the same inputs, or run anew
    /// (the default here; the CLI looks in its cache of earlier runs).
    pub baseline_source: BaselineSource,
    /// Run in waves and stop when the verdicts are known ([`waves`]); `repeats` is the most.
    pub sequential: Option<Sequential>,
}

impl RunOptions {
    pub fn new(pack: Pack) -> Self {
        RunOptions {
            pack,
            skills_dir: None,
            variant: None,
            more_variants: Vec::new(),
            corpus: None,
            repeats: 3,
            seed: 0,
            categories: Vec::new(),
            limit: None,
            record: RecordMode::Off,
            temperature: None,
            top_k: None,
            top_p: None,
            output_root: PathBuf::from("output"),
            resume: None,
            progress: false,
            live: LiveServices::default(),
            parallel: 1,
            control: true,
            shard: None,
            baseline_source: BaselineSource::Off,
            sequential: None,
        }
    }
}

pub struct RunResult {
    pub run_id: String,
    /// The earlier run whose baseline entries were copied, if any.
    pub baseline_from: Option<String>,
    /// How many units (baseline and control) were copied from it.
    pub baseline_copied: usize,
    /// How many of those this pack's laws judged otherwise than the earlier run's.
    pub baseline_rejudged: usize,
    pub dir: PathBuf,
    pub summary: Summary,
    pub entries: Vec<JournalEntry>,
    /// Where the run's time and tokens went, as `profile.json` holds it.
    pub profile: Profile,
}

/// The skills trees a run compares.
pub struct Arms {
    /// The skill under test with an empty body: its name and description are still offered
    /// (and it is still preloaded when the pack preloads it), so only the body is missing.
    pub control: SkillTree,
    pub baseline: SkillTree,
    pub variant: SkillTree,
    /// The trees of the second and further variants (arms `variant2`…).
    pub more: Vec<SkillTree>,
    /// No variant: the baseline against itself.
    pub aa: bool,
}

impl Arms {
    pub fn tree(&self, arm: Arm) -> &SkillTree {
        match arm {
            Arm::Control => &self.control,
            Arm::Baseline => &self.baseline,
            Arm::Variant => &self.variant,
            Arm::More(i) => &self.more[usize::from(i)],
        }
    }

    /// How many variants the run compares (one for an A/A run).
    pub fn variant_count(&self) -> usize {
        1 + self.more.len()
    }
}

/// Where the control arm's skill says it came from.
const CONTROL_SOURCE: &str = "<control: the skill with an empty body>";

/// `tree` with the part `pack.control` names removed from the skill under test: its body
/// emptied (its front matter kept), or its description (its body kept).
fn control_tree(pack: &Pack, tree: &SkillTree) -> anyhow::Result<SkillTree> {
    match pack.control {
        ControlPart::Body => tree.with_overlay(&pack.skill, "", Path::new(CONTROL_SOURCE)),
        ControlPart::Description => tree
            .with_description(&pack.skill, "")
            .ok_or_else(|| anyhow!("skill {:?} is not in the skills tree", pack.skill)),
    }
}

/// The baseline tree and the variant laid over it. The skill under test must be in the
/// baseline, unless the variant adds it (a variant with front matter naming it): that run
/// measures what adding the skill does.
pub fn arms(
    pack: &Pack,
    skills_dir: Option<&Path>,
    variant: Option<&Path>,
) -> anyhow::Result<Arms> {
    let Some(path) = variant else {
        let baseline = pack.skills(skills_dir)?;
        return Ok(Arms {
            control: control_tree(pack, &baseline)?,
            variant: baseline.clone(),
            baseline,
            more: Vec::new(),
            aa: true,
        });
    };
    let text = crate::harness::skills::read_variant(path)?;
    let baseline = match pack.skills(skills_dir) {
        Ok(tree) => tree,
        Err(absent) => {
            let dir = skills_dir.unwrap_or(&pack.skills_dir);
            let tree = SkillTree::load(dir)?;
            if tree.get(&pack.skill).is_some() {
                return Err(absent);
            }
            if !crate::harness::skills::has_front_matter(&text) {
                bail!(
                    "{}: front matter: the variant has none, and skill {:?} is not in the baseline tree {}, so there is no skill to lay it over; start the file with front matter (`name: {}`, `description`) to add the skill",
                    path.display(),
                    pack.skill,
                    dir.display(),
                    pack.skill
                );
            }
            tree
        }
    };
    let variant = overlay_variant(pack, &baseline, &text, path)?;
    // The skill's front matter comes from the baseline, or from the variant when it adds the
    // skill.
    let control = match baseline.get(&pack.skill) {
        Some(_) => control_tree(pack, &baseline)?,
        None => control_tree(pack, &variant)?,
    };
    Ok(Arms {
        control,
        baseline,
        variant,
        more: Vec::new(),
        aa: false,
    })
}

/// The baseline with one variant's text laid over the skill under test.
fn overlay_variant(
    pack: &Pack,
    baseline: &SkillTree,
    text: &str,
    path: &Path,
) -> anyhow::Result<SkillTree> {
    let variant = baseline.with_overlay(&pack.skill, text, path)?;
    if variant.get(&pack.skill).is_none() {
        bail!(
            "{}: field `name`: the variant renames skill {:?}; keep the name to compare",
            path.display(),
            pack.skill
        );
    }
    Ok(variant)
}

/// The arms of a run with several variants: [`arms`] for the first, then each further one laid
/// over the same baseline. Each file may be named once.
pub fn arms_with_variants(
    pack: &Pack,
    skills_dir: Option<&Path>,
    variant: Option<&Path>,
    more_variants: &[PathBuf],
) -> anyhow::Result<Arms> {
    let mut arms = arms(pack, skills_dir, variant)?;
    if more_variants.is_empty() {
        return Ok(arms);
    }
    let Some(first) = variant else {
        bail!("--variant: further variants need a first one");
    };
    if 1 + more_variants.len() > stats::MAX_VARIANTS {
        bail!(
            "--variant: {} variants given; one run compares at most {}",
            1 + more_variants.len(),
            stats::MAX_VARIANTS
        );
    }
    let mut seen = vec![first.to_path_buf()];
    for path in more_variants {
        if seen.iter().any(|p| same_file(p, path)) {
            bail!("--variant {}: named twice", path.display());
        }
        seen.push(path.clone());
        let text = crate::harness::skills::read_variant(path)?;
        arms.more
            .push(overlay_variant(pack, &arms.baseline, &text, path)?);
    }
    Ok(arms)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// How a run's report names a variant: its file name.
pub fn variant_label(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The samples the run selects, and the ids of the whole corpus.
fn select_samples(opts: &RunOptions) -> anyhow::Result<(Vec<Sample>, BTreeSet<String>)> {
    let mut samples = opts.pack.corpus(opts.corpus.as_deref())?;
    let corpus_ids = samples.iter().map(|s| s.id.clone()).collect();
    if !opts.categories.is_empty() {
        for c in &opts.categories {
            if !opts.pack.categories.contains(c) {
                bail!(
                    "--category {c:?}: the pack has no such category (it has: {})",
                    opts.pack.categories.join(", ")
                );
            }
        }
        samples.retain(|s| opts.categories.contains(&s.category));
    }
    if let Some(limit) = opts.limit {
        samples = plan::limit_round_robin(samples, limit);
    }
    if samples.is_empty() {
        bail!("no samples to run");
    }
    let corpus_path = opts.corpus.as_deref().unwrap_or(&opts.pack.corpus_path);
    for s in &samples {
        judge::check_sample(&opts.pack.laws, &s.category, &s.fields).map_err(|e| {
            anyhow!(
                "{}:{}: sample {:?}: {}",
                corpus_path.display(),
                s.line,
                s.id,
                e.replace('\n', "; ")
            )
        })?;
    }
    Ok((samples, corpus_ids))
}

/// A run's inputs, built and checked once, before the model loads: the arms' skills trees, the
/// samples, the tools answered from fixtures and the sampling settings.
pub struct Prepared {
    pub opts: RunOptions,
    pub arms: Arms,
    pub samples: Vec<Sample>,
    pub registry: Registry,
    pub sampling: Sampling,
    /// The digests of the run's inputs, taken before the model loads.
    pub inputs: manifest::InputHashes,
}

/// Every check on the inputs a run does before it asks the model anything: the pack's skills
/// tree, the variant, the corpus, `--category`, `--limit`, the fields laws read, `--repeats` and
/// the fixtures. The CLI calls it before loading the model, so that a mistake costs no load.
pub fn prepare(opts: &RunOptions) -> anyhow::Result<Prepared> {
    let pack = &opts.pack;
    super::pack::check_sampling_flags(opts.temperature, opts.top_k, opts.top_p)?;
    let arms = arms_with_variants(
        pack,
        opts.skills_dir.as_deref(),
        opts.variant.as_deref(),
        &opts.more_variants,
    )?;
    let (samples, corpus_ids) = select_samples(opts)?;
    if opts.repeats == 0 {
        bail!("--repeats must be at least 1");
    }
    plan::check_size(
        samples.len(),
        plan::arms_with_variants(opts.control, arms.variant_count()).len(),
        opts.repeats,
    )?;
    if let Some(shard) = opts.shard {
        shard.check_against(samples.len())?;
    }
    let store = Arc::new(replay::load_fixtures(pack, opts.record)?);
    if let Some(run_id) = &opts.resume {
        journal::check_resume(&opts.output_root, run_id)?;
        // The journal is checked against the plan the run began with; a flag that changes the
        // plan (--seed, --variant…) is named by the manifest's own comparison after the load.
        let folder = opts.output_root.join(run_id);
        let began = std::fs::read_to_string(folder.join(report::run_folder::MANIFEST_FILE))
            .ok()
            .and_then(|text| serde_json::from_str::<Manifest>(&text).ok());
        if let Some(began) = began {
            let plan = plan::PlanShape::of_manifest(&began, Some(corpus_ids));
            journal::read_in_plan(&folder.join(journal::JOURNAL_FILE), &plan)
                .map_err(|e| anyhow!("--resume: {e}"))?;
        }
    }
    check_output_paths(opts)?;
    check_variant_labels(opts)?;
    // Taken before the model loads: an unreadable input fails here, not after the load.
    let inputs = manifest::InputHashes::of(
        pack,
        &opts.skills_dir.clone().unwrap_or(pack.skills_dir.clone()),
        opts.variant.as_deref(),
        &opts.more_variants,
        opts.corpus.as_deref().unwrap_or(&pack.corpus_path),
    )?;
    let registry = replay::build_registry(&pack.tools, store, opts.record, opts.live.clone());
    check_law_arguments(pack, &registry)?;
    let mut sampling = pack.sampling;
    sampling.temperature = opts.temperature.unwrap_or(sampling.temperature);
    sampling.top_k = opts.top_k.unwrap_or(sampling.top_k);
    sampling.top_p = opts.top_p.unwrap_or(sampling.top_p);
    Ok(Prepared {
        opts: opts.clone(),
        arms,
        samples,
        registry,
        sampling,
        inputs,
    })
}

/// The folders a run will write to and read its baseline from, checked before the model loads:
/// the output folder is created (or must be one), and `--baseline-from` must name a run folder
/// with a manifest.
fn check_output_paths(opts: &RunOptions) -> anyhow::Result<()> {
    let root = &opts.output_root;
    if root.exists() && !root.is_dir() {
        bail!("--output {}: is not a folder", root.display());
    }
    std::fs::create_dir_all(root)
        .map_err(|e| anyhow!("--output {}: cannot create folder: {e}", root.display()))?;
    if let BaselineSource::Run(run) = &opts.baseline_source {
        if opts.resume.is_some() {
            bail!("--baseline-from {run}: a resumed run keeps the baseline it began with; drop --baseline-from");
        }
        let dir =
            report::run_folder::find(run, root).map_err(|e| anyhow!("--baseline-from {e}"))?;
        let manifest = dir.join(report::run_folder::MANIFEST_FILE);
        if !manifest.is_file() {
            bail!(
                "--baseline-from {run}: {} does not exist",
                manifest.display()
            );
        }
    }
    Ok(())
}

/// Refuses, before the model loads, a skill body or a sample's messages that cannot fit a
/// context of `ctx` tokens whatever the tokenizer makes of them: a text of n bytes needs at least
/// n / `longest_token_bytes` tokens. Anything that passes here and still does not fit errors in
/// its units, which the run then reports.
pub fn check_fits_context(
    run: &Prepared,
    ctx: u32,
    longest_token_bytes: usize,
) -> anyhow::Result<()> {
    let fewest = |bytes: usize| bytes.div_ceil(longest_token_bytes.max(1));
    let pack = &run.opts.pack;
    let mut trees = vec![&run.arms.baseline, &run.arms.variant];
    trees.extend(&run.arms.more);
    for tree in trees {
        if let Some(skill) = tree.get(&pack.skill) {
            let tokens = fewest(skill.body.len());
            if tokens > ctx as usize {
                bail!(
                    "{}: the skill's body is {} bytes, at least {tokens} tokens of this model, more than the context of {ctx} holds (--ctx)",
                    skill.source.display(),
                    skill.body.len()
                );
            }
        }
    }
    let corpus = run.opts.corpus.as_deref().unwrap_or(&pack.corpus_path);
    for sample in &run.samples {
        let bytes: usize = sample.messages.iter().map(|m| m.content.len()).sum();
        let tokens = fewest(bytes);
        if tokens > ctx as usize {
            bail!(
                "{}:{}: sample {:?}: its messages are {bytes} bytes, at least {tokens} tokens of this model, more than the context of {ctx} holds (--ctx)",
                corpus.display(),
                sample.line,
                sample.id
            );
        }
    }
    Ok(())
}

/// A law that reads an argument the tool's schema does not have could never pass: refused,
/// naming the schema's parameters.
fn check_law_arguments(pack: &Pack, registry: &Registry) -> anyhow::Result<()> {
    for law in &pack.laws {
        let Some((tool, argument)) = law.check().argument() else {
            continue;
        };
        let Some(properties) = registry
            .get(tool)
            .and_then(|t| t.parameters.get("properties"))
            .and_then(|p| p.as_object())
        else {
            continue;
        };
        if !properties.contains_key(argument) {
            let names: Vec<&str> = properties.keys().map(String::as_str).collect();
            bail!(
                "{}: law `{}`: field `argument`: tool {tool:?} has no argument {argument:?} (its parameters: {})",
                pack.file.display(),
                law.name,
                names.join(", ")
            );
        }
    }
    Ok(())
}

/// Two variants the report would head alike (by file name) are refused.
fn check_variant_labels(opts: &RunOptions) -> anyhow::Result<()> {
    let files: Vec<&PathBuf> = opts.variant.iter().chain(&opts.more_variants).collect();
    for (i, a) in files.iter().enumerate() {
        if let Some(b) = files[..i]
            .iter()
            .find(|b| variant_label(b) == variant_label(a))
        {
            bail!(
                "--variant {} and {}: both are named {}, and the report heads its columns by file name; rename one",
                b.display(),
                a.display(),
                variant_label(a)
            );
        }
    }
    Ok(())
}

/// Runs one unit of work: a sample, an arm, a repeat. Pure in its inputs: the result does not
/// depend on what ran before.
pub fn run_unit(
    backend: &mut dyn Backend,
    pack: &Pack,
    tree: &SkillTree,
    registry: &Registry,
    sample: &Sample,
    unit: &Unit,
    sampling: Sampling,
) -> JournalEntry {
    let mut messages = pack.examples.clone();
    messages.extend(sample.messages.iter().cloned());
    let request = AgentRequest {
        instructions: &pack.instructions,
        messages,
        skills: tree,
        preload: if pack.preload {
            vec![pack.skill.clone()]
        } else {
            Vec::new()
        },
        tools: registry,
        format: pack.call_format,
        sampling: Sampling {
            seed: unit.seed,
            ..sampling
        },
        budgets: pack.budgets,
        constrain_calls: pack.constrained_calls,
    };
    let transcript = agent::run(backend, &request);
    let (judgement, gapped) = judge::judge_unit(&pack.laws, sample, &transcript);
    JournalEntry {
        sample_id: sample.id.clone(),
        category: sample.category.clone(),
        arm: unit.arm,
        repeat: unit.repeat,
        seed: unit.seed,
        gapped,
        errored: matches!(
            transcript.stop,
            crate::harness::transcript::StopReason::Error(_)
        ) || replay::recording_failure(&transcript).is_some(),
        judgement,
        transcript,
    }
}

/// Prepares a run and runs it.
pub fn run(backend: &mut dyn Backend, opts: &RunOptions) -> anyhow::Result<RunResult> {
    run_prepared(backend, &prepare(opts)?)
}

/// Runs prepared inputs: the run folder, the plan, the units, the summary. A pack's
/// `chat_format` speaks to the model in that format instead of its own.
pub fn run_prepared(backend: &mut dyn Backend, run: &Prepared) -> anyhow::Result<RunResult> {
    match run.opts.pack.chat_format {
        Some(family) => run_steps(&mut WithFamily::new(backend, family), run),
        None => run_steps(backend, run),
    }
}

fn run_steps(backend: &mut dyn Backend, run: &Prepared) -> anyhow::Result<RunResult> {
    let mut folder = RunFolder::open(&run.opts)?;
    if run.opts.progress {
        eprintln!("run {} → {}", folder.run_id, folder.dir.display());
        #[cfg(unix)]
        crate::exec::interrupt::say_on_interrupt(&format!(
            "interrupted: run {id} keeps every unit it finished; the same command with --resume {id} goes on",
            id = folder.run_id
        ));
    }
    let mut manifest = manifest(run, backend, &folder.run_id)?;
    let mut entries = std::mem::take(&mut folder.journaled);
    let taken = match run.opts.resume {
        Some(_) => None,
        None => {
            let sample_of = |i: usize| {
                let sample = &run.samples[i];
                (sample.id.clone(), sample.category.clone())
            };
            // A refusal leaves no run folder behind: nothing has been written to it yet.
            reuse::take(
                &run.opts.output_root,
                &manifest,
                &run.opts.baseline_source,
                &plan_units(run, &entries),
                &sample_of,
            )
            .inspect_err(|_| folder.remove_unused())?
        }
    };
    manifest.baseline_from = taken.as_ref().map(|t| t.reuse.run_id.clone());
    // The earlier run may have been judged with other laws: its transcripts are judged with these.
    let copied: Vec<(JournalEntry, Option<JournalEntry>, String)> = taken
        .into_iter()
        .flat_map(|t| t.entries)
        .map(|(entry, line)| {
            let sample = run.samples.iter().find(|s| s.id == entry.sample_id);
            let again = sample.and_then(|s| rejudge::judge_again(&entry, &run.opts.pack.laws, s));
            (entry, again, line)
        })
        .collect();
    manifest.baseline_rejudged = copied
        .iter()
        .filter(|(_, again, _)| again.is_some())
        .count();
    folder.write_manifest(&manifest, run.opts.resume.is_some())?;
    let mut journal = Journal::open(&folder.journal_path)?;
    let baseline_copied = copied.len();
    for (entry, again, line) in copied {
        match again {
            Some(again) => {
                journal.append(&again)?;
                entries.push(again);
            }
            None => {
                journal.append_line(&line)?;
                entries.push(entry);
            }
        }
    }
    let units = plan_units(run, &entries);
    let mut profile = Profile::new(run.opts.parallel.max(1));
    profile.model_load_secs = manifest.backend.load_secs;
    let started = Instant::now();
    match &mut manifest.sequential {
        None => execute(
            backend,
            run,
            &units,
            &mut journal,
            &mut profile,
            &mut entries,
        )?,
        Some(record) => {
            let mut record = record.clone();
            let sinks = (&mut journal, &mut profile, &mut entries);
            execute_in_waves(backend, run, &folder.dir, &manifest, &mut record, sinks)?;
            manifest.sequential = Some(record);
        }
    }
    let wall = started.elapsed().as_secs_f64();
    profile.finish(wall);
    if let Some(stats) = backend.engine_stats() {
        profile.attach_engine(stats);
    }
    write_json(&folder.dir.join("profile.json"), &profile)?;
    let summary = summarize(run, &mut entries, &folder.dir, &manifest, &profile)?;
    Ok(RunResult {
        run_id: folder.run_id,
        baseline_from: manifest.baseline_from.clone(),
        baseline_copied,
        baseline_rejudged: manifest.baseline_rejudged,
        dir: folder.dir,
        summary,
        entries,
        profile,
    })
}

/// A run's output folder: new, or the one `--resume` names with what its journal holds.
struct RunFolder {
    run_id: String,
    dir: PathBuf,
    journal_path: PathBuf,
    /// The entries of the run resumed; none for a new run.
    journaled: Vec<JournalEntry>,
    /// Holds the folder's lock for as long as the run goes on.
    _locked: journal::RunFolder,
}

impl RunFolder {
    fn open(opts: &RunOptions) -> anyhow::Result<Self> {
        let run_id = match &opts.resume {
            Some(id) => id.clone(),
            None => unused_run_id(&opts.output_root, &new_run_id(&opts.pack.name)),
        };
        let mut locked =
            journal::RunFolder::open(&opts.output_root, &run_id, opts.resume.is_some())?;
        let journaled = std::mem::take(&mut locked.entries);
        let dir = locked.dir.clone();
        Ok(RunFolder {
            run_id,
            journal_path: dir.join(journal::JOURNAL_FILE),
            dir,
            journaled,
            _locked: locked,
        })
    }

    /// Removes the folder of a new run that wrote nothing.
    fn remove_unused(&self) {
        let _ = std::fs::remove_file(self.dir.join(journal::LOCK_FILE));
        let _ = std::fs::remove_dir(&self.dir);
    }

    /// Writes `manifest.json` for a new run; a resumed run's inputs must match the one it left,
    /// which stays as the run began.
    fn write_manifest(&self, manifest: &Manifest, resume: bool) -> anyhow::Result<()> {
        manifest::write_or_check(&self.dir.join("manifest.json"), manifest, resume)
    }
}

/// What a reader of a resumed run's report must know: units that ran at once after the resume
/// shared their batches with other units than in an uninterrupted run, and a sequence's sums
/// in llama.cpp can depend on its batch, so their transcripts may differ from that run's.
fn resumed_note(opts: &RunOptions) -> String {
    match (&opts.resume, opts.parallel) {
        (Some(_), parallel) if parallel > 1 => format!(
            " · resumed at --parallel {parallel}: the units run after the resume may differ from an uninterrupted run's (same inputs and seeds, other batches); at --parallel 1 they do not"
        ),
        _ => String::new(),
    }
}

/// `value` as pretty JSON with a final newline.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    std::fs::write(path, serde_json::to_string_pretty(value)? + "\n")?;
    Ok(())
}

/// Everything that enters a run's results, for `manifest.json`.
fn manifest(run: &Prepared, backend: &dyn Backend, run_id: &str) -> anyhow::Result<Manifest> {
    let (opts, pack, arms) = (&run.opts, &run.opts.pack, &run.arms);
    let corpus_path = opts.corpus.clone().unwrap_or(pack.corpus_path.clone());
    let corpus_text = std::fs::read_to_string(&corpus_path).unwrap_or_default();
    let info = backend.info();
    let body = |tree: &SkillTree| {
        manifest::sha256_hex(
            tree.get(&pack.skill)
                .map(|s| s.body.as_str())
                .unwrap_or("")
                .as_bytes(),
        )
    };
    let skills_dir = opts.skills_dir.clone().unwrap_or(pack.skills_dir.clone());
    Ok(Manifest {
        run_id: run_id.to_string(),
        skilleval_version: env!("CARGO_PKG_VERSION").into(),
        llama_cpp_2_version: crate::LLAMA_CPP_2_VERSION.into(),
        model_sha256: info
            .model_path
            .as_ref()
            .and_then(|p| manifest::file_sha256(Path::new(p)).ok()),
        backend: info,
        pack: pack.name.clone(),
        skill: pack.skill.clone(),
        skills_git_revision: manifest::git_revision(&skills_dir),
        skills_dir: skills_dir.display().to_string(),
        variant: opts.variant.as_ref().map(|p| p.display().to_string()),
        baseline_body_sha256: body(&arms.baseline),
        variant_body_sha256: body(&arms.variant),
        more_variants: opts
            .more_variants
            .iter()
            .zip(&arms.more)
            .map(|(path, tree)| manifest::VariantRecord {
                path: path.display().to_string(),
                body_sha256: body(tree),
            })
            .collect(),
        control: opts.control,
        control_removes: opts.pack.control,
        control_body_sha256: opts.control.then(|| body(&arms.control)),
        corpus: corpus_path.display().to_string(),
        corpus_sha256: manifest::sha256_hex(corpus_text.as_bytes()),
        samples: run.samples.len(),
        repeats: opts.repeats,
        run_seed: opts.seed,
        sampling: run.sampling,
        budgets: pack.budgets,
        call_format: format!(
            "{:?}",
            pack.call_format
                .unwrap_or(backend.family().default_call_format())
        ),
        record: format!("{:?}", opts.record),
        parallel: opts.parallel.max(1),
        started_unix: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        inputs: Some(run.inputs.clone()),
        shard: opts.shard.map(|shard| ShardRecord {
            index: shard.index,
            count: shard.count,
            sample_ids: run.samples.iter().map(|s| s.id.clone()).collect(),
        }),
        merged_from: Vec::new(),
        baseline_from: None,
        baseline_rejudged: 0,
        rejudged: None,
        sequential: opts
            .sequential
            .map(|s| SequentialRecord::new(opts.repeats, s)),
    })
}

/// The plan's units that `journaled` does not hold yet, in plan order; with `--shard`, only
/// that shard's.
fn plan_units(run: &Prepared, journaled: &[JournalEntry]) -> Vec<Unit> {
    let (opts, samples) = (&run.opts, &run.samples);
    let done: BTreeSet<(String, Arm, u32)> = journaled.iter().map(JournalEntry::key).collect();
    plan::plan(
        samples,
        opts.repeats,
        opts.seed,
        &plan::arms_with_variants(opts.control, run.arms.variant_count()),
        run.arms.aa,
    )
    .into_iter()
    .filter(|u| opts.shard.is_none_or(|shard| shard.holds(u.sample_index)))
    .filter(|u| !done.contains(&(samples[u.sample_index].id.clone(), u.arm, u.repeat)))
    .collect()
}

/// Runs `units`, journaling and profiling each as it finishes, and adds their entries to
/// `entries` in plan order, also when the run stops part-way.
fn execute(
    backend: &mut dyn Backend,
    run: &Prepared,
    units: &[Unit],
    journal: &mut Journal,
    profile: &mut Profile,
    entries: &mut Vec<JournalEntry>,
) -> anyhow::Result<()> {
    let mut progress = Progress::new(run.opts.progress, units.len(), "samples");
    // One unit, timed: the same work whether units run one by one or on worker threads.
    let run_timed = |backend: &mut dyn Backend, unit: &Unit| {
        let unit_started = Instant::now();
        let entry = run_unit(
            backend,
            &run.opts.pack,
            run.arms.tree(unit.arm),
            &run.registry,
            &run.samples[unit.sample_index],
            unit,
            run.sampling,
        );
        (entry, unit_started.elapsed().as_secs_f64())
    };
    // Kept by plan index, so that entries come out in plan order whatever finished first.
    let mut finished: Vec<Option<JournalEntry>> = vec![None; units.len()];
    let outcome = scheduler::run_units(
        backend,
        run.opts.parallel,
        units,
        run_timed,
        |i, (entry, secs)| {
            journal.append(&entry)?;
            profile.add(&entry.transcript, secs);
            progress.inc(format!("{:?} {}", entry.arm, entry.sample_id));
            let refusal =
                report::errors::reason(&entry).filter(|r| crate::harness::backend::refused(r));
            finished[i] = Some(entry);
            match refusal {
                Some(reason) => bail!("{reason}"),
                None => Ok(()),
            }
        },
    );
    entries.extend(finished.into_iter().flatten());
    outcome?;
    progress.finish();
    Ok(())
}

/// A sequential run: each wave's units, then a look that decides whether the next one runs;
/// every look is written into the manifest as it is taken.
fn execute_in_waves(
    backend: &mut dyn Backend,
    run: &Prepared,
    dir: &Path,
    manifest: &Manifest,
    record: &mut SequentialRecord,
    (journal, profile, entries): (&mut Journal, &mut Profile, &mut Vec<JournalEntry>),
) -> anyhow::Result<()> {
    let planned = run.opts.repeats;
    let budget = run.opts.sequential.and_then(|s| s.budget);
    let started = Instant::now();
    record.looks.clear();
    record.stopped = None;
    for wave in 0..planned {
        let wave_started = Instant::now();
        let units: Vec<Unit> = plan_units(run, entries)
            .into_iter()
            .filter(|u| u.repeat <= wave)
            .collect();
        execute(backend, run, &units, journal, profile, entries)?;
        let repeats = wave + 1;
        let mut looking = manifest.clone();
        looking.sequential = Some(record.clone());
        let open_rows = waves::open_rows(&looking, &selected(run, entries), repeats)?;
        let units_seen = entries.iter().filter(|e| e.repeat < repeats).count();
        // Waves already journaled (a resume) take no time and say nothing of the next one.
        let wave_secs = if units.is_empty() {
            0.0
        } else {
            wave_started.elapsed().as_secs_f64()
        };
        let passes_budget =
            budget.is_some_and(|b| started.elapsed().as_secs_f64() + wave_secs > b.as_secs_f64());
        record.stopped = if open_rows.is_empty() {
            Some(Stop::Settled)
        } else if repeats == planned {
            Some(Stop::Planned)
        } else if passes_budget {
            Some(Stop::Budget)
        } else {
            None
        };
        if run.opts.progress {
            eprintln!(
                "look {repeats}/{planned} ({units_seen} units): {}",
                match open_rows.len() {
                    0 => "every row called or settled".to_string(),
                    n => format!("{n} rows open ({})", open_rows.join(", ")),
                }
            );
        }
        record.looks.push(waves::Look {
            repeats,
            units: units_seen,
            open_rows,
        });
        manifest::record_looks(&dir.join("manifest.json"), record)?;
        if record.stopped.is_some() {
            break;
        }
    }
    Ok(())
}

/// The entries of the selected samples and arms (a resumed journal may hold others).
fn selected(run: &Prepared, entries: &[JournalEntry]) -> Vec<JournalEntry> {
    let mut kept = entries.to_vec();
    keep_selected(run, &mut kept);
    kept
}

fn keep_selected(run: &Prepared, entries: &mut Vec<JournalEntry>) {
    let ids: BTreeSet<&str> = run.samples.iter().map(|s| s.id.as_str()).collect();
    let run_arms = plan::arms_with_variants(run.opts.control, run.arms.variant_count());
    entries.retain(|e| ids.contains(e.sample_id.as_str()) && run_arms.contains(&e.arm));
}

/// The summary of the selected samples and arms, written with the reports beside the journal.
fn summarize(
    run: &Prepared,
    entries: &mut Vec<JournalEntry>,
    dir: &Path,
    manifest: &Manifest,
    profile: &Profile,
) -> anyhow::Result<Summary> {
    let opts = &run.opts;
    // Only entries of the selected samples and arms count (a resumed journal may hold others).
    keep_selected(run, entries);
    let summary = report::run_folder::summary(manifest, entries)?;
    let settings =
        report::run_folder::settings(manifest, Some(profile.wall_secs)) + &resumed_note(opts);
    write_json(&dir.join("summary.json"), &summary)?;
    std::fs::write(dir.join("summary.csv"), report::csv(&summary)?)?;
    let record = report::run_folder::RunRecord {
        dir: dir.to_path_buf(),
        manifest: manifest.clone(),
        entries: entries.clone(),
        profile: Some(profile.clone()),
        prompts: run
            .samples
            .iter()
            .map(|s| (s.id.clone(), s.prompt_text().to_string()))
            .collect(),
        prompts_note: None,
    };
    report::run_folder::write(&record, &summary, &settings)?;
    replay::check_recordings(entries).map_err(|e| anyhow!("{e} (run folder {})", dir.display()))?;
    Ok(summary)
}
