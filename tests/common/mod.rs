//! Shared by the tests that run the real default model.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};

use skilleval::harness::backend::llama::{LlamaBackend, LlamaOptions};
use skilleval::harness::backend::{GenRequest, Sampling};
use skilleval::harness::template::{render, Family, Message};

/// The default model as `scripts/setup.sh` leaves it. Tests fail (not skip) without it:
/// CI runs the set-up first.
pub fn model_path() -> PathBuf {
    let path = skilleval::model_path::resolve(None);
    assert!(
        path.is_file(),
        "{} is missing: run scripts/setup.sh first",
        path.display()
    );
    path
}

/// SmolLM2-135M-Instruct (a ChatML instruct model) in the model cache, as `scripts/setup.sh`
/// leaves it.
#[allow(dead_code)] // only the model tests use the second model
pub fn smol_model_path() -> PathBuf {
    let path = skilleval::model_path::cache_dir().join("SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        path.is_file(),
        "{} is missing: run scripts/setup.sh first",
        path.display()
    );
    path
}

/// One loaded model per test binary: loading is cheap, but memory is shared with other tests.
pub fn backend() -> MutexGuard<'static, LlamaBackend> {
    static BACKEND: OnceLock<Mutex<LlamaBackend>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut options = LlamaOptions::new(model_path());
            options.n_ctx = 2048;
            Mutex::new(LlamaBackend::load(&options).expect("the default model loads"))
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// One user message in Gemma's chat format, ending at its end-of-turn marker.
#[allow(dead_code)] // not every test binary that shares this module sends raw requests
pub fn gemma_request(prompt: &str, seed: u32, temperature: f32, max_tokens: u32) -> GenRequest {
    GenRequest {
        prompt: render(Family::Gemma, &[Message::user(prompt)]),
        max_tokens,
        stop: vec!["<end_of_turn>".into()],
        grammar: None,
        sampling: Sampling {
            temperature,
            seed,
            ..Sampling::default()
        },
    }
}
