//! `skilleval merge`: the shard runs of one run (`run --shard I/N`, one per machine) put back
//! together into one run folder whose journal holds every unit in plan order and whose summary
//! is the one a single process would have written.
//!
//! Refused, with one line naming the folder: a folder that is not a shard run, shards of
//! different runs (manifests that differ in anything but the fields each process fills in for
//! itself), a shard given twice, a shard missing, an unfinished shard, and a journal entry that
//! belongs to another shard.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use serde_json::Value;

use super::arm;
use super::record::folder::{write_json, JOURNAL_FILE, MANIFEST_FILE, PROFILE_FILE};
use super::record::{journal, load, manifest, Journal, JournalEntry, Manifest, RunFolder};
use super::report::files::{settings, write_reports};
use super::run_summary;
use super::shard::Shard;
use super::stats::Summary;
use crate::exec::run_id::{new_run_id, unused_run_id};

pub struct MergeOptions {
    /// The shard run folders, in any order.
    pub dirs: Vec<PathBuf>,
    /// Where the merged run folder goes.
    pub output_root: PathBuf,
}

pub struct MergeResult {
    pub run_id: String,
    pub dir: PathBuf,
    pub summary: Summary,
}

/// Manifest fields each process fills in for itself: they may differ between the shards of one
/// run. The model file's path, the absolute paths of the pack and the corpus, the thread count
/// and a server's URL differ between machines; the model's sha256 (or the model name a server
/// reports) does not.
const PER_PROCESS: [&str; 8] = [
    "run_id",
    "pack_file",
    "corpus_file",
    "started_unix",
    "shard",
    "merged_from",
    "baseline_from",
    "baseline_rejudged",
];
/// A shard holds every arm of its samples, so each pair is drawn on one machine's kernels even
/// when the shards ran on different CPUs.
const PER_PROCESS_BACKEND: [&str; 5] = [
    "load_secs",
    "model_path",
    "threads",
    "endpoint",
    "cpu_features",
];

/// One shard run folder, read and checked on its own.
struct ShardRun {
    dir: PathBuf,
    manifest: Manifest,
    shard: Shard,
}

fn read_shard(dir: &Path) -> anyhow::Result<ShardRun> {
    let path = dir.join(MANIFEST_FILE);
    let manifest = manifest::read(&path)?;
    let shard = manifest.shard.as_ref().map(|s| s.shard()).ok_or_else(|| {
        anyhow!(
            "{}: field `shard`: not a shard run; merge takes the folders of `run --shard I/N`",
            path.display()
        )
    })?;
    Ok(ShardRun {
        dir: dir.to_path_buf(),
        manifest,
        shard,
    })
}

/// The manifest without the fields each process fills in for itself.
fn comparable(manifest: &Manifest) -> anyhow::Result<BTreeMap<String, Value>> {
    let Value::Object(mut fields) = serde_json::to_value(manifest)? else {
        bail!("a manifest is a JSON object");
    };
    for key in PER_PROCESS {
        fields.remove(key);
    }
    if let Some(Value::Object(backend)) = fields.get_mut("backend") {
        for key in PER_PROCESS_BACKEND {
            backend.remove(key);
        }
    }
    Ok(fields.into_iter().collect())
}

/// The fields in which two manifests of the same run may not differ but do.
fn differing_fields(a: &Manifest, b: &Manifest) -> anyhow::Result<Vec<String>> {
    let (a_fields, b_fields) = (comparable(a)?, comparable(b)?);
    let keys: BTreeSet<&String> = a_fields.keys().chain(b_fields.keys()).collect();
    let mut differ: Vec<String> = keys
        .into_iter()
        .filter(|key| a_fields.get(*key) != b_fields.get(*key))
        .cloned()
        .collect();
    let (a_shard, b_shard) = (a.shard.as_ref(), b.shard.as_ref());
    if a_shard.map(|s| s.count) != b_shard.map(|s| s.count) {
        differ.push("shard (the number of shards)".into());
    }
    if a_shard.map(|s| &s.sample_ids) != b_shard.map(|s| &s.sample_ids) {
        differ.push("shard.sample_ids".into());
    }
    Ok(differ)
}

/// Checks that the folders are every shard of one run, each once; returns them in shard order.
fn check_set(mut runs: Vec<ShardRun>) -> anyhow::Result<Vec<ShardRun>> {
    let Some(first) = runs.first() else {
        bail!("merge: name the shard run folders to merge");
    };
    let first_path = first.dir.join(MANIFEST_FILE);
    for run in &runs[1..] {
        let differ = differing_fields(&first.manifest, &run.manifest)?;
        if !differ.is_empty() {
            bail!(
                "{}: not a shard of the same run as {}: differs in {}",
                run.dir.join(MANIFEST_FILE).display(),
                first_path.display(),
                differ.join(", ")
            );
        }
    }
    runs.sort_by_key(|run| run.shard.index);
    for pair in runs.windows(2) {
        if pair[0].shard.index == pair[1].shard.index {
            bail!(
                "shard {} given twice: {} and {}",
                pair[0].shard,
                pair[0].dir.display(),
                pair[1].dir.display()
            );
        }
    }
    let count = runs[0].shard.count;
    let given: Vec<u32> = runs.iter().map(|run| run.shard.index).collect();
    let missing: Vec<String> = (1..=count)
        .filter(|index| !given.contains(index))
        .map(|index| format!("{index}/{count}"))
        .collect();
    if !missing.is_empty() {
        bail!(
            "shard {} missing: merge needs all {count} shards of the run (given: {})",
            missing.join(", "),
            runs.iter()
                .map(|run| format!("{} {}", run.shard, run.dir.display()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(runs)
}

/// Every entry of every shard, checked against the shard that holds it and for completeness,
/// in the plan order of the whole run.
fn gather(runs: &[ShardRun]) -> anyhow::Result<Vec<JournalEntry>> {
    let manifest = &runs[0].manifest;
    let sample_ids = &manifest
        .shard
        .as_ref()
        .expect("checked shard run")
        .sample_ids;
    let position: BTreeMap<&str, usize> = sample_ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let arms = arm::in_plan_order(manifest.control, manifest.variant_count());
    let plan_shape = manifest.plan_shape(None);
    let mut by_key: BTreeMap<(u32, usize, usize), JournalEntry> = BTreeMap::new();
    for run in runs {
        let path = run.dir.join(JOURNAL_FILE);
        let mut held = 0;
        for entry in journal::read(&path)? {
            let Some(&at) = position.get(entry.sample_id.as_str()) else {
                bail!(
                    "{}: sample {:?} is not in the run's selection",
                    path.display(),
                    entry.sample_id
                );
            };
            let owner = Shard::of(at, run.shard.count);
            if owner != run.shard {
                bail!(
                    "{}: sample {:?} belongs to shard {owner}, not {}",
                    path.display(),
                    entry.sample_id,
                    run.shard
                );
            }
            let Some(arm_at) = arms.iter().position(|a| *a == entry.arm) else {
                continue; // An arm this run does not compare (as a single run ignores it).
            };
            if let Some(misfit) =
                plan_shape.misfit(&entry.sample_id, entry.arm, entry.repeat, entry.seed)
            {
                bail!("{}: {misfit}", path.display());
            }
            if entry.repeat >= manifest.repeats {
                continue;
            }
            held += 1;
            by_key.insert((entry.repeat, arm_at, at), entry);
        }
        let samples = (0..sample_ids.len())
            .filter(|&i| run.shard.holds(i))
            .count();
        let planned = samples * arms.len() * manifest.repeats as usize;
        if held < planned {
            bail!(
                "shard {} ({}) is unfinished: {} of its {planned} units are missing; finish it with `run --resume {}` and the same flags",
                run.shard,
                run.dir.display(),
                planned - held,
                run.manifest.run_id
            );
        }
    }
    // The key orders entries as `plan::plan` does: repeat, then arm, then sample.
    Ok(by_key.into_values().collect())
}

/// The longest shard's wall time, from its `profile.json` (0 when it has none): how long the
/// split run took with the shards side by side.
fn longest_wall(runs: &[ShardRun]) -> f64 {
    runs.iter()
        .filter_map(|run| crate::base::input::read_input_to_string(run.dir.join(PROFILE_FILE)).ok())
        .filter_map(|text| serde_json::from_str::<Value>(&text).ok())
        .filter_map(|profile| profile.get("wall_secs").and_then(Value::as_f64))
        .fold(0.0, f64::max)
}

/// Merges the shard run folders into a new run folder under `output_root`.
pub fn merge(opts: &MergeOptions) -> anyhow::Result<MergeResult> {
    let runs = opts
        .dirs
        .iter()
        .map(|dir| read_shard(dir))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let runs = check_set(runs)?;
    let entries = gather(&runs)?;

    let mut manifest = runs[0].manifest.clone();
    manifest.shard = None;
    manifest.merged_from = runs.iter().map(|run| run.manifest.run_id.clone()).collect();
    manifest.started_unix = runs
        .iter()
        .map(|run| run.manifest.started_unix)
        .min()
        .unwrap_or(0);
    let run_id = unused_run_id(&opts.output_root, &new_run_id(&manifest.pack));
    manifest.run_id = run_id.clone();
    let folder = RunFolder::open(&opts.output_root, &run_id, false)?;
    write_json(&folder.file(MANIFEST_FILE), &manifest)?;
    let mut journal = Journal::open(&folder.file(JOURNAL_FILE))?;
    for entry in &entries {
        journal.append(entry)?;
    }
    drop(journal);
    let summary = run_summary::summary(&manifest, &entries)?;
    // The reports as `skilleval report` rebuilds them, with the longest shard's time.
    let record = load::load(&folder.dir)?;
    let settings = settings(&manifest, Some(longest_wall(&runs)))
        + &format!(" · merged from {} shards", runs.len());
    write_reports(&record, &summary, &settings)?;
    super::replay::check_recordings(&entries)
        .map_err(|e| anyhow!("{e} (run folder {})", folder.dir.display()))?;
    Ok(MergeResult {
        run_id,
        dir: folder.dir.clone(),
        summary,
    })
}
