//! `skilleval run` from the command line: a bad pack is one error line and exit code 1, before
//! any model loads; and one small run of the mini pack on the real default model.

mod common;

use std::process::{Command, Output};

use skilleval::eval::record::{self, journal};
use skilleval::harness::transcript::StopReason;

use common::cli::skilleval;
use common::scripted::{copy_pack, edit, lines, mini_pack_dir};

fn skilleval_run(args: &[&str]) -> Output {
    skilleval(&[&["run"], args].concat())
}

/// `skilleval run` of the mini pack against its variant, with `args` after.
fn run_mini_variant(args: &[&str]) -> Output {
    let pack = mini_pack_dir();
    let variant = pack.join("variant.md");
    let mut all = vec![
        "--pack",
        pack.to_str().unwrap(),
        "--variant",
        variant.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    skilleval_run(&all)
}

fn assert_one_error_line(out: &Output, names: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    for name in names {
        assert!(lines[0].contains(name), "{name} not in: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_bad_pack_is_one_error_line_naming_the_file() {
    let (_temp, dir) = copy_pack("mini");
    let file = dir.join("pack.toml");
    edit(
        &file,
        "kind = \"tool_not_called\"",
        "kind = \"tool_never_called\"",
    );
    // A model path that does not exist proves the pack is refused before any model loads.
    let out = skilleval_run(&[
        "--pack",
        dir.to_str().unwrap(),
        "--model",
        "/nonexistent/model.gguf",
    ]);
    assert_one_error_line(
        &out,
        &[
            file.to_str().unwrap(),
            "field `laws[2]`",
            "tool_never_called",
        ],
    );

    let absent = dir.join("no-such-pack");
    let out = skilleval_run(&["--pack", absent.to_str().unwrap()]);
    assert_one_error_line(&out, &["no-such-pack", "pack.toml", "cannot read pack"]);
}

#[test]
fn a_bad_corpus_line_is_named_before_the_model_loads() {
    let (_temp, dir) = copy_pack("mini");
    let corpus = dir.join("corpus.jsonl");
    edit(&corpus, "\"id\": \"chitchat-thanks\", ", "");
    let out = skilleval_run(&[
        "--pack",
        dir.to_str().unwrap(),
        "--model",
        "/nonexistent/model.gguf",
    ]);
    let line = lines(&corpus).len();
    assert_one_error_line(
        &out,
        &[&format!("{}:{line}:", corpus.display()), "field `id`"],
    );
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_small_real_run_prints_the_table_and_writes_the_run_folder() {
    let _turn = common::model::turn();
    let model = skilleval::model_path::resolve(None);
    assert!(
        model.is_file(),
        "{} is missing: run scripts/setup.sh first",
        model.display()
    );
    let output = tempfile::tempdir().unwrap();
    let out = run_mini_variant(&[
        "--limit",
        "3",
        "--repeats",
        "1",
        "--output",
        output.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    for column in ["category", "baseline", "variant", "verdict", "total"] {
        assert!(stdout.contains(column), "{column} not in: {stdout}");
    }

    let runs: Vec<_> = std::fs::read_dir(output.path())
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(runs.len(), 1);
    let dir = runs[0].path();
    assert!(stdout.contains(&dir.display().to_string()), "{stdout}");
    for file in ["manifest.json", "summary.json", "summary.csv", "report.md"] {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["samples"], 3);
    // Without --parallel, the batched engine runs with the machine's default.
    assert_eq!(
        manifest["parallel"],
        skilleval::cli::default_parallel() as u64
    );
    assert_eq!(manifest["backend"]["name"], "llama.cpp batched");
    assert_eq!(
        manifest["model_sha256"].as_str().map(str::len),
        Some(64),
        "the model file is fingerprinted"
    );

    let entries = journal::read(&dir.join("journal.jsonl")).unwrap();
    // Three arms (control, baseline, variant) × three samples.
    assert_eq!(entries.len(), 3 * 3);
    for entry in &entries {
        let t = &entry.transcript;
        assert!(!t.rounds.is_empty(), "{}: no round", entry.sample_id);
        assert!(
            !matches!(t.stop, StopReason::Error(_)),
            "{}: {:?}",
            entry.sample_id,
            t.stop
        );
        assert_eq!(t.metrics.rounds as usize, t.rounds.len());
        assert!(t.metrics.generated_tokens > 0, "{}", entry.sample_id);
    }
}

/// The same run twice with the batched engine: every transcript and verdict is the same, so a
/// batched comparison can be replayed (docs/throughput.md).
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_batched_run_replays_exactly() {
    let _turn = common::model::turn();
    let output = tempfile::tempdir().unwrap();
    let mut journals = Vec::new();
    for attempt in ["first", "second"] {
        let folder = output.path().join(attempt);
        let out = run_mini_variant(&[
            "--limit",
            "2",
            "--repeats",
            "2",
            "--parallel",
            "4",
            "--output",
            folder.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = std::fs::read_dir(&folder)
            .unwrap()
            .flatten()
            .next()
            .unwrap();
        let mut units: Vec<_> = journal::read(&dir.path().join("journal.jsonl"))
            .unwrap()
            .into_iter()
            .map(|e| {
                let raw: Vec<String> = e.transcript.rounds.iter().map(|r| r.raw.clone()).collect();
                (e.sample_id, e.arm, e.repeat, raw, e.judgement.passed)
            })
            .collect();
        units.sort_by(|a, b| (&a.0, a.1, a.2).cmp(&(&b.0, b.1, b.2)));
        journals.push(units);
    }
    assert!(journals[0].len() >= 8, "{} units", journals[0].len());
    assert_eq!(journals[0], journals[1]);
}

/// The transcripts and verdicts of a run's units, in key order.
fn units_of(folder: &std::path::Path) -> Vec<(String, String, u32, Vec<String>, bool)> {
    let dir = std::fs::read_dir(folder).unwrap().flatten().next().unwrap();
    let mut units: Vec<_> = journal::read(&dir.path().join("journal.jsonl"))
        .unwrap()
        .into_iter()
        .map(|e| {
            let raw: Vec<String> = e.transcript.rounds.iter().map(|r| r.raw.clone()).collect();
            let arm = format!("{:?}", e.arm);
            (e.sample_id, arm, e.repeat, raw, e.judgement.passed)
        })
        .collect();
    units.sort();
    units
}

/// One unit at a time, a run cut short and resumed writes the transcripts and verdicts of the
/// uninterrupted run (docs/reliability.md promises this only at --parallel 1).
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_run_resumed_one_unit_at_a_time_equals_the_uninterrupted_run() {
    let _turn = common::model::turn();
    let output = tempfile::tempdir().unwrap();
    let whole = output.path().join("whole");
    let cut = output.path().join("cut");
    let ok = |out: Output| {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let run = |folder: &std::path::Path, limit: &str, resume: Option<&str>| {
        let mut args = vec![
            "--limit",
            limit,
            "--repeats",
            "1",
            "--parallel",
            "1",
            "--output",
            folder.to_str().unwrap(),
        ];
        if let Some(id) = resume {
            args.extend(["--resume", id]);
        }
        run_mini_variant(&args)
    };
    ok(run(&whole, "3", None));
    // The cut run holds the first sample only; its resume runs the other two.
    ok(run(&cut, "1", None));
    let id = std::fs::read_dir(&cut).unwrap().flatten().next().unwrap();
    let id = id.file_name().to_string_lossy().to_string();
    let before = units_of(&cut).len();
    ok(run(&cut, "3", Some(&id)));
    let (whole, cut) = (units_of(&whole), units_of(&cut));
    assert!(cut.len() > before, "the resume ran nothing");
    assert_eq!(whole, cut);
}

#[test]
fn an_empty_variant_folder_is_one_error_line() {
    let empty = tempfile::tempdir().unwrap();
    let pack = mini_pack_dir();
    let out = skilleval_run(&[
        "--pack",
        pack.to_str().unwrap(),
        "--variant",
        empty.path().to_str().unwrap(),
    ]);
    assert_one_error_line(&out, &[empty.path().to_str().unwrap(), "no .md file"]);
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_folder_of_variants_runs_each_and_a_second_run_reuses_the_baseline() {
    let _turn = common::model::turn();
    let (_temp, pack) = copy_pack("mini");
    let variants = pack.join("variants");
    std::fs::create_dir(&variants).unwrap();
    std::fs::copy(pack.join("variant.md"), variants.join("a.md")).unwrap();
    std::fs::write(
        variants.join("b.md"),
        "Call station_reading with the station's name, then say its temperature in °C.\n",
    )
    .unwrap();
    let output = tempfile::tempdir().unwrap();
    let args = |variant: &std::path::Path| {
        vec![
            "--pack".to_string(),
            pack.to_str().unwrap().to_string(),
            "--variant".into(),
            variant.to_str().unwrap().to_string(),
            "--limit".into(),
            "2".into(),
            "--repeats".into(),
            "1".into(),
            "--output".into(),
            output.path().to_str().unwrap().to_string(),
        ]
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = skilleval_run(&args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    };
    let first = run(args(&variants));
    assert!(
        first.contains("Wording: a.md (variant) against baseline"),
        "{first}"
    );
    assert!(
        first.contains("Wording: b.md (variant2) against baseline"),
        "{first}"
    );
    assert!(first.contains("Variants side by side"), "{first}");
    assert!(!first.contains("taken from run"), "{first}");
    // b.md alone: its baseline and control come from the first run, two samples of each.
    let second = run(args(&variants.join("b.md")));
    assert!(
        second.contains("4 baseline and control units taken from run "),
        "{second}"
    );
    let mut no_cache = args(&variants.join("b.md"));
    no_cache.push("--no-cache".into());
    assert!(!run(no_cache).contains("taken from run"));
}

/// Ctrl-C mid-run: the run's id was printed when it started, the interrupt says how to go on,
/// and the same command with `--resume` finishes the run (real default model).
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn an_interrupted_run_names_itself_and_resumes() {
    let _turn = common::model::turn();
    use std::io::{BufRead, BufReader, Read};
    let output = tempfile::tempdir().unwrap();
    let pack = mini_pack_dir();
    let args = [
        "run",
        "--pack",
        pack.to_str().unwrap(),
        "--limit",
        "2",
        "--repeats",
        "2",
        "--parallel",
        "1",
        "--output",
        output.path().to_str().unwrap(),
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut started = String::new();
    while stderr.read_line(&mut started).unwrap() > 0 && !started.starts_with("run ") {
        started.clear();
    }
    let run_id = started
        .strip_prefix("run ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no start line: {started:?}"))
        .to_string();
    // Let a unit or two finish, then interrupt as a terminal's Ctrl-C would.
    std::thread::sleep(std::time::Duration::from_secs(4));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(
        rest.contains(&format!(
            "interrupted: run {run_id} keeps every unit it finished"
        )),
        "{rest}"
    );
    assert!(rest.contains(&format!("--resume {run_id}")), "{rest}");

    let mut resumed: Vec<&str> = args.to_vec();
    resumed.extend(["--resume", &run_id]);
    let out = Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(&resumed)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Two samples in control, baseline and the A/A variant, two repeats.
    let journaled = lines(&output.path().join(&run_id).join("journal.jsonl")).len();
    assert_eq!(journaled, 2 * 3 * 2);
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_sequential_run_on_the_real_model_stops_when_no_row_can_be_called() {
    let _turn = common::model::turn();
    // The mini pack's six samples can hardly reach the family's level in any row, so the run
    // settles before its third wave, and the manifest and the report say why.
    let output = tempfile::tempdir().unwrap();
    let out = run_mini_variant(&[
        "--repeats",
        "3",
        "--sequential",
        "--parallel",
        "4",
        "--output",
        output.path().to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("look 1/3"), "{stderr}");
    let dir = std::fs::read_dir(output.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("manifest.json").is_file())
        .expect("a run folder");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["sequential"]["stopped"], "settled", "{manifest}");
    let looks = manifest["sequential"]["looks"].as_array().unwrap();
    assert!(looks.len() < 3, "{manifest}");
    let journal = lines(&dir.join(record::folder::JOURNAL_FILE));
    assert_eq!(
        journal.len() as u64,
        looks.last().unwrap()["units"].as_u64().unwrap()
    );
    assert_eq!(
        journal.len(),
        6 * 3 * looks.len(),
        "whole waves of six samples in three arms"
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let said = format!(
        "sequential: {} of 3 repeats, every row called or settled",
        looks.len()
    );
    assert!(report.contains(&said), "{said} not in the report");
}
