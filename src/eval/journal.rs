//! The run journal: one JSON line per finished sample, flushed as it is written, so an
//! interrupted run keeps everything it finished and `--resume` can skip it.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use serde::{Deserialize, Serialize};

use super::judge::Judgement;
use super::stats::Arm;
use crate::harness::transcript::Transcript;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    pub sample_id: String,
    pub category: String,
    pub arm: Arm,
    pub repeat: u32,
    pub seed: u32,
    pub judgement: Judgement,
    pub gapped: bool,
    pub errored: bool,
    pub transcript: Transcript,
}

impl JournalEntry {
    pub fn key(&self) -> (String, Arm, u32) {
        (self.sample_id.clone(), self.arm, self.repeat)
    }
}

pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    pub fn open(path: &Path) -> anyhow::Result<Journal> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| anyhow!("{}: cannot open journal: {e}", path.display()))?;
        let mut journal = Journal {
            path: path.to_path_buf(),
            file,
        };
        // An interruption can leave a last line without its line break. A whole entry gets its
        // break; a cut one is dropped (`read` dropped it too, so the sample runs again). Left
        // in place, it would sit in the middle once new lines follow, and make the journal
        // unreadable for the next `--resume`.
        let text = std::fs::read(path)
            .map_err(|e| anyhow!("{}: cannot read journal: {e}", path.display()))?;
        if text.last().is_some_and(|b| *b != b'\n') {
            let start = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let whole = serde_json::from_slice::<JournalEntry>(&text[start..]).is_ok();
            let fixed = if whole {
                journal.file.write_all(b"\n")
            } else {
                journal.file.set_len(start as u64)
            };
            fixed.map_err(|e| anyhow!("{}: cannot repair journal: {e}", path.display()))?;
        }
        Ok(journal)
    }

    pub fn append(&mut self, entry: &JournalEntry) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(entry)?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|e| anyhow!("{}: cannot write journal: {e}", self.path.display()))
    }
}

/// Reads a journal. A last line cut short by an interruption is dropped; any other bad line is an error.
pub fn read(path: &Path) -> anyhow::Result<Vec<JournalEntry>> {
    let file =
        File::open(path).map_err(|e| anyhow!("{}: cannot read journal: {e}", path.display()))?;
    let lines: Vec<String> = BufReader::new(file).lines().collect::<Result<_, _>>()?;
    let mut entries = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<JournalEntry>(line) {
            Ok(entry) => {
                // A sample finished twice (a resumed run racing an old one) counts once.
                if seen.insert(entry.key()) {
                    entries.push(entry);
                }
            }
            Err(_) if i + 1 == lines.len() => break,
            Err(e) => {
                return Err(anyhow!(
                    "{}:{}: not a journal entry: {e}",
                    path.display(),
                    i + 1
                ))
            }
        }
    }
    Ok(entries)
}
