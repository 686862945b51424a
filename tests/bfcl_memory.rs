//! The memory categories (`memory_kv`, `memory_rec_sum`) against BFCL's own code, which
//! `scripts/setup.sh --bfcl` (and `--tools`) installs; without it these tests fail, saying so.
//!
//! Independent truth: `memory_agreement.jsonl` holds verdicts of BFCL's official evaluator on
//! many replies (`scripts/bfcl/memory_agreement.py`); `memory_conversations.jsonl` holds the
//! messages BFCL's own loop sent, conversation by conversation, for scripted replies, with the
//! memory it saved (`scripts/bfcl/memory_conversations.py`). The corpus tests check counts and
//! names against BFCL's files as read by hand.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::Path;

use serde_json::{json, Value};
use skilleval::bench::corpus::{
    default_root, load_category, memory_prerequisites, MEMORY_CATEGORIES,
};
use skilleval::bench::run::{self, BenchOptions};
use skilleval::bench::score::score_repeats;
use skilleval::bench::selection::{self, CategoryEntries};
use skilleval::bench::Mode;
use skilleval::harness::template::Family;
use skilleval::harness::toolcall::CallFormat;

use common::bfcl::{agreement, json_lines, launch, markup, step_prompt, Agreement};
use common::options::bench_options;
use common::scripted_backend::ScriptedBackend;

fn options(dir: &Path, mode: Mode) -> BenchOptions {
    BenchOptions {
        call_format: Some(CallFormat::Markup),
        max_tokens: 64,
        helper: Some(launch()),
        ..bench_options(mode, dir)
    }
}

fn select(category: &str, ids: &[String]) -> Vec<CategoryEntries> {
    selection::select(&default_root(), &[category.to_string()], None, None, ids).unwrap()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn result_lines(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Truth: BFCL's evaluator, through `evaluate_task` as `bfcl evaluate` runs it.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn verdicts_and_error_types_match_bfcl() {
    let Agreement {
        cases,
        per_category,
        error_types,
        mismatches,
    } = agreement(&MEMORY_CATEGORIES, "memory_agreement.jsonl");
    assert_eq!(
        per_category.keys().map(String::as_str).collect::<Vec<_>>(),
        MEMORY_CATEGORIES,
        "every memory category has cases"
    );
    for (category, (total, valid)) in &per_category {
        assert!(
            *total >= 155 && *valid > 0 && valid < total,
            "{category}: {valid} of {total} valid"
        );
    }
    assert_eq!(error_types.len(), 3, "{error_types:?}");
    assert!(
        mismatches.is_empty(),
        "{} of {} disagree:\n{}",
        mismatches.len(),
        cases,
        mismatches.join("\n")
    );
}

/// Truth: BFCL's files, read by hand: 155 questions over five scenarios, 37 prerequisite
/// conversations; ids and classes renamed per category as BFCL's `process_memory_test_case`.
#[test]
fn memory_categories_load_as_bfcl_builds_them() {
    let root = default_root();
    for category in MEMORY_CATEGORIES {
        let entries = load_category(&root, category).unwrap();
        assert_eq!(entries.len(), 155, "{category}");
        let first = &entries[0];
        assert_eq!(first.id, format!("{category}_0-customer-0"));
        assert_eq!(first.ground_truth, Some(vec![json!("Michael")]));
        let question = &first.multi_turn.as_ref().unwrap().question;
        let class = format!("MemoryAPI_{}", &category["memory_".len()..]);
        assert_eq!(question["involved_classes"], json!([class]));
        assert_eq!(question["id"], json!(first.id));
        let names: Vec<&str> = first
            .functions
            .iter()
            .filter_map(|f| f["name"].as_str())
            .collect();
        let expected = if category == "memory_kv" {
            "core_memory_add"
        } else {
            "memory_append"
        };
        assert!(names.contains(&expected), "{category}: {names:?}");
        let scenarios: BTreeSet<&str> = entries
            .iter()
            .filter_map(|e| e.multi_turn.as_ref()?.scenario.as_deref())
            .collect();
        assert_eq!(
            scenarios.into_iter().collect::<Vec<_>>(),
            ["customer", "finance", "healthcare", "notetaker", "student"]
        );
        let prerequisites: usize = ["customer", "finance", "healthcare", "notetaker", "student"]
            .iter()
            .map(|s| memory_prerequisites(&root, category, s).unwrap().len())
            .sum();
        assert_eq!(prerequisites, 37, "{category}");
    }
    let chain = memory_prerequisites(&root, "memory_rec_sum", "notetaker").unwrap();
    assert_eq!(chain[0].id, "memory_rec_sum_prereq_32-notetaker-0");
    assert_eq!(chain[0].category, "memory_rec_sum_prereq");
    assert_eq!(chain[0].ground_truth, None);
}

/// A selection brings the prerequisites of exactly the scenarios its questions need, in the
/// order of the questions; an id that is not there is an error naming it.
#[test]
fn a_selection_brings_the_prerequisites_its_scenarios_need() {
    let ids = ["memory_kv_131-notetaker-1", "memory_kv_2-customer-2"].map(String::from);
    let selected = select("memory_kv", &ids);
    assert_eq!(selected.len(), 1);
    let chosen: Vec<&str> = selected[0].entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        chosen,
        ["memory_kv_2-customer-2", "memory_kv_131-notetaker-1"]
    );
    let chains: Vec<(usize, &str)> = selected[0]
        .prerequisites
        .iter()
        .map(|chain| (chain.len(), chain[0].id.as_str()))
        .collect();
    assert_eq!(
        chains,
        [
            (10, "memory_kv_prereq_0-customer-0"),
            (5, "memory_kv_prereq_32-notetaker-0")
        ]
    );
    let limited = selection::select(
        &default_root(),
        &["memory_rec_sum".into()],
        None,
        Some(2),
        &[],
    )
    .unwrap();
    assert_eq!(limited[0].prerequisites.len(), 1, "two customer questions");

    let error = selection::select(
        &default_root(),
        &["memory_kv".into()],
        None,
        None,
        &["memory_kv_999-pirate-0".into()],
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("--ids") && error.contains("memory_kv_999-pirate-0"),
        "{error}"
    );
}

/// A scenario without prerequisite conversations is named by file, line and field.
#[test]
fn an_unknown_scenario_names_file_line_and_field() {
    let root = tempfile::tempdir().unwrap();
    let question = r#"{"id": "memory_0-pirate-0", "question": [[{"role": "user", "content": "Ahoy?"}]], "involved_classes": ["MemoryAPI"], "scenario": "pirate"}"#;
    fs::write(
        root.path().join("BFCL_v4_memory.json"),
        format!("{question}\n"),
    )
    .unwrap();
    fs::create_dir_all(root.path().join("possible_answer")).unwrap();
    fs::write(
        root.path().join("possible_answer/BFCL_v4_memory.json"),
        "{\"id\": \"memory_0-pirate-0\", \"ground_truth\": [\"Ahoy\"]}\n",
    )
    .unwrap();
    fs::create_dir_all(root.path().join("multi_turn_func_doc")).unwrap();
    fs::copy(
        default_root().join("multi_turn_func_doc/memory_kv.json"),
        root.path().join("multi_turn_func_doc/memory_kv.json"),
    )
    .unwrap();
    let error = load_category(root.path(), "memory_kv")
        .unwrap_err()
        .to_string();
    assert!(error.contains("BFCL_v4_memory.json:1:"), "{error}");
    assert!(
        error.contains("\"scenario\"") && error.contains("pirate"),
        "{error}"
    );
}

/// Truth: BFCL's own loop on the same scripted replies. The run sends the same messages at
/// every step of every conversation (prerequisites first, in order, then the questions), saves
/// the same memory, writes the same results, and BFCL's checker passes the two right answers.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn the_memory_loop_sends_and_saves_what_bfcls_loop_does() {
    for fixture in json_lines("memory_conversations.jsonl") {
        let category = fixture["category"].as_str().unwrap();
        let ids = strings(&fixture["ids"]);
        let conversations = fixture["entries"].as_array().unwrap();
        let replies: Vec<String> = conversations
            .iter()
            .flat_map(|c| strings(&c["replies"]))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let selected = select(category, &ids);
        let mut backend = ScriptedBackend::new(Family::Gemma, replies);
        let bench = run::run(&mut backend, &selected, &options(dir.path(), Mode::Prompt)).unwrap();
        assert_eq!(backend.remaining(), 0, "{category}: replies left");

        let expected: Vec<String> = conversations
            .iter()
            .flat_map(|c| c["steps"].as_array().unwrap().iter())
            .map(step_prompt)
            .collect();
        assert_eq!(backend.prompts.len(), expected.len(), "{category}: steps");
        for (step, (ours, bfcl)) in backend.prompts.iter().zip(&expected).enumerate() {
            assert_eq!(ours, bfcl, "{category}: step {step}");
        }

        let folder = bench
            .dir
            .join("result/scripted/agentic/memory")
            .join(&category["memory_".len()..]);
        let results: HashMap<String, Value> = [
            format!("BFCL_v4_{category}_prereq_result.json"),
            format!("BFCL_v4_{category}_result.json"),
        ]
        .iter()
        .flat_map(|name| result_lines(&folder.join(name)))
        .map(|line| {
            (
                line["id"].as_str().unwrap().to_string(),
                line["result"].clone(),
            )
        })
        .collect();
        assert_eq!(results.len(), conversations.len(), "{category}");
        for conversation in conversations {
            let id = conversation["id"].as_str().unwrap();
            assert_eq!(results[id], conversation["result"], "{category}: {id}");
        }
        let snapshot: Value = serde_json::from_str(
            &fs::read_to_string(folder.join("memory_snapshot/notetaker_final.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(snapshot, fixture["snapshot"], "{category}: saved memory");

        let verdicts: Vec<(String, bool)> = bench
            .outcomes
            .iter()
            .map(|o| (o.id.clone(), o.check.valid))
            .collect();
        assert_eq!(
            verdicts,
            ids.iter()
                .map(|id| (id.clone(), !id.contains("_132-")))
                .collect::<Vec<_>>(),
            "{category}"
        );
        let rescored = score_repeats(&bench.dir, &default_root(), &[]).unwrap();
        assert_eq!(rescored[0].len(), 1, "the prerequisites are not scored");
        assert_eq!(
            (rescored[0][0].correct, rescored[0][0].total),
            (2, 3),
            "{category}"
        );
    }
}

/// Harness mode: calls in the harness's markup reach BFCL's memory, a prose reply is the
/// answer the result file keeps, and BFCL's checker passes it.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn harness_mode_writes_memory_and_keeps_the_prose_answer() {
    let id = "memory_kv_130-notetaker-0".to_string();
    let selected = select("memory_kv", std::slice::from_ref(&id));
    let turns: Vec<usize> = selected[0].prerequisites[0]
        .iter()
        .map(|e| e.turns.len())
        .collect();
    assert_eq!(turns, [5, 4, 5, 5, 5]);
    let mut replies = Vec::new();
    for (k, count) in turns.iter().enumerate() {
        for turn in 0..*count {
            if k == 3 && turn == 0 {
                replies.push(markup(
                    "core_memory_add",
                    json!({"key": "daycare", "value": "Drop-off at 08:00 AM"}),
                ));
            }
            replies.push("Noted.".to_string());
        }
    }
    replies.push(markup("core_memory_retrieve", json!({"key": "daycare"})));
    replies.push("It is 08:00 AM.".to_string());
    let dir = tempfile::tempdir().unwrap();
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let bench = run::run(&mut backend, &selected, &options(dir.path(), Mode::Harness)).unwrap();
    assert_eq!(backend.remaining(), 0);
    let outcome = &bench.outcomes[0];
    assert!(
        outcome.check.valid,
        "{:?}\n{}",
        outcome.check, outcome.result
    );
    assert_eq!(
        outcome.result,
        json!([["[core_memory_retrieve(key='daycare')]", "It is 08:00 AM."]])
    );
    // The saved memory reached the question's prompt, and the read call's result the model.
    let last = backend.prompts.last().unwrap();
    assert!(
        last.contains("\"daycare\": \"Drop-off at 08:00 AM\""),
        "{last}"
    );
    assert!(
        last.contains("{\"value\": \"Drop-off at 08:00 AM\"}"),
        "{last}"
    );
}
