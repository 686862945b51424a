//! What a change to one file means for the model: which parts of a `SKILL.md` differ (the
//! description and body it reads, its example blocks, or front matter it never sees), and
//! whether a `pack.toml` changed only in its laws.

use std::path::Path;

use anyhow::anyhow;
use serde::Serialize;

use crate::harness::examples;
use crate::harness::skills::{has_front_matter, parse_skill_md, SkillMeta};

/// A part of a skill that a change touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillPart {
    /// `name`: the skill list and `load_skill` show it.
    Name,
    /// `description`: the skill list shows it to every prompt.
    Description,
    /// `allowed-tools` or `tools`: the tools loading the skill grants.
    GrantedTools,
    /// The body's text outside its example blocks.
    Body,
    /// The body's ```` ```example ```` blocks: earlier turns or text, both shown to the model.
    Examples,
    /// A file under `references/`, read when the model asks for it.
    Reference,
    /// Front matter the harness never shows: `version`, `tags`, `metadata`, `license`,
    /// `compatibility`, other keys, YAML comments (skilleval's stamp lines).
    UnseenFrontMatter,
}

impl SkillPart {
    /// Whether the model can read this part: a change to it needs a measurement.
    pub fn model_facing(self) -> bool {
        self != SkillPart::UnseenFrontMatter
    }

    pub fn label(self) -> &'static str {
        match self {
            SkillPart::Name => "name",
            SkillPart::Description => "description",
            SkillPart::GrantedTools => "granted tools",
            SkillPart::Body => "body",
            SkillPart::Examples => "example blocks",
            SkillPart::Reference => "a reference",
            SkillPart::UnseenFrontMatter => "front matter the model never sees",
        }
    }
}

/// A `SKILL.md` read for comparison: its front matter and the body in its two parts.
struct Read {
    meta: SkillMeta,
    instructions: String,
    examples: Vec<examples::Exchange>,
}

fn read(text: &str, shown: &Path) -> anyhow::Result<Read> {
    if !has_front_matter(text) {
        return Err(anyhow!("{}: no front matter", shown.display()));
    }
    let (meta, body) = parse_skill_md(text, shown)?;
    Ok(Read {
        instructions: examples::strip(&body),
        examples: examples::parse(&body)?,
        meta,
    })
}

/// The parts of a skill that differ between the base's `SKILL.md` and the work tree's. A
/// base file that does not read as a skill counts as wholly changed; a head file that does not
/// read is an error naming it, since every pack that loads it would refuse it too.
pub fn skill_md_parts(
    base: Option<&str>,
    head: Option<&str>,
    path: &Path,
) -> anyhow::Result<Vec<SkillPart>> {
    let head = match head {
        Some(text) => Some(read(text, path)?),
        None => None,
    };
    let base = base.and_then(|text| read(text, path).ok());
    let (Some(base), Some(head)) = (base, head) else {
        // Added or removed: every part the model reads is new or gone.
        return Ok(vec![SkillPart::Description, SkillPart::Body]);
    };
    let mut parts = Vec::new();
    if base.meta.name != head.meta.name {
        parts.push(SkillPart::Name);
    }
    if base.meta.description.trim() != head.meta.description.trim() {
        parts.push(SkillPart::Description);
    }
    if base.meta.granted_tools() != head.meta.granted_tools() {
        parts.push(SkillPart::GrantedTools);
    }
    if base.instructions != head.instructions {
        parts.push(SkillPart::Body);
    }
    if base.examples != head.examples {
        parts.push(SkillPart::Examples);
    }
    if parts.is_empty() {
        // The file differs, yet nothing the model reads does.
        parts.push(SkillPart::UnseenFrontMatter);
    }
    Ok(parts)
}

/// What changed in a `pack.toml`, as far as re-running goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PackFileChange {
    /// Only `[[laws]]`: the transcripts stand, and are judged again (`report --rejudge`).
    LawsOnly,
    /// Anything that shapes a transcript (or a new pack): a run.
    Settings,
    /// Nothing but comments and layout.
    Layout,
}

/// Compares a `pack.toml` at the base with the work tree's, as TOML values, so that comments
/// and layout do not count.
pub fn pack_file_change(
    base: Option<&str>,
    head: &str,
    path: &Path,
) -> anyhow::Result<PackFileChange> {
    let head: toml::Table =
        toml::from_str(head).map_err(|e| anyhow!("{}: {}", path.display(), e.message()))?;
    let Some(base) = base.and_then(|text| toml::from_str::<toml::Table>(text).ok()) else {
        return Ok(PackFileChange::Settings);
    };
    if base == head {
        return Ok(PackFileChange::Layout);
    }
    let without_laws = |table: &toml::Table| {
        let mut table = table.clone();
        table.remove("laws");
        table
    };
    Ok(if without_laws(&base) == without_laws(&head) {
        PackFileChange::LawsOnly
    } else {
        PackFileChange::Settings
    })
}

/// Skill folders the change moved: each `SKILL.md` the change deletes paired with one it adds
/// that declares the same skill `name`, as (the base's folder, the work tree's). A skill keeps
/// its name when its folder is renamed or moved; its wording may change too.
pub fn skill_moves(
    root: &Path,
    base: &str,
    changed: &[(super::Status, String)],
) -> anyhow::Result<Vec<(String, String)>> {
    use super::Status;
    let name_of = |text: Option<String>, path: &str| {
        text.and_then(|text| parse_skill_md(&text, Path::new(path)).ok())
            .map(|(meta, _)| meta.name)
    };
    let skill_md = |path: &str| path == "SKILL.md" || path.ends_with("/SKILL.md");
    let folder = |path: &str| path.rsplit_once('/').map_or("", |(f, _)| f).to_string();
    let mut added = Vec::new();
    for (status, path) in changed {
        if *status == Status::Added && skill_md(path) {
            let text = super::coverage::read_inside(root, path);
            if let Some(name) = name_of(text, path) {
                added.push((name, folder(path)));
            }
        }
    }
    let mut moves = Vec::new();
    for (status, path) in changed {
        if *status != Status::Deleted || !skill_md(path) {
            continue;
        }
        let Some(name) = name_of(super::git::text_at(root, base, path)?, path) else {
            continue;
        };
        if let Some(at) = added.iter().position(|(added_name, _)| *added_name == name) {
            let (_, to) = added.remove(at);
            moves.push((folder(path), to));
        }
    }
    Ok(moves)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "---\nname: notes\ndescription: Keep notes.\nversion: \"1\"\n---\nWrite notes.\n\n```example\nUser: note milk\nAssistant: Noted.\n```\n";

    fn parts(head: &str) -> Vec<SkillPart> {
        skill_md_parts(Some(BASE), Some(head), Path::new("SKILL.md")).unwrap()
    }

    /// A change: a version bump and a stamp comment touch nothing the model reads.
    #[test]
    fn version_and_comments_are_unseen() {
        let head = BASE.replace("version: \"1\"", "version: \"2\"\n# skilleval: total 80%");
        assert_eq!(parts(&head), vec![SkillPart::UnseenFrontMatter]);
    }

    /// A change: the description, the body and an example block are each told apart.
    #[test]
    fn model_facing_parts_are_told_apart() {
        assert_eq!(
            parts(&BASE.replace("Keep notes.", "Keep short notes.")),
            vec![SkillPart::Description]
        );
        assert_eq!(
            parts(&BASE.replace("Write notes.", "Write notes briefly.")),
            vec![SkillPart::Body]
        );
        assert_eq!(
            parts(&BASE.replace("Noted.", "Noted it.")),
            vec![SkillPart::Examples]
        );
    }

    /// A change: laws alone are judged again; a setting is a run; a comment is nothing.
    #[test]
    fn pack_file_laws_settings_layout() {
        let base = "name = \"p\"\n[[laws]]\nname = \"a\"\n";
        let p = Path::new("pack.toml");
        let laws = "name = \"p\"\n[[laws]]\nname = \"b\"\n";
        let setting = "name = \"q\"\n[[laws]]\nname = \"a\"\n";
        let comment = "# note\nname = \"p\"\n[[laws]]\nname = \"a\"\n";
        assert_eq!(
            pack_file_change(Some(base), laws, p).unwrap(),
            PackFileChange::LawsOnly
        );
        assert_eq!(
            pack_file_change(Some(base), setting, p).unwrap(),
            PackFileChange::Settings
        );
        assert_eq!(
            pack_file_change(Some(base), comment, p).unwrap(),
            PackFileChange::Layout
        );
    }
}
