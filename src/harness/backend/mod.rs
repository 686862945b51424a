//! Model backends: the one seam between the harness and whatever produces text (llama.cpp in
//! this process, one sequence or batched; an OpenAI-compatible server; a script for tests).

mod batch_score;
pub mod batched;
mod engine_stats;
pub mod gguf;
pub mod llama;
mod open;
pub mod openai;
mod openai_chat;
mod prompt_log;
mod score_read;
pub mod server_score;

use serde::{Deserialize, Serialize};

use super::template::{self, Family, Message};
use super::toolcall::grammar::CallGrammar;

pub use batch_score::{SCORE_CALL_TOKENS, SCORE_LANES};
pub use engine_stats::EngineStats;

/// Ends the message of an error no retry can get past (a server's 4xx other than 429: the same
/// request is refused every time), so the runner stops the run at the first such unit instead
/// of erroring every unit after it.
pub const REFUSED: &str = "the server refuses such requests, so the run stops";

/// Whether a unit's error is one of those.
pub fn refused(message: &str) -> bool {
    message.contains(REFUSED)
}
pub use open::{connect, open, open_reproducible, OpenModel};
pub use prompt_log::PromptLog;

/// How the next token is chosen. `temperature <= 0` means greedy.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub seed: u32,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 0.0,
            top_k: 40,
            top_p: 0.95,
            seed: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenRequest {
    /// Fully rendered prompt text, special tokens spelled out.
    pub prompt: String,
    pub max_tokens: u32,
    /// Generation ends before the first occurrence of any of these.
    pub stop: Vec<String>,
    pub sampling: Sampling,
    /// Holds the calls the model opens to the offered tools (`constrained_calls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar: Option<CallGrammar>,
    /// Where the chat template's markers are in `prompt` (`template::Rendered`): special
    /// tokens are read there only. Empty for a raw prompt, whose special tokens are all read.
    #[serde(skip)]
    pub markers: Vec<(usize, usize)>,
}

impl GenRequest {
    /// `prompt`, already in the family's chat format (or raw), ending where the family's turn
    /// ends.
    pub fn in_turn(family: Family, prompt: String, max_tokens: u32, sampling: Sampling) -> Self {
        GenRequest {
            prompt,
            max_tokens,
            stop: family.end_of_turn().iter().map(|s| s.to_string()).collect(),
            sampling,
            grammar: None,
            markers: Vec::new(),
        }
    }

    /// `messages` in the family's chat format, the reply ending where the family's turn ends.
    /// Fails only when the model's own template does (`template::render_marked`).
    pub fn chat(
        family: Family,
        messages: &[Message],
        max_tokens: u32,
        sampling: Sampling,
    ) -> anyhow::Result<Self> {
        let rendered = template::render_marked(family, messages)?;
        Ok(GenRequest {
            markers: rendered.markers,
            ..Self::in_turn(family, rendered.text, max_tokens, sampling)
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum FinishReason {
    /// The model emitted an end-of-generation token.
    Eos,
    /// A stop string was produced (it is not part of the text).
    Stop(String),
    /// `max_tokens` ran out.
    MaxTokens,
}

/// Figures for one generation. Seconds are wall-clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenMetrics {
    pub prompt_tokens: u32,
    /// Prompt tokens whose KV entries were reused from an earlier generation.
    #[serde(default)]
    pub cached_prompt_tokens: u32,
    pub generated_tokens: u32,
    pub prefill_secs: f64,
    pub decode_secs: f64,
    /// From the call to the first generated token.
    pub ttft_secs: f64,
}

impl GenMetrics {
    pub fn prefill_tokens_per_sec(&self) -> f64 {
        rate(
            self.prompt_tokens - self.cached_prompt_tokens,
            self.prefill_secs,
        )
    }
    pub fn decode_tokens_per_sec(&self) -> f64 {
        rate(self.generated_tokens, self.decode_secs)
    }
}

pub fn rate(tokens: u32, secs: f64) -> f64 {
    if secs > 0.0 {
        tokens as f64 / secs
    } else {
        0.0
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    pub text: String,
    pub finish: FinishReason,
    pub metrics: GenMetrics,
}

/// What a backend says about itself, for manifests and reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BackendInfo {
    pub name: String,
    pub model_path: Option<String>,
    pub model_name: Option<String>,
    pub architecture: Option<String>,
    pub load_secs: f64,
    pub threads: u32,
    /// Context of one sequence.
    pub n_ctx: u32,
    /// Sequences decoded together in one context (1 for a one-sequence backend).
    #[serde(default)]
    pub sequences: u32,
    /// Most tokens in one decode call.
    #[serde(default)]
    pub n_batch: u32,
    /// The model's own chat template, when it renders the prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template: Option<crate::harness::chat_template::TemplateInfo>,
    /// The server's base URL, for a backend that sends its prompts to one (`openai`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// `chat` when a server rendered the prompts with its own template from the rounds' chat
    /// messages and read the calls with its own parser (`--server-api chat`); `None` when
    /// skilleval rendered them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_api: Option<String>,
    /// Whether the server may start a prompt from the prefix it holds cached from an earlier
    /// one (`--server-prompt-cache`); `None` for a backend that has no such choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_prompt_cache: Option<bool>,
    /// The CPU features the llama.cpp build computes with (its kernels): other kernels sum in
    /// other orders and so draw other samples from the same seeds. `None` for a server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_features: Option<String>,
}

/// A text to score after a prompt: how likely the run's sampler is to write it, token by token.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreRequest {
    /// The rendered prompt, as a `GenRequest` carries it.
    pub prompt: String,
    /// Where the chat template's markers are in `prompt` (`GenRequest::markers`).
    pub markers: Vec<(usize, usize)>,
    /// The text whose probability is read, as the model would write it right after `prompt`.
    pub continuation: String,
    /// The sampler whose probabilities are read (the seed plays no part).
    pub sampling: Sampling,
}

/// One token of a scored continuation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenScore {
    /// The token's text.
    pub piece: String,
    /// Byte offset in the continuation where the token ends.
    pub end: usize,
    /// Its probability under the request's sampler: 0 when top-k or top-p cut it.
    pub probability: f64,
    /// Its probability under the softmax at the request's temperature over the whole
    /// vocabulary (at temperature 0, at 1): never 0, so a ratio of two is always defined.
    pub likelihood: f64,
}

/// A continuation's tokens, each with the probability the sampler gives it after the prompt
/// and the tokens before it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContinuationScore {
    pub tokens: Vec<TokenScore>,
    pub prompt_tokens: u32,
    /// Prompt tokens whose KV entries were reused from an earlier request.
    pub cached_prompt_tokens: u32,
    pub secs: f64,
}

impl ContinuationScore {
    /// The probability of the tokens that end at or before byte `end` of the continuation.
    pub fn probability_through(&self, end: usize) -> f64 {
        self.tokens
            .iter()
            .take_while(|t| t.end <= end)
            .map(|t| t.probability)
            .product()
    }

    /// The probability of the whole continuation.
    pub fn probability(&self) -> f64 {
        self.tokens.iter().map(|t| t.probability).product()
    }

    /// The likelihood of the whole continuation (`TokenScore::likelihood`).
    pub fn likelihood(&self) -> f64 {
        self.tokens.iter().map(|t| t.likelihood).product()
    }
}

/// A round as chat messages with the tools it offers, for a server that renders the prompt with
/// the model's own template and reads calls with its own parser (`--server-api chat`).
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRound {
    pub messages: Vec<Message>,
    /// Each tool the model may call: name, description, JSON schema of its arguments.
    pub tools: Vec<(String, String, serde_json::Value)>,
    /// The call syntax the harness reads replies in: the calls a server returns are written in
    /// it, and the assistant's earlier calls read from it.
    pub format: super::toolcall::CallFormat,
}

/// The answers to several score requests, in their order, and the tokens computed for them all.
#[derive(Debug, Default)]
pub struct ScoreBatch {
    pub answers: Vec<anyhow::Result<ContinuationScore>>,
    /// Tokens the model computed: a prefix shared by many requests counts once.
    pub computed_tokens: u64,
}

impl ScoreBatch {
    /// Every one of `count` requests failed with `error`.
    pub fn failed(count: usize, error: &anyhow::Error) -> Self {
        ScoreBatch {
            answers: (0..count)
                .map(|_| Err(anyhow::anyhow!("{error:#}")))
                .collect(),
            computed_tokens: 0,
        }
    }
}

/// Why a backend without prompt probabilities cannot score.
pub fn cannot_score(name: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{name} gives no probabilities of a prompt's tokens, so it cannot score; score with the model in this process (--backend llama)"
    )
}

pub trait Backend {
    fn family(&self) -> Family;
    fn info(&self) -> BackendInfo;
    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation>;

    /// A round's reply, given both the rendered prompt and the round as chat messages: a backend
    /// that sends messages to a server's chat endpoint uses the second, every other the first.
    fn generate_chat(
        &mut self,
        request: &GenRequest,
        _chat: &ChatRound,
    ) -> anyhow::Result<Generation> {
        self.generate(request)
    }

    /// The probability of `request.continuation` after its prompt under its sampler, token by
    /// token, without generating. Backends that cannot read those probabilities refuse.
    fn score(&mut self, _request: &ScoreRequest) -> anyhow::Result<ContinuationScore> {
        Err(cannot_score(&self.info().name))
    }

    /// [`Backend::score`] for several requests, each answered as `score` answers it (a backend
    /// that computes them together may differ in the last bits of the logits), in order. By
    /// default one after another.
    fn score_batch(&mut self, requests: &[ScoreRequest]) -> ScoreBatch {
        let answers: Vec<_> = requests.iter().map(|r| self.score(r)).collect();
        let computed_tokens = answers
            .iter()
            .flatten()
            .map(|s| u64::from(s.prompt_tokens - s.cached_prompt_tokens) + s.tokens.len() as u64)
            .sum();
        ScoreBatch {
            answers,
            computed_tokens,
        }
    }

    /// Another handle on the same model for another thread, when the backend serves several
    /// callers at once (see `batched`); `None` when it serves one.
    fn fork(&self) -> Option<Box<dyn Backend + Send>> {
        None
    }

    /// The figures of the engine behind this backend, when it serves many callers (see
    /// `batched`); `None` for a backend that keeps none.
    fn engine_stats(&self) -> Option<EngineStats> {
        None
    }
}

/// A backend spoken to in another chat format than its own, e.g. a base model driven through a
/// plain transcript. `B` is a borrowed backend or a forked handle.
pub struct WithFamily<B> {
    inner: B,
    family: Family,
}

impl<B> WithFamily<B> {
    pub fn new(inner: B, family: Family) -> Self {
        WithFamily { inner, family }
    }
}

/// What `WithFamily` can wrap: anything that lends out a backend.
pub trait LendsBackend {
    fn backend(&self) -> &dyn Backend;
    fn backend_mut(&mut self) -> &mut dyn Backend;
}

impl LendsBackend for &mut dyn Backend {
    fn backend(&self) -> &dyn Backend {
        &**self
    }
    fn backend_mut(&mut self) -> &mut dyn Backend {
        &mut **self
    }
}

impl LendsBackend for Box<dyn Backend + Send> {
    fn backend(&self) -> &dyn Backend {
        &**self
    }
    fn backend_mut(&mut self) -> &mut dyn Backend {
        &mut **self
    }
}

impl<B: LendsBackend> Backend for WithFamily<B> {
    /// Asked for the model's own template, the one the wrapped backend loaded, if it did.
    fn family(&self) -> Family {
        match (self.family, self.inner.backend().family()) {
            (Family::OWN, own @ Family::Own(_)) => own,
            (family, _) => family,
        }
    }

    fn info(&self) -> BackendInfo {
        self.inner.backend().info()
    }

    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        self.inner.backend_mut().generate(request)
    }

    fn generate_chat(
        &mut self,
        request: &GenRequest,
        chat: &ChatRound,
    ) -> anyhow::Result<Generation> {
        self.inner.backend_mut().generate_chat(request, chat)
    }

    fn score(&mut self, request: &ScoreRequest) -> anyhow::Result<ContinuationScore> {
        self.inner.backend_mut().score(request)
    }

    fn score_batch(&mut self, requests: &[ScoreRequest]) -> ScoreBatch {
        self.inner.backend_mut().score_batch(requests)
    }

    fn engine_stats(&self) -> Option<EngineStats> {
        self.inner.backend().engine_stats()
    }

    /// A fork keeps speaking the chat format its parent was spoken to in.
    fn fork(&self) -> Option<Box<dyn Backend + Send>> {
        let inner = self.inner.backend().fork()?;
        Some(Box::new(WithFamily::new(inner, self.family)))
    }
}
