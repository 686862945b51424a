//! A pack: `packs/<name>/pack.toml` names the skill under test, its baseline skills tree, the
//! corpus, the tools with their fixture routes (`tools.rs`), the judge's laws and the
//! categories. `parse.rs` reads and checks the file; `source.rs` finds it (a path, a name, a
//! shipped pack, the pack a run recorded); `scripts.rs` adds the skills' own scripts as tools.

mod parse;
pub mod scripts;
pub mod source;
mod tools;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use sha2::{Digest, Sha256};

use crate::eval::arm::ControlPart;
use crate::eval::corpus::{load_corpus, Sample};
use crate::eval::digest::{file_sha256, tree_digest};
use crate::eval::fixture_store::Route;
use crate::eval::judge::Law;
use crate::eval::record::manifest::InputHashes;
use crate::harness::agent::Budgets;
use crate::harness::backend::Sampling;
use crate::harness::examples::Presentation;
use crate::harness::skills::SkillTree;
use crate::harness::spill::LongOutput;
use crate::harness::template::{Family, Message};
use crate::harness::toolcall::CallFormat;
use parse::at_line;
pub use tools::ToolSpec;

#[derive(Debug, Clone)]
pub struct Pack {
    pub name: String,
    pub description: String,
    pub dir: PathBuf,
    pub file: PathBuf,
    pub skill: String,
    pub skills_dir: PathBuf,
    pub corpus_path: PathBuf,
    pub categories: Vec<String>,
    pub instructions: String,
    pub preload: bool,
    pub call_format: Option<CallFormat>,
    /// Overrides the model family's chat format (`transcript` for base models).
    pub chat_format: Option<Family>,
    /// A call the model opens is held to the tools offered in that round, their parameters and
    /// the values their schemas allow (`harness::toolcall::grammar`).
    pub constrained_calls: bool,
    /// How the skills' `example` blocks reach the model: as earlier turns, or as text.
    pub skill_examples: Presentation,
    /// What a tool result longer than `budgets.tool_output_chars` becomes: cut, or spilled to a
    /// file the model reads on with `read_tool_output`.
    pub long_tool_output: LongOutput,
    /// What the control arm removes from the skill under test.
    pub control: ControlPart,
    pub sampling: Sampling,
    pub budgets: Budgets,
    /// Few-shot turns placed before every sample's conversation.
    pub examples: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub laws: Vec<Law>,
    /// The line of each law's `[[laws]]` header in `pack.toml`, where known.
    pub law_lines: Vec<Option<usize>>,
    /// SHA-256 of each law's table, in law order: what says a law was edited.
    pub law_digests: Vec<String>,
    /// SHA-256 of `pack.toml` less its laws: everything in it that shapes a transcript. Runs
    /// that differ only in laws have the same transcripts and are judged again, not run again.
    pub without_laws_sha256: String,
}

impl Pack {
    /// Where `--pack` leads: [`source::locate`].
    pub fn locate(name_or_path: &str) -> anyhow::Result<PathBuf> {
        source::locate(name_or_path)
    }

    pub fn load(name_or_path: &str) -> anyhow::Result<Pack> {
        let file = Self::locate(name_or_path)?;
        let bytes = crate::base::input::read_input(&file).map_err(|e| {
            anyhow!(
                "{}: cannot read pack: {e} (a pack is a folder holding pack.toml, or one of the shipped packs: {})",
                file.display(),
                source::shipped_names().join(", ")
            )
        })?;
        let text = crate::base::input::utf8_text(bytes).map_err(|e| anyhow!(e.at(&file)))?;
        Self::parse(&text, &file)
    }

    /// The line of `key = …` before any table of `pack.toml`, as the file reads now: where a
    /// plan says a pack names its skill.
    pub fn key_line(&self, key: &str) -> Option<usize> {
        let text = crate::base::input::read_input_to_string(&self.file).ok()?;
        parse::key_line(&text, None, key)
    }

    /// The baseline skills tree (the pack's own, or another folder), checked to hold the skill under test.
    pub fn skills(&self, override_dir: Option<&Path>) -> anyhow::Result<SkillTree> {
        let dir = override_dir.unwrap_or(&self.skills_dir);
        let tree = SkillTree::load(dir)?;
        if tree.get(&self.skill).is_none() {
            bail!(
                "{}: field `skill`: {:?} is not in the skills tree {} (it has: {})",
                self.file.display(),
                self.skill,
                dir.display(),
                tree.names().join(", ")
            );
        }
        Ok(tree)
    }

    /// Loads a corpus (the pack's own or another of the same shape) and checks its categories.
    pub fn corpus(&self, override_path: Option<&Path>) -> anyhow::Result<Vec<Sample>> {
        let path = override_path.unwrap_or(&self.corpus_path);
        let samples = load_corpus(path)?;
        if override_path.is_none() {
            self.check_scope_fields(&samples, path)?;
        }
        for s in &samples {
            if !self.categories.iter().any(|c| c == &s.category) {
                bail!(
                    "{}:{}: field `category`: {:?} (sample {:?}) is not declared in {} (it declares: {})",
                    path.display(),
                    s.line,
                    s.category,
                    s.id,
                    self.file.display(),
                    self.categories.join(", ")
                );
            }
        }
        Ok(samples)
    }

    /// A law whose `when_field` no sample of the pack's own corpus has would never apply, so
    /// it could never fail. (Another corpus given with `--corpus` may cover only some
    /// categories, so it is not held to this.)
    fn check_scope_fields(&self, samples: &[Sample], path: &Path) -> anyhow::Result<()> {
        for (i, law) in self.laws.iter().enumerate() {
            let Some(field) = &law.when_field else {
                continue;
            };
            let present = samples
                .iter()
                .any(|s| s.fields.get(field).is_some_and(|v| !v.is_null()));
            if !present {
                let at = at_line(&self.file.display(), self.law_lines[i].as_ref());
                bail!(
                    "{at}: field `laws[{i}].when_field`: law `{}`: no sample of {} has field `{field}`, so the law never applies and can never fail",
                    law.name,
                    path.display()
                );
            }
        }
        Ok(())
    }

    pub fn routes(&self) -> Vec<Route> {
        self.tools
            .iter()
            .filter_map(|t| {
                Some(Route {
                    tool: t.name.clone(),
                    dir: t.fixtures.clone()?,
                    key_arguments: t.key_arguments.clone(),
                    folds: t.folds.clone(),
                    arguments: t
                        .schema()
                        .as_ref()
                        .and_then(|s| s.get("properties"))
                        .and_then(serde_json::Value::as_object)
                        .map(|p| p.keys().cloned().collect())
                        .unwrap_or_default(),
                })
            })
            .collect()
    }

    /// Each law's digest by its name, as a manifest keeps them.
    pub fn law_digests_by_name(&self) -> BTreeMap<String, String> {
        self.laws
            .iter()
            .zip(&self.law_digests)
            .map(|(law, digest)| (law.name.clone(), digest.clone()))
            .collect()
    }

    /// SHA-256 of every file a run under this pack reads, for its manifest: `pack.toml`, the
    /// skills tree at `skills_dir`, the variants, the corpus and the tools' fixtures.
    pub fn input_hashes(
        &self,
        skills_dir: &Path,
        variants: &[PathBuf],
        corpus: &Path,
    ) -> anyhow::Result<InputHashes> {
        let file = |path: &Path| {
            file_sha256(path).map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))
        };
        let mut fixtures = Sha256::new();
        let dirs: BTreeSet<PathBuf> = self
            .tools
            .iter()
            .filter_map(|t| t.fixtures.clone())
            .collect();
        for dir in &dirs {
            fixtures.update(dir.display().to_string().as_bytes());
            fixtures.update([0]);
            if dir.is_dir() {
                tree_digest(dir, dir, &mut fixtures)?;
            }
        }
        let mut skills = Sha256::new();
        tree_digest(skills_dir, skills_dir, &mut skills)?;
        Ok(InputHashes {
            pack: file(&self.file)?,
            skills: format!("{:x}", skills.finalize()),
            variant: variants.first().map(|p| file(p)).transpose()?,
            more_variants: variants
                .iter()
                .skip(1)
                .map(|p| file(p))
                .collect::<anyhow::Result<_>>()?,
            corpus: file(corpus)?,
            fixtures: format!("{:x}", fixtures.finalize()),
            pack_without_laws: Some(self.without_laws_sha256.clone()),
            laws: self.law_digests_by_name(),
            script_tools: self.script_tools_digest(),
        })
    }

    /// SHA-256 of what the model reads of each Python script's tool (name, description,
    /// schema), as read when the pack loaded; none when no skill carries one.
    pub fn script_tools_digest(&self) -> Option<String> {
        let read: Vec<serde_json::Value> = self
            .tools
            .iter()
            .filter(|t| t.script.is_some())
            .map(|t| serde_json::json!([t.name, t.description, t.parameters]))
            .collect();
        (!read.is_empty()).then(|| {
            crate::eval::digest::sha256_hex(serde_json::Value::Array(read).to_string().as_bytes())
        })
    }
}

/// A pack's name becomes part of run folder names: letters, digits, `-` and `_` only, so that
/// it can never reach outside the output folder.
pub fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(format!(
            "{name:?} is not a valid pack name: use ASCII letters, digits, `-` and `_` only"
        ));
    }
    // A run folder is named `<date>-<time>-<pack>[-N]`, and a file name holds 255 bytes.
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "a pack name of {} characters is not a valid pack name: at most {MAX_NAME_LEN}, since it names run folders",
            name.len()
        ));
    }
    Ok(())
}

/// The longest pack name: room for the run folder's date, time and counter in 255 bytes.
pub const MAX_NAME_LEN: usize = 200;

/// Sampling settings the sampler can honour as given: it would otherwise clamp them silently
/// (or, for a temperature that is not a number, break the manifest). Errors name the key.
pub fn check_sampling(s: &Sampling) -> Result<(), (&'static str, String)> {
    if !s.temperature.is_finite() || s.temperature < 0.0 {
        return Err((
            "temperature",
            format!("{} must be a number from 0 (greedy) up", s.temperature),
        ));
    }
    if s.top_k < 1 {
        return Err(("top_k", format!("{} must be at least 1", s.top_k)));
    }
    if !(s.top_p > 0.0 && s.top_p <= 1.0) {
        return Err((
            "top_p",
            format!("{} must be above 0 and at most 1", s.top_p),
        ));
    }
    Ok(())
}

/// Checks `--temperature`, `--top-k` and `--top-p` as [`check_sampling`] checks the pack's.
pub fn check_sampling_flags(
    temperature: Option<f32>,
    top_k: Option<i32>,
    top_p: Option<f32>,
) -> anyhow::Result<()> {
    let fine = Sampling::default();
    let flags = Sampling {
        temperature: temperature.unwrap_or(fine.temperature),
        top_k: top_k.unwrap_or(fine.top_k),
        top_p: top_p.unwrap_or(fine.top_p),
        ..fine
    };
    check_sampling(&flags).map_err(|(key, e)| anyhow!("--{}: {e}", key.replace('_', "-")))
}
