//! Each row's power at any true change, next to its comparison: for the simulations that check
//! the MDEs a report prints against what runs find. A report needs only the MDEs, so the
//! comparisons it makes ([`compare_many_looked`]) leave this out.

use super::comparison::{compare_many_looked, raw_comparison, RawComparison};
use super::mde::RowPower;
use super::outcome::Outcome;
use super::pairs::{index, StatsError};
use super::results::{Comparison, Row};
use super::rows::RawRow;
use super::Effort;
use crate::eval::arm::Arm;

/// The [`RowPower`] of every row of a comparison, in the comparison's order.
#[derive(Debug, Clone)]
pub struct Powers {
    pub categories: Vec<RowPower>,
    pub total: RowPower,
    pub laws: Vec<RowPower>,
}

/// [`compare`](super::compare), with what each row's MDE rests on.
pub fn compare_with_power(
    outcomes: &[Outcome],
    name: &str,
    reference: Arm,
    treatment: Arm,
) -> Result<(Comparison, Powers), StatsError> {
    let mut one = compare_many_with_power(outcomes, &[name.to_string()], reference, &[treatment])?;
    Ok(one.remove(0))
}

/// [`compare_many_looked`] of a fixed run, with what each row's MDE rests on.
pub fn compare_many_with_power(
    outcomes: &[Outcome],
    names: &[String],
    reference: Arm,
    treatments: &[Arm],
) -> Result<Vec<(Comparison, Powers)>, StatsError> {
    compare_many_with_power_at(outcomes, names, reference, treatments, Effort::REPORT)
}

/// [`compare_many_with_power`] at another effort.
pub fn compare_many_with_power_at(
    outcomes: &[Outcome],
    names: &[String],
    reference: Arm,
    treatments: &[Arm],
    effort: Effort,
) -> Result<Vec<(Comparison, Powers)>, StatsError> {
    let comparisons = compare_many_looked(outcomes, names, reference, treatments, effort, None)?;
    let runs = index(outcomes)?;
    // A row's power rests on its counts, variance and seed, not on its interval.
    let quick = Effort {
        bootstrap_resamples: 1,
        ..effort
    };
    Ok(comparisons
        .into_iter()
        .zip(names.iter().zip(treatments))
        .map(|(comparison, (name, &treatment))| {
            let raw = raw_comparison(&runs, name, reference, treatment, quick);
            let powers = powers_of(&comparison, &raw, effort.power);
            (comparison, powers)
        })
        .collect())
}

/// Each finished row's power, at the level its family gave it, from its raw row.
fn powers_of(comparison: &Comparison, raw: &RawComparison, with_power: bool) -> Powers {
    let power = |(row, raw): (&Row, &RawRow)| raw.power_at(row.level, with_power);
    Powers {
        categories: comparison
            .categories
            .iter()
            .zip(&raw.categories)
            .map(power)
            .collect(),
        total: power((&comparison.total, &raw.total)),
        laws: comparison.laws.iter().zip(&raw.laws).map(power).collect(),
    }
}
