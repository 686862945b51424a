//! The judged result of one run, and how it scores: passed, one law held, or the share of its
//! laws that held.

use crate::eval::arm::Arm;
use serde::{Deserialize, Serialize};

/// The judged result of one run: one sample, under one arm, in one repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub sample_id: String,
    pub category: String,
    pub arm: Arm,
    pub repeat: u32,
    pub passed: bool,
    #[serde(default)]
    pub failed_laws: Vec<String>,
    /// Laws that applied to the sample (empty in journals written before they were recorded).
    #[serde(default)]
    pub applied_laws: Vec<String>,
    /// A fixture was missing: the run says nothing about the wording.
    #[serde(default)]
    pub gapped: bool,
    /// The run failed (backend or loop error).
    #[serde(default)]
    pub errored: bool,
}

impl Outcome {
    pub fn scored_pass(&self) -> bool {
        self.passed && !self.errored
    }

    pub fn law_held(&self, law: &str) -> bool {
        !self.errored && !self.failed_laws.iter().any(|l| l == law)
    }

    /// The share of the laws that applied to this run which held: a graded outcome that still
    /// moves where a sample almost never passes every law. An errored run held none; a journal
    /// that did not record its laws gives the pass as 0 or 1.
    pub fn laws_held_share(&self) -> f64 {
        if self.errored {
            return 0.0;
        }
        if self.applied_laws.is_empty() {
            return f64::from(u8::from(self.passed));
        }
        let held = self
            .applied_laws
            .iter()
            .filter(|law| !self.failed_laws.contains(law))
            .count();
        held as f64 / self.applied_laws.len() as f64
    }
}
