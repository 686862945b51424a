//! Accuracy per category over one or more repeats, and the terminal table of it.

use std::collections::BTreeMap;

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};
use serde::{Deserialize, Serialize};

use super::overall::{overall, CategoryAccuracy, Overall};
use super::score::CategoryScore;

/// Name of the row that pools every category.
pub const TOTAL: &str = "total";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategorySummary {
    pub category: String,
    /// Result lines in one repeat (the first that has the category).
    pub entries: usize,
    /// Over every repeat.
    pub correct: usize,
    pub total: usize,
    /// `correct / total`: the mean accuracy of the repeats, weighted by their lines.
    pub accuracy: f64,
    /// Accuracy of each repeat, in order.
    pub repeat_accuracy: Vec<f64>,
    /// Wrong answers by error type, over every repeat.
    pub errors: BTreeMap<String, usize>,
    /// Result ids not found in the corpus (they count as wrong).
    pub unknown_ids: usize,
}

impl CategorySummary {
    fn new(category: &str) -> Self {
        CategorySummary {
            category: category.to_string(),
            entries: 0,
            correct: 0,
            total: 0,
            accuracy: 0.0,
            repeat_accuracy: Vec::new(),
            errors: BTreeMap::new(),
            unknown_ids: 0,
        }
    }

    /// Adds one repeat's score, whose own accuracy is `repeat_accuracy`.
    fn add(&mut self, correct: usize, total: usize, errors: &BTreeMap<String, usize>) {
        if self.repeat_accuracy.is_empty() {
            self.entries = total;
        }
        self.correct += correct;
        self.total += total;
        self.accuracy = ratio(self.correct, self.total);
        self.repeat_accuracy.push(ratio(correct, total));
        for (kind, count) in errors {
            *self.errors.entry(kind.clone()).or_default() += count;
        }
    }

    /// Lowest and highest accuracy across repeats.
    pub fn band(&self) -> (f64, f64) {
        let low = self
            .repeat_accuracy
            .iter()
            .copied()
            .fold(f64::NAN, f64::min);
        let high = self
            .repeat_accuracy
            .iter()
            .copied()
            .fold(f64::NAN, f64::max);
        (low, high)
    }

    pub fn most_common_error(&self) -> Option<(&str, usize)> {
        // Ties go to the first error type in name order, so the table is stable.
        self.errors.iter().fold(
            None,
            |best: Option<(&str, usize)>, (kind, &count)| match best {
                Some((_, best_count)) if best_count >= count => best,
                _ => Some((kind.as_str(), count)),
            },
        )
    }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchSummary {
    pub repeats: usize,
    pub categories: Vec<CategorySummary>,
    /// Every category's lines pooled (not BFCL's overall score, which weights groups).
    pub total: CategorySummary,
    /// BFCL v4's overall score over the categories run; `None` when none of them weighs.
    /// Custom corpora never carry a BFCL category's name, so every name it reads is BFCL's.
    #[serde(default)]
    pub overall: Option<Overall>,
}

/// Pools per-repeat scores; categories keep the order in which they first appear.
pub fn summarize(per_repeat: &[Vec<CategoryScore>]) -> BenchSummary {
    let mut categories: Vec<CategorySummary> = Vec::new();
    let mut total = CategorySummary::new(TOTAL);
    for scores in per_repeat {
        let mut repeat_correct = 0;
        let mut repeat_lines = 0;
        let mut repeat_errors = BTreeMap::new();
        for score in scores {
            let index = match categories.iter().position(|c| c.category == score.category) {
                Some(index) => index,
                None => {
                    categories.push(CategorySummary::new(&score.category));
                    categories.len() - 1
                }
            };
            let summary = &mut categories[index];
            summary.add(score.correct, score.total, &score.errors);
            summary.unknown_ids += score.unknown_ids;
            repeat_correct += score.correct;
            repeat_lines += score.total;
            for (kind, count) in &score.errors {
                *repeat_errors.entry(kind.clone()).or_default() += count;
            }
            total.unknown_ids += score.unknown_ids;
        }
        total.add(repeat_correct, repeat_lines, &repeat_errors);
    }
    let accuracies: Vec<CategoryAccuracy> = categories
        .iter()
        .map(|c| CategoryAccuracy {
            category: &c.category,
            accuracy: c.accuracy,
            entries: c.entries,
        })
        .collect();
    // Linear in the accuracies, so over pooled repeats it is the mean of the repeats' scores.
    let overall = overall(&accuracies);
    BenchSummary {
        repeats: per_repeat.len(),
        categories,
        total,
        overall,
    }
}

fn percent(value: f64) -> String {
    format!("{:.1}%", value * 100.0)
}

fn row(summary: &CategorySummary, repeats: usize) -> Vec<String> {
    let mut cells = vec![
        summary.category.clone(),
        summary.entries.to_string(),
        format!("{}/{}", summary.correct, summary.total),
        percent(summary.accuracy),
    ];
    if repeats > 1 {
        let (low, high) = summary.band();
        cells.push(format!("{:.1}–{:.1}%", low * 100.0, high * 100.0));
    }
    cells.push(
        summary
            .most_common_error()
            .map(|(kind, count)| format!("{kind} ({count})"))
            .unwrap_or_default(),
    );
    cells
}

/// The per-category table with a total row. With several repeats a band column gives the
/// lowest–highest accuracy across them. Never styled or wrapped, so it reads the same anywhere.
pub fn table(summary: &BenchSummary) -> String {
    let mut header = vec!["category", "n", "correct", "accuracy"];
    let mut numeric = vec![1, 2, 3];
    if summary.repeats > 1 {
        header.push("band");
        numeric.push(4);
    }
    header.push("most common error");
    let mut table = Table::new();
    table
        .load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .force_no_tty()
        .set_header(header);
    for category in &summary.categories {
        table.add_row(row(category, summary.repeats));
    }
    table.add_row(row(&summary.total, summary.repeats));
    for index in numeric {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut text = table.to_string();
    if let Some(overall) = &summary.overall {
        text.push('\n');
        text.push_str(&overall.line());
    }
    if summary.total.unknown_ids > 0 {
        text.push_str(&format!(
            "\n{} result line(s) have an id the corpus does not hold; they count as wrong.",
            summary.total.unknown_ids
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(category: &str, correct: usize, total: usize, error: &str) -> CategoryScore {
        let mut errors = BTreeMap::new();
        if total > correct {
            errors.insert(error.to_string(), total - correct);
        }
        CategoryScore {
            category: category.into(),
            total,
            correct,
            accuracy: ratio(correct, total),
            unknown_ids: 0,
            errors,
        }
    }

    #[test]
    fn repeats_pool_and_give_a_band() {
        let summary = summarize(&[
            vec![
                score("simple_python", 1, 4, "a"),
                score("parallel", 2, 2, "b"),
            ],
            vec![
                score("simple_python", 3, 4, "c"),
                score("parallel", 0, 2, "b"),
            ],
        ]);
        assert_eq!(summary.repeats, 2);
        let simple = &summary.categories[0];
        assert_eq!(simple.category, "simple_python");
        assert_eq!((simple.entries, simple.correct, simple.total), (4, 4, 8));
        assert_eq!(simple.band(), (0.25, 0.75));
        assert_eq!(summary.total.repeat_accuracy, vec![0.5, 0.5]);
        assert_eq!((summary.total.correct, summary.total.total), (6, 12));
        assert_eq!(summary.total.most_common_error(), Some(("a", 3)));

        let table = table(&summary);
        assert!(table.contains("25.0–75.0%"), "{table}");
        assert!(table.contains("band"), "{table}");
        let total_line = table.lines().rev().find(|l| l.contains(TOTAL)).unwrap();
        assert!(total_line.contains("6/12") && total_line.contains("50.0%"));
    }

    #[test]
    fn one_repeat_has_no_band_column() {
        let summary = summarize(&[vec![score("irrelevance", 2, 3, "x")]]);
        let table = table(&summary);
        assert!(!table.contains("band"), "{table}");
        assert!(
            table.contains("66.7%") && table.contains("x (1)"),
            "{table}"
        );
        assert!(table.contains("BFCL v4 overall: 3.33%"), "{table}");
    }

    #[test]
    fn a_custom_category_alone_has_no_overall_line() {
        let summary = summarize(&[vec![score("mine", 2, 3, "x")]]);
        assert_eq!(summary.overall, None);
        assert!(!table(&summary).contains("overall"));
    }
}
