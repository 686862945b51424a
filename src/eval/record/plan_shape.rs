//! Which journal lines belong to a run: the units of the plan its manifest records.

use crate::eval::arm::{paired_seed, Arm};

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
        paired_seed(self.run_seed, sample_id, repeat, arm, self.aa)
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
