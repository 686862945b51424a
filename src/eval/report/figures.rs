//! How the tables name and print a comparison: whether it is an A/A and what its control
//! removed, its title and short name, the column headers, each row's cells, and the forms of the
//! figures (a rate with its band, Δ with its interval, the MDE, a p-value).

use crate::eval::arm::Arm;
use crate::eval::stats::{self, ArmSummary, Comparison, Row, Summary};

pub(super) fn is_a_a(comparison: &Comparison) -> bool {
    comparison.label.as_deref() == Some(stats::A_A_LABEL)
}

/// The part of the skill the control arm removed: its body, unless the comparison is labelled
/// with another (`description`, for a pack whose control removes that).
pub(super) fn removed_part(skill_effect: &Comparison) -> &str {
    skill_effect.label.as_deref().unwrap_or("body")
}

pub(super) fn comparison_name(comparison: &Comparison) -> String {
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

pub(super) fn comparison_title(comparison: &Comparison) -> String {
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
pub(super) fn variant_column(comparison: &Comparison) -> String {
    comparison
        .label
        .clone()
        .unwrap_or_else(|| comparison.treatment.name().to_string())
}

/// Variants side by side: per category (and the total), each variant's Δ, interval and verdict.
pub(super) fn variants_grid(summary: &Summary) -> (Vec<String>, Vec<Vec<String>>) {
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
pub(super) fn rows_of(comparison: &Comparison) -> Vec<&Row> {
    comparison
        .categories
        .iter()
        .chain([&comparison.total])
        .collect()
}

/// Column headers; `reference` and `treatment` name the two rate columns.
pub(super) fn headers(reference: &str, treatment: &str, first: &str) -> Vec<String> {
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
pub(super) fn cells(row: &Row, with_bands: bool, digits: usize) -> Vec<String> {
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

/// "61% [50–67]"; the terminal's whole-number form drops the "%" to save width.
pub(super) fn rate_and_band(arm: &ArmSummary, digits: usize) -> String {
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
pub(super) fn delta_and_interval(row: &Row, digits: usize) -> String {
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

pub(super) fn mde(row: &Row) -> String {
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
pub(super) fn points(delta: f64, digits: usize) -> String {
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
    use super::*;

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
