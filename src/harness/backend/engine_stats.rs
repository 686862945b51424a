//! What an engine that serves many callers did over its life: requests, decode calls, time per
//! phase, prefix reuse. A run's profile takes its rates from these figures.

use serde::{Deserialize, Serialize};

/// Totals over the engine's life, for throughput reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineStats {
    pub requests: u64,
    pub prompt_tokens: u64,
    /// Prompt tokens whose KV entries came from a cached prefix.
    pub cached_prompt_tokens: u64,
    /// Requests that reused a cached prefix at all.
    pub prefix_hits: u64,
    pub generated_tokens: u64,
    pub decode_calls: u64,
    /// Tokens over all decode calls, prompt and generated.
    pub batched_tokens: u64,
    /// Time inside decode calls that carried prompt tokens (generating sequences ride along).
    pub prefill_secs: f64,
    /// Time inside decode calls that carried only generated tokens.
    pub decode_secs: f64,
    /// Generated tokens in the decode calls that carried no prompt tokens (fillers not counted).
    pub decode_only_tokens: u64,
    /// Prompt tokens computed in the calls that carried prompt tokens.
    #[serde(default)]
    pub prefill_call_tokens: u64,
    /// Throwaway tokens that kept a generating call in one run of consecutive sequences.
    #[serde(default)]
    pub filler_tokens: u64,
    /// Prefixes copied from another sequence's KV stream (each copies the whole stream).
    #[serde(default)]
    pub stream_copies: u64,
    /// Most sequences in one decode call.
    pub peak_sequences: u32,
    /// Time the engine waited for lockstep clients to ask again (tools, judging, prompts).
    #[serde(default)]
    pub client_wait_secs: f64,
    /// Time spent tokenizing prompts.
    #[serde(default)]
    pub tokenize_secs: f64,
    /// Time spent sampling and checking stop strings after decode calls.
    #[serde(default)]
    pub sample_secs: f64,
}

impl EngineStats {
    /// What the engine did, for `--profile`.
    pub fn table(&self) -> String {
        let per_sec = |n: u64, secs: f64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let per_call = if self.decode_calls > 0 {
            self.batched_tokens as f64 / self.decode_calls as f64
        } else {
            0.0
        };
        format!(
            "engine: {} requests · {} decode calls, {:.1} tokens per call, at most {} sequences\n\
             \x20 calls with prompt tokens  {:>8.1}s ({:.0} prompt tokens/s)\n\
             \x20 calls generating only     {:>8.1}s ({:.0} tokens/s, {} fillers)\n\
             \x20 sampling                  {:>8.1}s\n\
             \x20 tokenizing                {:>8.1}s\n\
             \x20 waiting for clients       {:>8.1}s\n\
             \x20 prefix cache              {} hits, {} of {} prompt tokens, {} stream copies\n",
            self.requests,
            self.decode_calls,
            per_call,
            self.peak_sequences,
            self.prefill_secs,
            per_sec(self.prefill_call_tokens, self.prefill_secs),
            self.decode_secs,
            per_sec(self.decode_only_tokens, self.decode_secs),
            self.filler_tokens,
            self.sample_secs,
            self.tokenize_secs,
            self.client_wait_secs,
            self.prefix_hits,
            self.cached_prompt_tokens,
            self.prompt_tokens,
            self.stream_copies,
        )
    }
}
