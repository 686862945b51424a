//! `skilleval score` before any model: what it refuses, in one line, and the reference steps it
//! finds in the shipped packs. No model, server or browser is needed.

mod common;

use std::path::Path;

use skilleval::eval::pack::Pack;
use skilleval::eval::runner::{self, RunOptions};
use skilleval::eval::score::{self, reference::FirstStep};

use common::cli::{outcome, skilleval};
use common::files::copy_dir;

fn score(args: &[&str]) -> (i32, String, String) {
    outcome(&skilleval(&[&["score"], args].concat()))
}

#[test]
fn a_server_that_does_not_answer_is_one_line_naming_its_address() {
    // `score` runs on a server (docs/score.md, "On a server"); one that cannot be reached
    // stops it before the pack is scored.
    let (code, stdout, stderr) = score(&[
        "--pack",
        "weather",
        "--backend",
        "openai",
        "--endpoint",
        "http://127.0.0.1:9",
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("http://127.0.0.1:9"), "{stderr}");
}

#[test]
fn a_margin_outside_zero_to_a_hundred_points_is_refused() {
    let (code, _, stderr) = score(&["--pack", "weather", "--margin", "120"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a margin"), "{stderr}");
}

#[test]
fn a_pack_whose_laws_give_no_reference_is_refused_naming_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/weather");
    let pack_toml = std::fs::read_to_string(src.join("pack.toml")).unwrap();
    // The weather pack with only laws that say nothing of what the first reply should do.
    let mut kept = String::new();
    for block in pack_toml.split("\n[[laws]]") {
        if kept.is_empty() {
            kept.push_str(block);
        } else if block.contains("\nname = \"answers\"") {
            kept.push_str("\n[[laws]]");
            kept.push_str(block);
        }
    }
    let kept = kept
        .replace("\"skills\"", &format!("{:?}", src.join("skills")))
        .replace(
            "\"../../corpora/weather.jsonl\"",
            &format!("{:?}", src.join("../../corpora/weather.jsonl")),
        )
        .replace(
            "\"../../fixtures/weather\"",
            &format!("{:?}", src.join("../../fixtures/weather")),
        );
    std::fs::write(dir.path().join("pack.toml"), kept).unwrap();
    let pack = dir.path().display().to_string();
    let (code, _, stderr) = score(&["--pack", &pack, "--limit", "3"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("no sample has a reference step"),
        "{stderr}"
    );
    assert!(stderr.contains("pack.toml"), "{stderr}");
}

#[test]
fn the_weather_pack_gives_every_sample_a_reference_from_its_laws() {
    // Truth from the corpus itself: a weather question names its place in `location`, which
    // the reference call must pass as written; the other categories make no call.
    let pack = Pack::load(&format!("{}/packs/weather", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut opts = RunOptions::new(pack);
    opts.repeats = 1;
    let out = tempfile::tempdir().unwrap();
    opts.output_root = out.path().to_path_buf();
    let prepared = runner::prepare(&opts).unwrap();
    let references = score::references(&prepared).unwrap();
    assert_eq!(references.len(), prepared.samples.len());
    let mut answers = 0;
    for (index, reference) in &references {
        let sample = &prepared.samples[*index];
        match (&reference.first, sample.fields.get("location")) {
            (FirstStep::Call { arguments, .. }, Some(location)) => {
                assert_eq!(arguments.get("location"), Some(location), "{}", sample.id);
            }
            (FirstStep::NoCall, None) => {
                assert!(
                    ["not_weather", "small_talk"].contains(&sample.category.as_str()),
                    "{}",
                    sample.id
                );
            }
            other => panic!("{}: {other:?}", sample.id),
        }
        answers += usize::from(reference.answer.is_some());
    }
    assert!(answers > 0, "no reference answer at all");
}

#[test]
fn a_sample_s_own_reference_call_wins_and_a_bad_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/timetable");
    copy_dir(&src, dir.path());
    let corpus = dir.path().join("corpus.jsonl");
    let text = std::fs::read_to_string(&corpus).unwrap();
    let first = text.lines().next().unwrap();
    let mut sample: serde_json::Value = serde_json::from_str(first).unwrap();
    sample["reference_call"] = serde_json::json!({"tool": "train_times", "arguments": {"origin": "X", "destination": "Y"}});
    let edited = text.replacen(first, &sample.to_string(), 1);
    std::fs::write(&corpus, &edited).unwrap();
    let pack = Pack::load(&dir.path().display().to_string()).unwrap();
    let mut opts = RunOptions::new(pack);
    opts.repeats = 1;
    opts.output_root = dir.path().join("out");
    let prepared = runner::prepare(&opts).unwrap();
    let references = score::references(&prepared).unwrap();
    let (_, reference) = references
        .iter()
        .find(|(i, _)| prepared.samples[*i].id == sample["id"])
        .unwrap();
    match &reference.first {
        FirstStep::Call { arguments, .. } => assert_eq!(arguments["origin"], "X"),
        other => panic!("{other:?}"),
    }
    assert_eq!(reference.source, "sample");

    sample["reference_call"] = serde_json::json!("train_times");
    std::fs::write(&corpus, text.replacen(first, &sample.to_string(), 1)).unwrap();
    let pack = Pack::load(&dir.path().display().to_string()).unwrap();
    let mut opts = RunOptions::new(pack);
    opts.repeats = 1;
    opts.output_root = dir.path().join("out");
    let prepared = runner::prepare(&opts).unwrap();
    let error = score::references(&prepared).unwrap_err().to_string();
    assert!(error.contains("corpus.jsonl:1"), "{error}");
    assert!(error.contains("reference_call"), "{error}");
}
