//! `run --shard I/N` and `skilleval merge`: the mini pack split three ways on a deterministic
//! model and merged gives the summary of the same run in one process byte for byte, and the
//! same journal; merging refuses a missing, duplicated or unfinished shard, a shard of another
//! run and a folder that is no shard, each with one line.

mod common;

use std::path::{Path, PathBuf};

use regex::Regex;
use skilleval::eval::merge::{self, MergeOptions};
use skilleval::eval::runner::{self, RunOptions};
use skilleval::eval::shard::Shard;
use skilleval::harness::backend::{Backend, BackendInfo, GenRequest, Generation};
use skilleval::harness::template::Family;

use common::cli;
use common::options::variant_run_options;
use common::scripted::{mini_pack_dir, StationReplies};

/// The variant's own words: only its arm's prompts hold them.
const VARIANT_WORDS: &str = "nothing else.";

/// A model that asks the station and reports it, except in the variant arm, where it skips the
/// call for Uccle always and for any station when the unit's seed is a multiple of three: the
/// arms differ, and the difference depends on the seeds, which a shard must derive as the whole
/// run does.
#[derive(Clone)]
struct Moody {
    replies: StationReplies,
}

impl Backend for Moody {
    fn family(&self) -> Family {
        Family::Gemma
    }

    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "moody".into(),
            ..Default::default()
        }
    }

    fn generate(&mut self, request: &GenRequest) -> anyhow::Result<Generation> {
        let prompt = &request.prompt;
        let skips = prompt.contains(VARIANT_WORDS)
            && !prompt.contains("station_reading returned:")
            && (prompt.contains("Uccle") || request.sampling.seed.is_multiple_of(3));
        let mut generation = self.replies.generation(request);
        if skips {
            generation.text = "It is mild there, about 15 °C.".into();
        }
        Ok(generation)
    }

    fn fork(&self) -> Option<Box<dyn Backend + Send>> {
        Some(Box::new(self.clone()))
    }
}

fn options(output: &Path, seed: u64, shard: Option<Shard>) -> (RunOptions, Moody) {
    let mut opts = variant_run_options(&mini_pack_dir(), output, 3);
    opts.seed = seed;
    opts.shard = shard;
    let backend = Moody {
        replies: StationReplies::new(&opts.pack),
    };
    (opts, backend)
}

/// Runs the mini pack (or one shard of it) and returns its run folder.
fn run(output: &Path, seed: u64, shard: Option<Shard>) -> PathBuf {
    let (opts, mut backend) = options(output, seed, shard);
    runner::run(&mut backend, &opts)
        .expect("the run completes")
        .dir
}

fn shards(output: &Path, seed: u64) -> Vec<PathBuf> {
    (1..=3)
        .map(|index| run(output, seed, Some(Shard { index, count: 3 })))
        .collect()
}

fn merged(dirs: &[PathBuf], output: &Path) -> anyhow::Result<PathBuf> {
    merge::merge(&MergeOptions {
        dirs: dirs.to_vec(),
        output_root: output.to_path_buf(),
    })
    .map(|result| result.dir)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A journal without its wall-clock figures.
fn masked_journal(dir: &Path) -> String {
    let secs = Regex::new(r#"("[a-z_]+_secs"):-?[0-9.eE+-]+"#).unwrap();
    secs.replace_all(&read(&dir.join("journal.jsonl")), "$1:0")
        .into_owned()
}

/// A report without its settings line, which names the wall time and the merge.
fn report_body(dir: &Path) -> String {
    // A folder's own run id (named where the report says how to stub its gaps) differs when
    // the merge lands in a later second than the whole run.
    let manifest: serde_json::Value =
        serde_json::from_str(&read(&dir.join("manifest.json"))).unwrap();
    let run_id = manifest["run_id"].as_str().unwrap();
    read(&dir.join("report.md"))
        .replace(run_id, "RUN")
        .lines()
        .filter(|line| !line.starts_with("Settings: "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The error of a merge that must fail, checked to be one line.
fn refusal(dirs: &[PathBuf], output: &Path) -> String {
    let error = merged(dirs, output).expect_err("the merge is refused");
    let message = format!("{error:#}");
    assert!(!message.contains('\n'), "one line: {message}");
    message
}

#[test]
fn three_shards_merged_equal_the_run_in_one_process() {
    let temp = tempfile::tempdir().unwrap();
    let whole = run(&temp.path().join("whole"), 7, None);
    let mut parts = shards(&temp.path().join("shards"), 7);
    // Every sample in exactly one shard, with all its arms and repeats: 6 samples × 3 arms × 3.
    let units: Vec<usize> = parts
        .iter()
        .map(|dir| read(&dir.join("journal.jsonl")).lines().count())
        .collect();
    assert_eq!(units, vec![18, 18, 18]);
    let manifest = read(&parts[1].join("manifest.json"));
    assert!(
        manifest.contains("\"shard\": {\n    \"index\": 2,\n    \"count\": 3"),
        "{manifest}"
    );

    parts.rotate_left(1); // Any order will do.
    let merged_dir = merged(&parts, &temp.path().join("merged")).expect("the shards merge");
    for file in ["summary.json", "summary.csv"] {
        assert_eq!(
            read(&merged_dir.join(file)),
            read(&whole.join(file)),
            "{file} of the merged run"
        );
    }
    assert_eq!(masked_journal(&merged_dir), masked_journal(&whole));
    assert_eq!(report_body(&merged_dir), report_body(&whole));
    // The model did treat the arms differently, so the equality above says something.
    let summary: serde_json::Value =
        serde_json::from_str(&read(&whole.join("summary.json"))).unwrap();
    let delta = summary["wording"]["total"]["delta"].as_f64().unwrap();
    assert!(delta < -0.1, "the variant loses: Δ {delta}");
    let merged_manifest = read(&merged_dir.join("manifest.json"));
    assert!(!merged_manifest.contains("\"shard\""), "{merged_manifest}");
    assert!(
        merged_manifest.contains("\"merged_from\""),
        "{merged_manifest}"
    );
}

#[test]
fn merge_refuses_what_is_not_one_whole_run() {
    let temp = tempfile::tempdir().unwrap();
    let parts = shards(&temp.path().join("shards"), 7);
    let out = temp.path().join("merged");

    let missing = refusal(&parts[..2], &out);
    assert!(missing.contains("shard 3/3 missing"), "{missing}");

    let twice = refusal(&[&parts[..], &parts[1..2]].concat(), &out);
    assert!(twice.contains("shard 2/3 given twice"), "{twice}");

    let other_seed = run(
        &temp.path().join("other"),
        8,
        Some(Shard { index: 3, count: 3 }),
    );
    let mixed = refusal(&[parts[0].clone(), parts[1].clone(), other_seed], &out);
    assert!(mixed.contains("not a shard of the same run"), "{mixed}");
    assert!(mixed.contains("run_seed"), "{mixed}");

    let whole = run(&temp.path().join("whole"), 7, None);
    let not_shard = refusal(&[whole], &out);
    assert!(not_shard.contains("not a shard run"), "{not_shard}");

    // A shard cut short: its journal lost its last unit.
    let journal = parts[2].join("journal.jsonl");
    let text = read(&journal);
    let kept: Vec<&str> = text.lines().collect();
    std::fs::write(&journal, kept[..kept.len() - 1].join("\n") + "\n").unwrap();
    let unfinished = refusal(&parts, &out);
    assert!(unfinished.contains("shard 3/3"), "{unfinished}");
    assert!(
        unfinished.contains("1 of its 18 units are missing"),
        "{unfinished}"
    );
    assert!(
        !out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(),
        "a refused merge writes no run folder"
    );

    // A shard whose line came from another run: its seed is not the plan's.
    std::fs::write(&journal, text.clone()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut pasted: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    pasted["seed"] = serde_json::json!(pasted["seed"].as_u64().unwrap() ^ 1);
    lines[0] = pasted.to_string();
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let foreign = refusal(&parts, &out);
    assert!(foreign.contains("a line from another run"), "{foreign}");
}

#[test]
fn a_shard_beyond_the_samples_is_refused_before_the_model_runs() {
    let temp = tempfile::tempdir().unwrap();
    let (opts, _) = options(temp.path(), 7, Some(Shard { index: 7, count: 7 }));
    let error = runner::prepare(&opts).err().expect("refused");
    assert!(
        error
            .to_string()
            .contains("--shard 7/7: the run selects only 6 samples"),
        "{error}"
    );
}

/// The binary's exit code and stderr.
fn skilleval(args: &[&str]) -> (i32, String) {
    let (code, _, stderr) = cli::outcome(&cli::skilleval(args));
    (code, stderr)
}

#[test]
fn the_merge_command_names_a_folder_without_a_manifest() {
    let temp = tempfile::tempdir().unwrap();
    let absent = temp.path().join("absent");
    let (code, stderr) = skilleval(&["merge", absent.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("absent/manifest.json: cannot read"),
        "{stderr}"
    );
}

#[test]
fn a_shard_that_is_not_i_of_n_is_refused_by_the_command() {
    let pack = mini_pack_dir();
    let (code, stderr) = skilleval(&["run", "--pack", pack.to_str().unwrap(), "--shard", "4/3"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("--shard 4/3: I must be from 1 to N"),
        "{stderr}"
    );
}
