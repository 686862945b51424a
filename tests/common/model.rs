//! The real default model, for the full tier's tests: its path, one loaded copy per test
//! binary, and checks of what a constrained run on it called.

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
pub fn smol_model_path() -> PathBuf {
    let path = skilleval::model_path::cache_dir().join("SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        path.is_file(),
        "{} is missing: run scripts/setup.sh first",
        path.display()
    );
    path
}

/// A turn on the machine's cores for one test that runs the model, in this process or in a
/// `skilleval` child: a model run already uses every core (llama.cpp starts a thread per core),
/// so two at once only contend, and llama.cpp's threads slow down badly when they outnumber
/// the cores. Tests of one binary that run the model take turns; others run beside them.
pub fn turn() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
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
pub fn gemma_request(prompt: &str, seed: u32, temperature: f32, max_tokens: u32) -> GenRequest {
    GenRequest {
        prompt: render(Family::Gemma, &[Message::user(prompt)]).expect("Gemma's format renders"),
        max_tokens,
        stop: vec!["<end_of_turn>".into()],
        grammar: None,
        markers: Vec::new(),
        sampling: Sampling {
            temperature,
            seed,
            ..Sampling::default()
        },
    }
}

/// Checks a constrained run: every call names a tool its round offered (`load_skill` a skill of
/// the tree, any other tool one whose skill an earlier round loaded), the harness refused none,
/// and a round that opened a call and was not cut short by its token budget parsed cleanly.
/// Panics naming the unit and the round otherwise, and when the model made no call at all.
pub fn assert_calls_offered(
    pack: &skilleval::eval::pack::Pack,
    entries: &[skilleval::eval::record::journal::JournalEntry],
) {
    use skilleval::harness::backend::FinishReason;
    let gates: std::collections::BTreeMap<String, String> = pack
        .tools
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                t.skill_gate.clone().expect("every tool is gated"),
            )
        })
        .collect();
    let skills = pack.skills(None).unwrap().names();
    let mut calls = 0;
    for entry in entries {
        let mut loaded: Vec<String> = Vec::new();
        for round in &entry.transcript.rounds {
            let what = format!("{} {}: {:?}", entry.sample_id, entry.arm.name(), round.raw);
            if round.raw.contains("<function=") && round.finish != FinishReason::MaxTokens {
                assert!(round.problems.is_empty(), "{what}: {:?}", round.problems);
            }
            let mut loads = Vec::new();
            for call in &round.calls {
                calls += 1;
                if call.name == "load_skill" {
                    let name = call.arguments["name"].as_str().unwrap_or_default();
                    assert!(skills.iter().any(|s| s == name), "{what}");
                    loads.push(name.to_string());
                } else {
                    let gate = gates.get(&call.name).unwrap_or_else(|| panic!("{what}"));
                    assert!(loaded.contains(gate), "{what}: {gate} is not loaded");
                }
                // The harness refuses a tool it did not offer; the grammar leaves none to refuse.
                assert!(
                    !call.result.contains("There is no tool named")
                        && !call.result.contains("is part of skill"),
                    "{what}: {}",
                    call.result
                );
            }
            loaded.extend(loads);
        }
    }
    assert!(calls > 0, "the model made no call at all");
}
