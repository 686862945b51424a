//! `skilleval compare RUN_A RUN_B` on copies of the fixed run folder
//! (`tests/data/runs/report-mini`): a run against itself changes nothing; a run whose variant
//! was mended is better where it was mended; runs that cannot pair up are refused in one line
//! naming what differs.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;

use common::cli;

/// A copy of the fixed run folder at `root/name`, its journal and manifest passed through
/// `edit_entry` and `edit_manifest`. A journal must hold units of its run's plan, so each
/// entry's seed is the plan's for its (possibly renamed) sample, and the copy's manifest names a
/// corpus of the samples its journal holds.
fn run_copy(
    root: &Path,
    name: &str,
    edit_entry: impl Fn(&mut Value),
    edit_manifest: impl Fn(&mut Value),
) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/runs/report-mini");
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(source.join("manifest.json")).unwrap())
            .unwrap();
    manifest["run_id"] = Value::from(name);
    edit_manifest(&mut manifest);
    let run_seed = manifest["run_seed"].as_u64().unwrap();
    let aa = manifest["variant"].is_null();
    let mut samples = std::collections::BTreeMap::new();
    let journal: String = std::fs::read_to_string(source.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|line| {
            let mut entry: Value = serde_json::from_str(line).unwrap();
            edit_entry(&mut entry);
            let id = entry["sample_id"].as_str().unwrap().to_string();
            let salt = if aa && entry["arm"] == "variant" {
                "aa"
            } else {
                ""
            };
            let repeat = entry["repeat"].as_u64().unwrap() as u32;
            entry["seed"] = Value::from(skilleval::exec::seed::sample_seed(
                run_seed, &id, repeat, salt,
            ));
            samples.insert(id, entry["category"].clone());
            serde_json::to_string(&entry).unwrap() + "\n"
        })
        .collect();
    std::fs::write(dir.join("journal.jsonl"), journal).unwrap();
    let corpus: String = samples
        .iter()
        .map(|(id, category)| {
            serde_json::json!({"id": id, "category": category, "prompt": format!("prompt of {id}")})
                .to_string()
                + "\n"
        })
        .collect();
    let corpus_path = dir.join("corpus.jsonl");
    std::fs::write(&corpus_path, &corpus).unwrap();
    manifest["corpus"] = Value::from(corpus_path.display().to_string());
    manifest["corpus_sha256"] = Value::from(skilleval::eval::digest::sha256_hex(corpus.as_bytes()));
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    dir
}

fn compare(args: &[&Path], extra: &[&str]) -> (i32, String, String) {
    let out = cli::command()
        .arg("compare")
        .args(args)
        .args(extra)
        .output()
        .expect("the binary runs");
    cli::outcome(&out)
}

fn keep(_: &mut Value) {}

#[test]
fn a_run_against_itself_changes_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let a = run_copy(temp.path(), "a", keep, keep);
    let b = run_copy(temp.path(), "b", keep, keep);
    let (code, stdout, stderr) = compare(&[&a, &b], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with(
            "B = b against A = a: the variant arm of each, paired by sample and repeat\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("measures run-to-run noise"), "{stdout}");
    assert!(stdout.contains("No category or law changed"), "{stdout}");
    assert!(
        stdout.contains("A variant") && stdout.contains("B variant"),
        "{stdout}"
    );
}

#[test]
fn a_mended_variant_is_better_where_it_was_mended() {
    let temp = tempfile::tempdir().unwrap();
    let a = run_copy(temp.path(), "a", keep, keep);
    // B: another model, under which the variant reports the reading in lookup.
    let b = run_copy(
        temp.path(),
        "b",
        |entry| {
            if entry["arm"] == "variant"
                && entry["category"] == "lookup"
                && !entry["gapped"].as_bool().unwrap()
            {
                entry["judgement"]["passed"] = Value::Bool(true);
                entry["judgement"]["failed"] = Value::Array(vec![]);
            }
        },
        |manifest| manifest["model_sha256"] = Value::from("0123"),
    );
    let (code, stdout, stderr) = compare(&[&a, &b], &["--json"]);
    assert_eq!(code, 0, "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["arm"], "variant");
    assert_eq!(result["differences"], serde_json::json!(["model_sha256"]));
    let lookup = &result["comparison"]["categories"][1];
    assert_eq!(lookup["name"], "lookup");
    assert_eq!(lookup["verdict"], "better");
    assert!(lookup["delta"].as_f64().unwrap() > 0.8, "{lookup}");
    // The baseline arm was the same in both runs.
    let (_, stdout, _) = compare(&[&a, &b], &["--arm", "baseline"]);
    assert!(stdout.contains("the baseline arm of each"), "{stdout}");
    assert!(stdout.contains("No category or law changed"), "{stdout}");
}

/// One line on stderr, exit code 1, naming `what`.
fn assert_refused(stderr: &str, code: i32, what: &str) {
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains(what),
        "{stderr}"
    );
}

#[test]
fn runs_that_cannot_pair_up_are_refused_in_one_line() {
    let temp = tempfile::tempdir().unwrap();
    let a = run_copy(temp.path(), "a", keep, keep);
    let other_pack = run_copy(temp.path(), "other", keep, |m| {
        m["pack"] = Value::from("weather")
    });
    let (code, _, stderr) = compare(&[&a, &other_pack], &[]);
    assert_refused(&stderr, code, "different packs (`mini` and `weather`)");

    let renamed = run_copy(
        temp.path(),
        "renamed",
        |entry| {
            let id = format!("new-{}", entry["sample_id"].as_str().unwrap());
            entry["sample_id"] = Value::from(id);
        },
        keep,
    );
    let (code, _, stderr) = compare(&[&a, &renamed], &[]);
    assert_refused(
        &stderr,
        code,
        "no (sample, repeat) of the variant arm in common",
    );

    let aa = run_copy(temp.path(), "aa", keep, |m| m["variant"] = Value::Null);
    let (code, _, stderr) = compare(&[&a, &aa], &["--arm", "variant"]);
    assert_refused(&stderr, code, "aa is an A/A run");
    // Without --arm, the baseline is compared.
    let (code, stdout, stderr) = compare(&[&a, &aa], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("the baseline arm of each"), "{stdout}");

    let missing = temp.path().join("nowhere");
    let (code, _, stderr) = compare(&[&a, &missing], &[]);
    assert_refused(&stderr, code, "no run folder");
}

#[test]
fn runs_without_a_partner_are_left_out_and_counted() {
    let temp = tempfile::tempdir().unwrap();
    let a = run_copy(temp.path(), "a", keep, keep);
    // B ran one repeat, and its chitchat samples under other ids.
    let b = run_copy(
        temp.path(),
        "b",
        |entry| {
            if entry["repeat"] == 1 {
                entry["repeat"] = Value::from(0);
                entry["sample_id"] = Value::from("dropped");
                return;
            }
            if entry["category"] == "chitchat" {
                entry["category"] = Value::from("small_talk");
                let id = format!("talk-{}", entry["sample_id"].as_str().unwrap());
                entry["sample_id"] = Value::from(id);
            }
        },
        keep,
    );
    std::fs::write(
        b.join("journal.jsonl"),
        std::fs::read_to_string(b.join("journal.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| !l.contains("\"sample_id\":\"dropped\""))
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let (code, stdout, stderr) = compare(&[&a, &b], &["--json"]);
    assert_eq!(code, 0, "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    // A: 20 samples × 2 repeats, 16 of them paired; B: 20 of repeat 0, 4 unpaired.
    assert_eq!(result["left_out"], serde_json::json!([24, 4]));
    assert_eq!(
        result["categories_in_one_run"],
        serde_json::json!(["chitchat", "small_talk"])
    );
    let names: Vec<&str> = result["comparison"]["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lookup", "messy_name"]);
}
