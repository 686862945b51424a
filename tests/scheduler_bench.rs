//! Reference figures for `scripts/bench_throughput.sh`; ignored in ordinary test runs.

mod common;

use skilleval::harness::backend::batched::{bare_decode_rate, BatchedOptions};
use skilleval::harness::backend::llama::LlamaOptions;

use common::env::count;

/// Prints the generated tokens per second of a bare batched decode loop.
#[test]
#[ignore = "a benchmark: run with --ignored"]
fn bare_batched_decode() {
    let sequences = count("BENCH_SEQUENCES", 8);
    let prompt = count("BENCH_PROMPT_TOKENS", 750);
    let steps = count("BENCH_STEPS", 32);
    let mut llama = LlamaOptions::new(skilleval::model_path::resolve(None));
    llama.n_ctx = count("BENCH_CTX", 4096) as u32;
    let rate = bare_decode_rate(&BatchedOptions::new(llama, sequences), prompt, steps).unwrap();
    println!(
        "bare batched decode: {sequences} sequences, {prompt}-token prompt: {rate:.1} tokens/s"
    );
}
