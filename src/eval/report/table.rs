//! The report for the terminal: plain aligned columns, never styled nor wrapped to the
//! terminal's width, so that it prints the same everywhere.

use super::figures::{cells, comparison_name, comparison_title, headers, rows_of, variants_grid};
use super::headline::{skill_effect_statement, wording_statement};
use super::legend::{legend, repeats_needed};
use super::notes::{comparison_notes, errored_statement, several_variants_note};
use crate::eval::stats::{Comparison, Row, Summary};

/// Columns holding numbers, aligned right.
const NUMERIC_COLUMNS: [usize; 6] = [1, 2, 3, 4, 5, 6];

/// The full report for the terminal: both comparisons with their category and law rows, the
/// statements and the repeats needed. Never styled and never wrapped to the terminal width,
/// so the output is the same wherever it is printed; the tables are built to fit in 100
/// columns (long law names can push a law table past that).
pub fn table(summary: &Summary) -> String {
    let mut out = String::new();
    if let Some(skill) = &summary.skill_effect {
        out.push_str(&format!("{}\n", comparison_title(skill)));
        out.push_str(&terminal_table(skill, &rows_of(skill), true));
        out.push_str(&notes(skill));
        out.push_str(&format!("\n{}\n\n", skill_effect_statement(skill)));
    } else {
        out.push_str("Skill effect: not measured (--no-control).\n\n");
    }
    for (i, wording) in summary.wordings().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{}\n", comparison_title(wording)));
        out.push_str(&terminal_table(wording, &rows_of(wording), true));
        out.push_str(&notes(wording));
        out.push_str(&format!("\n{}\n", wording_statement(summary, wording)));
    }
    if let Some(note) = several_variants_note(summary) {
        let (header, body) = variants_grid(summary);
        out.push_str(
            "\nVariants side by side: Δ pp [95% CI] against the baseline, and the verdict\n",
        );
        out.push_str(&grid(&header, &body));
        out.push_str(&format!("{note}\n"));
    }
    if let Some(errors) = errored_statement(summary) {
        out.push_str(&format!("{errors}\n"));
    }
    for comparison in summary.comparisons() {
        if !comparison.laws.is_empty() {
            out.push_str(&format!(
                "\nPer law, {} (pass rate of each law over the runs it applied to)\n",
                comparison_name(comparison)
            ));
            out.push_str(&terminal_table(
                comparison,
                &comparison.laws.iter().collect::<Vec<_>>(),
                false,
            ));
        }
    }
    out.push_str(&format!("\n{}\n", legend(summary)));
    out.push_str(&format!("\n{}\n", repeats_needed(summary)));
    out
}

/// The lines under a comparison's table.
fn notes(comparison: &Comparison) -> String {
    comparison_notes(comparison)
        .into_iter()
        .map(|line| line + "\n")
        .collect()
}

fn terminal_table(comparison: &Comparison, rows: &[&Row], categories: bool) -> String {
    named_table(
        (comparison.reference.name(), comparison.treatment.name()),
        rows,
        categories,
    )
}

/// A table of category (or law) rows whose rate columns are headed `reference` and `treatment`.
pub(super) fn named_table(
    (reference, treatment): (&str, &str),
    rows: &[&Row],
    categories: bool,
) -> String {
    let header = headers(
        reference,
        treatment,
        if categories { "category" } else { "law" },
    );
    let body: Vec<Vec<String>> = rows.iter().map(|row| cells(row, categories, 0)).collect();
    aligned(
        &header,
        &body,
        if categories {
            usize::MAX
        } else {
            LAW_NAME_WIDTH
        },
    )
}

/// Law names longer than this wrap after a hyphen, so that a law table fits in 100 columns.
const LAW_NAME_WIDTH: usize = 23;

/// `name` in pieces of at most `width` characters, broken after hyphens where it can be.
fn wrap_name(name: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for part in name.split_inclusive('-') {
        if !current.is_empty() && current.chars().count() + part.chars().count() > width {
            lines.push(std::mem::take(&mut current));
        }
        current.push_str(part);
    }
    lines.push(current);
    lines
}

/// Plain columns: names and verdicts aligned left, figures right; two spaces after the wide
/// figures (rates, Δ, p) and one elsewhere, so that rows of the weather pack's shape fit in
/// 100 columns; a rule above and below the header and under the last row. Every character
/// printed is one column wide, so widths are counted in characters.
fn aligned(header: &[String], body: &[Vec<String>], name_width: usize) -> String {
    // A long name goes on as many lines as it needs, the figures on its first.
    let body: Vec<Vec<String>> = body
        .iter()
        .flat_map(|row| {
            let pieces = wrap_name(&row[0], name_width);
            let mut lines = vec![row.clone()];
            lines[0][0] = pieces[0].clone();
            for piece in &pieces[1..] {
                let mut line = vec![String::new(); row.len()];
                line[0] = piece.clone();
                lines.push(line);
            }
            lines
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &body {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let last = widths.len() - 1;
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (index, (cell, &width)) in cells.iter().zip(&widths).enumerate() {
            let pad = " ".repeat(width - cell.chars().count());
            if NUMERIC_COLUMNS.contains(&index) {
                out.push_str(&pad);
                out.push_str(cell);
            } else {
                out.push_str(cell);
                if index < last {
                    out.push_str(&pad);
                }
            }
            if index < last {
                out.push_str(if (2..=5).contains(&index) { "  " } else { " " });
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let gaps: usize = (0..last)
        .map(|i| if (2..=5).contains(&i) { 2 } else { 1 })
        .sum();
    let rule = "─".repeat(widths.iter().sum::<usize>() + gaps) + "\n";
    let mut out = rule.clone() + &line(header) + &rule;
    for row in &body {
        out.push_str(&line(row));
    }
    out + &rule
}

/// Left-aligned columns two spaces apart, between rules: the variants side by side.
fn grid(header: &[String], body: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in body {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, &width)| format!("{cell}{}", " ".repeat(width - cell.chars().count())))
            .collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    let rule = "─".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)) + "\n";
    let mut out = rule.clone() + &line(header) + &rule;
    for row in body {
        out.push_str(&line(row));
    }
    out + &rule
}

#[cfg(test)]
mod tests {
    use super::super::test_outcomes::known_summary;
    use super::*;

    #[test]
    fn printed_table() {
        insta::assert_snapshot!(table(&known_summary()));
    }

    #[test]
    fn the_terminal_report_fits_in_100_columns() {
        let text = table(&known_summary());
        for line in text
            .lines()
            .filter(|l| l.starts_with(' ') || l.starts_with('─'))
        {
            assert!(
                line.chars().count() <= 100,
                "{} columns: {line}",
                line.chars().count()
            );
        }
    }

    #[test]
    fn long_law_names_wrap_after_hyphens() {
        assert_eq!(
            wrap_name("calls-weather-with-place-as-written", 28),
            ["calls-weather-with-place-as-", "written"]
        );
        assert_eq!(wrap_name("short", 28), ["short"]);
        assert_eq!(
            wrap_name("averyveryverylongnamewithouthyphens", 10).len(),
            1
        );
    }
}
