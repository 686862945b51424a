//! A whole benchmark run: categories × repeats through one mode, with progress, a folder of
//! skilleval's own records and BFCL result files that `bfcl evaluate` and `bench score` read.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::exec::progress::Progress;
use crate::exec::run_id::new_run_id;
use crate::exec::scheduler;
use crate::harness::backend::{Backend, Sampling};
use crate::harness::toolcall::CallFormat;

use super::corpus::{
    is_multi_turn, load_category, load_files, memory_backend, memory_prerequisites,
    vendored_categories, Entry,
};
use super::harness_mode::harness_entry;
use super::multi_turn::{memory_prerequisite, multi_turn_entry, Conduct};
use super::multi_turn_helper::HelperLaunch;
use super::overall::LEADERBOARD_CATEGORIES;
use super::report::{summarize, BenchSummary};
use super::score::{repeat_dir_name, write_result_file, CategoryScore, ExtraCategory, ResultLine};
use super::{prompt_entry, EntryOptions, EntryOutcome, Mode};

/// Per-entry records, one JSON object a line.
pub const ENTRIES_FILE: &str = "entries.jsonl";
pub const SUMMARY_FILE: &str = "summary.json";
/// The folder BFCL keeps result files in, holding one folder per model.
pub const RESULT_DIR: &str = "result";

/// One category's entries, as selected for a run.
#[derive(Debug, Clone)]
pub struct CategoryEntries {
    pub name: String,
    pub entries: Vec<Entry>,
    /// Not one of the vendored categories: scored from these entries, not the corpus.
    pub custom: bool,
    /// A memory category's prerequisite conversations, per scenario its entries need, in
    /// BFCL's order: they run first, each scenario's one after another.
    pub prerequisites: Vec<Vec<Entry>>,
}

/// A question file in BFCL's shape given on the command line.
#[derive(Debug, Clone)]
pub struct CustomCorpus {
    pub questions: PathBuf,
    pub answers: Option<PathBuf>,
    pub name: String,
}

/// `all` or category names, comma-separated pieces allowed, in the order given, each once.
pub fn parse_categories(names: &[String]) -> anyhow::Result<Vec<String>> {
    let mut chosen: Vec<String> = Vec::new();
    let vendored = vendored_categories();
    for name in names.iter().flat_map(|n| n.split(',')).map(str::trim) {
        let expanded: Vec<&str> = match name {
            "" => continue,
            "all" => vendored.clone(),
            known if vendored.contains(&known) => vec![known],
            unknown => bail!(
                "unknown BFCL category {unknown:?}: use all or {}",
                vendored.join(", ")
            ),
        };
        for category in expanded {
            if !chosen.iter().any(|c| c == category) {
                chosen.push(category.to_string());
            }
        }
    }
    Ok(chosen)
}

/// Loads the chosen vendored categories and the custom corpus, keeps the entries `ids` names
/// (all when empty), and cuts each category to `limit` entries. A memory category gets the
/// prerequisite conversations of the scenarios its entries need.
pub fn select(
    corpus_root: &Path,
    categories: &[String],
    custom: Option<&CustomCorpus>,
    limit: Option<usize>,
    ids: &[String],
) -> anyhow::Result<Vec<CategoryEntries>> {
    let mut selected = Vec::new();
    for name in categories {
        selected.push(CategoryEntries {
            name: name.clone(),
            entries: load_category(corpus_root, name)?,
            custom: false,
            prerequisites: Vec::new(),
        });
    }
    if let Some(corpus) = custom {
        if LEADERBOARD_CATEGORIES.contains(&corpus.name.as_str()) {
            bail!(
                "--category-name {:?} is a BFCL category; give --corpus {} a name of its own, \
                 so that its score is not read as BFCL's",
                corpus.name,
                corpus.questions.display()
            );
        }
        if corpus.answers.is_none() && !corpus.name.contains("relevance") {
            bail!(
                "--corpus {} needs --answers, unless its --category-name says relevance or \
                 irrelevance",
                corpus.questions.display()
            );
        }
        selected.push(CategoryEntries {
            name: corpus.name.clone(),
            entries: load_files(&corpus.questions, corpus.answers.as_deref(), &corpus.name)?,
            custom: true,
            prerequisites: Vec::new(),
        });
    }
    if selected.is_empty() {
        bail!("nothing to run: give --bfcl CATEGORIES (or all), or --corpus FILE");
    }
    if !ids.is_empty() {
        if let Some(unknown) = ids.iter().find(|id| {
            !selected
                .iter()
                .any(|c| c.entries.iter().any(|e| &e.id == *id))
        }) {
            bail!(
                "--ids: no entry {unknown:?} in the chosen categories ({})",
                selected
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        for category in &mut selected {
            category.entries.retain(|e| ids.contains(&e.id));
        }
        selected.retain(|c| !c.entries.is_empty());
    }
    if let Some(limit) = limit {
        for category in &mut selected {
            category.entries.truncate(limit);
        }
    }
    for category in selected.iter_mut().filter(|c| !c.custom) {
        let mut scenarios: Vec<&str> = Vec::new();
        for entry in &category.entries {
            let scenario = entry
                .multi_turn
                .as_ref()
                .and_then(|m| m.scenario.as_deref());
            if let Some(scenario) = scenario.filter(|s| !scenarios.contains(s)) {
                scenarios.push(scenario);
            }
        }
        category.prerequisites = scenarios
            .iter()
            .map(|scenario| memory_prerequisites(corpus_root, &category.name, scenario))
            .collect::<Result<_, _>>()?;
    }
    Ok(selected)
}

/// The custom categories of a selection, for scoring.
pub fn extra_categories(selected: &[CategoryEntries]) -> Vec<ExtraCategory> {
    selected
        .iter()
        .filter(|c| c.custom)
        .map(|c| ExtraCategory {
            name: c.name.clone(),
            entries: c.entries.clone(),
        })
        .collect()
}

/// Whether a selection holds multi-turn entries, which need BFCL's helper.
pub fn has_multi_turn(selected: &[CategoryEntries]) -> bool {
    selected
        .iter()
        .any(|c| c.entries.iter().any(|e| e.multi_turn.is_some()))
}

/// BFCL's grouping folder for a category's result file (memory: `agentic/memory/<backend>`).
pub fn group_of(category: &str) -> &'static str {
    if is_multi_turn(category) {
        "multi_turn"
    } else if let Some(backend) = memory_backend(category) {
        match backend {
            "kv" => "agentic/memory/kv",
            "rec_sum" => "agentic/memory/rec_sum",
            other => unreachable!("memory backend {other} has no result folder"),
        }
    } else if category.contains("live") && !category.contains("non_live") {
        "live"
    } else {
        "non_live"
    }
}

/// The folder BFCL reads a model's results from: `bfcl evaluate --model a/b` looks in
/// `result/a_b`, and turns every `_` of a folder name back into `/`.
/// The name is made a file name by the program's one rule (`base::names::file_stem`), so that
/// it stays one folder under `result/`.
pub fn model_folder(result_model: &str) -> String {
    crate::base::names::file_stem(&result_model.replace('/', "_"))
}

/// A `--result-model` whose folder is the name as BFCL reads it: the name must already be a
/// file name by the program's rule (after `/` becomes `_`), or BFCL would look elsewhere.
pub fn check_result_model(name: &str) -> Result<(), String> {
    let folder = name.replace('/', "_");
    if crate::base::names::file_stem(&folder) != folder {
        return Err(format!(
            "not a result folder name: use letters, digits, `-`, `_`, `.` and `/`, not at either end, at most {} bytes",
            crate::base::names::STEM_MAX_BYTES
        ));
    }
    Ok(())
}

/// A result-model name for a GGUF file: its stem, with `_` (which BFCL reads as `/`) as `-`.
pub fn default_result_model(model_path: Option<&str>, fallback: &str) -> String {
    let stem = model_path
        .and_then(|p| Path::new(p).file_stem())
        .and_then(|s| s.to_str())
        .unwrap_or(fallback)
        .replace(['_', '/'], "-");
    crate::base::names::file_stem(&stem)
}

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
    /// Entries run at once on one model (1: one by one, reproducible across settings).
    pub parallel: usize,
    /// How to start BFCL's helper; needed when a multi-turn category is selected.
    pub helper: Option<HelperLaunch>,
}

/// One entry's record in `entries.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryRecord {
    pub id: String,
    pub category: String,
    pub mode: Mode,
    pub repeat: u32,
    pub seed: u32,
    pub reply: String,
    /// What the BFCL result file holds for this entry.
    pub result: serde_json::Value,
    pub valid: bool,
    pub error_type: Option<String>,
    pub errors: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_error: Option<String>,
    pub tokens: TokenCounts,
    pub seconds: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenCounts {
    pub prompt: u32,
    pub generated: u32,
}

impl EntryRecord {
    pub fn new(outcome: &EntryOutcome, seed: u32) -> Self {
        EntryRecord {
            id: outcome.id.clone(),
            category: outcome.category.clone(),
            mode: outcome.mode,
            repeat: outcome.repeat,
            seed,
            reply: outcome.reply.clone(),
            result: outcome.result.clone(),
            valid: outcome.check.valid,
            error_type: outcome.check.error_type.clone(),
            errors: outcome.check.errors.clone(),
            inference_error: outcome.inference_error.clone(),
            tokens: TokenCounts {
                prompt: outcome.prompt_tokens,
                generated: outcome.generated_tokens,
            },
            seconds: outcome.seconds,
        }
    }
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

/// Where one repeat's BFCL result tree goes: `result/` alone with one repeat,
/// `repeat-<n>/result/` with several, so that each tree holds one file per category.
pub fn result_root(run_dir: &Path, repeat: u32, repeats: u32) -> PathBuf {
    if repeats > 1 {
        run_dir.join(repeat_dir_name(repeat)).join(RESULT_DIR)
    } else {
        run_dir.join(RESULT_DIR)
    }
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

/// One entry of one repeat: the unit a worker runs.
struct EntryJob {
    repeat: u32,
    category: usize,
    entry: usize,
}

/// Runs every selected category `options.repeats` times and writes the run folder. With
/// `options.parallel` above 1, entries run at once on forks of `backend` (see
/// `exec::scheduler`); each repeat's result file for a category is written once all its
/// entries are done.
pub fn run(
    backend: &mut dyn Backend,
    selected: &[CategoryEntries],
    options: &BenchOptions,
) -> anyhow::Result<BenchRun> {
    if options.repeats == 0 {
        bail!("--repeats must be at least 1");
    }
    if options.helper.is_none() && has_multi_turn(selected) {
        bail!("a multi-turn category is selected: the run needs BFCL's helper");
    }
    let started = Instant::now();
    let run_id = format!("bench-{}", new_run_id("").trim_end_matches('-'));
    let dir = options.output_root.join(&run_id);
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let entries_path = dir.join(ENTRIES_FILE);
    let mut entries_file = fs::File::create(&entries_path)
        .with_context(|| format!("creating {}", entries_path.display()))?;

    // Jobs in repeat, category, entry order: each (repeat, category) group is one range.
    let mut jobs = Vec::new();
    let mut groups: Vec<(u32, usize, std::ops::Range<usize>)> = Vec::new();
    for repeat in 1..=options.repeats {
        for (category, entries) in selected.iter().enumerate() {
            let first = jobs.len();
            jobs.extend((0..entries.entries.len()).map(|entry| EntryJob {
                repeat,
                category,
                entry,
            }));
            groups.push((repeat, category, first..jobs.len()));
        }
    }
    let entry_options = |repeat: u32| EntryOptions {
        max_tokens: options.max_tokens,
        sampling: options.sampling,
        run_seed: options.seed,
        repeat,
    };
    // Each repeat's BFCL result folder for the model; memory snapshots live under it too.
    let model_results: Vec<PathBuf> = (1..=options.repeats)
        .map(|repeat| {
            result_root(&dir, repeat, options.repeats).join(model_folder(&options.result_model))
        })
        .collect();
    let conduct = |launch, repeat: u32| Conduct {
        launch,
        mode: options.mode,
        format: options.call_format,
        results: &model_results[repeat as usize - 1],
    };
    run_memory_prerequisites(
        backend,
        selected,
        options,
        &model_results,
        &entry_options,
        &conduct,
    )?;

    let work = |backend: &mut dyn Backend, job: &EntryJob| {
        let entry = &selected[job.category].entries[job.entry];
        let entry_options = entry_options(job.repeat);
        match (options.mode, &options.helper) {
            (_, Some(launch)) if entry.multi_turn.is_some() => {
                multi_turn_entry(backend, entry, &entry_options, &conduct(launch, job.repeat))
            }
            (Mode::Prompt, _) => prompt_entry(backend, entry, &entry_options),
            (Mode::Harness, _) => {
                harness_entry(backend, entry, &entry_options, options.call_format)
            }
        }
    };

    let mut progress = Progress::new(options.progress, jobs.len(), "entries");
    let mut outcomes: Vec<Option<EntryOutcome>> = (0..jobs.len()).map(|_| None).collect();
    let mut left: Vec<usize> = groups.iter().map(|(_, _, range)| range.len()).collect();
    let group_of_job: Vec<usize> = groups
        .iter()
        .enumerate()
        .flat_map(|(g, (_, _, range))| range.clone().map(move |_| g))
        .collect();
    let (mut valid, mut done) = (0usize, 0usize);
    let mut on_done = |i: usize, outcome: EntryOutcome| -> anyhow::Result<()> {
        done += 1;
        valid += usize::from(outcome.check.valid);
        progress.inc(format!(
            "{} · repeat {} · {valid}/{done} valid",
            outcome.category, outcome.repeat
        ));
        // Written as each entry ends, so an interrupted run keeps its records.
        let record = EntryRecord::new(
            &outcome,
            entry_options(outcome.repeat).seed_for(&outcome.id),
        );
        let line = serde_json::to_string(&record).expect("records serialize");
        writeln!(entries_file, "{line}")
            .and_then(|()| entries_file.flush())
            .with_context(|| format!("writing {}", entries_path.display()))?;
        outcomes[i] = Some(outcome);
        let g = group_of_job[i];
        left[g] -= 1;
        if left[g] == 0 {
            let (repeat, category, range) = &groups[g];
            let name = &selected[*category].name;
            let lines: Vec<_> = outcomes[range.clone()]
                .iter()
                .flatten()
                .map(EntryOutcome::result_line)
                .collect();
            let results = &model_results[*repeat as usize - 1];
            write_result_file(&results.join(group_of(name)), name, &lines)?;
        }
        Ok(())
    };
    scheduler::run_units(backend, options.parallel, &jobs, work, &mut on_done)?;
    let mut per_repeat_scores: Vec<Vec<CategoryScore>> = Vec::new();
    for (repeat, category, range) in &groups {
        if per_repeat_scores.len() < *repeat as usize {
            per_repeat_scores.push(Vec::new());
        }
        let of_group: Vec<&EntryOutcome> = outcomes[range.clone()].iter().flatten().collect();
        let score = category_score(&selected[*category].name, &of_group);
        per_repeat_scores[*repeat as usize - 1].push(score);
    }
    let all_outcomes: Vec<EntryOutcome> = outcomes.into_iter().flatten().collect();
    progress.finish();

    let info = backend.info();
    let summary = RunSummary {
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
        inference_errors: all_outcomes
            .iter()
            .filter(|o| o.inference_error.is_some())
            .count(),
        seconds: started.elapsed().as_secs_f64(),
        scores: summarize(&per_repeat_scores),
    };
    let summary_path = dir.join(SUMMARY_FILE);
    crate::base::write::write_atomic(
        &summary_path,
        (serde_json::to_string_pretty(&summary)? + "\n").as_bytes(),
    )
    .with_context(|| format!("writing {}", summary_path.display()))?;
    Ok(BenchRun {
        dir,
        summary,
        outcomes: all_outcomes,
    })
}

/// One memory scenario's prerequisite conversations in one repeat: the unit a worker runs.
struct PrerequisiteChain {
    repeat: u32,
    category: usize,
    scenario: usize,
}

/// Runs every selected memory scenario's prerequisite conversations, one after another within
/// a scenario (each loads the memory the one before saved), scenarios at once, and writes
/// BFCL's prerequisite result file (`BFCL_v4_<category>_prereq_result.json`) per category.
fn run_memory_prerequisites<'a>(
    backend: &mut dyn Backend,
    selected: &[CategoryEntries],
    options: &'a BenchOptions,
    model_results: &[PathBuf],
    entry_options: &(dyn Fn(u32) -> EntryOptions + Sync),
    conduct: &(dyn Fn(&'a HelperLaunch, u32) -> Conduct<'a> + Sync),
) -> anyhow::Result<()> {
    let mut chains = Vec::new();
    for repeat in 1..=options.repeats {
        for (category, entries) in selected.iter().enumerate() {
            chains.extend(
                (0..entries.prerequisites.len()).map(|scenario| PrerequisiteChain {
                    repeat,
                    category,
                    scenario,
                }),
            );
        }
    }
    if chains.is_empty() {
        return Ok(());
    }
    let Some(launch) = options.helper.as_ref() else {
        bail!("a memory category is selected: the run needs BFCL's helper");
    };
    let mut progress = Progress::new(options.progress, chains.len(), "memory scenarios");
    let work = |backend: &mut dyn Backend, chain: &PrerequisiteChain| {
        let conduct = conduct(launch, chain.repeat);
        selected[chain.category].prerequisites[chain.scenario]
            .iter()
            .map(|entry| {
                memory_prerequisite(backend, entry, &entry_options(chain.repeat), &conduct)
            })
            .collect::<anyhow::Result<Vec<_>>>()
    };
    let mut lines: Vec<Vec<ResultLine>> = vec![Vec::new(); chains.len()];
    scheduler::run_units(backend, options.parallel, &chains, work, |i, done| {
        lines[i] = done?;
        let chain = &chains[i];
        progress.inc(format!(
            "{} prerequisites · repeat {}",
            selected[chain.category].name, chain.repeat
        ));
        Ok(())
    })?;
    progress.finish();
    for repeat in 1..=options.repeats {
        for (category, entries) in selected.iter().enumerate() {
            let of_category: Vec<ResultLine> = chains
                .iter()
                .zip(&lines)
                .filter(|(c, _)| c.repeat == repeat && c.category == category)
                .flat_map(|(_, l)| l.iter().cloned())
                .collect();
            if !of_category.is_empty() {
                let folder = model_results[repeat as usize - 1].join(group_of(&entries.name));
                write_result_file(&folder, &format!("{}_prereq", entries.name), &of_category)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_expand_all_and_keep_order() {
        let chosen = parse_categories(&["parallel,simple_python".into(), "parallel".into()]);
        assert_eq!(chosen.unwrap(), ["parallel", "simple_python"]);
        assert_eq!(
            parse_categories(&["all".into()]).unwrap(),
            vendored_categories()
        );
        let err = parse_categories(&["simple".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown BFCL category \"simple\""), "{err}");
    }

    #[test]
    fn groups_and_folders_follow_bfcl() {
        assert_eq!(group_of("live_simple"), "live");
        assert_eq!(group_of("irrelevance"), "non_live");
        assert_eq!(group_of("multi_turn_long_context"), "multi_turn");
        assert_eq!(group_of("memory_kv"), "agentic/memory/kv");
        assert_eq!(group_of("memory_rec_sum_prereq"), "agentic/memory/rec_sum");
        assert_eq!(model_folder("google/gemma-3-1b-it"), "google_gemma-3-1b-it");
        assert_eq!(
            default_result_model(Some("/m/gemma-3-270m-q4_k_m.gguf"), "x"),
            "gemma-3-270m-q4-k-m"
        );
        assert_eq!(default_result_model(None, "scripted"), "scripted");
    }

    #[test]
    fn a_custom_corpus_may_not_take_a_bfcl_name_and_relevance_needs_no_answers() {
        let root = super::super::corpus::default_root();
        let corpus = |name: &str| CustomCorpus {
            questions: root.join("BFCL_v4_live_relevance.json"),
            answers: None,
            name: name.into(),
        };
        let err = select(&root, &[], Some(&corpus("live_relevance")), None, &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("is a BFCL category"), "{err}");
        let selected = select(&root, &[], Some(&corpus("my_relevance")), Some(2), &[]).unwrap();
        assert_eq!(selected[0].entries.len(), 2);
        let err = select(&root, &[], Some(&corpus("my_simple")), None, &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs --answers"), "{err}");
    }
}
