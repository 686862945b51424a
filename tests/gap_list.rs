//! Calls no recording answered: listed per run from the journal (terminal, report.md,
//! report.html), and turned into stubs by `skilleval fixtures`, which answer nothing until
//! filled in. The mini pack, driven by a scripted model that asks for a station the pack has
//! no recording of; the expected list is what that script asks, counted by hand.

mod common;

use std::path::Path;

use common::options::run_options;
use common::scripted::{call, copy_pack, script_for};
use common::scripted_backend::ScriptedBackend;
use skilleval::eval::arm::Arm;
use skilleval::eval::report::gaps::{self, gap_calls};
use skilleval::eval::runner::{self, RunResult};
use skilleval::harness::template::Family;

/// Every lookup sample asks for "Nowhere Obs", which has no recording; the variant arm alone
/// also asks for "Atlantis".
fn run(pack_dir: &Path, output: &Path) -> RunResult {
    let mut opts = run_options(pack_dir, output, 1);
    let samples = opts.pack.corpus(None).unwrap();
    opts.control = false;
    opts.categories = vec!["lookup".into()];
    let lookups: Vec<_> = samples
        .into_iter()
        .filter(|s| s.category == "lookup")
        .collect();
    let replies = script_for(&lookups, 1, false, true, 0, |_, arm| {
        let station = if arm == Arm::Variant(0) {
            "Atlantis"
        } else {
            "Nowhere Obs"
        };
        vec![
            call("station_reading", "station", station),
            "No reading.".into(),
        ]
    });
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    runner::run(&mut backend, &opts).expect("the run completes")
}

#[test]
fn every_unanswered_call_is_listed_with_its_units_and_arms() {
    let (_temp, pack_dir) = copy_pack("mini");
    let out = tempfile::tempdir().unwrap();
    let result = run(&pack_dir, out.path());
    let lookups = result.entries.len() / 2;
    assert!(lookups > 0);
    let listed = gap_calls(&result.entries);
    assert_eq!(listed.len(), 2, "{listed:?}");
    for gap in &listed {
        assert_eq!(gap.units, lookups, "{gap:?}");
        let station = gap.arguments["station"].as_str().unwrap();
        let arm = if station == "Atlantis" {
            "variant"
        } else {
            "baseline"
        };
        assert_eq!(gap.arms.iter().collect::<Vec<_>>(), vec![arm], "{gap:?}");
    }
    let report = std::fs::read_to_string(result.dir.join("report.md")).unwrap();
    assert!(
        report.contains("## Calls no recording answered"),
        "{report}"
    );
    assert!(report.contains(r#"`{"station":"Atlantis"}`"#), "{report}");
    let page = std::fs::read_to_string(result.dir.join("report.html")).unwrap();
    assert!(page.contains("<section id=\"gaps\">") && page.contains("Nowhere Obs"));
    let terminal = gaps::terminal(&listed, &result.dir, 1);
    assert!(
        terminal.contains("… 1 more, all in report.md"),
        "{terminal}"
    );
}

#[test]
fn stubs_are_written_once_and_answer_nothing() {
    let (_temp, pack_dir) = copy_pack("mini");
    let out = tempfile::tempdir().unwrap();
    let first = run(&pack_dir, &out.path().join("first"));
    let binary = env!("CARGO_BIN_EXE_skilleval");
    let fixtures = |run: &RunResult| {
        std::process::Command::new(binary)
            .args([
                "fixtures",
                run.dir.to_str().unwrap(),
                "--pack",
                pack_dir.to_str().unwrap(),
            ])
            .output()
            .unwrap()
    };
    let written = fixtures(&first);
    assert!(written.status.success(), "{written:?}");
    let text = String::from_utf8_lossy(&written.stdout);
    assert!(text.contains("2 stub(s) written"), "{text}");
    let again = fixtures(&first);
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(
        text.contains("0 stub(s) written, 2 call(s) already have a file"),
        "{text}"
    );
    // With the stubs in place the same calls are still gaps.
    let second = run(&pack_dir, &out.path().join("second"));
    assert_eq!(gap_calls(&second.entries).len(), 2);
}

/// The mini pack's lookup samples, run once in the baseline and an A/A arm, every unit replying
/// `replies()`; with the folder that holds the run.
fn lookups_replying(
    replies: impl Fn() -> Vec<String>,
) -> ((tempfile::TempDir, tempfile::TempDir), RunResult) {
    let (pack_temp, pack_dir) = copy_pack("mini");
    let out = tempfile::tempdir().unwrap();
    let mut opts = run_options(&pack_dir, out.path(), 1);
    let samples = opts.pack.corpus(None).unwrap();
    opts.control = false;
    opts.categories = vec!["lookup".into()];
    let lookups: Vec<_> = samples
        .into_iter()
        .filter(|s| s.category == "lookup")
        .collect();
    let script = script_for(&lookups, 1, false, true, 0, |_, _| replies());
    let mut backend = ScriptedBackend::new(Family::Gemma, script);
    let result = runner::run(&mut backend, &opts).unwrap();
    ((pack_temp, out), result)
}

/// A law the script never satisfies is named; one it satisfies for one sample is not.
#[test]
fn a_law_that_held_nowhere_is_warned_about_and_one_that_held_once_is_not() {
    // Every unit asks for Oslo Blindern (right for one sample only) and never gives a reading.
    let (_temp, result) = lookups_replying(|| {
        vec![
            call("station_reading", "station", "Oslo Blindern"),
            "No reading.".into(),
        ]
    });
    let warnings = skilleval::eval::report::pinned::warnings(&result.entries, &mini_law_tools());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("warning: law `reports-the-reading` held in no unit of any arm"),
        "{warnings:?}"
    );
    assert!(
        warnings[0].contains("pins lookup at 0% pass"),
        "{warnings:?}"
    );
    let report = std::fs::read_to_string(result.dir.join("report.md")).unwrap();
    assert!(
        report.contains("law `reports-the-reading` held in no unit"),
        "{report}"
    );
    // The script calls station_reading in every unit and nothing else.
    let uncalled = skilleval::eval::report::pinned::uncalled_tools(
        &result.entries,
        &["station_reading", "forecast"],
    );
    assert_eq!(uncalled, vec!["forecast"]);
    assert!(
        skilleval::eval::report::pinned::uncalled_note(&result.entries, &["station_reading"])
            .is_none()
    );
}

/// A law that held nowhere because the model never called a tool is not blamed on the law.
#[test]
fn a_law_pinned_by_a_model_that_never_calls_says_so_and_does_not_blame_the_law() {
    let (_temp, result) = lookups_replying(|| vec!["It is probably mild there.".into()]);
    let warnings = skilleval::eval::report::pinned::warnings(&result.entries, &mini_law_tools());
    assert!(!warnings.is_empty());
    for warning in &warnings {
        assert!(
            warning.contains("in none of them did the model call a tool"),
            "{warning}"
        );
        assert!(!warning.contains("check the law with"), "{warning}");
    }
}

/// The mini pack run `repeats` times in the baseline and an A/A arm, where only the first unit
/// `calls_here` picks calls `station_reading` (for Oslo Blindern) and every other unit answers
/// without a call; with the folders that hold the run.
fn mini_with_one_call(
    repeats: u32,
    calls_here: impl Fn(&skilleval::eval::corpus::Sample, skilleval::eval::arm::Arm) -> bool,
) -> ((tempfile::TempDir, tempfile::TempDir), RunResult) {
    let (pack_temp, pack_dir) = copy_pack("mini");
    let out = tempfile::tempdir().unwrap();
    let mut opts = run_options(&pack_dir, out.path(), repeats);
    let samples = opts.pack.corpus(None).unwrap();
    opts.control = false;
    let calls_left = std::cell::Cell::new(1);
    let replies = script_for(&samples, repeats, false, true, 0, |sample, arm| {
        if calls_here(sample, arm) && calls_left.get() > 0 {
            calls_left.set(0);
            vec![
                call("station_reading", "station", "Oslo Blindern"),
                "No reading.".into(),
            ]
        } else {
            vec!["I cannot say.".into()]
        }
    });
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let result = runner::run(&mut backend, &opts).unwrap();
    ((pack_temp, out), result)
}

/// A tool the baseline called in one unit of many is named with a pointer to `score`.
#[test]
fn a_tool_the_baseline_rarely_called_points_to_score() {
    let (_temp, result) = mini_with_one_call(2, |_, arm| arm == Arm::Baseline);
    let note =
        skilleval::eval::report::pinned::rare_call_note(&result.entries, &["station_reading"])
            .expect("a note");
    // The mini pack's 6 samples, 2 repeats.
    assert!(note.contains("station_reading in 1 of 12"), "{note}");
    assert!(note.contains("skilleval score"), "{note}");
}

/// A law pinned because the model seldom makes the call it reads names that cause, with the
/// count, before it suspects the law. Truth: the script (one unit of 24 calls the tool); a
/// change (the warning used to send the author to `skilleval check` alone).
#[test]
fn a_law_pinned_by_a_model_that_seldom_calls_names_the_count() {
    let (_temp, result) = mini_with_one_call(3, |sample, _| sample.category == "lookup");
    let warnings = skilleval::eval::report::pinned::warnings(&result.entries, &mini_law_tools());
    let pinned = warnings
        .iter()
        .find(|w| w.contains("law `reports-the-reading`"))
        .unwrap_or_else(|| panic!("{warnings:?}"));
    // reports-the-reading applies to 4 samples × 2 arms × 3 repeats.
    assert!(
        pinned.contains("the model called station_reading in 1 of 24 units"),
        "{pinned}"
    );
    assert!(!pinned.contains("check the law with"), "{pinned}");
}

/// The tool each law of the mini pack reads.
fn mini_law_tools() -> std::collections::BTreeMap<String, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/packs/mini");
    let pack = skilleval::eval::pack::Pack::load(dir.to_str().unwrap()).unwrap();
    skilleval::eval::report::pinned::law_tools(&pack.laws)
}

/// A law pinned because every call to its tool came back an error (here a call no recording
/// answers) says so, rather than blaming the law. Truth: the script (every lookup unit asks
/// for a station with no recording); a change (the warning blamed the law).
#[test]
fn a_law_pinned_by_calls_that_all_failed_says_so() {
    let (_temp, result) = lookups_replying(|| {
        vec![
            call("station_reading", "station", "Nowhere Obs"),
            "No reading.".into(),
        ]
    });
    let warnings = skilleval::eval::report::pinned::warnings(&result.entries, &mini_law_tools());
    let pinned = warnings
        .iter()
        .find(|w| w.contains("law `reports-the-reading`"))
        .unwrap_or_else(|| panic!("{warnings:?}"));
    assert!(
        pinned.contains("every call to station_reading (6 of 6 units) came back an error"),
        "{pinned}"
    );
}
