//! A run's summary as people and machines read it: the terminal table (`table.rs`), the
//! pull-request markdown (`markdown.rs`), `summary.json` and `summary.csv` (`summary_files.rs`),
//! the self-contained HTML page (`html.rs`, with its forest plots in `forest.rs` and the samples
//! whose arms disagree in `pairs.rs`), JUnit XML for CI (`junit.rs`), and two runs side by side
//! (`compare.rs`). `finish.rs` writes a run folder's reports from the run as `record::load`
//! reads it back, so any run's reports can be rebuilt from its journal and manifest. Renderers
//! return text; writing files is `finish`'s business. This module holds the wording they share: titles,
//! the headline statements, the legend, and how figures print.
//!
//! Every rendering starts with the skill's own effect (baseline against control), says plainly
//! when removing the skill's body changed nothing, then gives the wording comparison, the
//! per-law rows and the repeats a 10 pp effect would need.

pub mod compare;
pub mod errors;
pub mod finish;
#[cfg(test)]
mod fixture;
mod forest;
pub mod gaps;
pub mod html;
pub mod junit;
mod markdown;
pub(crate) mod markup;
pub mod pairs;
pub mod pinned;
mod summary_files;
mod table;

pub use markdown::markdown;
pub use summary_files::{csv, json};
pub use table::table;

use super::stats::{ArmSummary, Comparison, RepeatsNeeded, Row, Summary, Verdict};
use crate::eval::arm::Arm;

/// Beyond this many repeats the report says ">100": adding samples is the practical way.
const MANY_REPEATS: u64 = 100;

/// What the report says when the model ignored the skill's body.
pub const NO_SKILL_EFFECT: &str = "the model's behaviour did not change when the skill's body was removed: the baseline wording is not shown to do anything, so a variant can only be told apart from a wording with no measurable effect, and a variant that changed nothing may still differ (`skilleval score` sees what sampling a weak model misses)";

/// Said after a wording's changes when the skill's body changed nothing measurable: what a
/// "better" or "worse" there can mean.
pub const CHANGE_WITHOUT_SKILL_EFFECT: &str = "The skill's body changed nothing measurable, so this compares the variant with a wording the model does not measurably follow: a row called better is a change from doing nothing, not evidence that the model follows the variant; read its transcripts, or score both wordings (`skilleval score`), before choosing it.";

fn is_a_a(comparison: &Comparison) -> bool {
    comparison.label.as_deref() == Some(super::stats::A_A_LABEL)
}

/// The part of the skill the control arm removed: its body, unless the comparison is labelled
/// with another (`description`, for a pack whose control removes that).
fn removed_part(skill_effect: &Comparison) -> &str {
    skill_effect.label.as_deref().unwrap_or("body")
}

/// What the report says when removing the skill's description changed nothing. The name is
/// still offered, so this says less than an ignored body does: another description may still
/// add to the name or distract from it (on the routing pack a misleading one did).
pub const NO_DESCRIPTION_EFFECT: &str = "the model's behaviour did not change when the skill's description was removed: the skill's name alone routed as well, so a description can only add to the name or distract from it";

/// What the report says when removing the part the control removed changed nothing.
fn no_skill_effect(skill_effect: &Comparison) -> String {
    match removed_part(skill_effect) {
        "description" => NO_DESCRIPTION_EFFECT,
        _ => NO_SKILL_EFFECT,
    }
    .to_string()
}

fn comparison_name(comparison: &Comparison) -> String {
    match (
        comparison.reference,
        comparison.treatment,
        &comparison.label,
    ) {
        (Arm::Control, Arm::Baseline, _) => "skill effect".into(),
        _ if is_a_a(comparison) => "A/A".into(),
        (Arm::Baseline, t, Some(label)) if t.variant_index().is_some() => {
            format!("wording, {label}")
        }
        (Arm::Baseline, Arm::Variant(0), None) => "wording".into(),
        (Arm::Baseline, t, None) if t.variant_index().is_some() => {
            format!("wording, {}", t.name())
        }
        _ => comparison.name.replace('_', " "),
    }
}

fn comparison_title(comparison: &Comparison) -> String {
    match (
        comparison.reference,
        comparison.treatment,
        &comparison.label,
    ) {
        (Arm::Control, Arm::Baseline, _) => format!(
            "Skill effect: baseline against control (the skill with its {} removed)",
            removed_part(comparison)
        ),
        _ if is_a_a(comparison) => {
            "A/A: the baseline against a second draw of itself (no variant ran)".into()
        }
        (Arm::Baseline, Arm::Variant(0), None) => "Wording: variant against baseline".into(),
        (Arm::Baseline, t, label) if t.variant_index().is_some() => format!(
            "Wording: {} ({}) against baseline",
            label.as_deref().unwrap_or(t.name()),
            t.name()
        ),
        (r, t, _) => format!("{} against {}", t.name(), r.name()),
    }
}

/// The short name of a wording comparison's variant in tables that set several side by side.
fn variant_column(comparison: &Comparison) -> String {
    comparison
        .label
        .clone()
        .unwrap_or_else(|| comparison.treatment.name().to_string())
}

/// The headline of each wording comparison: "Wording: …", or "Wording, b.md: …" per variant
/// in a run of several.
fn wording_headlines(summary: &Summary) -> Vec<String> {
    let several = summary.wordings().count() > 1;
    summary
        .wordings()
        .map(|wording| {
            let head = if is_a_a(wording) {
                "A/A (the baseline against a second draw of itself)".to_string()
            } else if several {
                format!("Wording, {}", variant_column(wording))
            } else {
                "Wording".to_string()
            };
            format!("{head}: {}", wording_statement(summary, wording))
        })
        .collect()
}

/// Said under the tables of a run with several variants: how far its correction reaches.
fn several_variants_note(summary: &Summary) -> Option<String> {
    let count = summary.wordings().count();
    (count > 1).then(|| {
        format!(
            "{count} variants against one baseline, on the same seeds: each variant's rows share \
             {:.3} of the run's {} error budget, so a variant is not called better or worse for \
             having been tried among many.",
            summary.alpha / count as f64,
            summary.alpha
        )
    })
}

/// Variants side by side: per category (and the total), each variant's Δ, interval and verdict.
fn variants_grid(summary: &Summary) -> (Vec<String>, Vec<Vec<String>>) {
    let wordings: Vec<&Comparison> = summary.wordings().collect();
    let mut header = vec!["category".to_string()];
    header.extend(wordings.iter().map(|w| variant_column(w)));
    let names: Vec<&str> = summary
        .wording
        .categories
        .iter()
        .map(|r| r.name.as_str())
        .chain(["total"])
        .collect();
    let body = names
        .iter()
        .map(|name| {
            let mut cells = vec![name.to_string()];
            for wording in &wordings {
                let row = wording
                    .categories
                    .iter()
                    .chain([&wording.total])
                    .find(|r| r.name == *name);
                cells.push(match row {
                    Some(row) if row.samples > 0 => {
                        format!("{} {}", delta_and_interval(row, 0), row.verdict_label())
                    }
                    _ => "—".into(),
                });
            }
            cells
        })
        .collect();
    (header, body)
}

/// Category rows, then the total.
fn rows_of(comparison: &Comparison) -> Vec<&Row> {
    comparison
        .categories
        .iter()
        .chain([&comparison.total])
        .collect()
}

/// How a changed row reads in a headline: a category or the total by its Δ (or by its share of
/// laws held, when that is what moved), a law by its two rates.
fn change_phrase(row: &Row, law: bool) -> String {
    let percent = |r: Option<f64>| r.map_or("—".to_string(), |r| format!("{:.0}%", r * 100.0));
    if law {
        return format!(
            "{} {} → {}",
            row.name,
            percent(row.reference.rate),
            percent(row.treatment.rate)
        );
    }
    match (&row.held, row.pass_verdict()) {
        (Some(held), None) if matches!(held.verdict, Verdict::Better | Verdict::Worse) => format!(
            "{} (laws held {:.0}% → {:.0}%; passes {})",
            row.name,
            held.reference * 100.0,
            held.treatment * 100.0,
            delta_and_interval(row, 0)
        ),
        _ => format!("{} {}", row.name, delta_and_interval(row, 0)),
    }
}

/// The rows of a comparison that went one way (`worse`: declined), categories first, then laws.
fn moved_rows(comparison: &Comparison, worse: bool) -> Vec<String> {
    let went = |row: &Row, v: Verdict| {
        row.verdict == v
            || (row.verdict == Verdict::Mixed
                && (row.pass_verdict() == Some(v)
                    || row.held.as_ref().is_some_and(|h| h.verdict == v)))
    };
    let wanted = if worse {
        Verdict::Worse
    } else {
        Verdict::Better
    };
    let categories = comparison
        .categories
        .iter()
        .filter(|r| went(r, wanted))
        .map(|r| change_phrase(r, false));
    let laws = comparison
        .laws
        .iter()
        .filter(|r| went(r, wanted))
        .map(|r| change_phrase(r, true));
    categories.chain(laws).collect()
}

/// The total as a headline ends: its verdict and Δ, or "mixed" when its categories moved apart.
fn total_phrase(total: &Row) -> String {
    if total.verdict == Verdict::Mixed {
        format!(
            "total mixed ({}): its categories moved in opposite directions",
            delta_and_interval(total, 0)
        )
    } else if let (Some(held), None, true) = (&total.held, total.pass_verdict(), total.changed()) {
        let direction = if total.verdict == Verdict::Better {
            "better"
        } else {
            "worse"
        };
        format!(
            "total {direction} on laws held ({:.0}% → {:.0}%; passes {})",
            held.reference * 100.0,
            held.treatment * 100.0,
            delta_and_interval(total, 0)
        )
    } else {
        format!(
            "total {} ({})",
            total.verdict_label(),
            delta_and_interval(total, 0)
        )
    }
}

/// What moved in a comparison: "Worse: …. Better: …; total …." (or that nothing did).
fn movements(comparison: &Comparison) -> String {
    let mut parts = Vec::new();
    for (worse, word) in [(true, "Worse"), (false, "Better")] {
        let rows = moved_rows(comparison, worse);
        if !rows.is_empty() {
            parts.push(format!("{word}: {}", rows.join(", ")));
        }
    }
    if parts.is_empty() {
        parts.push("No category or law changed beyond noise".to_string());
    }
    format!("{}; {}.", parts.join(". "), total_phrase(&comparison.total))
}

fn skill_effect_statement(skill: &Comparison) -> String {
    let part = removed_part(skill);
    if skill.any_change() {
        let mut parts = Vec::new();
        let better = moved_rows(skill, false);
        let worse = moved_rows(skill, true);
        if !better.is_empty() {
            parts.push(format!("more often with it: {}", better.join(", ")));
        }
        if !worse.is_empty() {
            parts.push(format!("less often with it: {}", worse.join(", ")));
        }
        format!(
            "The skill's {part} changes what the model does (baseline, with it, against the control, without it): {}; {}.",
            parts.join("; "),
            total_phrase(&skill.total)
        )
    } else {
        let mut text = no_skill_effect(skill);
        text[..1].make_ascii_uppercase();
        format!(
            "{text} (total {}, {}).",
            delta_and_interval(&skill.total, 0),
            skill.total.verdict_label()
        )
    }
}

/// The wording headline: what got worse first (categories, then laws, by name), then what got
/// better, then the total; a variant that met more unrecorded calls than the baseline says so;
/// and a warning when the skill's body made no difference at all.
fn wording_statement(summary: &Summary, wording: &Comparison) -> String {
    let total = &wording.total;
    if total.samples == 0 {
        return "No data: no pair of runs could be scored.".into();
    }
    let mut text = movements(wording);
    let (reference_gaps, treatment_gaps) = wording.gaps();
    if treatment_gaps > reference_gaps {
        text.push_str(&format!(
            " {treatment_gaps} of its runs met a call no fixture answers that could have changed their verdict, against {reference_gaps} of the {}'s (scored as judged).",
            wording.reference.name()
        ));
    }
    if let Some(skill) = summary.skill_effect.as_ref() {
        if !wording.any_change() && !skill.any_change() && !is_a_a(wording) {
            text.push_str(&format!(
                " Since removing the skill's {} changed nothing either, this does not show that the wordings are equal.",
                removed_part(skill)
            ));
        } else if wording.any_change() && !skill.any_change() && removed_part(skill) == "body" {
            text.push(' ');
            text.push_str(CHANGE_WITHOUT_SKILL_EFFECT);
        }
    }
    text
}

/// The rows of a comparison where the run could not see a change in some direction, said in
/// words, so that a short "↓ unseen" in the table is never read as "no decline": either the
/// reference's rate leaves less room that way than the change the run finds the other way, or
/// the row has too few samples to find a change of any size four times in five.
fn blind_spots(comparison: &Comparison) -> Option<String> {
    let reference = comparison.reference.name();
    let mut sentences = Vec::new();
    for (up, word) in [(false, "a decline"), (true, "a rise")] {
        let rows: Vec<String> = comparison
            .rows()
            .filter(|r| {
                let (rise, decline) = r.unseen();
                (if up { rise } else { decline }) && !(rise && decline)
            })
            .map(|r| {
                format!(
                    "{} (the {reference} passes {:.0}%)",
                    r.name,
                    r.reference.rate.unwrap_or(0.0) * 100.0
                )
            })
            .collect();
        if !rows.is_empty() {
            sentences.push(format!(
                "Could not see {word} in {}: the {reference} leaves too little room for one \
                 this run would find.",
                rows.join(", ")
            ));
        }
    }
    let underpowered: Vec<String> = comparison
        .rows()
        .filter(|r| r.unseen() == (true, true))
        .map(|r| format!("{} ({} samples)", r.name, r.samples))
        .collect();
    if !underpowered.is_empty() {
        sentences.push(format!(
            "No change of any size would be found {:.0}% of the time in {}: a verdict there is \
             possible, a claim of no change is not.",
            super::stats::POWER * 100.0,
            underpowered.join(", ")
        ));
    }
    (!sentences.is_empty()).then(|| sentences.join(" "))
}

/// The graded outcome of each category and the total: the mean share of a run's laws that
/// held, in each arm, and the rows where it carried a verdict.
fn held_line(comparison: &Comparison) -> Option<String> {
    let parts: Vec<String> = rows_of(comparison)
        .into_iter()
        .filter_map(|row| {
            let held = row.held.as_ref()?;
            let verdict = match held.verdict {
                Verdict::Better | Verdict::Worse => format!(
                    " {} (adj. p {})",
                    if held.verdict == Verdict::Better {
                        "better"
                    } else {
                        "worse"
                    },
                    p_value(held.p_adjusted)
                ),
                _ => String::new(),
            };
            Some(format!(
                "{} {:.0}% → {:.0}%{verdict}",
                row.name,
                held.reference * 100.0,
                held.treatment * 100.0
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "Laws held (mean share of a run's laws that held, {} → {}): {}.",
            comparison.reference.name(),
            comparison.treatment.name(),
            parts.join(", ")
        )
    })
}

/// The lines under a comparison's table: the laws-held figures, and where it could not see.
fn comparison_notes(comparison: &Comparison) -> Vec<String> {
    [
        held_line(comparison),
        gaps_line(comparison),
        blind_spots(comparison),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Runs of each arm that met a call no fixture answers which could have changed their verdict
/// (a run that failed before any answer is not counted: no recording could have saved it).
fn gaps_line(comparison: &Comparison) -> Option<String> {
    let (reference, treatment) = comparison.gaps();
    (reference + treatment > 0).then(|| {
        format!(
            "Gaps (runs where a call no fixture answers could have changed the verdict, scored as judged; a run that failed before the gap is not counted): {} {reference}, {} {treatment}.",
            comparison.reference.name(),
            comparison.treatment.name()
        )
    })
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
    for wording in summary.wordings() {
        parts.push((wording.treatment.name(), wording.total.treatment.errored));
    }
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
         samples, {} resamples]. laws held: the mean share of a run's laws that held, in each arm \
         (a graded outcome that moves where samples seldom pass every law). p: sign-flip \
         permutation test over per-sample differences, exact unless marked ~ (Monte-Carlo); \
         (adj.): every row of a comparison, its categories on both outcomes, the total and every \
         law, tested as one family by a step-down min-P test over {} joint sign flips of whole \
         samples, which keeps the chance of any false verdict in the comparison under {}; with \
         several variants each gets an equal share; the skill effect is a family of its own. \
         {}; \"(laws held)\" marks one the graded outcome carried, \
         \"mixed\" changes in opposite directions. Gapped runs (a call no fixture answers) are \
         scored as judged. MDE: the change this run would detect with {:.0}% power when it is \
         the only change; where the reference leaves no room for a change that size in one \
         direction, the verdict says which direction the run could not see; * marks a variance \
         floored at the pooled pass rate's. \"inconclusive\": Δ is at least the MDE, yet the \
         test did not reach its level. \"too few samples\": no outcome of this many samples \
         could be called.",
        summary.repeats,
        summary.confidence * 100.0,
        summary.bootstrap_resamples,
        summary.joint_flips,
        summary.alpha,
        verdict_rule(summary),
        summary.power * 100.0
    )
}

/// What a row needs for a verdict. A sequential run keeps part of the budget for its later
/// looks, so there an adjusted p under the level is not enough, and the legend must say so.
fn verdict_rule(summary: &Summary) -> String {
    match &summary.sequential {
        None => format!(
            "A verdict needs adjusted p < {} and an interval that excludes 0",
            summary.alpha
        ),
        Some(looks) => format!(
            "This run looked after each repeat ({} of {} planned), spending the budget as {}: \
             a verdict needs a row to cross its look's boundary, stricter than adjusted p < {} \
             (the adj. p shown is the one-look figure), and an interval that excludes 0",
            looks.at.last().copied().unwrap_or(0),
            looks.planned,
            looks.spending.describe(),
            summary.alpha
        ),
    }
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

/// Column headers; `reference` and `treatment` name the two rate columns.
fn headers(reference: &str, treatment: &str, first: &str) -> Vec<String> {
    vec![
        first.to_string(),
        "n".into(),
        reference.to_string(),
        treatment.to_string(),
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
            _ => {
                let raw = format!(
                    "{}{}",
                    if row.p_exact { "" } else { "~" },
                    p_value(row.p_value)
                );
                format!("{raw} ({})", p_value(row.p_adjusted))
            }
        },
        mde(row),
        row.verdict_label(),
    ]
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
pub(crate) fn p_value(p: f64) -> String {
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

#[cfg(test)]
mod tests {
    use super::fixture::{fixture_outcomes, fixture_summary, push_units};
    use super::*;
    use crate::eval::stats::summarize;

    #[test]
    fn a_control_without_the_description_is_named_as_such() {
        let mut summary = summarize(&fixture_outcomes(true)).unwrap();
        summary.label_control("description");
        for text in [table(&summary), markdown(&summary, "t", "s")] {
            assert!(
                text.contains("control (the skill with its description removed)"),
                "{text}"
            );
            assert!(text.contains(&NO_DESCRIPTION_EFFECT[1..]), "{text}");
            assert!(!text.contains("body"), "{text}");
        }
        let mut summary = fixture_summary();
        summary.label_control("description");
        assert!(table(&summary).contains("The skill's description changes what the model does"));
    }

    #[test]
    fn a_skill_body_that_changes_nothing_is_said_plainly() {
        let summary = summarize(&fixture_outcomes(true)).unwrap();
        let skill = summary.skill_effect.as_ref().unwrap();
        assert!(!skill.any_change());
        for text in [table(&summary), markdown(&summary, "t", "s")] {
            assert!(text.contains(&NO_SKILL_EFFECT[1..]), "{text}");
            // The wording's changes are still named, and not called equal, and the headline
            // says what a change can mean when the body itself changed nothing.
            assert!(text.contains("Worse: city_country"), "{text}");
            assert!(text.contains(CHANGE_WITHOUT_SKILL_EFFECT), "{text}");
            assert!(!text.contains("cannot show an effect"), "{text}");
        }
        // JUnit fails the skill effect's case, where CI can act on it.
        let xml = junit::junit(&summary, "r");
        assert!(xml.contains("type=\"no-skill-effect\""), "{xml}");
        assert!(
            xml.contains("<testsuite name=\"skill effect (r)\" tests=\"1\" failures=\"1\""),
            "{xml}"
        );
        // With the body mattering, the report names where, and the case passes.
        let text = table(&fixture_summary());
        assert!(!text.contains(&NO_SKILL_EFFECT[1..]), "{text}");
        assert!(!text.contains(CHANGE_WITHOUT_SKILL_EFFECT), "{text}");
        let xml = junit::junit(&fixture_summary(), "r");
        assert!(xml.contains("skilleval.skill_effect"), "{xml}");
        assert!(!xml.contains("no-skill-effect"), "{xml}");
        // Better means the baseline, with the body, beats the control, without it.
        assert!(
            text.contains("against the control, without it): more often with it: city_country"),
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
        assert!(text.contains("No category or law changed"), "{text}");
        assert!(
            text.contains("this does not show that the wordings are equal"),
            "{text}"
        );
    }

    #[test]
    fn a_sequential_run_does_not_promise_a_verdict_at_adjusted_p_under_the_level() {
        // A row at adj. p .04 stays "no change" after six looks; the legend must not say
        // otherwise.
        let mut summary = fixture_summary();
        assert!(legend(&summary).contains("A verdict needs adjusted p < 0.05"));
        summary.sequential = Some(crate::eval::stats::sequential::Looks {
            planned: 6,
            at: vec![1, 2, 3, 4],
            spending: crate::eval::spending::Spending::Quadratic,
        });
        let text = legend(&summary);
        assert!(
            !text.contains("A verdict needs adjusted p < 0.05"),
            "{text}"
        );
        assert!(text.contains("(4 of 6 planned)"), "{text}");
        assert!(text.contains("stricter than adjusted p < 0.05"), "{text}");
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
    fn formatting_helpers() {
        assert_eq!(points(-0.00001, 1), "+0.0");
        assert_eq!(points(0.125, 1), "+12.5");
        assert_eq!(points(-0.5, 0), "-50");
        assert_eq!(p_value(0.0004), "<.001");
        assert_eq!(p_value(0.0123), ".012");
        assert_eq!(p_value(0.531), ".53");
        assert_eq!(p_value(1.0), "1");
    }
}
