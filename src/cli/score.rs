//! `skilleval score`: each wording judged by the model's probability of the
//! reference steps, the table on stdout, the score folder under `--output`.

use std::path::PathBuf;

use clap::Args;

use super::args::{BackendArgs, ModelArgs, ModelSource};
use super::run::{fail_on_code, variant_files, FailOn};
use crate::eval::pack::Pack;
use crate::eval::runner::{self, RunOptions};
use crate::eval::score::{self, report, rows};
use crate::harness::backend::{OpenModel, SCORE_CALL_TOKENS, SCORE_LANES};

pub const EXAMPLES: &str = "Examples:
  skilleval score --pack weather --variant packs/weather/variants/b.md
  skilleval score --pack weather --variant packs/weather/variants/  # every wording in the folder
  skilleval score --pack packs/trains --variant new.md --fail-on worse --junit score.xml";

#[derive(Args, Debug)]
pub struct ScoreArgs {
    /// Pack name (packs/<name>) or path to a pack folder or pack.toml
    #[arg(long)]
    pub pack: String,
    /// A SKILL.md (or a body alone) laid over the skill under test; repeat it, or name a
    /// folder of .md files, to score several wordings against one baseline (none: the baseline
    /// scored twice, an A/A that must read exactly ×1)
    #[arg(long)]
    pub variant: Vec<PathBuf>,
    /// Baseline skills tree instead of the pack's own
    #[arg(long)]
    pub skills_dir: Option<PathBuf>,
    /// Another corpus of the same shape
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Score only these categories (repeatable, or several separated by commas)
    #[arg(long, value_delimiter = ',')]
    pub category: Vec<String>,
    /// Score at most N samples, taking categories in turn
    #[arg(long)]
    pub limit: Option<usize>,
    /// Sampling temperature whose probabilities are read (default: the pack's)
    #[arg(long)]
    pub temperature: Option<f32>,
    /// The sampler's top-k (default: the pack's); a token outside it has probability 0
    #[arg(long)]
    pub top_k: Option<i32>,
    /// The sampler's top-p (default: the pack's); a token outside the nucleus has probability 0
    #[arg(long)]
    pub top_p: Option<f32>,
    /// The margin of practical change, in percentage points of the expected rate: a row whose
    /// change lies within it is no material change however precise
    #[arg(long, value_name = "PP", default_value_t = rows::DEFAULT_MARGIN.points, value_parser = parse_points)]
    pub margin: f64,
    /// For a rare step, a change of this share of the larger rate is material even when under
    /// --margin (a fall from 2.9% to 0% is, a move from 12.4% to 12.3% is not)
    #[arg(long, value_name = "SHARE", default_value_t = rows::DEFAULT_MARGIN.relative, value_parser = parse_share)]
    pub margin_relative: f64,
    /// Repeats of the sampled run you would confirm with: a row whose expected draws over its
    /// samples and these repeats are under one in both arms is out of reach, never called
    #[arg(long, value_name = "N", default_value_t = rows::DEFAULT_CONFIRM_REPEATS, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub confirm_repeats: u32,
    /// Draw this many replies at each free-text step (the answer after a result, a question to
    /// the user) and judge them with the pack's laws, so that those rows get verdicts; without
    /// it they show only the probability of the reference's own words, as diagnostics
    #[arg(long, value_name = "K", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=256))]
    pub draws: u32,
    /// Skip the control arm (the skill with an empty body) that measures the skill's own effect
    #[arg(long)]
    pub no_control: bool,
    /// A sampled run of the same pack, wordings and sampler (a folder, or a run id under
    /// --output): the report then sets each scored rate beside the share of the run's repeats
    /// that took the step, with their correlation and a calibration table
    #[arg(long, value_name = "RUN")]
    pub against: Option<String>,
    /// Where score folders go
    #[arg(long, default_value = "output")]
    pub output: PathBuf,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Exit with code 3 when a wording's row is worse (`worse`); with code 4 when no row of the
    /// skill effect is better or worse (`no-skill-effect`); both may be given, comma-separated
    #[arg(long, value_delimiter = ',')]
    pub fail_on: Vec<FailOn>,
    /// Also write JUnit XML here: one test case per row of each wording, failed when worse
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Print the engine's bare prefill rate in the lanes score computes in (prompt tokens per
    /// second, no harness, no reading) and exit: what `scripts/bench_score.sh` takes the
    /// limit at
    #[arg(long, hide = true)]
    pub bare_prefill_rate: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// The shape of the bare prefill `--bare-prefill-rate` times: a shared prefix and each lane's
/// tail, near a pack's system text and a sample's own tokens.
const BARE_PREFIX: usize = 512;
const BARE_TAIL: usize = 256;

/// The most replies drawn at once.
const DRAW_WIDTH: usize = 16;

fn parse_points(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(m) if m.is_finite() && (0.0..=100.0).contains(&m) => Ok(m),
        _ => Err(format!(
            "{text:?} is not a margin: give percentage points from 0 to 100, e.g. 5"
        )),
    }
}

fn parse_share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(m) if m.is_finite() && (0.0..=1.0).contains(&m) => Ok(m),
        _ => Err(format!(
            "{text:?} is not a share: give a number from 0 to 1, e.g. 0.67"
        )),
    }
}

/// `skilleval score` as a pipeline: arguments → the pack, variants and references checked →
/// the model loaded → every (arm, sample) scored → the folder, the table and the exit code.
pub fn run(args: ScoreArgs) -> anyhow::Result<u8> {
    if let Some(path) = &args.junit {
        super::args::check_output_file("--junit", path)?;
    }
    let source = args.backend.source(&args.model)?;
    // A server that cannot give the probabilities is refused before any work.
    if let ModelSource::Server(options) = &source {
        crate::harness::backend::openai::OpenAiBackend::connect(options)?.score_source()?;
    }
    let mut pack = Pack::load(&args.pack)?;
    if args.model.family.is_some() {
        pack.chat_format = None;
    }
    let mut opts = RunOptions::new(pack);
    opts.variants = variant_files(&args.variant)?;
    opts.skills_dir = args.skills_dir;
    opts.corpus = args.corpus;
    opts.repeats = 1;
    opts.categories = args.category;
    opts.limit = args.limit;
    opts.temperature = args.temperature;
    opts.top_k = args.top_k;
    opts.top_p = args.top_p;
    opts.output_root = args.output;
    opts.control = !args.no_control;
    let prepared = runner::prepare(&opts)?;
    for warning in super::check::skill_format_warnings(&opts.pack, opts.skills_dir.as_deref()) {
        eprintln!("skilleval: {warning}");
    }
    let references = score::references(&prepared)?;
    if references.is_empty() {
        anyhow::bail!(
            "{}: no sample has a reference step: give the laws an `argument_equals_field`, `tool_called` or `tool_not_called` law that applies, or samples a `reference_call` field (docs/score.md)",
            prepared.opts.pack.file.display()
        );
    }
    // The run to compare with is read before the model loads, so a wrong one costs nothing.
    let against = match &args.against {
        Some(run) => {
            let dir = crate::eval::record::folder::find(run, &prepared.opts.output_root)?;
            let run = crate::eval::record::load::load(&dir)?;
            score::agreement::same_pack_and_sampler(
                &run,
                &prepared.opts.pack.name,
                prepared.sampling,
            )?;
            Some(run)
        }
        None => None,
    };
    let settings = score::ScoreSettings {
        margin: rows::Margin {
            points: args.margin,
            relative: args.margin_relative,
        },
        confirm_repeats: args.confirm_repeats,
        draws: args.draws,
    };
    let mut model = source.open(1)?;
    if args.bare_prefill_rate {
        let OpenModel::Single(llama) = &model else {
            anyhow::bail!("--bare-prefill-rate measures the model in this process");
        };
        let rate = llama.bare_prefill_rate(BARE_PREFIX, BARE_TAIL)?;
        crate::outln!(
            "{rate:.1} prompt tokens/s ({SCORE_LANES} lanes, calls of {SCORE_CALL_TOKENS} tokens)"
        );
        return Ok(0);
    }
    // The replies drawn at a step decode together, in a batched engine of their own.
    let mut drawer = match args.draws {
        0 => None,
        k => Some(source.open_reproducible((k as usize).clamp(2, DRAW_WIDTH))?),
    };
    let drawer = drawer.as_mut().map(|m| &*m.backend());
    let summary_and_steps = match prepared.opts.pack.chat_format {
        Some(family) => score::score(
            &mut crate::harness::backend::WithFamily::new(model.backend(), family),
            &prepared,
            &references,
            settings,
            drawer,
            true,
        )?,
        None => score::score(
            model.backend(),
            &prepared,
            &references,
            settings,
            drawer,
            true,
        )?,
    };
    let (mut summary, steps) = summary_and_steps;
    if let Some(run) = &against {
        summary.agreement = Some(score::agreement::agreement(
            &steps,
            summary.sampling,
            &summary.variants,
            &summary.pack,
            run,
        )?);
    }
    let (id, dir) = score::new_folder(&prepared.opts.output_root, &prepared.opts.pack.name)?;
    score::write_folder(&dir, &summary, &steps)?;
    if let Some(path) = &args.junit {
        std::fs::write(path, report::junit(&summary, &id))
            .map_err(|e| anyhow::anyhow!("--junit {}: cannot write: {e}", path.display()))?;
    }
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        crate::out!("{}", report::terminal(&summary));
        crate::outln!("score {id} → {}", dir.display());
    }
    Ok(fail_on_code(
        &args.fail_on,
        report::any_worse(&summary),
        report::no_skill_effect(&summary),
    ))
}
