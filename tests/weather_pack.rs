//! The weather pack as shipped: it loads and validates, its fixtures cover the corpus, and it
//! runs on the real default model, reproducibly.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use skilleval::eval::fixture_store::FixtureStore;
use skilleval::eval::judge;
use skilleval::eval::pack::Pack;
use skilleval::eval::runner::{self, RunOptions};

use common::files::journal_lines;

fn pack() -> Pack {
    Pack::load(&format!("{}/packs/weather", env!("CARGO_MANIFEST_DIR")))
        .expect("the weather pack loads")
}

#[test]
fn the_pack_loads_with_its_corpus_and_both_variants() {
    let pack = pack();
    let samples = pack.corpus(None).unwrap();
    assert!(samples.len() >= 130, "{} prompts", samples.len());
    let used: BTreeSet<&str> = samples.iter().map(|s| s.category.as_str()).collect();
    let declared: BTreeSet<&str> = pack.categories.iter().map(String::as_str).collect();
    assert_eq!(used, declared, "every declared category has samples");
    for s in &samples {
        judge::check_sample(&pack.laws, &s.category, &s.fields).unwrap();
    }
    let variants = Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/weather/variants");
    for name in ["b.md", "c.md"] {
        let trees = runner::skill_trees(&pack, None, &[variants.join(name)]).unwrap();
        let base = &trees.baseline.get("weather").unwrap().body;
        let variant = &trees.first_variant().get("weather").unwrap().body;
        assert_ne!(base, variant, "{name} changes the body");
    }
}

#[test]
fn every_place_the_corpus_asks_for_has_a_recording() {
    let pack = pack();
    let store = Arc::new(FixtureStore::load(pack.routes()).unwrap());
    let mut missing = Vec::new();
    for s in pack.corpus(None).unwrap() {
        let Some(Value::String(location)) = s.fields.get("location") else {
            continue;
        };
        let mut args = Map::new();
        args.insert("location".into(), Value::String(location.clone()));
        if store.lookup("weather_lookup", &args).is_none() {
            missing.push(location.clone());
        }
    }
    assert!(missing.is_empty(), "no fixture for {missing:?}");
}

/// (sample, arm, repeat, each round's text, failed laws): what a run judged, without timings.
type JudgedRow = (String, String, u32, Vec<String>, Vec<String>);

fn judged(result: &runner::RunResult) -> Vec<JudgedRow> {
    let mut rows: Vec<_> = result
        .entries
        .iter()
        .map(|e| {
            let raws = e.transcript.rounds.iter().map(|r| r.raw.clone()).collect();
            (
                e.sample_id.clone(),
                e.arm.name().to_string(),
                e.repeat,
                raws,
                e.judgement.failed.clone(),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn a_short_real_run_is_judged_and_replays_identically() {
    let out = tempfile::tempdir().unwrap();
    let mut opts = RunOptions::new(pack());
    opts.variants = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/weather/variants/b.md")];
    opts.limit = Some(3);
    opts.repeats = 1;
    opts.output_root = out.path().join("first");
    let mut backend = common::model::backend();
    let first = runner::run(&mut *backend, &opts).unwrap();
    // Three arms (control, baseline, variant) × three samples.
    assert_eq!(first.entries.len(), 3 * 3);
    for e in &first.entries {
        assert!(!e.transcript.rounds.is_empty(), "{}: no round", e.sample_id);
        assert!(e.judgement.applied > 0, "{}: no law applied", e.sample_id);
    }
    assert!(first.dir.join("report.md").is_file());
    opts.output_root = out.path().join("second");
    let second = runner::run(&mut *backend, &opts).unwrap();
    assert_eq!(judged(&first), judged(&second));
}

/// The lines of a run's journal for one arm, as written.
fn arm_journal_lines(dir: &Path, arm: &str) -> Vec<String> {
    let mut lines: Vec<String> = journal_lines(dir)
        .into_iter()
        .filter(|l| l.contains(&format!("\"arm\":\"{arm}\"")))
        .collect();
    lines.sort();
    lines
}

/// Journal lines with every time (`*_secs`) and prefix-cache count set to zero.
fn untimed(lines: &[String]) -> Vec<String> {
    fn clear(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if key.ends_with("_secs") || key == "cached_prompt_tokens" {
                        *v = Value::from(0);
                    } else {
                        clear(v);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(clear),
            _ => {}
        }
    }
    let mut out: Vec<String> = lines
        .iter()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            clear(&mut value);
            serde_json::to_string(&value).unwrap()
        })
        .collect();
    out.sort();
    out
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn two_variants_share_a_baseline_and_a_later_run_reuses_it_exactly() {
    let out = tempfile::tempdir().unwrap();
    let variants = Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/weather/variants");
    let (b, c) = (variants.join("b.md"), variants.join("c.md"));
    let mut both = RunOptions::new(pack());
    both.variants = vec![b.clone(), c.clone()];
    both.limit = Some(3);
    both.repeats = 1;
    both.control = false;
    both.output_root = out.path().join("runs");
    let mut backend = common::model::backend();
    let joint = runner::run(&mut *backend, &both).unwrap();
    // Baseline, b and c × three samples, every arm on the same seeds.
    assert_eq!(joint.entries.len(), 3 * 3);
    assert_eq!(joint.summary.more_wordings.len(), 1);

    // c alone, its baseline computed anew in another folder: c's transcripts are the ones it
    // had beside b, and so is the baseline's.
    let mut alone = both.clone();
    alone.variants = vec![c.clone()];
    alone.output_root = out.path().join("alone");
    let c_alone = runner::run(&mut *backend, &alone).unwrap();
    // One arm's rows, without the arm's name (c is `variant2` beside b, `variant` alone).
    let arm_rows = |result: &runner::RunResult, arm: &str| -> Vec<JudgedRow> {
        judged(result)
            .into_iter()
            .filter(|r| r.1 == arm)
            .map(|(sample, _, repeat, raws, failed)| (sample, String::new(), repeat, raws, failed))
            .collect()
    };
    assert_eq!(arm_rows(&c_alone, "variant"), arm_rows(&joint, "variant2"));
    assert_eq!(arm_rows(&c_alone, "baseline"), arm_rows(&joint, "baseline"));

    // c again beside the joint run: its baseline is taken from it, line for line, and is what
    // the recomputed baseline judged.
    let mut again = alone.clone();
    again.output_root = out.path().join("runs");
    again.baseline_source = skilleval::eval::reuse::BaselineSource::Cache;
    let reused = runner::run(&mut *backend, &again).unwrap();
    assert_eq!(reused.baseline_from.as_deref(), Some(joint.run_id.as_str()));
    assert_eq!(
        arm_journal_lines(&reused.dir, "baseline"),
        arm_journal_lines(&joint.dir, "baseline")
    );
    assert_eq!(
        arm_rows(&reused, "baseline"),
        arm_rows(&c_alone, "baseline")
    );
    // Whole entries, the reused against the recomputed: the same bytes but for the clocks and
    // the prefix cache's hits, which depend on what ran before.
    assert_eq!(
        untimed(&arm_journal_lines(&reused.dir, "baseline")),
        untimed(&arm_journal_lines(&c_alone.dir, "baseline"))
    );
    assert_eq!(arm_rows(&reused, "variant"), arm_rows(&c_alone, "variant"));
    // Only c's three units ran.
    assert_eq!(reused.profile.units, 3);
}
