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

/// Each continuation token's likelihood (the softmax at `temperature` over the whole
/// vocabulary) as a sampled run computes it: the prompt prefilled in the sequential engine's
/// chunks, then the continuation fed back one token at a time, as a generation feeds its draws.
/// Called straight on llama.cpp, with none of skilleval's scoring code.
pub fn likelihoods_as_a_run_computes_them(
    request: &skilleval::harness::backend::ScoreRequest,
) -> Vec<f64> {
    use llama_cpp_2::context::params::LlamaContextParams;
    use llama_cpp_2::llama_batch::LlamaBatch;
    use llama_cpp_2::model::params::LlamaModelParams;
    use llama_cpp_2::model::LlamaModel;
    static MODEL: std::sync::OnceLock<LlamaModel> = std::sync::OnceLock::new();
    let rt = skilleval::harness::backend::llama::runtime().unwrap();
    let model = MODEL.get_or_init(|| {
        LlamaModel::load_from_file(rt, model_path(), &LlamaModelParams::default()).unwrap()
    });
    let chunk = 256;
    let params = LlamaContextParams::default()
        .with_n_ctx(std::num::NonZeroU32::new(2048))
        .with_n_batch(chunk as u32)
        .with_n_ubatch(chunk as u32)
        .with_swa_full(true);
    let mut context = model.new_context(rt, params).unwrap();
    let vocab = model.vocab();
    let prompt = vocab.tokenize(request.prompt.as_bytes(), false, true);
    let whole = vocab.tokenize(
        format!("{}{}", request.prompt, request.continuation).as_bytes(),
        false,
        true,
    );
    assert!(whole.starts_with(&prompt), "a merge across the seam");
    let continuation = &whole[prompt.len()..];
    let temperature = f64::from(request.sampling.temperature);
    let likelihood = |logits: &[f32], token: i32| {
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let total: f64 = logits
            .iter()
            .map(|l| ((*l as f64 - max) / temperature).exp())
            .sum();
        ((logits[token as usize] as f64 - max) / temperature).exp() / total
    };
    let mut batch = LlamaBatch::new(chunk, 1);
    for (c, part) in prompt.chunks(chunk).enumerate() {
        batch.clear();
        for (i, token) in part.iter().enumerate() {
            let at = c * chunk + i;
            batch
                .add(*token, at as i32, &[0], at + 1 == prompt.len())
                .unwrap();
        }
        context.decode(&mut batch).unwrap();
    }
    let mut read_at = batch.n_tokens() - 1;
    let mut out = Vec::new();
    for (k, token) in continuation.iter().enumerate() {
        out.push(likelihood(context.get_logits_ith(read_at), token.0));
        if k + 1 == continuation.len() {
            break;
        }
        batch.clear();
        batch
            .add(*token, (prompt.len() + k) as i32, &[0], true)
            .unwrap();
        context.decode(&mut batch).unwrap();
        read_at = 0;
    }
    out
}
