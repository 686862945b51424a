//! Command-line interface: argument parsing and dispatch. Every failure becomes one line on
//! stderr and a non-zero exit.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::bench::corpus as bench_corpus;
use crate::bench::report as bench_report;
use crate::bench::run::{self as bench_run, BenchOptions, CustomCorpus};
use crate::bench::score::{score_repeats, ExtraCategory};
use crate::bench::Mode;
use crate::eval::pack::Pack;
use crate::eval::replay::RecordMode;
use crate::eval::runner::{self, RunOptions};
use crate::eval::{report, stats};

use crate::harness::backend::batched::{BatchedEngine, BatchedHandle, BatchedOptions};
use crate::harness::backend::llama::{LlamaBackend, LlamaOptions};
use crate::harness::backend::{Backend, GenRequest, Sampling};
use crate::harness::template::{self, Family, Message};
use crate::harness::toolcall::CallFormat;
use crate::model_path;

mod chat;
mod doctor;

/// Exit code when `--fail-on worse` finds a category worse beyond noise.
pub const EXIT_WORSE: u8 = 3;

#[derive(Parser, Debug)]
#[command(
    name = "skilleval",
    version,
    about = "Measures whether a skill's new wording makes a small local model behave better or worse",
    after_long_help = "Examples:
  skilleval run --pack weather --variant packs/weather/variants/b.md --limit 30 --repeats 2
  skilleval chat --pack weather --prompt \"how cold is it in berlin today\"
  skilleval doctor"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// GGUF model file, or the name of a model in models.tsv (gemma3, smollm2) fetched into the
    /// cache by scripts/setup.sh (default: $SKILLEVAL_MODEL, else the default of models.tsv)
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Chat format instead of the one the model's metadata gives (and, for `run`, the pack's
    /// `chat_format`): gemma, chatml, llama3 or transcript
    #[arg(long, value_parser = parse_family)]
    pub family: Option<Family>,
    /// Context length in tokens
    #[arg(long, default_value_t = 4096)]
    pub ctx: u32,
    /// CPU threads (default: one per core)
    #[arg(long, default_value_t = 0)]
    pub threads: u32,
    /// Compute every prompt from scratch instead of reusing the cached prefix (the baseline
    /// of throughput figures; one sample at a time, results do not change)
    #[arg(long)]
    pub no_prefix_cache: bool,
}

fn parse_family(s: &str) -> Result<Family, String> {
    Family::parse(s)
        .ok_or_else(|| format!("unknown family {s:?}: use gemma, chatml, llama3 or transcript"))
}

impl ModelArgs {
    fn options(&self) -> LlamaOptions {
        let mut options = LlamaOptions::new(model_path::resolve(self.model.clone()));
        options.family = self.family;
        options.n_ctx = self.ctx;
        options.threads = self.threads;
        options.prefix_cache = !self.no_prefix_cache;
        options
    }

    pub fn load(&self) -> anyhow::Result<LlamaBackend> {
        LlamaBackend::load(&self.options())
    }

    /// The one-sequence backend for `parallel` 1, else the batched engine with that many
    /// sequences.
    fn open(&self, parallel: usize) -> anyhow::Result<OpenModel> {
        Ok(if parallel > 1 {
            let engine = BatchedEngine::start(&BatchedOptions::new(self.options(), parallel))?;
            OpenModel::Batched {
                handle: engine.handle(),
                _engine: engine,
            }
        } else {
            OpenModel::Single(self.load()?)
        })
    }
}

/// A loaded model, ready for a run at the chosen `--parallel`.
enum OpenModel {
    Single(LlamaBackend),
    Batched {
        handle: BatchedHandle,
        /// Kept for the run's length, as the owner of the serving thread.
        _engine: BatchedEngine,
    },
}

impl OpenModel {
    fn backend(&mut self) -> &mut dyn Backend {
        match self {
            OpenModel::Single(backend) => backend,
            OpenModel::Batched { handle, .. } => handle,
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct ParallelArgs {
    /// Samples run at once over one model, their sequences decoded in shared batches (default:
    /// 8 per CPU core, from 4 to 16). A run replays exactly at the same value; 1 runs one
    /// sample at a time, bit for bit as a one-sequence backend
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub parallel: Option<u32>,
}

impl ParallelArgs {
    pub fn resolve(&self) -> usize {
        self.parallel
            .map(|p| p as usize)
            .unwrap_or_else(default_parallel)
    }
}

/// More sequences per decode call give more tokens per second until prompt work dominates: on
/// 2 cores, 16 beat 8 on the weather pack, for 60% more memory (docs/throughput.md).
pub fn default_parallel() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (8 * cores).clamp(4, 16)
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Generate a reply to one prompt: the text on stdout, the run's figures on stderr
    #[command(after_long_help = GENERATE_EXAMPLES)]
    Generate {
        /// The prompt, sent in the model's chat format unless --raw
        #[arg(long)]
        prompt: String,
        #[command(flatten)]
        model: ModelArgs,
        /// Seed of the sampler
        #[arg(long, default_value_t = 0)]
        seed: u32,
        /// Sampling temperature; 0 is greedy
        #[arg(long, default_value_t = 0.0)]
        temperature: f32,
        /// Most tokens to generate
        #[arg(long, default_value_t = 128)]
        max_tokens: u32,
        /// Send the prompt as it is, without the chat format
        #[arg(long)]
        raw: bool,
        /// Print the text and the figures as one JSON object on stdout
        #[arg(long)]
        json: bool,
    },
    /// Run one prompt through the harness loop with the tools its skills grant, and print the
    /// transcript with every call and its result
    Chat(chat::ChatArgs),
    /// Compare a skill's baseline wording with a variant over a pack's corpus
    #[command(after_long_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Judge a pack's hand-labelled cases (judge-cases.jsonl) with its laws, print every
    /// disagreement, and check that every corpus sample has a reply that passes
    #[command(after_long_help = CHECK_EXAMPLES)]
    Check {
        /// Pack name (packs/NAME) or path
        #[arg(long)]
        pack: String,
    },
    /// Score the model on BFCL function-calling entries, or re-score saved results
    /// (`bench --bfcl …` is short for `bench run --bfcl …`)
    #[command(after_long_help = BENCH_EXAMPLES)]
    Bench(Box<BenchArgs>),
    /// Check the model, the llama.cpp build, the threads and every pack; exit 1 on a problem
    Doctor(doctor::DoctorArgs),
}

const GENERATE_EXAMPLES: &str = "Examples:
  skilleval generate --prompt \"Name three rivers.\"
  skilleval generate --prompt \"Name three rivers.\" --model smollm2 --json
  skilleval generate --raw --prompt \"The capital of France is\" --max-tokens 8 > out.txt";

const CHECK_EXAMPLES: &str = "Examples:
  skilleval check --pack weather
  skilleval check --pack path/to/my-pack     # a pack folder holding pack.toml and judge-cases.jsonl";

const RUN_EXAMPLES: &str = "Examples:
  skilleval run --pack weather --variant packs/weather/variants/b.md --limit 30 --repeats 2
  skilleval run --pack weather                      # A/A: the noise floor
  skilleval run --pack weather --variant b.md --fail-on worse --json > summary.json";

const BENCH_EXAMPLES: &str = "Examples:
  skilleval bench --bfcl simple_python,parallel --limit 20
  skilleval bench run --bfcl all --mode harness --repeats 3
  skilleval bench score output/bench-20261130-101500/";

const BENCH_RUN_EXAMPLES: &str = "Examples:
  skilleval bench run --bfcl simple_python --limit 20
  skilleval bench run --bfcl multiple --mode harness --call-format json-tag
  skilleval bench run --corpus mine.jsonl --answers mine-answers.jsonl --category-name simple";

const BENCH_SCORE_EXAMPLES: &str = "Examples:
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
    #[command(after_long_help = BENCH_RUN_EXAMPLES)]
    Run(BenchRunArgs),
    /// Re-score BFCL result files (BFCL_v4_<category>_result.json) without a model
    #[command(after_long_help = BENCH_SCORE_EXAMPLES)]
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
}

impl From<CallFormatArg> for CallFormat {
    fn from(format: CallFormatArg) -> Self {
        match format {
            CallFormatArg::Markup => CallFormat::Markup,
            CallFormatArg::JsonTag => CallFormat::JsonTag,
            CallFormatArg::PythonList => CallFormat::PythonList,
        }
    }
}

/// A question file in BFCL's shape, instead of or besides the vendored categories.
#[derive(Args, Debug, Clone, Default)]
pub struct CustomCorpusArgs {
    /// Questions in BFCL's JSON-lines shape ({"id", "question", "function"})
    #[arg(long, requires = "category_name")]
    pub corpus: Option<PathBuf>,
    /// Answers for --corpus ({"id", "ground_truth"}); not needed for irrelevance
    #[arg(long, requires = "corpus")]
    pub answers: Option<PathBuf>,
    /// Category of --corpus; it picks the checker as BFCL's names do (simple, multiple,
    /// parallel, irrelevance)
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
    /// prompting model to score it with `bfcl evaluate` (default: the GGUF file's stem)
    #[arg(long)]
    pub result_model: Option<String>,
    #[command(flatten)]
    pub parallel: ParallelArgs,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub model: ModelArgs,
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

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FailOn {
    /// Any category worse beyond noise
    Worse,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RecordWhat {
    /// Record only calls that have no fixture
    Gaps,
    /// Refresh every fixture the run touches
    All,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Pack name (packs/<name>) or path to a pack folder or pack.toml
    #[arg(long)]
    pub pack: String,
    /// A SKILL.md (or a body alone) laid over the skill under test
    #[arg(long)]
    pub variant: Option<PathBuf>,
    /// Baseline skills tree instead of the pack's own
    #[arg(long)]
    pub skills_dir: Option<PathBuf>,
    /// Another corpus of the same shape
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Times each sample runs in each arm, each with its own recorded seed
    #[arg(long, default_value_t = 3)]
    pub repeats: u32,
    /// Run seed: every unit's seed derives from it, the sample, the arm and the repeat
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run only this category (repeatable)
    #[arg(long)]
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
    /// Exit with code 3 when the variant is worse beyond noise in some category or in total
    #[arg(long)]
    pub fail_on: Option<FailOn>,
    /// Skip the control arm (the skill with an empty body) that measures the skill's own effect
    #[arg(long)]
    pub no_control: bool,
    /// Continue an interrupted run from its journal
    #[arg(long)]
    pub resume: Option<String>,
    /// Where run folders go
    #[arg(long, default_value = "output")]
    pub output: PathBuf,
    #[command(flatten)]
    pub parallel: ParallelArgs,
    /// Print where the run's time and tokens went
    #[arg(long)]
    pub profile: bool,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// A generation's figures, for stderr or `--json`: rates over the time of their own phase.
fn generation_figures(
    backend: &dyn Backend,
    m: &crate::harness::backend::GenMetrics,
) -> serde_json::Value {
    let info = backend.info();
    serde_json::json!({
        "model": info.model_path,
        "model_load_secs": info.load_secs,
        "threads": info.threads,
        "prompt_tokens": m.prompt_tokens,
        "prefill_tokens_per_sec": m.prefill_tokens_per_sec(),
        "generated_tokens": m.generated_tokens,
        "decode_tokens_per_sec": m.decode_tokens_per_sec(),
        "first_token_secs": m.ttft_secs,
    })
}

fn print_figures(backend: &dyn Backend, m: &crate::harness::backend::GenMetrics) {
    let info = backend.info();
    eprintln!("---");
    eprintln!(
        "model load      {:.2} s ({} threads)",
        info.load_secs, info.threads
    );
    eprintln!("prompt tokens   {}", m.prompt_tokens);
    eprintln!("prefill         {:.1} tokens/s", m.prefill_tokens_per_sec());
    eprintln!("generated       {} tokens", m.generated_tokens);
    eprintln!("decode          {:.1} tokens/s", m.decode_tokens_per_sec());
    eprintln!("first token     {:.3} s", m.ttft_secs);
}

pub fn run_command(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::Generate {
            prompt,
            model,
            seed,
            temperature,
            max_tokens,
            raw,
            json,
        } => {
            let mut backend = model.load()?;
            let text = if raw {
                prompt
            } else {
                template::render(backend.family(), &[Message::user(prompt)])
            };
            let request = GenRequest {
                prompt: text,
                max_tokens,
                stop: backend
                    .family()
                    .end_of_turn()
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                sampling: Sampling {
                    temperature,
                    seed,
                    ..Sampling::default()
                },
            };
            let generation = backend.generate(&request)?;
            if json {
                let mut out = serde_json::json!({
                    "text": generation.text,
                    "finish": generation.finish,
                });
                out["figures"] = generation_figures(&backend, &generation.metrics);
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                println!("{}", generation.text.trim_end());
                print_figures(&backend, &generation.metrics);
            }
            Ok(0)
        }
        Command::Chat(args) => chat::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Run(args) => run_pack(args),
        Command::Check { pack } => {
            let report = crate::eval::law_cases::check(&Pack::load(&pack)?)?;
            print!("{}", report.render());
            Ok(if report.agrees() { 0 } else { 1 })
        }
        Command::Bench(bench) => match *bench {
            BenchArgs { command: None, run } => run_bench(run),
            BenchArgs {
                command: Some(BenchCommand::Run(args)),
                ..
            } => run_bench(args),
            BenchArgs {
                command: Some(BenchCommand::Score(args)),
                ..
            } => score_bench(args),
        },
    }
}

fn run_bench(args: BenchRunArgs) -> anyhow::Result<u8> {
    let categories = bench_run::parse_categories(&args.bfcl)?;
    let custom = args.custom.corpus();
    // Fail on category and corpus mistakes before the model loads.
    let selected = bench_run::select(
        &bench_corpus::default_root(),
        &categories,
        custom.as_ref(),
        args.limit,
    )?;
    let temperature = args.temperature.unwrap_or(if args.repeats > 1 {
        REPEATS_TEMPERATURE
    } else {
        0.0
    });
    if args.repeats > 1 && temperature <= 0.0 {
        eprintln!(
            "warning: {} greedy repeats will give the same replies; set --temperature above 0",
            args.repeats
        );
    }
    let parallel = args.parallel.resolve();
    let mut model = args.model.open(parallel)?;
    let backend = model.backend();
    let info = backend.info();
    let result_model = args
        .result_model
        .clone()
        .unwrap_or_else(|| bench_run::default_result_model(info.model_path.as_deref(), &info.name));
    let options = BenchOptions {
        mode: match args.mode {
            BenchMode::Prompt => Mode::Prompt,
            BenchMode::Harness => Mode::Harness,
        },
        call_format: args.call_format.map(CallFormat::from),
        max_tokens: args.max_tokens,
        sampling: Sampling {
            temperature,
            ..Sampling::default()
        },
        seed: args.seed,
        repeats: args.repeats,
        limit: args.limit,
        output_root: args.output,
        result_model,
        progress: std::io::stderr().is_terminal(),
        parallel,
    };
    let run = bench_run::run(backend, &selected, &options)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&run.summary)?);
    } else {
        println!("{}", bench_report::table(&run.summary.scores));
        let summary = &run.summary;
        println!(
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
        println!("run {} → {}", summary.run_id, run.dir.display());
    }
    Ok(0)
}

fn score_bench(args: BenchScoreArgs) -> anyhow::Result<u8> {
    let extra: Vec<ExtraCategory> = match args.custom.corpus() {
        Some(custom) => bench_run::extra_categories(&bench_run::select(
            &bench_corpus::default_root(),
            &[],
            Some(&custom),
            None,
        )?),
        None => Vec::new(),
    };
    let per_repeat = score_repeats(&args.dir, &bench_corpus::default_root(), &extra)?;
    let summary = bench_report::summarize(&per_repeat);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!("{}", bench_report::table(&summary));
    }
    Ok(0)
}

fn run_pack(args: RunArgs) -> anyhow::Result<u8> {
    let mut pack = Pack::load(&args.pack)?;
    // The model's chat format comes from its metadata; a pack's `chat_format` insists on
    // another, and `--family` on the command line overrides both.
    if args.model.family.is_some() {
        pack.chat_format = None;
    }
    let mut opts = RunOptions::new(pack);
    opts.variant = args.variant;
    opts.skills_dir = args.skills_dir;
    opts.corpus = args.corpus;
    opts.repeats = args.repeats;
    opts.seed = args.seed;
    opts.categories = args.category;
    opts.limit = args.limit;
    opts.record = match args.record {
        None => RecordMode::Off,
        Some(RecordWhat::Gaps) => RecordMode::Gaps,
        Some(RecordWhat::All) => RecordMode::All,
    };
    opts.temperature = args.temperature;
    opts.top_k = args.top_k;
    opts.top_p = args.top_p;
    opts.output_root = args.output;
    opts.resume = args.resume;
    opts.progress = true;
    opts.control = !args.no_control;
    opts.parallel = args.parallel.resolve();
    // Fail on pack, corpus, variant and fixture mistakes before the model loads.
    let prepared = runner::prepare(&opts)?;
    let mut model = args.model.open(opts.parallel)?;
    let result = runner::run_prepared(model.backend(), &prepared)?;
    let profile = &result.profile;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result.summary)?);
    } else {
        println!("{}", report::table(&result.summary));
        println!("{}", profile.line());
        println!("run {} → {}", result.run_id, result.dir.display());
    }
    if args.profile {
        let text = profile.table()
            + &profile
                .engine
                .as_ref()
                .map(|s| s.table())
                .unwrap_or_default();
        // Beside a JSON summary, on stderr so that stdout stays JSON; the summary line with it,
        // since the table above was not printed.
        if args.json {
            eprint!("{}\n{text}", profile.line());
        } else {
            print!("{text}");
        }
    }
    Ok(
        if args.fail_on.is_some() && stats::any_worse(&result.summary) {
            EXIT_WORSE
        } else {
            0
        },
    )
}
