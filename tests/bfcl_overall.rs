//! BFCL v4's overall score against BFCL's own leaderboard code (independent truth):
//! `scripts/bfcl/overall_agreement.py` fed per-category scores to bfcl-eval's
//! `generate_leaderboard_csv` and recorded its five groups and overall score in
//! `tests/data/bfcl/overall_agreement.jsonl`.

use std::path::Path;

use serde_json::Value;
use skilleval::bench::corpus::{default_root, load_category};
use skilleval::bench::overall::{overall, CategoryAccuracy, LIVE_AST_ENTRIES};

#[test]
fn overall_score_and_groups_match_bfcl_leaderboard() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bfcl/overall_agreement.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut cases = 0;
    let mut mismatches = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let case: Value = serde_json::from_str(line).unwrap();
        let scores: Vec<CategoryAccuracy> = case["scores"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(category, score)| CategoryAccuracy {
                category,
                accuracy: score["accuracy"].as_f64().unwrap(),
                entries: score["total_count"].as_u64().unwrap() as usize,
            })
            .collect();
        cases += 1;
        let Some(ours) = overall(&scores) else {
            // No weighing category: BFCL's figure is 0 and ours is "not computed".
            if case["overall"].as_f64().unwrap() != 0.0 {
                mismatches.push(format!(
                    "line {}: no score, BFCL {}",
                    number + 1,
                    case["overall"]
                ));
            }
            continue;
        };
        let expected = [
            ("overall", ours.score),
            ("non_live", ours.groups.non_live),
            ("live", ours.groups.live),
            ("irrelevance", ours.groups.irrelevance),
            ("multi_turn", ours.groups.multi_turn),
            ("agentic", ours.groups.agentic),
        ];
        for (field, value) in expected {
            let bfcl = case[field].as_f64().unwrap();
            if (value - bfcl).abs() > 1e-12 {
                mismatches.push(format!(
                    "line {}: {field} ours {value}, BFCL {bfcl}",
                    number + 1
                ));
            }
        }
    }
    assert!(cases >= 40, "only {cases} cases");
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Categories not run weigh in the live group by their full size, as BFCL counts them.
#[test]
fn live_sizes_are_the_vendored_files() {
    for (category, size) in LIVE_AST_ENTRIES {
        let entries = load_category(&default_root(), category).unwrap();
        assert_eq!(entries.len(), size, "{category}");
    }
}
