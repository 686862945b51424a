//! The files a finished run folder holds besides its journal and manifest: `summary.json`,
//! `summary.csv`, `report.md` and `report.html`, written by [`write_reports`] for `run`, `merge` and
//! `report` alike, from the run as [`RunRecord`] holds it; and the settings line they share.

use anyhow::anyhow;

use super::{html, markdown};
use crate::eval::record::folder::{
    write_json, HTML_FILE, MARKDOWN_FILE, SUMMARY_CSV_FILE, SUMMARY_JSON_FILE,
};
use crate::eval::record::{Manifest, RunRecord};
use crate::eval::stats::Summary;

/// Writes every report of a run folder: `summary.json`, `summary.csv`, `report.md` and
/// `report.html`, from `summary` of the run `record` holds, under the settings line `settings`.
pub fn write_reports(record: &RunRecord, summary: &Summary, settings: &str) -> anyhow::Result<()> {
    write_json(&record.dir.join(SUMMARY_JSON_FILE), summary)?;
    let csv_path = record.dir.join(SUMMARY_CSV_FILE);
    crate::base::write::write_atomic(&csv_path, super::csv(summary)?.as_bytes())
        .map_err(|e| anyhow!("{}: cannot write: {e}", csv_path.display()))?;
    write(record, summary, settings)
}

/// The settings line of a run's reports, from its manifest and its profile's wall time.
pub fn settings_of(record: &RunRecord) -> String {
    settings(
        &record.manifest,
        record.profile.as_ref().map(|p| p.wall_secs),
    )
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

fn pinned_markdown(record: &RunRecord) -> String {
    let lines = super::pinned::warnings(&record.entries, &record.manifest.law_tools);
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
        + &pinned_markdown(record)
        + &super::gaps::markdown(&gaps, run);
    (text, page)
}

/// Writes `report.md` and `report.html` into the record's folder.
fn write(record: &RunRecord, summary: &Summary, settings: &str) -> anyhow::Result<()> {
    let (text, page) = render(record, summary, settings);
    for (name, text) in [(MARKDOWN_FILE, text), (HTML_FILE, page)] {
        let path = record.dir.join(name);
        crate::base::write::write_atomic(&path, text.as_bytes())
            .map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(())
}
