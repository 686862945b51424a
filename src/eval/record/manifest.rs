//! `manifest.json`: everything that enters the promise "same inputs, same transcripts", its
//! one reader, and the check that a resumed run still has the same inputs (the manifest itself
//! stays as the run began, but for a sequential run's looks).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{anyhow, bail};

use serde::{Deserialize, Serialize};

use super::looks::SequentialRecord;
use super::plan_shape::PlanShape;
use crate::eval::arm::{self, ControlPart};
use crate::eval::shard::ShardRecord;
use crate::harness::agent::Budgets;
use crate::harness::backend::{BackendInfo, Sampling};
use crate::harness::examples::Presentation;
use crate::harness::spill::LongOutput;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub run_id: String,
    pub skilleval_version: String,
    pub llama_cpp_2_version: String,
    pub backend: BackendInfo,
    pub model_sha256: Option<String>,
    pub pack: String,
    /// The run's `pack.toml`, as an absolute path: what `report --rejudge` and `fixtures` load
    /// when no `--pack` is given. Absent in manifests older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack_file: Option<String>,
    pub skill: String,
    pub skills_dir: String,
    pub skills_git_revision: Option<String>,
    /// The first variant's file, none for an A/A run; the others are in `more_variants`
    /// ([`Manifest::variant_paths`] gives them as one list).
    pub variant: Option<String>,
    pub baseline_body_sha256: String,
    pub variant_body_sha256: String,
    /// The second and further variants of a run that compares several (arms `variant2`…).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_variants: Vec<VariantRecord>,
    /// Whether the control arm (the skill with an empty body, or without its description) ran.
    #[serde(default)]
    pub control: bool,
    /// What the control arm removed from the skill (the pack's `control`).
    #[serde(default, skip_serializing_if = "ControlPart::is_body")]
    pub control_removes: ControlPart,
    /// SHA-256 of the control arm's skill body (of the empty text) when it ran.
    #[serde(default)]
    pub control_body_sha256: Option<String>,
    pub corpus: String,
    /// `corpus` as an absolute path, for reading the prompts from another folder. Absent in
    /// manifests older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus_file: Option<String>,
    pub corpus_sha256: String,
    pub samples: usize,
    pub repeats: u32,
    pub run_seed: u64,
    pub sampling: Sampling,
    pub budgets: Budgets,
    pub call_format: String,
    /// How the skills' `example` blocks were shown (the pack's `skill_examples`); runs older
    /// than the choice showed them as turns.
    #[serde(default)]
    pub skill_examples: Presentation,
    /// What a long tool result became (the pack's `long_tool_output`); runs older than the
    /// choice cut it.
    #[serde(default)]
    pub long_tool_output: LongOutput,
    pub record: String,
    /// Units run at once. Above 1, sequences share decode batches: a run replays exactly at the
    /// same value, but its results differ in the last bits from another value's
    /// (docs/throughput.md); the batch settings are in `backend`.
    #[serde(default = "one")]
    pub parallel: usize,
    pub started_unix: u64,
    /// Hashes of every input file, checked by `--resume`; none in manifests older than them.
    #[serde(default)]
    pub inputs: Option<InputHashes>,
    /// The slice of the plan this process ran (`--shard I/N`); absent for a whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
    /// The shard runs a `merge` put together, in shard order; empty for a run of one process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    /// The earlier run whose baseline (and control) entries this run copied instead of running
    /// them again (`--baseline-from`, or the cache of earlier runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_from: Option<String>,
    /// Copied baseline (and control) units whose judgement this run's laws changed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub baseline_rejudged: usize,
    /// Set in a folder `skilleval report --rejudge` wrote: the run whose transcripts it judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejudged: Option<Rejudged>,
    /// A sequential run's plan and looks (`run --sequential`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<SequentialRecord>,
    /// The laws the pack marks as the skill's purpose (`purpose = true`), which lead each
    /// wording's headline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub purpose_laws: Vec<String>,
    /// The tool each law that names one reads, so that a law that held nowhere can be traced
    /// to the calls it needed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub law_tools: BTreeMap<String, String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One further variant of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantRecord {
    pub path: String,
    pub body_sha256: String,
}

/// SHA-256 of every file that enters a run: a resumed run must find them unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputHashes {
    /// `pack.toml`, whole: laws, tools, budgets, examples, instructions.
    pub pack: String,
    /// Every file of the baseline skills tree, by its path in the tree.
    pub skills: String,
    pub variant: Option<String>,
    /// The further variants' files, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_variants: Vec<String>,
    pub corpus: String,
    /// Every fixture file of every tool, by folder and name.
    pub fixtures: String,
    /// `pack.toml` less its laws (`Pack::without_laws_sha256`): equal, the transcripts are too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack_without_laws: Option<String>,
    /// Each law's digest by its name, for saying which laws a later pack changed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub laws: BTreeMap<String, String>,
    /// What the model reads of the skills' Python scripts: each one's name, description (its
    /// help, as this Python prints it) and schema. None when the skills carry no script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_tools: Option<String>,
}

fn one() -> usize {
    1
}

impl Manifest {
    /// The body digest of the run's `index`-th variant (from 0), if it has that many.
    pub fn variant_body(&self, index: usize) -> Option<&str> {
        match index {
            0 => Some(&self.variant_body_sha256),
            i => self
                .more_variants
                .get(i - 1)
                .map(|v| v.body_sha256.as_str()),
        }
    }

    /// Every variant's file as the run named it, in order (none for an A/A run): the manifest
    /// keeps the first in `variant` and the others in `more_variants`.
    pub fn variant_paths(&self) -> Vec<&str> {
        self.variant
            .iter()
            .chain(self.more_variants.iter().map(|v| &v.path))
            .map(String::as_str)
            .collect()
    }

    /// How the report names each variant, in order: its file name.
    pub fn variant_labels(&self) -> Vec<String> {
        self.variant_paths()
            .into_iter()
            .map(|p| variant_label(Path::new(p)))
            .collect()
    }

    /// The plan this manifest records, to check journal lines against; `sample_ids` from its
    /// corpus when that is at hand.
    pub fn plan_shape(&self, sample_ids: Option<BTreeSet<String>>) -> PlanShape {
        PlanShape {
            run_seed: self.run_seed,
            arms: arm::in_plan_order(self.control, self.variant_count()),
            aa: self.variant.is_none(),
            sample_ids,
        }
    }

    /// How many variants the run compared (one for an A/A run).
    pub fn variant_count(&self) -> usize {
        1 + self.more_variants.len()
    }

    /// Inputs that differ between a run and the run it resumes. Any difference would mix two
    /// experiments in one journal; the run size (samples, repeats) may change, since units
    /// are keyed by sample and repeat.
    pub fn resume_conflicts(&self, earlier: &Manifest) -> Vec<&'static str> {
        let (now, then) = (self.inputs.as_ref(), earlier.inputs.as_ref());
        let input = |f: fn(&InputHashes) -> Option<&String>| match (now, then) {
            (Some(a), Some(b)) => f(a) == f(b),
            _ => true, // An old manifest: reported once, below.
        };
        let checks = [
            (
                "inputs (the manifest predates input hashes)",
                then.is_some(),
            ),
            ("pack.toml", input(|h| Some(&h.pack))),
            ("the skills tree", input(|h| Some(&h.skills))),
            ("the variant", input(|h| h.variant.as_ref())),
            (
                "the further variants",
                match (now, then) {
                    (Some(a), Some(b)) => a.more_variants == b.more_variants,
                    _ => true,
                },
            ),
            ("more_variants", self.more_variants == earlier.more_variants),
            ("the corpus", input(|h| Some(&h.corpus))),
            // A recording run writes its own fixtures as it goes: they may differ on resume.
            (
                "the fixtures",
                self.record != "Off" || input(|h| Some(&h.fixtures)),
            ),
            ("parallel", self.parallel == earlier.parallel),
            ("shard", self.shard == earlier.shard),
            // The spending too: the looks of a run begun under another would not be its own.
            (
                "sequential",
                self.sequential.as_ref().map(|s| s.spending)
                    == earlier.sequential.as_ref().map(|s| s.spending),
            ),
            ("control", self.control == earlier.control),
            (
                "control_removes",
                self.control_removes == earlier.control_removes,
            ),
            ("record", self.record == earlier.record),
            ("pack", self.pack == earlier.pack),
            ("skill", self.skill == earlier.skill),
            (
                "baseline_body_sha256",
                self.baseline_body_sha256 == earlier.baseline_body_sha256,
            ),
            (
                "variant_body_sha256",
                self.variant_body_sha256 == earlier.variant_body_sha256,
            ),
            ("corpus_sha256", self.corpus_sha256 == earlier.corpus_sha256),
            ("model_sha256", self.model_sha256 == earlier.model_sha256),
            (
                "backend",
                self.backend.name == earlier.backend.name
                    && self.backend.model_name == earlier.backend.model_name,
            ),
            ("run_seed", self.run_seed == earlier.run_seed),
            ("sampling", self.sampling == earlier.sampling),
            ("budgets", self.budgets == earlier.budgets),
            ("call_format", self.call_format == earlier.call_format),
        ];
        checks
            .into_iter()
            .filter(|(_, same)| !same)
            .map(|(field, _)| field)
            .collect()
    }
}

/// How a run's report names a variant: its file name.
pub fn variant_label(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Reads the manifest at `path`, naming the file when it cannot be read or is not a manifest.
pub fn read(path: &Path) -> anyhow::Result<Manifest> {
    let text = crate::base::input::read_input_to_string(path)
        .map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
    parse(path, &text)
}

fn parse(path: &Path, text: &str) -> anyhow::Result<Manifest> {
    serde_json::from_str(text).map_err(|e| anyhow!("{}: not a manifest: {e}", path.display()))
}

/// Writes a new run's manifest; for a resumed run, checks the earlier one instead and leaves it
/// as it is, refusing when any input differs.
pub fn write_or_check(path: &Path, manifest: &Manifest, resume: bool) -> anyhow::Result<()> {
    if !resume {
        return super::folder::write_json(path, manifest);
    }
    let text = crate::base::input::read_input_to_string(path).map_err(|e| {
        anyhow!(
            "--resume {}: {}: {e}; without it the inputs cannot be checked",
            manifest.run_id,
            path.display()
        )
    })?;
    let earlier = parse(path, &text)?;
    let conflicts = manifest.resume_conflicts(&earlier);
    if !conflicts.is_empty() {
        bail!(
            "--resume {}: {}: changed since the run began: {}; start a new run instead",
            manifest.run_id,
            path.display(),
            conflicts.join(", ")
        );
    }
    Ok(())
}

/// Writes a sequential run's looks into the manifest at `path`, leaving the rest as the run
/// began it (a resumed run keeps its first manifest). Written beside and renamed over, so that
/// an interrupted write leaves the last whole one.
pub fn record_looks(path: &Path, record: &SequentialRecord) -> anyhow::Result<()> {
    let mut manifest = read(path)?;
    manifest.sequential = Some(record.clone());
    let partial = path.with_extension("json.partial");
    std::fs::write(&partial, serde_json::to_string_pretty(&manifest)? + "\n")
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))
}

/// What a run folder written by `--rejudge` keeps of where its judgements come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejudged {
    /// The run whose transcripts were judged again.
    pub from: String,
    /// The laws that differ from that run's, when its manifest names them.
    pub laws: Option<LawChanges>,
    /// Units whose judgement (pass, failed laws, gap) changed.
    pub units_changed: usize,
}

/// How a pack's laws differ from those a run was judged with, by law name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LawChanges {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edited: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
}

impl LawChanges {
    /// `then` against `now`, each law name → digest, as a manifest keeps them
    /// (`Pack::law_digests_by_name` for a pack's laws now).
    pub fn between(then: &BTreeMap<String, String>, now: &BTreeMap<String, String>) -> LawChanges {
        LawChanges {
            added: now
                .keys()
                .filter(|name| !then.contains_key(*name))
                .cloned()
                .collect(),
            edited: now
                .iter()
                .filter(|(name, digest)| then.get(*name).is_some_and(|d| d != *digest))
                .map(|(name, _)| name.clone())
                .collect(),
            removed: then
                .keys()
                .filter(|name| !now.contains_key(*name))
                .cloned()
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.edited.is_empty() && self.removed.is_empty()
    }

    /// `added a, b; edited c; removed d`, or `none`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = [
            ("added", &self.added),
            ("edited", &self.edited),
            ("removed", &self.removed),
        ]
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(what, names)| format!("{what} {}", names.join(", ")))
        .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join("; ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(record: &str, fixtures: &str) -> Manifest {
        let text = include_str!("../../../tests/data/manifest-example.json");
        let mut manifest: Manifest = serde_json::from_str(text).expect("the example manifest");
        manifest.record = record.to_string();
        manifest.inputs.as_mut().expect("input hashes").fixtures = fixtures.to_string();
        manifest
    }

    #[test]
    fn changed_fixtures_refuse_a_replay_resume_but_not_a_recording_one() {
        let conflicts = manifest("Off", "b").resume_conflicts(&manifest("Off", "a"));
        assert_eq!(conflicts, vec!["the fixtures"]);
        assert!(manifest("Gaps", "b")
            .resume_conflicts(&manifest("Gaps", "a"))
            .is_empty());
        assert!(manifest("Off", "a")
            .resume_conflicts(&manifest("Off", "a"))
            .is_empty());
    }
}
