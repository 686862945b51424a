//! The multi-turn categories against BFCL's own code, which `scripts/setup.sh --bfcl` (and
//! `--tools`) installs; without it these tests fail, saying so.
//!
//! Independent truth: `multi_turn_agreement.jsonl` holds verdicts of BFCL's official evaluator
//! on mutated results (`scripts/bfcl/multi_turn_agreement.py`), and
//! `multi_turn_conversations.jsonl` the messages BFCL's own inference loop sent at every step
//! for scripted replies (`scripts/bfcl/multi_turn_conversations.py`).

mod common;

use std::fs;

use serde_json::json;
use skilleval::bench::corpus::{default_root, Entry, MULTI_TURN_CATEGORIES};
use skilleval::bench::multi_turn::{multi_turn_entry, Conduct};
use skilleval::bench::multi_turn_helper::{Decoded, Helper, HelperLaunch};
use skilleval::bench::run::{self, BenchOptions};
use skilleval::bench::score::score_repeats;
use skilleval::bench::selection::CategoryEntries;
use skilleval::bench::{EntryOptions, EntryOutcome, Mode};
use skilleval::harness::template::Family;

use common::bfcl::{agreement, entries, json_lines, launch, markup, step_prompt, Agreement};
use common::options::bench_options;
use common::scripted_backend::ScriptedBackend;

fn entry(id: &str) -> Entry {
    entries(&MULTI_TURN_CATEGORIES)
        .remove(id)
        .expect("entry in corpus")
}

/// Truth: BFCL's evaluator. Every case goes through `bench score`'s checker in one helper,
/// so an entry checked many times must not see an earlier check's state.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn verdicts_and_error_types_match_bfcl() {
    let Agreement {
        cases,
        per_category,
        error_types,
        mismatches,
    } = agreement(&MULTI_TURN_CATEGORIES, "multi_turn_agreement.jsonl");
    assert!(cases >= 500, "only {cases} cases");
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
        cases,
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

/// Truth: BFCL's own loop, run on the same scripted replies. Our loop must send the same
/// messages at every step (compared after the same chat template) and write the same result.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
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
            assert_eq!(ours, &step_prompt(bfcl), "{id}: step {step}");
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

/// Truth: BFCL's checker on the result file the run wrote; a run through the harness with
/// the ground truth's calls passes, and its folder re-scores the same.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
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
        helper: Some(launch()),
        ..bench_options(Mode::Harness, dir.path())
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
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
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
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
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
    let output = common::cli::command()
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
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
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
