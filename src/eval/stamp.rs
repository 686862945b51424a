//! `skilleval stamp`: a run's scores kept with the wording that won it. The winner's front
//! matter gets the run's per-category pass rates as YAML comments (with the model's sha256 and
//! the run id) and a bumped `version:`; the body is left as it is. The harness reads front
//! matter as YAML, so comments never reach the model, and it never shows `version`.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};

use super::record::manifest::Manifest;
use super::record::RunRecord;
use super::stats::{Comparison, Row, Summary};
use crate::eval::arm::Arm;
use crate::harness::skills::{parse_skill_md, split_front_matter, SkillTree};

/// Every stamp line starts so; a new stamp replaces the lines of an earlier one.
pub const STAMP_PREFIX: &str = "# skilleval:";

/// The variants passed over because some row of theirs declined, with those rows: what
/// `stamp` says beside the wording it chose.
pub fn passed_over(record: &RunRecord, summary: &Summary) -> Vec<(String, Vec<String>)> {
    let manifest = &record.manifest;
    summary
        .wordings()
        .zip(manifest.variant_paths())
        .map(|(wording, file)| (file.to_string(), declined_rows(wording)))
        .filter(|(_, rows)| !rows.is_empty())
        .collect()
}

/// The wording a stamp goes to.
#[derive(Debug, Clone, PartialEq)]
pub struct Winner {
    pub arm: Arm,
    /// Its file: the variant's, or the baseline skill's `SKILL.md`.
    pub file: PathBuf,
    /// Its total pass rate in the run.
    pub rate: Option<f64>,
    /// The rows the run calls worse or mixed for this wording, as the headline names them:
    /// a wording with any is stamped only when the author names it.
    pub declined: Vec<String>,
}

/// The rows of a wording comparison that declined (worse, or mixed), categories, total, laws.
pub fn declined_rows(comparison: &Comparison) -> Vec<String> {
    comparison
        .rows()
        .filter(|row| row.declined())
        .map(|row| format!("{} {}", row.name, row.verdict_label()))
        .collect()
}

/// What `stamp` did.
#[derive(Debug, Clone)]
pub struct Stamped {
    pub winner: Winner,
    pub version: (Option<String>, String),
    pub text: String,
}

/// The wording with the highest total pass rate among the baseline and the variants with a row
/// the run calls better and none it calls worse or mixed; the baseline keeps a tie, and stays
/// when no variant has such a row, since a change should earn its place. `asked` names a variant file instead (or the baseline's `SKILL.md`), whatever its rows.
/// A run whose control shows that the skill's body changed nothing measurable names no variant
/// by itself: its wording rows do not show which wording the model follows.
pub fn winner(
    record: &RunRecord,
    summary: &Summary,
    asked: Option<&Path>,
) -> anyhow::Result<Winner> {
    let manifest = &record.manifest;
    let baseline_file = baseline_file(manifest);
    let mut candidates = vec![Winner {
        arm: Arm::Baseline,
        file: baseline_file,
        rate: summary.wording.total.reference.rate,
        declined: Vec::new(),
    }];
    let files: Vec<PathBuf> = manifest
        .variant_paths()
        .into_iter()
        .map(PathBuf::from)
        .collect();
    for (wording, file) in summary.wordings().zip(files) {
        candidates.push(Winner {
            arm: wording.treatment,
            file,
            rate: wording.total.treatment.rate,
            declined: declined_rows(wording),
        });
    }
    if let Some(asked) = asked {
        return candidates
            .into_iter()
            .find(|c| same_file(&c.file, asked))
            .ok_or_else(|| {
                anyhow!(
                    "--variant {}: not a wording of run {} (its wordings: {})",
                    asked.display(),
                    manifest.run_id,
                    wordings_of(manifest).join(", ")
                )
            });
    }
    if manifest.variant.is_none() {
        bail!(
            "run {} is an A/A run (no variant): there is no winning wording to stamp; name the baseline with --variant {} to stamp it",
            manifest.run_id,
            baseline_file_shown(manifest)
        );
    }
    let mut best = candidates.remove(0);
    // A variant earns its place by a row better beyond noise and none worse; a higher total
    // inside the noise is not a win.
    let improved: Vec<bool> = std::iter::once(false)
        .chain(summary.wordings().map(|w| {
            w.rows()
                .any(|r| r.verdict == crate::eval::stats::Verdict::Better)
        }))
        .collect();
    for (candidate, _) in candidates
        .into_iter()
        .zip(improved.into_iter().skip(1))
        .filter(|(c, improved)| c.declined.is_empty() && *improved)
    {
        if candidate.rate.unwrap_or(-1.0) > best.rate.unwrap_or(-1.0) {
            best = candidate;
        }
    }
    let no_skill_effect = summary
        .skill_effect
        .as_ref()
        .is_some_and(|skill| !skill.any_change());
    if best.arm != Arm::Baseline && no_skill_effect {
        bail!(
            "run {}: removing the skill's body changed nothing measurable, so its wording rows do not show which wording the model follows and no wording is chosen for you; score the wordings (`skilleval score`), or name one with --variant to stamp it anyway",
            manifest.run_id
        );
    }
    Ok(best)
}

fn wordings_of(manifest: &Manifest) -> Vec<String> {
    std::iter::once(baseline_file_shown(manifest))
        .chain(manifest.variant_paths().into_iter().map(String::from))
        .collect()
}

/// The baseline skill's `SKILL.md`: the file of the skills tree that defines the skill (its
/// folder may be named otherwise).
fn baseline_file(manifest: &Manifest) -> PathBuf {
    let dir = Path::new(&manifest.skills_dir);
    SkillTree::load(dir)
        .ok()
        .and_then(|tree| tree.get(&manifest.skill).map(|s| s.source.clone()))
        .unwrap_or_else(|| dir.join(&manifest.skill).join("SKILL.md"))
}

fn baseline_file_shown(manifest: &Manifest) -> String {
    baseline_file(manifest).display().to_string()
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The winner's text with the run's scores stamped in; refuses a file whose body is no longer
/// the one the run measured.
pub fn stamp(record: &RunRecord, summary: &Summary, winner: Winner) -> anyhow::Result<Stamped> {
    let manifest = &record.manifest;
    let shown = winner.file.display().to_string();
    let text = crate::base::input::read_input_to_string(&winner.file)
        .map_err(|e| anyhow!("{shown}: cannot read: {e}"))?;
    if split_front_matter(&text).is_err() {
        bail!(
            "{shown}: no front matter to hold the stamp; start the file with the skill's front matter (`---`, `name:`, `description:`, `---`)"
        );
    }
    let (_, body) = parse_skill_md(&text, &winner.file)?;
    let measured = match winner.arm {
        Arm::Baseline => Some(manifest.baseline_body_sha256.clone()),
        Arm::Variant(i) => manifest.variant_body(usize::from(i)).map(str::to_string),
        Arm::Control => None,
    };
    if measured.as_deref() != Some(super::digest::sha256_hex(body.as_bytes()).as_str()) {
        bail!(
            "{shown}: the body changed since run {} measured it; run again to stamp this wording",
            manifest.run_id
        );
    }
    let comparison = match winner.arm {
        Arm::Baseline => None,
        arm => summary.wordings().find(|w| w.treatment == arm),
    };
    let lines = stamp_lines(manifest, summary, comparison);
    // The same run stamped again is the same evidence: its version stays as it is.
    if let Ok((yaml, _)) = split_front_matter(&text) {
        let already: Vec<&str> = yaml
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with(STAMP_PREFIX))
            .collect();
        if already.first().copied() == lines.first().map(String::as_str) {
            bail!(
                "{shown}: already carries the stamp of run {}; stamping the same run again would bump its version for the same evidence, so the file is left as it is",
                manifest.run_id
            );
        }
    }
    let (text, version) = stamped_text(&text, &lines).map_err(|e| anyhow!("{shown}: {e}"))?;
    Ok(Stamped {
        winner,
        version,
        text,
    })
}

/// The comment lines of a stamp: the run, the total, then each category.
fn stamp_lines(
    manifest: &Manifest,
    summary: &Summary,
    comparison: Option<&Comparison>,
) -> Vec<String> {
    let model = match (&manifest.model_sha256, &manifest.backend.model_name) {
        (Some(sha), _) => format!("model sha256 {sha}"),
        (None, Some(name)) => format!("model {name} ({}, no sha256)", manifest.backend.name),
        (None, None) => format!("model of backend {} (no sha256)", manifest.backend.name),
    };
    let mut lines = vec![format!(
        "{STAMP_PREFIX} run {} · pack {} · {model} · {} samples × {} repeats · seed {}",
        manifest.run_id, manifest.pack, manifest.samples, manifest.repeats, manifest.run_seed
    )];
    let rows: Vec<(&Row, bool)> = match comparison {
        // A variant: its own rate, with Δ against the baseline.
        Some(c) => c
            .categories
            .iter()
            .chain([&c.total])
            .map(|r| (r, true))
            .collect(),
        // The baseline: the reference side of the (first) wording comparison.
        None => summary
            .wording
            .categories
            .iter()
            .chain([&summary.wording.total])
            .map(|r| (r, false))
            .collect(),
    };
    for (row, treatment) in rows {
        let side = if treatment {
            &row.treatment
        } else {
            &row.reference
        };
        let Some(rate) = side.rate else { continue };
        let mut line = format!(
            "{STAMP_PREFIX} {} {:.1}% over {} samples",
            row.name,
            rate * 100.0,
            row.samples
        );
        if let (true, Some(delta), Some(interval)) = (treatment, row.delta, row.interval) {
            line.push_str(&format!(
                " · Δ {:+.1} pp [{:+.1}, {:+.1}] against the baseline: {}",
                delta * 100.0,
                interval.low * 100.0,
                interval.high * 100.0,
                row.verdict_label()
            ));
        }
        lines.push(line);
    }
    lines
}

/// `text` with the stamp `lines` at the end of its front matter (an earlier stamp's lines
/// removed) and its `version:` bumped; with the old and new versions.
pub fn stamped_text(
    text: &str,
    lines: &[String],
) -> Result<(String, (Option<String>, String)), String> {
    let (yaml, body) = split_front_matter(text).map_err(str::to_string)?;
    let mut kept: Vec<String> = yaml
        .lines()
        .filter(|l| !l.trim_start().starts_with(STAMP_PREFIX))
        .map(str::to_owned)
        .collect();
    let mut old = None;
    let mut new = None;
    for line in kept.iter_mut() {
        let Some(rest) = line.strip_prefix("version:") else {
            continue;
        };
        let value = rest.trim();
        let (quote, bare) = match value.chars().next() {
            Some(q @ ('"' | '\'')) => (Some(q), value.trim_matches(q)),
            _ => (None, value),
        };
        let bumped = bump_version(bare)
            .ok_or_else(|| format!("field `version`: {value} does not end in a number to bump"))?;
        old = Some(bare.to_string());
        new = Some(bumped.clone());
        let q = quote.map(String::from).unwrap_or_else(|| "\"".into());
        *line = format!("version: {q}{bumped}{q}");
        break;
    }
    let new = match new {
        Some(new) => new,
        None => {
            kept.push("version: \"1\"".into());
            "1".to_string()
        }
    };
    let front: Vec<String> = kept.into_iter().chain(lines.iter().cloned()).collect();
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let bom = if text.starts_with('\u{feff}') {
        "\u{feff}"
    } else {
        ""
    };
    let mut out = format!("{bom}---{newline}");
    for line in front {
        out.push_str(&line);
        out.push_str(newline);
    }
    out.push_str(&format!("---{newline}"));
    out.push_str(body);
    Ok((out, (old, new)))
}

/// "2.0" → "2.1", "1.0.9" → "1.0.10", "3" → "4"; none for a version that does not end in a
/// number.
pub fn bump_version(version: &str) -> Option<String> {
    let digits = version
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .count();
    if digits == 0 {
        return None;
    }
    let (head, tail) = version.split_at(version.len() - digits);
    let next = tail.parse::<u64>().ok()?.checked_add(1)?;
    Some(format!("{head}{next}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_bump_their_last_number() {
        assert_eq!(bump_version("2.0").as_deref(), Some("2.1"));
        assert_eq!(bump_version("1.0.9").as_deref(), Some("1.0.10"));
        assert_eq!(bump_version("3").as_deref(), Some("4"));
        assert_eq!(bump_version("v1-beta"), None);
    }

    #[test]
    fn a_second_stamp_replaces_the_first() {
        let text = "---\nname: x\ndescription: d\nversion: \"2.0\"\n---\nBody.\n";
        let (once, version) = stamped_text(text, &["# skilleval: a".into()]).unwrap();
        assert_eq!(version, (Some("2.0".into()), "2.1".into()));
        let (twice, _) = stamped_text(&once, &["# skilleval: b".into()]).unwrap();
        assert_eq!(
            twice,
            "---\nname: x\ndescription: d\nversion: \"2.2\"\n# skilleval: b\n---\nBody.\n"
        );
    }

    #[test]
    fn a_file_without_a_version_gets_one() {
        let text = "---\nname: x\ndescription: d\n---\nBody.\n";
        let (out, version) = stamped_text(text, &[]).unwrap();
        assert_eq!(version, (None, "1".into()));
        assert!(out.contains("version: \"1\"\n---\nBody."), "{out}");
    }
}
