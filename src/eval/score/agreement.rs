//! A score beside a sampled run of the same pack, wordings and sampler (`score --against RUN`):
//! per (sample, arm) and step kind, the scored rate against the share of the run's repeats that
//! took the step, their correlation and a calibration table. The run is the truth a score is the
//! expectation of, measured on the user's own pack.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::measure::{StepKind, StepScore};
use crate::eval::arm::Arm;
use crate::eval::record::journal::JournalEntry;
use crate::eval::record::load::RunRecord;
use crate::harness::backend::Sampling;

/// Bins of the scored rate in the calibration table.
const BIN_EDGES: [f64; 7] = [0.0, 0.05, 0.2, 0.4, 0.6, 0.8, 1.0];

/// One bin of the calibration table: pairs whose scored rate fell in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bin {
    pub low: f64,
    pub high: f64,
    pub pairs: usize,
    pub mean_scored: f64,
    pub mean_drawn: f64,
}

/// One step kind's agreement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindAgreement {
    pub step: StepKind,
    /// (sample, arm) pairs with both a scored rate and drawn units.
    pub pairs: usize,
    /// The run's units behind them.
    pub units: usize,
    pub mean_scored: f64,
    pub mean_drawn: f64,
    /// Pearson's correlation over the pairs; `None` when either side does not vary.
    pub correlation: Option<f64>,
    pub bins: Vec<Bin>,
    /// Each pair: (scored, drawn, units).
    pub points: Vec<(f64, f64, usize)>,
}

/// The score against one sampled run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    pub run: String,
    pub kinds: Vec<KindAgreement>,
}

/// What the run drew of one step in one unit: `None` when the unit says nothing of it (an
/// answer judged only on the units that took the reference path to it).
fn drawn(kind: StepKind, steps: &[&StepScore], unit: &JournalEntry) -> Option<bool> {
    let first = unit
        .transcript
        .rounds
        .first()
        .map_or("", |r| r.raw.as_str());
    let text_of = |k: StepKind| steps.iter().find(|s| s.kind == k).map(|s| s.text.as_str());
    let laws_hold = |k: StepKind| -> Option<bool> {
        let laws = &steps.iter().find(|s| s.kind == k)?.drawn.as_ref()?.laws;
        Some(!unit.judgement.failed.iter().any(|f| laws.contains(f)))
    };
    let reference_call = || text_of(StepKind::Arguments);
    match kind {
        StepKind::Calls => Some(first.starts_with(text_of(StepKind::Calls)?)),
        StepKind::Arguments => Some(first.starts_with(reference_call()?)),
        StepKind::NoCall => Some(!first.starts_with(text_of(StepKind::NoCall)?)),
        StepKind::QuestionWords => Some(first.starts_with(text_of(StepKind::QuestionWords)?)),
        StepKind::Asks => laws_hold(StepKind::Asks),
        // The answer's rate is conditional on the path the score forces to it.
        StepKind::Answers => match first.starts_with(reference_call()?) {
            true => laws_hold(StepKind::Answers),
            false => None,
        },
        StepKind::AnswerWords => None,
    }
}

/// The scored rate a run's units are compared with.
fn scored(kind: StepKind, steps: &[&StepScore]) -> Option<f64> {
    steps.iter().find(|s| s.kind == kind).map(|s| s.probability)
}

/// Refuses a run of another pack or sampler: checked before the model loads, and again here.
pub fn same_pack_and_sampler(
    run: &RunRecord,
    pack: &str,
    sampling: Sampling,
) -> anyhow::Result<()> {
    let name = run.dir.display().to_string();
    if run.manifest.pack != pack {
        anyhow::bail!(
            "--against {name}: a run of pack {}, not of {pack}",
            run.manifest.pack
        );
    }
    if run.manifest.sampling.temperature != sampling.temperature
        || run.manifest.sampling.top_k != sampling.top_k
        || run.manifest.sampling.top_p != sampling.top_p
    {
        anyhow::bail!(
            "--against {name}: the run sampled at temperature {}, top-k {}, top-p {}, the score reads temperature {}, top-k {}, top-p {}: give the same sampler",
            run.manifest.sampling.temperature,
            run.manifest.sampling.top_k,
            run.manifest.sampling.top_p,
            sampling.temperature,
            sampling.top_k,
            sampling.top_p
        );
    }
    Ok(())
}

/// Compares the score's steps with a run's units. The run must be of the same pack, sampler and
/// wordings (by label, arm for arm); conversations are compared on their first reply only.
pub fn agreement(
    steps: &[StepScore],
    sampling: Sampling,
    variants: &[String],
    pack: &str,
    run: &RunRecord,
) -> anyhow::Result<Agreement> {
    same_pack_and_sampler(run, pack, sampling)?;
    let name = run.dir.display().to_string();
    let run_labels = run.manifest.variant_labels();
    let mut by_cell: BTreeMap<(String, Arm), Vec<&StepScore>> = BTreeMap::new();
    for step in steps {
        by_cell
            .entry((step.sample_id.clone(), step.arm))
            .or_default()
            .push(step);
    }
    // A wording is the same arm in both when its label is.
    let run_arm = |arm: Arm| -> Option<Arm> {
        match arm.variant_index() {
            None => Some(arm),
            Some(i) => run_labels
                .iter()
                .position(|l| Some(l) == variants.get(i))
                .map(Arm::variant),
        }
    };
    let mut units: BTreeMap<(String, Arm), Vec<&JournalEntry>> = BTreeMap::new();
    for unit in run.entries.iter().filter(|u| !u.errored && !u.gapped) {
        units
            .entry((unit.sample_id.clone(), unit.arm))
            .or_default()
            .push(unit);
    }
    let kinds = [
        StepKind::Calls,
        StepKind::Arguments,
        StepKind::NoCall,
        StepKind::Answers,
        StepKind::Asks,
        StepKind::QuestionWords,
    ];
    let mut out = Vec::new();
    for kind in kinds {
        let mut points = Vec::new();
        for ((sample, arm), cell) in &by_cell {
            // A conversation's calls are a product over its path; its first reply is compared
            // only where that reply is the step (asking).
            let conversation = cell
                .iter()
                .any(|s| matches!(s.kind, StepKind::Asks | StepKind::QuestionWords));
            if conversation && !matches!(kind, StepKind::Asks | StepKind::QuestionWords) {
                continue;
            }
            let Some(score) = scored(kind, cell) else {
                continue;
            };
            let Some(ran) = run_arm(*arm).and_then(|a| units.get(&(sample.clone(), a))) else {
                continue;
            };
            let seen: Vec<bool> = ran.iter().filter_map(|u| drawn(kind, cell, u)).collect();
            if seen.is_empty() {
                continue;
            }
            let share = seen.iter().filter(|s| **s).count() as f64 / seen.len() as f64;
            points.push((score, share, seen.len()));
        }
        if points.is_empty() {
            continue;
        }
        out.push(summarize(kind, points));
    }
    if out.is_empty() {
        anyhow::bail!(
            "--against {name}: no sample and arm of the score has units in the run (are the wordings the same, by file name?)"
        );
    }
    Ok(Agreement {
        run: name,
        kinds: out,
    })
}

fn summarize(step: StepKind, points: Vec<(f64, f64, usize)>) -> KindAgreement {
    let n = points.len() as f64;
    let mean_scored = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_drawn = points.iter().map(|p| p.1).sum::<f64>() / n;
    let cov: f64 = points
        .iter()
        .map(|p| (p.0 - mean_scored) * (p.1 - mean_drawn))
        .sum();
    let vx: f64 = points.iter().map(|p| (p.0 - mean_scored).powi(2)).sum();
    let vy: f64 = points.iter().map(|p| (p.1 - mean_drawn).powi(2)).sum();
    let correlation = (vx > 0.0 && vy > 0.0).then(|| cov / (vx * vy).sqrt());
    let bins = BIN_EDGES
        .windows(2)
        .enumerate()
        .filter_map(|(i, edge)| {
            let last = i + 2 == BIN_EDGES.len();
            let inside: Vec<&(f64, f64, usize)> = points
                .iter()
                .filter(|p| p.0 >= edge[0] && (p.0 < edge[1] || (last && p.0 <= edge[1])))
                .collect();
            (!inside.is_empty()).then(|| {
                let m = inside.len() as f64;
                Bin {
                    low: edge[0],
                    high: edge[1],
                    pairs: inside.len(),
                    mean_scored: inside.iter().map(|p| p.0).sum::<f64>() / m,
                    mean_drawn: inside.iter().map(|p| p.1).sum::<f64>() / m,
                }
            })
        })
        .collect();
    KindAgreement {
        step,
        pairs: points.len(),
        units: points.iter().map(|p| p.2).sum(),
        mean_scored,
        mean_drawn,
        correlation,
        bins,
        points,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_perfectly_calibrated_score_correlates_one_and_its_bins_agree() {
        // Simulation with a known truth: drawn shares equal to the scored rates.
        let points: Vec<(f64, f64, usize)> = (0..10)
            .map(|i| (i as f64 / 10.0, i as f64 / 10.0, 6))
            .collect();
        let k = summarize(StepKind::Calls, points);
        assert!((k.correlation.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(k.units, 60);
        for bin in &k.bins {
            assert!((bin.mean_scored - bin.mean_drawn).abs() < 1e-12, "{bin:?}");
        }
        assert_eq!(k.bins.iter().map(|b| b.pairs).sum::<usize>(), 10);
    }

    #[test]
    fn a_score_unrelated_to_the_draws_has_no_correlation_to_show() {
        let points = vec![(0.2, 0.5, 6), (0.4, 0.5, 6), (0.9, 0.5, 6)];
        let k = summarize(StepKind::Calls, points);
        assert_eq!(k.correlation, None);
    }
}
