//! Skills as folders: `SKILL.md` (YAML front matter and a markdown body) plus optional
//! `references/*.md` read only when the model asks for them. An overlay swaps one skill's
//! `SKILL.md` for a run without touching the tree on disk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context as _};
use serde::{Deserialize, Serialize};

use super::examples::{self, Exchange};

pub mod lint;

/// Front matter in the Agent Skills format (`name`, `description`, `license`, `compatibility`,
/// `metadata`, `allowed-tools`), plus skilleval's own `version`, `tags` and `tools`. Any other
/// key is kept as it was written, so that a skill made for another client still loads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillMeta {
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<BTreeMap<String, serde_yaml::Value>>,
    /// Agent Skills' space-separated list of tools the skill may use; each one it names is
    /// granted once the skill is loaded (`Bash(git:*)` names `Bash`).
    #[serde(
        default,
        rename = "allowed-tools",
        skip_serializing_if = "Option::is_none"
    )]
    pub allowed_tools: Option<serde_yaml::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Tools this skill grants once loaded (skilleval's older key; `allowed-tools` is the
    /// format's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Keys neither the format nor skilleval defines, kept as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_yaml::Value>,
}

impl Eq for SkillMeta {}

impl SkillMeta {
    /// Every tool this skill grants once loaded: `tools` and the names in `allowed-tools`.
    pub fn granted_tools(&self) -> Vec<String> {
        let mut granted = self.tools.clone();
        for entry in allowed_tool_entries(self.allowed_tools.as_ref()) {
            let name = entry.split('(').next().unwrap_or(&entry).trim().to_string();
            if !name.is_empty() && !granted.contains(&name) {
                granted.push(name);
            }
        }
        granted
    }

    /// Whether loading this skill grants `tool`.
    pub fn grants(&self, tool: &str) -> bool {
        self.granted_tools().iter().any(|t| t == tool)
    }
}

/// The entries of `allowed-tools`: the format's space-separated string, or a YAML list, which
/// some clients write.
pub fn allowed_tool_entries(value: Option<&serde_yaml::Value>) -> Vec<String> {
    match value {
        Some(serde_yaml::Value::String(text)) => {
            text.split_whitespace().map(str::to_owned).collect()
        }
        Some(serde_yaml::Value::Sequence(items)) => items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub meta: SkillMeta,
    pub body: String,
    /// Where `SKILL.md` came from (the overlay file for an overlaid skill).
    pub source: PathBuf,
    /// The skill's folder, where `references/` lives; none for a skill added by an overlay.
    pub dir: Option<PathBuf>,
}

impl Skill {
    pub fn name(&self) -> &str {
        &self.meta.name
    }

    /// The body without its worked examples: what the system text shows.
    pub fn instructions(&self) -> String {
        examples::strip(&self.body)
    }

    /// The skill's text as `presentation` shows it: without its examples when they become
    /// turns, else the body as written.
    pub fn text(&self, presentation: examples::Presentation) -> String {
        match presentation {
            examples::Presentation::Turns => self.instructions(),
            examples::Presentation::Text => self.body.trim().to_string(),
        }
    }

    /// The body's worked examples (```` ```example ```` blocks), shown as earlier turns once the
    /// skill is loaded. A body's examples are checked when it is read, so none are lost here.
    pub fn examples(&self) -> Vec<Exchange> {
        examples::parse(&self.body).unwrap_or_default()
    }

    /// Names of the reference documents, without the `.md` ending.
    pub fn reference_names(&self) -> Vec<String> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let mut names: Vec<String> = std::fs::read_dir(dir.join("references"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let p = e.path();
                (p.extension()? == "md").then(|| p.file_stem()?.to_str().map(str::to_owned))?
            })
            .collect();
        names.sort();
        names
    }

    /// Reads one reference from disk, on demand.
    pub fn reference(&self, name: &str) -> anyhow::Result<String> {
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || "-_.".contains(c));
        let dir = self.dir.as_ref().filter(|_| valid && !name.contains(".."));
        let Some(dir) = dir else {
            bail!("skill {} has no reference named {name:?}", self.name());
        };
        let stem = name.strip_suffix(".md").unwrap_or(name);
        crate::base::input::read_input_to_string(dir.join("references").join(format!("{stem}.md")))
            .map_err(|_| {
                anyhow!(
                    "skill {} has no reference named {name:?}; it has: {}",
                    self.name(),
                    self.reference_names().join(", ")
                )
            })
    }
}

/// Splits `SKILL.md` text into its front matter and body. Errors name the file and the field.
pub fn parse_skill_md(text: &str, source: &Path) -> anyhow::Result<(SkillMeta, String)> {
    let shown = source.display();
    let (yaml, body) = split_front_matter(text).map_err(|e| anyhow!("{shown}: {e}"))?;
    if yaml.lines().all(|line| {
        let line = line.trim();
        line.is_empty() || line.starts_with('#')
    }) {
        bail!("{shown}:2: front matter field `name` is missing: the front matter is empty, and the Agent Skills format requires `name` and `description`");
    }
    let meta: SkillMeta = serde_yaml::from_str(yaml).map_err(|e| {
        // The YAML starts on the file's second line, after `---`.
        let message = e.to_string();
        match e.location() {
            Some(at) => {
                let message = message
                    .rfind(" at line ")
                    .map_or(message.as_str(), |cut| &message[..cut]);
                // The commonest cause: a plain value with ": " in it, such as a description.
                let hint = if message.starts_with("mapping values are not allowed") {
                    "; a value with \": \" in it needs quotes"
                } else {
                    ""
                };
                anyhow!(
                    "{shown}:{}: front matter: {message} (column {}){hint}",
                    at.line() + 1,
                    at.column()
                )
            }
            None => anyhow!("{shown}: front matter: {message}"),
        }
    })?;
    if meta.name.trim().is_empty() {
        bail!("{shown}: front matter field `name` is empty");
    }
    if meta.description.trim().is_empty() {
        bail!("{shown}: front matter field `description` is empty");
    }
    let body = checked_body(body, source)?;
    Ok((meta, body))
}

/// `SKILL.md` text as its front matter's YAML and the body after the closing `---`.
pub fn split_front_matter(text: &str) -> Result<(&str, &str), &'static str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("no front matter (the file must start with a line `---`)")?;
    // An empty front matter closes on the line after it opens.
    let (yaml, after) = match rest.strip_prefix("---") {
        Some(after) => ("", after),
        None => {
            let end = rest
                .find("\n---")
                .ok_or("front matter is not closed by a line `---`")?;
            (&rest[..end], &rest[end + 4..])
        }
    };
    let body = after
        .trim_start_matches(['-', '\r'])
        .trim_start_matches('\n');
    Ok((yaml, body))
}

/// Whether `SKILL.md` text opens with front matter: a line `---` followed by a `key:` line or
/// by the closing `---`. A body may open with a `---` rule too, followed by anything else.
pub fn has_front_matter(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return false;
    }
    lines.next().is_some_and(|line| {
        // `---` twice: an empty front matter, refused for the fields it lacks.
        line.trim_end() == "---"
            || line.split_once(':').is_some_and(|(key, _)| {
                !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            })
    })
}

/// The largest `SKILL.md` or variant read: 8 MiB, about two million tokens, more than any
/// model's context holds. A larger file is refused when it is read (`check` and `lint` too),
/// not found out unit by unit; a smaller one that still cannot fit the context is refused by
/// `run` before the model loads.
pub const SKILL_FILE_MAX_BYTES: u64 = 8 << 20;

/// Reads a variant: UTF-8 text with something to say. An empty, blank or binary file would
/// otherwise be compared as a wording (an empty body is what the control arm measures).
pub fn read_variant(path: &Path) -> anyhow::Result<String> {
    let shown = path.display();
    let bytes = crate::base::input::read_input_limited(path, SKILL_FILE_MAX_BYTES, "a skill")
        .map_err(|e| anyhow!("{shown}: cannot read variant: {e}"))?;
    let text = crate::base::input::utf8_text(bytes).map_err(|e| anyhow!(e.at(path)))?;
    if text.contains('\0') {
        bail!("{shown}: the variant holds NUL bytes; it is not a text file");
    }
    let body = if has_front_matter(&text) {
        parse_skill_md(&text, path)?.1
    } else {
        text.trim_start_matches('\u{feff}').trim().to_string()
    };
    if body.trim().is_empty() {
        bail!("{shown}: the variant's body is empty; a wording needs some text");
    }
    Ok(text)
}

/// The body, trimmed, once its worked examples read cleanly.
fn checked_body(body: &str, source: &Path) -> anyhow::Result<String> {
    examples::parse(body).map_err(|e| anyhow!("{}: {e:#}", source.display()))?;
    Ok(body.trim().to_string())
}

/// The folders of a skills folder's entries that hold a `SKILL.md`, by name.
pub fn skill_folders(entries: std::fs::ReadDir) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && crate::base::input::is_present(&p.join("SKILL.md")))
        .collect();
    dirs.sort();
    dirs
}

/// Skills by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillTree {
    skills: BTreeMap<String, Skill>,
    pub root: Option<PathBuf>,
}

impl SkillTree {
    /// Loads every `<dir>/<skill>/SKILL.md`.
    pub fn load(root: &Path) -> anyhow::Result<Self> {
        let entries = std::fs::read_dir(root)
            .with_context(|| format!("{}: cannot read skills folder", root.display()))?;
        let mut tree = SkillTree {
            root: Some(root.to_path_buf()),
            ..Default::default()
        };
        for dir in skill_folders(entries) {
            let source = dir.join("SKILL.md");
            let bytes =
                crate::base::input::read_input_limited(&source, SKILL_FILE_MAX_BYTES, "a skill")
                    .with_context(|| format!("{}: cannot read", source.display()))?;
            let text = crate::base::input::utf8_text(bytes).map_err(|e| anyhow!(e.at(&source)))?;
            let (meta, body) = parse_skill_md(&text, &source)?;
            if tree.skills.contains_key(&meta.name) {
                bail!(
                    "{}: field `name`: skill {:?} is defined twice",
                    source.display(),
                    meta.name
                );
            }
            tree.skills.insert(
                meta.name.clone(),
                Skill {
                    meta,
                    body,
                    source,
                    dir: Some(dir),
                },
            );
        }
        if tree.skills.is_empty() {
            bail!(
                "{}: no skill folders (each needs a SKILL.md)",
                root.display()
            );
        }
        Ok(tree)
    }

    pub fn from_skills(skills: impl IntoIterator<Item = Skill>) -> Self {
        SkillTree {
            skills: skills
                .into_iter()
                .map(|s| (s.meta.name.clone(), s))
                .collect(),
            root: None,
        }
    }

    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.skills.values()
    }

    pub fn names(&self) -> Vec<String> {
        self.skills.keys().cloned().collect()
    }

    /// A copy of the tree with `target`'s description replaced by `description` (empty: the
    /// skill is offered by name alone); its body is kept. `None` when the skill is not there.
    pub fn with_description(&self, target: &str, description: &str) -> Option<SkillTree> {
        let mut tree = self.clone();
        tree.skills.get_mut(target)?.meta.description = description.to_string();
        Some(tree)
    }

    /// A copy of the tree with `target`'s `SKILL.md` replaced by `text`. Text without front
    /// matter replaces only the body; text with front matter replaces the whole file, and adds
    /// a new skill when its name is not in the tree. The tree on disk is never touched.
    pub fn with_overlay(
        &self,
        target: &str,
        text: &str,
        source: &Path,
    ) -> anyhow::Result<SkillTree> {
        let mut tree = self.clone();
        let has_front_matter = has_front_matter(text);
        let base = self.skills.get(target);
        let skill = if has_front_matter {
            let (meta, body) = parse_skill_md(text, source)?;
            let dir = self
                .skills
                .get(&meta.name)
                .or(base)
                .and_then(|s| s.dir.clone());
            Skill {
                meta,
                body,
                source: source.to_path_buf(),
                dir,
            }
        } else {
            let base = base.ok_or_else(|| {
                anyhow!(
                    "{}: overlay has no front matter and skill {target:?} is not in the tree, so there is nothing to keep",
                    source.display()
                )
            })?;
            Skill {
                body: checked_body(text.trim_start_matches('\u{feff}'), source)?,
                source: source.to_path_buf(),
                ..base.clone()
            }
        };
        if skill.meta.name != target {
            tree.skills.remove(target);
        }
        tree.skills.insert(skill.meta.name.clone(), skill);
        Ok(tree)
    }
}
