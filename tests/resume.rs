//! `--resume` on the scripted backend: it refuses a changed experiment and names what changed,
//! leaves the manifest as the run began, drops a journal line torn anywhere (inside a
//! multi-byte character too), and never lets two processes append to one journal.

mod common;

use std::path::{Path, PathBuf};

use skilleval::eval::pack::Pack;
use skilleval::eval::record::{self, journal, RunFolder};
use skilleval::eval::runner::{self, RunOptions, RunResult};
use skilleval::harness::template::Family;

use common::options::variant_run_options;
use common::scripted::{copy_pack, edit, lines};
use common::scripted_backend::ScriptedBackend;

/// A model that never calls a tool: one reply per unit.
fn replies(units: usize) -> Vec<String> {
    vec!["Glad to help. Have a good day!".to_string(); units]
}

fn options(pack_dir: &Path, output: &Path) -> RunOptions {
    variant_run_options(pack_dir, output, 1)
}

fn units(opts: &RunOptions) -> usize {
    opts.pack.corpus(None).unwrap().len() * 3
}

fn run(opts: &RunOptions, replies: Vec<String>) -> anyhow::Result<RunResult> {
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    runner::run(&mut backend, opts)
}

/// A finished run of a copy of the mini pack, and options to resume it.
struct Finished {
    _temp: tempfile::TempDir,
    _output: tempfile::TempDir,
    pack_dir: PathBuf,
    dir: PathBuf,
    resume: RunOptions,
}

fn finished_run() -> Finished {
    let (temp, pack_dir) = copy_pack("mini");
    let output = tempfile::tempdir().unwrap();
    let opts = options(&pack_dir, output.path());
    let result = run(&opts, replies(units(&opts))).expect("the first run");
    let mut resume = opts.clone();
    resume.resume = Some(result.run_id.clone());
    Finished {
        _temp: temp,
        _output: output,
        pack_dir,
        dir: result.dir,
        resume,
    }
}

fn resume_error(opts: &RunOptions) -> String {
    // Reload the pack, as a new process would.
    let mut opts = opts.clone();
    opts.pack = Pack::load(opts.pack.file.to_str().unwrap()).unwrap();
    match run(&opts, Vec::new()) {
        Ok(_) => panic!("the resume was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn resume_refuses_each_changed_input_and_names_it() {
    type Change = fn(&Finished) -> RunOptions;
    let changes: [(&str, Change); 9] = [
        ("pack.toml", |f| {
            edit(
                &f.pack_dir.join("pack.toml"),
                "Answer in one short sentence.",
                "Answer in two sentences.",
            );
            f.resume.clone()
        }),
        ("the skills tree", |f| {
            let refs = f.pack_dir.join("skills/stations/references");
            std::fs::create_dir_all(&refs).unwrap();
            std::fs::write(refs.join("codes.md"), "Station codes.\n").unwrap();
            f.resume.clone()
        }),
        ("the variant", |f| {
            edit(
                &f.pack_dir.join("variant.md"),
                "nothing else",
                "and nothing more",
            );
            f.resume.clone()
        }),
        ("the corpus", |f| {
            edit(
                &f.pack_dir.join("corpus.jsonl"),
                "Uccle station reading, please.",
                "Uccle station reading, thanks.",
            );
            f.resume.clone()
        }),
        ("the fixtures", |f| {
            edit(
                &f.pack_dir.join("fixtures/station_reading/uccle.json"),
                "14 °C",
                "15 °C",
            );
            f.resume.clone()
        }),
        ("parallel", |f| {
            let mut opts = f.resume.clone();
            opts.parallel = 4;
            opts
        }),
        ("sampling", |f| {
            let mut opts = f.resume.clone();
            opts.temperature = Some(0.7);
            opts
        }),
        ("run_seed", |f| {
            let mut opts = f.resume.clone();
            opts.seed = 7;
            opts
        }),
        ("control", |f| {
            let mut opts = f.resume.clone();
            opts.control = false;
            opts
        }),
    ];
    for (name, change) in changes {
        let finished = finished_run();
        let manifest = finished.dir.join("manifest.json");
        let before = std::fs::read(&manifest).unwrap();
        let opts = change(&finished);
        let error = resume_error(&opts);
        assert!(
            error.contains(name) && error.contains("manifest.json"),
            "{name}: {error}"
        );
        assert_eq!(
            std::fs::read(&manifest).unwrap(),
            before,
            "{name}: manifest rewritten"
        );
    }
}

#[test]
fn a_resume_with_the_same_inputs_goes_on_and_keeps_the_manifest() {
    let finished = finished_run();
    let manifest = finished.dir.join("manifest.json");
    let before = std::fs::read(&manifest).unwrap();
    let resumed = run(&finished.resume, Vec::new()).expect("resume");
    assert_eq!(resumed.dir, finished.dir);
    assert_eq!(std::fs::read(&manifest).unwrap(), before);
}

#[test]
fn a_manifest_without_input_hashes_cannot_be_resumed() {
    let finished = finished_run();
    let manifest = finished.dir.join("manifest.json");
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    value.as_object_mut().unwrap().remove("inputs");
    std::fs::write(&manifest, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    let error = resume_error(&finished.resume);
    assert!(error.contains("predates input hashes"), "{error}");

    std::fs::remove_file(&manifest).unwrap();
    let error = resume_error(&finished.resume);
    assert!(error.contains("manifest.json"), "{error}");
}

#[test]
fn a_journal_cut_inside_a_multi_byte_character_resumes() {
    let finished = finished_run();
    let journal_path = finished.dir.join(record::folder::JOURNAL_FILE);
    let all = lines(&journal_path);
    // Keep half of the last entry and the first byte of a two-byte character ("°"), as a kill
    // between two writes of one character would.
    let last = all.last().unwrap().as_bytes();
    let mut bytes = (all[..all.len() - 1].join("\n") + "\n").into_bytes();
    bytes.extend_from_slice(&last[..last.len() / 2]);
    bytes.push("°".as_bytes()[0]);
    std::fs::write(&journal_path, &bytes).unwrap();
    assert!(String::from_utf8(bytes).is_err());

    assert_eq!(journal::read(&journal_path).unwrap().len(), all.len() - 1);
    let resumed = run(&finished.resume, replies(1)).expect("the resume goes on");
    assert_eq!(resumed.entries.len(), all.len());
    assert_eq!(
        lines(&journal_path).len(),
        all.len(),
        "the torn line is gone"
    );
    assert!(std::str::from_utf8(&std::fs::read(&journal_path).unwrap()).is_ok());
}

#[test]
fn a_torn_line_is_dropped_whatever_its_bytes_but_a_bad_middle_line_is_named() {
    let whole = {
        let finished = finished_run();
        std::fs::read_to_string(finished.dir.join(record::folder::JOURNAL_FILE)).unwrap()
    };
    let first = whole.lines().next().unwrap();
    for tail in [
        &b"\xff\xfe"[..],
        b"{\"sample_id\": \"x\"",
        b"\0\0\0\0",
        b"{}\n",
        b"\xe2\x82",
    ] {
        let mut bytes = format!("{first}\n").into_bytes();
        bytes.extend_from_slice(tail);
        let (entries, torn) = journal::parse(&bytes).unwrap();
        assert_eq!(entries.len(), 1, "{tail:?}");
        assert_eq!(torn.map(|t| t.line), Some(2), "{tail:?}");
    }
    let middle = format!("{first}\n\u{fffd}garbage\n{first}\n");
    let error = journal::parse(middle.as_bytes()).unwrap_err();
    assert!(error.starts_with("2: not a journal entry"), "{error}");
}

#[test]
fn a_second_process_in_the_same_run_folder_is_refused() {
    let finished = finished_run();
    let run_id = finished.resume.resume.clone().unwrap();
    let held = RunFolder::open(&finished.resume.output_root, &run_id, true).expect("first lock");
    let error = resume_error(&finished.resume);
    assert!(
        error.contains(&finished.dir.display().to_string())
            && error.contains("another skilleval process"),
        "{error}"
    );
    drop(held);
    run(&finished.resume, Vec::new()).expect("free again once the first one ends");
}

#[test]
fn a_run_id_that_is_not_one_folder_name_is_refused() {
    let finished = finished_run();
    for id in ["../escape", "a/b", "", ".."] {
        let mut opts = finished.resume.clone();
        opts.resume = Some(id.to_string());
        let error = resume_error(&opts);
        assert!(error.contains("letters, digits"), "{id}: {error}");
        let error = runner::prepare(&opts).err().expect("refused").to_string();
        assert!(error.contains("letters, digits"), "{id}: {error}");
    }
}
