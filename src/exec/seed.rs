//! Sample seeds: each repeat of each sample (or benchmark entry) draws its own seed from the run
//! seed, so a unit's result does not depend on what ran before it or beside it.

use sha2::{Digest, Sha256};

/// Seed of one repeat of one sample, from the run seed, the sample's id, the repeat and a
/// `salt` that keeps the seeds of different uses apart for equal ids.
pub fn sample_seed(run_seed: u64, sample_id: &str, repeat: u32, salt: &str) -> u32 {
    let digest =
        Sha256::digest(format!("{run_seed}\u{1f}{sample_id}\u{1f}{repeat}\u{1f}{salt}").as_bytes());
    u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]])
}
