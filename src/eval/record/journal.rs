//! The run journal: one JSON line per finished sample, flushed as it is written, so an
//! interrupted run keeps everything it finished and `--resume` can skip it; read back, every
//! line must be a unit of the run's plan.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use serde::{Deserialize, Serialize};

use super::plan_shape::PlanShape;
use crate::eval::arm::Arm;
use crate::eval::judgement::Judgement;
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
        // An interruption can leave a last line cut short, or whole but without its line
        // break. A cut one is dropped (`read` dropped it too, so the sample runs again); a whole
        // one gets its break. Left in place, either would sit in the middle once new lines
        // follow, and make the journal unreadable for the next `--resume`.
        let bytes = crate::base::input::read_input(path)
            .map_err(|e| anyhow!("{}: cannot read journal: {e}", path.display()))?;
        let fixed = match torn_tail(&bytes) {
            Some(torn) => journal.file.set_len(torn.offset as u64),
            None if bytes.last().is_some_and(|b| *b != b'\n') => journal.file.write_all(b"\n"),
            None => Ok(()),
        };
        fixed.map_err(|e| anyhow!("{}: cannot repair journal: {e}", path.display()))?;
        Ok(journal)
    }

    pub fn append(&mut self, entry: &JournalEntry) -> anyhow::Result<()> {
        self.append_line(&serde_json::to_string(entry)?)
    }

    /// Appends one entry's line as another journal wrote it, so that a copied entry stays
    /// byte for byte what it was.
    pub fn append_line(&mut self, line: &str) -> anyhow::Result<()> {
        let mut line = line.trim_end_matches(['\n', '\r']).to_string();
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|e| anyhow!("{}: cannot write journal: {e}", self.path.display()))
    }
}

/// A last line that is not a journal entry: what a kill or a full disk leaves mid-write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornLine {
    /// 1-based line number.
    pub line: usize,
    /// Where the line starts in the file.
    pub offset: usize,
    /// Its length, line break aside.
    pub bytes: usize,
}

impl std::fmt::Display for TornLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} ({} bytes) was cut short by an interruption and is dropped; its sample runs again",
            self.line, self.bytes
        )
    }
}

/// Lines as bytes, with their 1-based numbers and offsets; a final empty piece (after the
/// last line break) is left out.
fn byte_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, usize, &[u8])> {
    let mut offset = 0;
    bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .map(move |(index, line)| {
            let start = offset;
            offset += line.len() + 1;
            (index + 1, start, line)
        })
        .filter(|(_, start, line)| !(line.is_empty() && *start >= bytes.len()))
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// The last non-blank line, when it is not a journal entry. Its bytes may be anything, a
/// multi-byte character cut in two included.
fn torn_tail(bytes: &[u8]) -> Option<TornLine> {
    let (line, offset, text) = byte_lines(bytes).filter(|(_, _, l)| !is_blank(l)).last()?;
    serde_json::from_slice::<JournalEntry>(text)
        .is_err()
        .then_some(TornLine {
            line,
            offset,
            bytes: text.len(),
        })
}

/// Parses a journal's bytes. A torn last line is dropped and returned; any other line that is
/// not an entry is an error naming its line. A sample finished twice counts once when both lines
/// are the same; two lines of one unit that differ are an error naming both.
pub fn parse(bytes: &[u8]) -> Result<(Vec<JournalEntry>, Option<TornLine>), String> {
    let (numbered, torn) = parse_numbered(bytes)?;
    Ok((numbered.into_iter().map(|(_, e)| e).collect(), torn))
}

/// Journal entries, each with its line number (from 1).
pub type NumberedEntries = Vec<(usize, JournalEntry)>;

/// [`parse`], each entry with its line number.
pub fn parse_numbered(bytes: &[u8]) -> Result<(NumberedEntries, Option<TornLine>), String> {
    let torn = torn_tail(bytes);
    let mut entries = Vec::new();
    let mut seen: std::collections::BTreeMap<(String, Arm, u32), (usize, &[u8])> =
        std::collections::BTreeMap::new();
    for (line, offset, text) in byte_lines(bytes) {
        if is_blank(text) || torn.as_ref().is_some_and(|t| t.offset == offset) {
            continue;
        }
        let entry = serde_json::from_slice::<JournalEntry>(text)
            .map_err(|e| format!("{line}: not a journal entry: {e}"))?;
        entry
            .judgement
            .check_consistent()
            .map_err(|e| format!("{line}: {e}"))?;
        match seen.get(&entry.key()) {
            Some((first, first_text)) if first_text.trim_ascii() != text.trim_ascii() => {
                return Err(format!(
                    "{line}: sample {:?}, arm {}, repeat {} is also on line {first}, and the two lines differ: keep one",
                    entry.sample_id,
                    entry.arm.name(),
                    entry.repeat
                ));
            }
            Some(_) => {}
            None => {
                seen.insert(entry.key(), (line, text));
                entries.push((line, entry));
            }
        }
    }
    Ok((entries, torn))
}

/// Reads a journal. A last line cut short by an interruption is dropped, with a warning on
/// stderr; any other bad line is an error naming the file and the line.
pub fn read(path: &Path) -> anyhow::Result<Vec<JournalEntry>> {
    read_numbered(path).map(|numbered| numbered.into_iter().map(|(_, e)| e).collect())
}

fn read_numbered(path: &Path) -> anyhow::Result<NumberedEntries> {
    let bytes = crate::base::input::read_input(path)
        .map_err(|e| anyhow!("{}: cannot read journal: {e}", path.display()))?;
    let (entries, torn) = parse_numbered(&bytes).map_err(|e| anyhow!("{}:{e}", path.display()))?;
    if let Some(torn) = torn {
        eprintln!("warning: {}: {torn}", path.display());
    }
    Ok(entries)
}

/// Reads a journal whose every entry must be a unit of `plan` (its arm, sample and seed): a
/// line that is not is an error naming the file and the line.
pub fn read_in_plan(path: &Path, plan: &PlanShape) -> anyhow::Result<Vec<JournalEntry>> {
    let mut entries = Vec::new();
    for (line, entry) in read_numbered(path)? {
        if let Some(misfit) = plan.misfit(&entry.sample_id, entry.arm, entry.repeat, entry.seed) {
            bail!("{}:{line}: {misfit}", path.display());
        }
        entries.push(entry);
    }
    Ok(entries)
}
