//! A recording run against a live tool and the replay after it: the options of such a run,
//! the check that the model made a call that was recorded, the live recordings of a tool, and
//! the check that a replay gives the same transcripts from the recordings alone.

use std::path::{Path, PathBuf};

use skilleval::eval::fixture_store::Fixture;
use skilleval::eval::init;
use skilleval::eval::replay::RecordMode;
use skilleval::eval::runner::{RunOptions, RunResult};

use super::options::run_options;

/// One repeat of the prompts that need `tool`, no control arm, recording as `record` says.
pub fn run_of_tool(pack_dir: &Path, output: PathBuf, record: RecordMode, tool: &str) -> RunOptions {
    let mut opts = run_options(pack_dir, &output, 1);
    opts.record = record;
    opts.control = false;
    opts.categories = vec![init::needs_category(tool)];
    opts
}

/// Fails unless the model made a call of `tool` that was recorded live.
pub fn assert_a_call_recorded(result: &RunResult, tool: &str) {
    let calls: Vec<_> = result
        .entries
        .iter()
        .flat_map(|e| e.transcript.calls())
        .filter(|c| c.name == tool)
        .collect();
    assert!(
        calls.iter().any(|c| c.meta.get("recorded").is_some()),
        "the model made no call of {tool} that was recorded: {calls:?}"
    );
}

/// The recordings in `dir`, each one recorded live.
pub fn live_fixtures(dir: &Path) -> Vec<Fixture> {
    let mut fixtures = Vec::new();
    for file in std::fs::read_dir(dir).unwrap().flatten() {
        if file.path().extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let fixture: Fixture =
            serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
        assert!(fixture.recorded_from_live, "{}", file.path().display());
        fixtures.push(fixture);
    }
    fixtures
}

/// Fails unless `replay` gives every reply `recorded` gave, with no call failing to record.
pub fn assert_replay_reproduces(recorded: &RunResult, replay: &RunResult) {
    assert_eq!(recorded.entries.len(), replay.entries.len());
    for (first, again) in recorded.entries.iter().zip(&replay.entries) {
        let replies = |e: &skilleval::eval::record::journal::JournalEntry| {
            e.transcript
                .rounds
                .iter()
                .map(|r| r.raw.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(replies(first), replies(again), "{}", first.sample_id);
        for call in again.transcript.calls() {
            assert!(call.meta.get("record_error").is_none(), "{call:?}");
        }
    }
}
