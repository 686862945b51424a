//! Running a plan's units: each finished unit goes to the journal, the profile and the progress
//! line (the run's sinks), and a server's refusal stops the run.

use std::collections::BTreeSet;

use anyhow::bail;

use super::prepare::Prepared;
use super::unit::run_unit;
use crate::eval::arm::{self, Arm};
use crate::eval::plan::{self, Unit};
use crate::eval::record::{Journal, JournalEntry};
use crate::eval::report;
use crate::exec::profile::Profile;
use crate::exec::progress::Progress;
use crate::exec::sink::{self, Finished, ProgressSink, Sink};
use crate::harness::backend::Backend;

/// The plan's units that `journaled` does not hold yet, in plan order; with `--shard`, only
/// that shard's.
pub fn plan_units(run: &Prepared, journaled: &[JournalEntry]) -> Vec<Unit> {
    let (opts, samples) = (&run.opts, &run.samples);
    let done: BTreeSet<(String, Arm, u32)> = journaled.iter().map(JournalEntry::key).collect();
    plan::plan(
        samples,
        opts.repeats,
        opts.seed,
        &arm::in_plan_order(opts.control, run.trees.variant_count()),
        run.trees.aa,
    )
    .into_iter()
    .filter(|u| opts.shard.is_none_or(|shard| shard.holds(u.sample_index)))
    .filter(|u| !done.contains(&(samples[u.sample_index].id.clone(), u.arm, u.repeat)))
    .collect()
}

/// The journal keeps every finished unit, flushed as it comes.
impl Sink<JournalEntry> for Journal {
    fn finished(&mut self, unit: Finished<'_, JournalEntry>) -> anyhow::Result<()> {
        self.append(unit.result)
    }
}

/// The profile counts every unit's time and tokens.
impl Sink<JournalEntry> for Profile {
    fn finished(&mut self, unit: Finished<'_, JournalEntry>) -> anyhow::Result<()> {
        self.add(&unit.result.transcript, unit.secs);
        Ok(())
    }
}

/// A server that refuses the run's requests (a 4xx other than 429) stops the run: every further
/// unit would be refused too.
struct StopOnRefusal;

impl Sink<JournalEntry> for StopOnRefusal {
    fn finished(&mut self, unit: Finished<'_, JournalEntry>) -> anyhow::Result<()> {
        match report::errors::reason(unit.result).filter(|r| crate::harness::backend::refused(r)) {
            Some(reason) => bail!("{reason}"),
            None => Ok(()),
        }
    }
}

/// Runs `units` into the run's sinks (the journal, the profile, the progress line, the refusal
/// check), and adds their entries to `entries` in plan order, also when the run stops part-way.
pub fn execute(
    backend: &mut dyn Backend,
    run: &Prepared,
    units: &[Unit],
    (journal, profile, entries): (&mut Journal, &mut Profile, &mut Vec<JournalEntry>),
) -> anyhow::Result<()> {
    let mut progress = ProgressSink {
        progress: Progress::new(run.opts.progress, units.len(), "samples"),
        label: |entry: &JournalEntry| format!("{:?} {}", entry.arm, entry.sample_id),
    };
    let work = |backend: &mut dyn Backend, unit: &Unit| {
        run_unit(
            backend,
            &run.opts.pack,
            run.trees.tree(unit.arm),
            &run.registry,
            &run.samples[unit.sample_index],
            unit,
            run.sampling,
        )
    };
    let ran = sink::run_into(
        backend,
        run.opts.parallel,
        units,
        work,
        &mut [journal, profile, &mut progress, &mut StopOnRefusal],
    );
    entries.extend(ran.results.into_iter().flatten());
    ran.outcome?;
    progress.progress.finish();
    Ok(())
}

/// The entries of the selected samples and arms (a resumed journal may hold others).
pub fn selected(run: &Prepared, entries: &[JournalEntry]) -> Vec<JournalEntry> {
    let mut kept = entries.to_vec();
    keep_selected(run, &mut kept);
    kept
}

pub fn keep_selected(run: &Prepared, entries: &mut Vec<JournalEntry>) {
    let ids: BTreeSet<&str> = run.samples.iter().map(|s| s.id.as_str()).collect();
    let run_arms = arm::in_plan_order(run.opts.control, run.trees.variant_count());
    entries.retain(|e| ids.contains(e.sample_id.as_str()) && run_arms.contains(&e.arm));
}
