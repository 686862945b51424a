//! BFCL result files (`BFCL_v4_<category>_result.json`, JSON lines `{"id", "result", …}`):
//! writing them, and scoring a folder of them against the vendored answers. Multi-turn lines
//! are checked by BFCL's own evaluator, in the helper process (`multi_turn_helper`).

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::check_types::CheckResult;
use super::checker::check;
use super::corpus::{load_category, vendored_categories, Entry, VERSION_PREFIX};
use super::multi_turn_helper::{Helper, HelperLaunch};

/// One model reply, as a result file line holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultLine {
    pub id: String,
    /// The raw reply; BFCL's function-calling handlers write structured values here instead.
    pub result: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_token_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_token_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryScore {
    pub category: String,
    /// Lines in the result file; accuracy is over these, as BFCL computes it.
    pub total: usize,
    pub correct: usize,
    pub accuracy: f64,
    /// Result ids not found in the corpus (they count as wrong).
    pub unknown_ids: usize,
    /// How many wrong answers had each error type.
    pub errors: BTreeMap<String, usize>,
}

pub fn result_file_name(category: &str) -> String {
    format!("{VERSION_PREFIX}_{category}_result.json")
}

/// Writes `dir/BFCL_v4_<category>_result.json`, creating `dir`.
pub fn write_result_file(
    dir: &Path,
    category: &str,
    lines: &[ResultLine],
) -> anyhow::Result<PathBuf> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(result_file_name(category));
    let mut file =
        fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    for line in lines {
        writeln!(file, "{}", serde_json::to_string(line)?)?;
    }
    Ok(path)
}

pub fn read_result_file(path: &Path) -> anyhow::Result<Vec<ResultLine>> {
    let text = crate::base::input::read_input_to_string(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let lines: Vec<ResultLine> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| {
                anyhow::anyhow!("{}:{}: not a result line: {e}", path.display(), i + 1)
            })
        })
        .collect::<anyhow::Result<_>>()?;
    // Scored, an empty file would read as 0% rather than as nothing run.
    if lines.is_empty() {
        bail!("{}: the result file holds no result lines", path.display());
    }
    Ok(lines)
}

/// Result files for the known categories anywhere under `dir`, by category.
pub fn find_result_files(dir: &Path) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    find_result_files_for(dir, &vendored_categories())
}

/// Result files for the given categories anywhere under `dir`, by category.
pub fn find_result_files_for(
    dir: &Path,
    categories: &[&str],
) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    let mut found = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for item in
            fs::read_dir(&folder).with_context(|| format!("listing {}", folder.display()))?
        {
            let path = item?.path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if let Some(category) = categories.iter().find(|c| name == result_file_name(c)) {
                if let Some(previous) = found.insert(category.to_string(), path.clone()) {
                    bail!(
                        "two result files for {category}: {} and {}",
                        previous.display(),
                        path.display()
                    );
                }
            }
        }
    }
    Ok(found)
}

/// Checks one reply against its entry.
pub fn check_entry(entry: &Entry, reply: &Value) -> CheckResult {
    let Some(text) = reply.as_str() else {
        // BFCL's prompting decoder fails on anything but text: no call.
        let as_text = reply.to_string();
        return if entry.is_irrelevance() {
            CheckResult::pass()
        } else if entry.category.contains("relevance") {
            CheckResult::fail(
                "relevance_error:decoder_failed",
                format!("Expected a function call; the reply is not text: {as_text}"),
            )
        } else {
            CheckResult::fail(
                "ast_decoder:decoder_failed",
                format!("Reply is not text: {as_text}"),
            )
        };
    };
    let truth = entry.ground_truth.as_deref().unwrap_or_default();
    check(&entry.category, &entry.functions, text, truth)
}

/// Checks result lines of any category; the BFCL helper starts at the first multi-turn one.
#[derive(Default)]
pub struct LineChecker {
    helper: Option<Helper>,
}

impl LineChecker {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn check(&mut self, entry: &Entry, result: &Value) -> anyhow::Result<CheckResult> {
        let Some(multi_turn) = &entry.multi_turn else {
            return Ok(check_entry(entry, result));
        };
        let helper = match &mut self.helper {
            Some(helper) => helper,
            empty => empty.insert(Helper::start(&HelperLaunch::locate()?)?),
        };
        let truth = entry.ground_truth.as_deref().unwrap_or_default();
        helper.check(&multi_turn.question, truth, result)
    }
}

pub fn score_lines(
    category: &str,
    entries: &[Entry],
    lines: &[ResultLine],
    checker: &mut LineChecker,
) -> anyhow::Result<CategoryScore> {
    let by_id: HashMap<&str, &Entry> = entries.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut score = CategoryScore {
        category: category.to_string(),
        total: lines.len(),
        correct: 0,
        accuracy: 0.0,
        unknown_ids: 0,
        errors: BTreeMap::new(),
    };
    for line in lines {
        let Some(entry) = by_id.get(line.id.as_str()) else {
            score.unknown_ids += 1;
            continue;
        };
        let result = checker
            .check(entry, &line.result)
            .with_context(|| format!("result of {}", line.id))?;
        if result.valid {
            score.correct += 1;
        } else {
            *score
                .errors
                .entry(result.error_type.unwrap_or_default())
                .or_default() += 1;
        }
    }
    if score.total > 0 {
        score.accuracy = score.correct as f64 / score.total as f64;
    }
    Ok(score)
}

/// Scores every result file under `results_dir` against the corpus at `corpus_root`.
pub fn score_dir(results_dir: &Path, corpus_root: &Path) -> anyhow::Result<Vec<CategoryScore>> {
    let mut checker = LineChecker::new();
    let mut scores = Vec::new();
    for (category, path) in find_result_files(results_dir)? {
        let entries = load_category(corpus_root, &category)?;
        let lines = read_result_file(&path)?;
        let score = score_lines(&category, &entries, &lines, &mut checker)
            .with_context(|| path.display().to_string())?;
        scores.push(score);
    }
    Ok(scores)
}

/// A category outside the vendored ones, with its entries (from `--corpus`).
#[derive(Debug, Clone)]
pub struct ExtraCategory {
    pub name: String,
    pub entries: Vec<Entry>,
}

/// Scores every result file under `results_dir`: vendored categories against the corpus at
/// `corpus_root`, `extra` ones against their own entries. Vendored categories come first,
/// in their usual order.
pub fn score_dir_with_extra(
    results_dir: &Path,
    corpus_root: &Path,
    extra: &[ExtraCategory],
) -> anyhow::Result<Vec<CategoryScore>> {
    let mut names: Vec<&str> = vendored_categories();
    for category in extra {
        if !names.contains(&category.name.as_str()) {
            names.push(&category.name);
        }
    }
    let found = find_result_files_for(results_dir, &names)?;
    let mut checker = LineChecker::new();
    let mut scores = Vec::new();
    for name in names {
        let Some(path) = found.get(name) else {
            continue;
        };
        let lines = read_result_file(path)?;
        let score = match extra.iter().find(|c| c.name == name) {
            Some(category) => score_lines(name, &category.entries, &lines, &mut checker),
            None => score_lines(
                name,
                &load_category(corpus_root, name)?,
                &lines,
                &mut checker,
            ),
        }
        .with_context(|| path.display().to_string())?;
        scores.push(score);
    }
    Ok(scores)
}

/// Folder name of one repeat's results in a run with several repeats.
pub fn repeat_dir_name(repeat: u32) -> String {
    format!("repeat-{repeat}")
}

/// Scores a run folder: each `repeat-<n>` folder under `dir` as one repeat, in order, or
/// `dir` as a whole when it has none. Fails when no result file is found.
pub fn score_repeats(
    dir: &Path,
    corpus_root: &Path,
    extra: &[ExtraCategory],
) -> anyhow::Result<Vec<Vec<CategoryScore>>> {
    if !dir.is_dir() {
        bail!("{} is not a folder", dir.display());
    }
    let mut repeats: Vec<(u32, PathBuf)> = Vec::new();
    for item in fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = item?.path();
        let number = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("repeat-"))
            .and_then(|n| n.parse::<u32>().ok());
        if let (Some(number), true) = (number, path.is_dir()) {
            repeats.push((number, path));
        }
    }
    repeats.sort();
    let folders: Vec<PathBuf> = if repeats.is_empty() {
        vec![dir.to_path_buf()]
    } else {
        repeats.into_iter().map(|(_, path)| path).collect()
    };
    let mut scored = Vec::new();
    for folder in folders {
        let scores = score_dir_with_extra(&folder, corpus_root, extra)?;
        if scores.is_empty() {
            bail!(
                "no result files (BFCL_v4_<category>_result.json) under {}",
                folder.display()
            );
        }
        scored.push(scores);
    }
    Ok(scored)
}

/// Table rows: category, correct/total, accuracy in percent, most common error.
pub fn score_table(scores: &[CategoryScore]) -> comfy_table::Table {
    let mut table = comfy_table::Table::new();
    table.set_header(["category", "correct", "accuracy", "most common error"]);
    for score in scores {
        let top_error = score
            .errors
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(kind, n)| format!("{kind} ({n})"))
            .unwrap_or_default();
        table.add_row([
            score.category.clone(),
            format!("{}/{}", score.correct, score.total),
            format!("{:.1}%", score.accuracy * 100.0),
            top_error,
        ]);
    }
    table
}

/// A result line for a text reply.
pub fn text_result(id: &str, reply: &str) -> ResultLine {
    ResultLine {
        id: id.to_string(),
        result: json!(reply),
        input_token_count: None,
        output_token_count: None,
        latency: None,
    }
}
