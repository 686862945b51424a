//! `bench` on a scripted backend: both modes score replies as the checker does, and the
//! result files they write re-score to the same verdicts.

mod common;

use std::path::Path;

use serde_json::{json, Value};
use skilleval::bench::checker::check;
use skilleval::bench::corpus::{default_root, load_category, Entry};
use skilleval::bench::harness_mode::run_harness_mode;
use skilleval::bench::run::{self, BenchOptions, RunSummary};
use skilleval::bench::score::{score_repeats, ExtraCategory};
use skilleval::bench::selection::{self, CategoryEntries};
use skilleval::bench::sinks::{self, EntryRecord};
use skilleval::bench::{run_prompt_mode, EntryOptions, Mode};
use skilleval::harness::backend::Sampling;
use skilleval::harness::template::Family;
use skilleval::harness::toolcall::render::render_call;
use skilleval::harness::toolcall::CallFormat;

use common::options::bench_options;
use common::scripted_backend::ScriptedBackend;

fn entries(category: &str, ids: &[&str]) -> Vec<Entry> {
    let all = load_category(&default_root(), category).unwrap();
    ids.iter()
        .map(|id| all.iter().find(|e| e.id == *id).unwrap().clone())
        .collect()
}

fn markup(name: &str, args: Value) -> String {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    render_call(CallFormat::Markup, name, &args)
}

fn options(mode: Mode, output: &Path, repeats: u32, temperature: f32) -> BenchOptions {
    BenchOptions {
        sampling: Sampling {
            temperature,
            ..Sampling::default()
        },
        seed: 7,
        repeats,
        result_model: "scripted/model".into(),
        ..bench_options(mode, output)
    }
}

fn verdicts(records: &[(bool, Option<String>)]) -> Vec<(bool, Option<&str>)> {
    records
        .iter()
        .map(|(valid, kind)| (*valid, kind.as_deref()))
        .collect()
}

#[test]
fn prompt_mode_gives_the_checkers_verdicts() {
    let simple = entries(
        "simple_python",
        &["simple_python_0", "simple_python_1", "simple_python_2"],
    );
    let replies = [
        "[calculate_triangle_area(base=10, height=5)]",
        "[math.factorial(number=4)]",
        "The factorial is a product.",
    ];
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let mut seen = Vec::new();
    let outcomes = run_prompt_mode(&mut backend, &simple, &EntryOptions::default(), &mut |o| {
        seen.push(o.id.clone())
    });
    assert_eq!(
        seen,
        ["simple_python_0", "simple_python_1", "simple_python_2"]
    );
    let got: Vec<(bool, Option<String>)> = outcomes
        .iter()
        .map(|o| (o.check.valid, o.check.error_type.clone()))
        .collect();
    assert_eq!(
        verdicts(&got),
        [
            (true, None),
            (false, Some("value_error:others")),
            (false, Some("ast_decoder:decoder_failed")),
        ]
    );
    for (outcome, entry) in outcomes.iter().zip(&simple) {
        let truth = entry.ground_truth.as_deref().unwrap();
        let expected = check(&entry.category, &entry.functions, &outcome.reply, truth);
        assert_eq!(outcome.check, expected, "{}", outcome.id);
        assert_eq!(outcome.result, json!(outcome.reply));
    }
    // The prompt is BFCL's: its system text opens Gemma's first user turn.
    assert!(backend.prompts[0].contains("You are an expert in composing functions."));
    assert!(backend.prompts[0].contains("\"name\": \"calculate_triangle_area\""));
}

#[test]
fn a_backend_failure_is_scored_as_bfcl_scores_an_inference_error() {
    let simple = entries("simple_python", &["simple_python_0"]);
    let irrelevant = entries("irrelevance", &["irrelevance_0"]);
    let mut backend = ScriptedBackend::new(Family::Gemma, Vec::<String>::new());
    let failed = run_prompt_mode(&mut backend, &simple, &EntryOptions::default(), &mut |_| {});
    assert!(failed[0].inference_error.is_some());
    assert!(failed[0]
        .result
        .as_str()
        .unwrap()
        .starts_with("Error during inference: "));
    assert!(!failed[0].check.valid);
    let failed = run_prompt_mode(
        &mut backend,
        &irrelevant,
        &EntryOptions::default(),
        &mut |_| {},
    );
    assert!(failed[0].check.valid, "no call is right for irrelevance");
}

#[test]
fn harness_mode_checks_the_first_rounds_calls() {
    let simple = entries(
        "simple_python",
        &[
            "simple_python_0",
            "simple_python_1",
            "simple_python_2",
            "simple_python_13",
        ],
    );
    let replies = [
        // Strings for numbers: the harness coerces them to the integers the schema asks for.
        markup(
            "calculate_triangle_area",
            json!({"base": "10", "height": "5"}),
        ),
        markup("math.factorial", json!({"number": 4})),
        "The hypotenuse is sqrt(41).".to_string(),
        // Integers where the schema says float: numbers take the declared type.
        markup(
            "calculate_area_under_curve",
            json!({"function": "x**2", "interval": [1, 3]}),
        ),
    ];
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let outcomes = run_harness_mode(
        &mut backend,
        &simple,
        &EntryOptions::default(),
        None,
        &mut |_| {},
    );
    assert_eq!(backend.remaining(), 0, "one round per entry");
    let got: Vec<(bool, Option<String>)> = outcomes
        .iter()
        .map(|o| (o.check.valid, o.check.error_type.clone()))
        .collect();
    assert_eq!(
        verdicts(&got),
        [
            (true, None),
            (false, Some("value_error:others")),
            (false, Some("simple_function_checker:wrong_count")),
            (true, None),
        ]
    );
    assert_eq!(
        outcomes[0].result,
        json!("[calculate_triangle_area(base=10, height=5)]")
    );
    assert_eq!(outcomes[2].result, json!("[]"));
    assert_eq!(
        outcomes[3].result,
        json!("[calculate_area_under_curve(function='x**2', interval=[1.0, 3.0])]")
    );
    // The written result reads back through BFCL's decoder to the same verdict.
    for (outcome, entry) in outcomes.iter().zip(&simple) {
        let truth = entry.ground_truth.as_deref().unwrap();
        let rescored = check(
            &entry.category,
            &entry.functions,
            outcome.result.as_str().unwrap(),
            truth,
        );
        assert_eq!(rescored.valid, outcome.check.valid, "{}", outcome.id);
        assert_eq!(
            rescored.error_type, outcome.check.error_type,
            "{}",
            outcome.id
        );
    }
    // The tools are offered with JSON Schema types, not BFCL's.
    assert!(backend.prompts[3].contains("interval (array, required)"));
}

#[test]
fn harness_mode_writes_java_and_javascript_calls_as_source() {
    let java = entries("simple_java", &["simple_java_0", "simple_java_27"]);
    let javascript = entries("simple_javascript", &["simple_javascript_0"]);
    let replies = [
        markup(
            "GeometryPresentation.createPresentation",
            json!({"controller": "mapController", "parent": "mapArea"}),
        ),
        // A JSON list is not Java source: BFCL's parser rejects the text.
        markup(
            "TwoSum.twoSum",
            json!({"nums": [2, 7, 11, 15], "target": "9"}),
        ),
        markup(
            "validateUserInput",
            json!({"inputField": "userInputField", "isComplete": "true"}),
        ),
    ];
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let mut outcomes = run_harness_mode(
        &mut backend,
        &java,
        &EntryOptions::default(),
        None,
        &mut |_| {},
    );
    outcomes.extend(run_harness_mode(
        &mut backend,
        &javascript,
        &EntryOptions::default(),
        None,
        &mut |_| {},
    ));
    assert_eq!(
        outcomes[0].result,
        json!(
            "[GeometryPresentation.createPresentation(controller=mapController, parent=mapArea)]"
        )
    );
    assert!(outcomes[0].check.valid, "{:?}", outcomes[0].check);
    assert_eq!(
        outcomes[1].check.error_type.as_deref(),
        Some("ast_decoder:decoder_failed"),
        "{}",
        outcomes[1].result
    );
    assert!(outcomes[2].check.valid, "{:?}", outcomes[2].check);
    // The tools are BFCL's rewritten documents: every parameter is source text.
    assert!(
        backend.prompts[0].contains("This parameter can be of any type of Java object"),
        "{}",
        backend.prompts[0]
    );
    for (outcome, entry) in outcomes.iter().zip(java.iter().chain(&javascript)) {
        let truth = entry.ground_truth.as_deref().unwrap();
        let rescored = check(
            &entry.category,
            &entry.functions,
            outcome.result.as_str().unwrap(),
            truth,
        );
        assert_eq!(rescored, outcome.check, "{}", outcome.id);
    }
}

#[test]
fn harness_mode_scores_parallel_calls_and_irrelevance() {
    let parallel = entries("parallel", &["parallel_0"]);
    let irrelevance = entries("irrelevance", &["irrelevance_0", "irrelevance_1"]);
    let both_calls = format!(
        "{}\n{}",
        markup(
            "spotify.play",
            json!({"artist": "Maroon 5", "duration": 15})
        ),
        markup(
            "spotify.play",
            json!({"artist": "Taylor Swift", "duration": 20})
        ),
    );
    let irrelevant_name = irrelevance[1].functions[0]["name"].as_str().unwrap();
    let mut backend = ScriptedBackend::new(
        Family::Gemma,
        [
            both_calls,
            "None of these functions fit the question.".to_string(),
            markup(irrelevant_name, json!({})),
        ],
    );
    let options = EntryOptions::default();
    let mut outcomes = run_harness_mode(&mut backend, &parallel, &options, None, &mut |_| {});
    outcomes.extend(run_harness_mode(
        &mut backend,
        &irrelevance,
        &options,
        None,
        &mut |_| {},
    ));
    let valid: Vec<bool> = outcomes.iter().map(|o| o.check.valid).collect();
    assert_eq!(valid, [true, true, false]);
    assert_eq!(
        outcomes[2].check.error_type.as_deref(),
        Some("irrelevance_error:decoder_success")
    );
}

fn read_records(dir: &Path) -> Vec<EntryRecord> {
    std::fs::read_to_string(dir.join(sinks::ENTRIES_FILE))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn a_run_writes_records_and_result_files_that_rescore_the_same() {
    for mode in [Mode::Prompt, Mode::Harness] {
        let simple = entries("simple_python", &["simple_python_0", "simple_python_1"]);
        let irrelevance = entries("irrelevance", &["irrelevance_0"]);
        let right = match mode {
            Mode::Prompt => "[calculate_triangle_area(base=10, height=5)]".to_string(),
            Mode::Harness => markup("calculate_triangle_area", json!({"base": 10, "height": 5})),
        };
        let replies = [right, "no idea".to_string(), "I can't help.".to_string()];
        let mut backend = ScriptedBackend::new(Family::Gemma, replies);
        let selected = vec![
            CategoryEntries {
                name: "simple_python".into(),
                entries: simple,
                custom: false,
                prerequisites: Vec::new(),
            },
            CategoryEntries {
                name: "irrelevance".into(),
                entries: irrelevance,
                custom: false,
                prerequisites: Vec::new(),
            },
        ];
        let output = tempfile::tempdir().unwrap();
        let bench = run::run(
            &mut backend,
            &selected,
            &options(mode, output.path(), 1, 0.0),
        )
        .unwrap();

        let scores = &bench.summary.scores;
        let correct: Vec<(usize, usize)> = scores
            .categories
            .iter()
            .map(|c| (c.correct, c.total))
            .collect();
        assert_eq!(correct, [(1, 2), (1, 1)], "{mode:?}");
        assert_eq!((scores.total.correct, scores.total.total), (2, 3));

        let result_file = bench
            .dir
            .join("result/scripted_model/non_live/BFCL_v4_simple_python_result.json");
        assert!(result_file.is_file(), "{}", result_file.display());

        let records = read_records(&bench.dir);
        assert_eq!(records.len(), 3);
        assert!(records.iter().all(|r| r.mode == mode && r.repeat == 1));
        assert_eq!(records[0].id, "simple_python_0");
        assert!(records[0].valid && !records[1].valid);

        let summary: RunSummary = serde_json::from_str(
            &std::fs::read_to_string(bench.dir.join(run::SUMMARY_FILE)).unwrap(),
        )
        .unwrap();
        assert_eq!(summary, bench.summary);

        let rescored = score_repeats(&bench.dir, &default_root(), &[]).unwrap();
        let rescored = skilleval::bench::report::summarize(&rescored);
        assert_eq!(rescored.categories, scores.categories, "{mode:?}");
    }
}

#[test]
fn repeats_get_their_own_seeds_and_result_trees() {
    let simple = entries("simple_python", &["simple_python_0"]);
    let selected = vec![CategoryEntries {
        name: "simple_python".into(),
        entries: simple,
        custom: false,
        prerequisites: Vec::new(),
    }];
    let replies = [
        "[calculate_triangle_area(base=10, height=5)]",
        "[calculate_triangle_area(base=1, height=5)]",
    ];
    let mut backend = ScriptedBackend::new(Family::Gemma, replies);
    let output = tempfile::tempdir().unwrap();
    let bench = run::run(
        &mut backend,
        &selected,
        &options(Mode::Prompt, output.path(), 2, 0.7),
    )
    .unwrap();
    let records = read_records(&bench.dir);
    assert_eq!(records.len(), 2);
    assert_ne!(records[0].seed, records[1].seed);
    let category = &bench.summary.scores.categories[0];
    assert_eq!(category.repeat_accuracy, [1.0, 0.0]);
    assert_eq!(category.band(), (0.0, 1.0));
    for repeat in [1, 2] {
        let file = bench.dir.join(format!(
            "repeat-{repeat}/result/scripted_model/non_live/BFCL_v4_simple_python_result.json"
        ));
        assert!(file.is_file(), "{}", file.display());
    }
    let rescored = score_repeats(&bench.dir, &default_root(), &[]).unwrap();
    assert_eq!(rescored.len(), 2);
    assert_eq!(
        skilleval::bench::report::summarize(&rescored).categories[0].repeat_accuracy,
        [1.0, 0.0]
    );
}

#[test]
fn a_custom_corpus_is_run_and_rescored_from_its_own_entries() {
    let dir = tempfile::tempdir().unwrap();
    let questions = dir.path().join("q.jsonl");
    let answers = dir.path().join("a.jsonl");
    std::fs::write(
        &questions,
        r#"{"id": "mine_0", "question": [[{"role": "user", "content": "Double 4."}]], "function": [{"name": "double", "description": "Doubles.", "parameters": {"type": "dict", "properties": {"n": {"type": "integer", "description": "A number."}}, "required": ["n"]}}]}
"#,
    )
    .unwrap();
    std::fs::write(
        &answers,
        r#"{"id": "mine_0", "ground_truth": [{"double": {"n": [4]}}]}"#,
    )
    .unwrap();
    let custom = selection::CustomCorpus {
        questions,
        answers: Some(answers),
        name: "mine".into(),
    };
    let selected = selection::select(&default_root(), &[], Some(&custom), None, &[]).unwrap();
    let mut backend = ScriptedBackend::new(Family::Gemma, ["[double(n=4)]"]);
    let output = tempfile::tempdir().unwrap();
    let bench = run::run(
        &mut backend,
        &selected,
        &options(Mode::Prompt, output.path(), 1, 0.0),
    )
    .unwrap();
    assert_eq!(bench.summary.scores.categories[0].correct, 1);
    let extra: Vec<ExtraCategory> = selection::extra_categories(&selected);
    let rescored = score_repeats(&bench.dir, &default_root(), &extra).unwrap();
    assert_eq!(rescored[0][0].category, "mine");
    assert_eq!(rescored[0][0].correct, 1);

    let no_answers = selection::CustomCorpus {
        answers: None,
        ..custom
    };
    let err = selection::select(&default_root(), &[], Some(&no_answers), None, &[]).unwrap_err();
    assert!(err.to_string().contains("needs --answers"), "{err}");
}

#[test]
fn limit_keeps_the_first_entries_of_each_category() {
    let chosen = selection::parse_categories(&["simple_python,parallel".into()]).unwrap();
    let selected = selection::select(&default_root(), &chosen, None, Some(2), &[]).unwrap();
    let ids: Vec<Vec<&str>> = selected
        .iter()
        .map(|c| c.entries.iter().map(|e| e.id.as_str()).collect())
        .collect();
    assert_eq!(
        ids,
        [
            vec!["simple_python_0", "simple_python_1"],
            vec!["parallel_0", "parallel_1"]
        ]
    );
}

/// A model that serves several callers and answers from the prompt alone: the right call when
/// the prompt offers `calculate_triangle_area`, prose otherwise.
#[derive(Clone)]
struct TriangleOnly;

impl skilleval::harness::backend::Backend for TriangleOnly {
    fn family(&self) -> Family {
        Family::Gemma
    }

    fn info(&self) -> skilleval::harness::backend::BackendInfo {
        skilleval::harness::backend::BackendInfo {
            name: "triangle only".into(),
            ..Default::default()
        }
    }

    fn generate(
        &mut self,
        request: &skilleval::harness::backend::GenRequest,
    ) -> anyhow::Result<skilleval::harness::backend::Generation> {
        let text = if request.prompt.contains("calculate_triangle_area") {
            "[calculate_triangle_area(base=10, height=5)]"
        } else {
            "I cannot help with that."
        };
        Ok(skilleval::harness::backend::Generation {
            text: text.into(),
            finish: skilleval::harness::backend::FinishReason::Eos,
            metrics: Default::default(),
        })
    }

    fn fork(&self) -> Option<Box<dyn skilleval::harness::backend::Backend + Send>> {
        Some(Box::new(TriangleOnly))
    }
}

#[test]
fn a_parallel_run_scores_and_writes_what_a_sequential_run_does() {
    let all = load_category(&default_root(), "simple_python").unwrap();
    let selected = vec![
        CategoryEntries {
            name: "simple_python".into(),
            entries: all[..7].to_vec(),
            custom: false,
            prerequisites: Vec::new(),
        },
        CategoryEntries {
            name: "irrelevance".into(),
            entries: entries("irrelevance", &["irrelevance_0", "irrelevance_1"]),
            custom: false,
            prerequisites: Vec::new(),
        },
    ];
    let runs: Vec<(RunSummary, Vec<EntryRecord>, Vec<String>)> = [1, 3]
        .into_iter()
        .map(|parallel| {
            let output = tempfile::tempdir().unwrap();
            let mut opts = options(Mode::Prompt, output.path(), 2, 0.7);
            opts.parallel = parallel;
            let bench = run::run(&mut TriangleOnly, &selected, &opts).unwrap();
            let mut records = read_records(&bench.dir);
            assert_eq!(records.len(), 18, "every entry of both repeats is recorded");
            records.sort_by(|a, b| (a.repeat, &a.id).cmp(&(b.repeat, &b.id)));
            for record in &mut records {
                record.seconds = 0.0;
            }
            // BFCL reads one file per category and repeat, entries in corpus order.
            let folder = bench.dir.join("repeat-2/result/scripted_model/non_live");
            let file =
                std::fs::read_to_string(folder.join("BFCL_v4_simple_python_result.json")).unwrap();
            let ids: Vec<String> = file
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].to_string())
                .collect();
            let mut summary = bench.summary;
            assert_eq!(summary.parallel, parallel);
            (summary.run_id, summary.seconds, summary.parallel) = (String::new(), 0.0, 0);
            (summary, records, ids)
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
    let expected: Vec<String> = all[..7].iter().map(|e| format!("{:?}", e.id)).collect();
    assert_eq!(runs[0].2, expected);
    let simple = &runs[0].0.scores.categories[0];
    assert_eq!(
        (simple.correct, simple.total),
        (2, 14),
        "entry 0 only, in both repeats"
    );
}
