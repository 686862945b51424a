//! A bare batched decode loop with no harness: the reference figure the engine is held to in
//! `scripts/bench_throughput.sh`.

use std::time::Instant;

use anyhow::{anyhow, Context as _};
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::token::LlamaToken;

use super::super::llama::{load_model, runtime, PREFILL_CHUNK};
use super::{context_params, validate, BatchedOptions};

/// Generated tokens per second of a bare loop, no harness: `sequences` copies of a prompt of
/// `prompt_tokens` tokens, then `steps` decode calls of one token per sequence, in a context
/// made as the engine makes its own. A reference for what the engine could reach.
pub fn bare_decode_rate(
    options: &BatchedOptions,
    prompt_tokens: usize,
    steps: usize,
) -> anyhow::Result<f64> {
    validate(options)?;
    let loaded = load_model(&options.llama)?;
    let sequences = options.sequences;
    let params = context_params(sequences, options.llama.n_ctx as usize, loaded.info.threads);
    let mut context = loaded
        .model
        .new_context(runtime()?, params)
        .context("cannot create a llama.cpp context")?;
    let vocab = loaded.model.vocab();
    let word = vocab.tokenize(b" weather", false, false);
    let prompt: Vec<LlamaToken> = word
        .iter()
        .copied()
        .cycle()
        .take(prompt_tokens.max(1))
        .collect();
    let mut batch = LlamaBatch::new(PREFILL_CHUNK.max(sequences), 1);
    for (start, chunk) in prompt.chunks(PREFILL_CHUNK).enumerate() {
        batch.clear();
        for (i, token) in chunk.iter().enumerate() {
            let pos = start * PREFILL_CHUNK + i;
            batch.add(*token, pos as i32, &[0], pos + 1 == prompt.len())?;
        }
        context
            .decode(&mut batch)
            .map_err(|e| anyhow!("prefill failed: {e}"))?;
    }
    for seq in 1..sequences {
        context.kv_cache_seq_cp(0, seq as i32, None, None)?;
    }
    let token = word[0];
    let started = Instant::now();
    for step in 0..steps {
        batch.clear();
        for seq in 0..sequences {
            batch.add(token, (prompt.len() + step) as i32, &[seq as i32], true)?;
        }
        context
            .decode(&mut batch)
            .map_err(|e| anyhow!("decode failed: {e}"))?;
    }
    Ok((steps * sequences) as f64 / started.elapsed().as_secs_f64())
}
