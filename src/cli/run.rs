//! `skilleval run`: a pack's baseline against a variant (and the control arm), the table on
//! stdout, the run folder under `--output`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::args::{record_mode, BackendArgs, ModelArgs, ModelSource, ParallelArgs, RecordWhat};
use crate::eval::pack::Pack;
use crate::eval::reuse::BaselineSource;
use crate::eval::runner::Sequential;
use crate::eval::runner::{self, RunOptions};
use crate::eval::shard::Shard;
use crate::eval::spending::Spending;
use crate::eval::stats::reach;
use crate::eval::{report, stats};
use crate::harness::backend::PromptLog;

/// Exit code when `--fail-on worse` finds a row worse beyond noise.
pub const EXIT_WORSE: u8 = 3;

pub const EXAMPLES: &str = "Examples:
  skilleval run --pack weather --variant b.md --fail-on worse --junit results.xml
  skilleval run --pack weather --variant b.md --variant c.md  # two wordings, one baseline
  skilleval run --pack weather --variant b.md --shard 2/3   # this machine's third; then `merge`";

/// The exit code of a run whose control shows that the skill's body changed nothing
/// measurable, under `--fail-on no-skill-effect`.
pub const EXIT_NO_SKILL_EFFECT: u8 = 4;

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
pub enum FailOn {
    /// Any row of any variant (category, total or law) worse or mixed beyond noise (exit 3)
    Worse,
    /// The skill's body changed nothing measurable against the control, so the wording rows do
    /// not show that the model follows either wording (exit 4)
    NoSkillEffect,
}

/// The exit code a finished run or score ends with: 3 for a worse row, else 4 for no skill
/// effect, each only when asked for with `--fail-on`.
pub fn fail_on_code(fail_on: &[FailOn], worse: bool, no_skill_effect: bool) -> u8 {
    if worse && fail_on.contains(&FailOn::Worse) {
        EXIT_WORSE
    } else if no_skill_effect && fail_on.contains(&FailOn::NoSkillEffect) {
        EXIT_NO_SKILL_EFFECT
    } else {
        0
    }
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Pack name (packs/<name>) or path to a pack folder or pack.toml
    #[arg(long)]
    pub pack: String,
    /// A SKILL.md (or a body alone) laid over the skill under test; repeat it, or name a
    /// folder of .md files, to compare several wordings with one baseline in one run
    #[arg(long)]
    pub variant: Vec<PathBuf>,
    /// Baseline skills tree instead of the pack's own
    #[arg(long)]
    pub skills_dir: Option<PathBuf>,
    /// Another corpus of the same shape
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Times each sample runs in each arm, each with its own recorded seed (with --sequential,
    /// the most)
    #[arg(long, default_value_t = 3)]
    pub repeats: u32,
    /// Run in waves of one repeat each and stop once every row is called or cannot be by the
    /// last repeat; verdicts keep the one 5% error budget however often the run looks
    #[arg(long, conflicts_with = "shard")]
    pub sequential: bool,
    /// With --sequential: start no wave that would end after this much time (90s, 10m, 1h)
    #[arg(long, value_name = "DURATION", requires = "sequential", value_parser = crate::eval::runner::waves::parse_budget)]
    pub budget: Option<std::time::Duration>,
    /// Run seed: every unit's seed derives from it, the sample and the repeat, and every arm
    /// shares it (an A/A run salts its second arm's)
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: u64,
    /// Run only these categories (repeatable, or several separated by commas)
    #[arg(long, value_delimiter = ',')]
    pub category: Vec<String>,
    /// Run at most N samples, taking categories in turn
    #[arg(long)]
    pub limit: Option<usize>,
    /// Answer calls from the live service and keep the answers as fixtures
    #[arg(long, num_args = 0..=1, default_missing_value = "gaps")]
    pub record: Option<RecordWhat>,
    /// Sampling temperature (default: the pack's)
    #[arg(long)]
    pub temperature: Option<f32>,
    /// Sample from the K likeliest tokens (default: the pack's)
    #[arg(long)]
    pub top_k: Option<i32>,
    /// Sample from the likeliest tokens that make up this probability (default: the pack's)
    #[arg(long)]
    pub top_p: Option<f32>,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Exit with code 3 when a variant is worse beyond noise in some category, in total or in a
    /// law (`worse`); with code 4 when the control shows the skill's body changed nothing
    /// (`no-skill-effect`); both may be given, comma-separated
    #[arg(long, value_delimiter = ',')]
    pub fail_on: Vec<FailOn>,
    /// Skip the control arm (the skill with an empty body) that measures the skill's own effect
    #[arg(long)]
    pub no_control: bool,
    /// Take the baseline (and control) arms from this earlier run instead of running them; it
    /// must have the same model, build, pack, skills, corpus, fixtures, seed, sampling and
    /// --parallel (by default the run under --output that holds most of them is taken, if any)
    #[arg(long, value_name = "RUN_ID", conflicts_with = "no_cache")]
    pub baseline_from: Option<String>,
    /// Run the baseline anew even when an earlier run with the same inputs holds one
    #[arg(long)]
    pub no_cache: bool,
    /// Continue an interrupted run from its journal
    #[arg(long)]
    pub resume: Option<String>,
    /// Where run folders go
    #[arg(long, default_value = "output")]
    pub output: PathBuf,
    /// Run only slice I of N of the run (every arm and repeat of every Nth sample), e.g. 2/3 on
    /// the second of three machines; `skilleval merge` puts the N run folders together
    #[arg(long, value_parser = Shard::parse, value_name = "I/N")]
    pub shard: Option<Shard>,
    #[command(flatten)]
    pub parallel: ParallelArgs,
    /// Also write JUnit XML here: one test case per category and per law of the wording
    /// comparison (and the total), failed when its verdict is `worse` or `mixed`
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Print where the run's time and tokens went
    #[arg(long)]
    pub profile: bool,
    /// Write every prompt sent to the model, with its max tokens, stop strings, sampling and
    /// reply, one JSON line each (to read what the model saw, or to feed another server)
    #[arg(long, value_name = "FILE")]
    pub prompt_log: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub backend: BackendArgs,
}

impl RunArgs {
    /// The run these arguments ask for, over a loaded pack and the variant files found. The
    /// model's chat format comes from its metadata; a pack's `chat_format` insists on another,
    /// and `--family` on the command line overrides both.
    fn options(self, mut pack: Pack, variants: Vec<PathBuf>) -> RunOptions {
        if self.model.family.is_some() {
            pack.chat_format = None;
        }
        let mut opts = RunOptions::new(pack);
        opts.variants = variants;
        opts.skills_dir = self.skills_dir;
        opts.corpus = self.corpus;
        opts.repeats = self.repeats;
        opts.seed = self.seed;
        opts.categories = self.category;
        opts.limit = self.limit;
        opts.record = record_mode(self.record);
        opts.temperature = self.temperature;
        opts.top_k = self.top_k;
        opts.top_p = self.top_p;
        opts.output_root = self.output;
        opts.resume = self.resume;
        opts.progress = true;
        opts.control = !self.no_control;
        opts.parallel = self.parallel.resolve();
        opts.shard = self.shard;
        opts.sequential = self.sequential.then_some(Sequential {
            spending: Spending::DEFAULT,
            budget: self.budget,
        });
        opts.baseline_source = match (self.baseline_from, self.no_cache) {
            (Some(run), _) => BaselineSource::Run(run),
            (None, true) => BaselineSource::Off,
            (None, false) => BaselineSource::Cache,
        };
        opts
    }
}

/// What the command writes and prints besides the run folder, and how it exits.
struct Outputs {
    json: bool,
    profile: bool,
    fail_on: Vec<FailOn>,
    junit: Option<PathBuf>,
    prompt_log: Option<PathBuf>,
}

impl Outputs {
    /// The outputs the arguments ask for, their files checked before anything runs.
    fn of(args: &RunArgs) -> anyhow::Result<Outputs> {
        if let Some(path) = &args.junit {
            super::args::check_output_file("--junit", path)?;
        }
        if let Some(path) = &args.prompt_log {
            super::args::check_output_file("--prompt-log", path)?;
        }
        Ok(Outputs {
            json: args.json,
            profile: args.profile,
            fail_on: args.fail_on.clone(),
            junit: args.junit.clone(),
            prompt_log: args.prompt_log.clone(),
        })
    }
}

/// `skilleval run` as a pipeline: arguments → where the model runs and the run's options →
/// the run prepared and checked → the model opened and the plan run into the run folder → the
/// summary printed, JUnit written and the exit code.
pub fn run(args: RunArgs) -> anyhow::Result<u8> {
    let outputs = Outputs::of(&args)?;
    let source = args.backend.source(&args.model)?;
    let pack = Pack::load(&args.pack)?;
    let variants = variant_files(&args.variant)?;
    let opts = args.options(pack, variants);
    let prepared = prepare(&opts, &source)?;
    let result = execute(&source, &prepared, outputs.prompt_log.as_deref())?;
    print_outcome(&outputs, &opts, &result)
}

/// The run prepared: every input checked before the model loads (the pack, the corpus, the
/// variants, the fixtures, and what cannot fit the model's context), with a warning for each
/// category too small for a verdict.
fn prepare(opts: &RunOptions, source: &ModelSource) -> anyhow::Result<runner::Prepared> {
    let prepared = runner::prepare(opts)?;
    let sizes = reach::category_sizes(prepared.samples.iter().map(|s| s.category.as_str()));
    let variants = opts.variants.len();
    for warning in reach::small_category_warnings(&sizes, opts.pack.laws.len(), variants) {
        eprintln!("skilleval: {warning}");
    }
    for warning in super::check::skill_format_warnings(&opts.pack, opts.skills_dir.as_deref()) {
        eprintln!("skilleval: {warning}");
    }
    if let ModelSource::Local(options) = source {
        // The vocabulary is read from the file's metadata, without the weights; a file that
        // cannot be read is left to the load, which says why.
        if let Ok(meta) = crate::harness::backend::gguf::read_metadata(&options.model_path) {
            if let Some(longest) = meta.longest_token_bytes {
                runner::check_fits_context(&prepared, options.n_ctx, longest)?;
            }
        }
    }
    Ok(prepared)
}

/// Opens the model and runs the prepared plan, every prompt logged when `prompt_log` names a
/// file.
fn execute(
    source: &ModelSource,
    prepared: &runner::Prepared,
    prompt_log: Option<&Path>,
) -> anyhow::Result<runner::RunResult> {
    let mut model = source.open(prepared.opts.parallel)?;
    match prompt_log {
        Some(path) => {
            let mut logged = PromptLog::create(model.backend(), path)?;
            let result = runner::run_prepared(&mut logged, prepared)?;
            logged.flush()?;
            Ok(result)
        }
        None => runner::run_prepared(model.backend(), prepared),
    }
}

/// Prints the run's summary (the table, or JSON), writes JUnit, and gives the exit code: an
/// error when every unit of an arm errored, 3 when `--fail-on worse` finds a row worse.
fn print_outcome(
    outputs: &Outputs,
    opts: &RunOptions,
    result: &runner::RunResult,
) -> anyhow::Result<u8> {
    if let Some(path) = &outputs.junit {
        super::report::write_junit(path, &result.summary, &result.run_id)?;
    }
    let profile = &result.profile;
    if outputs.json {
        crate::outln!("{}", serde_json::to_string_pretty(&result.summary)?);
    } else {
        crate::outln!("{}", report::table(&result.summary));
        let law_tools = report::pinned::law_tools(&opts.pack.laws);
        for warning in report::pinned::warnings(&result.entries, &law_tools) {
            crate::outln!("{warning}");
        }
        let offered: Vec<&str> = opts.pack.tools.iter().map(|t| t.name.as_str()).collect();
        if let Some(note) = report::pinned::uncalled_note(&result.entries, &offered) {
            crate::outln!("{note}");
        }
        if let Some(note) = report::pinned::rare_call_note(&result.entries, &offered) {
            crate::outln!("{note}");
        }
        crate::out!(
            "{}",
            report::gaps::terminal(&report::gaps::gap_calls(&result.entries), &result.dir, 10)
        );
        crate::outln!("{}", profile.line());
        if let Some(earlier) = &prepared_baseline_note(result) {
            crate::outln!("{earlier}");
        }
        crate::outln!("run {} → {}", result.run_id, result.dir.display());
    }
    if outputs.profile {
        let text = profile.table()
            + &profile
                .engine
                .as_ref()
                .map(|s| s.table())
                .unwrap_or_default();
        // Beside a JSON summary, on stderr so that stdout stays JSON; the summary line with it,
        // since the table above was not printed.
        if outputs.json {
            eprint!("{}\n{text}", profile.line());
        } else {
            crate::out!("{text}");
        }
    }
    let void = report::errors::all_errored(&result.entries);
    if let Some(line) = report::errors::fatal_line(&void, "the run") {
        anyhow::bail!("{line} (run {})", result.run_id);
    }
    let no_skill_effect = result
        .summary
        .skill_effect
        .as_ref()
        .is_some_and(|skill| !skill.any_change());
    Ok(fail_on_code(
        &outputs.fail_on,
        stats::any_worse(&result.summary),
        no_skill_effect,
    ))
}

/// A run seed: a whole number from 0 (a negative one is named as such, not as a flag).
fn parse_seed(text: &str) -> Result<u64, String> {
    text.parse::<u64>().map_err(|_| {
        format!(
            "{text:?} is not a seed: give a whole number from 0 to {}",
            u64::MAX
        )
    })
}

/// Says where the baseline came from when the run copied it from an earlier run.
fn prepared_baseline_note(result: &runner::RunResult) -> Option<String> {
    result.baseline_from.as_ref().map(|earlier| {
        let rejudged = match result.baseline_rejudged {
            0 => String::new(),
            n => format!("; {n} judged again with this pack's laws"),
        };
        format!(
            "{} baseline and control units taken from run {earlier} (same model, build, pack less its laws, skills, corpus, seed and settings{rejudged}; --no-cache runs them anew)",
            result.baseline_copied
        )
    })
}

/// The variant files `--variant` names, in order: a folder stands for its `.md` files by name.
pub(super) fn variant_files(given: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in given {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let mut in_folder: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| anyhow::anyhow!("--variant {}: cannot read folder: {e}", path.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "md"))
            .collect();
        if in_folder.is_empty() {
            anyhow::bail!("--variant {}: the folder holds no .md file", path.display());
        }
        in_folder.sort();
        files.extend(in_folder);
    }
    Ok(files)
}

#[cfg(test)]
mod fail_on_tests {
    use super::*;

    #[test]
    fn each_fail_on_value_acts_only_on_its_own_finding() {
        assert_eq!(fail_on_code(&[], true, true), 0);
        assert_eq!(fail_on_code(&[FailOn::Worse], true, true), EXIT_WORSE);
        assert_eq!(fail_on_code(&[FailOn::Worse], false, true), 0);
        assert_eq!(
            fail_on_code(&[FailOn::NoSkillEffect], true, true),
            EXIT_NO_SKILL_EFFECT
        );
        assert_eq!(
            fail_on_code(&[FailOn::NoSkillEffect, FailOn::Worse], true, true),
            EXIT_WORSE
        );
        assert_eq!(fail_on_code(&[FailOn::NoSkillEffect], false, false), 0);
    }
}
