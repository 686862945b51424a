//! A pack's tools as `pack.toml` declares them (`[[tools]]`): their kinds, the fields each kind
//! takes, and how a pack's own program or MCP server is started or reached.

use std::path::PathBuf;

use anyhow::bail;
use serde::Deserialize;

use crate::eval::fixture_store::Fold;
use crate::harness::tools::Effect;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    pub name: String,
    /// A typed tool built into skilleval (`weather_lookup`, or the computed `calculate` and
    /// `convert_units`); `command` for a program the pack names and `mcp` for a tool of an MCP
    /// server, both asked only while recording; or `recorded` for a tool that exists only as
    /// fixtures. All but the typed tools are described here.
    pub kind: String,
    /// A `command` tool's program and its arguments.
    #[serde(default)]
    pub command: Vec<String>,
    /// An `mcp` tool's server: the program that serves MCP over stdio, and its arguments.
    #[serde(default)]
    pub server: Vec<String>,
    /// Or the URL of an MCP server already running, reached by streamable HTTP.
    #[serde(default)]
    pub url: Option<String>,
    /// The name the MCP server gives the tool, when the pack offers it under another.
    #[serde(default)]
    pub mcp_tool: Option<String>,
    /// Where an `mcp` server runs, and where a `command` tool's relative paths are read from
    /// (it runs in its scratch folder), from the pack's folder; the pack's folder if unset.
    #[serde(default)]
    pub working_dir: Option<PathBuf>,
    /// The environment variables a `command` or `mcp` program may read (besides PATH and HOME).
    #[serde(default)]
    pub env: Vec<String>,
    /// How long one call to a `command` or `mcp` program may take.
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub parameters: Option<serde_json::Value>,
    /// Offered only once this skill is loaded; defaults to the typed tool's own gate.
    #[serde(default)]
    pub skill_gate: Option<String>,
    /// The folder of recordings; none for a computed tool, which answers every call itself.
    #[serde(default)]
    pub fixtures: Option<PathBuf>,
    #[serde(default)]
    pub key_arguments: Vec<String>,
    /// For a recorded tool whose recordings are its whole world (the folders of a made-up
    /// computer): the answer to a call with no recording, which is then not a gap but the
    /// world's own answer (no such folder).
    #[serde(default)]
    pub unrecorded: Option<String>,
    #[serde(default)]
    pub folds: Vec<Fold>,
    /// Listed by name until the model calls `tool_search` for it (`harness::deferred`).
    #[serde(default)]
    pub defer: bool,
    /// The group a deferred tool is listed under.
    #[serde(default)]
    pub group: Option<String>,
    /// `read` (the default) or `write`: a write goes through the scripted user's approval, and
    /// in a pack with a write every tool answers from the writes before it (`eval::replay`).
    #[serde(default)]
    pub effect: Effect,
    /// A `command` tool's starting state: a folder copied into the scratch folder each
    /// recorded call runs in (named by `SKILLEVAL_SCRATCH`), before the conversation's writes.
    #[serde(default)]
    pub world: Option<PathBuf>,
    /// Where `pack.toml` declares the tool (`file:line: field `tools[i]`), for a message about
    /// one of its fields after the pack has loaded; none for a skill's script.
    #[serde(skip)]
    pub declared_at: Option<String>,
    /// The pack's folder, set when the pack loads; a `command` program is told it.
    #[serde(skip)]
    pub pack_dir: Option<PathBuf>,
    /// A skill's Python script (`scripts.rs`): its parser, which makes each call's command line.
    #[serde(skip)]
    pub script: Option<crate::tools::script::ScriptInterface>,
}

impl ToolSpec {
    /// The tool's argument schema: a typed tool's own, else the pack's `parameters`.
    pub(super) fn schema(&self) -> Option<serde_json::Value> {
        match self.kind.as_str() {
            k if k == crate::tools::weather::TOOL_NAME => {
                Some(crate::tools::weather::parameters_schema())
            }
            _ => self.parameters.clone(),
        }
    }
}

impl super::Pack {
    /// Whether a call written in a corpus (a reference step) is one the model could make: its
    /// tool is the pack's or a built-in, and its arguments are those the tool's schema names,
    /// of the types it asks (after the conversions a model's call gets), none missing.
    pub fn check_written_call(
        &self,
        tool: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), String> {
        let schema = match self.tools.iter().find(|t| t.name == tool) {
            Some(spec) => spec.schema(),
            None => match crate::harness::builtins::schema_of(tool) {
                Some(schema) => Some(schema),
                None => return Err(format!("{tool:?} is no tool of the pack")),
            },
        };
        let Some(schema) = schema else {
            return Ok(());
        };
        if let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) {
            if let Some(unknown) = arguments.keys().find(|k| !properties.contains_key(*k)) {
                let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                return Err(format!(
                    "{tool}: argument {unknown:?} is not one the tool takes (it takes: {})",
                    known.join(", ")
                ));
            }
        }
        crate::harness::toolcall::coerce::coerce_call_arguments(tool, arguments, &schema)
            .map(drop)
            .map_err(|e| format!("{tool}: {e}"))
    }
}

pub const RECORDED: &str = "recorded";
pub const COMMAND: &str = "command";
pub const MCP: &str = "mcp";

/// The longest one call to a pack's own program may take unless the pack says otherwise.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 30.0;

impl ToolSpec {
    /// A tool answered while recording by a program the pack names (`command` or `mcp`).
    pub fn is_live_program(&self) -> bool {
        self.kind == COMMAND || self.kind == MCP
    }

    /// A tool `--record` can ask: a typed tool with a live service, or a pack's own program.
    pub fn can_record(&self) -> bool {
        self.is_live_program() || self.kind == crate::tools::weather::TOOL_NAME
    }

    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS))
    }

    /// The program of a `command` tool, as started (after the pack has loaded).
    pub fn command_tool(&self) -> Option<crate::tools::command::CommandTool> {
        (self.kind == COMMAND).then(|| crate::tools::command::CommandTool {
            argv: self.command.clone(),
            working_dir: self.working_dir.clone().unwrap_or_default(),
            pack_dir: self
                .pack_dir
                .clone()
                .or_else(|| self.working_dir.clone())
                .unwrap_or_default(),
            env: self.env.clone(),
            timeout: self.timeout(),
            scratch: None,
            literal_args: vec![],
        })
    }

    /// The program of a `command` tool as started for one call: a script gets the call's
    /// arguments as its command line too.
    pub fn program_for(
        &self,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<crate::tools::command::CommandTool> {
        let mut program = self.command_tool()?;
        if let Some(script) = &self.script {
            program.literal_args = script.command_line(arguments);
        }
        Some(program)
    }

    /// The server of an `mcp` tool, as started (after the pack has loaded).
    pub fn mcp_server(&self) -> Option<crate::tools::mcp::McpServerSpec> {
        use crate::tools::mcp::McpReach;
        (self.kind == MCP).then(|| crate::tools::mcp::McpServerSpec {
            reach: match &self.url {
                Some(url) => McpReach::Http { url: url.clone() },
                None => McpReach::Stdio {
                    argv: self.server.clone(),
                    working_dir: self.working_dir.clone().unwrap_or_default(),
                    env: self.env.clone(),
                },
            },
            timeout: self.timeout(),
        })
    }

    /// The tool's name on its MCP server.
    pub fn mcp_name(&self) -> &str {
        self.mcp_tool.as_deref().unwrap_or(&self.name)
    }
}

/// Checks the `[[tools]]` entry `tools[i]`, written at `at`: the fields of its kind, a kind
/// skilleval knows, and the recordings a tool that is not computed needs.
pub(super) fn check_tool(t: &ToolSpec, i: usize, at: &str) -> anyhow::Result<()> {
    crate::harness::tools::check_tool_name(&t.name)
        .map_err(|e| anyhow::anyhow!("{at}: field `tools[{i}].name`: {e}"))?;
    check_live_fields(t).map_err(|e| anyhow::anyhow!("{at}: field `tools[{i}].{e}"))?;
    if let Some(group) = t
        .group
        .as_deref()
        .filter(|g| g.trim().is_empty() || g.contains(['\n', '\r']))
    {
        bail!("{at}: field `tools[{i}].group`: {group:?} is no group name: give one line of text, or drop `group`");
    }
    if t.group.is_some() && !t.defer {
        bail!("{at}: field `tools[{i}].group`: only a deferred tool is listed under a group; add `defer = true` or drop `group`");
    }
    check_kind(t, i, at)?;
    if t.effect == Effect::Write && crate::tools::is_typed_tool(&t.kind) {
        bail!("{at}: field `tools[{i}].effect`: {} only reads; `write` is for a pack's own tool (command, mcp or recorded)", t.kind);
    }
    if crate::tools::computed(&t.kind).is_some() {
        if t.fixtures.is_some() || !t.key_arguments.is_empty() {
            bail!("{at}: field `tools[{i}].fixtures`: {} is computed, it answers every call itself; drop `fixtures` and `key_arguments`", t.kind);
        }
        return Ok(());
    }
    check_recordings(t, i, at)
}

/// The fields that start a pack's own program belong to its kind alone; an error starts with
/// the field's name.
fn check_live_fields(t: &ToolSpec) -> Result<(), String> {
    let given = |field: &str| match field {
        "command" => !t.command.is_empty(),
        "server" => !t.server.is_empty(),
        "url" => t.url.is_some(),
        "mcp_tool" => t.mcp_tool.is_some(),
        "working_dir" => t.working_dir.is_some(),
        "env" => !t.env.is_empty(),
        "world" => t.world.is_some(),
        _ => t.timeout_seconds.is_some(),
    };
    let own: &[&str] = match t.kind.as_str() {
        COMMAND => &["command", "working_dir", "env", "timeout_seconds", "world"],
        MCP => &[
            "server",
            "url",
            "mcp_tool",
            "working_dir",
            "env",
            "timeout_seconds",
        ],
        _ => &[],
    };
    for field in [
        "command",
        "server",
        "url",
        "mcp_tool",
        "working_dir",
        "env",
        "timeout_seconds",
        "world",
    ] {
        if given(field) && !own.contains(&field) {
            return Err(format!("{field}`: a {} tool has no `{field}`", t.kind));
        }
    }
    if t.kind == COMMAND && t.command.is_empty() {
        return Err("command` is missing: the program to run and its arguments, as a list".into());
    }
    if t.kind == MCP {
        check_mcp_reach(t)?;
    }
    if let Some(seconds) = t.timeout_seconds {
        if !(seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0) {
            return Err(format!(
                "timeout_seconds`: {seconds} must be above 0 and at most 3600"
            ));
        }
    }
    if let Some(name) = t.env.iter().find(|n| n.is_empty() || n.contains('=')) {
        return Err(format!(
            "env`: {name:?} is not a variable name (list names; values come from the environment)"
        ));
    }
    Ok(())
}

/// An `mcp` tool's server is a program (`server`) or a URL (`url`), one of the two; a server
/// at a URL is not started by skilleval, so it has no folder or environment of the pack's.
fn check_mcp_reach(t: &ToolSpec) -> Result<(), String> {
    match (&t.url, t.server.is_empty()) {
        (None, true) => Err("server` is missing: the program that serves MCP over stdio and its arguments, as a list (or `url`, the URL of a streamable-HTTP MCP server)".into()),
        (Some(_), false) => Err("url`: an mcp tool's server is either a program (`server`, over stdio) or a URL (`url`, streamable HTTP), not both".into()),
        (Some(url), true) => {
            crate::tools::mcp_http::check_url(url).map_err(|e| format!("url`: {e}"))?;
            for (field, given) in [("working_dir", t.working_dir.is_some()), ("env", !t.env.is_empty())] {
                if given {
                    return Err(format!("{field}`: a server at a `url` runs on its own, not started by skilleval; `{field}` is for a `server` program"));
                }
            }
            Ok(())
        }
        (None, false) => Ok(()),
    }
}

/// A kind skilleval knows, with what that kind needs: a tool the pack describes has a
/// `description` and `parameters`, and only a recorded tool's world is its recordings.
fn check_kind(t: &ToolSpec, i: usize, at: &str) -> anyhow::Result<()> {
    match t.kind.as_str() {
        kind @ (RECORDED | COMMAND | MCP) => {
            if t.description.is_none() || t.parameters.is_none() {
                let hint = if kind == MCP {
                    " (`skilleval init --mcp` writes both from the server's tools/list)"
                } else {
                    ""
                };
                bail!("{at}: field `tools[{i}]`: a {kind} tool needs `description` and `parameters`{hint}");
            }
            if kind != RECORDED && t.unrecorded.is_some() {
                bail!("{at}: field `tools[{i}].unrecorded`: only a recorded tool's world is its recordings; a {kind} tool answers live, so an unrecorded call is a gap");
            }
        }
        // A typed tool stands for a live service, which may know what was not recorded.
        kind if t.unrecorded.is_some() => bail!(
            "{at}: field `tools[{i}].unrecorded`: only a recorded tool's world is its recordings; {kind} calls a service, so an unrecorded call is a gap"
        ),
        kind if crate::tools::is_typed_tool(kind) => {}
        other => bail!(
            "{at}: field `tools[{i}].kind`: unknown tool kind {other:?}; known: command, mcp, recorded, {}",
            crate::tools::TYPED_TOOLS.join(", ")
        ),
    }
    Ok(())
}

/// A tool answered from recordings names their folder and the arguments that key them, each
/// one the tool takes: a key argument it does not take would key every recording by nothing.
fn check_recordings(t: &ToolSpec, i: usize, at: &str) -> anyhow::Result<()> {
    if t.fixtures.is_none() {
        bail!("{at}: field `tools[{i}].fixtures` is missing: the folder of the tool's recordings");
    }
    // A tool that takes no argument has one answer in each state: nothing keys it.
    let takes_none = t
        .schema()
        .and_then(|s| {
            s.get("properties")
                .and_then(|p| p.as_object())
                .map(|p| p.is_empty())
        })
        .unwrap_or(false);
    if t.key_arguments.is_empty() && !takes_none {
        bail!("{at}: field `tools[{i}].key_arguments` is empty");
    }
    let schema = t.schema();
    let properties = schema
        .as_ref()
        .and_then(|p| p.get("properties"))
        .and_then(serde_json::Value::as_object);
    if let Some(properties) = properties {
        if let Some(missing) = t
            .key_arguments
            .iter()
            .find(|k| !properties.contains_key(k.as_str()))
        {
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            bail!(
                "{at}: field `tools[{i}].key_arguments`: {missing:?} is not an argument of tool {:?} (its `parameters` have: {})",
                t.name,
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            );
        }
    }
    Ok(())
}
