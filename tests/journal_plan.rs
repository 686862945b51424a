//! A journal is checked against the run it belongs to: `report` and `--resume` refuse a line
//! whose seed is not the plan's for its unit, a sample the corpus does not hold, and two
//! different lines for one unit, each naming the journal's line. The truth here is the plan's
//! own rule for seeds (`exec::seed::sample_seed`), not the check under test: the tests edit a
//! real journal by hand and expect the edit to be caught.

mod common;

use std::path::Path;

use skilleval::eval::record;
use skilleval::eval::record::folder::JOURNAL_FILE;
use skilleval::eval::runner::{self, RunOptions, RunResult};
use skilleval::harness::template::Family;

use common::files::journal_lines;
use common::options::variant_run_options;
use common::scripted::copy_pack;
use common::scripted_backend::ScriptedBackend;

fn options(pack_dir: &Path, output: &Path, seed: u64, repeats: u32) -> RunOptions {
    let mut opts = variant_run_options(pack_dir, output, repeats);
    opts.seed = seed;
    opts.control = false;
    opts
}

fn run(opts: &RunOptions) -> anyhow::Result<RunResult> {
    let units = opts.pack.corpus(None).unwrap().len() * 2 * opts.repeats as usize;
    let replies = vec!["Glad to help.".to_string(); units];
    runner::run(&mut ScriptedBackend::new(Family::Gemma, replies), opts)
}

fn write_lines(dir: &Path, lines: &[String]) {
    std::fs::write(dir.join(JOURNAL_FILE), lines.join("\n") + "\n").unwrap();
}

fn edited(line: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
    edit(&mut value);
    value.to_string()
}

fn load_error(dir: &Path) -> String {
    match record::load(dir) {
        Ok(_) => panic!("the journal was accepted"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn a_line_with_another_seed_is_refused_by_report_naming_its_line() {
    let (_temp, pack) = copy_pack("mini");
    let out = tempfile::tempdir().unwrap();
    let result = run(&options(&pack, out.path(), 0, 1)).unwrap();
    assert!(
        record::load(&result.dir).is_ok(),
        "the run as written loads"
    );
    let mut lines = journal_lines(&result.dir);
    lines[2] = edited(&lines[2], |v| v["seed"] = serde_json::json!(12345));
    write_lines(&result.dir, &lines);
    let error = load_error(&result.dir);
    assert!(error.contains("journal.jsonl:3:"), "{error}");
    assert!(
        error.contains("seed 12345, where the run's plan"),
        "{error}"
    );
}

#[test]
fn a_sample_the_corpus_does_not_hold_is_refused() {
    let (_temp, pack) = copy_pack("mini");
    let out = tempfile::tempdir().unwrap();
    let result = run(&options(&pack, out.path(), 0, 1)).unwrap();
    let mut lines = journal_lines(&result.dir);
    // A foreign sample with the seed the plan would give it: only the corpus can tell.
    let seed = skilleval::exec::seed::sample_seed(0, "foreign-1", 0, "");
    let foreign = edited(&lines[0], |v| {
        v["sample_id"] = serde_json::json!("foreign-1");
        v["category"] = serde_json::json!("made_up");
        v["seed"] = serde_json::json!(seed);
    });
    lines.push(foreign);
    write_lines(&result.dir, &lines);
    let error = load_error(&result.dir);
    assert!(error.contains("\"foreign-1\""), "{error}");
    assert!(
        error.contains("the run's corpus holds no such sample"),
        "{error}"
    );
}

#[test]
fn two_different_lines_of_one_unit_are_refused_and_two_equal_ones_count_once() {
    let (_temp, pack) = copy_pack("mini");
    let out = tempfile::tempdir().unwrap();
    let result = run(&options(&pack, out.path(), 0, 1)).unwrap();
    let lines = journal_lines(&result.dir);

    let mut doubled = lines.clone();
    doubled.push(lines[0].clone());
    write_lines(&result.dir, &doubled);
    let record = record::load(&result.dir).expect("an equal duplicate is harmless");
    assert_eq!(record.entries.len(), lines.len());

    let mut conflicting = lines.clone();
    // (A flipped `passed` alone is refused sooner: it disagrees with the line's failed laws.)
    conflicting.push(edited(&lines[0], |v| {
        v["gapped"] = serde_json::json!(!v["gapped"].as_bool().unwrap())
    }));
    write_lines(&result.dir, &conflicting);
    let error = load_error(&result.dir);
    assert!(
        error.contains(&format!("journal.jsonl:{}:", lines.len() + 1)),
        "{error}"
    );
    assert!(
        error.contains("is also on line 1, and the two lines differ"),
        "{error}"
    );
}

#[test]
fn resume_refuses_a_line_from_a_run_with_another_seed() {
    let (_temp, pack) = copy_pack("mini");
    let out = tempfile::tempdir().unwrap();
    let finished = run(&options(&pack, out.path(), 0, 1)).unwrap();
    let other_out = tempfile::tempdir().unwrap();
    let other = run(&options(&pack, other_out.path(), 5, 2)).unwrap();
    // A unit the first run has not run yet (repeat 1), from the run with --seed 5.
    let pasted = journal_lines(&other.dir)
        .into_iter()
        .find(|l| l.contains("\"repeat\":1"))
        .unwrap();
    let mut lines = journal_lines(&finished.dir);
    lines.push(pasted);
    write_lines(&finished.dir, &lines);

    let mut resume = options(&pack, out.path(), 0, 2);
    resume.resume = Some(finished.run_id.clone());
    let error = match run(&resume) {
        Ok(_) => panic!("the resume was accepted"),
        Err(e) => format!("{e:#}"),
    };
    assert!(error.starts_with("--resume: "), "{error}");
    assert!(error.contains("a line from another run"), "{error}");
}
