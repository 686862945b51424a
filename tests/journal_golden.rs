//! A run's journal does not change when the code around it is reorganized: the mini pack on a
//! deterministic model, one unit at a time and many at once, against journals kept in
//! `tests/data/journals/`. Only wall-clock figures (`*_secs`) and the checkout's path are
//! masked. Units that run at once finish in thread order on this model (it has no lockstep), so
//! the parallel journal is compared line for line after sorting.
//!
//! `SKILLEVAL_BLESS=1 cargo test --test journal_golden` rewrites the kept journals; do that only
//! for a change that is meant to alter what a run writes.

mod common;

use std::path::{Path, PathBuf};

use regex::Regex;
use skilleval::eval::runner;

use common::options::variant_run_options;
use common::scripted::{mini_pack_dir, Stations};

/// The journal of a run of the mini pack with its variant, the control arm and two repeats.
fn journal(parallel: usize, output: &Path) -> String {
    let mut opts = variant_run_options(&mini_pack_dir(), output, 2);
    opts.seed = 7;
    opts.parallel = parallel;
    let mut backend = Stations::new(&opts.pack);
    let result = runner::run(&mut backend, &opts).expect("the run completes");
    let text = std::fs::read_to_string(result.dir.join("journal.jsonl")).unwrap();
    // Wall-clock figures differ from run to run, and fixture paths from checkout to checkout.
    let secs = Regex::new(r#"("[a-z_]+_secs"):-?[0-9.eE+-]+"#).unwrap();
    secs.replace_all(&text, "$1:0")
        .replace(env!("CARGO_MANIFEST_DIR"), "<repo>")
}

fn kept(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/journals")
        .join(name)
}

fn assert_kept(name: &str, text: &str) {
    let path = kept(name);
    if std::env::var_os("SKILLEVAL_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; bless it first", path.display()));
    assert!(
        text == expected,
        "{} differs from this run's journal",
        path.display()
    );
}

#[test]
fn the_journal_one_unit_at_a_time_is_byte_identical_to_the_kept_one() {
    let output = tempfile::tempdir().unwrap();
    assert_kept("mini-parallel-1.jsonl", &journal(1, output.path()));
}

#[test]
fn the_journal_of_units_run_at_once_holds_the_kept_lines() {
    let output = tempfile::tempdir().unwrap();
    // 16 is the default `--parallel` on two or more cores.
    let text = journal(16, output.path());
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    assert_kept("mini-parallel-16-sorted.jsonl", &(lines.join("\n") + "\n"));
}
