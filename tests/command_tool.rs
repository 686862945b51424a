//! A pack's own program as a tool, on the real default model: the timetable pack's
//! `train_times`, a Python script. A recording run starts it once per call it asks and keeps
//! what it answered; a replay answers from those recordings and never starts it.
//!
//! The truth the recordings are checked against is the program itself, run here by hand on
//! each recording's arguments: what it prints and how it exits. Fast tier: `check --record`
//! runs the program in a scratch folder, never in the pack's.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use skilleval::eval::fixture_store::Fixture;
use skilleval::eval::record::journal::JournalEntry;
use skilleval::eval::replay::RecordMode;
use skilleval::eval::runner::{self, RunOptions};

use common::files::copy_dir;
use common::options::run_options;

/// The timetable pack with no recordings, its program wrapped to count its starts.
fn timetable_copy(temp: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/timetable");
    let dir = temp.join("timetable");
    copy_dir(&from, &dir);
    let fixtures = dir.join("fixtures/train_times");
    std::fs::remove_dir_all(&fixtures).unwrap();
    std::fs::create_dir_all(&fixtures).unwrap();
    let pack_file = dir.join("pack.toml");
    let text = std::fs::read_to_string(&pack_file).unwrap();
    let original = "command = [\"python3\", \"tools/train_times.py\"]";
    assert_eq!(text.matches(original).count(), 1);
    std::fs::write(
        &pack_file,
        text.replace(
            original,
            "command = [\"sh\", \"-c\", \"echo start >> \\\"$SKILLEVAL_PACK_DIR/starts.log\\\"; exec python3 \\\"$SKILLEVAL_PACK_DIR/tools/train_times.py\\\"\"]",
        ),
    )
    .unwrap();
    dir
}

fn options(pack_dir: &Path, output: PathBuf, record: RecordMode) -> RunOptions {
    let mut opts = run_options(pack_dir, &output, 1);
    opts.record = record;
    opts.control = false;
    opts.limit = Some(4);
    opts.categories = vec!["needs_train_times".into(), "no_direct_train".into()];
    opts
}

fn starts(pack_dir: &Path) -> usize {
    std::fs::read_to_string(pack_dir.join("starts.log"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// What the program says to these arguments, run by hand: (exit code, stdout, stderr).
fn by_hand(
    pack_dir: &Path,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> (i32, String, String) {
    let mut child = Command::new("python3")
        .arg("tools/train_times.py")
        .current_dir(pack_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            serde_json::Value::Object(arguments.clone())
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn replies(e: &JournalEntry) -> Vec<String> {
    e.transcript.rounds.iter().map(|r| r.raw.clone()).collect()
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_recording_run_keeps_what_the_program_said_and_a_replay_never_starts_it() {
    let _turn = common::model::turn();
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = timetable_copy(temp.path());
    let mut backend = common::model::backend();
    let recorded = runner::run(
        &mut *backend,
        &options(&pack_dir, temp.path().join("recorded"), RecordMode::Gaps),
    )
    .unwrap();
    let live_calls = recorded
        .entries
        .iter()
        .flat_map(|e| e.transcript.calls())
        .filter(|c| c.meta.get("recorded").is_some())
        .count();
    assert!(live_calls > 0, "the model asked the program nothing");
    // One start per live call: a call a recording already answers is not asked again.
    assert_eq!(starts(&pack_dir), live_calls);

    let mut answered = 0;
    let mut refused = 0;
    for file in std::fs::read_dir(pack_dir.join("fixtures/train_times"))
        .unwrap()
        .flatten()
    {
        let fixture: Fixture =
            serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
        assert!(fixture.recorded_from_live);
        assert!(
            fixture
                .recorded_with
                .as_deref()
                .is_some_and(|w| w.starts_with("command: sh -c ") && w.contains("train_times.py")),
            "{:?}",
            fixture.recorded_with
        );
        let (code, stdout, stderr) = by_hand(&pack_dir, &fixture.arguments);
        if code == 0 {
            assert_eq!((fixture.status, fixture.body_text()), (200, stdout));
            answered += 1;
        } else {
            // A non-zero exit is the tool's error answer, its stderr kept as the body.
            assert_eq!(
                (fixture.status, fixture.body_text()),
                (500, stderr.trim().to_string())
            );
            assert_eq!(fixture.note, Some(format!("exit code {code}")));
            refused += 1;
        }
    }
    assert!(answered + refused > 0);

    // The program removed: a replay answers every recorded call from its recording and gives
    // the same transcripts.
    std::fs::remove_dir_all(pack_dir.join("tools")).unwrap();
    let replay = runner::run(
        &mut *backend,
        &options(&pack_dir, temp.path().join("replayed"), RecordMode::Off),
    )
    .unwrap();
    assert_eq!(
        starts(&pack_dir),
        live_calls,
        "the replay started the program"
    );
    assert_eq!(recorded.entries.len(), replay.entries.len());
    for (first, again) in recorded.entries.iter().zip(&replay.entries) {
        assert_eq!(replies(first), replies(again), "{}", first.sample_id);
    }
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn recording_a_pack_with_nothing_live_to_ask_is_refused() {
    let _turn = common::model::turn();
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = timetable_copy(temp.path());
    let pack_file = pack_dir.join("pack.toml");
    let text = std::fs::read_to_string(&pack_file).unwrap();
    let text = text
        .replace("kind = \"command\"", "kind = \"recorded\"")
        .lines()
        .filter(|l| !l.starts_with("command = "))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&pack_file, text).unwrap();
    let mut backend = common::model::backend();
    let Err(error) = runner::run(
        &mut *backend,
        &options(&pack_dir, temp.path().join("out"), RecordMode::Gaps),
    ) else {
        panic!("a recording run of a pack with nothing live to ask went ahead");
    };
    let error = error.to_string();
    assert!(
        error.contains("--record: no tool of pack timetable can be asked live"),
        "{error}"
    );
    assert!(
        !temp.path().join("out").exists(),
        "a run folder was made before the refusal"
    );
}

/// `check --record` asks the program in a folder of its own for every call: what it writes
/// there never lands in the pack nor reaches the next call, and it reads the pack's own files
/// through `SKILLEVAL_PACK_DIR`. Truth: a change (the program used to run in the pack's folder,
/// where its ledger grew by one line a call and no warning was given).
#[test]
fn check_record_runs_the_program_in_a_scratch_folder_never_in_the_pack() {
    let temp = tempfile::tempdir().unwrap();
    let pack_dir = timetable_copy(temp.path());
    std::fs::write(
        pack_dir.join("tools/ledger.sh"),
        "echo call >> ledger; n=$(wc -l < ledger); [ \"$n\" -eq 1 ] || { echo \"state leaked: $n\" >&2; exit 3; }\nexec python3 \"$SKILLEVAL_PACK_DIR/tools/train_times.py\"\n",
    )
    .unwrap();
    let pack_file = pack_dir.join("pack.toml");
    let text = std::fs::read_to_string(&pack_file).unwrap();
    let wrapped = text
        .lines()
        .map(|l| match l.starts_with("command = ") {
            true => "command = [\"sh\", \"tools/ledger.sh\"]",
            false => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&pack_file, wrapped).unwrap();
    let out = common::cli::skilleval(&["check", "--pack", pack_dir.to_str().unwrap(), "--record"]);
    let said = common::cli::both(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        !pack_dir.join("ledger").exists(),
        "the program wrote into the pack: {said}"
    );
    let recorded: Vec<Fixture> = std::fs::read_dir(pack_dir.join("fixtures/train_times"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap())
        .collect();
    assert!(recorded.len() > 3, "{said}");
    for fixture in &recorded {
        assert_eq!(
            (fixture.status, fixture.body_text()),
            {
                let (code, stdout, stderr) = by_hand(&pack_dir, &fixture.arguments);
                match code {
                    0 => (200, stdout),
                    _ => (500, stderr.trim().to_string()),
                }
            },
            "{:?}",
            fixture.arguments
        );
    }
}
