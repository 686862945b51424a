//! The repository's packs as a plan sees them: where each reads its skills, tools, corpus and
//! fixtures from, which packs measure a changed skill, and whether a pack could fail for it at
//! all (a gate that cannot fail is refused, with the reason in one line).

use std::path::{Component, Path, PathBuf};

use anyhow::anyhow;

use crate::eval::corpus::Sample;
use crate::eval::judge;
use crate::eval::pack::Pack;

/// A pack found in the repository, with the paths a plan compares, relative to the root.
pub struct PackView {
    pub pack: Pack,
    /// `packs/weather/pack.toml`.
    pub file: String,
    /// `packs/weather`.
    pub dir: String,
    /// The folder of its baseline skills tree, `skills` or `packs/weather/skills`.
    pub skills_dir: String,
    /// The line of `skill = …` in `pack.toml`.
    pub skill_line: Option<usize>,
    /// The line of `skills_dir = …`.
    pub skills_dir_line: Option<usize>,
}

impl PackView {
    /// `packs/weather/pack.toml:6`.
    pub fn skill_provenance(&self) -> String {
        self.at(self.skill_line)
    }

    /// `packs/routing/pack.toml:9`: where the pack names the skills tree that holds a skill
    /// beside its own.
    pub fn tree_provenance(&self) -> String {
        self.at(self.skills_dir_line)
    }

    fn at(&self, line: Option<usize>) -> String {
        match line {
            Some(line) => format!("{}:{line}", self.file),
            None => self.file.clone(),
        }
    }
}

/// `path` with `.` and `..` taken out by their names alone (the files need not exist).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` relative to `root` with `/`, or `None` when it lies outside.
pub fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = normalize(path).strip_prefix(root).ok()?.to_path_buf();
    Some(
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// Where `rel` (relative to the repository's root) leads once every symlink is followed:
/// `Ok(None)` when nothing is there, `Err(target)` when it leads outside the repository, which
/// a plan never reads (a symlinked `SKILL.md` or folder could point at any file of the machine).
pub fn inside(root: &Path, rel: &str) -> Result<Option<PathBuf>, PathBuf> {
    let Ok(real) = std::fs::canonicalize(root.join(rel)) else {
        return Ok(None);
    };
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    if real.starts_with(&real_root) {
        Ok(Some(real))
    } else {
        Err(real)
    }
}

/// The text of `rel` when it is a file inside the repository; `None` when it is missing, not
/// text, or leads outside ([`inside`]).
pub fn read_inside(root: &Path, rel: &str) -> Option<String> {
    let path = inside(root, rel).ok()??;
    crate::base::input::read_input_to_string(path).ok()
}

/// Whether `path` is `dir` or lies under it (both relative, with `/`).
pub fn within(path: &str, dir: &str) -> bool {
    dir.is_empty() || path == dir || path.starts_with(&format!("{dir}/"))
}

/// Loads every pack file; a pack that does not load stops the plan with its own error, since
/// a plan that left it out would be silent about what it measures.
pub fn load_packs(root: &Path, files: &[String]) -> anyhow::Result<Vec<PackView>> {
    let mut packs = Vec::new();
    for rel in files {
        let path = root.join(rel);
        if let Err(target) = inside(root, rel) {
            anyhow::bail!(
                "{rel}: a symlink leading outside the repository (to {}); plan reads no file there: remove the link or copy the pack in",
                target.display()
            );
        }
        let text = crate::base::input::read_input_to_string(&path)
            .map_err(|e| anyhow!("{rel}: cannot read pack: {e}"))?;
        let pack = Pack::parse(&text, &path)?;
        let outside = |what: &str| anyhow!("{rel}: field `{what}` leads outside the repository");
        let skills_dir = relative(root, &pack.skills_dir).ok_or_else(|| outside("skills_dir"))?;
        let dir = relative(root, &pack.dir).ok_or_else(|| outside("name"))?;
        let skill_line = pack.key_line("skill");
        let skills_dir_line = pack.key_line("skills_dir");
        packs.push(PackView {
            pack,
            file: rel.clone(),
            dir,
            skills_dir,
            skill_line,
            skills_dir_line,
        });
    }
    Ok(packs)
}

/// The samples whose prompts reach `skill` under this pack: those that name it in their
/// `skill` field when the corpus routes (some sample has one), else every sample, since the
/// skill is offered to every prompt.
pub fn reaching_samples(samples: &[Sample], skill: &str) -> Vec<Sample> {
    let routes = samples.iter().any(|s| s.fields.contains_key("skill"));
    samples
        .iter()
        .filter(|s| !routes || s.fields.get("skill").and_then(|v| v.as_str()) == Some(skill))
        .cloned()
        .collect()
}

/// Whether the pack's corpus routes its prompts to skills by name: some sample has a `skill`
/// field, as in a pack that measures which skill a description makes the model load.
pub fn routes(view: &PackView) -> anyhow::Result<bool> {
    let samples = view.pack.corpus(None)?;
    Ok(samples.iter().any(|s| s.fields.contains_key("skill")))
}

/// Why this pack cannot fail for `skill`, or `None` when some law applies to a sample whose
/// prompt reaches it.
pub fn why_vacuous(view: &PackView, skill: &str) -> anyhow::Result<Option<String>> {
    let samples = view.pack.corpus(None)?;
    let reaching = reaching_samples(&samples, skill);
    if reaching.is_empty() {
        return Ok(Some(format!(
            "no prompt of its corpus reaches skill `{skill}` (no sample names it in field `skill`)"
        )));
    }
    let applies = reaching.iter().any(|s| {
        view.pack
            .laws
            .iter()
            .any(|law| judge::applies(law, &s.category, &s.fields))
    });
    if applies {
        return Ok(None);
    }
    let mut categories: Vec<&str> = reaching.iter().map(|s| s.category.as_str()).collect();
    categories.sort_unstable();
    categories.dedup();
    Ok(Some(format!(
        "no law applies to the categories whose prompts reach skill `{skill}` ({})",
        categories.join(", ")
    )))
}

/// The files a pack's `command` and `mcp` tools run or read, relative to the root, with the
/// tool's name and its fixtures folder: each argument that names a path in the repository (a
/// program, a data file, `--flag=PATH`), the tool's `world`, and its `working_dir` when that is
/// a folder of its own (not the pack's).
pub fn tool_programs(root: &Path, view: &PackView) -> Vec<(String, String, Option<String>)> {
    let mut programs = Vec::new();
    for tool in view.pack.tools.iter().filter(|t| t.is_live_program()) {
        let from = tool
            .working_dir
            .clone()
            .unwrap_or_else(|| view.pack.dir.clone());
        let fixtures = tool.fixtures.as_ref().and_then(|f| relative(root, f));
        let named =
            tool.command
                .iter()
                .chain(&tool.server)
                .filter_map(|arg| match arg.strip_prefix('-') {
                    Some(flag) => flag.split_once('=').map(|(_, value)| value),
                    None => Some(arg.as_str()),
                });
        let mut read: Vec<PathBuf> = named
            .filter(|arg| !arg.is_empty())
            .map(|arg| from.join(arg))
            .collect();
        read.extend(tool.world.clone());
        if normalize(&from) != normalize(&view.pack.dir) {
            read.push(from.clone());
        }
        for path in read {
            if path.exists() {
                if let Some(rel) = relative(root, &path).filter(|r| !r.is_empty()) {
                    if !programs
                        .iter()
                        .any(|(p, t, _)| *p == rel && *t == tool.name)
                    {
                        programs.push((rel, tool.name.clone(), fixtures.clone()));
                    }
                }
            }
        }
    }
    programs
}
