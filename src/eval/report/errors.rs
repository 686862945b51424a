//! Arms in which every unit errored. Such an arm's pass rate is 0% because nothing ran, not
//! because the model failed: a table over it reads as "no change" or "worse" about nothing, so
//! `run`, `report` and `compare` end with an error line naming the arm and the first error.

use crate::eval::arm::Arm;
use crate::eval::record::journal::JournalEntry;
use crate::eval::replay;
use crate::harness::transcript::StopReason;

/// One arm's units and how many of them errored, with the first error's reason.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmErrors {
    pub arm: Arm,
    pub units: usize,
    pub errored: usize,
    pub first: Option<String>,
}

/// Why a unit errored: the backend's error, else the recording that failed.
pub fn reason(entry: &JournalEntry) -> Option<String> {
    if !entry.errored {
        return None;
    }
    match &entry.transcript.stop {
        StopReason::Error(e) => Some(e.clone()),
        _ => replay::recording_failure(&entry.transcript),
    }
}

/// Each arm of the entries, in the order they first appear.
pub fn by_arm(entries: &[JournalEntry]) -> Vec<ArmErrors> {
    let mut arms: Vec<ArmErrors> = Vec::new();
    for entry in entries {
        let index = match arms.iter().position(|a| a.arm == entry.arm) {
            Some(i) => i,
            None => {
                arms.push(ArmErrors {
                    arm: entry.arm,
                    units: 0,
                    errored: 0,
                    first: None,
                });
                arms.len() - 1
            }
        };
        let tally = &mut arms[index];
        tally.units += 1;
        if entry.errored {
            tally.errored += 1;
            if tally.first.is_none() {
                tally.first = reason(entry);
            }
        }
    }
    arms
}

/// The arms whose every unit errored.
pub fn all_errored(entries: &[JournalEntry]) -> Vec<ArmErrors> {
    by_arm(entries)
        .into_iter()
        .filter(|a| a.units > 0 && a.errored == a.units)
        .collect()
}

/// One line for the arms whose every unit errored, or none. `what` names what is void: "the
/// run", "the comparison".
pub fn fatal_line(arms: &[ArmErrors], what: &str) -> Option<String> {
    let first = arms.first()?;
    let names: Vec<String> = arms
        .iter()
        .map(|a| format!("{} ({} of {})", a.arm.name(), a.errored, a.units))
        .collect();
    Some(format!(
        "every unit of {} errored, so {what} measured nothing; the first error: {}",
        names.join(", "),
        first.first.as_deref().unwrap_or("(no reason kept)")
    ))
}
