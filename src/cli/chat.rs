//! `skilleval chat`: one prompt through the harness loop, with the tools the skills grant, and
//! the transcript with every call and its result.
//!
//! With `--pack`, the chat is a pack's sample written on the spot: its skills, instructions,
//! worked examples, call and chat formats, budgets, and its tools answered from its fixtures
//! (or the live service under `--record`, kept as fixtures). Without a pack, the typed tools the
//! skills grant are answered live under `--record`; otherwise a call gets an answer saying where
//! answers come from.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::bail;
use clap::Args;
use serde_json::json;

use super::args::{record_mode, ModelArgs, RecordWhat};
use crate::eval::pack::Pack;
use crate::eval::replay::{self, LiveServices, RecordMode};
use crate::eval::request::agent_request;
use crate::harness::agent;
use crate::harness::backend::{Backend, Sampling, WithFamily};
use crate::harness::skills::SkillTree;
use crate::harness::template::Message;
use crate::harness::tools::{Registry, ToolOutput};
use crate::harness::transcript::{render_readable, StopReason};
use crate::tools::weather;

const EXAMPLES: &str = "Examples:
  skilleval chat --pack weather --prompt \"how cold is it in berlin today\"
  skilleval chat --pack weather --prompt \"is it cold in Reykjavik?\" --record --json
  skilleval chat --skills-dir packs/weather/skills --preload weather --record --prompt \"weather in Lyon?\"";

#[derive(Args, Debug)]
#[command(after_long_help = EXAMPLES)]
pub struct ChatArgs {
    /// Pack (packs/<name>, or a folder or pack.toml) whose skills, instructions, worked
    /// examples, tools and fixtures the chat uses
    #[arg(long, required_unless_present = "skills_dir")]
    pub pack: Option<String>,
    /// Skills tree (default: the pack's)
    #[arg(long)]
    pub skills_dir: Option<PathBuf>,
    /// The user's message
    #[arg(long)]
    pub prompt: String,
    /// Load this skill before the first round (repeatable); a pack that preloads its skill adds it
    #[arg(long)]
    pub preload: Vec<String>,
    /// Answer tool calls from the live service; with --pack keep the answers as fixtures
    /// (gaps: only calls with no fixture, all: every call)
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "gaps")]
    pub record: Option<RecordWhat>,
    /// Print the transcript as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Print every prompt sent to the model on stderr, as the chat template rendered it
    #[arg(long)]
    pub show_prompt: bool,
    /// Seed of the sampler
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// Sampling temperature; 0 is greedy
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f32,
    #[command(flatten)]
    pub model: ModelArgs,
}

pub fn run(args: ChatArgs) -> anyhow::Result<u8> {
    if args.prompt.trim().is_empty() {
        bail!("--prompt: is empty; give the user's message");
    }
    crate::eval::pack::check_sampling_flags(Some(args.temperature), None, None)?;
    let pack = args.pack.as_deref().map(Pack::load).transpose()?;
    let skills = match (&pack, &args.skills_dir) {
        (Some(pack), dir) => pack.skills(dir.as_deref())?,
        (None, Some(dir)) => SkillTree::load(dir)?,
        (None, None) => bail!("chat needs --pack or --skills-dir"),
    };
    let mut preload = args.preload.clone();
    if let Some(pack) = pack.as_ref().filter(|p| p.preload) {
        if !preload.contains(&pack.skill) {
            preload.push(pack.skill.clone());
        }
    }
    for p in &preload {
        if skills.get(p).is_none() {
            bail!("--preload {p:?}: the skills tree has no such skill");
        }
    }
    let mode = record_mode(args.record);
    let registry = match &pack {
        Some(pack) => replay::build_registry(
            &pack.tools,
            Arc::new(replay::load_fixtures(pack, mode)?),
            mode,
            LiveServices::default(),
        ),
        None => granted_tools(&skills, mode != RecordMode::Off),
    };
    let offered: Vec<String> = registry.all().map(|t| t.name.clone()).collect();
    if let (false, Some(pack), true) = (args.json, &pack, mode != RecordMode::Off) {
        // Each tool as it is really answered: only a typed, command or mcp tool can be asked.
        let how: Vec<String> = pack
            .tools
            .iter()
            .map(|t| {
                let how = if crate::tools::computed(&t.kind).is_some() {
                    "computed, nothing to record"
                } else if !t.can_record() {
                    "from its fixtures only: a recorded tool has nothing live to ask"
                } else if mode == RecordMode::All {
                    "asked live for every call, the answers kept as fixtures"
                } else {
                    "calls with no recording asked live, the answers kept as fixtures"
                };
                format!("{} ({how})", t.name)
            })
            .collect();
        eprintln!("tools: {}", how.join(", "));
    } else if !args.json {
        let source = match (&pack, mode) {
            (Some(_), RecordMode::Off) => "answered from the pack's fixtures",
            (Some(_), _) => "answered live, the answers kept as fixtures",
            (None, RecordMode::Off) => "not answered: pass --pack for fixtures or --record",
            (None, _) => "answered live, nothing kept",
        };
        match offered.is_empty() {
            true => eprintln!("tools: none granted by the skills"),
            false => eprintln!("tools: {} ({source})", offered.join(", ")),
        }
    }

    let base = pack.as_ref().map(|p| p.sampling).unwrap_or_default();
    let sampling = Sampling {
        temperature: args.temperature,
        seed: args.seed,
        ..base
    };
    let request = agent_request(
        pack.as_ref(),
        &skills,
        &registry,
        &[Message::user(args.prompt.clone())],
        preload,
        sampling,
    );
    let mut loaded = args.model.load()?;
    let mut shown = ShowPrompts(&mut loaded);
    let backend: &mut dyn Backend = match args.show_prompt {
        true => &mut shown,
        false => shown.0,
    };
    let transcript = match pack.as_ref().and_then(|p| p.chat_format) {
        Some(family) => agent::run(&mut WithFamily::new(backend, family), &request),
        None => agent::run(backend, &request),
    };
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&transcript)?);
    } else {
        crate::out!("{}", render_readable(&transcript));
    }
    // The transcript is shown either way; a loop that failed is not a success to a script.
    Ok(match transcript.stop {
        StopReason::Error(_) => 1,
        _ => 0,
    })
}

/// The typed tools the skills grant, answered live when `live`, else with a note saying how to
/// get answers: a pack-less chat has no fixtures.
fn granted_tools(skills: &SkillTree, live: bool) -> Registry {
    let mut registry = Registry::new();
    let granted = skills.iter().flat_map(|s| s.meta.tools.iter());
    for name in granted {
        if name != weather::TOOL_NAME || registry.get(name).is_some() {
            continue;
        }
        let mut def = weather::tool_def(Arc::new(weather::WeatherService::new()));
        if !live {
            let note = format!(
                "{name} has no answer in this chat: pass --pack NAME to answer from its fixtures, or --record to ask the live service."
            );
            def.executor =
                Arc::new(move |_| ToolOutput::error(note.clone()).with_meta(json!({"gap": true})));
        }
        registry.add(def);
    }
    registry
}

/// A backend that prints each prompt on stderr before it is sent.
struct ShowPrompts<'a>(&'a mut dyn Backend);

impl Backend for ShowPrompts<'_> {
    fn family(&self) -> crate::harness::template::Family {
        self.0.family()
    }

    fn info(&self) -> crate::harness::backend::BackendInfo {
        self.0.info()
    }

    fn generate(
        &mut self,
        request: &crate::harness::backend::GenRequest,
    ) -> anyhow::Result<crate::harness::backend::Generation> {
        eprintln!("--- prompt ---\n{}\n--- end of prompt ---", request.prompt);
        self.0.generate(request)
    }
}
