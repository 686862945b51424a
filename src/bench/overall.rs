//! BFCL v4's overall score: five groups weighted 10/10/10/30/40, computed from per-category
//! accuracies the way BFCL's leaderboard computes it, with every category not run counted as 0.
//!
//! The groups: non-live AST (unweighted mean of simple, multiple, parallel, parallel_multiple,
//! where simple is itself the mean of Python, Java and JavaScript), live AST (mean weighted by
//! entries), irrelevance (mean of irrelevance and live_irrelevance), multi-turn (mean of four)
//! and agentic (mean of web search and memory). `live_relevance` is shown but weighs nothing.

use serde::{Deserialize, Serialize};

/// Every category the leaderboard reads, in its column order.
pub const LEADERBOARD_CATEGORIES: [&str; 22] = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
    "web_search_base",
    "web_search_no_snippet",
    "memory_kv",
    "memory_vector",
    "memory_rec_sum",
];

/// The category that is shown on the leaderboard but has no weight in the overall score.
const UNWEIGHTED: &str = "live_relevance";

/// Entries of each live AST category in BFCL v4: a live category that was not run still
/// weighs this much (at accuracy 0) in the live group, as BFCL counts it.
pub const LIVE_AST_ENTRIES: [(&str, usize); 4] = [
    ("live_simple", 258),
    ("live_multiple", 1053),
    ("live_parallel", 16),
    ("live_parallel_multiple", 24),
];

const WEIGHTS: Groups = Groups {
    non_live: 10.0,
    live: 10.0,
    irrelevance: 10.0,
    multi_turn: 30.0,
    agentic: 40.0,
};

/// A value per group of the overall score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Groups {
    pub non_live: f64,
    pub live: f64,
    pub irrelevance: f64,
    pub multi_turn: f64,
    pub agentic: f64,
}

/// One category's score as the overall score reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CategoryAccuracy<'a> {
    pub category: &'a str,
    pub accuracy: f64,
    /// Result lines scored (per repeat).
    pub entries: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overall {
    /// Weighted sum of the groups, in [0, 1].
    pub score: f64,
    pub groups: Groups,
    /// Weighing categories that were not run; each counts as 0.
    pub missing: Vec<String>,
}

impl Overall {
    /// One line for the terminal: the score, then what it leaves out.
    pub fn line(&self) -> String {
        let mut line = format!(
            "BFCL v4 overall: {:.2}% (non-live {:.1}%, live {:.1}%, irrelevance {:.1}%, \
             multi-turn {:.1}%, agentic {:.1}%; weights 10/10/10/30/40)",
            self.score * 100.0,
            self.groups.non_live * 100.0,
            self.groups.live * 100.0,
            self.groups.irrelevance * 100.0,
            self.groups.multi_turn * 100.0,
            self.groups.agentic * 100.0,
        );
        if !self.missing.is_empty() {
            line.push_str(&format!(
                "\n{} of {} weighing categories not run, counted as 0: {}",
                self.missing.len(),
                LEADERBOARD_CATEGORIES.len() - 1,
                self.missing.join(", ")
            ));
        }
        line
    }
}

/// The overall score of the given categories; names outside the leaderboard are ignored.
/// `None` when none of them weighs.
pub fn overall(scores: &[CategoryAccuracy]) -> Option<Overall> {
    let find = |name: &str| scores.iter().find(|s| s.category == name);
    let weighing_run = scores
        .iter()
        .any(|s| s.category != UNWEIGHTED && LEADERBOARD_CATEGORIES.contains(&s.category));
    if !weighing_run {
        return None;
    }
    let accuracy = |name: &str| find(name).map_or(0.0, |s| s.accuracy);
    let mean = |names: &[&str]| names.iter().map(|n| accuracy(n)).sum::<f64>() / names.len() as f64;

    let simple = mean(&["simple_python", "simple_java", "simple_javascript"]);
    let non_live =
        (simple + accuracy("multiple") + accuracy("parallel") + accuracy("parallel_multiple"))
            / 4.0;
    let (mut live_sum, mut live_entries) = (0.0, 0usize);
    for (name, full) in LIVE_AST_ENTRIES {
        let (accuracy, entries) = find(name).map_or((0.0, full), |s| (s.accuracy, s.entries));
        live_sum += accuracy * entries as f64;
        live_entries += entries;
    }
    let live = if live_entries == 0 {
        0.0
    } else {
        live_sum / live_entries as f64
    };
    let groups = Groups {
        non_live,
        live,
        irrelevance: mean(&["irrelevance", "live_irrelevance"]),
        multi_turn: mean(&[
            "multi_turn_base",
            "multi_turn_miss_func",
            "multi_turn_miss_param",
            "multi_turn_long_context",
        ]),
        agentic: (mean(&["web_search_base", "web_search_no_snippet"])
            + mean(&["memory_kv", "memory_vector", "memory_rec_sum"]))
            / 2.0,
    };
    let weight_sum = WEIGHTS.non_live
        + WEIGHTS.live
        + WEIGHTS.irrelevance
        + WEIGHTS.multi_turn
        + WEIGHTS.agentic;
    // Normalised weights, summed in BFCL's order, so the figure matches to the last bit.
    let score = [
        (groups.non_live, WEIGHTS.non_live),
        (groups.live, WEIGHTS.live),
        (groups.irrelevance, WEIGHTS.irrelevance),
        (groups.multi_turn, WEIGHTS.multi_turn),
        (groups.agentic, WEIGHTS.agentic),
    ]
    .iter()
    .fold(0.0, |sum, (value, weight)| {
        sum + value * (weight / weight_sum)
    });
    let missing = LEADERBOARD_CATEGORIES
        .iter()
        .filter(|name| **name != UNWEIGHTED && find(name).is_none())
        .map(|name| name.to_string())
        .collect();
    Some(Overall {
        score,
        groups,
        missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_live_relevance_weighs_nothing_and_gives_no_score() {
        let scores = [CategoryAccuracy {
            category: "live_relevance",
            accuracy: 1.0,
            entries: 16,
        }];
        assert_eq!(overall(&scores), None);
    }

    #[test]
    fn a_perfect_non_live_run_scores_its_share_and_names_the_rest() {
        let scores: Vec<_> = ["simple_python", "multiple", "parallel", "parallel_multiple"]
            .iter()
            .map(|&category| CategoryAccuracy {
                category,
                accuracy: 1.0,
                entries: 10,
            })
            .collect();
        let overall = overall(&scores).unwrap();
        // simple is a third of the simple group (Java and JavaScript not run): (1/3+3)/4.
        assert!((overall.groups.non_live - (1.0 / 3.0 + 3.0) / 4.0).abs() < 1e-12);
        assert!((overall.score - overall.groups.non_live / 10.0).abs() < 1e-12);
        assert_eq!(overall.missing.len(), 17);
        assert!(overall.line().contains("simple_java"), "{}", overall.line());
    }
}
