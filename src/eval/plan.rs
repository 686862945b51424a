//! The work of a run: every sample × arm × repeat, each with its own seed.

use serde::{Deserialize, Serialize};

use super::corpus::Sample;
use crate::eval::arm::Arm;
use crate::exec::seed::sample_seed;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    pub sample_index: usize,
    pub arm: Arm,
    pub repeat: u32,
    pub seed: u32,
}

/// The arms a run compares, in plan order: control (unless left out), baseline, variant.
pub fn arms(control: bool) -> Vec<Arm> {
    arms_with_variants(control, 1)
}

/// The arms of a run with `variants` variants (one for an A/A run): control (unless left out),
/// baseline, then each variant in the order given.
pub fn arms_with_variants(control: bool, variants: usize) -> Vec<Arm> {
    let mut arms = Vec::new();
    if control {
        arms.push(Arm::Control);
    }
    arms.push(Arm::Baseline);
    arms.extend((0..variants.max(1)).map(Arm::variant));
    arms
}

/// The most units one run's plan may hold: far beyond any run a CPU finishes (a million units
/// is days of model time), and small enough that the plan fits in memory.
pub const MAX_UNITS: u64 = 1_000_000;

/// Refuses a plan of more than [`MAX_UNITS`] units before it is built.
pub fn check_size(samples: usize, arms: usize, repeats: u32) -> anyhow::Result<()> {
    let units = (samples as u128) * (arms as u128) * u128::from(repeats);
    if units > u128::from(MAX_UNITS) {
        anyhow::bail!(
            "--repeats {repeats}: the plan would hold {units} units ({samples} samples × {arms} arms × {repeats} repeats), more than the {MAX_UNITS} a run takes"
        );
    }
    Ok(())
}

/// Repeat-major, then arm-major order. Every arm of a run shares a repeat's seed (control,
/// baseline, variant), so a difference between arms comes from the skill's text, not the dice.
/// An A/A run salts the variant arm's seed, so that it measures how far two runs of the same
/// wording drift apart.
/// Each repeat finishes every arm before the next starts,
/// so a run stopped part-way has whole repeats of every arm and at most one uneven repeat,
/// and a batch of consecutive units rarely spans more than two arms. Within a repeat,
/// consecutive units share the arm's whole system prompt, which the backend's prefix cache
/// reuses. Order never changes a result: each unit carries its own seed.
pub fn plan(samples: &[Sample], repeats: u32, run_seed: u64, arms: &[Arm], aa: bool) -> Vec<Unit> {
    let mut units = Vec::new();
    for repeat in 0..repeats {
        for &arm in arms {
            let salt = if aa && arm == Arm::Variant(0) {
                "aa"
            } else {
                ""
            };
            for (i, s) in samples.iter().enumerate() {
                units.push(Unit {
                    sample_index: i,
                    arm,
                    repeat,
                    seed: sample_seed(run_seed, &s.id, repeat, salt),
                });
            }
        }
    }
    units
}

/// Picks up to `limit` samples, taking categories in turn so that each is represented.
pub fn limit_round_robin(samples: Vec<Sample>, limit: usize) -> Vec<Sample> {
    if samples.len() <= limit {
        return samples;
    }
    let mut by_category: Vec<(String, std::collections::VecDeque<Sample>)> = Vec::new();
    for s in samples {
        match by_category.iter_mut().find(|(c, _)| *c == s.category) {
            Some((_, q)) => q.push_back(s),
            None => by_category.push((s.category.clone(), [s].into())),
        }
    }
    let mut out = Vec::new();
    while out.len() < limit {
        for (_, q) in by_category.iter_mut() {
            if out.len() < limit {
                if let Some(s) = q.pop_front() {
                    out.push(s);
                }
            }
        }
    }
    out
}

/// What a run's plan admits, to check a journal against: an entry belongs to the run only if
/// its arm and repeat are the plan's, its sample is one of the run's, and its seed is the one
/// the plan gives that unit. A line pasted from another run, or a resume of a journal written
/// with another seed, is refused instead of counted.
#[derive(Debug, Clone)]
pub struct PlanShape {
    pub run_seed: u64,
    pub arms: Vec<Arm>,
    pub aa: bool,
    /// The run's samples, when known (the corpus is at hand).
    pub sample_ids: Option<std::collections::BTreeSet<String>>,
}

impl PlanShape {
    /// The seed the plan gives a unit.
    pub fn seed(&self, sample_id: &str, arm: Arm, repeat: u32) -> u32 {
        let salt = if self.aa && arm == Arm::Variant(0) {
            "aa"
        } else {
            ""
        };
        sample_seed(self.run_seed, sample_id, repeat, salt)
    }

    /// Why an entry is not a unit of this plan, if it is not.
    pub fn misfit(&self, sample_id: &str, arm: Arm, repeat: u32, seed: u32) -> Option<String> {
        let unit = format!("sample {sample_id:?}, arm {}, repeat {repeat}", arm.name());
        if !self.arms.contains(&arm) {
            let names: Vec<&str> = self.arms.iter().map(|a| a.name()).collect();
            return Some(format!("{unit}: the run's arms are {}", names.join(", ")));
        }
        // No bound on the repeat: a resumed run may have grown them. The seed says whose it is.
        if self
            .sample_ids
            .as_ref()
            .is_some_and(|ids| !ids.contains(sample_id))
        {
            return Some(format!("{unit}: the run's corpus holds no such sample"));
        }
        let planned = self.seed(sample_id, arm, repeat);
        (seed != planned).then(|| {
            format!(
                "{unit}: seed {seed}, where the run's plan (run seed {}) gives {planned}: a line from another run",
                self.run_seed
            )
        })
    }
}
