//! The batched engine on the real default model.

mod common;

use std::thread;

use skilleval::harness::backend::batched::{BatchedEngine, BatchedOptions};
use skilleval::harness::backend::llama::LlamaOptions;
use skilleval::harness::backend::{Backend, GenRequest, Generation};

fn request(prompt: &str, temperature: f32, seed: u32, max_tokens: u32) -> GenRequest {
    common::model::gemma_request(prompt, seed, temperature, max_tokens)
}

fn engine(sequences: usize, chunk_aligned_reuse: bool) -> BatchedEngine {
    let mut llama = LlamaOptions::new(common::model::model_path());
    llama.n_ctx = 2048;
    let mut options = BatchedOptions::new(llama, sequences);
    options.chunk_aligned_reuse = chunk_aligned_reuse;
    BatchedEngine::start(&options).expect("the engine starts")
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
        workers
            .into_iter()
            .map(|w| w.join().expect("worker"))
            .collect()
    })
}

const QUESTIONS: [&str; 6] = [
    "Name three colours.",
    "What is the capital of France?",
    "Count from one to five.",
    "Say hello in Spanish.",
    "What do bees make?",
    "Give me a word that rhymes with cat.",
];

/// Greedy and sampled requests alike: with one sequence and chunk-aligned reuse, the engine
/// computes every batch as the one-sequence backend does, so it gives the same text.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn one_sequence_engine_matches_the_one_sequence_backend() {
    let _turn = common::model::turn();
    let requests: Vec<GenRequest> = QUESTIONS
        .iter()
        .enumerate()
        .map(|(i, q)| request(q, if i % 2 == 0 { 0.0 } else { 0.9 }, i as u32, 16))
        .collect();
    let single: Vec<Generation> = {
        let mut backend = common::model::backend();
        requests
            .iter()
            .map(|r| backend.generate(r).unwrap())
            .collect()
    };
    let engine = engine(1, true);
    let mut handle = engine.handle();
    for (r, s) in requests.iter().zip(&single) {
        let g = handle.generate(r).unwrap();
        assert_eq!((&g.text, &g.finish), (&s.text, &s.finish), "{}", r.prompt);
        assert_eq!(g.metrics.generated_tokens, s.metrics.generated_tokens);
    }
}

/// More clients than sequences: the rest wait, and every request gets its own answer. Batched
/// greedy text may differ from one-sequence text (the batch changes the arithmetic), so only
/// the structure is asserted here.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn concurrent_requests_are_all_answered() {
    let _turn = common::model::turn();
    let requests: Vec<GenRequest> = QUESTIONS.iter().map(|q| request(q, 0.0, 0, 12)).collect();
    let engine = engine(4, false);
    let answers = concurrently(&engine, &requests);
    assert_eq!(answers.len(), requests.len());
    for g in &answers {
        let m = &g.metrics;
        assert!(m.prompt_tokens > 5, "{m:?}");
        assert!(m.generated_tokens > 0 && m.generated_tokens <= 12, "{m:?}");
        assert!(m.ttft_secs > 0.0 && m.prefill_secs > 0.0, "{m:?}");
    }
    let stats = engine.stats();
    assert_eq!(stats.requests, requests.len() as u64);
    assert_eq!(
        stats.generated_tokens,
        answers
            .iter()
            .map(|g| u64::from(g.metrics.generated_tokens))
            .sum::<u64>()
    );
    assert!(stats.peak_sequences > 1, "{stats:?}");
    assert!(stats.peak_sequences <= 4, "{stats:?}");
    // Prompt and generated tokens never share a call: every token of a call with prompt tokens
    // is a prompt token. A generate call also carries a filler for each idle sequence between
    // two generating ones (decision 010); whether one is needed depends on when the clients
    // arrive.
    assert_eq!(
        stats.batched_tokens,
        stats.prompt_tokens - stats.cached_prompt_tokens
            + stats.decode_only_tokens
            + stats.filler_tokens,
        "{stats:?}"
    );
}

/// A long prompt prefix, as the system prompt and worked examples of a pack are.
fn long_prefix() -> String {
    let line = "The station on the hill records wind, rain and the temperature every hour.\n";
    line.repeat(48)
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_shared_prefix_is_reused_across_sequences() {
    let _turn = common::model::turn();
    let prefix = long_prefix();
    let first = request(&format!("{prefix}How windy is it?"), 0.0, 0, 8);
    let second = request(&format!("{prefix}Is it raining?"), 0.0, 0, 8);
    let engine = engine(2, true);
    let (mut a, mut b) = (engine.handle(), engine.handle());
    let g1 = a.generate(&first).unwrap();
    assert_eq!(g1.metrics.cached_prompt_tokens, 0);
    // Another client: its sequence gets a copy of the first one's prefix.
    let g2 = b.generate(&second).unwrap();
    let cached = g2.metrics.cached_prompt_tokens;
    assert!(cached >= 512, "{:?}", g2.metrics);
    assert_eq!(cached % 256, 0, "reuse ends on a chunk boundary");
    assert!(cached < g2.metrics.prompt_tokens);
    // The prefix was computed in the chunks a fresh prefill uses: reusing it changes nothing.
    let fresh = common::model::backend().generate(&second).unwrap();
    assert_eq!(g2.text, fresh.text);
    let stats = engine.stats();
    assert_eq!(stats.prefix_hits, 1);
    assert_eq!(stats.cached_prompt_tokens, u64::from(cached));
}

/// Without alignment, any common prefix is reused, and a sequence keeps what it generated: the
/// next round's prompt, which repeats the reply, starts after it.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_next_round_reuses_the_prompt_and_the_reply() {
    let _turn = common::model::turn();
    let prefix = long_prefix();
    let first = request(&format!("{prefix}How windy is it?"), 0.0, 0, 8);
    let engine = engine(2, false);
    let mut handle = engine.handle();
    let g1 = handle.generate(&first).unwrap();
    assert!(g1.metrics.generated_tokens >= 3, "{g1:?}");
    let mut next = first.clone();
    next.prompt = format!(
        "{}{}\n<start_of_turn>user\nAnd tomorrow?",
        first.prompt, g1.text
    );
    let g2 = handle.generate(&next).unwrap();
    let cached = g2.metrics.cached_prompt_tokens;
    assert!(
        cached > g1.metrics.prompt_tokens,
        "reused {cached} tokens, the first prompt had {}",
        g1.metrics.prompt_tokens
    );
    assert!(cached < g2.metrics.prompt_tokens);
}

/// Lockstep: work run on the engine's forks gets the same batches whatever the threads'
/// timing, so a run replays exactly. Two runs of the same multi-round work, with client-side
/// delays that reverse the order in which workers come back, give identical texts.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn forked_handles_replay_exactly_whatever_the_timing() {
    let _turn = common::model::turn();
    use skilleval::exec::scheduler;
    use std::sync::Mutex;
    use std::time::Duration;

    let items: Vec<usize> = (0..QUESTIONS.len()).collect();
    let run = |delay_of: &(dyn Fn(usize) -> u64 + Sync)| {
        let engine = engine(3, false);
        let handles = scheduler::handles(&engine.handle(), 3).unwrap();
        let texts = Mutex::new(vec![Vec::new(); items.len()]);
        scheduler::run_parallel(
            handles,
            &items,
            |backend, &i| {
                let mut request = request(QUESTIONS[i], 0.8, 0, 10);
                let mut said = Vec::new();
                for round in 0..2 {
                    // Client code between generations, slow or fast by item.
                    thread::sleep(Duration::from_millis(delay_of(i)));
                    request.sampling.seed = (i * 2 + round) as u32;
                    let g = backend.generate(&request).expect("answered");
                    request.prompt = format!(
                        "{}{}<end_of_turn>\n<start_of_turn>user\nAnd then?<end_of_turn>\n<start_of_turn>model\n",
                        request.prompt, g.text
                    );
                    said.push(g.text);
                }
                said
            },
            |i, said| {
                texts.lock().unwrap()[i] = said;
                Ok(())
            },
        )
        .unwrap();
        texts.into_inner().unwrap()
    };
    let first = run(&|i| 5 * i as u64);
    let second = run(&|i| 5 * (QUESTIONS.len() - i) as u64);
    assert!(first.iter().all(|said| said.len() == 2));
    assert_eq!(first, second);
}

/// Each sequence has a KV stream of its own, and a sequence that sits between two generating
/// ones gets a throwaway token in their calls. The throwaway must leave nothing behind: an idle
/// sequence's cache, reused after such calls, gives what a fresh prefill gives.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_cache_between_generating_sequences_is_left_as_it_was() {
    let _turn = common::model::turn();
    let engine = engine(3, true);
    let kept = format!("{}Is it raining?", long_prefix());
    let handle = engine.handle();
    let (mut a, mut b, mut c) = (
        handle.fork().unwrap(),
        handle.fork().unwrap(),
        handle.fork().unwrap(),
    );
    let ask = |q: &str, max_tokens| request(q, 0.0, 0, max_tokens);
    let (colours, held, hello) = (
        ask("Name three colours.", 4),
        ask(&kept, 4),
        ask("Say hello in Spanish.", 4),
    );
    let (count, animals) = (
        ask("Count from one to twenty.", 24),
        ask("Name ten animals.", 24),
    );
    // Lockstep clients asking at once take the sequences in client order, last one first, so
    // the second client's cache sits in the middle. Then the other two generate together while
    // the middle sequence holds its cache.
    thread::scope(|scope| {
        scope.spawn(|| {
            a.generate(&colours).unwrap();
            a.generate(&count).unwrap();
            drop(a);
        });
        scope.spawn(|| {
            b.generate(&held).unwrap();
            drop(b);
        });
        scope.spawn(|| {
            c.generate(&hello).unwrap();
            c.generate(&animals).unwrap();
            drop(c);
        });
    });
    let fillers = engine.stats().filler_tokens;
    assert!(
        fillers > 0,
        "the idle sequence did not sit between the generating ones"
    );
    let follow_up = request(&format!("{kept} And tomorrow?"), 0.0, 0, 8);
    let again = engine.handle().generate(&follow_up).unwrap();
    assert!(
        again.metrics.cached_prompt_tokens >= 512,
        "{:?}",
        again.metrics
    );
    let fresh = common::model::backend().generate(&follow_up).unwrap();
    assert_eq!(again.text, fresh.text);
}
