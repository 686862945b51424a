//! A pack: `packs/<name>/pack.toml` names the skill under test, its baseline skills tree, the
//! corpus, the tools with their fixture routes, the judge's laws and the categories.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::arm::ControlPart;
use super::corpus::{load_corpus, Sample};
use super::digest::{file_sha256, tree_digest};
use super::fixtures::{Fold, Route};
use super::judge::Law;
use super::record::manifest::InputHashes;
use crate::harness::agent::Budgets;
use crate::harness::backend::Sampling;
use crate::harness::prompt::{LOAD_SKILL, LOAD_SKILL_REFERENCE};
use crate::harness::skills::SkillTree;
use crate::harness::template::{Family, Message, Role};
use crate::harness::toolcall::CallFormat;

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
    /// The name the MCP server gives the tool, when the pack offers it under another.
    #[serde(default)]
    pub mcp_tool: Option<String>,
    /// Where a `command` or `mcp` program runs, from the pack's folder; the pack's folder if unset.
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
}

impl ToolSpec {
    /// The tool's argument schema: a typed tool's own, else the pack's `parameters`.
    fn schema(&self) -> Option<serde_json::Value> {
        match self.kind.as_str() {
            k if k == crate::tools::weather::TOOL_NAME => {
                Some(crate::tools::weather::parameters_schema())
            }
            _ => self.parameters.clone(),
        }
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
            env: self.env.clone(),
            timeout: self.timeout(),
        })
    }

    /// The server of an `mcp` tool, as started (after the pack has loaded).
    pub fn mcp_server(&self) -> Option<crate::tools::mcp::McpServerSpec> {
        (self.kind == MCP).then(|| crate::tools::mcp::McpServerSpec {
            argv: self.server.clone(),
            working_dir: self.working_dir.clone().unwrap_or_default(),
            env: self.env.clone(),
            timeout: self.timeout(),
        })
    }

    /// The tool's name on its MCP server.
    pub fn mcp_name(&self) -> &str {
        self.mcp_tool.as_deref().unwrap_or(&self.name)
    }
}

/// The fields that start a pack's own program belong to its kind alone; an error starts with
/// the field's name.
fn check_live_fields(t: &ToolSpec) -> Result<(), String> {
    let given = |field: &str| match field {
        "command" => !t.command.is_empty(),
        "server" => !t.server.is_empty(),
        "mcp_tool" => t.mcp_tool.is_some(),
        "working_dir" => t.working_dir.is_some(),
        "env" => !t.env.is_empty(),
        _ => t.timeout_seconds.is_some(),
    };
    let own: &[&str] = match t.kind.as_str() {
        COMMAND => &["command", "working_dir", "env", "timeout_seconds"],
        MCP => &[
            "server",
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
        "mcp_tool",
        "working_dir",
        "env",
        "timeout_seconds",
    ] {
        if given(field) && !own.contains(&field) {
            return Err(format!("{field}`: a {} tool has no `{field}`", t.kind));
        }
    }
    if t.kind == COMMAND && t.command.is_empty() {
        return Err("command` is missing: the program to run and its arguments, as a list".into());
    }
    if t.kind == MCP && t.server.is_empty() {
        return Err("server` is missing: the program that serves MCP over stdio and its arguments, as a list".into());
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

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleSpec {
    pub messages: Vec<ExampleMessage>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleMessage {
    pub role: Role,
    pub content: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingSpec {
    #[serde(default)]
    pub temperature: Option<f32>,
    #[serde(default)]
    pub top_k: Option<i32>,
    #[serde(default)]
    pub top_p: Option<f32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSpec {
    #[serde(default)]
    pub max_rounds: Option<u32>,
    #[serde(default)]
    pub max_generated_tokens: Option<u32>,
    #[serde(default)]
    pub max_tokens_per_round: Option<u32>,
    #[serde(default)]
    pub tool_output_chars: Option<usize>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PackFile {
    name: String,
    #[serde(default)]
    description: String,
    skill: String,
    skills_dir: PathBuf,
    corpus: PathBuf,
    categories: Vec<String>,
    #[serde(default)]
    instructions: String,
    #[serde(default = "yes")]
    preload: bool,
    #[serde(default)]
    call_format: Option<CallFormat>,
    #[serde(default)]
    chat_format: Option<Family>,
    #[serde(default)]
    constrained_calls: bool,
    #[serde(default)]
    control: ControlPart,
    #[serde(default)]
    sampling: Option<SamplingSpec>,
    #[serde(default)]
    budgets: Option<BudgetSpec>,
    #[serde(default)]
    examples: Vec<ExampleSpec>,
    /// Read one entry at a time, so that an error can name the entry's line.
    #[serde(default)]
    tools: Vec<toml::Value>,
    laws: Vec<toml::Value>,
}

fn yes() -> bool {
    true
}

/// SHA-256 of a TOML value as JSON with its keys in name order, so that formatting, comments
/// and key order in the file do not count as a change.
fn toml_digest(value: &toml::Value) -> String {
    fn sorted(value: &toml::Value) -> serde_json::Value {
        match value {
            toml::Value::Table(table) => {
                let mut keys: Vec<&String> = table.keys().collect();
                keys.sort();
                serde_json::Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&table[k])))
                        .collect(),
                )
            }
            toml::Value::Array(items) => {
                serde_json::Value::Array(items.iter().map(sorted).collect())
            }
            other => serde_json::to_value(other).unwrap_or(serde_json::Value::Null),
        }
    }
    super::digest::sha256_hex(sorted(value).to_string().as_bytes())
}

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
    /// Where `--pack` leads: [`pack_source::locate`](super::pack_source::locate).
    pub fn locate(name_or_path: &str) -> anyhow::Result<PathBuf> {
        super::pack_source::locate(name_or_path)
    }

    pub fn load(name_or_path: &str) -> anyhow::Result<Pack> {
        let file = Self::locate(name_or_path)?;
        let text = crate::base::input::read_input_to_string(&file).map_err(|e| {
            anyhow!(
                "{}: cannot read pack: {e} (a pack is a folder holding pack.toml, or one of the shipped packs: {})",
                file.display(),
                super::pack_source::shipped_names().join(", ")
            )
        })?;
        Self::parse(&text, &file)
    }

    pub fn parse(text: &str, file: &Path) -> anyhow::Result<Pack> {
        let shown = file.display();
        let raw: PackFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start].lines().count().max(1));
            match line {
                Some(line) => anyhow!("{shown}:{line}: {}", e.message()),
                None => anyhow!("{shown}: {}", e.message()),
            }
        })?;
        let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        check_name(&raw.name).map_err(|e| {
            anyhow!(
                "{}: field `name`: {e}",
                at_line(&shown, key_line(text, None, "name").as_ref())
            )
        })?;
        if raw.categories.is_empty() {
            bail!("{shown}: field `categories` is empty");
        }
        let declared: BTreeSet<&str> = raw.categories.iter().map(String::as_str).collect();
        if declared.len() != raw.categories.len() {
            bail!("{shown}: field `categories` lists a category twice");
        }

        let tool_lines = array_table_lines(text, "tools", raw.tools.len());
        let mut tools: Vec<ToolSpec> = Vec::new();
        for (i, value) in raw.tools.into_iter().enumerate() {
            let at = at_line(&shown, tool_lines.get(i));
            let t: ToolSpec = value
                .try_into()
                .map_err(|e| anyhow!("{at}: field `tools[{i}]`: {}", e.message()))?;
            if tools.iter().any(|other| other.name == t.name) {
                bail!(
                    "{at}: field `tools[{i}].name`: {:?} is listed twice",
                    t.name
                );
            }
            crate::harness::tools::check_tool_name(&t.name)
                .map_err(|e| anyhow!("{at}: field `tools[{i}].name`: {e}"))?;
            check_live_fields(&t).map_err(|e| anyhow!("{at}: field `tools[{i}].{e}"))?;
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
            if crate::tools::computed(&t.kind).is_some() {
                if t.fixtures.is_some() || !t.key_arguments.is_empty() {
                    bail!("{at}: field `tools[{i}].fixtures`: {} is computed, it answers every call itself; drop `fixtures` and `key_arguments`", t.kind);
                }
            } else {
                if t.fixtures.is_none() {
                    bail!("{at}: field `tools[{i}].fixtures` is missing: the folder of the tool's recordings");
                }
                if t.key_arguments.is_empty() {
                    bail!("{at}: field `tools[{i}].key_arguments` is empty");
                }
                // A key argument the tool does not take would key every recording by nothing.
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
            }
            tools.push(t);
        }

        if raw.laws.is_empty() {
            bail!("{shown}: field `laws`: a pack needs at least one law");
        }
        let law_lines = array_table_lines(text, "laws", raw.laws.len());
        let law_digests: Vec<String> = raw.laws.iter().map(toml_digest).collect();
        let without_laws_sha256 = {
            let mut table: toml::Table =
                toml::from_str(text).map_err(|e| anyhow!("{shown}: {e}"))?;
            table.remove("laws");
            toml_digest(&toml::Value::Table(table))
        };
        let mut laws: Vec<Law> = Vec::new();
        for (i, value) in raw.laws.into_iter().enumerate() {
            let at = at_line(&shown, law_lines.get(i));
            // Parsing also refuses a law that could never fail or never pass.
            let law: Law = value
                .try_into()
                .map_err(|e| anyhow!("{at}: field `laws[{i}]`: {}", e.message()))?;
            if laws.iter().any(|other| other.name == law.name) {
                bail!(
                    "{at}: field `laws[{i}].name`: law `{}` is defined twice",
                    law.name
                );
            }
            let scoped = law.categories.iter().flatten().map(|c| ("categories", c));
            let excepted = law
                .except_categories
                .iter()
                .map(|c| ("except_categories", c));
            for (key, c) in scoped.chain(excepted) {
                if !declared.contains(c.as_str()) {
                    bail!(
                        "{at}: field `laws[{i}].{key}`: law `{}`: category {c:?} is not declared in field `categories` ({})",
                        law.name,
                        raw.categories.join(", ")
                    );
                }
            }
            // A law about a tool the pack does not offer could never fail (or never pass).
            if let Some(tool) = law.check().tool() {
                let offered = tools.iter().any(|t| t.name == tool)
                    || [LOAD_SKILL, LOAD_SKILL_REFERENCE].contains(&tool);
                if !offered {
                    bail!(
                        "{at}: field `laws[{i}].tool`: law `{}`: tool {tool:?} is not in the pack's `tools`",
                        law.name
                    );
                }
            }
            laws.push(law);
        }
        let mut examples = Vec::new();
        for (i, e) in raw.examples.iter().enumerate() {
            if e.messages.is_empty() {
                bail!("{shown}: field `examples[{i}].messages` is empty");
            }
            examples.extend(
                e.messages
                    .iter()
                    .map(|m| Message::new(m.role, m.content.clone())),
            );
        }
        let mut sampling = Sampling::default();
        if let Some(s) = &raw.sampling {
            sampling.temperature = s.temperature.unwrap_or(sampling.temperature);
            sampling.top_k = s.top_k.unwrap_or(sampling.top_k);
            sampling.top_p = s.top_p.unwrap_or(sampling.top_p);
        }
        check_sampling(&sampling).map_err(|(key, e)| {
            let line = key_line(text, Some("sampling"), key);
            anyhow!(
                "{}: field `sampling.{key}`: {e}",
                at_line(&shown, line.as_ref())
            )
        })?;
        let mut budgets = Budgets::default();
        if let Some(b) = &raw.budgets {
            budgets.max_rounds = b.max_rounds.unwrap_or(budgets.max_rounds);
            budgets.max_generated_tokens = b
                .max_generated_tokens
                .unwrap_or(budgets.max_generated_tokens);
            budgets.max_tokens_per_round = b
                .max_tokens_per_round
                .unwrap_or(budgets.max_tokens_per_round);
            budgets.tool_output_chars = b.tool_output_chars.unwrap_or(budgets.tool_output_chars);
        }
        for (key, value) in [
            ("max_rounds", budgets.max_rounds),
            ("max_generated_tokens", budgets.max_generated_tokens),
            ("max_tokens_per_round", budgets.max_tokens_per_round),
        ] {
            if value == 0 {
                let line = key_line(text, Some("budgets"), key);
                bail!(
                    "{}: field `budgets.{key}`: must be at least 1 (0 leaves the model no room to answer)",
                    at_line(&shown, line.as_ref())
                );
            }
        }
        if budgets.tool_output_chars == 0 {
            let line = key_line(text, Some("budgets"), "tool_output_chars");
            bail!(
                "{}: field `budgets.tool_output_chars`: must be at least 1 (0 shows the model no tool result at all)",
                at_line(&shown, line.as_ref())
            );
        }
        if raw.constrained_calls && raw.call_format == Some(CallFormat::PythonList) {
            let line = key_line(text, None, "constrained_calls");
            bail!(
                "{}: field `constrained_calls`: there is no call grammar for call_format \"python_list\"; use markup or json_tag",
                at_line(&shown, line.as_ref())
            );
        }
        for t in &mut tools {
            t.fixtures = t.fixtures.as_ref().map(|f| dir.join(f));
            if t.is_live_program() {
                t.working_dir = Some(dir.join(t.working_dir.as_deref().unwrap_or(Path::new(""))));
            }
        }
        // The skill's name is a folder of the skills tree: the format's rule keeps it inside.
        if let Some(problem) = crate::harness::skills::lint::name_problems(&raw.skill)
            .into_iter()
            .next()
        {
            let line = key_line(text, None, "skill");
            bail!(
                "{}: field `skill`: {problem}",
                at_line(&shown, line.as_ref())
            );
        }
        Ok(Pack {
            name: raw.name,
            description: raw.description,
            skill: raw.skill,
            skills_dir: dir.join(&raw.skills_dir),
            corpus_path: dir.join(&raw.corpus),
            categories: raw.categories,
            instructions: raw.instructions,
            preload: raw.preload,
            call_format: raw.call_format,
            chat_format: raw.chat_format,
            constrained_calls: raw.constrained_calls,
            control: raw.control,
            sampling,
            budgets,
            examples,
            tools,
            law_lines: (0..laws.len()).map(|i| law_lines.get(i).copied()).collect(),
            laws,
            law_digests,
            without_laws_sha256,
            file: file.to_path_buf(),
            dir,
        })
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
        variant: Option<&Path>,
        more_variants: &[PathBuf],
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
            variant: variant.map(file).transpose()?,
            more_variants: more_variants
                .iter()
                .map(|p| file(p))
                .collect::<anyhow::Result<_>>()?,
            corpus: file(corpus)?,
            fixtures: format!("{:x}", fixtures.finalize()),
            pack_without_laws: Some(self.without_laws_sha256.clone()),
            laws: self.law_digests_by_name(),
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

/// The 1-based line of `key = …` in the table `[table]` (or before any table), if written so.
fn key_line(text: &str, table: Option<&str>, key: &str) -> Option<usize> {
    let mut current: Option<String> = None;
    for (index, line) in text.lines().enumerate() {
        let code = line.split('#').next().unwrap_or("").trim();
        if code.starts_with('[') {
            current = Some(code.trim_matches(['[', ']']).trim().to_string());
            continue;
        }
        let here = current.as_deref() == table;
        let key_here = code
            .split_once('=')
            .is_some_and(|(k, _)| k.trim().trim_matches('"') == key);
        if here && key_here {
            return Some(index + 1);
        }
    }
    None
}

/// `file:line` when the line is known, else the file alone.
fn at_line(shown: &impl std::fmt::Display, line: Option<&usize>) -> String {
    match line {
        Some(line) => format!("{shown}:{line}"),
        None => shown.to_string(),
    }
}

/// The 1-based lines of the `[[key]]` headers, when the array is written that way (one header
/// per entry); empty for an inline array, whose entries then go without a line.
fn array_table_lines(text: &str, key: &str, entries: usize) -> Vec<usize> {
    let header = format!("[[{key}]]");
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| {
            let code = line.split('#').next().unwrap_or("");
            code.chars()
                .filter(|c| !c.is_whitespace())
                .collect::<String>()
                == header
        })
        .map(|(index, _)| index + 1)
        .collect();
    if lines.len() == entries {
        lines
    } else {
        Vec::new()
    }
}
