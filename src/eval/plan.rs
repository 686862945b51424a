//! The work of a run: every sample × arm × repeat, each with its own seed.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::corpus::Sample;
use super::stats::Arm;

/// Seed of one repeat of one sample. Both arms of a comparison share it, so a difference between
/// arms comes from the wording, not the dice. An A/A run salts the second arm's seed, so that
/// it measures how far two runs of the same wording drift apart.
pub fn sample_seed(run_seed: u64, sample_id: &str, repeat: u32, salt: &str) -> u32 {
    let digest =
        Sha256::digest(format!("{run_seed}\u{1f}{sample_id}\u{1f}{repeat}\u{1f}{salt}").as_bytes());
    u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]])
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    pub sample_index: usize,
    pub arm: Arm,
    pub repeat: u32,
    pub seed: u32,
}

/// Arm-major order: consecutive units share the arm's whole system prompt, which the backend's
/// prefix cache reuses. Order never changes a result: each unit carries its own seed.
pub fn plan(samples: &[Sample], repeats: u32, run_seed: u64, aa: bool) -> Vec<Unit> {
    let mut units = Vec::new();
    for arm in [Arm::Baseline, Arm::Variant] {
        let salt = if aa && arm == Arm::Variant { "aa" } else { "" };
        for repeat in 0..repeats {
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
