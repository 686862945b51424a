//! The weather pack as shipped: it loads and validates, its fixtures cover the corpus, and it
//! runs on the real default model, reproducibly.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use skilleval::eval::fixtures::FixtureStore;
use skilleval::eval::judge;
use skilleval::eval::pack::Pack;
use skilleval::eval::runner::{self, RunOptions};

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
        let arms = runner::arms(&pack, None, Some(&variants.join(name))).unwrap();
        let base = &arms.baseline.get("weather").unwrap().body;
        let variant = &arms.variant.get("weather").unwrap().body;
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
fn a_short_real_run_is_judged_and_replays_identically() {
    let out = tempfile::tempdir().unwrap();
    let mut opts = RunOptions::new(pack());
    opts.variant = Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("packs/weather/variants/b.md"));
    opts.limit = Some(3);
    opts.repeats = 1;
    opts.output_root = out.path().join("first");
    let mut backend = common::backend();
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
