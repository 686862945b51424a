//! The outcomes of a run paired by (sample, repeat): each arm's run of a pair, refusing
//! duplicate runs and samples that change category.

use std::collections::BTreeMap;

use super::arm::Arm;
use super::outcome::Outcome;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StatsError {
    #[error("sample `{sample_id}` has two {arm} outcomes for repeat {repeat}")]
    Duplicate {
        sample_id: String,
        arm: &'static str,
        repeat: u32,
    },
    #[error("sample `{sample_id}` appears in categories `{first}` and `{second}`")]
    CategoryClash {
        sample_id: String,
        first: String,
        second: String,
    },
}

/// One scored pair: the two arms' runs of a (sample, repeat).
pub(super) struct ScoredPair<'a> {
    pub(super) repeat: u32,
    pub(super) reference: &'a Outcome,
    pub(super) treatment: &'a Outcome,
}

/// A sample's scored pairs.
pub(super) struct SampleRuns<'a> {
    pub(super) category: &'a str,
    pub(super) pairs: Vec<ScoredPair<'a>>,
}

/// What a row is computed from: per sample, per repeat, whether each arm passed, and whether
/// it errored.
pub(super) struct RowInput<'a> {
    /// (category, runs) per sample.
    pub(super) samples: Vec<(&'a str, Vec<Run<'a>>)>,
    pub(super) gapped_pairs: usize,
    pub(super) unpaired_runs: usize,
}

/// One scored pair as (repeat, reference run, treatment run).
pub(super) type Run<'a> = (u32, &'a Outcome, &'a Outcome);

pub(super) type PairKey<'a> = (&'a str, &'a str, u32);

/// The outcomes of every arm, by (category, sample, repeat), refusing duplicates and samples
/// that change category.
pub(super) fn index(
    outcomes: &[Outcome],
) -> Result<BTreeMap<PairKey<'_>, BTreeMap<Arm, &Outcome>>, StatsError> {
    let mut category_of: BTreeMap<&str, &str> = BTreeMap::new();
    let mut runs: BTreeMap<PairKey, BTreeMap<Arm, &Outcome>> = BTreeMap::new();
    for outcome in outcomes {
        let category = *category_of
            .entry(&outcome.sample_id)
            .or_insert(&outcome.category);
        if category != outcome.category {
            return Err(StatsError::CategoryClash {
                sample_id: outcome.sample_id.clone(),
                first: category.to_string(),
                second: outcome.category.clone(),
            });
        }
        let arms = runs
            .entry((category, &outcome.sample_id, outcome.repeat))
            .or_default();
        if arms.insert(outcome.arm, outcome).is_some() {
            return Err(StatsError::Duplicate {
                sample_id: outcome.sample_id.clone(),
                arm: outcome.arm.name(),
                repeat: outcome.repeat,
            });
        }
    }
    Ok(runs)
}
