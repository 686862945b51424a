//! Renders a comparison summary: a terminal table, pull-request markdown, JSON and CSV.
//! Every function returns text; writing files is the caller's business.

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};

use super::stats::{ArmSummary, CategorySummary, Summary};

/// Laws listed under "Most-failed laws" in the markdown.
const MOST_FAILED_SHOWN: usize = 10;
/// Samples listed under "Flaky samples"; a pull request needs examples, not the full list.
const FLAKY_SHOWN: usize = 20;

const HEADER: [&str; 8] = [
    "category", "n", "baseline", "variant", "Δ", "p", "verdict", "gaps",
];
/// Columns holding numbers, aligned right.
const NUMERIC_COLUMNS: [usize; 6] = [1, 2, 3, 4, 5, 7];

/// The per-category table with a total row, for the terminal. Never styled and never
/// wrapped to the terminal width, so the output is the same wherever it is printed.
pub fn table(summary: &Summary) -> String {
    let mut table = Table::new();
    table
        .load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .force_no_tty()
        .set_header(HEADER);
    for row in rows(summary) {
        table.add_row(row);
    }
    for index in NUMERIC_COLUMNS {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table.to_string()
}

/// Text ready to paste into a pull request. `settings` is printed as given (model, repeats…).
pub fn markdown(summary: &Summary, title: &str, settings: &str) -> String {
    let mut out = format!("# {title}\n\n{}\n\n", headline(&summary.total));

    out.push_str("| category | n | baseline | variant | Δ | p | verdict | gaps |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---|---:|\n");
    for (index, row) in rows(summary).iter().enumerate() {
        let is_total = index == summary.categories.len();
        let cells: Vec<String> = row
            .iter()
            .map(|cell| {
                let cell = escape_cell(cell);
                if is_total {
                    format!("**{cell}**")
                } else {
                    cell
                }
            })
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.push_str(&format!(
        "\nPass rates over scored runs; brackets: lowest–highest rate across {} repeat(s). \
         p: exact two-sided sign test over samples (exact McNemar with one repeat). \
         A verdict needs p < {} and non-overlapping repeat bands. \
         Gaps: pairs excluded because a fixture was missing.\n",
        summary.repeats, summary.alpha
    ));
    if summary.total.unpaired_runs > 0 {
        out.push_str(&format!(
            "\n{} run(s) had no partner in the other arm and were left out.\n",
            summary.total.unpaired_runs
        ));
    }

    out.push_str("\n## Most-failed laws\n\n");
    if summary.law_failures.is_empty() {
        out.push_str("No law failed.\n");
    } else {
        out.push_str("| law | baseline | variant |\n|---|---:|---:|\n");
        for failure in summary.law_failures.iter().take(MOST_FAILED_SHOWN) {
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                escape_cell(&failure.law),
                failure.baseline,
                failure.variant
            ));
        }
        let hidden = summary.law_failures.len().saturating_sub(MOST_FAILED_SHOWN);
        if hidden > 0 {
            out.push_str(&format!("\n…and {hidden} more.\n"));
        }
    }

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

    out.push_str(&format!("\nSettings: {}\n", code_span(settings)));
    out
}

pub fn json(summary: &Summary) -> serde_json::Result<String> {
    serde_json::to_string_pretty(summary)
}

/// One row per category and a final `total` row; rates as fractions, missing values empty.
pub fn csv(summary: &Summary) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "category",
        "samples",
        "pairs",
        "baseline_rate",
        "baseline_min",
        "baseline_max",
        "variant_rate",
        "variant_min",
        "variant_max",
        "delta",
        "p_value",
        "verdict",
        "gapped_pairs",
        "unpaired_runs",
        "baseline_errored",
        "variant_errored",
    ])?;
    for category in summary.categories.iter().chain([&summary.total]) {
        let optional = |value: Option<f64>| value.map(|v| v.to_string()).unwrap_or_default();
        let verdict = serde_json::to_value(category.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        writer.write_record([
            category.category.clone(),
            category.samples.to_string(),
            category.pairs.to_string(),
            optional(category.baseline.rate),
            optional(category.baseline.band.map(|b| b.min)),
            optional(category.baseline.band.map(|b| b.max)),
            optional(category.variant.rate),
            optional(category.variant.band.map(|b| b.min)),
            optional(category.variant.band.map(|b| b.max)),
            optional(category.delta),
            category.p_value.to_string(),
            verdict,
            category.gapped_pairs.to_string(),
            category.unpaired_runs.to_string(),
            category.baseline.errored.to_string(),
            category.variant.errored.to_string(),
        ])?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Display cells of every category row, then the total row.
fn rows(summary: &Summary) -> Vec<[String; 8]> {
    summary
        .categories
        .iter()
        .chain([&summary.total])
        .map(|c| {
            [
                c.category.clone(),
                c.samples.to_string(),
                rate_and_band(&c.baseline),
                rate_and_band(&c.variant),
                c.delta.map_or_else(|| "—".to_string(), points),
                p_value(c.p_value),
                c.verdict.label().to_string(),
                c.gapped_pairs.to_string(),
            ]
        })
        .collect()
}

/// One line per flaky sample, naming each arm in which it was flaky.
fn flaky_lines(summary: &Summary) -> Vec<String> {
    let mut lines: Vec<((&str, &str), Vec<String>)> = Vec::new();
    for flaky in &summary.flaky_samples {
        let key = (flaky.category.as_str(), flaky.sample_id.as_str());
        let arm = format!(
            "{} passed {} of {}",
            flaky.arm.name(),
            flaky.passes,
            flaky.runs
        );
        match lines.last_mut() {
            Some((last, arms)) if *last == key => arms.push(arm),
            _ => lines.push((key, vec![arm])),
        }
    }
    lines
        .into_iter()
        .map(|((category, sample_id), arms)| {
            format!("`{sample_id}` ({category}): {}", arms.join("; "))
        })
        .collect()
}

fn headline(total: &CategorySummary) -> String {
    match (total.baseline.rate, total.variant.rate, total.delta) {
        (Some(baseline), Some(variant), Some(delta)) => format!(
            "**Overall: {}.** Variant {} vs baseline {} ({}, p = {}) over {} samples.",
            total.verdict.label(),
            percent(variant),
            percent(baseline),
            points(delta),
            p_value(total.p_value),
            total.samples
        ),
        _ => "**Overall: no data.** No pair of runs could be scored.".to_string(),
    }
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

fn rate_and_band(arm: &ArmSummary) -> String {
    match (arm.rate, arm.band) {
        (Some(rate), Some(band)) => format!(
            "{} [{:.1}–{:.1}]",
            percent(rate),
            band.min * 100.0,
            band.max * 100.0
        ),
        _ => "—".to_string(),
    }
}

/// A rate difference in percentage points, always signed.
fn points(delta: f64) -> String {
    // Avoid printing "-0.0" for a difference lost to rounding.
    let rounded = (delta * 1000.0).round() / 10.0;
    let rounded = if rounded == 0.0 { 0.0 } else { rounded };
    format!("{rounded:+.1} pp")
}

fn p_value(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
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
    use super::*;
    use crate::eval::stats::{summarize, Arm, Outcome};

    /// Both arms of one (sample, repeat); failing runs name the laws typical of the category.
    fn push_pair(
        outcomes: &mut Vec<Outcome>,
        (category, sample, repeat): (&str, usize, u32),
        (baseline_passed, variant_passed): (bool, bool),
        variant_gapped: bool,
    ) {
        let failed_laws = |passed: bool| -> Vec<String> {
            match (passed, category) {
                (true, _) => vec![],
                (false, "plain_city") => vec!["calls-weather-with-place-as-written".into()],
                (false, _) => vec!["no-unsupported-numbers".into(), "names-the-city".into()],
            }
        };
        for (arm, passed, gapped) in [
            (Arm::Baseline, baseline_passed, false),
            (Arm::Variant, variant_passed, variant_gapped),
        ] {
            outcomes.push(Outcome {
                sample_id: format!("{category}-{sample:02}"),
                category: category.to_string(),
                arm,
                repeat,
                passed,
                failed_laws: failed_laws(passed),
                gapped,
                errored: false,
            });
        }
    }

    /// Four categories with known shapes: clearly better, clearly worse, flaky A/A, gapped.
    fn fixture_outcomes() -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        for repeat in 0..3 {
            for sample in 0..12 {
                // The variant fixes 9 of 12 samples that always failed.
                push_pair(
                    &mut outcomes,
                    ("plain_city", sample, repeat),
                    (sample < 3, true),
                    false,
                );
                // The variant breaks 10 of 12 samples.
                push_pair(
                    &mut outcomes,
                    ("city_country", sample, repeat),
                    (true, sample < 2),
                    false,
                );
            }
            for sample in 0..6 {
                // Flaky in both arms, in different repeats: the bands overlap.
                let step = sample * (repeat as usize + 1);
                let flaky = (!step.is_multiple_of(4), !(step + 1).is_multiple_of(4));
                push_pair(&mut outcomes, ("chitchat", sample, repeat), flaky, false);
                // Two samples lack fixtures on the variant side.
                let passes = sample.is_multiple_of(2);
                push_pair(
                    &mut outcomes,
                    ("rare_place", sample, repeat),
                    (passes, passes),
                    sample < 2,
                );
            }
        }
        outcomes
    }

    fn fixture_summary() -> Summary {
        summarize(&fixture_outcomes()).expect("fixture outcomes are consistent")
    }

    #[test]
    fn printed_table() {
        insta::assert_snapshot!(table(&fixture_summary()));
    }

    #[test]
    fn pull_request_markdown() {
        insta::assert_snapshot!(markdown(
            &fixture_summary(),
            "skilleval: weather skill, new wording",
            "model `qwen2.5-0.5b-instruct-q4_k_m.gguf`, 3 repeats, temperature 0.7, seed 1",
        ));
    }

    #[test]
    fn json_round_trips_the_summary() {
        let summary = fixture_summary();
        let text = json(&summary).unwrap();
        let back: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!(back, summary);
        assert!(text.contains("\"verdict\": \"within_noise\""), "{text}");
    }

    #[test]
    fn csv_has_a_row_per_category_and_a_total() {
        let text = csv(&fixture_summary()).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        let categories: Vec<&str> = rows.iter().map(|r| &r[0]).collect();
        assert_eq!(
            categories,
            [
                "chitchat",
                "city_country",
                "plain_city",
                "rare_place",
                "total"
            ]
        );
        let plain_city = &rows[2];
        assert_eq!(&plain_city[3], "0.25");
        assert_eq!(&plain_city[6], "1");
        assert_eq!(&plain_city[11], "better");
        assert_eq!(&rows[3][12], "6", "rare_place gaps");
    }

    #[test]
    fn an_empty_summary_renders_without_data() {
        let summary = summarize(&[]).unwrap();
        let text = markdown(&summary, "t", "s");
        assert!(text.contains("**Overall: no data.**"), "{text}");
        assert!(table(&summary).contains("no data"));
        assert!(csv(&summary)
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .starts_with("total,0,0,,"));
    }

    #[test]
    fn formatting_helpers() {
        assert_eq!(points(-0.00001), "+0.0 pp");
        assert_eq!(points(0.125), "+12.5 pp");
        assert_eq!(points(-0.5), "-50.0 pp");
        assert_eq!(p_value(0.0004), "<0.001");
        assert_eq!(p_value(0.0123), "0.012");
        assert_eq!(code_span("a `b` c"), "``a `b` c``");
        assert_eq!(escape_cell("a|b"), "a\\|b");
    }
}
