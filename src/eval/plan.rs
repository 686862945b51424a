//! The work of a run: every sample × arm × repeat, each with its own seed.

use serde::{Deserialize, Serialize};

use super::corpus::Sample;
use super::stats::Arm;
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
            let salt = if aa && arm == Arm::Variant { "aa" } else { "" };
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
