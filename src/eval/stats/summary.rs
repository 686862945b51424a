//! A run's summary: the skill effect and every wording comparison, with its flaky samples.

use std::collections::{BTreeMap, BTreeSet};

use super::comparison::compare_many_looked;
use super::outcome::Outcome;
use super::pairs::{index, StatsError};
use super::results::{Comparison, FlakySample, Summary};
use super::{sequential, Effort, ALPHA, CONFIDENCE, POWER, TARGET_EFFECT};
use crate::eval::arm::Arm;

/// Both comparisons of a run: the skill effect when control outcomes exist, and the wording.
pub fn summarize(outcomes: &[Outcome]) -> Result<Summary, StatsError> {
    summarize_with(outcomes, Effort::REPORT)
}

/// [`summarize`] at another effort: fewer resamples, no power analysis.
pub fn summarize_with(outcomes: &[Outcome], effort: Effort) -> Result<Summary, StatsError> {
    summarize_looked(outcomes, effort, None)
}

/// [`summarize_with`], for the looks of a sequential run when `looks` is given (the outcomes
/// are those of its last look).
pub fn summarize_looked(
    outcomes: &[Outcome],
    effort: Effort,
    looks: Option<&sequential::Looks>,
) -> Result<Summary, StatsError> {
    let skill_effect = outcomes
        .iter()
        .any(|o| o.arm == Arm::Control)
        .then(|| {
            compare_many_looked(
                outcomes,
                &["skill_effect".to_string()],
                Arm::Control,
                &[Arm::Baseline],
                effort,
                looks,
            )
            .map(|mut one| one.remove(0))
        })
        .transpose()?;
    let variants: BTreeSet<Arm> = outcomes
        .iter()
        .map(|o| o.arm)
        .filter(|a| a.variant_index().is_some())
        .chain([Arm::Variant(0)])
        .collect();
    let treatments: Vec<Arm> = variants.into_iter().collect();
    let names: Vec<String> = treatments.iter().map(|&a| wording_name(a)).collect();
    let mut wordings =
        compare_many_looked(outcomes, &names, Arm::Baseline, &treatments, effort, looks)?
            .into_iter();
    let wording = wordings
        .next()
        .expect("the first variant is always compared");
    let more_wordings = wordings.collect();
    let repeats: BTreeSet<u32> = outcomes.iter().map(|o| o.repeat).collect();
    Ok(Summary {
        alpha: ALPHA,
        confidence: CONFIDENCE,
        power: POWER,
        bootstrap_resamples: effort.bootstrap_resamples,
        joint_flips: effort.joint_flips,
        target_effect: TARGET_EFFECT,
        repeats: repeats.len(),
        skill_effect,
        wording,
        more_wordings,
        flaky_samples: flaky_samples(outcomes)?,
        sequential: looks.cloned(),
        purpose_laws: Vec::new(),
    })
}

/// Whether some variant is worse beyond noise in any row the report shows for it: a category
/// (its pass rate or its share of laws held), the total, or a law. The condition `--fail-on
/// worse` stops on; every row is in the one error budget of [`family`](super::family).
pub fn any_worse(summary: &Summary) -> bool {
    summary.wordings().any(Comparison::any_decline)
}

/// The name of the wording comparison of a variant arm: `wording` for the first, so that a
/// run with one variant reads (and draws its bootstrap seeds) as it always has.
pub fn wording_name(arm: Arm) -> String {
    match arm {
        Arm::Variant(0) => "wording".to_string(),
        other => format!("wording:{}", other.name()),
    }
}

/// Samples that both passed and failed across the scored repeats of one arm (gapped runs
/// left out), for every arm.
fn flaky_samples(outcomes: &[Outcome]) -> Result<Vec<FlakySample>, StatsError> {
    let runs = index(outcomes)?;
    let mut tallies: BTreeMap<(&str, &str, Arm), (usize, usize)> = BTreeMap::new();
    for ((category, sample_id, _), arms) in &runs {
        for (arm, outcome) in arms.iter().filter(|(_, o)| !o.gapped) {
            let tally = tallies.entry((category, sample_id, *arm)).or_default();
            tally.0 += usize::from(outcome.scored_pass());
            tally.1 += 1;
        }
    }
    Ok(tallies
        .into_iter()
        .filter(|&(_, (p, n))| p > 0 && p < n)
        .map(|((category, sample_id, arm), (passes, runs))| FlakySample {
            sample_id: sample_id.to_string(),
            category: category.to_string(),
            arm,
            passes,
            runs,
        })
        .collect())
}
