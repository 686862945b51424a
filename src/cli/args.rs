//! Arguments more than one command takes: the model, where it runs (`--backend`, `--endpoint`),
//! `--parallel`, `--record`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::eval::replay::RecordMode;
use crate::harness::backend::llama::{LlamaBackend, LlamaOptions};
use crate::harness::backend::openai::{OpenAiOptions, API_KEY_VAR};
use crate::harness::backend::{self, OpenModel};
use crate::harness::template::Family;
use crate::model_path;

/// `--ctx` unless given.
pub const DEFAULT_CTX: u32 = 4096;

#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// GGUF model file, or the name of a model in models.tsv (gemma3, smollm2) fetched into the
    /// cache by scripts/setup.sh (default: $SKILLEVAL_MODEL, else the default of models.tsv)
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Chat format instead of the one the model's metadata gives (and, for `run`, the pack's
    /// `chat_format`): own (the model file's chat template, the default when it has one),
    /// gemma, chatml, llama3 or transcript
    #[arg(long, value_parser = parse_family)]
    pub family: Option<Family>,
    /// Context length in tokens (at least 256: llama.cpp's batch is cut to the context, and a
    /// prompt is prefilled in chunks of 256)
    #[arg(long, default_value_t = DEFAULT_CTX, value_parser = clap::value_parser!(u32).range(256..))]
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
    Family::parse(s).ok_or_else(|| {
        format!("unknown family {s:?}: use own, gemma, chatml, llama3 or transcript")
    })
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

/// Where the model runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendKind {
    /// llama.cpp in this process, on the GGUF file of --model
    Llama,
    /// An OpenAI-compatible server at --endpoint, sent the harness's own rendered prompts
    Openai,
}

/// The endpoint a server is sent each round at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ServerApi {
    /// /v1/completions with the harness's rendered prompt
    Completion,
    /// /v1/chat/completions with the round's messages and tools
    Chat,
}

#[derive(Args, Debug, Clone)]
pub struct BackendArgs {
    /// Where the model runs: `llama` (in this process, on --model's GGUF file) or `openai` (an
    /// OpenAI-compatible server at --endpoint, given the harness's rendered prompt at
    /// /v1/completions; its API key from $SKILLEVAL_API_KEY; --model then names the server's
    /// model, default the first it lists)
    #[arg(long, value_enum, default_value = "llama")]
    pub backend: BackendKind,
    /// The server's URL for --backend openai, e.g. http://127.0.0.1:8080
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// Tries after the first for a server request that met a connection error, a 5xx or a 429,
    /// waiting 0.5 s, 1 s, 2 s… between them (--backend openai)
    #[arg(long, default_value_t = 4)]
    pub retries: u32,
    /// Let a llama.cpp server start each prompt from the prefix its slot holds cached from an
    /// earlier prompt (--backend openai): much less prefill at --parallel above 1, but the
    /// transcripts no longer replay exactly, as the prefill's batches then differ
    #[arg(long)]
    pub server_prompt_cache: bool,
    /// Which endpoint a server is sent each round at (--backend openai): `completion`, the
    /// harness's own rendered prompt at /v1/completions; or `chat`, the round's messages and
    /// tools at /v1/chat/completions, so the server renders the prompt with its own template
    /// and reads the calls with its own parser (llama-server --jinja, vLLM)
    #[arg(long, value_enum, default_value = "completion")]
    pub server_api: ServerApi,
    /// Seconds one server request may take before it counts as failed (--backend openai)
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = parse_request_timeout)]
    pub request_timeout: u64,
}

/// The longest `--request-timeout`: a deadline is now plus the time-out, and a huge one would
/// overflow the clock.
const REQUEST_TIMEOUT_MAX_SECS: u64 = 86_400;

/// `--request-timeout`: whole seconds from 1 to a day; a number too large for any integer says
/// the limit too.
fn parse_request_timeout(text: &str) -> Result<u64, String> {
    let limit = format!("give whole seconds from 1 to {REQUEST_TIMEOUT_MAX_SECS} (a day)");
    let secs: u64 = match text.trim().parse() {
        Ok(secs) => secs,
        Err(_) if !text.trim().is_empty() && text.trim().bytes().all(|b| b.is_ascii_digit()) => {
            return Err(format!(
                "{text} is more than {REQUEST_TIMEOUT_MAX_SECS}; {limit}"
            ))
        }
        Err(_) => return Err(format!("{text:?} is no whole number; {limit}")),
    };
    match secs {
        0 => Err(format!("must be at least 1 second; {limit}")),
        s if s > REQUEST_TIMEOUT_MAX_SECS => Err(format!(
            "{s}: at most {REQUEST_TIMEOUT_MAX_SECS} seconds (a day)"
        )),
        s => Ok(s),
    }
}

impl BackendArgs {
    /// The server's options for `--backend openai`, `None` for llama; a flag that does not fit
    /// the backend is an error, before anything loads or connects.
    fn server_options(&self, model: &ModelArgs) -> anyhow::Result<Option<OpenAiOptions>> {
        match (self.backend, &self.endpoint) {
            (BackendKind::Llama, None) if self.server_prompt_cache => {
                anyhow::bail!("--server-prompt-cache: only with --backend openai")
            }
            (BackendKind::Llama, None) if self.server_api == ServerApi::Chat => {
                anyhow::bail!("--server-api: only with --backend openai")
            }
            (BackendKind::Llama, None) => Ok(None),
            (BackendKind::Llama, Some(_)) => {
                anyhow::bail!("--endpoint: only with --backend openai")
            }
            (BackendKind::Openai, None) => anyhow::bail!(
                "--backend openai: give the server's URL with --endpoint (the API key, if any, in ${API_KEY_VAR})"
            ),
            (BackendKind::Openai, Some(endpoint)) => {
                let mut options = OpenAiOptions::new(endpoint)?;
                options.model = model.model.as_ref().map(|m| m.display().to_string());
                options.family = model.family;
                options.retries = self.retries;
                options.prompt_cache = self.server_prompt_cache;
                options.chat_api = self.server_api == ServerApi::Chat;
                options.timeout = std::time::Duration::from_secs(self.request_timeout);
                Ok(Some(options))
            }
        }
    }

    /// Where the model runs, from these flags and the model's: checked, and nothing opened.
    pub fn source(&self, model: &ModelArgs) -> anyhow::Result<ModelSource> {
        Ok(match self.server_options(model)? {
            Some(options) => ModelSource::Server(options),
            None => ModelSource::Local(model.options()),
        })
    }
}

/// Where a command's model runs, resolved once from its flags before anything loads.
pub enum ModelSource {
    /// llama.cpp in this process, on a GGUF file.
    Local(LlamaOptions),
    /// An OpenAI-compatible server.
    Server(OpenAiOptions),
}

impl ModelSource {
    /// Loads the model (the one-sequence backend for `parallel` 1, else the batched engine), or
    /// connects to the server.
    pub fn open(&self, parallel: usize) -> anyhow::Result<OpenModel> {
        match self {
            ModelSource::Local(options) => backend::open(options, parallel),
            ModelSource::Server(options) => backend::connect(options),
        }
    }

    /// The batched engine with chunk-aligned reuse, for draws that must not depend on what was
    /// cached (`score --draws`); a server's draws are its own requests.
    pub fn open_reproducible(&self, sequences: usize) -> anyhow::Result<OpenModel> {
        match self {
            ModelSource::Local(options) => backend::open_reproducible(options, sequences),
            ModelSource::Server(options) => backend::connect(options),
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
/// 2 cores, 16 beat 8 on the weather pack, and 24 to 48 saved less than the machine drifts for
/// up to 2.5× the memory (docs/throughput.md).
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

/// Refuses, before any work, a file a command will write (`--junit`, `--prompt-log`) that is a
/// folder or whose folder does not exist.
pub fn check_output_file(flag: &str, path: &std::path::Path) -> anyhow::Result<()> {
    if path.is_dir() {
        anyhow::bail!("{flag} {}: is a folder; name a file", path.display());
    }
    // Opening a FIFO to write would block at the end of the run until a reader came.
    {
        use std::os::unix::fs::FileTypeExt;
        if let Ok(meta) = std::fs::metadata(path) {
            if meta.file_type().is_fifo() || meta.file_type().is_socket() {
                anyhow::bail!(
                    "{flag} {}: is a FIFO or a socket, not a file; name a file",
                    path.display()
                );
            }
        }
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if !folder.is_dir() {
        anyhow::bail!(
            "{flag} {}: folder {} does not exist",
            path.display(),
            folder.display()
        );
    }
    Ok(())
}
