//! The multi-turn categories against BFCL's own code, which `scripts/setup.sh --bfcl` (and
//! `--tools`) installs; without it these tests fail, saying so.
//!
//! Independent truth: `multi_turn_agreement.jsonl` holds verdicts of BFCL's official evaluator
//! on mutated results (`scripts/bfcl/multi_turn_agreement.py`), and
//! `multi_turn_conversations.jsonl` the messages BFCL's own inference loop sent at every step
//! for scripted replies (`scripts/bfcl/multi_turn_conversations.py`).

mod runner_support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use skilleval::bench::corpus::{default_root, load_category, Entry, MULTI_TURN_CATEGORIES};
use skilleval::bench::multi_turn::{multi_turn_entry, Conduct};
use skilleval::bench::multi_turn_helper::{Decoded, Helper, HelperLaunch};
use skilleval::bench::run::{self, BenchOptions, CategoryEntries};
use skilleval::bench::score::{score_repeats, LineChecker};
use skilleval::bench::{EntryOptions, EntryOutcome, Mode};
use skilleval::harness::backend::Sampling;
use skilleval::harness::template::{render, Family, Message, Role};
use skilleval::harness::toolcall::render::render_call;
use skilleval::harness::toolcall::CallFormat;

use runner_support::scripted_backend::ScriptedBackend;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/bfcl")
        .join(name)
}

fn launch() -> HelperLaunch {
    HelperLaunch::locate().unwrap_or_else(|error| panic!("{error:#}"))
}

fn all_entries() -> HashMap<String, Entry> {
    let root = default_root();
    MULTI_TURN_CATEGORIES
        .iter()
        .flat_map(|c| load_category(&root, c).unwrap())
        .map(|e| (e.id.clone(), e))
        .collect()
}

fn entry(id: &str) -> Entry {
    all_entries().remove(id).expect("entry in corpus")
}

fn json_lines(name: &str) -> Vec<Value> {
    fs::read_to_string(data(name))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Truth: BFCL's evaluator. Every case goes through `bench score`'s checker in one helper,
/// so an entry checked many times must not see an earlier check's state.
#[test]
fn verdicts_and_error_types_match_bfcl() {
    let entries = all_entries();
    let cases = json_lines("multi_turn_agreement.jsonl");
    let mut checker = LineChecker::new();
    let mut mismatches = Vec::new();
    let mut per_category: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut error_types = BTreeSet::new();
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
    assert!(cases.len() >= 500, "only {} cases", cases.len());
    assert_eq!(
        per_category.keys().map(String::as_str).collect::<Vec<_>>(),
        {
            let mut sorted = MULTI_TURN_CATEGORIES.to_vec();
            sorted.sort();
            sorted
        },
        "every multi-turn category has cases"
    );
    for (category, (total, valid)) in &per_category {
        assert!(
            *valid > 0 && valid < total,
            "{category}: {valid} of {total} valid"
        );
    }
    assert!(error_types.len() >= 4, "few error types: {error_types:?}");
    assert!(
        mismatches.is_empty(),
        "{} of {} disagree:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n")
    );
}

/// One entry in prompt mode on a Gemma-templated backend that replays `replies`.
fn prompt_mode(
    entry: &Entry,
    launch: &HelperLaunch,
    replies: Vec<String>,
) -> (EntryOutcome, ScriptedBackend) {
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let results = tempfile::tempdir().unwrap();
    let conduct = Conduct {
        launch,
        mode: Mode::Prompt,
        format: None,
        results: results.path(),
    };
    let outcome = multi_turn_entry(&mut backend, entry, &EntryOptions::default(), &conduct);
    (outcome, backend)
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

/// Truth: BFCL's own loop, run on the same scripted replies. Our loop must send the same
/// messages at every step (compared after the same chat template) and write the same result.
#[test]
fn the_loop_sends_the_messages_bfcls_loop_sends() {
    let conversations = json_lines("multi_turn_conversations.jsonl");
    assert!(
        conversations.len() >= 8,
        "{} conversations",
        conversations.len()
    );
    let launch = launch();
    let mut held_out_turns = 0;
    let mut forced = 0;
    for conversation in &conversations {
        let id = conversation["id"].as_str().unwrap();
        let entry = entry(id);
        let replies: Vec<String> = conversation["replies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_string())
            .collect();
        let (outcome, backend) = prompt_mode(&entry, &launch, replies);
        assert_eq!(outcome.inference_error, None, "{id}");
        assert_eq!(outcome.result, conversation["result"], "{id}: result");
        let steps = conversation["steps"].as_array().unwrap();
        assert_eq!(backend.prompts.len(), steps.len(), "{id}: steps");
        for (step, (ours, bfcl)) in backend.prompts.iter().zip(steps).enumerate() {
            let messages: Vec<Message> = bfcl
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
            let expected = render(Family::Gemma, &messages);
            assert_eq!(ours, &expected, "{id}: step {step}");
        }
        held_out_turns += entry.multi_turn.as_ref().unwrap().held_out.len();
        if outcome.check.error_type.as_deref() == Some("multi_turn:force_terminated") {
            forced += 1;
        }
    }
    assert!(
        held_out_turns > 0,
        "no conversation adds held-out functions"
    );
    assert!(forced > 0, "no conversation reaches the step limit");
}

fn markup(name: &str, args: Value) -> String {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    render_call(CallFormat::Markup, name, &args)
}

/// Truth: BFCL's checker on the result file the run wrote; a run through the harness with
/// the ground truth's calls passes, and its folder re-scores the same.
#[test]
fn harness_mode_runs_turns_through_the_apis_and_its_results_rescore_the_same() {
    let entry = entry("multi_turn_base_0");
    // Turn by turn, the ground truth's calls in the harness's markup, then a closing reply.
    let truth: Vec<Vec<String>> = entry
        .ground_truth
        .as_ref()
        .unwrap()
        .iter()
        .map(|turn| {
            turn.as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    assert_eq!(truth[0][0], "cd(folder='document')");
    let replies = vec![
        format!(
            "{}\n{}\n{}",
            markup("cd", json!({"folder": "document"})),
            markup("mkdir", json!({"dir_name": "temp"})),
            markup(
                "mv",
                json!({"source": "final_report.pdf", "destination": "temp"})
            )
        ),
        "Moved.".to_string(),
        markup("cd", json!({"folder": "temp"})),
        markup(
            "grep",
            json!({"file_name": "final_report.pdf", "pattern": "budget analysis"}),
        ),
        "Found it.".to_string(),
        markup("sort", json!({"file_name": "final_report.pdf"})),
        "Sorted.".to_string(),
        format!(
            "{}\n{}\n{}\n{}",
            markup("cd", json!({"folder": ".."})),
            markup(
                "mv",
                json!({"source": "previous_report.pdf", "destination": "temp"})
            ),
            markup("cd", json!({"folder": "temp"})),
            markup(
                "diff",
                json!({"file_name1": "final_report.pdf", "file_name2": "previous_report.pdf"})
            )
        ),
        "Compared.".to_string(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let options = BenchOptions {
        mode: Mode::Harness,
        call_format: None,
        max_tokens: 256,
        sampling: Sampling::default(),
        seed: 1,
        repeats: 1,
        limit: None,
        ids: Vec::new(),
        output_root: dir.path().to_path_buf(),
        result_model: "scripted".into(),
        progress: false,
        parallel: 1,
        helper: Some(launch()),
    };
    let selected = [CategoryEntries {
        name: entry.category.clone(),
        entries: vec![entry.clone()],
        custom: false,
        prerequisites: Vec::new(),
    }];
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let bench = run::run(&mut backend, &selected, &options).unwrap();
    let outcome = &bench.outcomes[0];
    assert!(
        outcome.check.valid,
        "{:?}\n{}",
        outcome.check, outcome.result
    );
    assert_eq!(backend.remaining(), 0);
    // The tools answered from BFCL's file system: the first cd's result reached the model.
    assert!(
        backend.prompts[1].contains("\"current_working_directory\": \"document\""),
        "{}",
        backend.prompts[1]
    );
    // The result file holds the calls as Python lists, one list per turn.
    assert_eq!(
        outcome.result[0][0],
        json!("[cd(folder='document'), mkdir(dir_name='temp'), mv(source='final_report.pdf', destination='temp')]")
    );
    assert_eq!(outcome.result[0][1], json!("[]"));
    let rescored = score_repeats(&bench.dir, &default_root(), &[]).unwrap();
    assert_eq!(rescored[0][0].category, "multi_turn_base");
    assert_eq!((rescored[0][0].correct, rescored[0][0].total), (1, 1));
}

/// Truth: BFCL's step limit (`MAXIMUM_STEP_LIMIT`, read from bfcl-eval) and its
/// force-terminated verdict; a reply that never stops calling ends the entry.
#[test]
fn a_model_that_never_stops_calling_is_stopped_at_bfcls_step_limit() {
    let entry = entry("multi_turn_base_0");
    let launch = launch();
    let limit = Helper::start(&launch).unwrap().max_steps as usize;
    assert_eq!(limit, 20);
    let (outcome, backend) = prompt_mode(&entry, &launch, vec!["[pwd()]".into(); limit + 5]);
    assert_eq!(backend.prompts.len(), limit + 1);
    assert_eq!(outcome.result.as_array().unwrap().len(), 1);
    assert_eq!(
        outcome.check.error_type.as_deref(),
        Some("multi_turn:force_terminated")
    );
}

/// Truth: BFCL's decoder; the helper reports its three outcomes apart.
#[test]
fn the_helper_decodes_as_bfcl_does() {
    let mut helper = Helper::start(&launch()).unwrap();
    assert_eq!(
        helper
            .decode("```\n[cd(folder='document'), ls(a=True)]\n```")
            .unwrap(),
        Decoded::Calls(vec!["cd(folder='document')".into(), "ls(a=True)".into()])
    );
    assert_eq!(helper.decode("[]").unwrap(), Decoded::Empty);
    assert!(matches!(
        helper.decode("I would list the files.").unwrap(),
        Decoded::Undecodable(_)
    ));
}

/// A missing bfcl-eval is said plainly, naming the set-up command.
#[test]
fn a_missing_bfcl_eval_names_the_set_up_command() {
    let empty = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_skilleval"))
        .args(["bench", "--bfcl", "multi_turn_base", "--limit", "1"])
        .env("SKILLEVAL_CACHE_DIR", empty.path())
        .env_remove("SKILLEVAL_BFCL_PYTHON")
        .env("SKILLEVAL_MODEL", empty.path().join("no-model.gguf"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("scripts/setup.sh --bfcl"), "{stderr}");
    assert!(stderr.lines().count() <= 2, "{stderr}");
}

/// A result BFCL's own evaluator cannot read (a turn that is not a list) stops the scoring, as
/// it stops BFCL's, and the error names the file and the entry.
#[test]
fn a_result_bfcl_cannot_read_is_named_by_file_and_entry() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("BFCL_v4_multi_turn_base_result.json");
    fs::write(
        &file,
        "{\"id\": \"multi_turn_base_3\", \"result\": [[\"[ls()]\"], 5]}\n",
    )
    .unwrap();
    let error = score_repeats(dir.path(), &default_root(), &[]).unwrap_err();
    let message = format!("{error:#}");
    assert!(
        message.contains("BFCL_v4_multi_turn_base_result.json"),
        "{message}"
    );
    assert!(message.contains("multi_turn_base_3"), "{message}");
    assert!(message.contains("TypeError"), "{message}");
}
