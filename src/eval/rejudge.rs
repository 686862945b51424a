//! Judging a run's transcripts again with a pack's current laws. Laws only read a transcript,
//! so a pack whose laws changed, and nothing else, needs no model time: `skilleval report RUN
//! --rejudge` writes a new run folder from the old one's transcripts, and a run that reuses an
//! earlier baseline judges the copied transcripts with its own laws (decision 016).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};

use super::corpus::Sample;
use super::digest::file_sha256;
use super::judge::{self, Law};
use super::pack::Pack;
use super::record::folder::{self, JOURNAL_FILE, MANIFEST_FILE, PROFILE_FILE};
use super::record::manifest::{LawChanges, Rejudged};
use super::record::{Journal, JournalEntry, Manifest, RunRecord};

/// `entry` judged with `laws`, or `None` when the judgement and the gap come out as written.
pub fn judge_again(entry: &JournalEntry, laws: &[Law], sample: &Sample) -> Option<JournalEntry> {
    let (judgement, gapped) = judge::judge_unit(laws, sample, &entry.transcript);
    if judgement == entry.judgement && gapped == entry.gapped {
        return None;
    }
    Some(JournalEntry {
        judgement,
        gapped,
        ..entry.clone()
    })
}

/// Refuses, in one line, a pack whose transcripts would differ from the run's: anything in
/// `pack.toml` but its laws, or the corpus, changed since.
pub fn check_same_transcripts(earlier: &Manifest, pack: &Pack) -> anyhow::Result<()> {
    let run = &earlier.run_id;
    let corpus_path = corpus_of(earlier, pack);
    let corpus = file_sha256(&corpus_path)
        .map_err(|e| anyhow!("{}: cannot read: {e}", corpus_path.display()))?;
    if corpus != earlier.corpus_sha256 {
        bail!(
            "{}: the corpus changed since run {run}: judging its transcripts again needs the samples they answered; run the pack again",
            corpus_path.display()
        );
    }
    match earlier.inputs.as_ref().and_then(|i| i.pack_without_laws.as_ref()) {
        Some(digest) if *digest == pack.without_laws_sha256 => Ok(()),
        Some(_) => bail!(
            "{}: more than its laws changed since run {run} (tools, skill, budgets, instructions or examples shape the transcripts); run the pack again",
            pack.file.display()
        ),
        None => bail!(
            "run {run}: its manifest predates the digest of pack.toml less its laws, so a change beyond the laws cannot be ruled out; run the pack again"
        ),
    }
}

/// The corpus the run read (`--corpus` may have named another than the pack's), where it still is.
fn corpus_of(earlier: &Manifest, pack: &Pack) -> PathBuf {
    let named = PathBuf::from(&earlier.corpus);
    if named.is_file() {
        named
    } else {
        pack.corpus_path.clone()
    }
}

/// Judges every entry of `record` again with `pack`'s laws into a new run folder under
/// `output_root`, and returns that folder's record.
pub fn rejudge_run(
    record: &RunRecord,
    pack: &Pack,
    output_root: &Path,
) -> anyhow::Result<RunRecord> {
    check_same_transcripts(&record.manifest, pack)?;
    let corpus_path = corpus_of(&record.manifest, pack);
    let samples: BTreeMap<String, Sample> = pack
        .corpus(Some(&corpus_path))?
        .into_iter()
        .map(|s| (s.id.clone(), s))
        .collect();
    let mut changed = 0;
    let mut entries = Vec::with_capacity(record.entries.len());
    for entry in &record.entries {
        let sample = samples.get(&entry.sample_id).ok_or_else(|| {
            anyhow!(
                "{}: sample {} of run {} is not in the corpus",
                corpus_path.display(),
                entry.sample_id,
                record.manifest.run_id
            )
        })?;
        match judge_again(entry, &pack.laws, sample) {
            Some(again) => {
                changed += 1;
                entries.push(again);
            }
            None => entries.push(entry.clone()),
        }
    }
    let then = record.manifest.inputs.as_ref().map(|i| &i.laws);
    let laws = then
        .filter(|laws| !laws.is_empty())
        .map(|then| LawChanges::between(then, &pack.law_digests_by_name()));
    let id = crate::exec::run_id::unused_run_id(
        output_root,
        &format!("{}-rejudged", record.manifest.run_id),
    );
    let dir: PathBuf = output_root.join(&id);
    std::fs::create_dir_all(&dir).map_err(|e| anyhow!("{}: cannot create: {e}", dir.display()))?;
    let mut manifest = record.manifest.clone();
    manifest.run_id = id;
    manifest.purpose_laws = pack
        .laws
        .iter()
        .filter(|l| l.purpose)
        .map(|l| l.name.clone())
        .collect();
    manifest.law_tools = crate::eval::report::pinned::law_tools(&pack.laws);
    manifest.rejudged = Some(Rejudged {
        from: record.manifest.run_id.clone(),
        laws,
        units_changed: changed,
    });
    if let Some(inputs) = manifest.inputs.as_mut() {
        inputs.pack = file_sha256(&pack.file)
            .map_err(|e| anyhow!("{}: cannot read: {e}", pack.file.display()))?;
        inputs.laws = pack
            .laws
            .iter()
            .zip(&pack.law_digests)
            .map(|(law, digest)| (law.name.clone(), digest.clone()))
            .collect();
    }
    folder::write_json(&dir.join(MANIFEST_FILE), &manifest)?;
    let mut journal = Journal::open(&dir.join(JOURNAL_FILE))?;
    for entry in &entries {
        journal.append(entry)?;
    }
    // The time the transcripts took is the earlier run's: its profile comes along.
    if let Some(profile) = &record.profile {
        folder::write_json(&dir.join(PROFILE_FILE), profile)?;
    }
    Ok(RunRecord {
        dir,
        manifest,
        entries,
        ..record.clone()
    })
}
