//! Scored steps into rows and verdicts, in the units of a sampled run: per step kind and per
//! category, an arm against the arm it is compared with, each sample's difference of the two
//! expected rates (the sampler's probability of the step, or the share of drawn replies the laws
//! pass), their mean in percentage points with a paired bootstrap interval, and one family-wise
//! test over every row of the comparison (joint sign flips of whole samples, step-down min-P: the
//! same procedure and error budget as a sampled run's rows, decision 015). A verdict needs
//! significance, a change beyond the margin, and a rate the planned sampled confirmation could
//! draw at all (decision 028). The geometric-mean odds ratio is kept as a column for reading a
//! rare step; it decides nothing.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::measure::{StepKind, StepScore};
use crate::eval::arm::Arm;
use crate::eval::stats::method::{self, bootstrap_mean_interval};
use crate::eval::stats::{family, ALPHA, CONFIDENCE};

/// The margin of practical change: a row's change of expected rate is material when it is at
/// least `points` percentage points, or, for a rare step, at least `relative` of the larger of
/// the two rates (a fall from 2.9% to 0% is material; a move from 12.4% to 12.3% is not).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Margin {
    /// Percentage points.
    pub points: f64,
    /// A share of the larger rate, 0–1.
    pub relative: f64,
}

/// The default margin, chosen on neutral paraphrases of every shipped pack (docs/score.md,
/// "Calibration").
pub const DEFAULT_MARGIN: Margin = Margin {
    points: 10.0,
    relative: 0.67,
};

/// The repeats a sampled confirmation is planned with: a row whose expected draws over its
/// samples and these repeats are under one in both arms is out of reach.
pub const DEFAULT_CONFIRM_REPEATS: u32 = 6;

impl Margin {
    /// The change, as a rate (0–1), that is material between rates `a` and `b`.
    pub fn at(&self, a: f64, b: f64) -> f64 {
        (self.points / 100.0).min(self.relative * a.max(b))
    }

    /// Whether the relative part sets the margin between rates `a` and `b`: a rare step.
    pub fn is_rare(&self, a: f64, b: f64) -> bool {
        self.relative * a.max(b) < self.points / 100.0
    }
}

/// Draws of a step a sampled run needs before its sign-flip test can reach p ≤ .05 at all
/// (six samples that all moved one way give 2⁻⁵): under this the confirmation cannot confirm.
pub const DRAWS_TO_CONFIRM: f64 = 6.0;

/// A likelihood below this counts as this in a log odds ratio (one that underflowed to 0).
pub const FLOOR: f64 = 1e-300;

/// Bootstrap resamples of a row's interval.
const RESAMPLES: usize = 4_000;

/// A row's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreVerdict {
    /// Significant, and the rate rose beyond the margin.
    Better,
    /// Significant, and the rate fell beyond the margin.
    Worse,
    /// The interval lies inside the margin: whatever moved, it moved too little to matter.
    NoMaterialChange,
    /// Neither: the evidence does not decide.
    Unclear,
    /// The step is rarer in both arms than the planned sampled run could draw once: no run
    /// would see it, and no verdict is given.
    OutOfReach,
    /// One reference string's probability, shown for reading, never judged.
    Diagnostic,
}

impl ScoreVerdict {
    pub fn words(self) -> &'static str {
        match self {
            ScoreVerdict::Better => "better",
            ScoreVerdict::Worse => "worse",
            ScoreVerdict::NoMaterialChange => "no material change",
            ScoreVerdict::Unclear => "unclear",
            ScoreVerdict::OutOfReach => "out of reach",
            ScoreVerdict::Diagnostic => "diagnostic",
        }
    }
}

/// One row: a step kind over one category, or over all of them (`category` `None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreRow {
    pub step: StepKind,
    pub category: Option<String>,
    /// Samples with this step in both arms.
    pub n: usize,
    /// Mean expected rate of the step in the arm compared against, and in the arm (0–1).
    pub mean_against: f64,
    pub mean_arm: f64,
    /// The mean per-sample difference of the rates (arm − against, 0–1), and its paired
    /// bootstrap interval.
    pub difference: f64,
    pub difference_low: f64,
    pub difference_high: f64,
    /// The change that is material at this row's rates (0–1).
    pub material: f64,
    /// exp(mean per-sample log odds ratio) of the likelihoods, and its interval: for reading a
    /// rare step, never for the verdict.
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    /// Samples whose rate rose, and fell.
    pub up: usize,
    pub down: usize,
    /// Raw and family-adjusted p (1 for a diagnostic row, which is not tested).
    pub p: f64,
    pub p_adjusted: f64,
    /// (sample, arm) steps the sampler's top-k or top-p cut to probability 0.
    pub cut: usize,
    /// Expected draws in the planned sampled run are under one in both arms.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub out_of_reach: bool,
    pub verdict: ScoreVerdict,
    /// For a called row that the planned confirmation would draw fewer than six times in the
    /// higher arm: the repeats a sampled run needs to have a chance to confirm it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats_to_confirm: Option<u32>,
}

/// One comparison: an arm against another, every row of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreComparison {
    /// `skill effect` or the variant's label.
    pub name: String,
    pub arm: Arm,
    pub against: Arm,
    pub rows: Vec<ScoreRow>,
    /// The error rate this comparison's family is tested at.
    pub level: f64,
    /// The margin of practical change its verdicts were given.
    pub margin: Margin,
    /// The repeats of the planned sampled confirmation that reach is judged by.
    pub confirm_repeats: u32,
}

impl ScoreComparison {
    pub fn totals(&self) -> impl Iterator<Item = &ScoreRow> {
        self.rows.iter().filter(|r| r.category.is_none())
    }

    pub fn any(&self, verdict: ScoreVerdict) -> bool {
        self.rows.iter().any(|r| r.verdict == verdict)
    }
}

/// How a comparison's verdicts are reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub level: f64,
    pub margin: Margin,
    pub confirm_repeats: u32,
}

/// The rows of `arm` against `against` over `steps`, tested as one family under `rule`.
pub fn compare(
    name: &str,
    steps: &[StepScore],
    arm: Arm,
    against: Arm,
    rule: Rule,
) -> ScoreComparison {
    // (kind, sample) → (category, against's (probability, likelihood), arm's, cuts).
    type Pair = (String, Option<(f64, f64)>, Option<(f64, f64)>, usize);
    let mut paired: BTreeMap<(StepKind, String), Pair> = BTreeMap::new();
    for s in steps.iter().filter(|s| s.arm == arm || s.arm == against) {
        let entry = paired
            .entry((s.kind, s.sample_id.clone()))
            .or_insert_with(|| (s.category.clone(), None, None, 0));
        // A conversation's steps of one kind (two calls, say) are one cell: the chance the
        // sampler takes every one of them on the reference path.
        let joint = |held: Option<(f64, f64)>| match held {
            Some((p, l)) => Some((p * s.probability, l * s.likelihood)),
            None => Some((s.probability, s.likelihood)),
        };
        if s.arm == against {
            entry.1 = joint(entry.1);
        }
        if s.arm == arm {
            entry.2 = joint(entry.2);
        }
        entry.3 += usize::from(s.cut_by_sampler);
    }
    let samples: Vec<String> = paired
        .keys()
        .map(|(_, id)| id.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let column = |id: &str| samples.iter().position(|s| s == id).expect("a sample");
    let mut by_row: BTreeMap<(StepKind, Option<String>), Vec<Cell>> = BTreeMap::new();
    for ((kind, id), (category, a, b, cut)) in &paired {
        let (Some(a), Some(b)) = (a, b) else { continue };
        let cell = (column(id), category.clone(), *a, *b, *cut);
        by_row.entry((*kind, None)).or_default().push(cell.clone());
        by_row
            .entry((*kind, Some(category.clone())))
            .or_default()
            .push(cell);
    }
    // Totals first, then categories, each in step order.
    let mut keys: Vec<(StepKind, Option<String>)> = by_row.keys().cloned().collect();
    keys.sort_by(|x, y| (x.1.is_some(), &x.1, x.0).cmp(&(y.1.is_some(), &y.1, y.0)));
    let difference = |a: (f64, f64), b: (f64, f64)| b.0 - a.0;
    // The family holds the rows that can be called; a diagnostic row is only shown.
    let tested: Vec<usize> = (0..keys.len())
        .filter(|&r| !keys[r].0.diagnostic())
        .collect();
    let matrix: Vec<Vec<f64>> = tested
        .iter()
        .map(|&r| {
            let mut row = vec![0.0; samples.len()];
            for (col, _, a, b, _) in &by_row[&keys[r]] {
                row[*col] = difference(*a, *b);
            }
            row
        })
        .collect();
    let seed = method::seed_for(&[name, "score family"]);
    let test = family::step_down_min_p(&matrix, family::JOINT_FLIPS, rule.level, seed);
    let rows = keys
        .iter()
        .enumerate()
        .map(|(r, key)| {
            let cells = &by_row[key];
            let at = tested.iter().position(|&t| t == r);
            row(
                name,
                key,
                cells,
                at.map(|t| (test.raw[t], test.adjusted[t])),
                rule,
            )
        })
        .collect();
    ScoreComparison {
        name: name.to_string(),
        arm,
        against,
        rows,
        level: rule.level,
        margin: rule.margin,
        confirm_repeats: rule.confirm_repeats,
    }
}

/// One sample of a row: (column, category, against, arm, cut), each arm (probability,
/// likelihood).
type Cell = (usize, String, (f64, f64), (f64, f64), usize);

/// One row from its cells and its family's p (none for a diagnostic row).
fn row(
    name: &str,
    key: &(StepKind, Option<String>),
    cells: &[Cell],
    p: Option<(f64, f64)>,
    rule: Rule,
) -> ScoreRow {
    let n = cells.len();
    let seed_parts = [name, key.0.key(), key.1.as_deref().unwrap_or("")];
    let by_category = |values: &[f64]| -> Vec<Vec<f64>> {
        let mut strata: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for ((_, category, _, _, _), v) in cells.iter().zip(values) {
            strata.entry(category.as_str()).or_default().push(*v);
        }
        strata.into_values().collect()
    };
    let diffs: Vec<f64> = cells.iter().map(|(_, _, a, b, _)| b.0 - a.0).collect();
    let mean = diffs.iter().sum::<f64>() / n as f64;
    let interval = bootstrap_mean_interval(
        &by_category(&diffs),
        RESAMPLES,
        CONFIDENCE,
        method::seed_for(&seed_parts),
    )
    .expect("a row has samples");
    // The log of the odds ratio: near 0 it is the log-ratio of the probabilities, and near 1
    // it sees a fall from 92% to 69% as large as a rise from 16% to 51% in the complement.
    let log_odds = |l: f64| {
        let l = l.clamp(FLOOR, 1.0 - 1e-12);
        l.ln() - (1.0 - l).ln()
    };
    let logs: Vec<f64> = cells
        .iter()
        .map(|(_, _, a, b, _)| log_odds(b.1) - log_odds(a.1))
        .collect();
    let log_mean = logs.iter().sum::<f64>() / n as f64;
    let odds = bootstrap_mean_interval(
        &by_category(&logs),
        RESAMPLES,
        CONFIDENCE,
        method::seed_for(&[name, key.0.key(), key.1.as_deref().unwrap_or(""), "odds"]),
    )
    .expect("a row has samples");
    let mean_against = cells.iter().map(|c| c.2 .0).sum::<f64>() / n as f64;
    let mean_arm = cells.iter().map(|c| c.3 .0).sum::<f64>() / n as f64;
    let material = rule.margin.at(mean_against, mean_arm);
    let planned = n as f64 * f64::from(rule.confirm_repeats);
    let out_of_reach = mean_against * planned < 1.0 && mean_arm * planned < 1.0;
    let (p, p_adjusted) = p.unwrap_or((1.0, 1.0));
    let significant = p_adjusted <= rule.level && diffs.iter().any(|d| *d != 0.0);
    // A common step's change is called only when its whole interval lies beyond the margin: a
    // probability has no sampling noise, so a wording-wide nudge is significant however small,
    // and only the margin keeps it from a verdict. A rare step's interval is as wide as the
    // step itself, so there the change itself must pass the relative margin. So does a change
    // that is beyond the relative margin as well (a rate cut to a third or less, or trebled):
    // a behaviour that vanishes (21% → 0%) is no nudge, whatever the spread of its interval.
    let larger = mean_against.max(mean_arm);
    let by_mean =
        rule.margin.is_rare(mean_against, mean_arm) || mean.abs() >= rule.margin.relative * larger;
    let (rose, fell) = match by_mean {
        true => (mean >= material, mean <= -material),
        false => (interval.low >= material, interval.high <= -material),
    };
    let verdict = if key.0.diagnostic() {
        ScoreVerdict::Diagnostic
    } else if out_of_reach {
        ScoreVerdict::OutOfReach
    } else if significant && rose {
        ScoreVerdict::Better
    } else if significant && fell {
        ScoreVerdict::Worse
    } else if interval.low > -material && interval.high < material {
        ScoreVerdict::NoMaterialChange
    } else {
        ScoreVerdict::Unclear
    };
    ScoreRow {
        step: key.0,
        category: key.1.clone(),
        n,
        mean_against,
        mean_arm,
        difference: mean,
        difference_low: interval.low,
        difference_high: interval.high,
        material,
        ratio: log_mean.exp(),
        ratio_low: odds.low.exp(),
        ratio_high: odds.high.exp(),
        up: diffs.iter().filter(|d| **d > 0.0).count(),
        down: diffs.iter().filter(|d| **d < 0.0).count(),
        p,
        p_adjusted,
        cut: cells.iter().map(|c| c.4).sum(),
        out_of_reach,
        verdict,
        repeats_to_confirm: match verdict {
            ScoreVerdict::Better | ScoreVerdict::Worse => {
                let higher = mean_against.max(mean_arm) * n as f64;
                (higher * f64::from(rule.confirm_repeats) < DRAWS_TO_CONFIRM)
                    .then(|| (DRAWS_TO_CONFIRM / higher).ceil() as u32)
            }
            _ => None,
        },
    }
}

/// Every comparison of a scored run: the skill effect (baseline against control) when the
/// control was scored, at the whole error rate; each variant against the baseline, the error
/// rate shared among the variants as a sampled run shares it.
pub fn comparisons(
    steps: &[StepScore],
    variant_labels: &[String],
    control: bool,
    margin: Margin,
    confirm_repeats: u32,
) -> Vec<ScoreComparison> {
    let mut out = Vec::new();
    let rule = |level: f64| Rule {
        level,
        margin,
        confirm_repeats,
    };
    if control {
        out.push(compare(
            "skill effect",
            steps,
            Arm::Baseline,
            Arm::Control,
            rule(ALPHA),
        ));
    }
    let level = ALPHA / variant_labels.len().max(1) as f64;
    for (i, label) in variant_labels.iter().enumerate() {
        out.push(compare(
            label,
            steps,
            Arm::variant(i),
            Arm::Baseline,
            rule(level),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(id: &str, category: &str, arm: Arm, kind: StepKind, p: f64) -> StepScore {
        StepScore {
            sample_id: id.into(),
            category: category.into(),
            arm,
            kind,
            probability: p,
            cut_by_sampler: p == 0.0,
            likelihood: p.max(1e-12),
            text: String::new(),
            tokens: Vec::new(),
            prompt_tokens: 0,
            drawn: None,
        }
    }

    /// Steps of `kind` for `n` samples whose baseline rate is `base(i)` and whose variant's is
    /// `variant(i)`.
    fn planted_kind(
        kind: StepKind,
        n: usize,
        base: impl Fn(usize) -> f64,
        variant: impl Fn(usize) -> f64,
    ) -> Vec<StepScore> {
        let mut steps = Vec::new();
        for i in 0..n {
            let id = format!("s{i}");
            steps.push(step(&id, "c", Arm::Baseline, kind, base(i)));
            steps.push(step(
                &id,
                "c",
                Arm::variant(0),
                kind,
                variant(i).clamp(0.0, 1.0),
            ));
        }
        steps
    }

    fn planted(
        n: usize,
        base: impl Fn(usize) -> f64,
        variant: impl Fn(usize) -> f64,
    ) -> Vec<StepScore> {
        planted_kind(StepKind::Calls, n, base, variant)
    }

    /// A spread of baseline rates around `mean`, as real samples have.
    fn around(mean: f64) -> impl Fn(usize) -> f64 {
        move |i| mean * (0.7 + 0.6 * ((i * 7 % 5) as f64 / 4.0))
    }

    fn total(steps: &[StepScore]) -> ScoreRow {
        let rule = Rule {
            level: ALPHA,
            margin: DEFAULT_MARGIN,
            confirm_repeats: DEFAULT_CONFIRM_REPEATS,
        };
        let c = compare("v", steps, Arm::variant(0), Arm::Baseline, rule);
        c.rows.into_iter().find(|r| r.category.is_none()).unwrap()
    }

    // Simulations with a known truth: the planted change of rate is what each verdict must find.

    #[test]
    fn the_same_rates_give_no_difference_and_no_material_change() {
        let row = total(&planted(20, around(0.1), around(0.1)));
        assert_eq!(row.difference, 0.0);
        assert_eq!(row.ratio, 1.0);
        assert_eq!((row.up, row.down), (0, 0));
        assert_eq!(row.verdict, ScoreVerdict::NoMaterialChange);
    }

    #[test]
    fn a_fall_of_twenty_points_is_worse_and_a_rise_better() {
        let base = around(0.5);
        let row = total(&planted(20, &base, |i| base(i) - 0.2));
        assert!((row.difference + 0.2).abs() < 1e-9, "{row:?}");
        assert!(row.difference_low < -0.2 + 1e-9 && row.difference_high > -0.2 - 1e-9);
        assert_eq!(row.verdict, ScoreVerdict::Worse);
        let row = total(&planted(20, &base, |i| base(i) + 0.2));
        assert_eq!(row.verdict, ScoreVerdict::Better);
    }

    #[test]
    fn a_rare_step_falling_to_nothing_is_worse() {
        // 2.9% → 0% on every sample of 36: beyond two thirds of the larger rate, and a sampled run of
        // 6 repeats would draw it about six times in the baseline.
        let row = total(&planted(36, around(0.029), |_| 0.0));
        assert!(!row.out_of_reach, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::Worse, "{row:?}");
    }

    #[test]
    fn a_rare_fall_a_short_run_cannot_confirm_names_the_repeats_it_needs() {
        // 3% → 0% on 20 samples: 3.6 draws in 6 repeats, under the six a sign-flip needs.
        let row = total(&planted(20, around(0.03), |_| 0.0));
        assert_eq!(row.verdict, ScoreVerdict::Worse, "{row:?}");
        assert_eq!(row.repeats_to_confirm, Some(10), "{row:?}");
        // On 36 samples of 2.9% the six repeats suffice.
        let row = total(&planted(36, around(0.029), |_| 0.0));
        assert_eq!(row.repeats_to_confirm, None, "{row:?}");
    }

    #[test]
    fn a_common_step_nudged_within_reach_of_the_margin_is_not_called() {
        // Samples fall by 0 to 24 pp, 12 on the mean: the fall is certain, but its interval
        // (about −15 to −9) reaches inside the 10 pp margin, so no verdict. A neutral
        // paraphrase's wording-wide nudge looks like this.
        let base = around(0.5);
        let nudge = |i: usize| [0.0, 0.24, 0.04, 0.20, 0.12][i % 5];
        let row = total(&planted(40, &base, |i| base(i) - nudge(i)));
        assert!(row.p_adjusted < 0.05 && row.difference < -0.10, "{row:?}");
        assert!(row.difference_high > -0.10, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::Unclear, "{row:?}");
    }

    #[test]
    fn a_common_step_that_vanishes_is_called_however_wide_its_interval() {
        // 20% on average, carried by one sample in five, falls to nothing: the interval reaches
        // inside the 10 pp margin, but a behaviour that vanishes is no nudge.
        let base = |i: usize| if i % 5 == 4 { 1.0 } else { 0.0 };
        let row = total(&planted(40, base, |_| 0.0));
        assert!(row.difference_high > -0.10, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::Worse, "{row:?}");
        // The same spread halved (20% → 10%) is within reach of a nudge: unclear.
        let row = total(&planted(40, base, |i| base(i) / 2.0));
        assert!(row.difference_high > -0.10, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::Unclear, "{row:?}");
    }

    #[test]
    fn a_move_between_tiny_probabilities_is_out_of_reach_whatever_its_ratio() {
        // 1e-10 → 1e-9 on every sample: the odds ratio is ×10 and p is tiny, but no sampled run
        // would ever draw the step.
        let row = total(&planted(24, |_| 1e-10, |_| 1e-9));
        assert!(row.ratio > 9.0, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::OutOfReach, "{row:?}");
        // So is a rise from nothing to 0.15% over 54 samples (0.5 expected draws in 6 repeats).
        let row = total(&planted(54, |_| 0.0, |_| 0.0015));
        assert_eq!(row.verdict, ScoreVerdict::OutOfReach, "{row:?}");
    }

    #[test]
    fn a_precise_small_change_is_no_material_change_not_better() {
        // +1 point on every sample at 40%: significant, and inside the margin.
        let base = around(0.4);
        let row = total(&planted(20, &base, |i| base(i) + 0.01));
        assert!(row.p_adjusted < 0.05, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::NoMaterialChange);
    }

    #[test]
    fn a_rate_unmoved_in_the_mean_with_its_odds_moved_gets_no_verdict() {
        // The parcel paraphrase: the total mean stays at 12%, while a few samples' tiny
        // probabilities move ×8 (a large odds ratio carried by steps no run draws).
        let base = |i: usize| if i < 6 { 1e-10 } else { 0.16 };
        let variant = |i: usize| {
            if i < 6 {
                8e-10
            } else {
                0.16 - 0.001 * (i % 3) as f64
            }
        };
        let row = total(&planted(24, base, variant));
        assert!(row.difference.abs() < 0.002, "{row:?}");
        assert!(
            !matches!(row.verdict, ScoreVerdict::Better | ScoreVerdict::Worse),
            "{row:?}"
        );
    }

    #[test]
    fn an_effect_on_a_few_samples_is_unclear_or_found_never_reversed() {
        // Three of twenty samples fall from 60% to 5%: a concentrated effect.
        let row = total(&planted(20, |_| 0.6, |i| if i < 3 { 0.05 } else { 0.6 }));
        assert!(row.difference < 0.0);
        assert_ne!(row.verdict, ScoreVerdict::Better);
        assert_ne!(row.verdict, ScoreVerdict::NoMaterialChange);
    }

    #[test]
    fn noise_in_both_directions_is_not_called() {
        // Alternating +20 and −20 points: the mean change is 0.
        let row = total(&planted(
            20,
            |_| 0.5,
            |i| if i % 2 == 0 { 0.7 } else { 0.3 },
        ));
        assert!(matches!(
            row.verdict,
            ScoreVerdict::Unclear | ScoreVerdict::NoMaterialChange
        ));
        assert!(row.p > 0.5, "{row:?}");
    }

    #[test]
    fn a_step_the_sampler_cuts_enters_as_zero_not_through_a_floor() {
        // 1.5e-3 in the baseline, cut in the variant, on one sample of 20 otherwise unchanged
        // at 30%: a change of −0.0075 points, nothing like the −21 a floored log-ratio gave.
        let row = total(&planted(
            20,
            |i| if i == 0 { 1.5e-3 } else { 0.3 },
            |i| {
                if i == 0 {
                    0.0
                } else {
                    0.3
                }
            },
        ));
        assert_eq!(row.cut, 1);
        assert!(row.difference > -1e-4, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::NoMaterialChange, "{row:?}");
    }

    #[test]
    fn a_diagnostic_row_is_shown_and_never_tested() {
        // The reference answer's words fall ×100 on every sample: a diagnostic, not a verdict,
        // and it costs the tested rows nothing.
        let mut steps = planted_kind(StepKind::AnswerWords, 20, |_| 0.4, |_| 0.004);
        steps.extend(planted(20, around(0.5), |i| around(0.5)(i) - 0.2));
        let rule = Rule {
            level: ALPHA,
            margin: DEFAULT_MARGIN,
            confirm_repeats: DEFAULT_CONFIRM_REPEATS,
        };
        let c = compare("v", &steps, Arm::variant(0), Arm::Baseline, rule);
        let words = c
            .totals()
            .find(|r| r.step == StepKind::AnswerWords)
            .unwrap();
        assert_eq!(words.verdict, ScoreVerdict::Diagnostic);
        assert_eq!(words.p_adjusted, 1.0);
        let calls = c.totals().find(|r| r.step == StepKind::Calls).unwrap();
        assert_eq!(calls.verdict, ScoreVerdict::Worse);
    }

    #[test]
    fn the_margin_is_points_or_a_share_of_a_rare_rate() {
        assert!((DEFAULT_MARGIN.at(0.5, 0.4) - 0.10).abs() < 1e-12);
        assert!((DEFAULT_MARGIN.at(0.029, 0.0) - 0.67 * 0.029).abs() < 1e-12);
    }
}
