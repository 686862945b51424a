//! The outcomes of a run paired by (sample, repeat): each arm's run of a pair, refusing
//! duplicate runs and samples that change category.

use std::collections::{BTreeMap, BTreeSet};

use super::outcome::Outcome;
use crate::eval::arm::Arm;

/// Outcomes that cannot be paired.
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

/// (category, sample, repeat).
pub(super) type PairKey<'a> = (&'a str, &'a str, u32);

/// Every arm's run of each (category, sample, repeat).
pub(super) type Runs<'a> = BTreeMap<PairKey<'a>, BTreeMap<Arm, &'a Outcome>>;

/// The outcomes of every arm, by (category, sample, repeat), refusing duplicates and samples
/// that change category.
pub(super) fn index(outcomes: &[Outcome]) -> Result<Runs<'_>, StatsError> {
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

/// Two arms' runs paired by (sample, repeat), with what did not pair.
pub(super) struct Paired<'a> {
    /// Scored pairs by sample.
    pub(super) samples: BTreeMap<&'a str, SampleRuns<'a>>,
    /// Per category: pairs with a gap on either side (scored), runs without a partner.
    pub(super) tallies: BTreeMap<&'a str, (usize, usize)>,
}

impl<'a> Paired<'a> {
    pub(super) fn new(runs: &Runs<'a>, reference: Arm, treatment: Arm) -> Paired<'a> {
        let mut samples: BTreeMap<&str, SampleRuns> = BTreeMap::new();
        let mut tallies: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for (&(category, sample_id, repeat), arms) in runs {
            let tally = tallies.entry(category).or_default();
            match (arms.get(&reference), arms.get(&treatment)) {
                (Some(r), Some(t)) => {
                    tally.0 += usize::from(r.gapped || t.gapped);
                    samples
                        .entry(sample_id)
                        .or_insert_with(|| SampleRuns {
                            category,
                            pairs: Vec::new(),
                        })
                        .pairs
                        .push(ScoredPair {
                            repeat,
                            reference: r,
                            treatment: t,
                        })
                }
                (None, None) => {}
                _ => tally.1 += 1,
            }
        }
        Paired { samples, tallies }
    }

    /// A row's input over the samples `keep` picks (its gaps and unpaired runs left at 0).
    pub(super) fn input(&self, keep: &dyn Fn(&SampleRuns) -> bool) -> RowInput<'a> {
        RowInput {
            samples: self
                .samples
                .values()
                .filter(|s| keep(s))
                .map(|s| {
                    (
                        s.category,
                        s.pairs
                            .iter()
                            .map(|p| (p.repeat, p.reference, p.treatment))
                            .collect(),
                    )
                })
                .collect(),
            gapped_pairs: 0,
            unpaired_runs: 0,
        }
    }

    /// Some run recorded which laws applied to it: the share of laws held says more than the
    /// pass.
    pub(super) fn graded(&self) -> bool {
        self.pairs()
            .any(|p| !p.reference.applied_laws.is_empty() || !p.treatment.applied_laws.is_empty())
    }

    /// Every law that applied to some scored pair, by name.
    pub(super) fn law_names(&self) -> BTreeSet<&'a str> {
        self.pairs()
            .flat_map(|p| {
                p.reference
                    .applied_laws
                    .iter()
                    .chain(&p.treatment.applied_laws)
            })
            .map(String::as_str)
            .collect()
    }

    pub(super) fn pairs(&self) -> impl Iterator<Item = &ScoredPair<'a>> {
        self.samples.values().flat_map(|s| &s.pairs)
    }
}

impl SampleRuns<'_> {
    /// Some pair of this sample applied `law` in either arm.
    pub(super) fn applies(&self, law: &str) -> bool {
        self.pairs.iter().any(|p| {
            p.reference.applied_laws.iter().any(|l| l == law)
                || p.treatment.applied_laws.iter().any(|l| l == law)
        })
    }
}
