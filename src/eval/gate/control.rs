//! The third way a gate cannot fail, which only a run shows: every law held in every unit of
//! the control arm (the skill with its body removed). Then the pack passes without the skill
//! as with it: its laws do not measure the skill. Read from the run's journal.

use std::path::Path;

use crate::eval::arm::Arm;
use crate::eval::judgement::Judgement;
use crate::eval::record::folder::JOURNAL_FILE;
use crate::eval::record::journal;

/// Why the run in `run_folder` cannot fail for its skill, when every law held in its control
/// arm; `None` when some law failed there, or the run has no control arm to tell (`--no-control`,
/// or every control unit errored or had no law that applied). A measured pack's prompts all
/// reach the skill it names, so every control unit counts.
pub fn vacuous_control(run_folder: &Path) -> anyhow::Result<Option<String>> {
    let entries = journal::read(&run_folder.join(JOURNAL_FILE))?;
    Ok(why_vacuous(
        entries.iter().map(|e| (e.arm, e.errored, &e.judgement)),
    ))
}

/// The same, from each unit's arm, whether it errored, and its judgement.
fn why_vacuous<'a>(units: impl IntoIterator<Item = (Arm, bool, &'a Judgement)>) -> Option<String> {
    let judged: Vec<&Judgement> = units
        .into_iter()
        .filter(|(arm, errored, judgement)| {
            *arm == Arm::Control && !errored && judgement.applied > 0
        })
        .map(|(_, _, judgement)| judgement)
        .collect();
    if judged.is_empty() || judged.iter().any(|j| !j.passed) {
        return None;
    }
    let n = judged.len();
    Some(format!(
        "every law held in {} of the control arm (the skill's body removed): the laws do not need the skill, so the pack cannot tell it from none",
        if n == 1 {
            "the 1 unit".to_string()
        } else {
            format!("all {n} units")
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(arm: Arm, failed: &[&str], applied: usize) -> (Arm, bool, Judgement) {
        let judgement = Judgement {
            passed: failed.is_empty(),
            failed: failed.iter().map(|s| s.to_string()).collect(),
            applied,
            applied_laws: Vec::new(),
        };
        (arm, false, judgement)
    }

    fn why(units: &[(Arm, bool, Judgement)]) -> Option<String> {
        why_vacuous(units.iter().map(|(arm, errored, j)| (*arm, *errored, j)))
    }

    /// Truth: the definition itself, on units written by hand. Vacuous exactly when every
    /// judged control unit passed; a failed law in the control, or no judged control unit,
    /// leaves the gate able to fail; the other arms and errored units do not count.
    #[test]
    fn a_control_where_every_law_held_is_vacuous() {
        let held = [
            unit(Arm::Control, &[], 1),
            unit(Arm::Control, &[], 2),
            unit(Arm::Baseline, &["law"], 1),
            (Arm::Control, true, unit(Arm::Control, &["law"], 1).2),
        ];
        let said = why(&held).unwrap();
        assert!(said.contains("all 2 units of the control arm"), "{said}");
        let failed = [unit(Arm::Control, &[], 1), unit(Arm::Control, &["law"], 1)];
        assert_eq!(why(&failed), None);
        assert_eq!(why(&[unit(Arm::Control, &[], 0)]), None);
        assert_eq!(why(&[unit(Arm::Baseline, &[], 1)]), None);
    }
}
