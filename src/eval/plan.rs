//! The work of a run: every sample × arm × repeat, each with its own seed.

use serde::{Deserialize, Serialize};

use super::corpus::Sample;
use crate::eval::arm::{paired_seed, Arm};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    pub sample_index: usize,
    pub arm: Arm,
    pub repeat: u32,
    pub seed: u32,
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

/// Repeat-major, then arm-major order, each unit with its [`paired_seed`], which every arm of a
/// repeat shares. Each repeat finishes every arm before the next starts,
/// so a run stopped part-way has whole repeats of every arm and at most one uneven repeat,
/// and a batch of consecutive units rarely spans more than two arms. Within a repeat,
/// consecutive units share the arm's whole system prompt, which the backend's prefix cache
/// reuses. Order never changes a result: each unit carries its own seed.
pub fn plan(samples: &[Sample], repeats: u32, run_seed: u64, arms: &[Arm], aa: bool) -> Vec<Unit> {
    let mut units = Vec::new();
    for repeat in 0..repeats {
        for &arm in arms {
            for (i, s) in samples.iter().enumerate() {
                units.push(Unit {
                    sample_index: i,
                    arm,
                    repeat,
                    seed: paired_seed(run_seed, &s.id, repeat, arm, aa),
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
