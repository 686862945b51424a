//! `skilleval init`: a new pack for a skill, written from its SKILL.md and the tools its
//! `allowed-tools` names, that loads and passes `skilleval check` as written. Each tool comes
//! from where the skill really gets it: a program (`command`), an MCP server's `tools/list`
//! (`mcp`), a typed tool skilleval carries, or fixtures alone (`recorded`). The corpus holds
//! starter prompts to replace; the laws are one "called when it should be" per tool, one "not
//! called when it should not be", and "answers"; the judge cases are the ones those laws need.
//! `pack_toml.rs` writes the text of `pack.toml`, `starter.rs` the corpus and the judge cases.

mod pack_toml;
mod starter;

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use anyhow::{anyhow, bail};
use serde_json::Value;

use crate::harness::skills::SkillTree;
use crate::tools::mcp::{ListedTool, McpConnection, McpReach, McpServerSpec};
use pack_toml::pack_toml;
use starter::{corpus_jsonl, judge_cases, starter_samples};

/// Where a tool of the new pack gets its answers.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolSource {
    /// A program: its argv, and the arguments the model passes (strings, all keys).
    Command {
        argv: Vec<String>,
        description: String,
        arguments: Vec<String>,
    },
    /// A tool of an MCP server, as its `tools/list` describes it; `argv` is the server's
    /// program and arguments, or its URL alone.
    Mcp {
        argv: Vec<String>,
        listed: ListedTool,
    },
    /// A typed tool skilleval carries (`weather_lookup`, `calculate`, `convert_units`).
    Typed,
    /// Fixtures only, written by hand.
    Recorded {
        description: String,
        arguments: Vec<String>,
    },
    /// A script of the skill's `scripts/` (its path in the skills tree), offered once the skill
    /// loads: described by its parser, or by its line under `[script_executables]`.
    Script {
        in_tree: String,
        parameters: Value,
        python: bool,
    },
}

#[derive(Debug, Clone)]
pub struct InitOptions {
    /// A SKILL.md, or the folder that holds it.
    pub skill: PathBuf,
    /// The folder the pack is written to; it may exist, but not hold a pack.
    pub out: PathBuf,
    /// The pack's name; the skill's name if unset.
    pub name: Option<String>,
    /// Programs by tool name.
    pub commands: BTreeMap<String, Vec<String>>,
    /// Descriptions of command and recorded tools, by tool name.
    pub descriptions: BTreeMap<String, String>,
    /// Argument names of command and recorded tools, by tool name.
    pub arguments: BTreeMap<String, Vec<String>>,
    /// The MCP server the skill's other tools come from: its program and arguments, or its
    /// URL alone (streamable HTTP).
    pub mcp: Option<Vec<String>>,
    /// Tools answered from hand-written fixtures.
    pub recorded: Vec<String>,
    /// Tools that change something (`effect = "write"`): their samples become conversations
    /// with a scripted user who confirms, and laws hold the write to that confirmation.
    pub writes: Vec<String>,
    /// Starter prompts: a tool's name (prompts that need it) or `none`, and the prompt.
    pub prompts: Vec<(String, String)>,
}

/// What `init` wrote.
#[derive(Debug)]
pub struct Written {
    pub pack_file: PathBuf,
    pub files: Vec<PathBuf>,
    pub tools: Vec<(String, &'static str)>,
    /// Starter prompts written as placeholders, to replace.
    pub placeholders: usize,
}

/// The category of prompts that need `tool`, and of those that need none.
pub fn needs_category(tool: &str) -> String {
    format!(
        "needs_{}",
        tool.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    )
}
pub const NO_TOOL_CATEGORY: &str = "no_tool";

/// The skill's SKILL.md and the folder of skills that holds it.
fn locate_skill(path: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let file = if path.is_dir() {
        path.join("SKILL.md")
    } else {
        path.to_path_buf()
    };
    if !file.is_file() {
        bail!("{}: no SKILL.md there", file.display());
    }
    let skill_dir = file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    if file.file_name().and_then(|n| n.to_str()) != Some("SKILL.md") {
        bail!(
            "{}: a skill lives in a folder as SKILL.md (the Agent Skills format); give that file or its folder",
            file.display()
        );
    }
    let skills_root = skill_dir
        .canonicalize()
        .map_err(|e| anyhow!("{}: {e}", skill_dir.display()))?
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            anyhow!(
                "{}: the skill's folder has no parent folder",
                file.display()
            )
        })?;
    Ok((file, skills_root))
}

/// Every decision `init` makes, before anything is written: the first problem is an error.
pub fn init(opts: &InitOptions) -> anyhow::Result<Written> {
    let (skill_file, skills_root) = locate_skill(&opts.skill)?;
    let tree = SkillTree::load(&skills_root)?;
    let wanted = skill_file.canonicalize()?;
    let skill = tree
        .iter()
        .find(|s| s.source.canonicalize().ok().as_ref() == Some(&wanted))
        .ok_or_else(|| {
            anyhow!(
                "{}: not loaded as a skill of {}",
                skill_file.display(),
                skills_root.display()
            )
        })?;
    let skill_name = skill.name().to_string();
    let pack_name = opts.name.clone().unwrap_or_else(|| skill_name.clone());
    crate::eval::pack::check_name(&pack_name).map_err(|e| anyhow!("--name: {e}"))?;
    let granted = skill.meta.granted_tools();
    let scripts = skill_scripts(&skills_root, &skill_file)?;
    if scripts.is_empty() {
        check_granted(&granted, &skill_file)?;
    }
    for (name, argv) in &opts.commands {
        check_program(name, argv, &opts.out)?;
    }
    check_named_tools_granted(opts, &granted, &skill_file)?;
    let listed = match &opts.mcp {
        Some(argv) => list_mcp(argv, &opts.out)?,
        None => Vec::new(),
    };
    let mut tools: Vec<(String, ToolSource)> = Vec::new();
    for name in &granted {
        if scripts.iter().any(|(script, _)| script == name) {
            continue;
        }
        tools.push((name.clone(), tool_source(name, opts, &listed, &skill_file)?));
    }
    tools.extend(scripts);
    write_pack(opts, &pack_name, &skill_name, &skills_root, &tools)
}

/// The tools the skill's `allowed-tools` grants: at least one, since a pack measures when and
/// how the model calls them, and each a name that can become a folder and a call (the one rule
/// of `check_tool_name`).
fn check_granted(granted: &[String], skill_file: &Path) -> anyhow::Result<()> {
    if granted.is_empty() {
        bail!(
            "{}: field `allowed-tools`: the skill names no tool; add its tools to the front matter (`allowed-tools: tool_name other_tool`), since a pack measures when and how the model calls them",
            skill_file.display()
        );
    }
    for name in granted {
        crate::harness::tools::check_tool_name(name)
            .map_err(|e| anyhow!("{}: field `allowed-tools`: {e}", skill_file.display()))?;
    }
    Ok(())
}

/// The skill's own scripts as tools, each read (a Python script through its `get_args()`)
/// before anything is written: a script that cannot be read is an error naming it.
fn skill_scripts(
    skills_root: &Path,
    skill_file: &Path,
) -> anyhow::Result<Vec<(String, ToolSource)>> {
    let folder = skill_file.parent().and_then(Path::file_name);
    let mut tools = Vec::new();
    for script in crate::eval::pack::scripts::find_scripts(skills_root)? {
        if Some(std::ffi::OsStr::new(&script.skill)) != folder {
            continue;
        }
        let in_tree = format!(
            "{}/{}/{}",
            script.skill,
            crate::eval::pack::scripts::SCRIPTS_FOLDER,
            script
                .path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
        );
        let parameters = match script.python {
            true => crate::tools::script::ScriptInterface::read(&script.path, skills_root)
                .map_err(|e| anyhow!("{}: {e}", script.path.display()))?
                .parameters(),
            false => serde_json::json!({"type": "object", "properties": {}}),
        };
        let name = script.tool_name();
        crate::harness::tools::check_tool_name(&name).map_err(|e| {
            anyhow!(
                "{}: the script's name makes no tool name: {e}",
                script.path.display()
            )
        })?;
        tools.push((
            name,
            ToolSource::Script {
                in_tree,
                parameters,
                python: script.python,
            },
        ));
    }
    Ok(tools)
}

/// Every tool the command line names is one the skill grants.
fn check_named_tools_granted(
    opts: &InitOptions,
    granted: &[String],
    skill_file: &Path,
) -> anyhow::Result<()> {
    for named in opts
        .commands
        .keys()
        .chain(opts.descriptions.keys())
        .chain(opts.arguments.keys())
        .chain(opts.recorded.iter())
        .chain(opts.writes.iter())
    {
        if !granted.contains(named) {
            bail!(
                "tool {named:?} is given on the command line but {} does not name it in `allowed-tools` ({})",
                skill_file.display(),
                granted.join(" ")
            );
        }
    }
    Ok(())
}

/// Where the tool `name` gets its answers: its `--command`, `--recorded`, the MCP server's
/// `listed` tools, or the typed tool of that name; else an error saying how to give one.
fn tool_source(
    name: &str,
    opts: &InitOptions,
    listed: &[ListedTool],
    skill_file: &Path,
) -> anyhow::Result<ToolSource> {
    // `--args TOOL=` with no name declares a tool that takes no argument.
    let needs_arguments = |kind: &str| -> anyhow::Result<Vec<String>> {
        opts.arguments.get(name).cloned().ok_or_else(|| {
            anyhow!("--args {name}=…: a {kind} tool needs the names of its arguments (they key its recordings); give `--args {name}=` for one that takes none")
        })
    };
    let describe = || {
        opts.descriptions
            .get(name)
            .cloned()
            .unwrap_or_else(|| format!("{name}: describe what it does and what it returns."))
    };
    if opts.writes.iter().any(|w| w == name)
        && !opts.commands.contains_key(name)
        && !opts.recorded.iter().any(|r| r == name)
    {
        bail!("--write {name}: a write is a tool of the pack's own, asked with --command {name}='PROGRAM ARGS' (or --recorded {name})");
    }
    let source = if let Some(argv) = opts.commands.get(name) {
        ToolSource::Command {
            argv: argv.clone(),
            description: describe(),
            arguments: needs_arguments("command")?,
        }
    } else if opts.recorded.iter().any(|r| r == name) {
        ToolSource::Recorded {
            description: describe(),
            arguments: needs_arguments("recorded")?,
        }
    } else if let Some(tool) = listed.iter().find(|t| t.name == name) {
        ToolSource::Mcp {
            argv: opts.mcp.clone().unwrap_or_default(),
            listed: tool.clone(),
        }
    } else if crate::tools::is_typed_tool(name) {
        ToolSource::Typed
    } else {
        let mcp_hint = if opts.mcp.is_some() {
            let names: Vec<&str> = listed.iter().map(|t| t.name.as_str()).collect();
            format!(" (the MCP server lists: {})", names.join(", "))
        } else {
            String::new()
        };
        bail!(
            "tool {name:?} (from `allowed-tools` of {}): say where its answers come from: --command {name}='PROGRAM ARGS' --args {name}=ARG,…, --mcp 'SERVER ARGS', or --recorded {name} --args {name}=ARG,…{mcp_hint}",
            skill_file.display()
        );
    };
    Ok(source)
}

/// A `--command` program must exist where the pack will run it: a path with a `/` from the
/// pack's folder, a bare name on `PATH`. Found only at the first recording, it would fail there.
fn check_program(name: &str, argv: &[String], out: &Path) -> anyhow::Result<()> {
    let Some(program) = argv.first() else {
        bail!("--command {name}=…: give the program and its arguments");
    };
    let found = if program.contains('/') {
        let path = crate::tools::command::program_path(program, out);
        path.is_file()
    } else {
        std::env::var_os("PATH")
            .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
            .unwrap_or(false)
    };
    if !found {
        let whence = if program.contains('/') {
            format!(
                "(a path with `/` is taken from the pack's folder {})",
                out.display()
            )
        } else {
            "on PATH".to_string()
        };
        bail!(
            "--command {name}={}: no program {program:?} {whence}",
            argv.join(" ")
        );
    }
    Ok(())
}

fn list_mcp(argv: &[String], out: &Path) -> anyhow::Result<Vec<ListedTool>> {
    use crate::tools::mcp_http;
    if argv.is_empty() {
        bail!("--mcp: give the server's program and arguments, or its URL");
    }
    let reach = if let Some(url) = mcp_http::url_in(argv) {
        mcp_http::check_url(url).map_err(|e| anyhow!("--mcp: {e}"))?;
        McpReach::Http {
            url: url.to_string(),
        }
    } else if let Some(url) = argv.iter().find(|w| mcp_http::looks_like_url(w)) {
        bail!("--mcp {}: a server's URL ({url}) is given alone, without arguments; a program is given with its arguments", argv.join(" "));
    } else {
        // The server runs where the pack's recordings will run it: the pack's folder, once
        // written.
        let here = std::env::current_dir()?;
        McpReach::Stdio {
            argv: argv.to_vec(),
            working_dir: nearest_existing(out).unwrap_or(here),
            env: Vec::new(),
        }
    };
    let spec = McpServerSpec {
        reach,
        timeout: std::time::Duration::from_secs(120),
    };
    let connection = McpConnection::start(&spec)?;
    connection.list_tools()
}

fn nearest_existing(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .find(|p| !p.as_os_str().is_empty() && p.is_dir())
        .map(Path::to_path_buf)
}

/// Writes the pack `init` decided on: `pack.toml`, the starter corpus, the judge cases and the
/// tools' fixture folders, in a folder that holds no pack yet.
fn write_pack(
    opts: &InitOptions,
    pack_name: &str,
    skill_name: &str,
    skills_root: &Path,
    tools: &[(String, ToolSource)],
) -> anyhow::Result<Written> {
    let out = &opts.out;
    check_nothing_overwritten(out)?;
    check_prompt_categories(&opts.prompts, tools)?;
    std::fs::create_dir_all(out).map_err(|e| anyhow!("{}: cannot create: {e}", out.display()))?;
    let skills_dir = relative_path(&out.canonicalize()?, skills_root);
    let toml = pack_toml(pack_name, skill_name, &skills_dir, tools, &opts.writes);
    let (samples, placeholders) = starter_samples(&opts.prompts, tools, &opts.writes);
    let pack_file = out.join("pack.toml");
    let mut files = Vec::new();
    for (path, text) in [
        (pack_file.clone(), toml),
        (out.join("corpus.jsonl"), corpus_jsonl(&samples)),
        (
            out.join(crate::eval::law_cases::CASES_FILE),
            judge_cases(&samples, tools, &opts.writes),
        ),
    ] {
        // A new file only: a file that appeared since the check above is never truncated.
        crate::base::write::create_new(&path, text.as_bytes())
            .map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))?;
        files.push(path);
    }
    for (name, source) in tools {
        if let Some(fixtures) = fixtures_of(name, source) {
            files.push(create_fixture_dir(&out.join(fixtures))?);
        }
    }
    // The starting state a pack with a write copies into each conversation's scratch folder.
    if !opts.writes.is_empty() && world_of(tools, &opts.writes).is_some() {
        files.push(create_fixture_dir(&out.join(WORLD_DIR))?);
    }
    Ok(Written {
        pack_file,
        files,
        tools: tools
            .iter()
            .map(|(name, source)| (name.clone(), kind_of(source)))
            .collect(),
        placeholders,
    })
}

/// The folder may hold the skill and its program already, but not a pack: nothing is
/// overwritten.
fn check_nothing_overwritten(out: &Path) -> anyhow::Result<()> {
    for file in [
        "pack.toml",
        "corpus.jsonl",
        crate::eval::law_cases::CASES_FILE,
    ] {
        if out.join(file).exists() {
            bail!(
                "{}: already exists; init writes a new pack only",
                out.join(file).display()
            );
        }
    }
    Ok(())
}

/// Every `--prompt` names one of the skill's tools, or `none`.
fn check_prompt_categories(
    prompts: &[(String, String)],
    tools: &[(String, ToolSource)],
) -> anyhow::Result<()> {
    for (category, _) in prompts {
        if category != "none" && !tools.iter().any(|(name, _)| name == category) {
            bail!("--prompt {category}=…: {category:?} is neither one of the skill's tools nor `none`");
        }
    }
    Ok(())
}

/// The folder a pack with a write starts each conversation's state from.
pub const WORLD_DIR: &str = "world";

/// The world of a pack with a write, when some tool of it is a program that keeps its state
/// there: a recorded tool has no state beyond its recordings.
fn world_of(tools: &[(String, ToolSource)], writes: &[String]) -> Option<&'static str> {
    let programs = tools
        .iter()
        .any(|(_, source)| matches!(source, ToolSource::Command { .. }));
    (!writes.is_empty() && programs).then_some(WORLD_DIR)
}

/// Whether a skill's text states a confirmation before a change: "confirm", "ask before",
/// "approval", "permission" and the like, as whole words, so that an "approved translation" or
/// an "unconfirmed booking" is no request for one. `init` then asks for the tool that changes
/// something.
pub fn states_confirmation(skill_text: &str) -> bool {
    static WORDS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\b(confirm|confirms|confirmed|confirmation|approval|approve|permission|ask (the user )?before|check with the user)\b",
        )
        .expect("a valid pattern")
    });
    WORDS.is_match(skill_text)
}

#[cfg(test)]
mod confirmation_tests {
    use super::states_confirmation;

    /// Truth: a person's labels of skill sentences.
    #[test]
    fn a_confirmation_is_read_from_whole_words_only() {
        let labelled = [
            (
                "Confirm the note's title with the user before you delete it.",
                true,
            ),
            ("Ask before you cancel a booking.", true),
            ("Ask the user before sending anything.", true),
            ("Wait for their approval, then call delete_note.", true),
            ("Get permission before you write.", true),
            ("Once the user has confirmed, call book.", true),
            ("Reply with the approved translation from the tool.", false),
            ("An unconfirmed booking shows as pending.", false),
            ("Approvers are listed in the tool's result.", false),
            ("Give the weather for the place the user names.", false),
        ];
        for (sentence, expected) in labelled {
            assert_eq!(states_confirmation(sentence), expected, "{sentence}");
        }
    }
}

/// How `init` reports where a tool gets its answers.
fn kind_of(source: &ToolSource) -> &'static str {
    match source {
        ToolSource::Command { .. } => "command",
        ToolSource::Recorded { .. } => "recorded",
        ToolSource::Mcp { .. } => "mcp",
        ToolSource::Typed => "typed",
        ToolSource::Script { .. } => "script",
    }
}

/// The folder of a tool's recordings in the new pack; none for a computed tool, which answers
/// every call itself.
fn fixtures_of(name: &str, source: &ToolSource) -> Option<String> {
    let computed = *source == ToolSource::Typed && crate::tools::computed(name).is_some();
    (!computed).then(|| format!("fixtures/{}", crate::base::names::file_stem(name)))
}

/// A tool's fixture folder, with a `.gitkeep` that keeps it in git while it is empty.
fn create_fixture_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow!("{}: cannot create: {e}", dir.display()))?;
    // Not a fixture (only `*.json` are). A file of that name the folder holds already is the
    // user's, and is left as it is.
    let keep = dir.join(".gitkeep");
    if std::fs::symlink_metadata(&keep).is_err() {
        crate::base::write::create_new(&keep, b"")
            .map_err(|e| anyhow!("{}: cannot write: {e}", keep.display()))?;
    }
    Ok(dir.to_path_buf())
}

/// The arguments that key an MCP tool's recordings: all it has, optional ones included (an
/// optional argument left out is a key value of its own), so that a call with another value
/// of any of them is never answered with this one's recording.
fn key_arguments_of(schema: &Value) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// `to` written from `from` (both absolute): `../skills` and the like.
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for part in &to[common..] {
        path.push(part);
    }
    if path.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn relative_paths_climb_to_the_common_folder() {
        assert_eq!(
            relative_path(Path::new("/a/b/packs/x"), Path::new("/a/b/skills")),
            PathBuf::from("../../skills")
        );
        assert_eq!(
            relative_path(Path::new("/a/x"), Path::new("/a/x/skills")),
            PathBuf::from("skills")
        );
    }

    #[test]
    fn an_mcp_tool_is_keyed_by_all_its_arguments_optional_ones_included() {
        assert_eq!(
            key_arguments_of(&json!({"properties": {"a": {}, "b": {}}, "required": ["b"]})),
            vec!["a", "b"]
        );
        assert_eq!(
            key_arguments_of(&json!({"properties": {"a": {}, "b": {}}})),
            vec!["a", "b"]
        );
    }
}
