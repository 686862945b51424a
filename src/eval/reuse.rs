//! Reusing a baseline: the baseline (and control) arms of an earlier run whose every input
//! that enters those arms is the same are copied from its journal instead of being run again.
//! A run that tries one wording after another then pays for its baseline once.
//!
//! What must match is [`BaselineKey`]: the model (sha256, its own chat template's when that
//! rendered the prompts, and the backend's name, model and batch settings), the CPU features llama.cpp computes with, the build (skilleval's and the
//! llama.cpp binding's versions), the pack file less its laws, the baseline skills tree and the skill's body, the corpus, the fixtures, the seed, the
//! sampling, the budgets, the call format and `--parallel`. Neither run may record. Each copied
//! entry must also carry the seed the new run's plan gives its unit. An entry is copied as the
//! earlier journal wrote it, byte for byte, unless the pack's laws changed: laws only judge a
//! transcript, so a copied transcript is judged again with the new laws (decision 016).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use serde::Serialize;

use super::plan::Unit;
use super::record::folder::{self, JOURNAL_FILE, MANIFEST_FILE};
use super::record::manifest::{InputHashes, Manifest};
use super::record::{manifest, JournalEntry};
use crate::eval::arm::Arm;
use crate::harness::agent::Budgets;
use crate::harness::backend::Sampling;
use crate::harness::examples::Presentation;
use crate::harness::spill::LongOutput;

/// Where the baseline of a new run may come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum BaselineSource {
    /// The newest matching run under the output folder, if any (the default).
    #[default]
    Cache,
    /// This run, which must match (`--baseline-from RUN_ID`).
    Run(String),
    /// Always run the baseline (`--no-cache`).
    Off,
}

/// Everything that enters a run's baseline and control arms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineKey {
    pub skilleval_version: String,
    pub llama_cpp_2_version: String,
    pub backend: String,
    pub backend_model: Option<String>,
    pub backend_n_ctx: u32,
    pub backend_sequences: u32,
    pub backend_n_batch: u32,
    pub endpoint: Option<String>,
    pub server_prompt_cache: Option<bool>,
    pub cpu_features: Option<String>,
    pub model_sha256: Option<String>,
    /// The model's own chat template, by its hash, when it rendered the prompts.
    pub chat_template_sha256: Option<String>,
    pub pack: String,
    pub skill: String,
    pub pack_without_laws_sha256: Option<String>,
    pub skills_tree_sha256: Option<String>,
    pub baseline_body_sha256: String,
    pub corpus_sha256: String,
    pub fixtures_sha256: Option<String>,
    /// What the model reads of the skills' scripts, which the Python that reads them may change.
    pub script_tools_sha256: Option<String>,
    pub run_seed: u64,
    pub sampling: Sampling,
    pub budgets: Budgets,
    pub call_format: String,
    /// Not in `pack.toml`'s digest when left at its default, which a later version may change.
    pub skill_examples: Presentation,
    pub long_tool_output: LongOutput,
    pub parallel: usize,
    pub record: String,
}

impl BaselineKey {
    pub fn of(manifest: &Manifest) -> BaselineKey {
        let inputs: Option<&InputHashes> = manifest.inputs.as_ref();
        BaselineKey {
            skilleval_version: manifest.skilleval_version.clone(),
            llama_cpp_2_version: manifest.llama_cpp_2_version.clone(),
            backend: manifest.backend.name.clone(),
            backend_model: manifest.backend.model_name.clone(),
            backend_n_ctx: manifest.backend.n_ctx,
            backend_sequences: manifest.backend.sequences,
            backend_n_batch: manifest.backend.n_batch,
            endpoint: manifest.backend.endpoint.clone(),
            server_prompt_cache: manifest.backend.server_prompt_cache,
            cpu_features: manifest.backend.cpu_features.clone(),
            model_sha256: manifest.model_sha256.clone(),
            chat_template_sha256: manifest
                .backend
                .chat_template
                .as_ref()
                .map(|t| t.sha256.clone()),
            pack: manifest.pack.clone(),
            skill: manifest.skill.clone(),
            pack_without_laws_sha256: inputs.and_then(|i| i.pack_without_laws.clone()),
            skills_tree_sha256: inputs.map(|i| i.skills.clone()),
            baseline_body_sha256: manifest.baseline_body_sha256.clone(),
            corpus_sha256: manifest.corpus_sha256.clone(),
            fixtures_sha256: inputs.map(|i| i.fixtures.clone()),
            script_tools_sha256: inputs.and_then(|i| i.script_tools.clone()),
            run_seed: manifest.run_seed,
            sampling: manifest.sampling,
            budgets: manifest.budgets,
            call_format: manifest.call_format.clone(),
            skill_examples: manifest.skill_examples,
            long_tool_output: manifest.long_tool_output,
            parallel: manifest.parallel,
            record: manifest.record.clone(),
        }
    }

    /// The fields in which `self` and `other` differ, by name; also why either cannot be
    /// reused at all (a recording run, a manifest without input hashes).
    pub fn differences(&self, other: &BaselineKey) -> Vec<String> {
        let mine = serde_json::to_value(self).expect("a key serializes");
        let theirs = serde_json::to_value(other).expect("a key serializes");
        let mut out: Vec<String> = mine
            .as_object()
            .expect("a key is an object")
            .iter()
            .filter(|(field, value)| theirs.get(field.as_str()) != Some(value))
            .map(|(field, _)| field.clone())
            .collect();
        for key in [self, other] {
            if key.record != "Off" && !out.iter().any(|f| f == "record") {
                out.push("record (a recording run's answers may change as it goes)".into());
            }
            if key.pack_without_laws_sha256.is_none()
                && !out.iter().any(|f| f.starts_with("inputs"))
            {
                out.push("inputs (the manifest predates the hashes a reuse compares)".into());
            }
        }
        out
    }
}

/// The earlier run a new run takes its baseline from: its id, its folder, and the arms taken.
#[derive(Debug, Clone)]
pub struct Reuse {
    pub run_id: String,
    pub dir: PathBuf,
    pub arms: Vec<Arm>,
}

impl Reuse {
    /// `earlier` (in `dir`) as a source for `manifest`'s run: its baseline, and its control
    /// when both ran one.
    fn of(manifest: &Manifest, earlier: &Manifest, dir: PathBuf) -> Reuse {
        let mut arms = vec![Arm::Baseline];
        if manifest.control && earlier.control {
            arms.insert(0, Arm::Control);
        }
        Reuse {
            run_id: earlier.run_id.clone(),
            arms,
            dir,
        }
    }
}

/// A reused baseline: the run it comes from, and the earlier journal's lines for the units it
/// covers, each parsed with its line as written.
pub struct Taken {
    pub reuse: Reuse,
    pub entries: Vec<(JournalEntry, String)>,
}

/// Finds the run to reuse for `manifest` (a new run's) under `output_root`, as `source` asks,
/// and the entries it holds for `units`. `--baseline-from` names a run that must match (an
/// error says in what it differs) and hold some of them; the cache takes, of the runs that
/// match, the one holding the most (the newest of equals), and none when none holds any, as a
/// run that was cut short before its first unit holds nothing to reuse.
pub fn take(
    output_root: &Path,
    manifest: &Manifest,
    source: &BaselineSource,
    units: &[Unit],
    sample_of: &dyn Fn(usize) -> (String, String),
) -> anyhow::Result<Option<Taken>> {
    let key = BaselineKey::of(manifest);
    match source {
        BaselineSource::Off => Ok(None),
        BaselineSource::Run(run) => {
            let dir = folder::find(run, output_root)?;
            let earlier = read_manifest(&dir)?;
            let differences = key.differences(&BaselineKey::of(&earlier));
            if !differences.is_empty() {
                bail!(
                    "--baseline-from {run}: its baseline was run with other inputs: {}; run without --baseline-from to compute it",
                    differences.join(", ")
                );
            }
            let reuse = Reuse::of(manifest, &earlier, dir);
            let entries = entries_for(&reuse, units, sample_of)?;
            if entries.is_empty() {
                bail!(
                    "--baseline-from {run}: its journal holds none of this run's baseline units (was it cut short, or run on other samples?)"
                );
            }
            Ok(Some(Taken { reuse, entries }))
        }
        BaselineSource::Cache => {
            let Ok(folders) = std::fs::read_dir(output_root) else {
                return Ok(None);
            };
            let mut best: Option<((usize, u64, String), Taken)> = None;
            for folder in folders.flatten() {
                let dir = folder.path();
                if dir.file_name().and_then(|n| n.to_str()) == Some(manifest.run_id.as_str()) {
                    continue;
                }
                let Ok(earlier) = read_manifest(&dir) else {
                    continue;
                };
                if !key.differences(&BaselineKey::of(&earlier)).is_empty() {
                    continue;
                }
                let reuse = Reuse::of(manifest, &earlier, dir);
                // A journal that cannot be read is no candidate.
                let Ok(entries) = entries_for(&reuse, units, sample_of) else {
                    continue;
                };
                let rank = (entries.len(), earlier.started_unix, earlier.run_id.clone());
                if !entries.is_empty() && best.as_ref().is_none_or(|(r, _)| *r < rank) {
                    best = Some((rank, Taken { reuse, entries }));
                }
            }
            Ok(best.map(|(_, taken)| taken))
        }
    }
}

fn read_manifest(dir: &Path) -> anyhow::Result<Manifest> {
    manifest::read(&dir.join(MANIFEST_FILE))
}

/// The earlier journal's lines for `units` of the reused arms: each parsed entry with its line
/// as written. A unit counts only when the entry has the sample's category and the unit's
/// seed; units it lacks are left to run.
fn entries_for(
    reuse: &Reuse,
    units: &[Unit],
    sample_of: &dyn Fn(usize) -> (String, String),
) -> anyhow::Result<Vec<(JournalEntry, String)>> {
    let path = reuse.dir.join(JOURNAL_FILE);
    let bytes = crate::base::input::read_input(&path)
        .map_err(|e| anyhow!("{}: cannot read journal: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let wanted: std::collections::BTreeMap<(String, Arm, u32), (String, u32)> = units
        .iter()
        .filter(|u| reuse.arms.contains(&u.arm))
        .map(|u| {
            let (id, category) = sample_of(u.sample_index);
            ((id, u.arm, u.repeat), (category, u.seed))
        })
        .collect();
    let mut out = Vec::new();
    let mut taken = std::collections::BTreeSet::new();
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<JournalEntry>(line) else {
            continue;
        };
        let key = entry.key();
        let Some((category, seed)) = wanted.get(&key) else {
            continue;
        };
        // An errored unit says nothing of the wording: it runs again.
        let usable = entry.category == *category && entry.seed == *seed && !entry.errored;
        if usable && taken.insert(key) {
            out.push((entry, line.to_string()));
        }
    }
    Ok(out)
}
