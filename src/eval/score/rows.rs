//! Scored steps into rows and verdicts: per step kind and per category, an arm against the arm
//! it is compared with, each sample's log odds ratio of the two probabilities, their mean as a
//! geometric-mean odds ratio with a bootstrap interval (of the likelihoods, which are never 0; the
//! mean columns are the sampler's probabilities, the rates a sampled run would see), and one family-wise test over every row of
//! the comparison (joint sign flips of whole samples, step-down min-P: the same procedure and
//! error budget as a sampled run's rows, decision 015). A verdict needs both significance and a
//! ratio beyond the margin of practical change (decision 022).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::measure::{StepKind, StepScore};
use crate::eval::arm::Arm;
use crate::eval::stats::method::{self, bootstrap_mean_interval};
use crate::eval::stats::{family, ALPHA, CONFIDENCE};

/// The default margin of practical change: a geometric-mean ratio inside ×1/1.5 … ×1.5 is "no
/// material change" however precise. Chosen from measured neutral edits (docs/score.md).
pub const DEFAULT_MARGIN: f64 = 1.5;

/// A likelihood below this counts as this in a log-ratio (one that underflowed to 0).
pub const FLOOR: f64 = 1e-300;

/// Bootstrap resamples of a row's interval.
const RESAMPLES: usize = 4_000;

/// A row's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreVerdict {
    /// Significant, and the ratio is beyond the margin upward.
    Better,
    /// Significant, and the ratio is beyond the margin downward.
    Worse,
    /// The interval lies inside the margin: whatever moved, it moved too little to matter.
    NoMaterialChange,
    /// Neither: the evidence does not decide.
    Unclear,
}

impl ScoreVerdict {
    pub fn words(self) -> &'static str {
        match self {
            ScoreVerdict::Better => "better",
            ScoreVerdict::Worse => "worse",
            ScoreVerdict::NoMaterialChange => "no material change",
            ScoreVerdict::Unclear => "unclear",
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
    /// Mean probability of the step in the arm compared against, and in the arm.
    pub mean_against: f64,
    pub mean_arm: f64,
    /// exp(mean per-sample log odds ratio), and its interval.
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    /// Samples whose probability rose, and fell.
    pub up: usize,
    pub down: usize,
    /// Raw and family-adjusted p.
    pub p: f64,
    pub p_adjusted: f64,
    /// (sample, arm) steps the sampler's top-k or top-p cut to probability 0.
    pub cut: usize,
    /// Half or more of its samples have the step cut in both arms: a reference the model would
    /// write in neither wording, whose ratio compares two texts the sampler never draws. Such a
    /// row is never called better or worse (it may still be no material change).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub out_of_reach: bool,
    pub verdict: ScoreVerdict,
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
    pub margin: f64,
}

impl ScoreComparison {
    pub fn totals(&self) -> impl Iterator<Item = &ScoreRow> {
        self.rows.iter().filter(|r| r.category.is_none())
    }

    pub fn any(&self, verdict: ScoreVerdict) -> bool {
        self.rows.iter().any(|r| r.verdict == verdict)
    }
}

/// The rows of `arm` against `against` over `steps`, tested as one family at `level`.
pub fn compare(
    name: &str,
    steps: &[StepScore],
    arm: Arm,
    against: Arm,
    level: f64,
    margin: f64,
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
    // Each row's samples: (column, category, against, arm, cut), each arm (probability,
    // likelihood).
    type Cell = (usize, String, (f64, f64), (f64, f64), usize);
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
    // The log of the odds ratio: near 0 it is the log-ratio of the probabilities, and near 1
    // it sees a fall from 92% to 69% as large as a rise from 16% to 51% in the complement.
    let log_odds = |l: f64| {
        let l = l.clamp(FLOOR, 1.0 - 1e-12);
        l.ln() - (1.0 - l).ln()
    };
    let log_ratio = |a: (f64, f64), b: (f64, f64)| log_odds(b.1) - log_odds(a.1);
    let matrix: Vec<Vec<f64>> = keys
        .iter()
        .map(|key| {
            let mut row = vec![0.0; samples.len()];
            for (col, _, a, b, _) in &by_row[key] {
                row[*col] = log_ratio(*a, *b);
            }
            row
        })
        .collect();
    let seed = method::seed_for(&[name, "score family"]);
    let test = family::step_down_min_p(&matrix, family::JOINT_FLIPS, level, seed);
    let rows = keys
        .iter()
        .enumerate()
        .map(|(r, key)| {
            let cells = &by_row[key];
            let n = cells.len();
            let diffs: Vec<f64> = cells
                .iter()
                .map(|(_, _, a, b, _)| log_ratio(*a, *b))
                .collect();
            let mean = diffs.iter().sum::<f64>() / n as f64;
            let mut strata: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
            for ((_, category, _, _, _), d) in cells.iter().zip(&diffs) {
                strata.entry(category.as_str()).or_default().push(*d);
            }
            let strata: Vec<Vec<f64>> = strata.into_values().collect();
            let interval = bootstrap_mean_interval(
                &strata,
                RESAMPLES,
                CONFIDENCE,
                method::seed_for(&[name, key.0.key(), key.1.as_deref().unwrap_or("")]),
            )
            .expect("a row has samples");
            let p_adjusted = test.adjusted[r];
            let significant = p_adjusted <= level && diffs.iter().any(|d| *d != 0.0);
            let bound = margin.ln();
            let cut_in_both = cells.iter().filter(|c| c.4 == 2).count();
            let out_of_reach = 2 * cut_in_both >= n;
            let verdict = if !out_of_reach && significant && mean >= bound {
                ScoreVerdict::Better
            } else if !out_of_reach && significant && mean <= -bound {
                ScoreVerdict::Worse
            } else if interval.low > -bound && interval.high < bound {
                ScoreVerdict::NoMaterialChange
            } else {
                ScoreVerdict::Unclear
            };
            ScoreRow {
                step: key.0,
                category: key.1.clone(),
                n,
                mean_against: cells.iter().map(|c| c.2 .0).sum::<f64>() / n as f64,
                mean_arm: cells.iter().map(|c| c.3 .0).sum::<f64>() / n as f64,
                ratio: mean.exp(),
                ratio_low: interval.low.exp(),
                ratio_high: interval.high.exp(),
                up: diffs.iter().filter(|d| **d > 0.0).count(),
                down: diffs.iter().filter(|d| **d < 0.0).count(),
                p: test.raw[r],
                p_adjusted,
                cut: cells.iter().map(|c| c.4).sum(),
                out_of_reach,
                verdict,
            }
        })
        .collect();
    ScoreComparison {
        name: name.to_string(),
        arm,
        against,
        rows,
        level,
        margin,
    }
}

/// Every comparison of a scored run: the skill effect (baseline against control) when the
/// control was scored, at the whole error rate; each variant against the baseline, the error
/// rate shared among the variants as a sampled run shares it.
pub fn comparisons(
    steps: &[StepScore],
    variant_labels: &[String],
    control: bool,
    margin: f64,
) -> Vec<ScoreComparison> {
    let mut out = Vec::new();
    if control {
        out.push(compare(
            "skill effect",
            steps,
            Arm::Baseline,
            Arm::Control,
            ALPHA,
            margin,
        ));
    }
    let level = ALPHA / variant_labels.len().max(1) as f64;
    for (i, label) in variant_labels.iter().enumerate() {
        out.push(compare(
            label,
            steps,
            Arm::variant(i),
            Arm::Baseline,
            level,
            margin,
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
            cut_by_sampler: p < 1e-9,
            likelihood: p.max(1e-9),
            text: String::new(),
            tokens: Vec::new(),
            prompt_tokens: 0,
        }
    }

    /// Steps for `n` samples whose baseline probability is `base` and whose variant's is
    /// `base * factor(i)`.
    fn planted(n: usize, base: f64, factor: impl Fn(usize) -> f64) -> Vec<StepScore> {
        let mut steps = Vec::new();
        for i in 0..n {
            let id = format!("s{i}");
            let b = base * (1.0 + 0.3 * ((i * 7 % 5) as f64 / 5.0));
            steps.push(step(&id, "c", Arm::Baseline, StepKind::Calls, b));
            steps.push(step(
                &id,
                "c",
                Arm::variant(0),
                StepKind::Calls,
                (b * factor(i)).min(1.0),
            ));
        }
        steps
    }

    fn total(steps: &[StepScore]) -> ScoreRow {
        let c = compare(
            "v",
            steps,
            Arm::variant(0),
            Arm::Baseline,
            ALPHA,
            DEFAULT_MARGIN,
        );
        c.rows.into_iter().find(|r| r.category.is_none()).unwrap()
    }

    // Simulations with a known truth: the planted factor is what each verdict must find.

    #[test]
    fn the_same_probabilities_give_ratio_one_and_no_material_change() {
        let row = total(&planted(20, 0.1, |_| 1.0));
        assert_eq!(row.ratio, 1.0);
        assert_eq!((row.up, row.down), (0, 0));
        assert_eq!(row.verdict, ScoreVerdict::NoMaterialChange);
    }

    #[test]
    fn a_uniform_drop_beyond_the_margin_is_worse_and_a_rise_better() {
        let row = total(&planted(20, 0.1, |_| 0.3));
        // Probabilities ×0.3 from 10–13%: odds ×0.27–0.28.
        assert!(row.ratio > 0.26 && row.ratio < 0.29, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::Worse);
        let row = total(&planted(20, 0.01, |_| 4.0));
        assert_eq!(row.verdict, ScoreVerdict::Better);
    }

    #[test]
    fn a_fall_near_certainty_counts_as_much_as_the_rise_of_its_complement() {
        // 75–93% → 55% on every sample: a ratio of probabilities of ×0.6–0.73, mostly inside
        // the margin; the odds fall ×0.1–0.4.
        let row = total(&planted(20, 0.75, |i| {
            0.55 / (0.75 * (1.0 + 0.3 * ((i * 7 % 5) as f64 / 5.0)))
        }));
        assert!(row.mean_arm < 0.56 && row.mean_against > 0.75, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::Worse, "{row:?}");
    }

    #[test]
    fn a_precise_small_change_is_no_material_change_not_better() {
        // ×1.07 on every sample: significant, and inside the margin.
        let row = total(&planted(20, 0.1, |_| 1.07));
        assert!(row.p_adjusted < 0.05, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::NoMaterialChange);
    }

    #[test]
    fn an_effect_on_a_few_samples_is_unclear_or_found_never_reversed() {
        // Three of twenty samples fall ×0.01: a concentrated effect.
        let row = total(&planted(20, 0.1, |i| if i < 3 { 0.01 } else { 1.0 }));
        assert!(row.ratio < 1.0);
        assert_ne!(row.verdict, ScoreVerdict::Better);
        assert_ne!(row.verdict, ScoreVerdict::NoMaterialChange);
    }

    #[test]
    fn noise_in_both_directions_is_not_called() {
        // Alternating ×3 and ×1/3: the mean log-ratio is 0.
        let row = total(&planted(
            20,
            0.1,
            |i| if i % 2 == 0 { 3.0 } else { 1.0 / 3.0 },
        ));
        assert!(matches!(
            row.verdict,
            ScoreVerdict::Unclear | ScoreVerdict::NoMaterialChange
        ));
        assert!(row.p > 0.5, "{row:?}");
    }

    #[test]
    fn a_step_the_sampler_cannot_take_is_counted_and_its_likelihood_compared() {
        let row = total(&planted(10, 0.2, |_| 0.0));
        assert_eq!(row.cut, 10);
        assert_eq!(row.mean_arm, 0.0);
        assert_eq!(row.verdict, ScoreVerdict::Worse);
        assert!(row.ratio > 0.0 && row.ratio < 1e-6, "{row:?}");
    }

    #[test]
    fn a_reference_cut_in_both_arms_gets_no_verdict() {
        // Simulation with a known truth: the likelihoods fall ×0.01 in the arm, but the
        // sampler draws the reference in neither arm; half the samples are enough to say so.
        let mut steps = Vec::new();
        for i in 0..10 {
            let id = format!("s{i}");
            let (against, arm) = if i < 5 { (0.0, 0.0) } else { (0.3, 0.003) };
            let mut a = step(&id, "c", Arm::Baseline, StepKind::Answers, against);
            let mut b = step(&id, "c", Arm::variant(0), StepKind::Answers, arm);
            if i < 5 {
                a.likelihood = 1e-6;
                b.likelihood = 1e-8;
            }
            steps.extend([a, b]);
        }
        let row = total(&steps);
        assert!(row.out_of_reach, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::Unclear);
        assert!(row.ratio < 0.1, "the ratio is still shown: {row:?}");
        // Four of ten cut in both arms: within reach, and called.
        let mut within = steps.clone();
        within[0].probability = 0.2;
        within[0].cut_by_sampler = false;
        let row = total(&within);
        assert!(!row.out_of_reach, "{row:?}");
        assert_eq!(row.verdict, ScoreVerdict::Worse);
    }
}
