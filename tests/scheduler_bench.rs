//! Reference figures for `scripts/bench_throughput.sh`; ignored in ordinary test runs.

use skilleval::harness::backend::batched::{bare_decode_rate, BatchedOptions};
use skilleval::harness::backend::llama::LlamaOptions;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Prints the generated tokens per second of a bare batched decode loop.
#[test]
#[ignore = "a benchmark: run with --ignored"]
fn bare_batched_decode() {
    let sequences = env_usize("BENCH_SEQUENCES", 8);
    let prompt = env_usize("BENCH_PROMPT_TOKENS", 750);
    let steps = env_usize("BENCH_STEPS", 32);
    let mut llama = LlamaOptions::new(skilleval::model_path::resolve(None));
    llama.n_ctx = env_usize("BENCH_CTX", 4096) as u32;
    let rate = bare_decode_rate(&BatchedOptions::new(llama, sequences), prompt, steps).unwrap();
    println!(
        "bare batched decode: {sequences} sequences, {prompt}-token prompt: {rate:.1} tokens/s"
    );
}
