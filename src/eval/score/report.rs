//! A score's readings for people and CI: the headline and table on the terminal, `report.md`,
//! `report.html` and JUnit XML, all from the same `ScoreSummary`.

use super::rows::{ScoreComparison, ScoreRow, ScoreVerdict};
use super::ScoreSummary;
use crate::eval::report::figures::p_value;
use crate::eval::report::junit::escape as xml;
use crate::eval::report::markup::escape as html_escape;

/// A ratio as the report writes it: ×0.30, ×1.07, ×250, ×<0.001.
pub fn ratio(r: f64) -> String {
    if r < 0.001 {
        "×<0.001".into()
    } else if r < 0.1 {
        format!("×{r:.3}")
    } else if r < 10.0 {
        format!("×{r:.2}")
    } else if r < 1000.0 {
        format!("×{r:.0}")
    } else {
        "×>999".into()
    }
}

/// A mean probability as a percentage with the digits a small one needs.
pub fn percent(p: f64) -> String {
    let pct = p * 100.0;
    if pct == 0.0 {
        "0%".into()
    } else if pct < 0.01 {
        "<0.01%".into()
    } else if pct < 1.0 {
        format!("{pct:.2}%")
    } else if pct < 10.0 {
        format!("{pct:.1}%")
    } else {
        format!("{pct:.0}%")
    }
}

fn row_label(row: &ScoreRow) -> String {
    match &row.category {
        None => format!("{} (all)", row.step.name()),
        Some(c) => format!("{}: {c}", row.step.name()),
    }
}

/// One line per moved row of a comparison: what the reader acts on.
pub fn headline(comparison: &ScoreComparison) -> String {
    let named = |verdict: ScoreVerdict| -> Vec<String> {
        comparison
            .rows
            .iter()
            .filter(|r| r.verdict == verdict)
            .map(|r| {
                format!(
                    "{} {} → {} ({})",
                    row_label(r),
                    percent(r.mean_against),
                    percent(r.mean_arm),
                    ratio(r.ratio)
                )
            })
            .collect()
    };
    let worse = named(ScoreVerdict::Worse);
    let better = named(ScoreVerdict::Better);
    let is_effect = comparison.name == "skill effect";
    let subject = if is_effect {
        "Skill effect (the skill against its body removed)".to_string()
    } else {
        format!("Wording {} against the baseline", comparison.name)
    };
    let mut parts = Vec::new();
    if !worse.is_empty() {
        parts.push(format!("worse: {}", worse.join("; ")));
    }
    if !better.is_empty() {
        parts.push(format!("better: {}", better.join("; ")));
    }
    if parts.is_empty() {
        let unclear: Vec<&ScoreRow> = comparison
            .rows
            .iter()
            .filter(|r| r.verdict == ScoreVerdict::Unclear && !r.out_of_reach)
            .collect();
        let rest = match unclear
            .iter()
            .max_by(|a, b| a.ratio.ln().abs().total_cmp(&b.ratio.ln().abs()))
        {
            None => format!(
                "no material change in any row (every interval within ×{:.2})",
                comparison.margin
            ),
            Some(largest) => format!(
                "no row called; {} unclear, the largest {} {}, p (adj.) {}",
                unclear.len(),
                row_label(largest),
                ratio_with_interval(largest),
                p_value(largest.p_adjusted)
            ),
        };
        if is_effect {
            return format!(
                "{subject}: {rest}. Nothing shows that the model's probabilities depend on the skill's body, so a wording of it may not be told apart here."
            );
        }
        return format!("{subject}: {rest}.");
    }
    let verdict = match (worse.is_empty(), better.is_empty()) {
        (false, false) => "mixed",
        (false, true) => "worse",
        _ => "better",
    };
    format!("{subject}: {verdict}. {}.", parts.join(". "))
}

/// The table of one comparison, for the terminal.
pub fn table(comparison: &ScoreComparison) -> String {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    table.set_header(vec![
        "step",
        "category",
        "n",
        against_name(comparison),
        comparison.arm.name(),
        "odds ratio [95% CI]",
        "up/down",
        "p (adj.)",
        "verdict",
    ]);
    for row in &comparison.rows {
        table.add_row(vec![
            row.step.key().to_string(),
            row.category.clone().unwrap_or_else(|| "all".into()),
            row.n.to_string(),
            percent(row.mean_against),
            percent(row.mean_arm),
            ratio_with_interval(row),
            format!("{}/{}", row.up, row.down),
            format!("{} ({})", p_value(row.p), p_value(row.p_adjusted)),
            verdict_text(row),
        ]);
    }
    table.to_string()
}

/// `×0.30 [0.21, 0.44]`: a row's odds ratio and its interval.
fn ratio_with_interval(row: &ScoreRow) -> String {
    format!(
        "{} [{}, {}]",
        ratio(row.ratio),
        ratio(row.ratio_low).trim_start_matches('×'),
        ratio(row.ratio_high).trim_start_matches('×')
    )
}

fn against_name(comparison: &ScoreComparison) -> &'static str {
    comparison.against.name()
}

fn verdict_text(row: &ScoreRow) -> String {
    if row.out_of_reach {
        format!(
            "{}, out of reach ({} cut by sampler)",
            row.verdict.words(),
            row.cut
        )
    } else if row.cut > 0 {
        format!("{} ({} cut by sampler)", row.verdict.words(), row.cut)
    } else {
        row.verdict.words().to_string()
    }
}

/// Everything the terminal shows: each comparison's headline and table, then what was not
/// scored.
pub fn terminal(summary: &ScoreSummary) -> String {
    let mut out = String::new();
    for comparison in &summary.comparisons {
        out.push_str(&headline(comparison));
        out.push_str("\n\n");
        out.push_str(&table(comparison));
        out.push_str("\n\n");
    }
    out.push_str(&footer(summary));
    out
}

fn footer(summary: &ScoreSummary) -> String {
    let mut out = format!(
        "{} samples scored under temperature {}, top-k {}, top-p {}; odds ratios are geometric means over samples of the reference step's odds in each arm; verdicts need p (adj.) ≤ the family's level and an odds ratio beyond ×{:.2} (--margin).\n",
        summary.samples,
        summary.sampling.temperature,
        summary.sampling.top_k,
        summary.sampling.top_p,
        summary.margin
    );
    if summary
        .comparisons
        .iter()
        .any(|c| c.rows.iter().any(|r| r.out_of_reach))
    {
        out.push_str("Rows marked out of reach are never called better or worse: for half or more of their samples the sampler's top-k or top-p cuts the reference step in both arms, so it is a text the model writes in neither wording and its ratio compares two improbable texts. For an answers row, give those samples a `reference_answer` in the words the model would use (docs/score.md).\n");
    }
    if !summary.without_reference.is_empty() {
        out.push_str(&format!(
            "{} samples have no reference step (no law or `reference_call` says what they should do) and were not scored: {}\n",
            summary.without_reference.len(),
            summary.without_reference.join(", ")
        ));
    }
    if !summary.unscored.is_empty() {
        out.push_str(&format!(
            "{} (sample, arm) pairs could not be scored; the first: {} in {}: {}\n",
            summary.unscored.len(),
            summary.unscored[0].sample_id,
            summary.unscored[0].arm.name(),
            summary.unscored[0].why
        ));
    }
    let cached = if summary.prompt_tokens > 0 {
        100.0 * summary.cached_prompt_tokens as f64 / summary.prompt_tokens as f64
    } else {
        0.0
    };
    out.push_str(&format!(
        "{:.1} s, {} prompt tokens read ({cached:.0}% from the cache), no token decoded\n",
        summary.secs, summary.prompt_tokens
    ));
    out
}

/// `report.md`.
pub fn markdown(summary: &ScoreSummary) -> String {
    let mut out = format!("# Scored: {}\n\n", summary.pack);
    for comparison in &summary.comparisons {
        out.push_str(&format!(
            "## {}\n\n{}\n\n",
            comparison.name,
            headline(comparison)
        ));
        out.push_str(&format!(
            "| step | category | n | {} | {} | odds ratio [95% CI] | up/down | p (adj.) | verdict |\n|---|---|---|---|---|---|---|---|---|\n",
            comparison.against.name(),
            comparison.arm.name()
        ));
        for row in &comparison.rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {}/{} | {} ({}) | {} |\n",
                row.step.name(),
                row.category.clone().unwrap_or_else(|| "all".into()),
                row.n,
                percent(row.mean_against),
                percent(row.mean_arm),
                ratio_with_interval(row),
                row.up,
                row.down,
                p_value(row.p),
                p_value(row.p_adjusted),
                verdict_text(row)
            ));
        }
        out.push('\n');
    }
    out.push_str(&footer(summary));
    out
}

/// `report.html`: the same headlines and tables, each row with a bar of its ratio on a log
/// scale and the margin drawn.
pub fn html(summary: &ScoreSummary) -> String {
    let mut out = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>skilleval score</title><style>\
         body{font-family:sans-serif;max-width:70em;margin:2em auto;color:#222}\
         table{border-collapse:collapse;margin:1em 0}td,th{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:right}\
         td:first-child,td:nth-child(2),th{text-align:left}.worse{color:#b00020;font-weight:bold}\
         .better{color:#1b7f3b;font-weight:bold}.unclear{color:#777}.no_material_change{color:#555}\
         svg{vertical-align:middle}</style></head><body>",
    );
    out.push_str(&format!("<h1>Scored: {}</h1>", html_escape(&summary.pack)));
    for comparison in &summary.comparisons {
        out.push_str(&format!(
            "<h2>{}</h2><p class=\"headline\">{}</p><table><tr><th>step</th><th>category</th><th>n</th><th>{}</th><th>{}</th><th>odds ratio [95% CI]</th><th>log scale, ×1/100 … ×100</th><th>p (adj.)</th><th>verdict</th></tr>",
            html_escape(&comparison.name),
            html_escape(&headline(comparison)),
            comparison.against.name(),
            comparison.arm.name()
        ));
        for row in &comparison.rows {
            let class = serde_json::to_value(row.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} ({})</td><td class=\"{class}\">{}</td></tr>",
                html_escape(row.step.name()),
                html_escape(row.category.as_deref().unwrap_or("all")),
                row.n,
                percent(row.mean_against),
                percent(row.mean_arm),
                ratio_with_interval(row),
                ratio_bar(row, summary.margin),
                p_value(row.p),
                p_value(row.p_adjusted),
                html_escape(&verdict_text(row))
            ));
        }
        out.push_str("</table>");
    }
    out.push_str(&format!(
        "<pre>{}</pre></body></html>\n",
        html_escape(&footer(summary))
    ));
    out
}

/// A row's ratio and interval on a log axis from ×1/100 to ×100, with the margin shaded.
fn ratio_bar(row: &ScoreRow, margin: f64) -> String {
    let (width, span) = (200.0, 100f64.ln());
    let x = |r: f64| {
        let at = (r.max(1e-300).ln() / span).clamp(-1.0, 1.0);
        width / 2.0 + at * width / 2.0
    };
    format!(
        "<svg width=\"{width}\" height=\"14\"><rect x=\"{:.1}\" y=\"0\" width=\"{:.1}\" height=\"14\" fill=\"#eee\"/>\
         <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"7\" y2=\"7\" stroke=\"#333\"/><circle cx=\"{:.1}\" cy=\"7\" r=\"3\" fill=\"#333\"/>\
         <line x1=\"100\" x2=\"100\" y1=\"0\" y2=\"14\" stroke=\"#999\"/></svg>",
        x(1.0 / margin),
        x(margin) - x(1.0 / margin),
        x(row.ratio_low),
        x(row.ratio_high),
        x(row.ratio)
    )
}

/// JUnit XML: one case per row of each wording comparison (not the skill effect), failed when
/// its verdict is worse.
pub fn junit(summary: &ScoreSummary, id: &str) -> String {
    let wordings: Vec<&ScoreComparison> = summary
        .comparisons
        .iter()
        .filter(|c| c.name != "skill effect")
        .collect();
    let tests: usize = wordings.iter().map(|c| c.rows.len()).sum();
    let failures = wordings
        .iter()
        .flat_map(|c| &c.rows)
        .filter(|r| r.verdict == ScoreVerdict::Worse)
        .count();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"skilleval score\" tests=\"{tests}\" failures=\"{failures}\">\n"
    );
    for comparison in wordings {
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\">\n",
            xml(&format!("score of {} ({id})", comparison.name)),
            comparison.rows.len()
        ));
        for row in &comparison.rows {
            out.push_str(&format!(
                "    <testcase classname=\"skilleval.score\" name=\"{}\">",
                xml(&row_label(row))
            ));
            if row.verdict == ScoreVerdict::Worse {
                out.push_str(&format!(
                    "<failure message=\"{}\"/>",
                    xml(&format!(
                        "{} → {} ({}), p (adj.) {}",
                        percent(row.mean_against),
                        percent(row.mean_arm),
                        ratio(row.ratio),
                        p_value(row.p_adjusted)
                    ))
                ));
            }
            out.push_str("</testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Whether any wording row is worse (for `--fail-on worse`).
/// Whether the skill effect was scored and none of its rows is better or worse: the body
/// moves no reference step beyond the margin.
pub fn no_skill_effect(summary: &ScoreSummary) -> bool {
    summary
        .comparisons
        .iter()
        .find(|c| c.name == "skill effect")
        .is_some_and(|c| !c.any(ScoreVerdict::Better) && !c.any(ScoreVerdict::Worse))
}

pub fn any_worse(summary: &ScoreSummary) -> bool {
    summary
        .comparisons
        .iter()
        .filter(|c| c.name != "skill effect")
        .any(|c| c.any(ScoreVerdict::Worse))
}
