//! Where a bench run's finished units go, each output a sink of `exec::sink`: `entries.jsonl`,
//! a record per entry as it ends, and BFCL's result files, each written once the last unit whose
//! lines it holds has ended. Both are written as the run goes, so that an interrupted run keeps
//! what it finished.

use std::fs;
use std::io::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::exec::sink::{Finished, Sink};

use super::score::{write_result_file, ResultLine};
use super::{entry_seed, EntryOutcome, Mode};

/// Per-entry records, one JSON object a line.
pub const ENTRIES_FILE: &str = "entries.jsonl";

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

/// `entries.jsonl`: each entry's record appended and flushed as the entry ends.
pub struct EntryJournal {
    file: fs::File,
    path: PathBuf,
    /// The run's seed, from which each record's entry seed derives.
    run_seed: u64,
}

impl EntryJournal {
    /// Creates `entries.jsonl` in `run_dir`, empty.
    pub fn create(run_dir: &Path, run_seed: u64) -> anyhow::Result<Self> {
        let path = run_dir.join(ENTRIES_FILE);
        let file =
            fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(EntryJournal {
            file,
            path,
            run_seed,
        })
    }
}

impl Sink<EntryOutcome> for EntryJournal {
    fn finished(&mut self, unit: Finished<'_, EntryOutcome>) -> anyhow::Result<()> {
        let outcome = unit.result;
        let seed = entry_seed(self.run_seed, &outcome.id, outcome.repeat);
        let record = EntryRecord::new(outcome, seed);
        let line = serde_json::to_string(&record).expect("records serialize");
        writeln!(self.file, "{line}")
            .and_then(|()| self.file.flush())
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

/// One BFCL result file: its folder, the category it names, and the units whose lines it holds.
pub struct ResultFile {
    pub folder: PathBuf,
    pub category: String,
    pub units: Range<usize>,
}

/// BFCL's result files of a run's units. Each is written once the last of its units has ended,
/// with their lines in unit order; one whose units gave no line is not written.
pub struct ResultFiles<F> {
    files: Vec<ResultFile>,
    /// The file each unit's lines go to, by unit index.
    file_of_unit: Vec<Option<usize>>,
    /// Units not ended yet, per file.
    left: Vec<usize>,
    /// The lines of the ended units, by unit index, until their file is written.
    lines: Vec<Vec<ResultLine>>,
    /// What one unit's result puts in its file.
    lines_of: F,
}

impl<F> ResultFiles<F> {
    /// The result files of a run of `units` units; `files` must not share a unit.
    pub fn new(files: Vec<ResultFile>, units: usize, lines_of: F) -> Self {
        let mut file_of_unit = vec![None; units];
        for (f, file) in files.iter().enumerate() {
            for unit in file.units.clone() {
                file_of_unit[unit] = Some(f);
            }
        }
        ResultFiles {
            left: files.iter().map(|f| f.units.len()).collect(),
            files,
            file_of_unit,
            lines: vec![Vec::new(); units],
            lines_of,
        }
    }
}

impl<T, F: Fn(&T) -> Vec<ResultLine>> Sink<T> for ResultFiles<F> {
    fn finished(&mut self, unit: Finished<'_, T>) -> anyhow::Result<()> {
        let Some(f) = self.file_of_unit[unit.index] else {
            return Ok(());
        };
        self.lines[unit.index] = (self.lines_of)(unit.result);
        self.left[f] -= 1;
        if self.left[f] > 0 {
            return Ok(());
        }
        let file = &self.files[f];
        let lines: Vec<ResultLine> = self.lines[file.units.clone()]
            .iter_mut()
            .flat_map(std::mem::take)
            .collect();
        if !lines.is_empty() {
            write_result_file(&file.folder, &file.category, &lines)?;
        }
        Ok(())
    }
}
