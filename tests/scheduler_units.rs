//! The scheduler without a model: every unit runs once and comes back, a failing journal stops
//! new work, and a parallel run of the mini pack judges exactly what a sequential one does.

mod common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use skilleval::eval::pack::Pack;
use skilleval::eval::record::manifest::Manifest;
use skilleval::eval::record::{journal, JournalEntry};
use skilleval::eval::runner;
use skilleval::exec::profile::Profile;
use skilleval::exec::scheduler;
use skilleval::harness::backend::{Backend, BackendInfo, GenRequest, Generation};
use skilleval::harness::template::Family;

use common::options::variant_run_options;
use common::scripted::{lines, mini_pack_dir, StationReplies};
use common::scripted_backend::ScriptedBackend;

/// A model that serves several callers at once and answers from the prompt alone, as a
/// diligent model would: it asks for the station the user named, then repeats the reading.
/// It counts the generations in flight at once, to show that callers overlapped.
#[derive(Clone)]
struct DiligentStations {
    replies: StationReplies,
    in_flight: Arc<AtomicUsize>,
    most_in_flight: Arc<AtomicUsize>,
    generations: Arc<AtomicUsize>,
}

impl DiligentStations {
    fn new(pack: &Pack) -> Self {
        DiligentStations {
            replies: StationReplies::new(pack),
            in_flight: Arc::default(),
            most_in_flight: Arc::default(),
            generations: Arc::default(),
        }
    }
}

impl Backend for DiligentStations {
    fn family(&self) -> Family {
        Family::Gemma
    }

    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "diligent stations".into(),
            ..Default::default()
        }
    }

    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(now, Ordering::SeqCst);
        // Long enough for the other workers to arrive while this one is busy.
        std::thread::sleep(Duration::from_millis(5));
        self.generations.fetch_add(1, Ordering::SeqCst);
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        Ok(self.replies.generation(request))
    }

    fn fork(&self) -> Option<Box<dyn Backend + Send>> {
        Some(Box::new(self.clone()))
    }
}

fn mini_pack() -> Pack {
    Pack::load(mini_pack_dir().to_str().unwrap()).unwrap()
}

#[test]
fn every_item_runs_once_and_comes_back() {
    let backend = DiligentStations::new(&mini_pack());
    let items: Vec<usize> = (0..40).collect();
    let handles = scheduler::handles(&backend, 4).unwrap();
    let mut seen = Vec::new();
    scheduler::run_parallel(
        handles,
        &items,
        |handle, item| {
            let request = GenRequest {
                prompt: format!("item {item}"),
                max_tokens: 8,
                stop: Vec::new(),
                grammar: None,
                markers: Vec::new(),
                sampling: Default::default(),
            };
            handle.generate(&request).unwrap();
            item * 10
        },
        |index, value| {
            seen.push((index, value));
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(seen.len(), items.len(), "one result per item");
    let indices: BTreeSet<usize> = seen.iter().map(|(i, _)| *i).collect();
    assert_eq!(indices.len(), items.len(), "no item twice");
    assert!(seen.iter().all(|(i, v)| *v == items[*i] * 10));
    assert_eq!(backend.generations.load(Ordering::SeqCst), items.len());
    assert!(
        backend.most_in_flight.load(Ordering::SeqCst) > 1,
        "the workers overlapped"
    );
}

#[test]
fn a_failing_consumer_stops_new_work_and_returns_its_error() {
    let backend = DiligentStations::new(&mini_pack());
    let items: Vec<usize> = (0..200).collect();
    let started = AtomicUsize::new(0);
    let mut received = 0;
    let outcome = scheduler::run_parallel(
        scheduler::handles(&backend, 2).unwrap(),
        &items,
        |_, item| {
            started.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(2));
            *item
        },
        |_, _| {
            received += 1;
            if received == 3 {
                bail!("the journal is full");
            }
            Ok(())
        },
    );
    assert_eq!(outcome.unwrap_err().to_string(), "the journal is full");
    let started = started.load(Ordering::SeqCst);
    assert!(
        started < items.len(),
        "{started} items started after the failure"
    );
}

#[test]
fn a_backend_that_serves_one_caller_cannot_be_run_in_parallel() {
    let backend = ScriptedBackend::new(Family::Gemma, Vec::<String>::new());
    let error = scheduler::handles(&backend, 3).err().unwrap().to_string();
    assert!(error.contains("--parallel 1"), "{error}");
}

fn run_mini(parallel: usize, output: &std::path::Path) -> (runner::RunResult, DiligentStations) {
    let mut opts = variant_run_options(&mini_pack_dir(), output, 3);
    opts.parallel = parallel;
    let backend = DiligentStations::new(&opts.pack);
    let mut handle = backend.clone();
    let result = runner::run(&mut handle, &opts).expect("the run completes");
    (result, backend)
}

/// What a unit's judgement and transcript hold, without wall-clock figures.
fn judged(entries: &[JournalEntry]) -> Vec<String> {
    entries
        .iter()
        .map(|e| {
            let rounds: Vec<(&str, &str)> = e
                .transcript
                .rounds
                .iter()
                .map(|r| {
                    (
                        r.raw.as_str(),
                        r.calls.first().map_or("", |c| c.result.as_str()),
                    )
                })
                .collect();
            format!(
                "{:?} {} {:?} {} {:?} {:?} {:?}",
                e.key(),
                e.seed,
                e.judgement,
                e.gapped,
                e.transcript.stop,
                e.transcript.reply,
                rounds
            )
        })
        .collect()
}

#[test]
fn a_parallel_run_judges_what_a_sequential_run_judges() {
    let output = tempfile::tempdir().unwrap();
    let (sequential, _) = run_mini(1, output.path());
    let (parallel, backend) = run_mini(4, output.path());
    assert!(
        backend.most_in_flight.load(Ordering::SeqCst) > 1,
        "units overlapped"
    );
    // Three arms (control, baseline, variant) × three repeats × the samples.
    let units = 3 * 3 * mini_pack().corpus(None).unwrap().len();
    assert_eq!(parallel.entries.len(), units);
    let called = |e: &JournalEntry| e.transcript.rounds.iter().any(|r| !r.calls.is_empty());
    assert!(
        parallel.entries.iter().any(called),
        "the units made tool calls"
    );
    assert!(parallel.entries.iter().any(|e| e.judgement.passed));
    assert_eq!(judged(&parallel.entries), judged(&sequential.entries));
    assert_eq!(parallel.summary, sequential.summary);

    // The journal holds every unit, in the order they finished.
    let journal_path = parallel.dir.join("journal.jsonl");
    assert_eq!(lines(&journal_path).len(), units);
    let mut journaled = judged(&journal::read(&journal_path).unwrap());
    journaled.sort();
    let mut expected = judged(&sequential.entries);
    expected.sort();
    assert_eq!(journaled, expected);

    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(parallel.dir.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest.parallel, 4);
    let profile: Profile =
        serde_json::from_str(&std::fs::read_to_string(parallel.dir.join("profile.json")).unwrap())
            .unwrap();
    assert_eq!((profile.parallel, profile.units), (4, units));
    assert!(profile.generations >= units as u64);
    assert!(profile.wall_secs > 0.0 && profile.samples_per_sec > 0.0);
}
