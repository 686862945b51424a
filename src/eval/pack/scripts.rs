//! A skill's `scripts/` offered as tools once the skill loads: each Python script with a
//! `get_args()` described and schema'd from its argparse parser, each other executable from
//! its one line in `pack.toml`'s `[script_executables]`; all recorded and replayed as command
//! tools, their fixtures under `fixtures/<tool>`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use serde::Deserialize;

use super::tools::{ToolSpec, COMMAND};
use crate::tools::script::{ScriptInterface, NO_BYTECODE, PYTHON};

/// The folder of a skill that holds its scripts.
pub const SCRIPTS_FOLDER: &str = "scripts";

/// An executable that is not a Python script, as `pack.toml` declares it in one line under
/// `[script_executables]`, keyed by its path in the skills tree (`fx/scripts/rates.sh`). It is
/// called as a command tool is: the call's arguments as JSON on stdin.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredExecutable {
    pub description: String,
    pub parameters: serde_json::Value,
}

/// One script of a skill found in the skills tree.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundScript {
    /// The skill it belongs to (its folder's name).
    pub skill: String,
    pub path: PathBuf,
    /// A Python script (`*.py`), read through its `get_args()`.
    pub python: bool,
}

impl FoundScript {
    /// The tool's name: the file's name less `.py`.
    pub fn tool_name(&self) -> String {
        let file = self.path.file_name().unwrap_or_default().to_string_lossy();
        file.strip_suffix(".py").unwrap_or(&file).to_string()
    }
}

/// Every script under `skills_dir/<skill>/scripts/`, skill by skill and file by file in name
/// order: the `*.py` files and the executables. A file whose name starts with `_` is a
/// helper the scripts import, not a tool.
pub fn find_scripts(skills_dir: &Path) -> anyhow::Result<Vec<FoundScript>> {
    let Ok(entries) = std::fs::read_dir(skills_dir) else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for skill_dir in crate::harness::skills::skill_folders(entries) {
        let folder = skill_dir.join(SCRIPTS_FOLDER);
        let Ok(files) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut files: Vec<PathBuf> = files.flatten().map(|e| e.path()).collect();
        files.sort();
        let skill = skill_dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        for path in files {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with('_') || name.starts_with('.') || !path.is_file() {
                continue;
            }
            let python = name.ends_with(".py");
            if python || is_executable(&path) {
                found.push(FoundScript {
                    skill: skill.clone(),
                    path,
                    python,
                });
            }
        }
    }
    Ok(found)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// The tools of the scripts in the pack's skills tree (`skills_dir`, inside the pack's folder
/// `pack_dir`), with `declared` naming the executables that are not Python; `at` says where
/// `pack.toml`'s `[script_executables]` is. An error is one line naming the script and what
/// is wrong with it.
pub fn script_tools(
    pack_dir: &Path,
    skills_dir: &Path,
    declared: &BTreeMap<String, DeclaredExecutable>,
    at: &str,
) -> anyhow::Result<Vec<ToolSpec>> {
    let found = find_scripts(skills_dir)?;
    let mut tools: Vec<ToolSpec> = Vec::new();
    for script in &found {
        let in_tree = relative(&script.path, skills_dir);
        let from_pack = relative(&script.path, pack_dir);
        let shown = script.path.display();
        let name = script.tool_name();
        crate::harness::tools::check_tool_name(&name)
            .map_err(|e| anyhow!("{shown}: the script's name makes no tool name: {e}"))?;
        if let Some(other) = tools.iter().find(|t| t.name == name) {
            bail!(
                "{shown}: tool name {name:?} is also the name of {}; rename one script",
                other
                    .command
                    .last()
                    .map(String::as_str)
                    .unwrap_or("another script")
            );
        }
        let spec = if script.python {
            let interface = ScriptInterface::read(Path::new(&from_pack), pack_dir)
                .map_err(|e| anyhow!("{shown}: {e}"))?;
            ToolSpec {
                description: Some(interface.description()),
                parameters: Some(interface.parameters()),
                command: vec![PYTHON.into(), NO_BYTECODE.into(), from_pack],
                script: Some(interface),
                ..script_spec(&name, &script.skill)
            }
        } else {
            let Some(declared) = declared.get(&in_tree) else {
                bail!(
                    "{shown}: an executable script that is not Python needs one line in {at}: [script_executables] \"{in_tree}\" = {{ description = \"…\", parameters = {{ … }} }} (or remove its executable bit)"
                );
            };
            ToolSpec {
                description: Some(declared.description.clone()),
                parameters: Some(declared.parameters.clone()),
                command: vec![from_pack],
                ..script_spec(&name, &script.skill)
            }
        };
        let mut spec = spec;
        key_all_arguments(&mut spec);
        tools.push(spec);
    }
    if let Some(unknown) = declared.keys().find(|k| {
        !found
            .iter()
            .any(|s| &relative(&s.path, skills_dir) == *k && !s.python)
    }) {
        bail!("{at}: field `script_executables.\"{unknown}\"`: no executable script of the skills tree {} is there (give its path in the tree, as `skill/scripts/file`)", skills_dir.display());
    }
    Ok(tools)
}

/// A script's tool before its description: a command tool gated on its skill, keyed by every
/// argument it takes, its recordings under `fixtures/<name>`.
fn script_spec(name: &str, skill: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        kind: COMMAND.into(),
        skill_gate: Some(skill.to_string()),
        fixtures: Some(Path::new("fixtures").join(name)),
        ..Default::default()
    }
}

/// Every argument a script tool's schema names: its recordings are keyed by all of them.
fn key_all_arguments(tool: &mut ToolSpec) {
    tool.key_arguments = tool
        .parameters
        .as_ref()
        .and_then(|p| p.get("properties"))
        .and_then(serde_json::Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
}

/// `path` from `base`, with `/` between its parts.
fn relative(path: &Path, base: &Path) -> String {
    let Ok(within) = path.strip_prefix(base) else {
        return path.display().to_string();
    };
    within
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
