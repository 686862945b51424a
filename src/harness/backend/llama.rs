//! llama.cpp through llama-cpp-2: one loaded model, one context, reused across generations.

use std::ffi::{c_char, CStr};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use anyhow::{anyhow, bail, Context as _};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend as LlamaRuntime;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;

use super::batch_score::BatchScorer;
use super::gguf::read_metadata;
pub use super::score_read::prompt_tokens;
use super::score_read::{sampler_distribution, score_tokens, token_scores};
use super::{
    Backend, BackendInfo, ContinuationScore, FinishReason, GenMetrics, GenRequest, Generation,
    Sampling, ScoreBatch, ScoreRequest,
};
use crate::harness::chat_template::{self, ChatTemplate, TemplateInfo};
use crate::harness::template::Family;
use crate::harness::toolcall::grammar::CallGrammar;

/// Prompts are prefilled in chunks that start at multiples of this position. A reused prefix is
/// cut back to a chunk boundary, so every cached token was computed in exactly the batch a fresh
/// prefill would use: reuse never changes the logits, and results do not depend on run order.
pub(crate) const PREFILL_CHUNK: usize = 256;

/// Scoring prefills in smaller chunks: its prompts share long prefixes that end at different
/// places (an arm's system text, a sample's first round), and a smaller chunk recomputes less
/// of each. Canonical all the same, so a score does not depend on the order it reads prompts in.
const SCORE_CHUNK: usize = 32;

#[derive(Debug, Clone)]
pub struct LlamaOptions {
    pub model_path: PathBuf,
    /// Context length in tokens; the model's 32k training context is far more than a sample needs.
    pub n_ctx: u32,
    /// 0 = one thread per available core.
    pub threads: u32,
    /// Overrides family detection from the GGUF metadata.
    pub family: Option<Family>,
    /// Start each prompt from the KV entries of the last one where they match. Off, every
    /// prompt is computed from scratch (the baseline that throughput figures compare to).
    pub prefix_cache: bool,
}

impl LlamaOptions {
    pub fn new(model_path: impl Into<PathBuf>) -> Self {
        LlamaOptions {
            model_path: model_path.into(),
            n_ctx: 4096,
            threads: 0,
            family: None,
            prefix_cache: true,
        }
    }
}

/// The process's one llama.cpp runtime, started on first use.
pub fn runtime() -> anyhow::Result<&'static LlamaRuntime> {
    static RUNTIME: OnceLock<LlamaRuntime> = OnceLock::new();
    static STARTING: Mutex<()> = Mutex::new(());
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    // llama.cpp starts once per process: a second start fails, so threads take turns.
    let _turn = STARTING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default().with_logs_enabled(false));
    let rt = LlamaRuntime::init().map_err(|e| anyhow!("llama.cpp failed to start: {e}"))?;
    Ok(RUNTIME.get_or_init(|| rt))
}

/// The CPU features llama.cpp was built with, from its own account ("CPU : SSE3 = 1 | AVX2 = 1
/// …"): the names of those that are on.
pub fn build_features() -> anyhow::Result<Vec<String>> {
    extern "C" {
        fn llama_print_system_info() -> *const c_char;
    }
    // The CPU backend registers when llama.cpp starts.
    runtime()?;
    // SAFETY: llama.cpp returns a pointer to a static, NUL-terminated buffer it owns.
    let text = unsafe {
        let ptr = llama_print_system_info();
        if ptr.is_null() {
            return Ok(Vec::new());
        }
        CStr::from_ptr(ptr).to_string_lossy().into_owned()
    };
    Ok(text
        .split('|')
        .map(str::trim)
        .filter(|f| f.ends_with("= 1"))
        .map(|f| f.trim_end_matches("= 1").trim())
        .map(|f| f.rsplit(": ").next().unwrap_or(f).to_string())
        .collect())
}

/// llama.cpp's AMX kernels crash on the first decode (SIGSEGV in `ggml_backend_amx_mul_mat`) on
/// Xeons with AMX; `.cargo/config.toml` builds without them, but a build folder configured
/// before that keeps them, and cargo does not configure llama.cpp again by itself.
fn refuse_amx_build(features: &[String]) -> anyhow::Result<()> {
    if features.iter().any(|f| f.starts_with("AMX")) {
        bail!(
            "this build of llama.cpp has its AMX kernels, which crash on the first decode; \
             build it again without them: cargo clean --release -p llama-cpp-sys-2 && cargo build --release"
        );
    }
    Ok(())
}

pub fn available_threads() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(2)
}

pub struct LlamaBackend {
    model: &'static LlamaModel,
    context: LlamaContext<'static>,
    family: Family,
    info: BackendInfo,
    /// Tokens whose KV entries sit in the cache, computed in canonical prefill chunks.
    cached: Vec<LlamaToken>,
    /// The chunk size `cached` was computed in.
    cached_chunk: usize,
    prefix_cache: bool,
    /// The many-lane context that [`Backend::score_batch`] scores in, made when first needed.
    scorer: Option<BatchScorer>,
}

/// A model loaded for the life of the process, with what its metadata says about it. Every
/// llama.cpp backend starts from one.
pub(crate) struct LoadedModel {
    pub model: &'static LlamaModel,
    pub family: Family,
    /// `n_ctx` is left 0: it belongs to a context.
    pub info: BackendInfo,
}

pub(crate) fn load_model(options: &LlamaOptions) -> anyhow::Result<LoadedModel> {
    let path = &options.model_path;
    // Read before llama.cpp sees the file, so that the common mistakes get a message naming
    // the path and the problem rather than a null pointer.
    let meta = read_metadata(path)?;
    let architecture = meta
        .get("general.architecture")
        .unwrap_or_default()
        .to_string();
    let model_name = meta.get("general.name").unwrap_or_default().to_string();
    let (family, chat_template) = chat_format(options, &meta, &architecture, &model_name)?;
    let rt = runtime()?;
    let features = build_features()?;
    refuse_amx_build(&features)?;
    let started = Instant::now();
    let model =
        LlamaModel::load_from_file(rt, path, &LlamaModelParams::default()).map_err(|_| {
            anyhow!(
                "{}: llama.cpp could not load this GGUF file (truncated or corrupt)",
                path.display()
            )
        })?;
    // A context past the trained length is never what was meant, and a huge one spends a long
    // time allocating before llama.cpp fails without a reason.
    let trained = model.n_ctx_train();
    if options.n_ctx > trained && trained > 0 {
        bail!(
            "--ctx {}: {} was trained on contexts of at most {trained} tokens; ask for that or less",
            options.n_ctx,
            path.display()
        );
    }
    // The model lives as long as the process: contexts borrow it, and a run loads one model.
    let model: &'static LlamaModel = Box::leak(Box::new(model));
    let threads = if options.threads == 0 {
        available_threads()
    } else {
        options.threads
    };
    let info = BackendInfo {
        name: "llama.cpp".into(),
        model_path: Some(path.display().to_string()),
        model_name: Some(model_name),
        architecture: Some(architecture),
        load_secs: started.elapsed().as_secs_f64(),
        threads,
        n_ctx: 0,
        sequences: 1,
        n_batch: PREFILL_CHUNK as u32,
        cpu_features: Some(features.join(" ")),
        endpoint: None,
        server_prompt_cache: None,
        server_api: None,
        chat_template,
    };
    Ok(LoadedModel {
        model,
        family,
        info,
    })
}

/// The chat format a model file is spoken to in, and the template that renders it when it is
/// the model's own. A file with a chat template gets it (decision 029), unless `--family` or a
/// pack asks for a hand-written format; a file without one gets the format its metadata names.
fn chat_format(
    options: &LlamaOptions,
    meta: &super::gguf::GgufMetadata,
    architecture: &str,
    model_name: &str,
) -> anyhow::Result<(Family, Option<TemplateInfo>)> {
    let path = options.model_path.display();
    let source = meta.get("tokenizer.chat_template");
    match (options.family, source) {
        (Some(Family::Own(_)) | None, Some(source)) => {
            let origin = format!("{path}: tokenizer.chat_template");
            let bos = meta.bos_token.as_deref().unwrap_or_default();
            let eos = meta.eos_token.as_deref().unwrap_or_default();
            let refused = |e: anyhow::Error| {
                anyhow!("{e}; pick a hand-written format with --family gemma|chatml|llama3|transcript")
            };
            let mut template =
                ChatTemplate::new(source, &origin, bos, eos, crate::base::clock::now_secs()).map_err(refused)?;
            // A template that cannot render what a run sends would fail every unit: refuse it now.
            template.settle().map_err(refused)?;
            let info = template.info();
            Ok((Family::Own(chat_template::keep(template)), Some(info)))
        }
        (Some(Family::Own(_)), None) => bail!(
            "{path}: --family own: the model file has no chat template (tokenizer.chat_template); pick gemma, chatml, llama3 or transcript"
        ),
        (Some(family), _) => Ok((family, None)),
        (None, None) => {
            let family = Family::detect(architecture, model_name, None).ok_or_else(|| {
                anyhow!(
                    "{path}: unknown model family (architecture \"{architecture}\", name \"{model_name}\"), and no chat template; \
                     pass --family gemma|chatml|llama3|transcript"
                )
            })?;
            Ok((family, None))
        }
    }
}

/// The sampler a request asks for: greedy at temperature 0, else top-k, top-p, temperature and
/// a draw seeded by the request; with a call grammar, held to it.
pub(crate) struct TokenSampler {
    draw: LlamaSampler,
    grammar: Option<LlamaSampler>,
}

impl TokenSampler {
    pub(crate) fn new(
        model: &LlamaModel,
        sampling: &Sampling,
        grammar: Option<&CallGrammar>,
    ) -> anyhow::Result<Self> {
        let s = sampling;
        let draw = if s.temperature <= 0.0 {
            LlamaSampler::greedy()
        } else {
            LlamaSampler::chain_simple([
                LlamaSampler::top_k(s.top_k.max(1)),
                LlamaSampler::top_p(s.top_p.clamp(0.0, 1.0), 1),
                LlamaSampler::temp(s.temperature),
                LlamaSampler::dist(s.seed),
            ])
        };
        let grammar = grammar
            .map(|g| {
                LlamaSampler::grammar_lazy(model, &g.gbnf, "root", [g.trigger.as_bytes()], &[])
                    .map_err(|e| anyhow!("llama.cpp refused the call grammar: {e}"))
            })
            .transpose()?;
        Ok(TokenSampler { draw, grammar })
    }

    /// The next token from the logits at `index` of the last decode. The draw comes first; only
    /// when the grammar refuses its token is the grammar laid over the whole vocabulary and
    /// the draw made again, as llama.cpp's own samplers do: checking one token is cheap, and
    /// masking every token of a large vocabulary at each step is not.
    pub(crate) fn sample(&mut self, context: &LlamaContext, index: i32) -> LlamaToken {
        let token = self.draw.sample(context, index);
        let Some(grammar) = self.grammar.as_mut() else {
            return token;
        };
        let mut drawn = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 0.0, 0.0)], false);
        drawn.apply_sampler(grammar);
        let token = if drawn.data[0].logit().is_finite() {
            token
        } else {
            let mut all = context.token_data_array_ith(index);
            all.apply_sampler(grammar);
            all.apply_sampler(&mut self.draw);
            all.selected_token()
                .expect("the grammar leaves some token and the draw selects one")
        };
        grammar.accept(token);
        token
    }
}

impl LlamaBackend {
    pub fn load(options: &LlamaOptions) -> anyhow::Result<Self> {
        let LoadedModel {
            model,
            family,
            mut info,
        } = load_model(options)?;
        let threads = info.threads;
        let started = Instant::now();
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(options.n_ctx))
            .with_n_batch(PREFILL_CHUNK as u32)
            .with_n_ubatch(PREFILL_CHUNK as u32)
            .with_n_threads(threads as i32)
            .with_n_threads_batch(threads as i32)
            // A full sliding-window cache keeps partial removal exact (Gemma 3 uses a 512 window).
            .with_swa_full(true);
        let context = model.new_context(runtime()?, params).with_context(|| {
            format!(
                "{}: cannot create a llama.cpp context",
                options.model_path.display()
            )
        })?;
        info.n_ctx = context.n_ctx();
        info.load_secs += started.elapsed().as_secs_f64();
        Ok(LlamaBackend {
            model,
            context,
            family,
            info,
            cached: Vec::new(),
            cached_chunk: PREFILL_CHUNK,
            prefix_cache: options.prefix_cache,
            scorer: None,
        })
    }

    /// Prompt tokens per second of the scoring context with no harness: a `prefix` shared by
    /// every lane, then `tail` tokens of each (`batch_score::bare_prefill_rate`).
    pub fn bare_prefill_rate(&self, prefix: usize, tail: usize) -> anyhow::Result<f64> {
        super::batch_score::bare_prefill_rate(
            runtime()?,
            self.model,
            self.info.threads,
            prefix,
            tail,
        )
    }

    /// The loaded model's vocabulary.
    pub fn vocab(&self) -> llama_cpp_2::vocab::LlamaVocab<'static> {
        self.model.vocab()
    }

    pub fn tokenize(&self, text: &str) -> Vec<LlamaToken> {
        // The rendered prompt spells out <bos> and turn markers itself.
        self.model.vocab().tokenize(text.as_bytes(), false, true)
    }

    /// Reuses the cached prefix where it is exact and prefills the rest in canonical chunks.
    /// Returns how many prompt tokens came from the cache.
    fn prefill(&mut self, tokens: &[LlamaToken]) -> anyhow::Result<usize> {
        self.prefill_in(tokens, PREFILL_CHUNK)
    }

    /// [`Self::prefill`] in chunks of `chunk` tokens. A cache filled in chunks of another size
    /// is dropped first: its entries were computed in other batches, so they are not the bits
    /// this size's prefill would compute.
    fn prefill_in(&mut self, tokens: &[LlamaToken], chunk: usize) -> anyhow::Result<usize> {
        if self.cached_chunk != chunk {
            self.cached.clear();
            self.cached_chunk = chunk;
        }
        let common = if self.prefix_cache {
            self.cached
                .iter()
                .zip(tokens)
                .take_while(|(a, b)| a == b)
                .count()
        } else {
            0
        };
        // Keep at least the last prompt token to compute: its logits start the generation.
        let keep = ((common.min(tokens.len() - 1)) / chunk) * chunk;
        let keep = keep.min(self.cached.len());
        self.context
            .clear_kv_cache_seq(Some(0), Some(keep as u32), None)
            .map_err(|e| anyhow!("cache removal failed: {e}"))?;
        self.cached.truncate(keep);
        let mut batch = LlamaBatch::new(chunk, 1);
        let mut pos = keep;
        while pos < tokens.len() {
            let end = ((pos / chunk) + 1) * chunk;
            let end = end.min(tokens.len());
            batch.clear();
            for (i, token) in tokens[pos..end].iter().enumerate() {
                let at = pos + i;
                batch.add(*token, at as i32, &[0], at + 1 == tokens.len())?;
            }
            self.context
                .decode(&mut batch)
                .map_err(|e| anyhow!("prefill failed: {e}"))?;
            // Only whole chunks are canonical; a partial last chunk is recomputed next time.
            if end.is_multiple_of(chunk) {
                self.cached.extend_from_slice(&tokens[pos..end]);
            }
            pos = end;
        }
        Ok(keep)
    }
}

impl Backend for LlamaBackend {
    fn family(&self) -> Family {
        self.family
    }

    fn info(&self) -> BackendInfo {
        self.info.clone()
    }

    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        let started = Instant::now();
        let tokens = prompt_tokens(&self.model.vocab(), request);
        if tokens.is_empty() {
            bail!("the prompt is empty");
        }
        let n_ctx = self.context.n_ctx() as usize;
        if tokens.len() + 1 >= n_ctx {
            bail!(
                "the prompt has {} tokens, more than the context of {n_ctx} holds",
                tokens.len()
            );
        }
        let cached = self.prefill(&tokens)?;
        let prefill_secs = started.elapsed().as_secs_f64();

        let mut sampler =
            TokenSampler::new(self.model, &request.sampling, request.grammar.as_ref())?;
        let vocab = self.model.vocab();
        let mut batch = LlamaBatch::new(1, 1);
        let mut bytes: Vec<u8> = Vec::new();
        let mut generated = 0u32;
        let mut finish = FinishReason::MaxTokens;
        let mut ttft_secs = 0.0;
        let mut text = String::new();
        let mut pos = tokens.len();
        let mut logits_index = last_token_batch_index(tokens.len());
        let decode_started = Instant::now();
        let budget = (request.max_tokens as usize).min(n_ctx - tokens.len() - 1);
        while (generated as usize) < budget {
            let token = sampler.sample(&self.context, logits_index);
            generated += 1;
            if generated == 1 {
                ttft_secs = started.elapsed().as_secs_f64();
            }
            if vocab.is_eog(token) {
                finish = FinishReason::Eos;
                break;
            }
            bytes.extend_from_slice(&vocab.token_to_piece(token, false, None));
            text = String::from_utf8_lossy(&bytes).into_owned();
            if let Some((at, stop)) = first_stop(&text, &request.stop) {
                text.truncate(at);
                finish = FinishReason::Stop(stop);
                break;
            }
            if (generated as usize) == budget {
                break;
            }
            batch.clear();
            batch.add(token, pos as i32, &[0], true)?;
            self.context
                .decode(&mut batch)
                .map_err(|e| anyhow!("decode failed: {e}"))?;
            logits_index = 0;
            pos += 1;
        }
        let metrics = GenMetrics {
            prompt_tokens: tokens.len() as u32,
            cached_prompt_tokens: cached as u32,
            generated_tokens: generated,
            prefill_secs,
            decode_secs: decode_started.elapsed().as_secs_f64(),
            ttft_secs,
        };
        Ok(Generation {
            text,
            finish,
            metrics,
        })
    }

    fn score(&mut self, request: &ScoreRequest) -> anyhow::Result<ContinuationScore> {
        self.score_continuation(request)
    }

    /// Together, in the scoring context's lanes (`batch_score`).
    fn score_batch(&mut self, requests: &[ScoreRequest]) -> ScoreBatch {
        let n_ctx = self.context.n_ctx() as usize;
        let rt = match runtime() {
            Ok(rt) => rt,
            Err(e) => return super::ScoreBatch::failed(requests.len(), &e),
        };
        BatchScorer::score_in(
            &mut self.scorer,
            rt,
            self.model,
            self.info.threads,
            requests,
            n_ctx,
        )
    }
}

impl LlamaBackend {
    /// [`Backend::score`]: the prompt prefilled as for a generation (its cached prefix reused),
    /// the continuation's tokens decoded in one batch, and each read under the sampler.
    fn score_continuation(&mut self, request: &ScoreRequest) -> anyhow::Result<ContinuationScore> {
        let started = Instant::now();
        let vocab = self.model.vocab();
        let n_ctx = self.context.n_ctx() as usize;
        let (prompt, continuation) = score_tokens(&vocab, request, n_ctx)?;
        let cached = self.prefill_in(&prompt, SCORE_CHUNK)?;
        let last = prompt.len() - 1;
        let mut distributions = vec![sampler_distribution(
            &self.context,
            (last % SCORE_CHUNK) as i32,
            &request.sampling,
            continuation[0],
        )];
        // The continuation but its last token, decoded together: the logits at each position
        // give the next token's distribution.
        let feed = &continuation[..continuation.len() - 1];
        let mut batch = LlamaBatch::new(PREFILL_CHUNK, 1);
        for (chunk_index, chunk) in feed.chunks(PREFILL_CHUNK).enumerate() {
            batch.clear();
            for (i, token) in chunk.iter().enumerate() {
                let at = prompt.len() + chunk_index * PREFILL_CHUNK + i;
                batch.add(*token, at as i32, &[0], true)?;
            }
            self.context
                .decode(&mut batch)
                .map_err(|e| anyhow!("scoring decode failed: {e}"))?;
            for i in 0..chunk.len() {
                let next = continuation[chunk_index * PREFILL_CHUNK + i + 1];
                distributions.push(sampler_distribution(
                    &self.context,
                    i as i32,
                    &request.sampling,
                    next,
                ));
            }
        }
        Ok(ContinuationScore {
            tokens: token_scores(&vocab, &continuation, &distributions),
            prompt_tokens: prompt.len() as u32,
            cached_prompt_tokens: cached as u32,
            secs: started.elapsed().as_secs_f64(),
        })
    }
}

/// Index, within the last prefill batch, of the token whose logits start generation.
fn last_token_batch_index(prompt_len: usize) -> i32 {
    let last = prompt_len - 1;
    (last - (last / PREFILL_CHUNK) * PREFILL_CHUNK) as i32
}

/// The earliest stop string in `text`, as (byte offset, stop string).
pub fn first_stop(text: &str, stops: &[String]) -> Option<(usize, String)> {
    stops
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text.find(s.as_str()).map(|at| (at, s.clone())))
        .min_by_key(|(at, _)| *at)
}
