//! For the tests of the BFCL categories that run BFCL's own code (multi-turn and memory): its
//! helper, the fixtures its scripts recorded in `tests/data/bfcl`, and the agreement of our
//! checker with the verdicts BFCL's evaluator gave there.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;
use skilleval::bench::corpus::{default_root, load_category, Entry};
use skilleval::bench::multi_turn_helper::HelperLaunch;
use skilleval::bench::score::LineChecker;
use skilleval::harness::template::{render, Family, Message, Role};
use skilleval::harness::toolcall::render::render_call;
use skilleval::harness::toolcall::CallFormat;

/// A file of `tests/data/bfcl`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/bfcl")
        .join(name)
}

/// The JSON lines of a file of `tests/data/bfcl`.
pub fn json_lines(name: &str) -> Vec<Value> {
    std::fs::read_to_string(data(name))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// How to start BFCL's helper; panics saying how to install it when it is missing.
pub fn launch() -> HelperLaunch {
    HelperLaunch::locate().unwrap_or_else(|error| panic!("{error:#}"))
}

/// Every entry of `categories` in the shipped corpus, by id.
pub fn entries(categories: &[&str]) -> HashMap<String, Entry> {
    let root = default_root();
    categories
        .iter()
        .flat_map(|c| load_category(&root, c).unwrap())
        .map(|e| (e.id.clone(), e))
        .collect()
}

/// A call in the harness's markup; `args` is a JSON object.
pub fn markup(name: &str, args: Value) -> String {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    render_call(CallFormat::Markup, name, &args)
}

/// One step of a conversation BFCL's loop recorded (its messages, as `role` and `content`),
/// as the prompt the Gemma template makes of it.
pub fn step_prompt(step: &Value) -> String {
    let messages: Vec<Message> = step
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            Message::new(
                role(m["role"].as_str().unwrap()),
                m["content"].as_str().unwrap(),
            )
        })
        .collect();
    render(Family::Gemma, &messages).expect("Gemma's format renders")
}

fn role(name: &str) -> Role {
    match name {
        "system" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => panic!("role {other}"),
    }
}

/// Our checker against the verdicts BFCL's evaluator recorded in an agreement file.
pub struct Agreement {
    pub cases: usize,
    /// Per category: cases, and how many of them BFCL found valid.
    pub per_category: BTreeMap<String, (usize, usize)>,
    /// The error types BFCL gave.
    pub error_types: BTreeSet<String>,
    /// One line per case where our verdict or error type differs from BFCL's.
    pub mismatches: Vec<String>,
}

/// Checks every case of the agreement file `name` (entries from `categories`) in one checker,
/// so that an entry checked many times must not see an earlier check's state.
pub fn agreement(categories: &[&str], name: &str) -> Agreement {
    let entries = entries(categories);
    let cases = json_lines(name);
    let mut checker = LineChecker::new();
    let mut per_category: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut error_types = BTreeSet::new();
    let mut mismatches = Vec::new();
    for case in &cases {
        let id = case["id"].as_str().unwrap();
        let want_valid = case["valid"].as_bool().unwrap();
        let want_error = case["error_type"].as_str();
        let got = checker.check(&entries[id], &case["result"]).unwrap();
        if got.valid != want_valid || (!want_valid && got.error_type.as_deref() != want_error) {
            mismatches.push(format!(
                "{id} [{}]: BFCL {want_valid}/{want_error:?}, ours {}/{:?}",
                case["label"], got.valid, got.error_type
            ));
        }
        let counts = per_category
            .entry(case["category"].as_str().unwrap().to_string())
            .or_default();
        counts.0 += 1;
        counts.1 += usize::from(want_valid);
        if let Some(kind) = want_error {
            error_types.insert(kind.to_string());
        }
    }
    Agreement {
        cases: cases.len(),
        per_category,
        error_types,
        mismatches,
    }
}
