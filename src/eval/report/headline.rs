//! The run's findings in words: the headline of the skill's own effect and of each wording,
//! what moved in a comparison and which way, and what the report says when removing the skill
//! changed nothing.

use super::figures::{delta_and_interval, is_a_a, removed_part, variant_column};
use crate::eval::stats::{Comparison, Row, Summary, Verdict};

/// What the report says when the model ignored the skill's body.
pub(super) const NO_SKILL_EFFECT: &str = "the model's behaviour did not change when the skill's body was removed: the baseline wording is not shown to do anything, so a variant can only be told apart from a wording with no measurable effect, and a variant that changed nothing may still differ (`skilleval score` sees what sampling a weak model misses)";

/// Said after a wording's changes when the skill's body changed nothing measurable: what a
/// "better" or "worse" there can mean.
pub(super) const CHANGE_WITHOUT_SKILL_EFFECT: &str = "The skill's body changed nothing measurable, so this compares the variant with a wording the model does not measurably follow: a row called better is a change from doing nothing, not evidence that the model follows the variant; read its transcripts, or score both wordings (`skilleval score`), before choosing it.";

/// What the report says when removing the skill's description changed nothing. The name is
/// still offered, so this says less than an ignored body does: another description may still
/// add to the name or distract from it (on the routing pack a misleading one did).
pub(super) const NO_DESCRIPTION_EFFECT: &str = "the model's behaviour did not change when the skill's description was removed: the skill's name alone routed as well, so a description can only add to the name or distract from it";

/// What the report says when removing the part the control removed changed nothing.
pub(super) fn no_skill_effect(skill_effect: &Comparison) -> String {
    match removed_part(skill_effect) {
        "description" => NO_DESCRIPTION_EFFECT,
        _ => NO_SKILL_EFFECT,
    }
    .to_string()
}

/// The headline of each wording comparison: "Wording: …", or "Wording, b.md: …" per variant
/// in a run of several.
pub(super) fn wording_headlines(summary: &Summary) -> Vec<String> {
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

/// How a changed row reads in a headline: a category or the total by its Δ (or by its share of
/// laws held, when that is what moved), a law by its two rates.
pub(super) fn change_phrase(row: &Row, law: bool) -> String {
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

/// Whether a row went the way `v` says beyond noise, on either outcome.
fn went(row: &Row, v: Verdict) -> bool {
    row.verdict == v
        || (row.verdict == Verdict::Mixed
            && (row.pass_verdict() == Some(v) || row.held.as_ref().is_some_and(|h| h.verdict == v)))
}

/// The rows of a comparison that went one way (`worse`: declined), categories first, then laws.
pub(super) fn moved_rows(comparison: &Comparison, worse: bool) -> Vec<String> {
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
pub(super) fn total_phrase(total: &Row) -> String {
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
pub(super) fn movements(comparison: &Comparison) -> String {
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

pub(super) fn skill_effect_statement(skill: &Comparison) -> String {
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
pub(super) fn wording_statement(summary: &Summary, wording: &Comparison) -> String {
    let total = &wording.total;
    if total.samples == 0 {
        return "No data: no pair of runs could be scored.".into();
    }
    let mut text = match purpose_lead(&summary.purpose_laws, wording) {
        Some(lead) => format!("{lead} {}", movements(wording)),
        None => movements(wording),
    };
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

/// What a wording did to the laws the pack marks as the skill's purpose, said before anything
/// else moved: worse there beyond noise; "mixed" when one of them fell, even within noise,
/// while something else rose (a wording that skips a safeguard often shortens the exchange,
/// which a side law rewards); better there; or unchanged, with their rates. `None` when the
/// pack marks no law or none applied.
pub(super) fn purpose_lead(purpose: &[String], wording: &Comparison) -> Option<String> {
    let rows: Vec<&Row> = wording
        .laws
        .iter()
        .filter(|r| purpose.contains(&r.name))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let phrases = |rows: &[&Row]| {
        rows.iter()
            .map(|r| change_phrase(r, true))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let worse: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| went(r, Verdict::Worse))
        .collect();
    let better: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| went(r, Verdict::Better))
        .collect();
    let fell: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| matches!((r.reference.rate, r.treatment.rate), (Some(a), Some(b)) if b < a))
        .collect();
    let side_rose = wording.total.verdict == Verdict::Better
        || wording
            .categories
            .iter()
            .chain(wording.laws.iter().filter(|r| !purpose.contains(&r.name)))
            .any(|r| went(r, Verdict::Better));
    Some(if !worse.is_empty() {
        format!("Worse at what the skill is for: {}.", phrases(&worse))
    } else if !fell.is_empty() && (side_rose || !better.is_empty()) {
        format!(
            "Mixed: what the skill is for fell ({}; not beyond noise) while other rows rose, so the rise is no improvement to act on.",
            phrases(&fell)
        )
    } else if !better.is_empty() {
        format!("Better at what the skill is for: {}.", phrases(&better))
    } else {
        format!(
            "What the skill is for did not change beyond noise ({}).",
            phrases(&rows)
        )
    })
}
