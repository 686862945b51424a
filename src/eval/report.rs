//! Renders a run's summary: terminal text, pull-request markdown, JSON and CSV. Every function
//! returns text; writing files is the caller's business.
//!
//! Every rendering starts with the skill's own effect (baseline against control), says plainly
//! when removing the skill's body changed nothing, then gives the wording comparison, the
//! per-law rows and the repeats a 10 pp effect would need.

use super::stats::{Arm, ArmSummary, Comparison, RepeatsNeeded, Row, Summary};

/// Samples listed under "Flaky samples"; a pull request needs examples, not the full list.
const FLAKY_SHOWN: usize = 20;

/// Beyond this many repeats the report says ">100": adding samples is the practical way.
const MANY_REPEATS: u64 = 100;

/// Columns holding numbers, aligned right.
const NUMERIC_COLUMNS: [usize; 6] = [1, 2, 3, 4, 5, 6];

/// What the report says when the model ignored the skill's body.
pub const NO_SKILL_EFFECT: &str = "the model's behaviour did not change when the skill's body was removed: a wording comparison on this set-up cannot show an effect";

/// The full report for the terminal: both comparisons with their category and law rows, the
/// statements and the repeats needed. Never styled and never wrapped to the terminal width,
/// so the output is the same wherever it is printed; the tables are built to fit in 100
/// columns (long law names can push a law table past that).
pub fn table(summary: &Summary) -> String {
    let mut out = String::new();
    if let Some(skill) = &summary.skill_effect {
        out.push_str(&format!("{}\n", comparison_title(skill)));
        out.push_str(&terminal_table(skill, &rows_of(skill), true));
        out.push_str(&format!("\n{}\n\n", skill_effect_statement(skill)));
    } else {
        out.push_str("Skill effect: not measured (--no-control).\n\n");
    }
    let wording = &summary.wording;
    out.push_str(&format!("{}\n", comparison_title(wording)));
    out.push_str(&terminal_table(wording, &rows_of(wording), true));
    out.push_str(&format!("\n{}\n", wording_statement(summary)));
    if let Some(errors) = errored_statement(summary) {
        out.push_str(&format!("{errors}\n"));
    }
    for comparison in summary.skill_effect.iter().chain([wording]) {
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

/// Text ready to paste into a pull request. `settings` is printed as given (model, repeats…).
pub fn markdown(summary: &Summary, title: &str, settings: &str) -> String {
    let mut out = format!("# {title}\n\n");
    match &summary.skill_effect {
        Some(skill) => {
            out.push_str(&format!("## {}\n\n", comparison_title(skill)));
            out.push_str(&format!("**{}**\n\n", skill_effect_statement(skill)));
            out.push_str(&markdown_table(skill, &rows_of(skill), true));
        }
        None => out.push_str(
            "## Skill effect\n\nNot measured: the run skipped the control arm (`--no-control`).\n",
        ),
    }
    let wording = &summary.wording;
    out.push_str(&format!("\n## {}\n\n", comparison_title(wording)));
    out.push_str(&format!("**{}**\n\n", wording_statement(summary)));
    if let Some(errors) = errored_statement(summary) {
        out.push_str(&format!("**{errors}**\n\n"));
    }
    out.push_str(&markdown_table(wording, &rows_of(wording), true));
    if wording.total.unpaired_runs > 0 {
        out.push_str(&format!(
            "\n{} run(s) had no partner in the other arm and were left out.\n",
            wording.total.unpaired_runs
        ));
    }
    out.push_str(&format!("\n{}\n", legend(summary)));

    for comparison in summary.skill_effect.iter().chain([wording]) {
        out.push_str(&format!(
            "\n## Per law, {}\n\n",
            comparison_name(comparison)
        ));
        if comparison.laws.is_empty() {
            out.push_str("The journal does not say which laws applied to which runs.\n");
        } else {
            out.push_str(
                "Pass rate of each law over the runs it applied to; Holm across laws.\n\n",
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

    out.push_str(&format!("\nSettings: {}\n", code_span(settings)));
    out
}

pub fn json(summary: &Summary) -> serde_json::Result<String> {
    serde_json::to_string_pretty(summary)
}

/// One line per row of each comparison: its categories, its total, then its laws. Rates and
/// differences as fractions, missing values empty.
pub fn csv(summary: &Summary) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "comparison",
        "reference",
        "treatment",
        "kind",
        "name",
        "samples",
        "pairs",
        "reference_rate",
        "reference_min",
        "reference_max",
        "treatment_rate",
        "treatment_min",
        "treatment_max",
        "delta",
        "delta_low",
        "delta_high",
        "p_value",
        "p_adjusted",
        "level",
        "mde",
        "mde_floored",
        "verdict",
        "repeats_for_target",
        "gapped_pairs",
        "unpaired_runs",
        "reference_errored",
        "treatment_errored",
    ])?;
    for comparison in summary.skill_effect.iter().chain([&summary.wording]) {
        let kinds = comparison
            .categories
            .iter()
            .map(|r| ("category", r))
            .chain([("total", &comparison.total)])
            .chain(comparison.laws.iter().map(|r| ("law", r)));
        for (kind, row) in kinds {
            let optional = |value: Option<f64>| value.map(|v| v.to_string()).unwrap_or_default();
            let verdict = serde_json::to_value(row.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let repeats = match row.repeats_for_target {
                RepeatsNeeded::Repeats(r) => r.to_string(),
                RepeatsNeeded::MoreSamples => "more_samples".into(),
                RepeatsNeeded::Unknown => String::new(),
            };
            writer.write_record([
                comparison.name.clone(),
                comparison.reference.name().to_string(),
                comparison.treatment.name().to_string(),
                kind.to_string(),
                row.name.clone(),
                row.samples.to_string(),
                row.pairs.to_string(),
                optional(row.reference.rate),
                optional(row.reference.band.map(|b| b.min)),
                optional(row.reference.band.map(|b| b.max)),
                optional(row.treatment.rate),
                optional(row.treatment.band.map(|b| b.min)),
                optional(row.treatment.band.map(|b| b.max)),
                optional(row.delta),
                optional(row.interval.map(|i| i.low)),
                optional(row.interval.map(|i| i.high)),
                row.p_value.to_string(),
                row.p_adjusted.to_string(),
                row.level.to_string(),
                optional(row.mde),
                row.mde_floored.to_string(),
                verdict,
                repeats,
                row.gapped_pairs.to_string(),
                row.unpaired_runs.to_string(),
                row.reference.errored.to_string(),
                row.treatment.errored.to_string(),
            ])?;
        }
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn comparison_name(comparison: &Comparison) -> String {
    match (comparison.reference, comparison.treatment) {
        (Arm::Control, Arm::Baseline) => "skill effect".into(),
        (Arm::Baseline, Arm::Variant) => "wording".into(),
        _ => comparison.name.replace('_', " "),
    }
}

fn comparison_title(comparison: &Comparison) -> String {
    match (comparison.reference, comparison.treatment) {
        (Arm::Control, Arm::Baseline) => {
            "Skill effect: baseline against control (the skill with its body removed)".into()
        }
        (Arm::Baseline, Arm::Variant) => "Wording: variant against baseline".into(),
        (r, t) => format!("{} against {}", t.name(), r.name()),
    }
}

/// Category rows, then the total.
fn rows_of(comparison: &Comparison) -> Vec<&Row> {
    comparison
        .categories
        .iter()
        .chain([&comparison.total])
        .collect()
}

/// "plain_city +40 pp [+20, +60]" for each changed row.
fn changed_rows(comparison: &Comparison) -> Vec<String> {
    comparison
        .categories
        .iter()
        .filter(|r| r.changed())
        .map(|r| {
            format!(
                "{} {} ({})",
                r.name,
                r.verdict_label(),
                delta_and_interval(r, 0)
            )
        })
        .collect()
}

fn skill_effect_statement(skill: &Comparison) -> String {
    if skill.any_change() {
        let changed = changed_rows(skill);
        let total = &skill.total;
        format!(
            "Removing the skill's body changed the model's behaviour: {}; total {} ({}).",
            if changed.is_empty() {
                "no single category, but".to_string()
            } else {
                changed.join(", ")
            },
            total.verdict_label(),
            delta_and_interval(total, 0)
        )
    } else {
        let mut text = NO_SKILL_EFFECT.to_string();
        text[..1].make_ascii_uppercase();
        format!(
            "{text} (total {}, {}).",
            delta_and_interval(&skill.total, 0),
            skill.total.verdict_label()
        )
    }
}

/// The wording headline: every category that changed, the total, and a warning when the skill's
/// body made no difference at all.
fn wording_statement(summary: &Summary) -> String {
    let wording = &summary.wording;
    let total = &wording.total;
    if total.samples == 0 {
        return "No data: no pair of runs could be scored.".into();
    }
    let changed = changed_rows(wording);
    let mut text = if changed.is_empty() {
        format!(
            "No category changed; total {} ({}).",
            total.verdict_label(),
            delta_and_interval(total, 0)
        )
    } else {
        format!(
            "Changed: {}; total {} ({}).",
            changed.join(", "),
            total.verdict_label(),
            delta_and_interval(total, 0)
        )
    };
    if !wording.any_change()
        && summary
            .skill_effect
            .as_ref()
            .is_some_and(|s| !s.any_change())
    {
        text.push_str(
            " Since removing the skill's body changed nothing either, this does not show that the wordings are equal.",
        );
    }
    text
}

/// Units that errored (the backend failed, or a recording did), which count as failures: said
/// aloud, since a rate alone does not show them.
fn errored_statement(summary: &Summary) -> Option<String> {
    let wording = &summary.wording.total;
    let mut parts = Vec::new();
    if let Some(skill) = &summary.skill_effect {
        parts.push(("control", skill.total.reference.errored));
    }
    parts.push(("baseline", wording.reference.errored));
    parts.push(("variant", wording.treatment.errored));
    let total: usize = parts.iter().map(|p| p.1).sum();
    (total > 0).then(|| {
        let counts: Vec<String> = parts.iter().map(|(arm, n)| format!("{arm} {n}")).collect();
        format!(
            "Errored units (counted as failures; the journal holds why): {}.",
            counts.join(", ")
        )
    })
}

fn legend(summary: &Summary) -> String {
    format!(
        "Rates: mean of per-sample pass rates in %, [lowest–highest across {} repeat(s)]. \
         Δ: treatment minus reference in percentage points, [{:.0}% paired bootstrap interval over \
         samples]. p: exact sign-flip permutation test over per-sample differences; (adj.): Holm \
         across categories (across laws in the law tables; the total is not adjusted). A verdict \
         needs adjusted p < {} and an interval that excludes 0. MDE: the change this run would \
         detect with {:.0}% power at the level a row faces when it is the only change, α/(rows \
         tested); * marks a variance floored at the pooled pass rate's. \"inconclusive\": Δ is at \
         least the MDE, yet the test did not reach its level. \"too few samples\": no outcome of \
         this many samples could reach that level.",
        summary.repeats,
        summary.confidence * 100.0,
        summary.alpha,
        summary.power * 100.0
    )
}

/// How many repeats each category of the wording comparison needs for an MDE of the target.
fn repeats_needed(summary: &Summary) -> String {
    let wording = &summary.wording;
    let parts: Vec<String> = wording
        .categories
        .iter()
        .chain([&wording.total])
        .map(|row| {
            let needed = match row.repeats_for_target {
                RepeatsNeeded::Repeats(r) if r > MANY_REPEATS => format!(">{MANY_REPEATS}"),
                RepeatsNeeded::Repeats(r) => r.to_string(),
                RepeatsNeeded::MoreSamples => "more samples".into(),
                RepeatsNeeded::Unknown => "?".into(),
            };
            format!("{} {needed}", row.name)
        })
        .collect();
    format!(
        "Repeats to detect {:.0} pp (wording): {}. The smallest r with MDE ≤ {:.0} pp when the \
         variance of a sample's difference is τ² + σ²_w/r: r = σ²_w / (n·((0.10 − s/2)/k)² − τ²), \
         σ²_w the repeat-to-repeat variance of one run's difference, τ² the spread of samples' \
         true differences, k = t(1 − level/2) + t(power), s the step of Δ. \"more samples\": τ² \
         alone exceeds the room, so no number of repeats gets there; \"?\": one repeat cannot \
         measure σ²_w.",
        summary.target_effect * 100.0,
        parts.join(", "),
        summary.target_effect * 100.0,
    )
}

fn headers(comparison: &Comparison, first: &str) -> Vec<String> {
    vec![
        first.to_string(),
        "n".into(),
        comparison.reference.name().to_string(),
        comparison.treatment.name().to_string(),
        "Δ pp [95% CI]".into(),
        "p (adj.)".into(),
        "MDE".into(),
        "verdict".into(),
    ]
}

/// Cells of one row; `digits` decimals for percentages.
fn cells(row: &Row, with_bands: bool, digits: usize) -> Vec<String> {
    let rate = |arm: &ArmSummary| {
        if with_bands {
            rate_and_band(arm, digits)
        } else {
            let percent = if digits == 0 { "" } else { "%" };
            arm.rate.map_or_else(
                || "—".into(),
                |r| format!("{:.*}{percent}", digits, r * 100.0),
            )
        }
    };
    vec![
        row.name.clone(),
        row.samples.to_string(),
        rate(&row.reference),
        rate(&row.treatment),
        delta_and_interval(row, digits),
        match row.samples {
            0 => "—".into(),
            // Nothing was adjusted (the total, or a family of one): one figure says it.
            _ if p_value(row.p_value) == p_value(row.p_adjusted) => p_value(row.p_value),
            _ => format!("{} ({})", p_value(row.p_value), p_value(row.p_adjusted)),
        },
        mde(row),
        row.verdict_label(),
    ]
}

fn terminal_table(comparison: &Comparison, rows: &[&Row], categories: bool) -> String {
    let header = headers(comparison, if categories { "category" } else { "law" });
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
const LAW_NAME_WIDTH: usize = 28;

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

fn markdown_table(comparison: &Comparison, rows: &[&Row], categories: bool) -> String {
    let header = headers(comparison, if categories { "category" } else { "law" });
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

/// "61% [50–67]"; the terminal's whole-number form drops the "%" to save width.
fn rate_and_band(arm: &ArmSummary, digits: usize) -> String {
    let percent = if digits == 0 { "" } else { "%" };
    match (arm.rate, arm.band) {
        (Some(rate), Some(band)) => format!(
            "{:.*}{percent} [{:.*}–{:.*}]",
            digits,
            rate * 100.0,
            digits,
            band.min * 100.0,
            digits,
            band.max * 100.0
        ),
        _ => "—".to_string(),
    }
}

/// "+12 [-3,+28]": Δ and its interval in percentage points.
fn delta_and_interval(row: &Row, digits: usize) -> String {
    match (row.delta, row.interval) {
        (Some(delta), Some(i)) => format!(
            "{} [{},{}]",
            points(delta, digits),
            points(i.low, digits),
            points(i.high, digits)
        ),
        _ => "—".to_string(),
    }
}

fn mde(row: &Row) -> String {
    match row.mde {
        Some(mde) => format!(
            "{:.0}{}",
            (mde * 100.0).ceil(),
            if row.mde_floored { "*" } else { "" }
        ),
        None => "—".into(),
    }
}

/// A difference in percentage points, always signed.
fn points(delta: f64, digits: usize) -> String {
    let scale = 10f64.powi(digits as i32);
    let rounded = (delta * 100.0 * scale).round() / scale;
    // Avoid printing "-0" for a difference lost to rounding.
    let rounded = if rounded == 0.0 { 0.0 } else { rounded };
    format!("{rounded:+.digits$}")
}

/// A p-value without its leading zero: three decimals below 0.1, two above, "1" for 1.
fn p_value(p: f64) -> String {
    let text = if p < 0.001 {
        return "<.001".to_string();
    } else if p < 0.1 {
        format!("{p:.3}")
    } else if p < 0.995 {
        format!("{p:.2}")
    } else {
        return "1".to_string();
    };
    text.strip_prefix('0').unwrap_or(&text).to_string()
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
    use crate::eval::stats::{summarize, Outcome};

    /// Laws that fail in a failing run of each category; `names-the-city` applies everywhere.
    fn laws_of(category: &str) -> (Vec<String>, Vec<String>) {
        let applied = match category {
            "plain_city" => vec!["calls-weather-with-place-as-written", "names-the-city"],
            _ => vec!["names-the-city", "no-unsupported-numbers"],
        };
        let failing = match category {
            "plain_city" => vec!["calls-weather-with-place-as-written"],
            _ => vec!["no-unsupported-numbers", "names-the-city"],
        };
        let own = |v: Vec<&str>| v.into_iter().map(String::from).collect();
        (own(applied), own(failing))
    }

    /// Every arm of one (sample, repeat): (control, baseline, variant) passes.
    fn push_units(
        outcomes: &mut Vec<Outcome>,
        (category, sample, repeat): (&str, usize, u32),
        passes: [bool; 3],
        variant_gapped: bool,
    ) {
        let (applied, failing) = laws_of(category);
        let arms = [Arm::Control, Arm::Baseline, Arm::Variant];
        for (arm, passed) in arms.into_iter().zip(passes) {
            outcomes.push(Outcome {
                sample_id: format!("{category}-{sample:02}"),
                category: category.to_string(),
                arm,
                repeat,
                passed,
                failed_laws: if passed { vec![] } else { failing.clone() },
                applied_laws: applied.clone(),
                gapped: variant_gapped && arm == Arm::Variant,
                errored: false,
            });
        }
    }

    /// Four categories with known shapes: clearly better, clearly worse, flaky A/A, gapped.
    /// The control arm fails 10 of the 12 city_country samples the baseline passes: there the
    /// skill's body matters.
    fn fixture_outcomes(control_like_baseline: bool) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        for repeat in 0..3 {
            for sample in 0..12 {
                // The variant fixes 9 of 12 samples that always failed.
                let baseline = sample < 3;
                push_units(
                    &mut outcomes,
                    ("plain_city", sample, repeat),
                    [baseline, baseline, true],
                    false,
                );
                // The variant breaks 10 of 12 samples.
                let control = control_like_baseline || sample >= 10;
                push_units(
                    &mut outcomes,
                    ("city_country", sample, repeat),
                    [control, true, sample < 2],
                    false,
                );
            }
            for sample in 0..6 {
                // Flaky in both arms, in different repeats.
                let step = sample * (repeat as usize + 1);
                let (baseline, variant) = (!step.is_multiple_of(4), !(step + 1).is_multiple_of(4));
                push_units(
                    &mut outcomes,
                    ("chitchat", sample, repeat),
                    [baseline, baseline, variant],
                    false,
                );
                // Two samples lack fixtures on the variant side.
                let passes = sample.is_multiple_of(2);
                push_units(
                    &mut outcomes,
                    ("rare_place", sample, repeat),
                    [passes, passes, passes],
                    sample < 2,
                );
            }
        }
        outcomes
    }

    fn fixture_summary() -> Summary {
        summarize(&fixture_outcomes(false)).expect("fixture outcomes are consistent")
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
    fn the_terminal_report_fits_in_100_columns() {
        let text = table(&fixture_summary());
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
    fn a_skill_body_that_changes_nothing_is_said_plainly() {
        let summary = summarize(&fixture_outcomes(true)).unwrap();
        let skill = summary.skill_effect.as_ref().unwrap();
        assert!(!skill.any_change());
        for text in [table(&summary), markdown(&summary, "t", "s")] {
            assert!(text.contains(&NO_SKILL_EFFECT[1..]), "{text}");
            // The wording's changes are still named, and not called equal.
            assert!(text.contains("Changed: city_country worse"), "{text}");
        }
        // With the body mattering, the report names where.
        let text = table(&fixture_summary());
        assert!(!text.contains(&NO_SKILL_EFFECT[1..]), "{text}");
        assert!(
            text.contains("changed the model's behaviour: city_country better"),
            "{text}"
        );
    }

    #[test]
    fn no_change_anywhere_is_not_read_as_equal_wordings() {
        // Control, baseline and variant alike.
        let mut outcomes = Vec::new();
        for sample in 0..12 {
            push_units(
                &mut outcomes,
                ("plain_city", sample, 0),
                [sample < 6; 3],
                false,
            );
        }
        let summary = summarize(&outcomes).unwrap();
        let text = markdown(&summary, "t", "s");
        assert!(text.contains("No category changed"), "{text}");
        assert!(
            text.contains("this does not show that the wordings are equal"),
            "{text}"
        );
    }

    #[test]
    fn json_round_trips_the_summary() {
        let summary = fixture_summary();
        let text = json(&summary).unwrap();
        let back: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!(back, summary);
        assert!(text.contains("\"verdict\": \"too_few_samples\""), "{text}");
        assert!(text.contains("\"p_adjusted\""), "{text}");
    }

    #[test]
    fn csv_has_a_row_per_category_total_and_law_of_each_comparison() {
        let text = csv(&fixture_summary()).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        let wording: Vec<(&str, &str)> = rows
            .iter()
            .filter(|r| &r[0] == "wording")
            .map(|r| (&r[3], &r[4]))
            .collect();
        assert_eq!(
            wording,
            [
                ("category", "chitchat"),
                ("category", "city_country"),
                ("category", "plain_city"),
                ("category", "rare_place"),
                ("total", "total"),
                ("law", "calls-weather-with-place-as-written"),
                ("law", "names-the-city"),
                ("law", "no-unsupported-numbers"),
            ]
        );
        assert_eq!(rows.iter().filter(|r| &r[0] == "skill_effect").count(), 8);
        let plain_city = rows
            .iter()
            .find(|r| &r[0] == "wording" && &r[4] == "plain_city")
            .unwrap();
        assert_eq!(&plain_city[7], "0.25");
        assert_eq!(&plain_city[10], "1");
        assert_eq!(&plain_city[13], "0.75");
        assert_eq!(&plain_city[21], "better");
        let rare_place = rows
            .iter()
            .find(|r| &r[0] == "wording" && &r[4] == "rare_place")
            .unwrap();
        assert_eq!(&rare_place[23], "6", "rare_place gaps");
    }

    #[test]
    fn an_empty_summary_renders_without_data() {
        let summary = summarize(&[]).unwrap();
        let text = markdown(&summary, "t", "s");
        assert!(text.contains("No data: no pair of runs"), "{text}");
        assert!(text.contains("--no-control"), "{text}");
        assert!(table(&summary).contains("no data"));
        assert!(csv(&summary)
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .starts_with("wording,baseline,variant,total,total,0,0,,"));
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

    #[test]
    fn formatting_helpers() {
        assert_eq!(points(-0.00001, 1), "+0.0");
        assert_eq!(points(0.125, 1), "+12.5");
        assert_eq!(points(-0.5, 0), "-50");
        assert_eq!(p_value(0.0004), "<.001");
        assert_eq!(p_value(0.0123), ".012");
        assert_eq!(p_value(0.531), ".53");
        assert_eq!(p_value(1.0), "1");
        assert_eq!(code_span("a `b` c"), "``a `b` c``");
        assert_eq!(escape_cell("a|b"), "a\\|b");
    }
}
