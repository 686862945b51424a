//! One row of a comparison: its rates, Δ, interval, raw p and variance figures from the paired
//! runs, then its level, MDE and verdict once its family is tested.

use std::collections::BTreeMap;

use super::mde::{repeats_for_target, RowPower};
use super::method::{self, Interval};
use super::outcome::Outcome;
use super::pairs::{RowInput, Run};
use super::results::{ArmSummary, Band, RepeatsNeeded, Row, Verdict};
use super::{Effort, ALPHA, CONFIDENCE, SIMULATED_BELOW};
use crate::eval::arm::Arm;

/// A row before its family is known, with what its power simulation needs.
pub(super) struct RawRow {
    pub(super) row: Row,
    /// Per sample: passes of both arms, and scored repeats (pass-or-fail rows only).
    samples: Vec<(usize, usize, usize)>,
    /// Per sample: its id and its difference d, for the family's joint flips.
    pub(super) columns: Vec<(String, f64)>,
    /// The outcome is pass or fail (a graded row has no power model).
    binary: bool,
    seed: u64,
    /// Which of the family's groups the row is in: categories, total, laws, then both again on
    /// the share of laws held (a category's two rows share its name).
    group: usize,
}

impl RawRow {
    pub(super) fn key(&self) -> (usize, &str) {
        (self.group, &self.row.name)
    }

    pub(super) fn in_group(mut self, group: usize) -> RawRow {
        self.group = group;
        self
    }

    /// What the row's MDE rests on once its family gave it the raw p it needs, `level`: the
    /// report's MDEs come from it, and the simulations that check them ask it for the power.
    pub(super) fn power_at(&self, level: f64, with_power: bool) -> RowPower {
        let row = &self.row;
        if row.samples == 0 || !self.binary || level <= 0.0 || !with_power {
            RowPower::Unknown
        } else if row.samples < SIMULATED_BELOW {
            RowPower::Simulated(method::PowerModel::new(&self.samples, level, self.seed))
        } else {
            match row.variance {
                Some(variance) => RowPower::Formula {
                    samples: row.samples,
                    variance,
                    degrees_of_freedom: row.degrees_of_freedom,
                    step: row.step,
                    level,
                },
                None => RowPower::Unknown,
            }
        }
    }
}

/// What a row measures of each run.
#[derive(Clone, Copy)]
pub(super) enum Measure<'a> {
    /// Every applicable law held (and the run did not error).
    Pass,
    /// The share of applicable laws that held.
    LawsHeld,
    /// One law held.
    Law(&'a str),
}

impl Measure<'_> {
    fn score(self, outcome: &Outcome) -> f64 {
        match self {
            Measure::Pass => f64::from(u8::from(outcome.scored_pass())),
            Measure::LawsHeld => outcome.laws_held_share(),
            Measure::Law(law) => f64::from(u8::from(outcome.law_held(law))),
        }
    }

    /// The score is only ever 0 or 1.
    fn binary(self) -> bool {
        !matches!(self, Measure::LawsHeld)
    }
}

/// Everything of a row that does not depend on its family: rates, Δ, interval, raw p and the
/// variance figures. Level, adjusted p, MDE and verdict come in [`finish_row`].
pub(super) fn raw_row(
    comparison: &str,
    name: &str,
    arms: (Arm, Arm),
    input: &RowInput,
    measure: Measure,
    effort: Effort,
) -> RawRow {
    let binary = measure.binary();
    let sums = sample_sums(input, measure);
    // Per sample: category, scored repeats m, reference and treatment passes.
    let counts: Vec<(&str, usize, usize, usize)> = sums
        .iter()
        .map(|&(c, m, r, t)| (c, m, r.round() as usize, t.round() as usize))
        .collect();
    let n = counts.len();
    let differences: Vec<f64> = sums
        .iter()
        .map(|&(_, m, r, t)| (t - r) / m as f64)
        .collect();
    let columns: Vec<(String, f64)> = input
        .samples
        .iter()
        .zip(&differences)
        .map(|((_, repeats), &d)| (repeats[0].1.sample_id.clone(), d))
        .collect();
    let strata = strata_by_category(&counts, &differences);
    let seed = method::seed_for(&[comparison, name]);
    let (denominator, numerators) = over_common_denominator(&counts);

    let delta = (n > 0).then(|| differences.iter().sum::<f64>() / n as f64);
    let interval = clipped_interval(&strata, effort.bootstrap_resamples, seed);
    // A graded row's p comes from the family's flips; a pass-or-fail row's is exact when the
    // distribution fits in its table.
    let (p_value, p_exact) = if binary {
        method::sign_flip(&numerators, seed)
    } else {
        (1.0, false)
    };
    let spread = Spread::of(&strata, &counts, input, measure);
    let (reference, treatment) = arm_summaries(arms, input, measure);

    let row = Row {
        name: name.to_string(),
        samples: n,
        pairs: counts.iter().map(|c| c.1).sum(),
        reference,
        treatment,
        delta,
        interval,
        p_value,
        p_exact,
        p_adjusted: p_value,
        level: ALPHA,
        smallest_p: if binary {
            method::smallest_sign_flip_p(n)
        } else {
            method::smallest_sign_flip_p(differences.iter().filter(|d| **d != 0.0).count())
        },
        mde: None,
        mde_floored: spread.floored,
        mde_rise: None,
        mde_decline: None,
        held: None,
        variance: spread.variance,
        degrees_of_freedom: spread.degrees_of_freedom,
        step: if n > 0 {
            2.0 / (n as f64 * denominator as f64)
        } else {
            0.0
        },
        between_samples: spread.between_samples,
        between_repeats: spread.between_repeats,
        repeats_for_target: RepeatsNeeded::Unknown,
        verdict: Verdict::NoData,
        conditional_power: None,
        gapped_pairs: input.gapped_pairs,
        unpaired_runs: input.unpaired_runs,
    };
    RawRow {
        row,
        samples: counts.iter().map(|&(_, m, r, t)| (r, t, m)).collect(),
        columns,
        binary,
        seed: method::seed_for(&[comparison, name, "power"]),
        group: 0,
    }
}

/// Per sample: its category, its scored repeats m, and the reference's and the treatment's
/// scores summed over those repeats.
fn sample_sums<'a>(input: &RowInput<'a>, measure: Measure) -> Vec<(&'a str, usize, f64, f64)> {
    input
        .samples
        .iter()
        .map(|(category, repeats)| {
            let reference_sum: f64 = repeats.iter().map(|(_, r, _)| measure.score(r)).sum();
            let treatment_sum: f64 = repeats.iter().map(|(_, _, t)| measure.score(t)).sum();
            (*category, repeats.len(), reference_sum, treatment_sum)
        })
        .collect()
}

/// The per-sample differences grouped by category, in category order: the bootstrap's strata.
fn strata_by_category(
    counts: &[(&str, usize, usize, usize)],
    differences: &[f64],
) -> Vec<Vec<f64>> {
    let mut strata: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (&(category, ..), &d) in counts.iter().zip(differences) {
        strata.entry(category).or_default().push(d);
    }
    strata.into_values().collect()
}

/// The differences as integers over the least common multiple of the repeat counts, so that
/// the sign-flip test decides ties exactly: (denominator, numerators).
fn over_common_denominator(counts: &[(&str, usize, usize, usize)]) -> (usize, Vec<i64>) {
    let denominator = counts
        .iter()
        .fold(1usize, |l, &(_, m, ..)| method::lcm(l, m));
    let numerators = counts
        .iter()
        .map(|&(_, m, r, t)| (t as i64 - r as i64) * (denominator / m) as i64)
        .collect();
    (denominator, numerators)
}

/// The bootstrap interval of Δ, clipped to ±1: the rescaled bootstrap can reach past what a
/// difference of pass rates can be.
fn clipped_interval(strata: &[Vec<f64>], resamples: usize, seed: u64) -> Option<Interval> {
    method::bootstrap_mean_interval(strata, resamples, CONFIDENCE, seed).map(|i| Interval {
        low: i.low.max(-1.0),
        high: i.high.min(1.0),
    })
}

/// The variance of a row's per-sample differences behind its MDE, and its split into the
/// spread of the samples' true differences and the repeat-to-repeat noise.
struct Spread {
    variance: Option<f64>,
    /// The variance is the floor, not the observed one.
    floored: bool,
    degrees_of_freedom: usize,
    between_samples: Option<f64>,
    between_repeats: Option<f64>,
}

impl Spread {
    fn of(
        strata: &[Vec<f64>],
        counts: &[(&str, usize, usize, usize)],
        input: &RowInput,
        measure: Measure,
    ) -> Spread {
        let n = counts.len();
        // Variance of d, pooled within categories.
        let df = n.saturating_sub(strata.len());
        let within: f64 = strata
            .iter()
            .map(|s| {
                let mean = s.iter().sum::<f64>() / s.len() as f64;
                s.iter().map(|d| (d - mean).powi(2)).sum::<f64>()
            })
            .sum();
        let observed = (df > 0).then(|| within / df as f64);
        let runs: usize = counts.iter().map(|c| c.1).sum();
        let mean_repeats = if n > 0 { runs as f64 / n as f64 } else { 0.0 };
        let passes: usize = counts.iter().map(|c| c.2 + c.3).sum();
        // Below what one sample moving by one repeat would give, the data cannot tell the
        // spread: floor it at independent draws around the pooled pass rate.
        let pooled = (passes as f64 + mean_repeats) / (2.0 * runs as f64 + 2.0 * mean_repeats);
        let floor = 2.0 * pooled * (1.0 - pooled) / mean_repeats;
        let resolution = 1.0 / (n as f64 * mean_repeats * mean_repeats);
        let (variance, floored) = match observed {
            Some(v) if v < resolution => (Some(v.max(floor)), floor > v),
            other => (other, false),
        };

        let (squares, degrees) = repeat_noise(input, measure);
        let (between_samples, between_repeats) = match (variance, degrees) {
            (Some(v), _) if floored => (Some(0.0), Some(v * mean_repeats)),
            (Some(v), d) if d > 0 => {
                let noise = squares / d as f64;
                (Some((v - noise / mean_repeats).max(0.0)), Some(noise))
            }
            (Some(_), _) => (None, None),
            (None, _) => (None, None),
        };
        Spread {
            variance,
            floored,
            degrees_of_freedom: df,
            between_samples,
            between_repeats,
        }
    }
}

/// Repeat-to-repeat noise: the squared deviations of the per-repeat differences around their
/// sample's mean, and their degrees of freedom.
fn repeat_noise(input: &RowInput, measure: Measure) -> (f64, usize) {
    let (mut squares, mut degrees) = (0.0, 0usize);
    for (_, repeats) in &input.samples {
        let per_repeat: Vec<f64> = repeats
            .iter()
            .map(|(_, r, t)| measure.score(t) - measure.score(r))
            .collect();
        let mean = per_repeat.iter().sum::<f64>() / per_repeat.len() as f64;
        squares += per_repeat.iter().map(|e| (e - mean).powi(2)).sum::<f64>();
        degrees += per_repeat.len() - 1;
    }
    (squares, degrees)
}

/// Both arms' summaries of a row. A graded row's rate is the mean score, not the pass rate.
fn arm_summaries(
    (reference, treatment): (Arm, Arm),
    input: &RowInput,
    measure: Measure,
) -> (ArmSummary, ArmSummary) {
    let passed = |o: &Outcome| measure.score(o) >= 1.0;
    let mut reference_summary = arm_summary(
        reference,
        &input.samples,
        &|x| passed(x.1),
        &|x| x.1.errored,
        &|x| x.1.gapped,
    );
    let mut treatment_summary = arm_summary(
        treatment,
        &input.samples,
        &|x| passed(x.2),
        &|x| x.2.errored,
        &|x| x.2.gapped,
    );
    if !measure.binary() {
        reference_summary.rate = mean_score(input, &|x| measure.score(x.1));
        treatment_summary.rate = mean_score(input, &|x| measure.score(x.2));
    }
    (reference_summary, treatment_summary)
}

/// The mean over samples of one side's mean score over its repeats.
fn mean_score(input: &RowInput, side: &dyn Fn(&Run) -> f64) -> Option<f64> {
    let n = input.samples.len();
    (n > 0).then(|| {
        input
            .samples
            .iter()
            .map(|(_, repeats)| repeats.iter().map(side).sum::<f64>() / repeats.len() as f64)
            .sum::<f64>()
            / n as f64
    })
}

/// The verdict rule of the [stats module's docs](super). `critical` is the raw p a row needs
/// when it is its family's only change (the level its MDE is computed at), `family_level` the
/// family's error rate, `p_adjusted` the row's adjusted p, `monte_carlo` its raw p over the
/// family's flips (the p a graded row reports).
#[allow(clippy::too_many_arguments)]
pub(super) fn finish_row(
    raw: RawRow,
    critical: f64,
    family_level: f64,
    p_adjusted: f64,
    called: bool,
    monte_carlo: f64,
    with_power: bool,
) -> Row {
    let power = raw.power_at(critical, with_power);
    let RawRow {
        mut row, binary, ..
    } = raw;
    row.level = critical;
    row.p_adjusted = p_adjusted;
    if !binary {
        row.p_value = monte_carlo;
    }
    if row.samples == 0 {
        row.verdict = Verdict::NoData;
        return row;
    }
    if matches!(power, RowPower::Simulated(_)) {
        // The floor does not enter a simulated MDE: the smoothed probabilities take its place.
        row.mde_floored = false;
    }
    let (rise, decline) = power.detectable_effects(row.reference.rate.unwrap_or(0.0));
    row.mde_rise = rise;
    row.mde_decline = decline;
    row.mde = match (rise, decline) {
        (Some(r), Some(d)) => Some(r.max(d)),
        (Some(m), None) | (None, Some(m)) => Some(m),
        (None, None) => None,
    };
    row.repeats_for_target = repeats_for_target(&row, binary, critical);
    let significant = called;
    row.verdict = match row.interval {
        Some(i) if significant && i.low > 0.0 => Verdict::Better,
        Some(i) if significant && i.high < 0.0 => Verdict::Worse,
        // Even last in the step-down, facing the family's whole level, no outcome could pass.
        _ if row.smallest_p >= family_level => Verdict::TooFewSamples,
        _ => Verdict::NoChange,
    };
    row
}

fn arm_summary(
    arm: Arm,
    samples: &[(&str, Vec<Run>)],
    passed: &dyn Fn(&Run) -> bool,
    errored: &dyn Fn(&Run) -> bool,
    gapped: &dyn Fn(&Run) -> bool,
) -> ArmSummary {
    let mut per_repeat: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
    let mut fractions = Vec::new();
    let (mut always_pass, mut always_fail, mut flaky, mut errors, mut gaps) = (0, 0, 0, 0, 0);
    for (_, runs) in samples {
        let passes = runs.iter().filter(|r| passed(r)).count();
        for run in runs {
            let tally = per_repeat.entry(run.0).or_default();
            tally.0 += usize::from(passed(run));
            tally.1 += 1;
            errors += usize::from(errored(run));
            gaps += usize::from(gapped(run));
        }
        fractions.push(passes as f64 / runs.len() as f64);
        match passes {
            0 => always_fail += 1,
            p if p == runs.len() => always_pass += 1,
            _ => flaky += 1,
        }
    }
    let repeat_rates: Vec<f64> = per_repeat
        .values()
        .map(|&(p, n)| p as f64 / n as f64)
        .collect();
    let band = (!repeat_rates.is_empty()).then(|| Band {
        min: repeat_rates.iter().copied().fold(f64::INFINITY, f64::min),
        max: repeat_rates
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max),
    });
    ArmSummary {
        arm,
        rate: (!fractions.is_empty())
            .then(|| fractions.iter().sum::<f64>() / fractions.len() as f64),
        band,
        passes: per_repeat.values().map(|t| t.0).sum(),
        runs: per_repeat.values().map(|t| t.1).sum(),
        errored: errors,
        gapped: gaps,
        always_pass,
        always_fail,
        flaky,
    }
}
