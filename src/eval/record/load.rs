//! A run folder read back: its manifest, its journal (every line a unit of the manifest's plan),
//! its profile when there is one, and each sample's prompt from the corpus the manifest names
//! (the journal keeps transcripts, not prompts): what a past run's reports are rebuilt from
//! (`run_summary`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::anyhow;

use super::folder::{JOURNAL_FILE, MANIFEST_FILE, PROFILE_FILE};
use super::journal::{self, JournalEntry};
use super::manifest::{self, Manifest};
use crate::eval::corpus::parse_corpus;
use crate::eval::digest::sha256_hex;
use crate::exec::profile::Profile;

/// Everything a run's reports are made of.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// The journal's entries of the arms the run ran.
    pub entries: Vec<JournalEntry>,
    pub profile: Option<Profile>,
    /// Each sample's last user message, by sample id.
    pub prompts: BTreeMap<String, String>,
    /// Said in the report when the prompts could not be read (the corpus moved or changed).
    pub prompts_note: Option<String>,
}

/// Reads a run folder: its journal and manifest (both required), its profile if present, and
/// the prompts of the corpus its manifest names when that corpus is unchanged.
pub fn load(dir: &Path) -> anyhow::Result<RunRecord> {
    let manifest = manifest::read(&dir.join(MANIFEST_FILE))?;
    let (prompts, prompts_note) = match corpus_prompts(&manifest) {
        Ok(prompts) => (prompts, None),
        Err(note) => (BTreeMap::new(), Some(note)),
    };
    // Every line must be a unit of the run's plan: its arm, its seed, a sample of its corpus
    // when the corpus is at hand.
    let plan =
        manifest.plan_shape((prompts_note.is_none()).then(|| prompts.keys().cloned().collect()));
    let entries = journal::read_in_plan(&dir.join(JOURNAL_FILE), &plan)?;
    let profile_path = dir.join(PROFILE_FILE);
    let profile = match crate::base::input::read_input_to_string(&profile_path) {
        Ok(text) => Some(
            serde_json::from_str::<Profile>(&text)
                .map_err(|e| anyhow!("{}: not a profile: {e}", profile_path.display()))?,
        ),
        Err(_) => None,
    };
    Ok(RunRecord {
        dir: dir.to_path_buf(),
        manifest,
        entries,
        profile,
        prompts,
        prompts_note,
    })
}

/// The prompts of the corpus the manifest names, if it is still there and unchanged; else why
/// not, in words for the report.
fn corpus_prompts(manifest: &Manifest) -> Result<BTreeMap<String, String>, String> {
    // The path as the run named it, relative to where it ran; else its absolute form.
    let named = Path::new(&manifest.corpus);
    let path = match manifest.corpus_file.as_deref().map(Path::new) {
        Some(absolute) if !named.is_file() && absolute.is_file() => absolute,
        _ => named,
    };
    let text = crate::base::input::read_input_to_string(path).map_err(|e| {
        format!(
            "prompts not shown: the corpus {} cannot be read from here ({e})",
            path.display()
        )
    })?;
    if sha256_hex(text.as_bytes()) != manifest.corpus_sha256 {
        return Err(format!(
            "prompts not shown: the corpus {} changed since the run (its sha256 differs from the manifest's)",
            path.display()
        ));
    }
    let samples = parse_corpus(&text, path).map_err(|e| format!("prompts not shown: {e}"))?;
    Ok(samples
        .iter()
        .map(|s| (s.id.clone(), s.prompt_text().to_string()))
        .collect())
}
