//! A new run's baseline (and control) taken from an earlier run with the same inputs
//! ([`crate::eval::reuse`]), each copied transcript judged again with this pack's laws.

use super::execute::plan_units;
use super::prepare::Prepared;
use crate::eval::record::{Journal, JournalEntry, Manifest};
use crate::eval::rejudge;
use crate::eval::reuse;

/// A copied unit: the earlier journal's entry, the same judged with this pack's laws when they
/// judge it otherwise, and its line as the earlier journal wrote it.
pub struct Copied {
    entry: JournalEntry,
    again: Option<JournalEntry>,
    line: String,
}

/// The units the run takes from an earlier run, as `--baseline-from` or the cache asks, with
/// the manifest's record of where they come from and how many were judged otherwise.
pub fn take(
    run: &Prepared,
    manifest: &mut Manifest,
    journaled: &[JournalEntry],
) -> anyhow::Result<Vec<Copied>> {
    let sample_of = |i: usize| {
        let sample = &run.samples[i];
        (sample.id.clone(), sample.category.clone())
    };
    let taken = reuse::take(
        &run.opts.output_root,
        manifest,
        &run.opts.baseline_source,
        &plan_units(run, journaled),
        &sample_of,
    )?;
    manifest.baseline_from = taken.as_ref().map(|t| t.reuse.run_id.clone());
    // The earlier run may have been judged with other laws: its transcripts are judged with these.
    let copied: Vec<Copied> = taken
        .into_iter()
        .flat_map(|t| t.entries)
        .map(|(entry, line)| {
            let sample = run.samples.iter().find(|s| s.id == entry.sample_id);
            let again = sample.and_then(|s| rejudge::judge_again(&entry, &run.opts.pack.laws, s));
            Copied { entry, again, line }
        })
        .collect();
    manifest.baseline_rejudged = copied.iter().filter(|c| c.again.is_some()).count();
    Ok(copied)
}

/// Writes the copied units into the journal (a unit judged otherwise as a new line, any other as
/// the earlier line, byte for byte) and adds them to `entries`.
pub fn append(
    copied: Vec<Copied>,
    journal: &mut Journal,
    entries: &mut Vec<JournalEntry>,
) -> anyhow::Result<()> {
    for Copied { entry, again, line } in copied {
        match again {
            Some(again) => {
                journal.append(&again)?;
                entries.push(again);
            }
            None => {
                journal.append_line(&line)?;
                entries.push(entry);
            }
        }
    }
    Ok(())
}
