//! A run folder on disk: the names of its files, finding one by id, opening one (new, or to
//! resume) under the operating system's lock, and writing its JSON files.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};

use super::journal::{self, JournalEntry};
use crate::exec::run_id::{new_run_id, unused_run_id};

/// The journal: one line per finished unit.
pub const JOURNAL_FILE: &str = "journal.jsonl";
/// Everything that enters the run's results.
pub const MANIFEST_FILE: &str = "manifest.json";
/// Where the run's time and tokens went.
pub const PROFILE_FILE: &str = "profile.json";
/// Every figure of the summary, for other programs.
pub const SUMMARY_JSON_FILE: &str = "summary.json";
pub const SUMMARY_CSV_FILE: &str = "summary.csv";
/// The reports a finished run folder holds.
pub const MARKDOWN_FILE: &str = "report.md";
pub const HTML_FILE: &str = "report.html";
/// Held by the process that runs in the folder.
pub const LOCK_FILE: &str = "run.lock";

/// The folder `run` names RUN: a folder holding a journal, else `output_root/RUN`.
pub fn find(run: &str, output_root: &Path) -> anyhow::Result<PathBuf> {
    let given = PathBuf::from(run);
    let under_output = output_root.join(run);
    for dir in [&given, &under_output] {
        if dir.join(JOURNAL_FILE).is_file() {
            return Ok(dir.clone());
        }
    }
    let (a, b) = (given.join(JOURNAL_FILE), under_output.join(JOURNAL_FILE));
    if a == b {
        return Err(anyhow!(
            "{run}: no run folder: {} does not exist",
            a.display()
        ));
    }
    Err(anyhow!(
        "{run}: no run folder: neither {} nor {} exists",
        a.display(),
        b.display()
    ))
}

/// A run folder held by this process: created for a new run, or found with its journal for a
/// resumed one, and locked either way, so that two processes never append to one journal.
/// The lock is the operating system's, released when the process ends, however it ends.
pub struct RunFolder {
    pub run_id: String,
    pub dir: PathBuf,
    /// What the journal already holds (empty for a new run).
    pub journaled: Vec<JournalEntry>,
    _lock: File,
}

/// The end of the error of a new run whose folder another process created first.
const EXISTS_ALREADY: &str = "a run with this id exists already";

impl RunFolder {
    /// Creates `output_root/run_id` for a new run (an existing folder is an error), or opens it
    /// to resume.
    pub fn open(output_root: &Path, run_id: &str, resume: bool) -> anyhow::Result<RunFolder> {
        let dir = output_root.join(run_id);
        if resume {
            check_resume(output_root, run_id)?;
        } else {
            check_run_id(run_id)?;
            std::fs::create_dir_all(output_root).map_err(|e| {
                anyhow!(
                    "{}: cannot create output folder: {e}",
                    output_root.display()
                )
            })?;
            std::fs::create_dir(&dir).map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => {
                    anyhow!("{}: {EXISTS_ALREADY}", dir.display())
                }
                _ => anyhow!("{}: cannot create run folder: {e}", dir.display()),
            })?;
        }
        let lock = lock(&dir)?;
        let journaled = if resume {
            journal::read(&dir.join(JOURNAL_FILE))?
        } else {
            Vec::new()
        };
        Ok(RunFolder {
            run_id: run_id.to_string(),
            dir,
            journaled,
            _lock: lock,
        })
    }

    /// The folder of a new run named after `pack` (a fresh id under `output_root`), or of the
    /// run `resume` names.
    pub fn open_for(
        output_root: &Path,
        pack: &str,
        resume: Option<&str>,
    ) -> anyhow::Result<RunFolder> {
        match resume {
            Some(id) => RunFolder::open(output_root, id, true),
            None => {
                // Another run may take the same id between the look and the creation (two runs
                // started in the same second): the next free id is taken then.
                let id = new_run_id(pack);
                let mut last = None;
                for _ in 0..100 {
                    let candidate = unused_run_id(output_root, &id);
                    match RunFolder::open(output_root, &candidate, false) {
                        Err(e) if e.to_string().ends_with(EXISTS_ALREADY) => last = Some(e),
                        other => return other,
                    }
                }
                Err(last.expect("a hundred tries"))
            }
        }
    }

    /// The path of the folder's file `name`.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Removes the folder of a new run that wrote nothing.
    pub fn remove_unused(&self) {
        let _ = std::fs::remove_file(self.file(LOCK_FILE));
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// What `--resume RUN_ID` needs: a valid id and a journal to continue; checked before the model
/// loads.
pub fn check_resume(output_root: &Path, run_id: &str) -> anyhow::Result<()> {
    check_run_id(run_id).map_err(|e| anyhow!("--resume: {e}"))?;
    let journal = output_root.join(run_id).join(JOURNAL_FILE);
    if !journal.is_file() {
        bail!("--resume {run_id}: {} does not exist", journal.display());
    }
    Ok(())
}

/// A run id becomes a folder name: letters, digits, `-` and `_` only, so that it can never
/// reach outside the output folder.
pub fn check_run_id(run_id: &str) -> anyhow::Result<()> {
    if run_id.is_empty()
        || !run_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        bail!("run id {run_id:?}: use ASCII letters, digits, `-` and `_` only");
    }
    Ok(())
}

fn lock(dir: &Path) -> anyhow::Result<File> {
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| anyhow!("{}: cannot open lock file: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => bail!(
            "{}: another skilleval process is running in this run folder; wait for it to end",
            dir.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => {
            bail!("{}: cannot lock: {e}", path.display())
        }
    }
}

/// Refuses a run folder a process is running in (its `run.lock` is held): what is read from it
/// now would be half a run.
pub fn check_not_running(dir: &Path) -> anyhow::Result<()> {
    let path = dir.join(LOCK_FILE);
    let Ok(file) = OpenOptions::new().write(true).open(&path) else {
        return Ok(());
    };
    match file.try_lock() {
        Err(std::fs::TryLockError::WouldBlock) => bail!(
            "{}: a skilleval process is still running in this run folder; wait for it to end",
            dir.display()
        ),
        _ => Ok(()),
    }
}

/// `value` as pretty JSON with a final newline, written atomically (`base::write`), naming the
/// file when it cannot be written.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    crate::base::write::write_atomic(
        path,
        (serde_json::to_string_pretty(value)? + "\n").as_bytes(),
    )
    .map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))
}
