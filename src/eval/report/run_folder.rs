//! A run folder read back for its reports: the journal, the manifest, the profile when there is
//! one, and each sample's prompt from the corpus the manifest names (the journal keeps
//! transcripts, not prompts). The statistics come from the journal through
//! `stats::summarize`, exactly as `run` computes them, so `skilleval report` rebuilds the same
//! reports for any past run; `write` is what both commands call to write them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::anyhow;

use super::{html, markdown};
use crate::eval::corpus::parse_corpus;
use crate::eval::journal::{self, JournalEntry};
use crate::eval::manifest::{self, Manifest};
use crate::eval::plan::PlanShape;
use crate::eval::stats::{self, StatsError, Summary};
use crate::exec::profile::Profile;

/// The manifest's name in a run folder.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The profile's name in a run folder.
pub const PROFILE_FILE: &str = "profile.json";
/// The reports `write` puts in a run folder.
pub const MARKDOWN_FILE: &str = "report.md";
pub const HTML_FILE: &str = "report.html";

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

/// The folder `run` names RUN: a folder holding a journal, else `output_root/RUN`.
pub fn find(run: &str, output_root: &Path) -> anyhow::Result<PathBuf> {
    let given = PathBuf::from(run);
    let under_output = output_root.join(run);
    for dir in [&given, &under_output] {
        if dir.join(journal::JOURNAL_FILE).is_file() {
            return Ok(dir.clone());
        }
    }
    let (a, b) = (
        given.join(journal::JOURNAL_FILE),
        under_output.join(journal::JOURNAL_FILE),
    );
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

/// Reads a run folder: its journal and manifest (both required), its profile if present, and
/// the prompts of the corpus its manifest names when that corpus is unchanged.
pub fn load(dir: &Path) -> anyhow::Result<RunRecord> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&manifest_path)
        .map_err(|e| anyhow!("{}: cannot read: {e}", manifest_path.display()))?;
    let manifest: Manifest = serde_json::from_str(&text)
        .map_err(|e| anyhow!("{}: not a manifest: {e}", manifest_path.display()))?;
    let (prompts, prompts_note) = match corpus_prompts(&manifest) {
        Ok(prompts) => (prompts, None),
        Err(note) => (BTreeMap::new(), Some(note)),
    };
    // Every line must be a unit of the run's plan: its arm, its seed, a sample of its corpus
    // when the corpus is at hand.
    let plan = PlanShape::of_manifest(
        &manifest,
        (prompts_note.is_none()).then(|| prompts.keys().cloned().collect()),
    );
    let entries = journal::read_in_plan(&dir.join(journal::JOURNAL_FILE), &plan)?;
    let profile_path = dir.join(PROFILE_FILE);
    let profile = match std::fs::read_to_string(&profile_path) {
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
    let path = Path::new(&manifest.corpus);
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "prompts not shown: the corpus {} cannot be read from here ({e})",
            path.display()
        )
    })?;
    if manifest::sha256_hex(text.as_bytes()) != manifest.corpus_sha256 {
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

/// A run's comparisons from its journal entries, each variant named as its manifest names it:
/// the one computation behind `run`, `merge` and `report`.
pub fn summary(manifest: &Manifest, entries: &[JournalEntry]) -> Result<Summary, StatsError> {
    summary_at(manifest, entries, stats::Effort::REPORT)
}

/// [`summary`] at another effort. A sequential run is summarized at its last look, with the
/// looks before it, from the repeats that look had seen.
pub fn summary_at(
    manifest: &Manifest,
    entries: &[JournalEntry],
    effort: stats::Effort,
) -> Result<Summary, StatsError> {
    let mut outcomes = journal::outcomes(entries);
    let looks = manifest.sequential.as_ref().and_then(|s| s.looks());
    if let Some(last) = looks.as_ref().and_then(|l| l.at.last().copied()) {
        outcomes.retain(|o| o.repeat < last);
    }
    let mut summary = stats::summarize_looked(&outcomes, effort, looks.as_ref())?;
    summary.label_variants(&manifest.variant_labels());
    summary.label_control(manifest.control_removes.name());
    Ok(summary)
}

impl RunRecord {
    /// Every comparison, computed from the journal.
    pub fn summary(&self) -> anyhow::Result<Summary> {
        summary(&self.manifest, &self.entries)
            .map_err(|e| anyhow!("{}: {e}", self.dir.join(journal::JOURNAL_FILE).display()))
    }

    /// The settings line of the reports, from the manifest and the profile's wall time.
    pub fn settings(&self) -> String {
        settings(&self.manifest, self.profile.as_ref().map(|p| p.wall_secs))
    }
}

/// "pack weather · skill weather · variant b.md · control arm · 44 samples × 6 repeats · …":
/// what a report's reader needs to know of the run, from its manifest.
pub fn settings(manifest: &Manifest, wall_secs: Option<f64>) -> String {
    format!(
        "pack {} · skill {} · {} · {} · {} samples × {} repeats · seed {} · temperature {} · model {}{}",
        manifest.pack,
        manifest.skill,
        match (&manifest.variant, manifest.more_variants.len()) {
            (Some(v), 0) => format!("variant {v}"),
            (Some(_), n) => format!(
                "{} variants: {}",
                n + 1,
                manifest.variant_labels().join(", ")
            ),
            (None, _) => "A/A (no variant)".into(),
        },
        if manifest.control {
            "control arm"
        } else {
            "no control arm"
        },
        manifest.samples,
        manifest.repeats,
        manifest.run_seed,
        manifest.sampling.temperature,
        manifest
            .backend
            .model_name
            .clone()
            .unwrap_or(manifest.backend.name.clone()),
        wall_secs.map(|s| format!(" · {s:.0}s")).unwrap_or_default()
    ) + &manifest
        .shard
        .as_ref()
        .map(|s| format!(" · shard {} (only its samples)", s.shard()))
        .unwrap_or_default()
        + &manifest
            .sequential
            .as_ref()
            .map(|s| format!(" · {}", s.describe()))
            .unwrap_or_default()
        + &manifest
            .baseline_from
            .as_ref()
            .map(|run| match manifest.baseline_rejudged {
                0 => format!(" · baseline taken from run {run}"),
                n => format!(" · baseline taken from run {run}, {n} of its units judged again with this pack's laws"),
            })
            .unwrap_or_default()
        + &manifest
            .rejudged
            .as_ref()
            .map(|r| {
                format!(
                    " · transcripts of run {} judged again (laws: {}; {} units changed)",
                    r.from,
                    r.laws
                        .as_ref()
                        .map(|l| l.describe())
                        .unwrap_or_else(|| "that run's manifest does not name them".into()),
                    r.units_changed
                )
            })
            .unwrap_or_default()
}

fn pinned_markdown(entries: &[JournalEntry]) -> String {
    let lines = super::pinned::warnings(entries);
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\n{}\n",
        lines.iter().map(|l| format!("- {l}\n")).collect::<String>()
    )
}

/// `report.md` and `report.html` as `write` writes them: the reports, the laws that held
/// nowhere and the calls no recording answered.
pub fn render(record: &RunRecord, summary: &Summary, settings: &str) -> (String, String) {
    let title = format!("skilleval: {}", record.manifest.pack);
    let gaps = super::gaps::gap_calls(&record.entries);
    let run = &record.manifest.run_id;
    let page = html::render(record, summary, settings);
    // The gap list goes before the page's data and script, at the end of its body.
    let page = match page.find("<script type=\"application/json\"") {
        Some(at) => format!(
            "{}{}{}",
            &page[..at],
            super::gaps::html(&gaps, run),
            &page[at..]
        ),
        None => page,
    };
    let text = markdown(summary, &title, settings)
        + &pinned_markdown(&record.entries)
        + &super::gaps::markdown(&gaps, run);
    (text, page)
}

/// Writes `report.md` and `report.html` into the record's folder.
pub fn write(record: &RunRecord, summary: &Summary, settings: &str) -> anyhow::Result<()> {
    let (text, page) = render(record, summary, settings);
    for (name, text) in [(MARKDOWN_FILE, text), (HTML_FILE, page)] {
        let path = record.dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(())
}
