//! `run --sequential` on a deterministic model (the mini pack's diligent stations model, no
//! model file): the waves write the journal a fixed run writes, every look goes into the
//! manifest, `report` rebuilds the same summary, a resume after any wave reaches the same
//! decisions, and a budget stops the run between waves. These are change detectors of the
//! runner's bookkeeping; the method's error rate and power are judged in tests/sequential_design.rs.

mod common;

use std::path::Path;
use std::time::Duration;

use regex::Regex;
use skilleval::eval::record;
use skilleval::eval::record::manifest::Manifest;
use skilleval::eval::record::Stop;
use skilleval::eval::run_summary;
use skilleval::eval::runner::Sequential;
use skilleval::eval::runner::{self, RunOptions, RunResult};
use skilleval::eval::spending::Spending;

use common::files::journal_lines;
use common::options::variant_run_options;
use common::scripted::{mini_pack_dir, Stations};

const PLANNED: u32 = 4;

/// The mini pack's corpus and sixteen more small-talk prompts: with its four tool prompts alone no
/// row could ever be called, and the run would settle at the first look.
fn corpus(dir: &Path) -> std::path::PathBuf {
    let mut text = std::fs::read_to_string(mini_pack_dir().join("corpus.jsonl")).unwrap();
    for i in 0..16 {
        text += &format!(
            "{{\"id\": \"chitchat-{i}\", \"category\": \"chitchat\", \"prompt\": \"Small talk {i}: how is your day going?\"}}\n"
        );
    }
    let path = dir.join("corpus.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

fn options(output: &Path, sequential: Option<Sequential>) -> RunOptions {
    let mut opts = variant_run_options(&mini_pack_dir(), output, PLANNED);
    opts.corpus = Some(corpus(output));
    opts.seed = 7;
    opts.sequential = sequential;
    opts
}

fn sequential() -> Option<Sequential> {
    Some(Sequential {
        spending: Spending::DEFAULT,
        budget: None,
    })
}

fn run(opts: &RunOptions) -> RunResult {
    let mut backend = Stations::new(&opts.pack);
    runner::run(&mut backend, opts).expect("the run completes")
}

fn manifest(dir: &Path) -> Manifest {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

/// Journal lines without wall-clock figures.
fn untimed_journal_lines(dir: &Path) -> Vec<String> {
    let secs = Regex::new(r#"("[a-z_]+_secs"):-?[0-9.eE+-]+"#).unwrap();
    journal_lines(dir)
        .iter()
        .map(|l| secs.replace_all(l, "$1:0").into_owned())
        .collect()
}

fn repeat_of(line: &str) -> u32 {
    serde_json::from_str::<serde_json::Value>(line).unwrap()["repeat"]
        .as_u64()
        .unwrap() as u32
}

#[test]
fn a_run_where_nothing_can_change_stops_at_the_second_look_with_the_fixed_runs_journal() {
    let output = tempfile::tempdir().unwrap();
    let looked = run(&options(output.path(), sequential()));
    let record = manifest(&looked.dir)
        .sequential
        .expect("the looks are recorded");
    // One repeat cannot tell a row's noise, so the first look leaves rows open; the second sees
    // every arm answer alike in every repeat and settles them.
    assert_eq!(record.stopped, Some(Stop::Settled), "{record:?}");
    let at: Vec<u32> = record.looks.iter().map(|l| l.repeats).collect();
    assert_eq!(at, vec![1, 2]);
    assert!(!record.looks[0].open_rows.is_empty());
    assert!(record.looks[1].open_rows.is_empty());
    let per_repeat = looked.dir.join("journal.jsonl");
    let lines = untimed_journal_lines(&looked.dir);
    assert_eq!(
        record.looks[1].units,
        lines.len(),
        "{}",
        per_repeat.display()
    );
    assert!(lines.iter().all(|l| repeat_of(l) < 2));

    let fixed = run(&options(output.path(), None));
    let fixed_lines: Vec<String> = untimed_journal_lines(&fixed.dir)
        .into_iter()
        .filter(|l| repeat_of(l) < 2)
        .collect();
    assert_eq!(lines, fixed_lines, "the waves write the fixed run's lines");
    assert_eq!(looked.summary.repeats, 2);
    assert_eq!(looked.summary.sequential.as_ref().unwrap().at, vec![1, 2]);

    // `report` rebuilds the summary the run wrote.
    let rebuilt = run_summary::of_record(&record::load(&looked.dir).unwrap()).unwrap();
    assert_eq!(rebuilt, looked.summary);
    let settings = std::fs::read_to_string(looked.dir.join("report.md")).unwrap();
    assert!(
        settings.contains("sequential: 2 of 4 repeats, every row called or settled"),
        "{settings}"
    );
}

#[test]
fn a_resume_after_the_first_wave_reaches_the_same_looks() {
    let output = tempfile::tempdir().unwrap();
    let whole = run(&options(output.path(), sequential()));
    let looks = manifest(&whole.dir).sequential.unwrap();

    // The same run interrupted after its first wave: its journal cut there.
    let cut = tempfile::tempdir().unwrap();
    let dir = cut.path().join(&whole.run_id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(whole.dir.join("manifest.json"), dir.join("manifest.json")).unwrap();
    let text = std::fs::read_to_string(whole.dir.join("journal.jsonl")).unwrap();
    let first_wave: String = text
        .lines()
        .filter(|l| repeat_of(l) < 1)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("journal.jsonl"), first_wave).unwrap();

    let mut opts = options(cut.path(), sequential());
    opts.resume = Some(whole.run_id.clone());
    let resumed = run(&opts);
    let again = manifest(&resumed.dir).sequential.unwrap();
    assert_eq!(again.looks, looks.looks);
    assert_eq!(again.stopped, looks.stopped);
    assert_eq!(resumed.summary, whole.summary);
}

#[test]
fn a_budget_stops_the_run_between_waves_and_says_so() {
    let output = tempfile::tempdir().unwrap();
    let opts = options(
        output.path(),
        Some(Sequential {
            spending: Spending::DEFAULT,
            budget: Some(Duration::from_nanos(1)),
        }),
    );
    let result = run(&opts);
    let record = manifest(&result.dir).sequential.unwrap();
    assert_eq!(record.stopped, Some(Stop::Budget));
    assert_eq!(record.looks.len(), 1);
    assert!(untimed_journal_lines(&result.dir)
        .iter()
        .all(|l| repeat_of(l) == 0));
    let report = std::fs::read_to_string(result.dir.join("report.md")).unwrap();
    assert!(
        report.contains("sequential: 1 of 4 repeats, the next wave would have passed the budget"),
        "{report}"
    );
}
