//! `run --prompt-log`: every request the run sent, in order, with the reply it got; and forks
//! numbered as separate clients whose own lines keep their order; and on the real model through
//! the batched engine, where every worker is a fork.

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use serde_json::Value;
use skilleval::eval::pack::Pack;
use skilleval::eval::record::journal;
use skilleval::eval::runner::{self, RunOptions};
use skilleval::harness::backend::{
    Backend, BackendInfo, FinishReason, GenMetrics, GenRequest, Generation, PromptLog, Sampling,
};
use skilleval::harness::template::Family;

use common::scripted::{call, lines, mini_pack_dir, reading_of, script};
use common::scripted_backend::ScriptedBackend;

fn log_lines(path: &Path) -> Vec<Value> {
    lines(path)
        .iter()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn a_run_logs_every_prompt_it_sent_with_the_reply_the_journal_holds() {
    let output = tempfile::tempdir().unwrap();
    let mut opts = RunOptions::new(Pack::load(mini_pack_dir().to_str().unwrap()).unwrap());
    opts.output_root = output.path().to_path_buf();
    opts.repeats = 1;
    let samples = opts.pack.corpus(None).unwrap();
    let replies = script(&samples, 1, false, 0, |sample, _| {
        match sample.fields.get("station").and_then(|s| s.as_str()) {
            Some(station) => vec![
                call("station_reading", "station", station),
                format!("The station reports {}.", reading_of(station)),
            ],
            None => vec!["Glad to help.".into()],
        }
    });
    let mut scripted = ScriptedBackend::new(Family::Gemma, replies);
    let log = output.path().join("prompts.jsonl");
    let result = {
        let backend: &mut dyn Backend = &mut scripted;
        let mut logged = PromptLog::create(backend, &log).unwrap();
        let result = runner::run(&mut logged, &opts).expect("the run completes");
        logged.flush().unwrap();
        result
    };

    let logged = log_lines(&log);
    let prompts: Vec<&str> = logged
        .iter()
        .map(|l| l["prompt"].as_str().unwrap())
        .collect();
    assert_eq!(
        prompts, scripted.prompts,
        "the prompts the backend was sent, in order"
    );
    let entries = journal::read(&result.dir.join("journal.jsonl")).unwrap();
    let raw: Vec<&str> = entries
        .iter()
        .flat_map(|e| e.transcript.rounds.iter().map(|r| r.raw.as_str()))
        .collect();
    let replies: Vec<&str> = logged
        .iter()
        .map(|l| l["reply"].as_str().unwrap())
        .collect();
    assert_eq!(
        replies, raw,
        "each line's reply is the round the journal holds"
    );
    let budget = opts.pack.budgets.max_tokens_per_round as u64;
    assert!(logged
        .iter()
        .all(|l| l["client"] == 0 && l["max_tokens"].as_u64() == Some(budget)));
    assert!(logged.iter().all(|l| l["stop"].as_array().is_some()));
}

/// Answers every prompt with the prompt's own text; its forks count how many there are.
struct Echo(Arc<AtomicU32>);

impl Backend for Echo {
    fn family(&self) -> Family {
        Family::Gemma
    }
    fn info(&self) -> BackendInfo {
        BackendInfo::default()
    }
    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        Ok(Generation {
            text: request.prompt.clone(),
            finish: FinishReason::Eos,
            metrics: GenMetrics::default(),
        })
    }
    fn fork(&self) -> Option<Box<dyn Backend + Send>> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Some(Box::new(Echo(Arc::clone(&self.0))))
    }
}

fn request(prompt: &str, seed: u32) -> GenRequest {
    GenRequest {
        prompt: prompt.into(),
        max_tokens: 7,
        stop: vec!["\nUser:".into()],
        grammar: None,
        markers: Vec::new(),
        sampling: Sampling {
            seed,
            ..Sampling::default()
        },
    }
}

#[test]
fn forks_are_numbered_clients_whose_lines_keep_their_order() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("prompts.jsonl");
    let forks = Arc::new(AtomicU32::new(0));
    let mut root: Box<dyn Backend + Send> = Box::new(Echo(Arc::clone(&forks)));
    let logged = PromptLog::create(&mut *root as &mut dyn Backend, &log).unwrap();
    let workers: Vec<_> = (0..3)
        .map(|_| logged.fork().expect("the wrapped backend forks"))
        .collect();
    assert_eq!(forks.load(Ordering::Relaxed), 3);
    let threads: Vec<_> = workers
        .into_iter()
        .enumerate()
        .map(|(k, mut worker)| {
            std::thread::spawn(move || {
                for round in 0..5 {
                    worker
                        .generate(&request(&format!("w{k} r{round}"), round))
                        .unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    drop(logged);

    let lines = log_lines(&log);
    assert_eq!(lines.len(), 15);
    for (k, client) in (1..=3).enumerate() {
        let own: Vec<&Value> = lines.iter().filter(|l| l["client"] == client).collect();
        let prompts: Vec<&str> = own.iter().map(|l| l["prompt"].as_str().unwrap()).collect();
        let expected: Vec<String> = (0..5).map(|r| format!("w{k} r{r}")).collect();
        assert_eq!(
            prompts, expected,
            "client {client}'s lines in the order it sent them"
        );
        assert!(own
            .iter()
            .all(|l| l["reply"] == l["prompt"] && l["max_tokens"] == 7));
        let seeds: Vec<u64> = own.iter().map(|l| l["seed"].as_u64().unwrap()).collect();
        assert_eq!(seeds, vec![0, 1, 2, 3, 4]);
    }
}

/// The default model through the batched engine, two workers: every round the journal holds is
/// in the log once, with the reply the model gave, under one of the two workers' numbers.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_batched_run_on_the_real_model_logs_each_round_under_its_worker() {
    use skilleval::harness::backend::batched::{BatchedEngine, BatchedOptions};
    use skilleval::harness::backend::llama::LlamaOptions;

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = tempfile::tempdir().unwrap();
    let mut opts =
        RunOptions::new(Pack::load(root.join("packs/weather").to_str().unwrap()).unwrap());
    opts.output_root = output.path().to_path_buf();
    opts.limit = Some(2);
    opts.repeats = 1;
    opts.control = false;
    opts.parallel = 2;
    let mut llama = LlamaOptions::new(common::model::model_path());
    llama.n_ctx = 2048;
    let engine = BatchedEngine::start(&BatchedOptions::new(llama, 2)).expect("the engine starts");
    let mut handle = engine.handle();
    let log = output.path().join("prompts.jsonl");
    let result = {
        let backend: &mut dyn Backend = &mut handle;
        let mut logged = PromptLog::create(backend, &log).unwrap();
        let result = runner::run(&mut logged, &opts).expect("the run completes");
        logged.flush().unwrap();
        result
    };

    let logged = log_lines(&log);
    let mut replies: Vec<String> = logged
        .iter()
        .map(|l| l["reply"].as_str().unwrap().to_string())
        .collect();
    let mut rounds: Vec<String> = result
        .entries
        .iter()
        .flat_map(|e| e.transcript.rounds.iter().map(|r| r.raw.clone()))
        .collect();
    replies.sort();
    rounds.sort();
    assert_eq!(replies, rounds, "every round once, with the model's reply");
    assert!(logged.iter().all(|l| l["client"] == 1 || l["client"] == 2));
    let logged_tokens: u64 = logged
        .iter()
        .map(|l| l["generated_tokens"].as_u64().unwrap())
        .sum();
    let generated: u64 = result
        .entries
        .iter()
        .map(|e| e.transcript.metrics.generated_tokens as u64)
        .sum();
    assert_eq!(logged_tokens, generated, "the model's own token counts");
    assert!(logged
        .iter()
        .all(|l| l["prompt"].as_str().unwrap().starts_with("<bos>")));
}
