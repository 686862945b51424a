//! `report.md`: the run's report in GitHub-flavoured markdown, ready to paste into a pull
//! request.

use super::figures::{
    cells, comparison_name, comparison_title, headers, rows_of, variant_column, variants_grid,
};
use super::headline::{skill_effect_statement, wording_headlines, wording_statement};
use super::legend::{legend, repeats_needed};
use super::notes::{comparison_notes, errored_statement, flaky_lines, several_variants_note};
use crate::eval::stats::{Comparison, Row, Summary};

/// Samples listed under "Flaky samples"; a pull request needs examples, not the full list.
const FLAKY_SHOWN: usize = 20;

/// Text ready to paste into a pull request, sized for a comment: the headline (the wording's
/// changes, the skill's own effect), the changed categories, then the full report folded in a
/// `<details>` block. `settings` is printed as given (model, repeats…).
pub fn markdown(summary: &Summary, title: &str, settings: &str) -> String {
    let mut out = format!("# {title}\n\n");
    let several = summary.wordings().count() > 1;
    for headline in wording_headlines(summary) {
        out.push_str(&format!("**{headline}**\n\n"));
    }
    if let Some(errors) = errored_statement(summary) {
        out.push_str(&format!("**{errors}**\n\n"));
    }
    match &summary.skill_effect {
        Some(skill) => out.push_str(&format!(
            "Skill effect: {}\n\n",
            skill_effect_statement(skill)
        )),
        None => out.push_str("Skill effect: not measured (`--no-control`).\n\n"),
    }
    if several {
        let (header, body) = variants_grid(summary);
        out.push_str(
            "Variants side by side (Δ pp [95% CI] against the baseline, and the verdict):\n\n",
        );
        out.push_str(&pipe_table(&header, &body));
        if let Some(note) = several_variants_note(summary) {
            out.push_str(&format!("\n{note}\n"));
        }
        out.push('\n');
    }
    for wording in summary.wordings() {
        let changed: Vec<&Row> = wording.categories.iter().filter(|r| r.changed()).collect();
        if !changed.is_empty() {
            let against = if several {
                format!("{} against baseline", variant_column(wording))
            } else {
                "variant against baseline".to_string()
            };
            out.push_str(&format!("Changed categories ({against}):\n\n"));
            out.push_str(&markdown_table(wording, &changed, true));
            out.push('\n');
        }
    }
    out.push_str(
        "<details>\n<summary>Full report: both comparisons, per law, repeats, flaky samples</summary>\n\n",
    );
    out.push_str(&full(summary));
    out.push_str("\n</details>\n");
    out.push_str(&format!("\nSettings: {}\n", code_span(settings)));
    out
}

/// Everything: both comparisons with their tables, the per-law tables, the repeats needed and
/// the flaky samples.
fn full(summary: &Summary) -> String {
    let mut out = String::new();
    match &summary.skill_effect {
        Some(skill) => {
            out.push_str(&format!("## {}\n\n", comparison_title(skill)));
            out.push_str(&format!("**{}**\n\n", skill_effect_statement(skill)));
            out.push_str(&markdown_table(skill, &rows_of(skill), true));
            for note in comparison_notes(skill) {
                out.push_str(&format!("\n{note}\n"));
            }
        }
        None => out.push_str(
            "## Skill effect\n\nNot measured: the run skipped the control arm (`--no-control`).\n",
        ),
    }
    for (i, wording) in summary.wordings().enumerate() {
        out.push_str(&format!("\n## {}\n\n", comparison_title(wording)));
        out.push_str(&format!("**{}**\n\n", wording_statement(summary, wording)));
        if i == 0 {
            if let Some(errors) = errored_statement(summary) {
                out.push_str(&format!("**{errors}**\n\n"));
            }
        }
        out.push_str(&markdown_table(wording, &rows_of(wording), true));
        for note in comparison_notes(wording) {
            out.push_str(&format!("\n{note}\n"));
        }
        if wording.total.unpaired_runs > 0 {
            out.push_str(&format!(
                "\n{} run(s) had no partner in the other arm and were left out.\n",
                wording.total.unpaired_runs
            ));
        }
    }
    if let Some(note) = several_variants_note(summary) {
        out.push_str(&format!("\n{note}\n"));
    }
    out.push_str(&format!("\n{}\n", legend(summary)));

    for comparison in summary.comparisons() {
        out.push_str(&format!(
            "\n## Per law, {}\n\n",
            comparison_name(comparison)
        ));
        if comparison.laws.is_empty() {
            out.push_str("The journal does not say which laws applied to which runs.\n");
        } else {
            out.push_str(
                "Pass rate of each law over the runs it applied to; adjusted with every other row of the comparison.\n\n",
            );
            let laws: Vec<&Row> = comparison.laws.iter().collect();
            out.push_str(&markdown_table(comparison, &laws, false));
        }
    }

    out.push_str(&format!("\n## Repeats\n\n{}\n", repeats_needed(summary)));

    out.push_str("\n## Flaky samples\n\n");
    let flaky = flaky_lines(summary);
    if flaky.is_empty() {
        out.push_str("None: every sample gave the same result in every repeat.\n");
    } else {
        for line in flaky.iter().take(FLAKY_SHOWN) {
            out.push_str(&format!("- {line}\n"));
        }
        let hidden = flaky.len().saturating_sub(FLAKY_SHOWN);
        if hidden > 0 {
            out.push_str(&format!("\n…and {hidden} more.\n"));
        }
    }

    out
}

fn markdown_table(comparison: &Comparison, rows: &[&Row], categories: bool) -> String {
    let header = headers(
        comparison.reference.name(),
        comparison.treatment.name(),
        if categories { "category" } else { "law" },
    );
    let mut out = format!("| {} |\n", header.join(" | "));
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---|\n");
    for row in rows {
        let is_total = categories && row.name == "total";
        let cells: Vec<String> = cells(row, categories, 1)
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                let cell = escape_cell(cell);
                let cell = if !categories && i == 0 {
                    format!("`{cell}`")
                } else {
                    cell
                };
                if is_total {
                    format!("**{cell}**")
                } else {
                    cell
                }
            })
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// A plain pipe table, left-aligned.
fn pipe_table(header: &[String], body: &[Vec<String>]) -> String {
    let escaped = |cells: &[String]| {
        cells
            .iter()
            .map(|c| escape_cell(c))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let mut out = format!("| {} |\n", escaped(header));
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for row in body {
        out.push_str(&format!("| {} |\n", escaped(row)));
    }
    out
}

fn escape_cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// Inline code that survives backticks in the text: the fence is longer than any run inside.
fn code_span(text: &str) -> String {
    let longest_run = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::super::test_outcomes::known_summary;
    use super::*;

    #[test]
    fn pull_request_markdown() {
        insta::assert_snapshot!(markdown(
            &known_summary(),
            "skilleval: weather skill, new wording",
            "model `qwen2.5-0.5b-instruct-q4_k_m.gguf`, 3 repeats, temperature 0.7, seed 1",
        ));
    }

    #[test]
    fn markdown_escapes() {
        assert_eq!(code_span("a `b` c"), "``a `b` c``");
        assert_eq!(escape_cell("a|b"), "a\\|b");
    }
}
