//! A score's readings for people and CI: the headline and table on the terminal, `report.md`,
//! `report.html` and JUnit XML, all from the same `ScoreSummary`.

use super::agreement::{Agreement, KindAgreement};
use super::measure::StepKind;
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

/// A change of rate in percentage points, signed, with one decimal: "-2.9", "+43.0".
pub fn points(difference: f64) -> String {
    let rounded = (difference * 1000.0).round() / 10.0;
    let rounded = if rounded == 0.0 { 0.0 } else { rounded };
    format!("{rounded:+.1}")
}

/// `-17.0 [-27.1, -8.9]`: a row's change in percentage points and its interval.
fn points_with_interval(row: &ScoreRow) -> String {
    format!(
        "{} [{}, {}]",
        points(row.difference),
        points(row.difference_low),
        points(row.difference_high)
    )
}

/// How often the baseline takes the skill's key step (its first call, or asking where the
/// skill asks), over the samples that should take it; `None` when no such step was scored.
pub fn key_step_rate(summary: &ScoreSummary) -> Option<(f64, &'static str)> {
    let comparison = summary.comparisons.first()?;
    // The baseline is the compared arm in the skill effect, and the one compared against in a
    // wording's comparison.
    let baseline = |row: &ScoreRow| match comparison.name == "skill effect" {
        true => row.mean_arm,
        false => row.mean_against,
    };
    let total = |kind: StepKind| comparison.totals().find(|r| r.step == kind);
    let asks = total(StepKind::Asks).or(total(StepKind::QuestionWords));
    let calls = total(StepKind::Calls);
    match (asks, calls) {
        (Some(a), Some(c)) if baseline(a) >= baseline(c) => Some((baseline(a), "asks the user")),
        (_, Some(c)) => Some((baseline(c), "opens the reference call")),
        (Some(a), None) => Some((baseline(a), "asks the user")),
        (None, None) => None,
    }
}

/// Under this the model barely acts on the skill, and the first line says so.
pub const BARELY_ACTS: f64 = 0.05;

/// The first line when the baseline barely takes the skill's key step: every verdict below
/// concerns a behaviour the model almost never shows.
pub fn barely_acts(summary: &ScoreSummary) -> Option<String> {
    let (rate, step) = key_step_rate(summary)?;
    (rate < BARELY_ACTS).then(|| {
        format!(
            "The model barely acts on this skill: with the baseline wording it {step} in {} of the prompts that should. The verdicts below concern a behaviour it almost never shows; before choosing a wording, try the skill's worked examples as earlier turns (`skill_examples = \"turns\"` with ```example blocks, docs/packs.md) or a larger model.",
            percent(rate)
        )
    })
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
                    "{} {} → {} ({} pp)",
                    row_label(r),
                    percent(r.mean_against),
                    percent(r.mean_arm),
                    points(r.difference)
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
            .filter(|r| r.verdict == ScoreVerdict::Unclear)
            .collect();
        let tested = comparison
            .rows
            .iter()
            .filter(|r| r.verdict != ScoreVerdict::Diagnostic)
            .count();
        let out_of_reach = comparison
            .rows
            .iter()
            .filter(|r| r.verdict == ScoreVerdict::OutOfReach)
            .count();
        let rest = match unclear
            .iter()
            .max_by(|a, b| a.difference.abs().total_cmp(&b.difference.abs()))
        {
            None if out_of_reach == tested => format!(
                "every row out of reach: its step is too rare in both arms for a sampled run of {} repeats to draw once",
                comparison.confirm_repeats
            ),
            None if out_of_reach > 0 => format!(
                "no material change in the rows in reach (every interval within {} pp, or {:.0}% of a rare step's rate); {out_of_reach} of {tested} rows out of reach, too rare for a sampled run of {} repeats to draw once",
                comparison.margin.points,
                comparison.margin.relative * 100.0,
                comparison.confirm_repeats
            ),
            None => format!(
                "no material change in any row (every interval within {} pp, or {:.0}% of a rare step's rate)",
                comparison.margin.points,
                comparison.margin.relative * 100.0
            ),
            Some(largest) => format!(
                "no row called; {} unclear, the largest {} {} pp, p (adj.) {}",
                unclear.len(),
                row_label(largest),
                points_with_interval(largest),
                p_value(largest.p_adjusted)
            ),
        };
        if is_effect {
            return format!(
                "{subject}: {rest}. Nothing shows that the model's behaviour depends on the skill's body, so a wording of it may not be told apart here."
            );
        }
        return format!("{subject}: {rest}.{}", unjudged(comparison));
    }
    let verdict = match (worse.is_empty(), better.is_empty()) {
        (false, false) => "mixed",
        (false, true) => "worse",
        _ => "better",
    };
    format!(
        "{subject}: {verdict}. {}.{}",
        parts.join(". "),
        unjudged(comparison)
    )
}

/// Said after a verdict when the comparison's answers or questions were read only as one
/// reference's words: a wording that calls more but answers worse must not read as plain better.
fn unjudged(comparison: &ScoreComparison) -> &'static str {
    match comparison
        .rows
        .iter()
        .any(|r| r.verdict == ScoreVerdict::Diagnostic)
    {
        true => " Its answers and questions to the user are not judged here: `--draws 8` judges them by the pack's laws.",
        false => "",
    }
}

const COLUMNS: [&str; 6] = [
    "Δ pp [95% CI]",
    "odds ratio",
    "up/down",
    "p (adj.)",
    "verdict",
    "",
];

/// A row's cells after its label, category, n and the two rates.
fn cells(row: &ScoreRow) -> Vec<String> {
    let tested = row.verdict != ScoreVerdict::Diagnostic;
    vec![
        points_with_interval(row),
        ratio(row.ratio),
        format!("{}/{}", row.up, row.down),
        match tested {
            true => format!("{} ({})", p_value(row.p), p_value(row.p_adjusted)),
            false => "—".into(),
        },
        verdict_text(row),
    ]
}

/// The table of one comparison, for the terminal.
pub fn table(comparison: &ScoreComparison) -> String {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    let mut header = vec![
        "step".to_string(),
        "category".into(),
        "n".into(),
        against_name(comparison).into(),
        comparison.arm.name().into(),
    ];
    header.extend(COLUMNS[..5].iter().map(|c| c.to_string()));
    table.set_header(header);
    for row in &comparison.rows {
        let mut line = vec![
            row.step.key().to_string(),
            row.category.clone().unwrap_or_else(|| "all".into()),
            row.n.to_string(),
            percent(row.mean_against),
            percent(row.mean_arm),
        ];
        line.extend(cells(row));
        table.add_row(line);
    }
    table.to_string()
}

fn against_name(comparison: &ScoreComparison) -> &'static str {
    comparison.against.name()
}

fn verdict_text(row: &ScoreRow) -> String {
    let mut notes = Vec::new();
    if row.cut > 0 {
        notes.push(format!("{} cut by sampler", row.cut));
    }
    if let Some(repeats) = row.repeats_to_confirm {
        notes.push(format!("a run confirms it at ≥ {repeats} repeats"));
    }
    match notes.is_empty() {
        true => row.verdict.words().to_string(),
        false => format!("{} ({})", row.verdict.words(), notes.join("; ")),
    }
}

/// Everything the terminal shows: the warning when the model barely acts, each comparison's
/// headline and table, then what was not scored.
pub fn terminal(summary: &ScoreSummary) -> String {
    let mut out = String::new();
    if let Some(line) = barely_acts(summary) {
        out.push_str(&line);
        out.push_str("\n\n");
    }
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
        "{} samples scored under temperature {}, top-k {}, top-p {}. Each rate is the mean over samples of the step's probability under that sampler (what a sampled run's rate converges to); a verdict needs p (adj.) ≤ the family's level and a change beyond the margin of {} pp, its whole interval beyond it, or, for a rare step, a change of at least {:.0}% of the larger rate (--margin, --margin-relative). A row whose expected draws in a sampled run of {} repeats are under one in both arms is out of reach (--confirm-repeats). The odds ratio (geometric mean over samples) is for reading a rare step; it decides nothing.\n",
        summary.samples,
        summary.sampling.temperature,
        summary.sampling.top_k,
        summary.sampling.top_p,
        summary.margin.points,
        summary.margin.relative * 100.0,
        summary.confirm_repeats
    );
    let diagnostic = summary
        .comparisons
        .iter()
        .any(|c| c.rows.iter().any(|r| r.verdict == ScoreVerdict::Diagnostic));
    if diagnostic && summary.draws == 0 {
        out.push_str("Rows of a reference's own words (answer_words, question_words) are diagnostics: one phrasing of the many the laws accept. `--draws 8` draws replies at those steps and judges them with the pack's laws, which gives the answers and asks rows their verdicts (docs/score.md).\n");
    } else if diagnostic {
        out.push_str(&format!(
            "answers and asks are the share of {} replies drawn at that step (the same seeds in every arm) that the pack's laws pass; answer_words and question_words, one reference phrasing's probability, are diagnostics.\n",
            summary.draws
        ));
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
    let decoded = match summary.drawn_tokens {
        0 => "no token decoded".to_string(),
        n => format!("{n} tokens decoded for drawn replies"),
    };
    out.push_str(&format!(
        "{:.1} s, {} prompt tokens read ({cached:.0}% from the cache), {decoded}\n",
        summary.secs, summary.prompt_tokens
    ));
    out
}

/// `report.md`.
pub fn markdown(summary: &ScoreSummary) -> String {
    let mut out = format!("# Scored: {}\n\n", summary.pack);
    if let Some(line) = barely_acts(summary) {
        out.push_str(&format!("**{line}**\n\n"));
    }
    for comparison in &summary.comparisons {
        out.push_str(&format!(
            "## {}\n\n{}\n\n",
            comparison.name,
            headline(comparison)
        ));
        out.push_str(&format!(
            "| step | category | n | {} | {} | {} |\n|---|---|---|---|---|---|---|---|---|---|\n",
            comparison.against.name(),
            comparison.arm.name(),
            COLUMNS[..5].join(" | ")
        ));
        for row in &comparison.rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                row.step.name(),
                row.category.clone().unwrap_or_else(|| "all".into()),
                row.n,
                percent(row.mean_against),
                percent(row.mean_arm),
                cells(row).join(" | ")
            ));
        }
        out.push('\n');
    }
    if let Some(agreement) = &summary.agreement {
        out.push_str(&agreement_markdown(agreement));
    }
    out.push_str(&footer(summary));
    out
}

/// The score against a sampled run, as a table per step kind.
fn agreement_markdown(agreement: &Agreement) -> String {
    let mut out = format!(
        "## Against the sampled run {}

Per (sample, arm): the scored rate against the share of the run's repeats that took the step (calls, arguments and no_call read from the first reply; answers and asks by the laws that judged the drawn replies, answers on the units that took the reference call).

| step | pairs | units | mean scored | mean drawn | correlation | calibration (scored → drawn, pairs) |\n|---|---|---|---|---|---|---|\n",
        agreement.run
    );
    for k in &agreement.kinds {
        out.push_str(&format!(
            "| {} | {} |\n",
            agreement_cells(k).join(" | "),
            k.bins
                .iter()
                .map(|b| format!(
                    "{} → {} ({})",
                    percent(b.mean_scored),
                    percent(b.mean_drawn),
                    b.pairs
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    out.push('\n');
    out
}

/// A step's agreement as both reports show it: step, pairs, units, the two means, the
/// correlation.
fn agreement_cells(k: &KindAgreement) -> [String; 6] {
    [
        k.step.key().to_string(),
        k.pairs.to_string(),
        k.units.to_string(),
        percent(k.mean_scored),
        percent(k.mean_drawn),
        k.correlation.map_or("—".into(), |r| format!("{r:.3}")),
    ]
}

/// A calibration plot: each (sample, arm) as a dot at its scored rate (x) and drawn share (y),
/// the diagonal where they agree.
fn calibration_plot(k: &KindAgreement) -> String {
    let size = 160.0;
    let at = |v: f64| 10.0 + v.clamp(0.0, 1.0) * size;
    let mut dots = String::new();
    for (scored, drawn, _) in &k.points {
        dots.push_str(&format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"#1f5f9f\" fill-opacity=\"0.5\"/>",
            at(*scored),
            at(1.0 - drawn)
        ));
    }
    format!(
        "<svg class=\"calibration\" width=\"180\" height=\"180\"><rect x=\"10\" y=\"10\" width=\"{size}\" height=\"{size}\" fill=\"none\" stroke=\"#999\"/>\
         <line x1=\"10\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"10\" stroke=\"#bbb\"/>{dots}</svg>",
        10.0 + size,
        10.0 + size
    )
}

/// The same, for report.html: a plot per step kind.
fn agreement_html(agreement: &Agreement) -> String {
    let mut out = format!(
        "<h2>Against the sampled run</h2><p>{}: each dot a (sample, arm), its scored rate across, the share of the run's repeats that took the step up; on the diagonal they agree.</p><table><tr><th>step</th><th>pairs</th><th>units</th><th>mean scored</th><th>mean drawn</th><th>correlation</th><th>plot</th></tr>",
        html_escape(&agreement.run)
    );
    for k in &agreement.kinds {
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td></tr>",
            agreement_cells(k).join("</td><td>"),
            calibration_plot(k)
        ));
    }
    out.push_str("</table>");
    out
}

/// `report.html`: the same headlines and tables, each row with a bar of its change in
/// percentage points and its margin drawn.
pub fn html(summary: &ScoreSummary) -> String {
    let mut out = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>skilleval score</title><style>\
         body{font-family:sans-serif;max-width:70em;margin:2em auto;color:#222}\
         table{border-collapse:collapse;margin:1em 0}td,th{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:right}\
         td:first-child,td:nth-child(2),th{text-align:left}.worse{color:#b00020;font-weight:bold}\
         .better{color:#1b7f3b;font-weight:bold}.unclear{color:#777}.no_material_change{color:#555}\
         .diagnostic,.out_of_reach{color:#999}.warning{background:#fff3cd;padding:.5em}\
         svg{vertical-align:middle}</style></head><body>",
    );
    out.push_str(&format!("<h1>Scored: {}</h1>", html_escape(&summary.pack)));
    if let Some(line) = barely_acts(summary) {
        out.push_str(&format!(
            "<p class=\"warning barely-acts\">{}</p>",
            html_escape(&line)
        ));
    }
    for comparison in &summary.comparisons {
        out.push_str(&format!(
            "<h2>{}</h2><p class=\"headline\">{}</p><table><tr><th>step</th><th>category</th><th>n</th><th>{}</th><th>{}</th><th>Δ pp [95% CI]</th><th>−50 … +50 pp</th><th>odds ratio</th><th>p (adj.)</th><th>verdict</th></tr>",
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
            let cells = cells(row);
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td></tr>",
                html_escape(row.step.name()),
                html_escape(row.category.as_deref().unwrap_or("all")),
                row.n,
                percent(row.mean_against),
                percent(row.mean_arm),
                html_escape(&cells[0]),
                points_bar(row),
                html_escape(&cells[1]),
                html_escape(&cells[3]),
                html_escape(&cells[4])
            ));
        }
        out.push_str("</table>");
    }
    if let Some(agreement) = &summary.agreement {
        out.push_str(&agreement_html(agreement));
    }
    out.push_str(&format!(
        "<pre>{}</pre></body></html>\n",
        html_escape(&footer(summary))
    ));
    out
}

/// A row's change and interval on an axis from −50 to +50 percentage points, with its material
/// change shaded.
fn points_bar(row: &ScoreRow) -> String {
    let width = 200.0;
    let x = |d: f64| width / 2.0 + (d / 0.5).clamp(-1.0, 1.0) * width / 2.0;
    format!(
        "<svg width=\"{width}\" height=\"14\"><rect x=\"{:.1}\" y=\"0\" width=\"{:.1}\" height=\"14\" fill=\"#eee\"/>\
         <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"7\" y2=\"7\" stroke=\"#333\"/><circle cx=\"{:.1}\" cy=\"7\" r=\"3\" fill=\"#333\"/>\
         <line x1=\"100\" x2=\"100\" y1=\"0\" y2=\"14\" stroke=\"#999\"/></svg>",
        x(-row.material),
        x(row.material) - x(-row.material),
        x(row.difference_low),
        x(row.difference_high),
        x(row.difference)
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
                        "{} → {} ({} pp), p (adj.) {}",
                        percent(row.mean_against),
                        percent(row.mean_arm),
                        points(row.difference),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::arm::Arm;
    use crate::eval::score::rows::{self, Rule};
    use crate::eval::score::{measure::StepScore, ScoreSettings};
    use crate::harness::backend::Sampling;

    fn step(id: &str, arm: Arm, kind: StepKind, p: f64) -> StepScore {
        StepScore {
            sample_id: id.into(),
            category: "c".into(),
            arm,
            kind,
            probability: p,
            likelihood: p.max(1e-12),
            cut_by_sampler: p == 0.0,
            text: String::new(),
            tokens: Vec::new(),
            prompt_tokens: 0,
            drawn: None,
        }
    }

    /// A skill effect whose baseline calls at `rate` on 30 samples, against a control at 0.
    fn summary_with_baseline_calls(rate: f64) -> ScoreSummary {
        let mut steps = Vec::new();
        for i in 0..30 {
            let id = format!("s{i}");
            steps.push(step(&id, Arm::Control, StepKind::Calls, 0.0));
            steps.push(step(&id, Arm::Baseline, StepKind::Calls, rate));
        }
        let settings = ScoreSettings::default();
        let rule = Rule {
            level: 0.05,
            margin: settings.margin,
            confirm_repeats: settings.confirm_repeats,
        };
        ScoreSummary {
            pack: "p".into(),
            model: None,
            sampling: Sampling::default(),
            margin: settings.margin,
            confirm_repeats: settings.confirm_repeats,
            draws: 0,
            variants: Vec::new(),
            control: true,
            samples: 30,
            without_reference: Vec::new(),
            unscored: Vec::new(),
            comparisons: vec![rows::compare(
                "skill effect",
                &steps,
                Arm::Baseline,
                Arm::Control,
                rule,
            )],
            prompt_tokens: 0,
            cached_prompt_tokens: 0,
            computed_tokens: 0,
            drawn_tokens: 0,
            secs: 0.0,
            agreement: None,
        }
    }

    // A change: the expected answers come from the rule as written (under 5%).

    #[test]
    fn a_baseline_that_barely_calls_is_said_first() {
        let summary = summary_with_baseline_calls(0.02);
        let line = barely_acts(&summary).expect("2% is under 5%");
        assert!(line.contains("2.0%"), "{line}");
        assert!(terminal(&summary).starts_with("The model barely acts"));
        assert!(markdown(&summary).contains("barely acts"));
        assert!(barely_acts(&summary_with_baseline_calls(0.4)).is_none());
    }

    #[test]
    fn a_headline_names_rates_and_points_not_odds() {
        let summary = summary_with_baseline_calls(0.4);
        let headline = headline(&summary.comparisons[0]);
        assert!(headline.contains("better"), "{headline}");
        assert!(headline.contains("0% → 40%"), "{headline}");
        assert!(headline.contains("+40.0 pp"), "{headline}");
        assert!(!headline.contains("not judged"), "{headline}");
    }

    #[test]
    fn a_comparison_with_every_row_out_of_reach_says_so_not_no_change() {
        // 0.1% on 30 samples: 0.18 expected draws in 6 repeats.
        let summary = summary_with_baseline_calls(0.001);
        let headline = headline(&summary.comparisons[0]);
        assert!(headline.contains("every row out of reach"), "{headline}");
        assert!(!headline.contains("no material change"), "{headline}");
    }

    #[test]
    fn a_better_headline_says_when_the_answers_were_not_judged() {
        let mut steps = Vec::new();
        for i in 0..30 {
            let id = format!("s{i}");
            steps.push(step(&id, Arm::Control, StepKind::Calls, 0.0));
            steps.push(step(&id, Arm::Baseline, StepKind::Calls, 0.4));
            steps.push(step(&id, Arm::Control, StepKind::AnswerWords, 0.01));
            steps.push(step(&id, Arm::Baseline, StepKind::AnswerWords, 0.02));
        }
        let mut summary = summary_with_baseline_calls(0.4);
        let rule = Rule {
            level: 0.05,
            margin: summary.margin,
            confirm_repeats: summary.confirm_repeats,
        };
        summary.comparisons = vec![rows::compare(
            "skill effect",
            &steps,
            Arm::Baseline,
            Arm::Control,
            rule,
        )];
        let headline = headline(&summary.comparisons[0]);
        assert!(headline.contains(": better."), "{headline}");
        assert!(headline.contains("not judged here"), "{headline}");
    }
}
