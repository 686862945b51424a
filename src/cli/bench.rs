//! `skilleval bench`: BFCL categories through the model (`bench run`, the default) or saved
//! result files re-scored (`bench score`).

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::args::{BackendArgs, ModelArgs, ParallelArgs, DEFAULT_CTX};
use crate::bench::corpus as bench_corpus;
use crate::bench::multi_turn_helper::{Helper, HelperLaunch};
use crate::bench::report as bench_report;
use crate::bench::result_layout::{check_result_model, default_result_model};
use crate::bench::run::{self as bench_run, BenchOptions};
use crate::bench::score::{score_repeats, ExtraCategory};
use crate::bench::selection::{self, CustomCorpus};
use crate::bench::Mode;
use crate::harness::backend::Sampling;
use crate::harness::toolcall::CallFormat;

/// The context a multi-turn run asks for unless `--ctx` says otherwise: the system prompt of
/// two API classes' documents alone takes several thousand tokens.
const MULTI_TURN_CTX: u32 = 16384;

pub const EXAMPLES: &str = "Examples:
  skilleval bench --bfcl simple_python,parallel --limit 20
  skilleval bench run --bfcl all --mode harness --repeats 3
  skilleval bench score output/bench-20261130-101500/";

const RUN_EXAMPLES: &str = "Examples:
  skilleval bench run --bfcl simple_python --limit 20
  skilleval bench run --bfcl memory_kv --ids memory_kv_130-notetaker-0 --mode harness
  skilleval bench run --corpus mine.jsonl --answers mine-answers.jsonl --category-name simple";

const SCORE_EXAMPLES: &str = "Examples:
  skilleval bench score output/bench-20261130-101500/
  skilleval bench score result/my-model/ --json
  skilleval bench score out/ --corpus mine.jsonl --answers mine-answers.jsonl --category-name simple";

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub command: Option<BenchCommand>,
    #[command(flatten)]
    pub run: BenchRunArgs,
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Run BFCL categories through the model and write the results
    #[command(after_long_help = RUN_EXAMPLES)]
    Run(Box<BenchRunArgs>),
    /// Re-score BFCL result files (BFCL_v4_<category>_result.json) without a model
    #[command(after_long_help = SCORE_EXAMPLES)]
    Score(BenchScoreArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchMode {
    /// BFCL's own prompt; the raw reply is decoded and checked
    Prompt,
    /// The functions as harness tools; the first round's calls are checked
    Harness,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CallFormatArg {
    /// <function=name><parameter=…>…</parameter></function>
    Markup,
    /// <tool_call>{"name": …, "arguments": …}</tool_call>
    JsonTag,
    /// [name(arg=value, …)]
    PythonList,
    /// {"name": …, "parameters": …}, perhaps after <|python_tag|> (Llama 3.1)
    LlamaJson,
    /// [TOOL_CALLS][{"name": …, "arguments": …}] (Mistral)
    Mistral,
    /// ```tool_code blocks of Python calls (Gemma)
    ToolCode,
}

impl From<CallFormatArg> for CallFormat {
    fn from(format: CallFormatArg) -> Self {
        match format {
            CallFormatArg::Markup => CallFormat::Markup,
            CallFormatArg::JsonTag => CallFormat::JsonTag,
            CallFormatArg::PythonList => CallFormat::PythonList,
            CallFormatArg::LlamaJson => CallFormat::LlamaJson,
            CallFormatArg::Mistral => CallFormat::Mistral,
            CallFormatArg::ToolCode => CallFormat::ToolCode,
        }
    }
}

/// A question file in BFCL's shape, instead of or besides the vendored categories.
#[derive(Args, Debug, Clone, Default)]
pub struct CustomCorpusArgs {
    /// Questions in BFCL's JSON-lines shape ({"id", "question", "function"})
    #[arg(long, requires = "category_name")]
    pub corpus: Option<PathBuf>,
    /// Answers for --corpus ({"id", "ground_truth"}); not needed for (ir)relevance
    #[arg(long, requires = "corpus")]
    pub answers: Option<PathBuf>,
    /// Category of --corpus; it picks the checker as BFCL's names do (simple, multiple,
    /// parallel, irrelevance, relevance); not one of BFCL's own category names
    #[arg(long, requires = "corpus")]
    pub category_name: Option<String>,
}

impl CustomCorpusArgs {
    fn corpus(&self) -> Option<CustomCorpus> {
        Some(CustomCorpus {
            questions: self.corpus.clone()?,
            answers: self.answers.clone(),
            name: self.category_name.clone()?,
        })
    }
}

#[derive(Args, Debug, Clone)]
pub struct BenchRunArgs {
    /// Vendored categories, comma-separated, or all
    #[arg(long, value_delimiter = ',')]
    pub bfcl: Vec<String>,
    #[command(flatten)]
    pub custom: CustomCorpusArgs,
    /// prompt: BFCL's own prompt, the raw reply decoded; harness: the functions as harness tools
    #[arg(long, value_enum, default_value_t = BenchMode::Prompt)]
    pub mode: BenchMode,
    /// Call syntax taught in harness mode (default: the model family's)
    #[arg(long, value_enum)]
    pub call_format: Option<CallFormatArg>,
    /// Run the first N entries of each category
    #[arg(long)]
    pub limit: Option<usize>,
    /// Run only these entries of the chosen categories (ids as in BFCL's files, comma-separated)
    #[arg(long, value_delimiter = ',')]
    pub ids: Vec<String>,
    /// Times each entry runs, each with its own seed
    #[arg(long, default_value_t = 1)]
    pub repeats: u32,
    /// Each entry's seed derives from this, its id and the repeat
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Default 0 (greedy) with one repeat, 0.7 with more
    #[arg(long)]
    pub temperature: Option<f32>,
    /// Most tokens generated per entry
    #[arg(long, default_value_t = 256)]
    pub max_tokens: u32,
    /// Where run folders go
    #[arg(long, default_value = "output")]
    pub output: PathBuf,
    /// Model name of the BFCL result folder (result/<name with / as _>); name a registered
    /// prompting model to score it with `bfcl evaluate` (default: the GGUF file's stem, or the
    /// name a server gives its model)
    #[arg(long)]
    pub result_model: Option<String>,
    #[command(flatten)]
    pub parallel: ParallelArgs,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub backend: BackendArgs,
}

#[derive(Args, Debug)]
pub struct BenchScoreArgs {
    /// A run folder, a BFCL result folder or any folder holding result files
    pub dir: PathBuf,
    #[command(flatten)]
    pub custom: CustomCorpusArgs,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
}

/// Sampled repeats of a greedy run would all be the same.
const REPEATS_TEMPERATURE: f32 = 0.7;

impl From<BenchMode> for Mode {
    fn from(mode: BenchMode) -> Self {
        match mode {
            BenchMode::Prompt => Mode::Prompt,
            BenchMode::Harness => Mode::Harness,
        }
    }
}

impl BenchRunArgs {
    /// The run these arguments ask for; the result-model name stays empty without
    /// `--result-model`, since the default comes from the loaded model.
    pub fn options(&self) -> BenchOptions {
        let temperature = self.temperature.unwrap_or(if self.repeats > 1 {
            REPEATS_TEMPERATURE
        } else {
            0.0
        });
        BenchOptions {
            mode: self.mode.into(),
            call_format: self.call_format.map(CallFormat::from),
            max_tokens: self.max_tokens,
            sampling: Sampling {
                temperature,
                ..Sampling::default()
            },
            seed: self.seed,
            repeats: self.repeats,
            limit: self.limit,
            ids: self.ids.clone(),
            output_root: self.output.clone(),
            result_model: self.result_model.clone().unwrap_or_default(),
            progress: std::io::stderr().is_terminal(),
            parallel: self.parallel.resolve(),
            helper: None,
        }
    }
}

/// `bench`, `bench run` or `bench score`.
pub fn dispatch(args: BenchArgs) -> anyhow::Result<u8> {
    match args {
        BenchArgs {
            command: None,
            run: args,
        } => run(args),
        BenchArgs {
            command: Some(BenchCommand::Run(args)),
            ..
        } => run(*args),
        BenchArgs {
            command: Some(BenchCommand::Score(args)),
            ..
        } => score(args),
    }
}

fn run(mut args: BenchRunArgs) -> anyhow::Result<u8> {
    // Numbers that would run nothing, or sample with no number, are refused before any work.
    if args.limit == Some(0) {
        anyhow::bail!("--limit: must be at least 1 (0 runs no entry)");
    }
    if args.max_tokens == 0 {
        anyhow::bail!("--max-tokens: must be at least 1 (0 generates no reply)");
    }
    crate::eval::pack::check_sampling_flags(args.temperature, None, None)?;
    let categories = selection::parse_categories(&args.bfcl)?;
    let custom = args.custom.corpus();
    // Fail on category and corpus mistakes before the model loads.
    let selected = selection::select(
        &bench_corpus::default_root(),
        &categories,
        custom.as_ref(),
        args.limit,
        &args.ids,
    )?;
    let mut options = args.options();
    if options.repeats == 0 {
        anyhow::bail!("--repeats must be at least 1");
    }
    if let Some(name) = &args.result_model {
        check_result_model(name).map_err(|e| anyhow::anyhow!("--result-model {name:?}: {e}"))?;
    }
    if selection::has_multi_turn(&selected) {
        // Multi-turn and memory entries; started once here, so that a missing bfcl-eval is
        // said before the model loads.
        let launch = HelperLaunch::locate()?;
        Helper::start(&launch)?;
        options.helper = Some(launch);
        if args.model.ctx == DEFAULT_CTX {
            args.model.ctx = MULTI_TURN_CTX;
            eprintln!(
                "note: multi-turn prompts hold every API's documents and the whole conversation: \
                 --ctx {MULTI_TURN_CTX} (give --ctx to choose)"
            );
        }
    }
    if options.output_root.exists() && !options.output_root.is_dir() {
        anyhow::bail!(
            "--output {}: is not a folder",
            options.output_root.display()
        );
    }
    crate::base::write::check_writable_folder(&options.output_root).map_err(|e| {
        anyhow::anyhow!(
            "--output {}: cannot write in it: {e}",
            options.output_root.display()
        )
    })?;
    let source = args.backend.source(&args.model)?;
    // The same bound as a run's plan, before the model loads and before any job is built.
    let entries: usize = selected.iter().map(|c| c.entries.len()).sum();
    let jobs = entries as u128 * u128::from(options.repeats);
    if jobs > u128::from(crate::eval::plan::MAX_UNITS) {
        anyhow::bail!(
            "--repeats {}: the benchmark would hold {jobs} jobs ({entries} entries × {} repeats), more than the {} a run takes",
            options.repeats,
            options.repeats,
            crate::eval::plan::MAX_UNITS
        );
    }
    if options.repeats > 1 && options.sampling.temperature <= 0.0 {
        eprintln!(
            "warning: {} greedy repeats will give the same replies; set --temperature above 0",
            options.repeats
        );
    }
    let mut model = source.open(options.parallel)?;
    let backend = model.backend();
    let info = backend.info();
    let options = BenchOptions {
        result_model: args.result_model.clone().unwrap_or_else(|| {
            // A server's model has no file: its name stands in for the file's stem.
            let path = info.model_path.as_deref().or(info.model_name.as_deref());
            default_result_model(path, &info.name)
        }),
        ..options
    };
    let run = bench_run::run(backend, &selected, &options)?;
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&run.summary)?);
    } else {
        crate::outln!("{}", bench_report::table(&run.summary.scores));
        let summary = &run.summary;
        crate::outln!(
            "mode {} · {} repeat(s) · seed {} · temperature {} · parallel {} · {:.0}s{}",
            summary.mode.name(),
            summary.repeats,
            summary.seed,
            summary.temperature,
            summary.parallel,
            summary.seconds,
            match summary.inference_errors {
                0 => String::new(),
                n => format!(" · {n} inference error(s)"),
            }
        );
        crate::outln!("run {} → {}", summary.run_id, run.dir.display());
    }
    Ok(0)
}

fn score(args: BenchScoreArgs) -> anyhow::Result<u8> {
    let extra: Vec<ExtraCategory> = match args.custom.corpus() {
        Some(custom) => selection::extra_categories(&selection::select(
            &bench_corpus::default_root(),
            &[],
            Some(&custom),
            None,
            &[],
        )?),
        None => Vec::new(),
    };
    let per_repeat = score_repeats(&args.dir, &bench_corpus::default_root(), &extra)?;
    let summary = bench_report::summarize(&per_repeat);
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        crate::outln!("{}", bench_report::table(&summary));
    }
    Ok(0)
}
