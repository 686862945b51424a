//! Arguments more than one command takes: the model, `--parallel`, `--record`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::eval::replay::RecordMode;
use crate::harness::backend::llama::{LlamaBackend, LlamaOptions};
use crate::harness::backend::{self, OpenModel};
use crate::harness::template::Family;
use crate::model_path;

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
    pub fn options(&self) -> LlamaOptions {
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
    pub fn open(&self, parallel: usize) -> anyhow::Result<OpenModel> {
        backend::open(&self.options(), parallel)
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RecordWhat {
    /// Record only calls that have no fixture
    Gaps,
    /// Refresh every fixture the run touches
    All,
}

/// What `--record` asks for, absent or not.
pub fn record_mode(record: Option<RecordWhat>) -> RecordMode {
    match record {
        None => RecordMode::Off,
        Some(RecordWhat::Gaps) => RecordMode::Gaps,
        Some(RecordWhat::All) => RecordMode::All,
    }
}
