//! `skilleval init`: a new pack for a skill, written from its SKILL.md and the tools its
//! `allowed-tools` names, that loads and passes `skilleval check` as written. Each tool comes
//! from where the skill really gets it: a program (`command`), an MCP server's `tools/list`
//! (`mcp`), a typed tool skilleval carries, or fixtures alone (`recorded`). The corpus holds
//! starter prompts to replace; the laws are one "called when it should be" per tool, one "not
//! called when it should not be", and "answers"; the judge cases are the ones those laws need.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use anyhow::{anyhow, bail};
use serde_json::{json, Map, Value};

use crate::harness::skills::SkillTree;
use crate::tools::mcp::{ListedTool, McpConnection, McpServerSpec};

/// Where a tool of the new pack gets its answers.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolSource {
    /// A program: its argv, and the arguments the model passes (strings, all keys).
    Command {
        argv: Vec<String>,
        description: String,
        arguments: Vec<String>,
    },
    /// A tool of an MCP server, as its `tools/list` describes it.
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
    /// The MCP server the skill's other tools come from.
    pub mcp: Option<Vec<String>>,
    /// Tools answered from hand-written fixtures.
    pub recorded: Vec<String>,
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
    if granted.is_empty() {
        bail!(
            "{}: field `allowed-tools`: the skill names no tool; add its tools to the front matter (`allowed-tools: tool_name other_tool`), since a pack measures when and how the model calls them",
            skill_file.display()
        );
    }
    // A name becomes a folder and a call: the one rule of `check_tool_name`, before anything.
    for name in &granted {
        crate::harness::tools::check_tool_name(name)
            .map_err(|e| anyhow!("{}: field `allowed-tools`: {e}", skill_file.display()))?;
    }
    for (name, argv) in &opts.commands {
        check_program(name, argv, &opts.out)?;
    }
    for named in opts
        .commands
        .keys()
        .chain(opts.descriptions.keys())
        .chain(opts.arguments.keys())
        .chain(opts.recorded.iter())
    {
        if !granted.contains(named) {
            bail!(
                "tool {named:?} is given on the command line but {} does not name it in `allowed-tools` ({})",
                skill_file.display(),
                granted.join(" ")
            );
        }
    }
    let listed = match &opts.mcp {
        Some(argv) => list_mcp(argv, &opts.out)?,
        None => Vec::new(),
    };
    let mut tools: Vec<(String, ToolSource)> = Vec::new();
    for name in &granted {
        let needs_arguments = |kind: &str| -> anyhow::Result<Vec<String>> {
            opts.arguments.get(name).cloned().filter(|a| !a.is_empty()).ok_or_else(|| {
                anyhow!("--args {name}=…: a {kind} tool needs the names of its arguments (they key its recordings)")
            })
        };
        let describe = || {
            opts.descriptions
                .get(name)
                .cloned()
                .unwrap_or_else(|| format!("{name}: describe what it does and what it returns."))
        };
        let source = if let Some(argv) = opts.commands.get(name) {
            ToolSource::Command {
                argv: argv.clone(),
                description: describe(),
                arguments: needs_arguments("command")?,
            }
        } else if opts.recorded.contains(name) {
            ToolSource::Recorded {
                description: describe(),
                arguments: needs_arguments("recorded")?,
            }
        } else if let Some(tool) = listed.iter().find(|t| &t.name == name) {
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
        tools.push((name.clone(), source));
    }
    write_pack(opts, &pack_name, &skill_name, &skills_root, &tools)
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
    if argv.is_empty() {
        bail!("--mcp: give the server's program and arguments");
    }
    // The server runs where the pack's recordings will run it: the pack's folder, once written.
    let here = std::env::current_dir()?;
    let working_dir = nearest_existing(out).unwrap_or(here);
    let spec = McpServerSpec {
        argv: argv.to_vec(),
        working_dir,
        env: Vec::new(),
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

fn write_pack(
    opts: &InitOptions,
    pack_name: &str,
    skill_name: &str,
    skills_root: &Path,
    tools: &[(String, ToolSource)],
) -> anyhow::Result<Written> {
    let out = &opts.out;
    // The folder may hold the skill and its program already, but not a pack: nothing is overwritten.
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
    for (category, _) in &opts.prompts {
        if category != "none" && !tools.iter().any(|(name, _)| name == category) {
            bail!("--prompt {category}=…: {category:?} is neither one of the skill's tools nor `none`");
        }
    }
    std::fs::create_dir_all(out).map_err(|e| anyhow!("{}: cannot create: {e}", out.display()))?;
    let out_abs = out.canonicalize()?;
    let skills_dir = relative_path(&out_abs, skills_root);

    let mut categories: Vec<String> = tools.iter().map(|(name, _)| needs_category(name)).collect();
    categories.push(NO_TOOL_CATEGORY.to_string());
    let mut toml = String::new();
    let _ = writeln!(
        toml,
        "# Written by `skilleval init`. Replace the starter prompts in corpus.jsonl with real ones"
    );
    let _ = writeln!(
        toml,
        "# (a category needs enough samples to reach a verdict: `skilleval check` says how many),"
    );
    let _ = writeln!(toml, "# add laws for what the skill promises, and record the tools' answers with `skilleval run --record gaps`.");
    let _ = writeln!(toml, "name = {}", quote(pack_name));
    let _ = writeln!(
        toml,
        "description = {}",
        quote(&format!(
            "The {skill_name} skill on a small model: when to call its tools and how to answer."
        ))
    );
    let _ = writeln!(toml, "skill = {}", quote(skill_name));
    let _ = writeln!(
        toml,
        "skills_dir = {}",
        quote(&skills_dir.to_string_lossy())
    );
    let _ = writeln!(toml, "corpus = \"corpus.jsonl\"");
    let _ = writeln!(
        toml,
        "categories = [{}]",
        categories
            .iter()
            .map(|c| quote(c))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(toml, "preload = true");
    let _ = writeln!(toml, "call_format = \"markup\"");
    let _ = writeln!(
        toml,
        "instructions = \"You are a helpful assistant. Answer in one or two sentences.\""
    );
    let _ = writeln!(
        toml,
        "\n[sampling]\ntemperature = 0.7\ntop_k = 40\ntop_p = 0.95"
    );
    let _ = writeln!(toml, "\n[budgets]\nmax_rounds = 3\nmax_generated_tokens = 200\nmax_tokens_per_round = 80\ntool_output_chars = 1200");
    let mut fixture_dirs = Vec::new();
    let mut kinds = Vec::new();
    for (name, source) in tools {
        let _ = writeln!(toml, "\n[[tools]]\nname = {}", quote(name));
        let fixtures = format!("fixtures/{}", crate::base::names::file_stem(name));
        let keys = |arguments: &[String]| {
            arguments
                .iter()
                .map(|a| quote(a))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let kind = match source {
            ToolSource::Command {
                argv,
                description,
                arguments,
            } => {
                let _ = writeln!(toml, "kind = \"command\"");
                let _ = writeln!(toml, "description = {}", quote(description));
                let _ = writeln!(
                    toml,
                    "parameters = {}",
                    inline_toml(&string_parameters(arguments))
                );
                let _ = writeln!(toml, "# Called with the call's arguments as JSON on stdin while recording; its stdout is the answer.");
                let _ = writeln!(
                    toml,
                    "command = [{}]",
                    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(", ")
                );
                let _ = writeln!(
                    toml,
                    "fixtures = {}\nkey_arguments = [{}]",
                    quote(&fixtures),
                    keys(arguments)
                );
                "command"
            }
            ToolSource::Recorded {
                description,
                arguments,
            } => {
                let _ = writeln!(toml, "kind = \"recorded\"");
                let _ = writeln!(toml, "description = {}", quote(description));
                let _ = writeln!(
                    toml,
                    "parameters = {}",
                    inline_toml(&string_parameters(arguments))
                );
                let _ = writeln!(
                    toml,
                    "fixtures = {}\nkey_arguments = [{}]",
                    quote(&fixtures),
                    keys(arguments)
                );
                "recorded"
            }
            ToolSource::Mcp { argv, listed } => {
                let arguments = key_arguments_of(&listed.input_schema);
                let _ = writeln!(toml, "kind = \"mcp\"");
                let _ = writeln!(
                    toml,
                    "# From the server's tools/list; the server is started only while recording."
                );
                let _ = writeln!(toml, "description = {}", quote(&listed.description));
                let _ = writeln!(toml, "parameters = {}", inline_toml(&listed.input_schema));
                let _ = writeln!(
                    toml,
                    "server = [{}]",
                    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(", ")
                );
                let _ = writeln!(
                    toml,
                    "fixtures = {}\nkey_arguments = [{}]",
                    quote(&fixtures),
                    keys(&arguments)
                );
                "mcp"
            }
            ToolSource::Typed => {
                let _ = writeln!(toml, "kind = {}", quote(name));
                if crate::tools::computed(name).is_none() {
                    let _ = writeln!(toml, "fixtures = {}\nkey_arguments = [\"location\"]\nfolds = [\"case\", \"whitespace\", \"punctuation\"]", quote(&fixtures));
                }
                "typed"
            }
        };
        if !(kind == "typed" && crate::tools::computed(name).is_some()) {
            fixture_dirs.push(out.join(&fixtures));
        }
        kinds.push((name.clone(), kind));
    }
    let needs: Vec<String> = tools.iter().map(|(n, _)| needs_category(n)).collect();
    for (name, _) in tools {
        let _ = writeln!(
            toml,
            "\n[[laws]]\nname = {}\nkind = \"tool_called\"\ntool = {}\ncategories = [{}]",
            quote(&format!("calls-{name}")),
            quote(name),
            quote(&needs_category(name))
        );
    }
    let _ = writeln!(
        toml,
        "\n[[laws]]\nname = \"no-call-when-not-needed\"\nkind = \"tool_not_called\"\ncategories = [{}]",
        quote(NO_TOOL_CATEGORY)
    );
    let _ = writeln!(
        toml,
        "\n[[laws]]\nname = \"answers\"\nkind = \"stop_reason_is\"\nreason = \"answered\""
    );
    let _ = needs;

    // Starter prompts: the ones given, else three placeholders a category.
    let mut corpus = String::new();
    let mut cases = String::new();
    let mut placeholders = 0;
    let mut samples: Vec<(String, String, String)> = Vec::new();
    let mut categories_with_tools: Vec<(String, Option<&(String, ToolSource)>)> =
        tools.iter().map(|t| (t.0.clone(), Some(t))).collect();
    categories_with_tools.push(("none".to_string(), None));
    for (key, _) in &categories_with_tools {
        let category = if key == "none" {
            NO_TOOL_CATEGORY.to_string()
        } else {
            needs_category(key)
        };
        let given: Vec<&String> = opts
            .prompts
            .iter()
            .filter(|(c, _)| c == key)
            .map(|(_, p)| p)
            .collect();
        let prompts: Vec<String> = if given.is_empty() {
            placeholders += 3;
            (1..=3)
                .map(|n| match key.as_str() {
                    "none" => {
                        format!("Replace me: a request that needs none of the skill's tools ({n}).")
                    }
                    tool => format!("Replace me: a request that needs {tool} ({n})."),
                })
                .collect()
        } else {
            given.into_iter().cloned().collect()
        };
        for (n, prompt) in prompts.into_iter().enumerate() {
            let id = format!("{}-{:03}", category.replace('_', "-"), n + 1);
            samples.push((id, category.clone(), prompt));
        }
    }
    for (id, category, prompt) in &samples {
        let _ = writeln!(
            corpus,
            "{}",
            json!({"id": id, "category": category, "prompt": prompt})
        );
    }
    // The judge cases: a passing reply for every sample, and for every law a reply where it fails.
    let mut case_n = 0;
    let mut case = |cases: &mut String,
                    prompt_id: &str,
                    calls: Value,
                    reply: &str,
                    stop: Option<&str>,
                    verdicts: Value,
                    note: &str| {
        case_n += 1;
        let mut line = json!({"id": format!("case-{case_n:03}"), "prompt_id": prompt_id, "calls": calls, "reply": reply, "verdicts": verdicts, "source": "init", "note": note});
        if let Some(stop) = stop {
            line["stop"] = json!(stop);
        }
        let _ = writeln!(cases, "{line}");
    };
    let mut failed_answers = false;
    for (id, category, _) in &samples {
        if category == NO_TOOL_CATEGORY {
            case(
                &mut cases,
                id,
                json!([]),
                "Here is a plain answer.",
                None,
                json!({"no-call-when-not-needed": true, "answers": true}),
                "passes: answered without a tool",
            );
            if let Some((tool, source)) = tools.first() {
                case(
                    &mut cases,
                    id,
                    json!([call_of(tool, source)]),
                    "Here is what the tool said.",
                    None,
                    json!({"no-call-when-not-needed": false, "answers": true}),
                    "fails: a tool called that the request does not need",
                );
            }
            continue;
        }
        let (tool, source) = tools
            .iter()
            .find(|(n, _)| &needs_category(n) == category)
            .expect("a tool's category");
        let law = format!("calls-{tool}");
        case(
            &mut cases,
            id,
            json!([call_of(tool, source)]),
            "Here is what the tool said.",
            None,
            json!({law.clone(): true, "answers": true}),
            "passes: the tool called, then an answer",
        );
        case(
            &mut cases,
            id,
            json!([]),
            "I do not know.",
            None,
            json!({law.clone(): false, "answers": true}),
            "fails: answered without calling the tool",
        );
        if !failed_answers {
            failed_answers = true;
            case(
                &mut cases,
                id,
                json!([call_of(tool, source)]),
                "",
                Some("round_budget"),
                json!({law: true, "answers": false}),
                "fails `answers`: the rounds ran out before an answer",
            );
        }
    }
    let pack_file = out.join("pack.toml");
    let mut files = Vec::new();
    for (path, text) in [
        (pack_file.clone(), toml),
        (out.join("corpus.jsonl"), corpus),
        (out.join(crate::eval::law_cases::CASES_FILE), cases),
    ] {
        // A new file only: a file that appeared since the check above is never truncated.
        crate::base::write::create_new(&path, text.as_bytes())
            .map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))?;
        files.push(path);
    }
    for dir in fixture_dirs {
        std::fs::create_dir_all(&dir)
            .map_err(|e| anyhow!("{}: cannot create: {e}", dir.display()))?;
        // Keeps the empty folder in git; not a fixture (only `*.json` are). A file of that
        // name the folder holds already is the user's, and is left as it is.
        let keep = dir.join(".gitkeep");
        if std::fs::symlink_metadata(&keep).is_err() {
            crate::base::write::create_new(&keep, b"")
                .map_err(|e| anyhow!("{}: cannot write: {e}", keep.display()))?;
        }
        files.push(dir);
    }
    Ok(Written {
        pack_file,
        files,
        tools: kinds,
        placeholders,
    })
}

/// A call for a judge case, answered verbatim so that no recording is needed yet.
fn call_of(tool: &str, source: &ToolSource) -> Value {
    let arguments: Map<String, Value> = match source {
        ToolSource::Command { arguments, .. } | ToolSource::Recorded { arguments, .. } => arguments
            .iter()
            .map(|a| (a.clone(), json!("example")))
            .collect(),
        ToolSource::Mcp { listed, .. } => key_arguments_of(&listed.input_schema)
            .into_iter()
            .map(|a| (a, json!("example")))
            .collect(),
        ToolSource::Typed => match tool {
            crate::tools::weather::TOOL_NAME => [("location".to_string(), json!("Paris"))]
                .into_iter()
                .collect(),
            _ => Map::new(),
        },
    };
    json!({"tool": tool, "arguments": arguments, "result": "(the tool's answer)"})
}

/// An object schema of string arguments, all required.
fn string_parameters(arguments: &[String]) -> Value {
    let properties: Map<String, Value> = arguments
        .iter()
        .map(|a| (a.clone(), json!({"type": "string"})))
        .collect();
    json!({"type": "object", "properties": properties, "required": arguments})
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

/// A TOML basic string: JSON's string escapes are TOML's too.
fn quote(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

/// A JSON value as an inline TOML value; TOML has no null, so null members are left out.
fn inline_toml(value: &Value) -> String {
    match value {
        Value::Null => "\"\"".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => quote(s),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .filter(|v| !v.is_null())
                .map(inline_toml)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(members) => {
            let inner: Vec<String> = members
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| format!("{} = {}", quote(k), inline_toml(v)))
                .collect();
            if inner.is_empty() {
                "{}".to_string()
            } else {
                format!("{{ {} }}", inner.join(", "))
            }
        }
    }
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

    #[test]
    fn json_schemas_become_toml_that_reads_back_as_the_same_json() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string", "description": "a \"quoted\" path\nwith a line"}, "n": {"type": "integer", "minimum": 1, "default": null}}, "required": ["path"], "additionalProperties": false});
        let text = format!("parameters = {}", inline_toml(&schema));
        let back: toml::Value = toml::from_str(&text).unwrap();
        let back: Value = serde_json::to_value(&back["parameters"]).unwrap();
        let mut expected = schema.clone();
        expected["properties"]["n"]
            .as_object_mut()
            .unwrap()
            .remove("default");
        assert_eq!(back, expected);
    }

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
