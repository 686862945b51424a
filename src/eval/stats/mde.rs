//! A row's minimum detectable effect and the repeats a target effect needs, from what they
//! rest on: a simulation of the row's own test, or the one-sample t-test's formula.

use super::method;
use super::results::{RepeatsNeeded, Row};
use super::{POWER, TARGET_EFFECT};

/// What a row's MDE rests on: asked for the power at any true change, it gives what the row
/// promises a reader.
#[derive(Debug, Clone)]
pub enum RowPower {
    /// A simulation of the row's own test (rows of fewer than
    /// [`SIMULATED_BELOW`](super::SIMULATED_BELOW) samples).
    Simulated(method::PowerModel),
    /// The one-sample t-test's formula (larger rows).
    Formula {
        samples: usize,
        variance: f64,
        degrees_of_freedom: usize,
        step: f64,
        level: f64,
    },
    /// No samples, or no variance to go on.
    Unknown,
}

impl RowPower {
    /// The chance that the row's verdict finds a true mean change `effect` (positive: the
    /// treatment passes more); `None` when nothing is known or the change cannot happen.
    pub fn power(&self, effect: f64) -> Option<f64> {
        match self {
            RowPower::Simulated(model) => model.power(effect),
            &RowPower::Formula {
                samples,
                variance,
                degrees_of_freedom,
                step,
                level,
            } => Some(method::promised_power(
                samples,
                variance,
                degrees_of_freedom,
                step,
                level,
                effect,
            )),
            RowPower::Unknown => None,
        }
    }

    /// The smallest rise and decline found with [`POWER`] power, each `None` when the reference's
    /// rate (`reference_rate`) leaves too little room for one that large.
    pub(super) fn detectable_effects(&self, reference_rate: f64) -> (Option<f64>, Option<f64>) {
        match self {
            RowPower::Simulated(model) => model.detectable_effects(POWER),
            &RowPower::Formula {
                samples,
                variance,
                degrees_of_freedom,
                step,
                level,
            } => {
                let mde = method::detectable_effect(
                    samples,
                    variance,
                    degrees_of_freedom,
                    step,
                    level,
                    POWER,
                );
                // A change the reference leaves no room for cannot be found, whatever the formula.
                (
                    mde.filter(|m| *m <= 1.0 - reference_rate),
                    mde.filter(|m| *m <= reference_rate),
                )
            }
            RowPower::Unknown => (None, None),
        }
    }
}

/// How many repeats would bring a finished row's MDE down to [`TARGET_EFFECT`] at the raw p it
/// needs, `critical`. Always the formula: a simulation per candidate count would be slow.
pub(super) fn repeats_for_target(row: &Row, binary: bool, critical: f64) -> RepeatsNeeded {
    match (binary, row.between_samples, row.between_repeats) {
        (true, Some(tau), Some(noise)) if critical > 0.0 => {
            let df = row.degrees_of_freedom;
            let room = method::largest_variance_for(
                row.samples,
                df,
                row.step,
                TARGET_EFFECT,
                critical,
                POWER,
            );
            match room {
                Some(room) if room > tau => {
                    RepeatsNeeded::Repeats(((noise / (room - tau)).ceil() as u64).max(1))
                }
                _ => RepeatsNeeded::MoreSamples,
            }
        }
        _ => RepeatsNeeded::Unknown,
    }
}
