//! `skilleval init`: a new pack for a skill from its SKILL.md, its tools from the command line.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{anyhow, bail};
use clap::Args;

use crate::eval::init::{self, InitOptions};
use crate::eval::law_cases;
use crate::eval::pack::Pack;

pub const EXAMPLES: &str = "Examples:
  skilleval init --skill my-skills/currency/SKILL.md --out packs/currency --command exchange_rate='python3 tools/rates.py' --args exchange_rate=base,quote --prompt exchange_rate='How many yen is a euro?'
  skilleval init --skill my-skills/notes --out packs/notes --mcp 'npx -y @modelcontextprotocol/server-filesystem notes'
  skilleval init --skill my-skills/search --out packs/search --mcp http://127.0.0.1:3001/mcp";

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The skill: its SKILL.md or the folder holding it (its tools come from `allowed-tools`)
    #[arg(long)]
    pub skill: PathBuf,
    /// The folder to write the pack to (it may hold the skill and its tools, not a pack)
    #[arg(long)]
    pub out: PathBuf,
    /// The pack's name (the skill's name by default)
    #[arg(long)]
    pub name: Option<String>,
    /// A tool answered by a program: TOOL='PROGRAM ARGS' (run from the pack's folder, the call's
    /// arguments as JSON on stdin, its stdout the answer)
    #[arg(long = "command", value_name = "TOOL=PROGRAM ARGS")]
    pub commands: Vec<String>,
    /// The MCP server the skill's other tools come from: 'PROGRAM ARGS' (started, over stdio)
    /// or the URL of a running streamable-HTTP server (http://HOST:PORT/mcp); its tools/list
    /// gives their descriptions and schemas
    #[arg(long, value_name = "PROGRAM ARGS|URL")]
    pub mcp: Option<String>,
    /// A tool answered from hand-written fixtures only
    #[arg(long = "recorded", value_name = "TOOL")]
    pub recorded: Vec<String>,
    /// The arguments of a command or recorded tool: TOOL=ARG,ARG (all strings, all required;
    /// they key its recordings); TOOL= for a tool that takes none
    #[arg(long = "args", value_name = "TOOL=ARG,…")]
    pub arguments: Vec<String>,
    /// A tool that changes something (a command or recorded tool): its samples become
    /// conversations whose scripted user says yes to a confirmation, with laws that the write
    /// is confirmed first and never runs without that yes; a command tool's state lives in
    /// the pack's `world` folder
    #[arg(long = "write", value_name = "TOOL")]
    pub writes: Vec<String>,
    /// What a command or recorded tool does, as the model reads it: TOOL=TEXT
    #[arg(long = "describe", value_name = "TOOL=TEXT")]
    pub descriptions: Vec<String>,
    /// A starter prompt: TOOL=TEXT for one that needs the tool, none=TEXT for one that needs no
    /// tool (three placeholders a category otherwise)
    #[arg(long = "prompt", value_name = "TOOL|none=TEXT")]
    pub prompts: Vec<String>,
}

fn split_pair<'a>(flag: &str, value: &'a str) -> anyhow::Result<(&'a str, &'a str)> {
    value
        .split_once('=')
        .map(|(k, v)| (k.trim(), v.trim()))
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .ok_or_else(|| anyhow!("--{flag} {value:?}: write it as NAME=VALUE"))
}

/// A command line split into words as a shell would for plain words and quotes.
fn split_words(flag: &str, text: &str) -> anyhow::Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        bail!("--{flag} {text:?}: a quote is not closed");
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        bail!("--{flag}: no program given");
    }
    Ok(words)
}

pub fn run(args: InitArgs) -> anyhow::Result<u8> {
    // The pack is a folder: a file or a device there ("File exists" from create_dir_all) is
    // said as what it is.
    if let Ok(meta) = std::fs::metadata(&args.out) {
        if !meta.is_dir() {
            anyhow::bail!(
                "--out {}: is {}, not a folder; name a folder for the new pack (one that does not exist yet, or an empty one)",
                args.out.display(),
                if meta.is_file() { "a file" } else { "a device, FIFO or socket" }
            );
        }
    }
    let mut commands = BTreeMap::new();
    for value in &args.commands {
        let (tool, argv) = split_pair("command", value)?;
        commands.insert(tool.to_string(), split_words("command", argv)?);
    }
    let mut arguments = BTreeMap::new();
    for value in &args.arguments {
        // `TOOL=` alone: a tool that takes no argument.
        let (tool, names) = match value.trim().strip_suffix('=') {
            Some(tool) if !tool.is_empty() && !tool.contains('=') => (tool.trim(), ""),
            _ => split_pair("args", value)?,
        };
        let names: Vec<String> = names
            .split(',')
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
        arguments.insert(tool.to_string(), names);
    }
    let mut descriptions = BTreeMap::new();
    for value in &args.descriptions {
        let (tool, text) = split_pair("describe", value)?;
        descriptions.insert(tool.to_string(), text.to_string());
    }
    let mut prompts = Vec::new();
    for value in &args.prompts {
        let (key, text) = split_pair("prompt", value)?;
        prompts.push((key.to_string(), text.to_string()));
    }
    let mcp = args
        .mcp
        .as_deref()
        .map(|m| split_words("mcp", m))
        .transpose()?;
    let written = init::init(&InitOptions {
        skill: args.skill,
        out: args.out.clone(),
        name: args.name,
        commands,
        descriptions,
        arguments,
        mcp,
        recorded: args.recorded,
        writes: args.writes.clone(),
        prompts,
    })?;
    crate::outln!("wrote {}", written.pack_file.display());
    for file in &written.files[1..] {
        crate::outln!("wrote {}", file.display());
    }
    for (tool, kind) in &written.tools {
        crate::outln!("tool {tool}: {kind}");
    }
    // A pack init wrote must load and pass `check` as it stands: proven here, not promised.
    let pack = Pack::load(&args.out.to_string_lossy())?;
    let report = law_cases::check(&pack)?;
    let last = report.render();
    let last = last.lines().last().unwrap_or_default();
    crate::outln!("{last}");
    if !report.agrees() {
        crate::out!("{}", report.render());
        bail!("the pack init wrote does not pass check; this is a bug in init");
    }
    for warning in super::check::prose_example_warnings(&pack)? {
        crate::outln!("{warning}");
    }
    if args.writes.is_empty() {
        let skill_text = pack
            .skills(None)?
            .get(&pack.skill)
            .map(|s| s.body.clone())
            .unwrap_or_default();
        if init::states_confirmation(&skill_text) {
            crate::outln!("note: the skill asks for a confirmation before a change; name the tool that changes something with --write TOOL, and init writes the scripted user who confirms and the laws that hold the write to that confirmation");
        }
    }
    let out = args.out.display();
    crate::outln!("\nNext:");
    if written.placeholders > 0 {
        crate::outln!(
            "  1. replace the {} starter prompts in {out}/corpus.jsonl with real requests (add more: a category needs enough samples to reach a verdict)",
            written.placeholders
        );
    } else {
        crate::outln!("  1. add prompts to {out}/corpus.jsonl: a category needs enough samples to reach a verdict");
    }
    crate::outln!(
        "  2. record the tools' answers: skilleval run --pack {out} --record gaps --repeats 1"
    );
    crate::outln!("  3. write your wording as a variant and score it without repeats: skilleval score --pack {out} --variant my-wording.md");
    crate::outln!("     (its `calls` and `no_call` steps come from these laws; samples with the fields an `argument_equals_field` law reads, or a `reference_call`, add the arguments and the answer: docs/score.md)");
    crate::outln!("  4. confirm the chosen wording with a sampled run: skilleval run --pack {out} --variant my-wording.md");
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_as_a_shell_splits_plain_words_and_quotes() {
        assert_eq!(
            split_words("mcp", "npx -y 'my server' \"a b\"c").unwrap(),
            vec!["npx", "-y", "my server", "a bc"]
        );
        assert!(split_words("mcp", "npx 'open").is_err());
    }
}
