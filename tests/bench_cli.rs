//! `skilleval bench` through the binary, without a model: re-scoring saved result files,
//! and mistakes caught before any model loads.

mod common;

use std::path::Path;

use skilleval::bench::score::{text_result, write_result_file};

use common::cli::{skilleval, text};

/// A BFCL-style result tree made elsewhere: one right, one wrong simple_python reply and
/// two irrelevance replies, one of which calls a function.
fn write_results(dir: &Path) {
    let model = dir.join("result").join("someone_model").join("non_live");
    write_result_file(
        &model,
        "simple_python",
        &[
            text_result(
                "simple_python_0",
                "[calculate_triangle_area(base=10, height=5)]",
            ),
            text_result("simple_python_1", "[math.factorial(number=6)]"),
        ],
    )
    .unwrap();
    write_result_file(
        &model,
        "irrelevance",
        &[
            text_result("irrelevance_0", "I cannot answer that with these tools."),
            text_result("irrelevance_1", "[math.sum(numbers=[1, 2])]"),
        ],
    )
    .unwrap();
}

#[test]
fn bench_score_prints_the_table_of_saved_results() {
    let dir = tempfile::tempdir().unwrap();
    write_results(dir.path());
    let out = skilleval(&["bench", "score", dir.path().to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("no {name} row in:\n{stdout}"))
            .to_string()
    };
    assert!(row("simple_python").contains("1/2"), "{stdout}");
    assert!(
        row("simple_python").contains("value_error:others (1)"),
        "{stdout}"
    );
    assert!(row("irrelevance").contains("50.0%"), "{stdout}");
    assert!(row("total").contains("2/4"), "{stdout}");
}

#[test]
fn bench_score_json_gives_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    write_results(dir.path());
    let out = skilleval(&["bench", "score", "--json", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["repeats"], 1);
    assert_eq!(summary["total"]["correct"], 2);
    assert_eq!(summary["categories"][0]["category"], "simple_python");
}

#[test]
fn bench_score_on_a_folder_without_results_fails_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = skilleval(&["bench", "score", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no result files"), "{stderr}");
}

#[test]
fn an_unknown_category_fails_before_the_model_loads() {
    // The model path does not exist: the category error must come first.
    let out = skilleval(&[
        "bench",
        "--bfcl",
        "simple_python,simple",
        "--model",
        "/nonexistent/model.gguf",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("unknown BFCL category \"simple\""),
        "{stderr}"
    );
}

#[test]
fn nothing_to_run_is_an_error() {
    let out = skilleval(&["bench", "--model", "/nonexistent/model.gguf"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("nothing to run"));
}

#[test]
fn bench_run_and_the_shorthand_take_the_same_flags() {
    for args in [
        vec!["bench", "run", "--bfcl", "nope"],
        vec!["bench", "--bfcl", "nope"],
    ] {
        let out = skilleval(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(text(&out.stderr).contains("unknown BFCL category \"nope\""));
    }
}
