//! A unit's judgement: the verdict of the laws that applied to its transcript, as `judge` makes
//! it and the journal keeps it.

use serde::{Deserialize, Serialize};

/// The verdict of all applicable laws on one transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgement {
    pub passed: bool,
    /// Names of the applicable laws that did not hold, in law order.
    pub failed: Vec<String>,
    /// How many laws applied to this sample.
    pub applied: usize,
    /// Names of the laws that applied, in law order (empty in journals that predate it).
    #[serde(default)]
    pub applied_laws: Vec<String>,
}

impl Judgement {
    /// Whether this is a judgement as `judge` makes it: passed exactly when no law failed, the
    /// failed laws among those that applied. A line edited by hand (or from another build) that
    /// breaks this would be counted one way by the pass rate and another by the laws.
    pub fn check_consistent(&self) -> Result<(), String> {
        if self.passed != self.failed.is_empty() {
            return Err(format!(
                "field `judgement.passed`: {} while {} law(s) failed ({}); a unit passes exactly when none fails",
                self.passed,
                self.failed.len(),
                self.failed.join(", ")
            ));
        }
        if self.failed.len() > self.applied {
            return Err(format!(
                "field `judgement.failed`: {} failed laws, but only {} applied",
                self.failed.len(),
                self.applied
            ));
        }
        if !self.applied_laws.is_empty() {
            if let Some(stray) = self.failed.iter().find(|f| !self.applied_laws.contains(f)) {
                return Err(format!(
                    "field `judgement.failed`: law {stray:?} failed but is not among the laws that applied"
                ));
            }
        }
        Ok(())
    }
}
