//! `skilleval bench` on the real default model, through the binary. The model is a tiny base
//! model, so these assert the shape of the output, not accuracy.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Mutex;

use common::cli::skilleval;

/// One model process at a time: the runs share two cores with everything else.
static MODEL_RUNS: Mutex<()> = Mutex::new(());

fn stdout_of(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `n` and `correct` cells of a category's row.
fn row_counts(table: &str, category: &str) -> (String, String) {
    let row = table
        .lines()
        .find(|l| l.contains(&format!(" {category} ")))
        .unwrap_or_else(|| panic!("no {category} row in:\n{table}"));
    let cells: Vec<&str> = row
        .split(['│', '┆'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    (cells[1].to_string(), cells[2].to_string())
}

fn only_run_dir(output: &Path) -> PathBuf {
    let runs: Vec<PathBuf> = std::fs::read_dir(output)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("bench-"));
    runs[0].clone()
}

/// `parallel` None runs the default: the batched engine with the machine's `--parallel`.
fn bench_and_rescore(mode: &str, category: &str, limit: usize, parallel: Option<usize>) {
    bench_and_rescore_in(mode, category, Pick::First(limit), parallel, 2048);
}

/// Which entries of the category run.
enum Pick<'a> {
    /// The first N (`--limit`).
    First(usize),
    /// One entry by id (`--ids`), one of the cheapest of its category.
    Id(&'a str),
}

fn bench_and_rescore_in(mode: &str, category: &str, pick: Pick, parallel: Option<usize>, ctx: u32) {
    let _one_at_a_time = MODEL_RUNS.lock().unwrap_or_else(|e| e.into_inner());
    let model = common::model::model_path();
    let output = tempfile::tempdir().unwrap();
    let (selector, value, limit, ids) = match pick {
        Pick::First(n) => (
            "--limit",
            n.to_string(),
            n.to_string(),
            serde_json::Value::Null,
        ),
        Pick::Id(id) => (
            "--ids",
            id.to_string(),
            "1".to_string(),
            serde_json::json!([id]),
        ),
    };
    let parallel_arg = parallel.map(|p| p.to_string());
    let ctx = ctx.to_string();
    let mut args = vec![
        "bench",
        "--bfcl",
        category,
        "--mode",
        mode,
        selector,
        &value,
        // The base model tends to run on to the limit; a short one keeps the test quick.
        "--max-tokens",
        "48",
        "--ctx",
        &ctx,
        "--model",
        model.to_str().unwrap(),
        "--output",
        output.path().to_str().unwrap(),
    ];
    if let Some(p) = &parallel_arg {
        args.extend(["--parallel", p.as_str()]);
    }
    let out = skilleval(&args);
    let table = stdout_of(&out);
    let (n, correct) = row_counts(&table, category);
    assert_eq!(n, limit, "{table}");
    assert!(table.contains(&format!("mode {mode}")), "{table}");

    let run_dir = only_run_dir(output.path());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("summary.json")).unwrap())
            .unwrap();
    let expected = parallel.unwrap_or_else(skilleval::cli::default_parallel);
    assert_eq!(summary["parallel"], expected as u64);
    assert_eq!(summary["ids"], ids, "the summary records what --ids picked");
    let records = std::fs::read_to_string(run_dir.join("entries.jsonl")).unwrap();
    assert_eq!(records.lines().count(), limit.parse::<usize>().unwrap());
    for line in records.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(record["mode"], mode);
        assert_eq!(record["category"], category);
        assert!(record["tokens"]["prompt"].as_u64().unwrap() > 0);
        if category.starts_with("multi_turn") || category.starts_with("memory") {
            // BFCL's layout: a list per turn of the step replies, at least one step.
            let turns = record["result"].as_array().expect("a list of turns");
            assert!(turns[0].as_array().is_some_and(|steps| !steps.is_empty()));
        }
    }
    let stem = model
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .replace('_', "-");
    let result_file = run_dir
        .join("result")
        .join(stem)
        .join(skilleval::bench::result_layout::group_of(category))
        .join(format!("BFCL_v4_{category}_result.json"));
    assert!(result_file.is_file(), "{}", result_file.display());
    if category.starts_with("memory") {
        // The scenario's prerequisite conversations, in BFCL's file beside it, and the memory
        // they saved.
        let prereq = result_file.with_file_name(format!("BFCL_v4_{category}_prereq_result.json"));
        let lines = std::fs::read_to_string(&prereq).unwrap();
        assert_eq!(lines.lines().count(), 5, "{}", prereq.display());
        let snapshot = result_file.with_file_name("memory_snapshot/notetaker_final.json");
        assert!(snapshot.is_file(), "{}", snapshot.display());
    }

    let rescored = stdout_of(&skilleval(&["bench", "score", run_dir.to_str().unwrap()]));
    assert_eq!(row_counts(&rescored, category), (n, correct), "{rescored}");
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn prompt_mode_runs_and_its_results_rescore_the_same() {
    let _turn = common::model::turn();
    bench_and_rescore("prompt", "simple_python", 3, None);
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn harness_mode_runs_and_its_results_rescore_the_same() {
    let _turn = common::model::turn();
    bench_and_rescore("harness", "simple_python", 2, Some(1));
}

/// The turns go through the real model and BFCL's own APIs (bfcl-eval, from `setup.sh --bfcl`).
/// Entry 100 offers one API class (TradingBot), so its prompts are among the shortest.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn multi_turn_runs_and_its_results_rescore_the_same() {
    let _turn = common::model::turn();
    let pick = Pick::Id("multi_turn_base_100");
    bench_and_rescore_in("prompt", "multi_turn_base", pick, None, 16384);
}

/// Its last turn adds a held-out function.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn multi_turn_harness_mode_runs_and_its_results_rescore_the_same() {
    let _turn = common::model::turn();
    let pick = Pick::Id("multi_turn_miss_func_100");
    bench_and_rescore_in("harness", "multi_turn_miss_func", pick, Some(1), 16384);
}

/// A memory question after its scenario's prerequisite conversations (notetaker: five
/// conversations, the shortest scenario), all through the real model and BFCL's memory.
#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn memory_runs_after_its_prerequisites_and_rescores_the_same() {
    let _turn = common::model::turn();
    let pick = Pick::Id("memory_kv_130-notetaker-0");
    bench_and_rescore_in("prompt", "memory_kv", pick, None, 8192);
}

#[test]
#[cfg_attr(not(feature = "full-tier"), ignore = "full tier")]
fn memory_harness_mode_runs_and_its_results_rescore_the_same() {
    let _turn = common::model::turn();
    let pick = Pick::Id("memory_rec_sum_131-notetaker-1");
    bench_and_rescore_in("harness", "memory_rec_sum", pick, Some(1), 8192);
}
