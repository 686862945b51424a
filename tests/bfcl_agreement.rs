//! Our checker against BFCL's official one. `scripts/bfcl/agreement.py` recorded the official
//! verdicts in `tests/data/bfcl/agreement.jsonl` and the answers that even BFCL cannot pass
//! in `ground_truth_exceptions.json`. Java and JavaScript answers, which need their own
//! syntax, are in `agreement.jsonl` for every entry (label `ground_truth`).

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use skilleval::bench::check_types::Language;
use skilleval::bench::checker::check;
use skilleval::bench::corpus::{default_root, load_category, Entry, CATEGORIES};
use skilleval::harness::toolcall::python_list::{render_calls, DecodedCall, PyValue};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/bfcl")
        .join(name)
}

fn all_entries() -> HashMap<String, Entry> {
    let root = default_root();
    CATEGORIES
        .iter()
        .flat_map(|c| load_category(&root, c).unwrap())
        .map(|e| (e.id.clone(), e))
        .collect()
}

#[test]
fn verdicts_and_error_types_match_bfcl() {
    let entries = all_entries();
    let text = fs::read_to_string(data("agreement.jsonl")).unwrap();
    let mut mismatches = Vec::new();
    let mut categories = BTreeSet::new();
    let mut error_types = BTreeSet::new();
    let mut total = 0;
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let id = case["id"].as_str().unwrap();
        let category = case["category"].as_str().unwrap();
        let output = case["output"].as_str().unwrap();
        let want_valid = case["valid"].as_bool().unwrap();
        let want_error = case["error_type"].as_str();
        let entry = &entries[id];
        let truth = entry.ground_truth.as_deref().unwrap_or_default();
        let got = check(category, &entry.functions, output, truth);
        let same =
            got.valid == want_valid && (want_valid || got.error_type.as_deref() == want_error);
        if !same {
            mismatches.push(format!(
                "{id} [{}] {output:?}: BFCL {want_valid}/{want_error:?}, ours {}/{:?} {:?}",
                case["label"], got.valid, got.error_type, got.errors
            ));
        }
        categories.insert(category.to_string());
        if let Some(kind) = want_error {
            error_types.insert(kind.to_string());
        }
        total += 1;
    }
    assert!(total > 1000, "only {total} cases");
    assert_eq!(
        categories.len(),
        CATEGORIES.len(),
        "every category has cases"
    );
    assert!(
        error_types.len() >= 15,
        "few error types covered: {error_types:?}"
    );
    assert!(
        mismatches.is_empty(),
        "{} of {total} disagree:\n{}",
        mismatches.len(),
        mismatches
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The first accepted value of each parameter (and of each key inside dict answers).
fn first_accepted(options: &Value) -> Option<&Value> {
    options.as_array()?.iter().find(|v| v.as_str() != Some(""))
}

fn unwrap_dict(accepted_by_key: &Value) -> Value {
    let Some(map) = accepted_by_key.as_object() else {
        return accepted_by_key.clone();
    };
    let mut out = serde_json::Map::new();
    for (key, options) in map {
        if options.is_array() {
            if let Some(value) = first_accepted(options) {
                out.insert(key.clone(), value.clone());
            }
        } else {
            out.insert(key.clone(), options.clone());
        }
    }
    Value::Object(out)
}

fn answer_as_calls(entry: &Entry) -> Vec<DecodedCall> {
    let truth = entry.ground_truth.as_ref().unwrap();
    truth
        .iter()
        .map(|answer| {
            let (name, accepted) = answer.as_object().unwrap().iter().next().unwrap();
            let schema = entry.functions.iter().find(|f| f["name"] == name.as_str());
            let mut arguments = Vec::new();
            for (param, options) in accepted.as_object().unwrap() {
                let Some(value) = first_accepted(options) else {
                    continue;
                };
                let details = schema.map(|s| &s["parameters"]["properties"][param]);
                let kind = details.and_then(|d| d["type"].as_str());
                let item_kind = details.and_then(|d| d["items"]["type"].as_str());
                let value = match (kind, item_kind, value) {
                    (Some("dict"), _, Value::Object(_)) => unwrap_dict(value),
                    (Some("array"), Some("dict"), Value::Array(items)) => {
                        Value::Array(items.iter().map(unwrap_dict).collect())
                    }
                    _ => value.clone(),
                };
                arguments.push((param.clone(), PyValue::from_json(&value)));
            }
            DecodedCall {
                name: name.clone(),
                arguments,
            }
        })
        .collect()
}

#[test]
fn every_ground_truth_answer_passes_except_known_ones() {
    let exceptions: Vec<Value> =
        serde_json::from_str(&fs::read_to_string(data("ground_truth_exceptions.json")).unwrap())
            .unwrap();
    let known: HashMap<&str, &str> = exceptions
        .iter()
        .map(|e| (e["id"].as_str().unwrap(), e["error_type"].as_str().unwrap()))
        .collect();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for entry in all_entries().values() {
        if entry.ground_truth.is_none()
            || Language::of_category(&entry.category) != Language::Python
        {
            continue;
        }
        let output = render_calls(&answer_as_calls(entry));
        let result = check(
            &entry.category,
            &entry.functions,
            &output,
            entry.ground_truth.as_ref().unwrap(),
        );
        checked += 1;
        match known.get(entry.id.as_str()) {
            None if !result.valid => wrong.push(format!(
                "{}: {:?} {:?}\n  {output}",
                entry.id, result.error_type, result.errors
            )),
            Some(kind) if result.valid || result.error_type.as_deref() != Some(kind) => {
                wrong.push(format!(
                    "{}: BFCL fails it with {kind}, ours {:?}",
                    entry.id, result.error_type
                ))
            }
            _ => {}
        }
    }
    assert!(checked > 2000, "only {checked} answers checked");
    assert!(
        wrong.is_empty(),
        "{} answers:\n{}",
        wrong.len(),
        wrong
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Every Java and JavaScript answer, written in its language, has BFCL's verdict in the fixture
/// (the verdict test above compares ours with it).
#[test]
fn every_java_and_javascript_answer_has_a_verdict() {
    let text = fs::read_to_string(data("agreement.jsonl")).unwrap();
    let mut answered = BTreeSet::new();
    let mut per_category: HashMap<String, usize> = HashMap::new();
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let category = case["category"].as_str().unwrap();
        if Language::of_category(category) == Language::Python {
            continue;
        }
        *per_category.entry(category.to_string()).or_default() += 1;
        if case["label"] == "ground_truth" {
            answered.insert(case["id"].as_str().unwrap().to_string());
        }
    }
    let mut missing = Vec::new();
    for category in ["simple_java", "simple_javascript"] {
        assert!(
            per_category.get(category).copied().unwrap_or(0) > 1000,
            "few {category} cases: {per_category:?}"
        );
        for entry in load_category(&default_root(), category).unwrap() {
            if !answered.contains(&entry.id) {
                missing.push(entry.id);
            }
        }
    }
    assert!(missing.is_empty(), "no ground_truth case for {missing:?}");
}
