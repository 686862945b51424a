//! The lines under a comparison's table and the run's own notes: laws held, gaps, the
//! directions a row could not see, errored units, what several variants share of the error
//! budget, and the flaky samples.

use super::figures::{p_value, rows_of};
use crate::eval::stats::{self, Comparison, Summary, Verdict};

/// Said under the tables of a run with several variants: how far its correction reaches.
pub(super) fn several_variants_note(summary: &Summary) -> Option<String> {
    let count = summary.wordings().count();
    (count > 1).then(|| {
        format!(
            "{count} variants against one baseline, on the same seeds: each variant's rows share \
             {:.3} of the run's {} error budget, so a variant is not called better or worse for \
             having been tried among many.",
            summary.alpha / count as f64,
            summary.alpha
        )
    })
}

/// The rows of a comparison where the run could not see a change in some direction, said in
/// words, so that a short "↓ unseen" in the table is never read as "no decline": either the
/// reference's rate leaves less room that way than the change the run finds the other way, or
/// the row has too few samples to find a change of any size four times in five.
pub(super) fn blind_spots(comparison: &Comparison) -> Option<String> {
    let reference = comparison.reference.name();
    let mut sentences = Vec::new();
    for (up, word) in [(false, "a decline"), (true, "a rise")] {
        let rows: Vec<String> = comparison
            .rows()
            .filter(|r| {
                let (rise, decline) = r.unseen();
                (if up { rise } else { decline }) && !(rise && decline)
            })
            .map(|r| {
                format!(
                    "{} (the {reference} passes {:.0}%)",
                    r.name,
                    r.reference.rate.unwrap_or(0.0) * 100.0
                )
            })
            .collect();
        if !rows.is_empty() {
            sentences.push(format!(
                "Could not see {word} in {}: the {reference} leaves too little room for one \
                 this run would find.",
                rows.join(", ")
            ));
        }
    }
    let underpowered: Vec<String> = comparison
        .rows()
        .filter(|r| r.unseen() == (true, true))
        .map(|r| format!("{} ({} samples)", r.name, r.samples))
        .collect();
    if !underpowered.is_empty() {
        sentences.push(format!(
            "No change of any size would be found {:.0}% of the time in {}: a verdict there is \
             possible, a claim of no change is not.",
            stats::POWER * 100.0,
            underpowered.join(", ")
        ));
    }
    (!sentences.is_empty()).then(|| sentences.join(" "))
}

/// The graded outcome of each category and the total: the mean share of a run's laws that
/// held, in each arm, and the rows where it carried a verdict.
pub(super) fn held_line(comparison: &Comparison) -> Option<String> {
    let parts: Vec<String> = rows_of(comparison)
        .into_iter()
        .filter_map(|row| {
            let held = row.held.as_ref()?;
            let verdict = match held.verdict {
                Verdict::Better | Verdict::Worse => format!(
                    " {} (adj. p {})",
                    if held.verdict == Verdict::Better {
                        "better"
                    } else {
                        "worse"
                    },
                    p_value(held.p_adjusted)
                ),
                _ => String::new(),
            };
            Some(format!(
                "{} {:.0}% → {:.0}%{verdict}",
                row.name,
                held.reference * 100.0,
                held.treatment * 100.0
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "Laws held (mean share of a run's laws that held, {} → {}): {}.",
            comparison.reference.name(),
            comparison.treatment.name(),
            parts.join(", ")
        )
    })
}

/// The lines under a comparison's table: the laws-held figures, and where it could not see.
pub(super) fn comparison_notes(comparison: &Comparison) -> Vec<String> {
    [
        held_line(comparison),
        gaps_line(comparison),
        blind_spots(comparison),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Runs of each arm that met a call no fixture answers which could have changed their verdict
/// (a run that failed before any answer is not counted: no recording could have saved it).
pub(super) fn gaps_line(comparison: &Comparison) -> Option<String> {
    let (reference, treatment) = comparison.gaps();
    (reference + treatment > 0).then(|| {
        format!(
            "Gaps (runs where a call no fixture answers could have changed the verdict, scored as judged; a run that failed before the gap is not counted): {} {reference}, {} {treatment}.",
            comparison.reference.name(),
            comparison.treatment.name()
        )
    })
}

/// Units that errored (the backend failed, or a recording did), which count as failures: said
/// aloud, since a rate alone does not show them.
pub(super) fn errored_statement(summary: &Summary) -> Option<String> {
    let wording = &summary.wording.total;
    let mut parts = Vec::new();
    if let Some(skill) = &summary.skill_effect {
        parts.push(("control", skill.total.reference.errored));
    }
    parts.push(("baseline", wording.reference.errored));
    for wording in summary.wordings() {
        parts.push((wording.treatment.name(), wording.total.treatment.errored));
    }
    let total: usize = parts.iter().map(|p| p.1).sum();
    (total > 0).then(|| {
        let counts: Vec<String> = parts.iter().map(|(arm, n)| format!("{arm} {n}")).collect();
        format!(
            "Errored units (counted as failures; the journal holds why): {}.",
            counts.join(", ")
        )
    })
}

/// One line per flaky sample, naming each arm in which it was flaky.
pub(super) fn flaky_lines(summary: &Summary) -> Vec<String> {
    let mut lines: Vec<((&str, &str), Vec<String>)> = Vec::new();
    for flaky in &summary.flaky_samples {
        let key = (flaky.category.as_str(), flaky.sample_id.as_str());
        let arm = format!(
            "{} passed {} of {}",
            flaky.arm.name(),
            flaky.passes,
            flaky.runs
        );
        match lines.last_mut() {
            Some((last, arms)) if *last == key => arms.push(arm),
            _ => lines.push((key, vec![arm])),
        }
    }
    lines
        .into_iter()
        .map(|((category, sample_id), arms)| {
            format!("`{sample_id}` ({category}): {}", arms.join("; "))
        })
        .collect()
}
