//! Reading `pack.toml`: the file's own shape, and `Pack::parse` in its steps, each check naming
//! the file, the line where it can and the field of what it refuses.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use serde::Deserialize;

use super::scripts::{script_tools, DeclaredExecutable};
use super::tools::{check_tool, ToolSpec};
use super::{check_name, check_sampling, Pack};
use crate::eval::arm::ControlPart;
use crate::eval::judge::Law;
use crate::harness::agent::Budgets;
use crate::harness::backend::Sampling;
use crate::harness::builtins::{BUILT_IN_TOOLS, READ_TOOL_OUTPUT, TOOL_SEARCH};
use crate::harness::examples::Presentation;
use crate::harness::spill::LongOutput;
use crate::harness::template::{Family, Message, Role};
use crate::harness::toolcall::CallFormat;

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
    skill_examples: Presentation,
    #[serde(default)]
    long_tool_output: LongOutput,
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
    /// The executables of skills' `scripts/` that are not Python, one line each.
    #[serde(default)]
    script_executables: BTreeMap<String, DeclaredExecutable>,
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
    crate::eval::digest::sha256_hex(sorted(value).to_string().as_bytes())
}

/// `pack.toml`'s text and its path as errors show it.
struct Source<'a> {
    text: &'a str,
    shown: std::path::Display<'a>,
}

impl Source<'_> {
    /// `file:line` of `key = …` in the table `[table]` (or before any table), else the file.
    fn at_key(&self, table: Option<&str>, key: &str) -> String {
        at_line(&self.shown, key_line(self.text, table, key).as_ref())
    }
}

/// The pack's laws in order, with the line of each one's header and its digest.
struct Laws {
    laws: Vec<Law>,
    lines: Vec<Option<usize>>,
    digests: Vec<String>,
}

impl Pack {
    /// The pack `pack.toml` at `file` declares, from its `text`: every field checked, the laws
    /// compiled, the tools' folders placed under the pack's own.
    pub fn parse(text: &str, file: &Path) -> anyhow::Result<Pack> {
        let source = Source {
            text,
            shown: file.display(),
        };
        let raw = read_pack_file(&source)?;
        let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        check_name(&raw.name)
            .map_err(|e| anyhow!("{}: field `name`: {e}", source.at_key(None, "name")))?;
        let declared = declared_categories(&raw.categories, &source)?;
        let mut tools = tools(raw.tools, &source)?;
        let skills_dir = dir.join(&raw.skills_dir);
        add_script_tools(
            &mut tools,
            &dir,
            &skills_dir,
            &raw.script_executables,
            &source,
        )?;
        let spills = raw.long_tool_output == LongOutput::Spill;
        let laws = laws(
            raw.laws,
            &declared,
            &raw.categories,
            &tools,
            spills,
            &source,
        )?;
        let without_laws_sha256 = digest_without_laws(&source)?;
        let examples = examples(&raw.examples, &source)?;
        let sampling = sampling(raw.sampling.as_ref(), &source)?;
        let budgets = budgets(raw.budgets.as_ref(), &source)?;
        check_constrained_calls(raw.constrained_calls, raw.call_format, &source)?;
        check_worlds(&tools, &dir, &source)?;
        place_tools(&mut tools, &dir);
        check_skill_name(&raw.skill, &source)?;
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
            skill_examples: raw.skill_examples,
            long_tool_output: raw.long_tool_output,
            control: raw.control,
            sampling,
            budgets,
            examples,
            tools,
            laws: laws.laws,
            law_lines: laws.lines,
            law_digests: laws.digests,
            without_laws_sha256,
            file: file.to_path_buf(),
            dir,
        })
    }
}

/// The skills' scripts as tools, after the pack's own `[[tools]]`, whose names they may not take.
fn add_script_tools(
    tools: &mut Vec<ToolSpec>,
    dir: &Path,
    skills_dir: &Path,
    declared: &BTreeMap<String, DeclaredExecutable>,
    source: &Source,
) -> anyhow::Result<()> {
    let at = source.at_key(None, "skills_dir");
    let found = script_tools(dir, skills_dir, declared, &at)?;
    for script in found {
        if let Some(i) = tools.iter().position(|t| t.name == script.name) {
            bail!(
                "{}: field `tools[{i}].name`: {:?} is also the tool of script {}; rename one",
                source.shown,
                script.name,
                script
                    .command
                    .last()
                    .map(String::as_str)
                    .unwrap_or_default()
            );
        }
        tools.push(script);
    }
    Ok(())
}

/// The file as TOML of the pack's shape; an error names its line.
fn read_pack_file(source: &Source) -> anyhow::Result<PackFile> {
    let shown = &source.shown;
    toml::from_str(source.text).map_err(|e| {
        let line = e
            .span()
            .map(|s| source.text[..s.start].lines().count().max(1));
        match line {
            Some(line) => match field_at_line(source.text, line) {
                // TOML's integers are 64-bit: a longer number fails before any field's own
                // check could say its limit.
                Some(field) if e.message().contains("number too large") => anyhow!(
                    "{shown}:{line}: field `{field}`: the number is too large: {}",
                    match field.as_str() {
                        "budgets.tool_output_chars" =>
                            format!("at most {TOOL_OUTPUT_CHARS_MAX} characters"),
                        f if f.starts_with("budgets.") => format!("at most {}", u32::MAX),
                        _ => format!("TOML's integers end at {}", i64::MAX),
                    }
                ),
                Some(field) => anyhow!("{shown}:{line}: field `{field}`: {}", e.message().trim()),
                None => anyhow!("{shown}:{line}: {}", e.message()),
            },
            None => anyhow!("{shown}: {}", e.message()),
        }
    })
}

/// The dotted key a `key = value` line (1-based) sets, under the table header above it.
fn field_at_line(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.get(line.checked_sub(1)?)?;
    let (key, _) = at.split_once('=')?;
    let key = key.trim();
    if key.is_empty() || key.starts_with('[') || key.starts_with('#') {
        return None;
    }
    let table = lines[..line - 1]
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    Some(match table {
        Some(table) if !table.is_empty() => format!("{table}.{key}"),
        _ => key.to_string(),
    })
}

/// The declared categories, at least one and each once.
fn declared_categories<'a>(
    categories: &'a [String],
    source: &Source,
) -> anyhow::Result<BTreeSet<&'a str>> {
    let shown = &source.shown;
    if categories.is_empty() {
        bail!("{shown}: field `categories` is empty");
    }
    let declared: BTreeSet<&str> = categories.iter().map(String::as_str).collect();
    if declared.len() != categories.len() {
        bail!("{shown}: field `categories` lists a category twice");
    }
    Ok(declared)
}

/// The `[[tools]]` entries, each checked and named once.
fn tools(entries: Vec<toml::Value>, source: &Source) -> anyhow::Result<Vec<ToolSpec>> {
    let lines = array_table_lines(source.text, "tools", entries.len());
    let mut tools: Vec<ToolSpec> = Vec::new();
    for (i, value) in entries.into_iter().enumerate() {
        let at = at_line(&source.shown, lines.get(i));
        let mut t: ToolSpec = value
            .try_into()
            .map_err(|e| anyhow!("{at}: field `tools[{i}]`: {}", e.message()))?;
        t.declared_at = Some(format!("{at}: field `tools[{i}]"));
        if tools.iter().any(|other| other.name == t.name) {
            bail!(
                "{at}: field `tools[{i}].name`: {:?} is listed twice",
                t.name
            );
        }
        check_tool(&t, i, &at)?;
        tools.push(t);
    }
    Ok(tools)
}

/// The `[[laws]]` entries, at least one: each compiled (which refuses a law that could never
/// fail or never pass), named once, scoped to declared categories and about an offered tool.
fn laws(
    entries: Vec<toml::Value>,
    declared: &BTreeSet<&str>,
    categories: &[String],
    tools: &[ToolSpec],
    spills: bool,
    source: &Source,
) -> anyhow::Result<Laws> {
    if entries.is_empty() {
        bail!(
            "{}: field `laws`: a pack needs at least one law",
            source.shown
        );
    }
    let lines = array_table_lines(source.text, "laws", entries.len());
    let digests: Vec<String> = entries.iter().map(toml_digest).collect();
    let mut laws: Vec<Law> = Vec::new();
    for (i, value) in entries.into_iter().enumerate() {
        let at = at_line(&source.shown, lines.get(i));
        let law: Law = value
            .try_into()
            .map_err(|e| anyhow!("{at}: field `laws[{i}]`: {}", e.message()))?;
        if laws.iter().any(|other| other.name == law.name) {
            bail!(
                "{at}: field `laws[{i}].name`: law `{}` is defined twice",
                law.name
            );
        }
        check_law_scope(&law, i, &at, declared, categories)?;
        check_law_tool(&law, i, &at, tools, spills)?;
        laws.push(law);
    }
    Ok(Laws {
        lines: (0..laws.len()).map(|i| lines.get(i).copied()).collect(),
        laws,
        digests,
    })
}

/// A law's `categories` and `except_categories` are declared ones.
fn check_law_scope(
    law: &Law,
    i: usize,
    at: &str,
    declared: &BTreeSet<&str>,
    categories: &[String],
) -> anyhow::Result<()> {
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
                categories.join(", ")
            );
        }
    }
    Ok(())
}

/// A law about a tool the pack does not offer could never fail (or never pass); `tool_search`
/// is offered only beside a deferred tool, and `read_tool_output` only where output spills.
fn check_law_tool(
    law: &Law,
    i: usize,
    at: &str,
    tools: &[ToolSpec],
    spills: bool,
) -> anyhow::Result<()> {
    if let crate::eval::judge::Check::CallsAfter { after, .. } = law.check() {
        if !tools.iter().any(|t| &t.name == after) && !BUILT_IN_TOOLS.contains(&after.as_str()) {
            bail!(
                "{at}: field `laws[{i}].after`: law `{}`: tool {after:?} is not in the pack's `tools`",
                law.name
            );
        }
    }
    let Some(tool) = law.check().tool() else {
        return Ok(());
    };
    if tool == TOOL_SEARCH && !tools.iter().any(|t| t.defer) {
        bail!(
            "{at}: field `laws[{i}].tool`: law `{}`: {TOOL_SEARCH} is offered only when a tool has `defer = true`, and no tool of this pack has",
            law.name
        );
    }
    if tool == READ_TOOL_OUTPUT && !spills {
        bail!(
            "{at}: field `laws[{i}].tool`: law `{}`: {READ_TOOL_OUTPUT} is offered only with `long_tool_output = \"spill\"`",
            law.name
        );
    }
    let offered = tools.iter().any(|t| t.name == tool) || BUILT_IN_TOOLS.contains(&tool);
    if !offered {
        bail!(
            "{at}: field `laws[{i}].tool`: law `{}`: tool {tool:?} is not in the pack's `tools`",
            law.name
        );
    }
    Ok(())
}

fn digest_without_laws(source: &Source) -> anyhow::Result<String> {
    let mut table: toml::Table =
        toml::from_str(source.text).map_err(|e| anyhow!("{}: {e}", source.shown))?;
    table.remove("laws");
    Ok(toml_digest(&toml::Value::Table(table)))
}

/// The few-shot turns of every `[[examples]]` entry, in order; none may be empty.
fn examples(examples: &[ExampleSpec], source: &Source) -> anyhow::Result<Vec<Message>> {
    let mut turns = Vec::new();
    for (i, e) in examples.iter().enumerate() {
        if e.messages.is_empty() {
            bail!("{}: field `examples[{i}].messages` is empty", source.shown);
        }
        turns.extend(
            e.messages
                .iter()
                .map(|m| Message::new(m.role, m.content.clone())),
        );
    }
    Ok(turns)
}

/// The sampler's defaults with the pack's `[sampling]` over them, checked.
fn sampling(spec: Option<&SamplingSpec>, source: &Source) -> anyhow::Result<Sampling> {
    let mut sampling = Sampling::default();
    if let Some(s) = spec {
        sampling.temperature = s.temperature.unwrap_or(sampling.temperature);
        sampling.top_k = s.top_k.unwrap_or(sampling.top_k);
        sampling.top_p = s.top_p.unwrap_or(sampling.top_p);
    }
    check_sampling(&sampling).map_err(|(key, e)| {
        anyhow!(
            "{}: field `sampling.{key}`: {e}",
            source.at_key(Some("sampling"), key)
        )
    })?;
    Ok(sampling)
}

/// The most characters of a tool result the model may be shown: more than any context holds.
pub const TOOL_OUTPUT_CHARS_MAX: usize = 1_000_000;

/// The default budgets with the pack's `[budgets]` over them, none of them 0.
fn budgets(spec: Option<&BudgetSpec>, source: &Source) -> anyhow::Result<Budgets> {
    let mut budgets = Budgets::default();
    if let Some(b) = spec {
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
            bail!(
                "{}: field `budgets.{key}`: must be at least 1 (0 leaves the model no room to answer)",
                source.at_key(Some("budgets"), key)
            );
        }
    }
    if budgets.tool_output_chars == 0 {
        bail!(
            "{}: field `budgets.tool_output_chars`: must be at least 1 (0 shows the model no tool result at all)",
            source.at_key(Some("budgets"), "tool_output_chars")
        );
    }
    if budgets.tool_output_chars > TOOL_OUTPUT_CHARS_MAX {
        bail!(
            "{}: field `budgets.tool_output_chars`: {} is more than {TOOL_OUTPUT_CHARS_MAX}, the most characters of one tool result any context holds",
            source.at_key(Some("budgets"), "tool_output_chars"),
            budgets.tool_output_chars
        );
    }
    Ok(budgets)
}

/// Constrained calls need a call grammar, which only markup and json_tag have.
fn check_constrained_calls(
    constrained_calls: bool,
    call_format: Option<CallFormat>,
    source: &Source,
) -> anyhow::Result<()> {
    let Some(format) = call_format.filter(|_| constrained_calls) else {
        return Ok(());
    };
    if !matches!(format, CallFormat::Markup | CallFormat::JsonTag) {
        let name = serde_json::to_value(format).unwrap_or_default();
        bail!(
            "{}: field `constrained_calls`: there is no call grammar for call_format {name}; use markup or json_tag",
            source.at_key(None, "constrained_calls")
        );
    }
    Ok(())
}

/// A tool's fixtures and a program's working folder, from the pack's folder.
/// A tool's `world` is a folder inside the pack's own, in a pack with a write: elsewhere its
/// state would never change, and a world outside the pack would make recordings of whatever
/// that folder holds on this machine.
fn check_worlds(tools: &[ToolSpec], dir: &Path, source: &Source) -> anyhow::Result<()> {
    let lines = array_table_lines(source.text, "tools", tools.len());
    let writes = tools
        .iter()
        .any(|t| t.effect == crate::harness::tools::Effect::Write);
    for (i, t) in tools.iter().enumerate() {
        let Some(world) = &t.world else { continue };
        let at = at_line(&source.shown, lines.get(i));
        let field = format!("{at}: field `tools[{i}].world`");
        if !writes {
            bail!("{field}: no tool of this pack has `effect = \"write\"`, so its state never changes; drop `world`, or mark the tool that writes");
        }
        let inside = !world.as_os_str().is_empty()
            && world.is_relative()
            && world.components().all(|c| {
                matches!(
                    c,
                    std::path::Component::Normal(_) | std::path::Component::CurDir
                )
            });
        if !inside {
            bail!("{field}: {:?} is not a folder inside the pack's own: give a relative path without `..`", world.display().to_string());
        }
        let placed = dir.join(world);
        match std::fs::symlink_metadata(&placed) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => bail!("{field}: {} is not a folder", placed.display()),
            Err(e) => bail!("{field}: {}: {e}", placed.display()),
        }
    }
    Ok(())
}

fn place_tools(tools: &mut [ToolSpec], dir: &Path) {
    for t in tools {
        t.fixtures = t.fixtures.as_ref().map(|f| dir.join(f));
        if t.is_live_program() {
            t.working_dir = Some(dir.join(t.working_dir.as_deref().unwrap_or(Path::new(""))));
        }
        t.world = t.world.as_ref().map(|w| dir.join(w));
        t.pack_dir = Some(dir.to_path_buf());
    }
}

/// The skill's name is a folder of the skills tree: the format's rule keeps it inside.
fn check_skill_name(skill: &str, source: &Source) -> anyhow::Result<()> {
    if let Some(problem) = crate::harness::skills::lint::name_problems(skill)
        .into_iter()
        .next()
    {
        bail!("{}: field `skill`: {problem}", source.at_key(None, "skill"));
    }
    Ok(())
}

/// The 1-based line of `key = …` in the table `[table]` (or before any table), if written so.
pub(super) fn key_line(text: &str, table: Option<&str>, key: &str) -> Option<usize> {
    // From the parsed document's spans, so that a multi-line string or array whose text holds
    // `key = …` or `[…]` is not taken for the key or a table; a line scan when it does not parse.
    if let Ok(document) = toml_edit::ImDocument::parse(text) {
        let root = document.as_table();
        let found = match table {
            None => root.get_key_value(key).map(|(k, _)| k.span()),
            Some(name) => match root.get(name) {
                Some(toml_edit::Item::Table(t)) => t.get_key_value(key).map(|(k, _)| k.span()),
                Some(toml_edit::Item::ArrayOfTables(tables)) => tables
                    .iter()
                    .find_map(|t| t.get_key_value(key))
                    .map(|(k, _)| k.span()),
                _ => None,
            },
        };
        return found
            .flatten()
            .map(|span| text[..span.start].matches('\n').count() + 1);
    }
    key_line_by_lines(text, table, key)
}

fn key_line_by_lines(text: &str, table: Option<&str>, key: &str) -> Option<usize> {
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
pub(super) fn at_line(shown: &impl std::fmt::Display, line: Option<&usize>) -> String {
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
