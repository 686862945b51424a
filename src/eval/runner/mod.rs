//! `skilleval run` as a pipeline: options (`options.rs`) → a prepared run, every input checked
//! before the model loads (`prepare.rs`, with the arms' skills trees in `skill_trees.rs`) → the run
//! folder and its manifest (`start.rs`) → a baseline reused from an earlier run (`baseline.rs`)
//! → the plan's units, each through the harness (`unit.rs`) into the run's sinks
//! (`execute.rs`), at once or in waves with a look after each (`waves.rs`) → the summary and
//! the reports (`finish.rs`).

mod baseline;
mod execute;
mod finish;
mod options;
mod prepare;
mod skill_trees;
mod start;
mod unit;
pub mod waves;

use std::path::PathBuf;
use std::time::Instant;

pub use options::{RunOptions, Sequential};
pub use prepare::{check_fits_context, prepare, Prepared};
pub use skill_trees::{skill_trees, SkillTrees};
pub use unit::run_unit;

use crate::eval::record::folder::{write_json, JOURNAL_FILE, PROFILE_FILE};
use crate::eval::record::{manifest, Journal, JournalEntry, RunFolder};
use crate::eval::stats::Summary;
use crate::exec::profile::Profile;
use crate::harness::backend::{Backend, WithFamily};

pub struct RunResult {
    pub run_id: String,
    /// The earlier run whose baseline entries were copied, if any.
    pub baseline_from: Option<String>,
    /// How many units (baseline and control) were copied from it.
    pub baseline_copied: usize,
    /// How many of those this pack's laws judged otherwise than the earlier run's.
    pub baseline_rejudged: usize,
    pub dir: PathBuf,
    pub summary: Summary,
    pub entries: Vec<JournalEntry>,
    /// Where the run's time and tokens went, as `profile.json` holds it.
    pub profile: Profile,
}

/// Prepares a run and runs it.
pub fn run(backend: &mut dyn Backend, opts: &RunOptions) -> anyhow::Result<RunResult> {
    run_prepared(backend, &prepare(opts)?)
}

/// Runs prepared inputs: the run folder, the plan, the units, the summary. A pack's
/// `chat_format` speaks to the model in that format instead of its own.
pub fn run_prepared(backend: &mut dyn Backend, run: &Prepared) -> anyhow::Result<RunResult> {
    match run.opts.pack.chat_format {
        Some(family) => run_steps(&mut WithFamily::new(backend, family), run),
        None => run_steps(backend, run),
    }
}

fn run_steps(backend: &mut dyn Backend, run: &Prepared) -> anyhow::Result<RunResult> {
    let opts = &run.opts;
    let mut folder =
        RunFolder::open_for(&opts.output_root, &opts.pack.name, opts.resume.as_deref())?;
    start::announce(opts, &folder);
    let mut manifest = start::manifest(run, backend, &folder.run_id)?;
    let mut entries = std::mem::take(&mut folder.journaled);
    let copied = match opts.resume {
        Some(_) => Vec::new(),
        // A refusal leaves no run folder behind: nothing has been written to it yet.
        None => {
            baseline::take(run, &mut manifest, &entries).inspect_err(|_| folder.remove_unused())?
        }
    };
    manifest::write_or_check(
        &folder.file(crate::eval::record::folder::MANIFEST_FILE),
        &manifest,
        opts.resume.is_some(),
    )?;
    let mut journal = Journal::open(&folder.file(JOURNAL_FILE))?;
    let baseline_copied = copied.len();
    baseline::append(copied, &mut journal, &mut entries)?;
    let mut profile = Profile::new(opts.parallel.max(1));
    profile.model_load_secs = manifest.backend.load_secs;
    let started = Instant::now();
    let sinks = (&mut journal, &mut profile, &mut entries);
    match manifest.sequential.clone() {
        None => execute::execute(backend, run, &execute::plan_units(run, sinks.2), sinks)?,
        Some(mut record) => {
            waves::execute_in_waves(backend, run, &folder, &manifest, &mut record, sinks)?;
            manifest.sequential = Some(record);
        }
    }
    profile.set_wall_time(started.elapsed().as_secs_f64());
    if let Some(stats) = backend.engine_stats() {
        profile.attach_engine(stats);
    }
    write_json(&folder.file(PROFILE_FILE), &profile)?;
    let summary = finish::summarize(run, &mut entries, &folder.dir, &manifest, &profile)?;
    Ok(RunResult {
        run_id: folder.run_id.clone(),
        baseline_from: manifest.baseline_from.clone(),
        baseline_copied,
        baseline_rejudged: manifest.baseline_rejudged,
        dir: folder.dir.clone(),
        summary,
        entries,
        profile,
    })
}
