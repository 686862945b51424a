//! The end of a run: the summary of the selected samples and arms, and the run folder's reports.

use std::path::Path;

use anyhow::anyhow;

use super::execute::keep_selected;
use super::options::RunOptions;
use super::prepare::Prepared;
use crate::eval::record::{JournalEntry, Manifest, RunRecord};
use crate::eval::replay;
use crate::eval::report::files::{settings, write_reports};
use crate::eval::run_summary;
use crate::eval::stats::Summary;
use crate::exec::profile::Profile;

/// The summary of the selected samples and arms, written with the reports beside the journal.
pub fn summarize(
    run: &Prepared,
    entries: &mut Vec<JournalEntry>,
    dir: &Path,
    manifest: &Manifest,
    profile: &Profile,
) -> anyhow::Result<Summary> {
    let opts = &run.opts;
    // Only entries of the selected samples and arms count (a resumed journal may hold others).
    keep_selected(run, entries);
    let summary = run_summary::summary(manifest, entries)?;
    let settings = settings(manifest, Some(profile.wall_secs)) + &resumed_note(opts);
    let record = RunRecord {
        dir: dir.to_path_buf(),
        manifest: manifest.clone(),
        entries: entries.clone(),
        profile: Some(profile.clone()),
        prompts: run
            .samples
            .iter()
            .map(|s| (s.id.clone(), s.prompt_text().to_string()))
            .collect(),
        prompts_note: None,
    };
    write_reports(&record, &summary, &settings)?;
    replay::check_recordings(entries).map_err(|e| anyhow!("{e} (run folder {})", dir.display()))?;
    Ok(summary)
}

/// What a reader of a resumed run's report must know: units that ran at once after the resume
/// shared their batches with other units than in an uninterrupted run, and a sequence's sums
/// in llama.cpp can depend on its batch, so their transcripts may differ from that run's.
fn resumed_note(opts: &RunOptions) -> String {
    match (&opts.resume, opts.parallel) {
        (Some(_), parallel) if parallel > 1 => format!(
            " · resumed at --parallel {parallel}: the units run after the resume may differ from an uninterrupted run's (same inputs and seeds, other batches); at --parallel 1 they do not"
        ),
        _ => String::new(),
    }
}
