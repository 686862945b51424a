//! `--shard I/N`: one of N deterministic slices of a run's plan, so that a run can be split
//! across machines and put back together with `skilleval merge`. A run is sliced by sample: the
//! sample at position p of the run's selection belongs to shard `p mod N + 1`, with every arm and
//! every repeat of it, so the paired units the statistics compare always land in one shard.

use anyhow::bail;
use serde::{Deserialize, Serialize};

/// Which slice of a run this process runs: `index` of `count`, counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parses `I/N` with 1 ≤ I ≤ N.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let usage = || format!("--shard {text:?}: write I/N, e.g. 2/3 (the second of three)");
        let (index, count) = text.split_once('/').ok_or_else(usage)?;
        let index: u32 = index.trim().parse().map_err(|_| usage())?;
        let count: u32 = count.trim().parse().map_err(|_| usage())?;
        if count == 0 || index == 0 || index > count {
            return Err(format!(
                "--shard {text}: I must be from 1 to N (N at least 1)"
            ));
        }
        Ok(Shard { index, count })
    }

    /// Whether the sample at `position` in the run's selection is this shard's.
    pub fn holds(&self, position: usize) -> bool {
        position % self.count as usize == (self.index - 1) as usize
    }

    /// The shard that holds the sample at `position` of a run split `count` ways.
    pub fn of(position: usize, count: u32) -> Shard {
        Shard {
            index: (position % count as usize) as u32 + 1,
            count,
        }
    }

    /// Refuses a shard that would run nothing: a run of `samples` samples has only that many
    /// non-empty shards.
    pub fn check_against(&self, samples: usize) -> anyhow::Result<()> {
        if self.index as usize > samples {
            bail!(
                "--shard {self}: the run selects only {samples} samples, so shard {} and above would be empty; use N ≤ {samples}",
                self.index
            );
        }
        Ok(())
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What a shard's manifest records: which slice it ran, and the whole run's selection in plan
/// order, from which `merge` rebuilds the unsharded plan and checks every entry's shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardRecord {
    pub index: u32,
    pub count: u32,
    /// Every sample id of the whole run's selection, in plan order (not only this shard's).
    pub sample_ids: Vec<String>,
}

impl ShardRecord {
    pub fn shard(&self) -> Shard {
        Shard {
            index: self.index,
            count: self.count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", "1/3/4"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_position_lands_in_exactly_one_shard() {
        let shards: Vec<Shard> = (1..=3).map(|index| Shard { index, count: 3 }).collect();
        for position in 0..10 {
            let holders: Vec<&Shard> = shards.iter().filter(|s| s.holds(position)).collect();
            assert_eq!(holders, vec![&Shard::of(position, 3)]);
        }
    }
}
