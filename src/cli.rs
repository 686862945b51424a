//! Command-line interface: argument parsing and dispatch. Every failure becomes one line on
//! stderr and a non-zero exit.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::bail;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::eval::pack::Pack;
use crate::eval::replay::RecordMode;
use crate::eval::runner::{self, RunOptions};
use crate::eval::{report, stats};
use crate::harness::agent::{self, AgentRequest, Budgets};
use crate::harness::backend::llama::{LlamaBackend, LlamaOptions};
use crate::harness::backend::{Backend, GenRequest, Sampling};
use crate::harness::skills::SkillTree;
use crate::harness::template::{self, Family, Message};
use crate::harness::tools::Registry;
use crate::model_path;

/// Exit code when `--fail-on worse` finds a category worse beyond noise.
pub const EXIT_WORSE: u8 = 3;

#[derive(Parser, Debug)]
#[command(
    name = "skilleval",
    version,
    about = "Measures whether a skill's new wording makes a small local model behave better or worse"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// GGUF model file (default: $SKILLEVAL_MODEL, else the cache that scripts/setup.sh fills)
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Chat format, when the model's metadata does not make it clear
    #[arg(long, value_parser = parse_family)]
    pub family: Option<Family>,
    /// Context length in tokens
    #[arg(long, default_value_t = 4096)]
    pub ctx: u32,
    /// CPU threads (default: one per core)
    #[arg(long, default_value_t = 0)]
    pub threads: u32,
}

fn parse_family(s: &str) -> Result<Family, String> {
    Family::parse(s).ok_or_else(|| format!("unknown family {s:?}: use gemma, chatml or llama3"))
}

impl ModelArgs {
    pub fn load(&self) -> anyhow::Result<LlamaBackend> {
        let mut options = LlamaOptions::new(model_path::resolve(self.model.clone()));
        options.family = self.family;
        options.n_ctx = self.ctx;
        options.threads = self.threads;
        LlamaBackend::load(&options)
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Generate a reply to one prompt and print it with the run's figures
    Generate {
        #[arg(long)]
        prompt: String,
        #[command(flatten)]
        model: ModelArgs,
        #[arg(long, default_value_t = 0)]
        seed: u32,
        /// 0 = greedy
        #[arg(long, default_value_t = 0.0)]
        temperature: f32,
        #[arg(long, default_value_t = 128)]
        max_tokens: u32,
        /// Send the prompt as it is, without the chat format
        #[arg(long)]
        raw: bool,
    },
    /// Run one prompt through the harness loop with a skills tree and print the transcript
    Chat {
        #[arg(long)]
        skills_dir: PathBuf,
        #[arg(long)]
        prompt: String,
        /// Load this skill before the first round
        #[arg(long)]
        preload: Vec<String>,
        #[arg(long)]
        json: bool,
        #[arg(long, default_value_t = 0)]
        seed: u32,
        #[arg(long, default_value_t = 0.0)]
        temperature: f32,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Compare a skill's baseline wording with a variant over a pack's corpus
    Run(RunArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FailOn {
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
    #[arg(long, default_value_t = 3)]
    pub repeats: u32,
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
    #[arg(long)]
    pub temperature: Option<f32>,
    #[arg(long)]
    pub top_k: Option<i32>,
    #[arg(long)]
    pub top_p: Option<f32>,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Exit with code 3 when any category is worse beyond noise
    #[arg(long)]
    pub fail_on: Option<FailOn>,
    /// Continue an interrupted run from its journal
    #[arg(long)]
    pub resume: Option<String>,
    /// Where run folders go
    #[arg(long, default_value = "output")]
    pub output: PathBuf,
    #[command(flatten)]
    pub model: ModelArgs,
}

fn print_metrics(backend: &dyn Backend, m: &crate::harness::backend::GenMetrics) {
    let info = backend.info();
    println!("---");
    println!(
        "model load      {:.2} s ({} threads)",
        info.load_secs, info.threads
    );
    println!("prompt tokens   {}", m.prompt_tokens);
    println!("prefill         {:.1} tokens/s", m.prefill_tokens_per_sec());
    println!("generated       {} tokens", m.generated_tokens);
    println!("decode          {:.1} tokens/s", m.decode_tokens_per_sec());
    println!("first token     {:.3} s", m.ttft_secs);
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
            println!("{}", generation.text.trim_end());
            print_metrics(&backend, &generation.metrics);
            Ok(0)
        }
        Command::Chat {
            skills_dir,
            prompt,
            preload,
            json,
            seed,
            temperature,
            model,
        } => {
            let skills = SkillTree::load(&skills_dir)?;
            for p in &preload {
                if skills.get(p).is_none() {
                    bail!(
                        "--preload {p:?}: {} has no such skill",
                        skills_dir.display()
                    );
                }
            }
            let mut backend = model.load()?;
            let registry = Registry::new();
            let request = AgentRequest {
                instructions: "You are a helpful assistant.",
                messages: vec![Message::user(prompt)],
                skills: &skills,
                preload,
                tools: &registry,
                format: None,
                sampling: Sampling {
                    temperature,
                    seed,
                    ..Sampling::default()
                },
                budgets: Budgets::default(),
            };
            let transcript = agent::run(&mut backend, &request);
            if json {
                println!("{}", serde_json::to_string_pretty(&transcript)?);
            } else {
                print!(
                    "{}",
                    crate::harness::transcript::render_readable(&transcript)
                );
            }
            Ok(0)
        }
        Command::Run(args) => run_pack(args),
    }
}

fn run_pack(args: RunArgs) -> anyhow::Result<u8> {
    let pack = Pack::load(&args.pack)?;
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
    opts.progress = std::io::stderr().is_terminal();
    // Fail on pack, corpus and variant mistakes before the model loads.
    runner::arms(
        &opts.pack,
        opts.skills_dir.as_deref(),
        opts.variant.as_deref(),
    )?;
    let mut backend = args.model.load()?;
    let result = runner::run(&mut backend, &opts)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result.summary)?);
    } else {
        println!("{}", report::table(&result.summary));
        println!("run {} → {}", result.run_id, result.dir.display());
    }
    let worse = result
        .summary
        .categories
        .iter()
        .any(|c| c.verdict == stats::Verdict::Worse);
    Ok(if worse && args.fail_on.is_some() {
        EXIT_WORSE
    } else {
        0
    })
}
