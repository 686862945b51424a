//! A run's summary from its record: each journal entry's outcome, a sequential run's looks, and
//! the comparisons `stats` computes from them, labelled as the manifest names the arms. The one
//! computation behind `run`, `merge` and `report`, so a past run's reports can be rebuilt.

use anyhow::anyhow;

use crate::eval::record::folder::JOURNAL_FILE;
use crate::eval::record::{JournalEntry, Manifest, RunRecord, SequentialRecord};
use crate::eval::stats::sequential::Looks;
use crate::eval::stats::{self, Outcome, StatsError, Summary};

/// What the statistics need of a journal entry.
pub fn outcome(entry: &JournalEntry) -> Outcome {
    Outcome {
        sample_id: entry.sample_id.clone(),
        category: entry.category.clone(),
        arm: entry.arm,
        repeat: entry.repeat,
        passed: entry.judgement.passed,
        failed_laws: entry.judgement.failed.clone(),
        applied_laws: entry.judgement.applied_laws.clone(),
        gapped: entry.gapped,
        errored: entry.errored,
    }
}

/// The looks a sequential run has taken, for the statistics; `None` before the first.
fn looks(record: &SequentialRecord) -> Option<Looks> {
    (!record.looks.is_empty()).then(|| Looks {
        planned: record.planned_repeats,
        at: record.looks.iter().map(|l| l.repeats).collect(),
        spending: record.spending,
    })
}

/// A run's comparisons from its journal entries, each variant named as its manifest names it.
pub fn summary(manifest: &Manifest, entries: &[JournalEntry]) -> Result<Summary, StatsError> {
    summary_at(manifest, entries, stats::Effort::REPORT)
}

/// [`summary`] at another effort. A sequential run is summarized at its last look, with the
/// looks before it, from the repeats that look had seen.
pub fn summary_at(
    manifest: &Manifest,
    entries: &[JournalEntry],
    effort: stats::Effort,
) -> Result<Summary, StatsError> {
    let mut outcomes: Vec<Outcome> = entries.iter().map(outcome).collect();
    let looks = manifest.sequential.as_ref().and_then(looks);
    if let Some(last) = looks.as_ref().and_then(|l| l.at.last().copied()) {
        outcomes.retain(|o| o.repeat < last);
    }
    let mut summary = stats::summarize_looked(&outcomes, effort, looks.as_ref())?;
    summary.label_variants(&manifest.variant_labels());
    if manifest.variant.is_none() {
        summary.wording.label = Some(stats::A_A_LABEL.to_string());
    }
    summary.label_control(manifest.control_removes.name());
    summary.purpose_laws = manifest.purpose_laws.clone();
    Ok(summary)
}

/// Every comparison of a run read back, computed from its journal.
pub fn of_record(record: &RunRecord) -> anyhow::Result<Summary> {
    summary(&record.manifest, &record.entries)
        .map_err(|e| anyhow!("{}: {e}", record.dir.join(JOURNAL_FILE).display()))
}
