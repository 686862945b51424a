//! A whole benchmark run, as its steps: the run folder, the memory prerequisites, every entry
//! of every repeat through one mode, the scores and the summary. The runner only runs units;
//! what is kept and shown of each finished one is up to its sinks (`sinks`, `exec::sink`).

use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::exec::progress::Progress;
use crate::exec::run_id::new_run_id;
use crate::exec::sink::{self, Finished, ProgressSink, Sink};
use crate::harness::backend::{Backend, Sampling};
use crate::harness::toolcall::CallFormat;

use super::harness_mode::harness_entry;
use super::multi_turn::{memory_prerequisite, multi_turn_entry, Conduct};
use super::multi_turn_helper::HelperLaunch;
use super::report::{summarize, BenchSummary};
use super::result_layout::{group_of, model_folder, result_root};
use super::score::{CategoryScore, ResultLine};
use super::selection::{has_multi_turn, CategoryEntries};
use super::sinks::{EntryJournal, ResultFile, ResultFiles};
use super::{prompt_entry, EntryOptions, EntryOutcome, Mode};

pub const SUMMARY_FILE: &str = "summary.json";

#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub mode: Mode,
    /// Harness mode's call syntax; `None` uses the model family's default.
    pub call_format: Option<CallFormat>,
    pub max_tokens: u32,
    pub sampling: Sampling,
    pub seed: u64,
    pub repeats: u32,
    /// Entries per category, as recorded in the summary.
    pub limit: Option<usize>,
    /// Entries picked by id (`--ids`), as recorded in the summary.
    pub ids: Vec<String>,
    /// Run folders go under this one.
    pub output_root: PathBuf,
    /// The model name of the BFCL result folder.
    pub result_model: String,
    pub progress: bool,
    /// Entries run at once on one model; a run replays exactly at the same value (1: one by
    /// one, as a one-sequence backend runs them).
    pub parallel: usize,
    /// How to start BFCL's helper; needed when a multi-turn category is selected.
    pub helper: Option<HelperLaunch>,
}

/// `summary.json`: the settings of the run and its scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub run_id: String,
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_format: Option<CallFormat>,
    pub model: Option<String>,
    pub result_model: String,
    pub repeats: u32,
    pub seed: u64,
    pub temperature: f32,
    pub max_tokens: u32,
    pub limit: Option<usize>,
    /// The entries picked by id, when `--ids` picked them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<String>,
    /// Entries run at once; batches depend on it (see docs/throughput.md).
    #[serde(default = "one")]
    pub parallel: usize,
    /// Entries whose generation failed (scored as undecodable replies).
    pub inference_errors: usize,
    pub seconds: f64,
    pub scores: BenchSummary,
}

pub struct BenchRun {
    pub dir: PathBuf,
    pub summary: RunSummary,
    pub outcomes: Vec<EntryOutcome>,
}

fn one() -> usize {
    1
}

/// Runs every selected category `options.repeats` times and writes the run folder. With
/// `options.parallel` above 1, entries run at once on forks of `backend` (see
/// `exec::scheduler`).
pub fn run(
    backend: &mut dyn Backend,
    selected: &[CategoryEntries],
    options: &BenchOptions,
) -> anyhow::Result<BenchRun> {
    check_runnable(selected, options)?;
    let started = Instant::now();
    let (run_id, dir) = create_run_dir(options)?;
    let mut journal = EntryJournal::create(&dir, options.seed)?;
    let scope = RunScope::new(selected, options, &dir);
    run_memory_prerequisites(backend, &scope)?;
    let plan = EntryPlan::new(selected, options.repeats);
    let outcomes = run_entries(backend, &scope, &plan, &mut journal)?;
    let scores = per_repeat_scores(selected, &plan, &outcomes);
    let summary = summary(backend, options, run_id, &outcomes, started, &scores);
    write_summary(&dir, &summary)?;
    Ok(BenchRun {
        dir,
        summary,
        outcomes,
    })
}

/// Refuses settings that would run nothing or could not run the selection.
fn check_runnable(selected: &[CategoryEntries], options: &BenchOptions) -> anyhow::Result<()> {
    if options.repeats == 0 {
        bail!("--repeats must be at least 1");
    }
    if options.helper.is_none() && has_multi_turn(selected) {
        bail!("a multi-turn category is selected: the run needs BFCL's helper");
    }
    Ok(())
}

/// A new run id, and the run's folder named by it under `options.output_root`.
fn create_run_dir(options: &BenchOptions) -> anyhow::Result<(String, PathBuf)> {
    let run_id = format!("bench-{}", new_run_id("").trim_end_matches('-'));
    let dir = options.output_root.join(&run_id);
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok((run_id, dir))
}

/// What every unit of a run reads: the selection, the settings, each repeat's result folder.
struct RunScope<'a> {
    selected: &'a [CategoryEntries],
    options: &'a BenchOptions,
    /// Each repeat's BFCL result folder for the model; memory snapshots live under it too.
    model_results: Vec<PathBuf>,
}

impl<'a> RunScope<'a> {
    fn new(selected: &'a [CategoryEntries], options: &'a BenchOptions, dir: &Path) -> Self {
        let model_results = (1..=options.repeats)
            .map(|repeat| {
                result_root(dir, repeat, options.repeats).join(model_folder(&options.result_model))
            })
            .collect();
        RunScope {
            selected,
            options,
            model_results,
        }
    }

    fn entry_options(&self, repeat: u32) -> EntryOptions {
        EntryOptions {
            max_tokens: self.options.max_tokens,
            sampling: self.options.sampling,
            run_seed: self.options.seed,
            repeat,
        }
    }

    /// The model's result folder of one repeat.
    fn model_results(&self, repeat: u32) -> &Path {
        &self.model_results[repeat as usize - 1]
    }

    fn conduct(&'a self, launch: &'a HelperLaunch, repeat: u32) -> Conduct<'a> {
        Conduct {
            launch,
            mode: self.options.mode,
            format: self.options.call_format,
            results: self.model_results(repeat),
        }
    }

    /// One entry through the run's mode; multi-turn and memory entries through BFCL's helper.
    fn run_entry(&self, backend: &mut dyn Backend, job: &EntryJob) -> EntryOutcome {
        let entry = &self.selected[job.category].entries[job.entry];
        let entry_options = self.entry_options(job.repeat);
        match (self.options.mode, &self.options.helper) {
            (_, Some(launch)) if entry.multi_turn.is_some() => multi_turn_entry(
                backend,
                entry,
                &entry_options,
                &self.conduct(launch, job.repeat),
            ),
            (Mode::Prompt, _) => prompt_entry(backend, entry, &entry_options),
            (Mode::Harness, _) => {
                harness_entry(backend, entry, &entry_options, self.options.call_format)
            }
        }
    }
}

/// One entry of one repeat: the unit a worker runs.
struct EntryJob {
    repeat: u32,
    category: usize,
    entry: usize,
}

/// One category in one repeat: the jobs of its entries and the result file they fill.
struct EntryGroup {
    repeat: u32,
    category: usize,
    jobs: Range<usize>,
}

/// A run's jobs in repeat, category, entry order, so that each group is one range of them.
struct EntryPlan {
    jobs: Vec<EntryJob>,
    groups: Vec<EntryGroup>,
}

impl EntryPlan {
    fn new(selected: &[CategoryEntries], repeats: u32) -> Self {
        let mut jobs = Vec::new();
        let mut groups = Vec::new();
        for repeat in 1..=repeats {
            for (category, entries) in selected.iter().enumerate() {
                let first = jobs.len();
                jobs.extend((0..entries.entries.len()).map(|entry| EntryJob {
                    repeat,
                    category,
                    entry,
                }));
                groups.push(EntryGroup {
                    repeat,
                    category,
                    jobs: first..jobs.len(),
                });
            }
        }
        EntryPlan { jobs, groups }
    }

    /// Each group's result file, in the model's result folder of its repeat.
    fn result_files(&self, scope: &RunScope) -> Vec<ResultFile> {
        self.groups
            .iter()
            .map(|group| {
                let name = &scope.selected[group.category].name;
                ResultFile {
                    folder: scope.model_results(group.repeat).join(group_of(name)),
                    category: name.clone(),
                    units: group.jobs.clone(),
                }
            })
            .collect()
    }
}

/// Runs every job of `plan` into the run's sinks (the progress line, `entries.jsonl`, the BFCL
/// result files), and gives their outcomes in plan order.
fn run_entries(
    backend: &mut dyn Backend,
    scope: &RunScope,
    plan: &EntryPlan,
    journal: &mut EntryJournal,
) -> anyhow::Result<Vec<EntryOutcome>> {
    let (mut valid, mut done) = (0usize, 0usize);
    let mut progress = ProgressSink {
        progress: Progress::new(scope.options.progress, plan.jobs.len(), "entries"),
        label: |outcome: &EntryOutcome| {
            done += 1;
            valid += usize::from(outcome.check.valid);
            format!(
                "{} · repeat {} · {valid}/{done} valid",
                outcome.category, outcome.repeat
            )
        },
    };
    let mut result_files = ResultFiles::new(
        plan.result_files(scope),
        plan.jobs.len(),
        |outcome: &EntryOutcome| vec![outcome.result_line()],
    );
    let work = |backend: &mut dyn Backend, job: &EntryJob| scope.run_entry(backend, job);
    let ran = sink::run_into(
        backend,
        scope.options.parallel,
        &plan.jobs,
        work,
        &mut [&mut progress, journal, &mut result_files],
    );
    ran.outcome?;
    progress.progress.finish();
    Ok(ran
        .results
        .into_iter()
        .map(|outcome| outcome.expect("a run that ended well holds every outcome"))
        .collect())
}

/// Each repeat's scores, one per category in the selection's order.
fn per_repeat_scores(
    selected: &[CategoryEntries],
    plan: &EntryPlan,
    outcomes: &[EntryOutcome],
) -> Vec<Vec<CategoryScore>> {
    let mut per_repeat: Vec<Vec<CategoryScore>> = Vec::new();
    for group in &plan.groups {
        if per_repeat.len() < group.repeat as usize {
            per_repeat.push(Vec::new());
        }
        let of_group: Vec<&EntryOutcome> = outcomes[group.jobs.clone()].iter().collect();
        let score = category_score(&selected[group.category].name, &of_group);
        per_repeat[group.repeat as usize - 1].push(score);
    }
    per_repeat
}

fn category_score(name: &str, outcomes: &[&EntryOutcome]) -> CategoryScore {
    let mut score = CategoryScore {
        category: name.to_string(),
        total: outcomes.len(),
        correct: 0,
        accuracy: 0.0,
        unknown_ids: 0,
        errors: Default::default(),
    };
    for outcome in outcomes {
        if outcome.check.valid {
            score.correct += 1;
        } else {
            let kind = outcome.check.error_type.clone().unwrap_or_default();
            *score.errors.entry(kind).or_default() += 1;
        }
    }
    if score.total > 0 {
        score.accuracy = score.correct as f64 / score.total as f64;
    }
    score
}

fn summary(
    backend: &dyn Backend,
    options: &BenchOptions,
    run_id: String,
    outcomes: &[EntryOutcome],
    started: Instant,
    per_repeat_scores: &[Vec<CategoryScore>],
) -> RunSummary {
    let info = backend.info();
    RunSummary {
        run_id,
        mode: options.mode,
        call_format: match options.mode {
            Mode::Harness => Some(
                options
                    .call_format
                    .unwrap_or(backend.family().default_call_format()),
            ),
            Mode::Prompt => None,
        },
        model: info.model_path.or(Some(info.name)),
        result_model: options.result_model.clone(),
        repeats: options.repeats,
        seed: options.seed,
        temperature: options.sampling.temperature,
        max_tokens: options.max_tokens,
        limit: options.limit,
        ids: options.ids.clone(),
        parallel: options.parallel.max(1),
        inference_errors: outcomes
            .iter()
            .filter(|o| o.inference_error.is_some())
            .count(),
        seconds: started.elapsed().as_secs_f64(),
        scores: summarize(per_repeat_scores),
    }
}

fn write_summary(dir: &Path, summary: &RunSummary) -> anyhow::Result<()> {
    let summary_path = dir.join(SUMMARY_FILE);
    crate::base::write::write_atomic(
        &summary_path,
        (serde_json::to_string_pretty(summary)? + "\n").as_bytes(),
    )
    .with_context(|| format!("writing {}", summary_path.display()))
}

/// One memory scenario's prerequisite conversations in one repeat: the unit a worker runs.
struct PrerequisiteChain {
    repeat: u32,
    category: usize,
    scenario: usize,
}

/// One chain as it ended: the category and repeat it ran for, and its result lines or the
/// error that ended it.
struct ChainDone<'a> {
    category: &'a str,
    repeat: u32,
    lines: anyhow::Result<Vec<ResultLine>>,
}

/// A failed chain stops the run: the memory entries after it would miss what it saved.
struct StopOnFailedChain;

impl Sink<ChainDone<'_>> for StopOnFailedChain {
    fn finished(&mut self, unit: Finished<'_, ChainDone<'_>>) -> anyhow::Result<()> {
        match unit.result.lines {
            Ok(_) => Ok(()),
            Err(_) => bail!("a memory prerequisite conversation failed"),
        }
    }
}

/// Runs every selected memory scenario's prerequisite conversations, one after another within
/// a scenario (each loads the memory the one before saved), scenarios at once, into the sinks
/// that show progress and write BFCL's prerequisite result file
/// (`BFCL_v4_<category>_prereq_result.json`) per category and repeat.
fn run_memory_prerequisites(backend: &mut dyn Backend, scope: &RunScope) -> anyhow::Result<()> {
    let (selected, options) = (scope.selected, scope.options);
    // In repeat, category, scenario order, so that each prerequisite file's chains are a range.
    let mut chains = Vec::new();
    let mut files = Vec::new();
    for repeat in 1..=options.repeats {
        for (category, entries) in selected.iter().enumerate() {
            let first = chains.len();
            chains.extend(
                (0..entries.prerequisites.len()).map(|scenario| PrerequisiteChain {
                    repeat,
                    category,
                    scenario,
                }),
            );
            if chains.len() > first {
                files.push(ResultFile {
                    folder: scope.model_results(repeat).join(group_of(&entries.name)),
                    category: format!("{}_prereq", entries.name),
                    units: first..chains.len(),
                });
            }
        }
    }
    if chains.is_empty() {
        return Ok(());
    }
    let Some(launch) = options.helper.as_ref() else {
        bail!("a memory category is selected: the run needs BFCL's helper");
    };
    let mut progress = ProgressSink {
        progress: Progress::new(options.progress, chains.len(), "memory scenarios"),
        label: |done: &ChainDone| {
            format!("{} prerequisites · repeat {}", done.category, done.repeat)
        },
    };
    let mut result_files = ResultFiles::new(files, chains.len(), |done: &ChainDone| {
        done.lines.as_ref().map(Vec::clone).unwrap_or_default()
    });
    let work = |backend: &mut dyn Backend, chain: &PrerequisiteChain| {
        let conduct = scope.conduct(launch, chain.repeat);
        let entry_options = scope.entry_options(chain.repeat);
        let category = &selected[chain.category];
        ChainDone {
            category: &category.name,
            repeat: chain.repeat,
            lines: category.prerequisites[chain.scenario]
                .iter()
                .map(|entry| memory_prerequisite(backend, entry, &entry_options, &conduct))
                .collect(),
        }
    };
    let ran = sink::run_into(
        backend,
        options.parallel,
        &chains,
        work,
        &mut [&mut StopOnFailedChain, &mut progress, &mut result_files],
    );
    if let Err(stopped) = ran.outcome {
        // The failed chain's own error: the sink that stopped the run could only see it.
        let failed = ran
            .results
            .into_iter()
            .flatten()
            .find_map(|done| done.lines.err());
        return Err(failed.unwrap_or(stopped));
    }
    progress.progress.finish();
    Ok(())
}
