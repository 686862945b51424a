//! The batched engine on the real default model.

mod common;

use std::thread;

use skilleval::harness::backend::batched::{BatchedEngine, BatchedOptions};
use skilleval::harness::backend::llama::LlamaOptions;
use skilleval::harness::backend::{Backend, GenRequest, Generation, Sampling};
use skilleval::harness::template::{render, Family, Message};

fn request(prompt: &str, temperature: f32, seed: u32, max_tokens: u32) -> GenRequest {
    GenRequest {
        prompt: render(Family::Gemma, &[Message::user(prompt)]),
        max_tokens,
        stop: vec!["<end_of_turn>".into()],
        sampling: Sampling {
            temperature,
            seed,
            ..Sampling::default()
        },
    }
}

fn engine(sequences: usize) -> BatchedEngine {
    let mut llama = LlamaOptions::new(common::model_path());
    llama.n_ctx = 2048;
    BatchedEngine::start(&BatchedOptions::new(llama, sequences)).expect("the engine starts")
}

/// Sends every request from its own thread, all at once.
fn concurrently(engine: &BatchedEngine, requests: &[GenRequest]) -> Vec<Generation> {
    thread::scope(|scope| {
        let workers: Vec<_> = requests
            .iter()
            .map(|r| {
                let mut handle = engine.handle();
                scope.spawn(move || handle.generate(r).expect("answered"))
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).collect()
    })
}

const QUESTIONS: [&str; 8] = [
    "Name three colours.",
    "What is the capital of France?",
    "Count from one to five.",
    "Say hello in Spanish.",
    "What do bees make?",
    "Name a large ocean.",
    "What is two plus two?",
    "Give me a word that rhymes with cat.",
];

#[test]
fn probe_batched_against_single() {
    let requests: Vec<GenRequest> = QUESTIONS.iter().map(|q| request(q, 0.0, 0, 32)).collect();
    let single: Vec<Generation> = {
        let mut backend = common::backend();
        requests.iter().map(|r| backend.generate(r).unwrap()).collect()
    };
    let engine = engine(8);
    let batched = concurrently(&engine, &requests);
    for (s, b) in single.iter().zip(&batched) {
        println!("same={} single={:?} batched={:?}", s.text == b.text, s.text, b.text);
    }
    println!("{:?}", engine.stats());
}

#[test]
fn probe_repeat_and_one_sequence() {
    let requests: Vec<GenRequest> = QUESTIONS.iter().map(|q| request(q, 0.0, 0, 32)).collect();
    let single: Vec<Generation> = {
        let mut backend = common::backend();
        requests.iter().map(|r| backend.generate(r).unwrap()).collect()
    };
    let one = engine(1);
    let mut h = one.handle();
    let one_seq: Vec<Generation> = requests.iter().map(|r| h.generate(r).unwrap()).collect();
    let e = engine(8);
    let a = concurrently(&e, &requests);
    let b = concurrently(&e, &requests);
    for i in 0..requests.len() {
        println!(
            "one_seq==single {}  batched a==b {}",
            one_seq[i].text == single[i].text,
            a[i].text == b[i].text
        );
    }
}
