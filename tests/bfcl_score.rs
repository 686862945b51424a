//! Result files: written, found, read and scored.

use skilleval::bench::corpus::{default_root, load_category};
use skilleval::bench::score::{score_dir, text_result, write_result_file};

#[test]
fn scores_a_results_folder() {
    let root = default_root();
    let simple = load_category(&root, "simple_python").unwrap();
    let irrelevance = load_category(&root, "irrelevance").unwrap();
    assert!(simple.len() > 300 && irrelevance.len() > 200);

    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("model").join("non_live");
    // simple_python_0 asks for calculate_triangle_area(base=10, height=5).
    let lines = vec![
        text_result(
            "simple_python_0",
            "[calculate_triangle_area(base=10, height=5)]",
        ),
        text_result("simple_python_1", "I don't know."),
    ];
    write_result_file(&nested, "simple_python", &lines).unwrap();
    let irr = vec![
        text_result(&irrelevance[0].id, "None of the functions apply."),
        text_result(
            &irrelevance[1].id,
            "[calculate_triangle_area(base=1, height=1)]",
        ),
        text_result(&irrelevance[2].id, "[]"),
    ];
    write_result_file(dir.path(), "irrelevance", &irr).unwrap();

    let scores = score_dir(dir.path(), &root).unwrap();
    assert_eq!(scores.len(), 2);
    let irr_score = scores.iter().find(|s| s.category == "irrelevance").unwrap();
    assert_eq!((irr_score.correct, irr_score.total), (2, 3));
    assert_eq!(
        irr_score.errors.get("irrelevance_error:decoder_success"),
        Some(&1)
    );
    let simple_score = scores
        .iter()
        .find(|s| s.category == "simple_python")
        .unwrap();
    assert_eq!((simple_score.correct, simple_score.total), (1, 2));
    assert_eq!(
        simple_score.errors.get("ast_decoder:decoder_failed"),
        Some(&1)
    );
}
