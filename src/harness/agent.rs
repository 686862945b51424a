//! The round loop: generate → parse → validate → execute → append, until the model answers,
//! a budget ends it, or an error does.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::backend::{Backend, ChatRound, FinishReason, GenRequest, Sampling};
use super::builtins::{self, LOAD_SKILL, LOAD_SKILL_REFERENCE, READ_TOOL_OUTPUT, TOOL_SEARCH};
use super::conversation::{self, Script, ScriptedUser};
use super::deferred;
use super::examples;
use super::prompt::SystemPrompt;
use super::skills::SkillTree;
use super::spill::{LongOutput, SpillFiles};
use super::template::{render_marked, Message};
use super::toolcall::grammar::{self, CallGrammar, OfferedTool};
use super::toolcall::{self, coerce, describe, CallFormat, ParsedCall};
use super::tools::{Effect, PriorWrite, Registry, ToolDef, ToolOutput};
use super::transcript::{CallRecord, Round, RunMetrics, StopReason, Transcript};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budgets {
    pub max_rounds: u32,
    /// Generated tokens over the whole run.
    pub max_generated_tokens: u32,
    pub max_tokens_per_round: u32,
    /// Characters of one tool result the model is shown.
    pub tool_output_chars: usize,
    /// How often a reply that describes a call instead of making one is sent back.
    pub max_reasks: u32,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            max_rounds: 4,
            max_generated_tokens: 768,
            max_tokens_per_round: 256,
            tool_output_chars: 2000,
            max_reasks: 1,
        }
    }
}

/// Everything one run of the loop needs.
pub struct AgentRequest<'a> {
    pub instructions: &'a str,
    /// Earlier turns (few-shot examples, history) and the user's message, last.
    pub messages: Vec<Message>,
    pub skills: &'a SkillTree,
    /// Skills loaded before the first round.
    pub preload: Vec<String>,
    pub tools: &'a Registry,
    /// `None` uses the family's default.
    pub format: Option<CallFormat>,
    pub sampling: Sampling,
    pub budgets: Budgets,
    /// Hold every call the model opens to the tools offered in that round (`toolcall::grammar`).
    pub constrain_calls: bool,
    /// How loaded skills' worked examples are shown.
    pub examples: examples::Presentation,
    /// What a tool result longer than `budgets.tool_output_chars` becomes.
    pub long_output: LongOutput,
    /// The scripted user who replies after each answer, and approves writes; without one the
    /// run ends at the first answer and every write runs.
    pub user: Option<&'a Script>,
}

struct Loop<'a, 'r> {
    request: &'r AgentRequest<'a>,
    format: CallFormat,
    loaded: Vec<String>,
    /// Deferred tools `tool_search` has loaded.
    searched: Vec<String>,
    spilled: SpillFiles,
    user: Option<ScriptedUser<'a>>,
    /// The writes that ran, in order: the state tools with state answer from.
    writes: Vec<PriorWrite>,
}

impl Loop<'_, '_> {
    /// Tools the model may call now: those no skill gates or grants, those whose gate skill is
    /// loaded, and those a loaded skill grants in its front matter.
    fn visible_tools(&self) -> Vec<&ToolDef> {
        let skills = self.request.skills;
        let granted_by =
            |skill: &str, tool: &str| skills.get(skill).is_some_and(|s| s.meta.grants(tool));
        self.request
            .tools
            .all()
            .filter(|t| {
                let gate_open = match &t.skill_gate {
                    Some(gate) => self.loaded.contains(gate),
                    None => !skills.iter().any(|s| granted_by(s.name(), &t.name)),
                };
                gate_open || self.loaded.iter().any(|l| granted_by(l, &t.name))
            })
            .collect()
    }

    /// Visible tools the system text describes: all but the deferred.
    fn described_tools(&self) -> Vec<&ToolDef> {
        let mut tools = self.visible_tools();
        tools.retain(|t| t.deferred.is_none());
        tools
    }

    /// Visible deferred tools, loaded or not: the system text lists them all by name, so that
    /// it stays the same when one is loaded.
    fn deferred_tools(&self) -> Vec<&ToolDef> {
        let mut tools = self.visible_tools();
        tools.retain(|t| t.deferred.is_some());
        tools
    }

    /// A visible tool the model may call now: not deferred, or loaded by `tool_search`.
    fn usable(&self, tool: &ToolDef) -> bool {
        tool.deferred.is_none() || self.searched.contains(&tool.name)
    }

    fn offers_read_tool_output(&self) -> bool {
        self.request.long_output == LongOutput::Spill
    }

    fn offers_load_skill(&self) -> bool {
        self.request
            .skills
            .iter()
            .any(|s| !self.loaded.iter().any(|l| l == s.name()))
    }

    fn offers_load_reference(&self) -> bool {
        self.loaded.iter().any(|l| {
            self.request
                .skills
                .get(l)
                .is_some_and(|s| !s.reference_names().is_empty())
        })
    }

    /// The system text, then the loaded skills' worked examples as earlier turns.
    fn opening(&self) -> Vec<Message> {
        let tools = self.described_tools();
        let deferred = self.deferred_tools();
        let prompt = SystemPrompt {
            instructions: self.request.instructions,
            format: self.format,
            skills: self.request.skills,
            loaded: &self.loaded,
            tools: &tools,
            examples: self.request.examples,
            deferred: &deferred,
            read_tool_output: self.offers_read_tool_output(),
        };
        let mut messages = vec![Message::system(prompt.render())];
        messages.extend(prompt.example_turns());
        messages
    }

    /// The grammar for this round's calls: every callable tool, and for `load_skill` the names
    /// of the skills in the tree.
    fn call_grammar(&self) -> Option<CallGrammar> {
        if !self.request.constrain_calls {
            return None;
        }
        let tools: Vec<OfferedTool> = self
            .callable_names()
            .into_iter()
            .filter_map(|name| {
                let mut parameters = self.schema_of(&name)?;
                if name == LOAD_SKILL {
                    parameters["properties"]["name"]["enum"] = self.request.skills.names().into();
                }
                Some(OfferedTool { name, parameters })
            })
            .collect();
        grammar::for_calls(self.format, &tools)
    }

    /// Every tool the model may call this round, with its description and schema, for a
    /// server that writes its own tool section (`ChatRound`).
    fn chat_tools(&self) -> Vec<(String, String, Value)> {
        self.callable_names()
            .into_iter()
            .filter_map(|name| {
                let parameters = self.schema_of(&name)?;
                let description = match name.as_str() {
                    LOAD_SKILL => builtins::LOAD_SKILL_DESCRIPTION.to_string(),
                    LOAD_SKILL_REFERENCE => builtins::LOAD_SKILL_REFERENCE_DESCRIPTION.to_string(),
                    TOOL_SEARCH => builtins::TOOL_SEARCH_DESCRIPTION.to_string(),
                    READ_TOOL_OUTPUT => builtins::READ_TOOL_OUTPUT_DESCRIPTION.to_string(),
                    _ => self
                        .request
                        .tools
                        .get(&name)
                        .map(|t| t.description.clone())
                        .unwrap_or_default(),
                };
                Some((name, description, parameters))
            })
            .collect()
    }

    fn callable_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .visible_tools()
            .into_iter()
            .filter(|t| self.usable(t))
            .map(|t| t.name.clone())
            .collect();
        if self.offers_load_skill() {
            names.push(LOAD_SKILL.into());
        }
        if self.offers_load_reference() {
            names.push(LOAD_SKILL_REFERENCE.into());
        }
        if !self.deferred_tools().is_empty() {
            names.push(TOOL_SEARCH.into());
        }
        if self.offers_read_tool_output() {
            names.push(READ_TOOL_OUTPUT.into());
        }
        names
    }

    fn load_skill(&mut self, args: &Map<String, Value>) -> ToolOutput {
        let name = args
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        match self.request.skills.get(name) {
            Some(skill) => {
                if !self.loaded.iter().any(|l| l == name) {
                    self.loaded.push(name.to_string());
                }
                ToolOutput::ok(format!(
                    "Skill {name} loaded.\n\n{}",
                    skill.text(self.request.examples)
                ))
            }
            None => ToolOutput::error(format!(
                "No skill named {name:?}. Skills: {}.",
                self.request.skills.names().join(", ")
            )),
        }
    }

    fn load_reference(&self, args: &Map<String, Value>) -> ToolOutput {
        let skill = args.get("skill").and_then(Value::as_str).unwrap_or("");
        let name = args.get("name").and_then(Value::as_str).unwrap_or("");
        if !self.loaded.iter().any(|l| l == skill) {
            return ToolOutput::error(format!(
                "Skill {skill:?} is not loaded; call {LOAD_SKILL} first."
            ));
        }
        match self.request.skills.get(skill).map(|s| s.reference(name)) {
            Some(Ok(text)) => ToolOutput::ok(text),
            Some(Err(e)) => ToolOutput::error(e.to_string()),
            None => ToolOutput::error(format!("No skill named {skill:?}.")),
        }
    }

    fn tool_search(&mut self, args: &Map<String, Value>) -> ToolOutput {
        let (output, found) = deferred::search(&self.deferred_tools(), args);
        for name in found {
            if !self.searched.contains(&name) {
                self.searched.push(name);
            }
        }
        output
    }

    /// The schema of a tool the model may call now; none for any other name.
    fn schema_of(&self, name: &str) -> Option<Value> {
        match name {
            LOAD_SKILL => Some(builtins::load_skill_schema()),
            LOAD_SKILL_REFERENCE => Some(builtins::load_reference_schema()),
            TOOL_SEARCH if !self.deferred_tools().is_empty() => {
                Some(builtins::tool_search_schema())
            }
            READ_TOOL_OUTPUT if self.offers_read_tool_output() => {
                Some(builtins::read_tool_output_schema())
            }
            _ => self
                .visible_tools()
                .into_iter()
                .find(|t| t.name == name && self.usable(t))
                .map(|t| t.parameters.clone()),
        }
    }

    /// Why a call to `name`, which the model may not call now, was refused.
    fn refusal(&self, name: &str) -> String {
        if self.visible_tools().iter().any(|t| t.name == name) {
            return format!(
                "Tool {name} is not described yet; call {TOOL_SEARCH} with query=\"{name}\" first."
            );
        }
        match self.request.tools.get(name).and_then(|t| t.skill_gate.clone()) {
            Some(skill) => format!(
                "Tool {name} is part of skill {skill}; call {LOAD_SKILL} with name=\"{skill}\" first."
            ),
            None => format!(
                "There is no tool named {name:?}. You may call: {}.",
                self.callable_names().join(", ")
            ),
        }
    }

    /// Validates every call, then runs the built-ins in order, reads concurrently and writes in order.
    fn execute(&mut self, calls: Vec<ParsedCall>) -> Vec<CallRecord> {
        enum Planned {
            Ready(ToolOutput),
            Builtin,
            Run(ToolDef),
        }
        let mut planned = Vec::with_capacity(calls.len());
        let mut records = Vec::with_capacity(calls.len());
        for call in calls {
            let mut record = CallRecord::unanswered(&call.name, &call.arguments);
            let plan = match self.schema_of(&call.name) {
                None => Planned::Ready(ToolOutput::error(self.refusal(&call.name))),
                Some(schema) => {
                    match coerce::coerce_call_arguments(&call.name, &call.arguments, &schema) {
                        Err(message) => Planned::Ready(ToolOutput::error(message)),
                        Ok((arguments, repairs)) => {
                            record.arguments = Value::Object(arguments);
                            record.repairs = repairs;
                            match call.name.as_str() {
                                LOAD_SKILL | LOAD_SKILL_REFERENCE | TOOL_SEARCH
                                | READ_TOOL_OUTPUT => Planned::Builtin,
                                _ => {
                                    let tool = self
                                        .request
                                        .tools
                                        .get(&call.name)
                                        .cloned()
                                        .expect("visible tool");
                                    // A write runs once the user allows it; with no
                                    // user every write runs.
                                    let approved = (tool.effect == Effect::Write).then(|| {
                                        self.user.as_ref().is_none_or(|u| u.approves_write())
                                    });
                                    record.approved = approved;
                                    match (&self.user, approved) {
                                        (Some(user), Some(false)) => Planned::Ready(
                                            ToolOutput::error(conversation::refusal_text(
                                                &call.name,
                                                user.approval(),
                                            )),
                                        ),
                                        _ => Planned::Run(tool),
                                    }
                                }
                            }
                        }
                    }
                }
            };
            planned.push(plan);
            records.push(record);
        }
        let mut outputs: Vec<Option<ToolOutput>> = vec![None; records.len()];
        // Reads have no side effects, so they may run at once; the rest keep their order.
        let reads: Vec<usize> = (0..planned.len())
            .filter(|&i| matches!(&planned[i], Planned::Run(t) if t.effect == Effect::Read))
            .collect();
        if reads.len() > 1 {
            let results: Vec<(usize, ToolOutput)> = std::thread::scope(|scope| {
                let handles: Vec<_> = reads
                    .iter()
                    .map(|&i| {
                        let Planned::Run(tool) = &planned[i] else {
                            unreachable!()
                        };
                        let args = records[i]
                            .arguments
                            .as_object()
                            .cloned()
                            .unwrap_or_default();
                        let writes = &self.writes;
                        scope.spawn(move || (i, tool.call(&args, writes)))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("tool thread"))
                    .collect()
            });
            for (i, out) in results {
                outputs[i] = Some(out);
            }
        }
        for (i, plan) in planned.into_iter().enumerate() {
            if outputs[i].is_some() {
                continue;
            }
            let args = records[i]
                .arguments
                .as_object()
                .cloned()
                .unwrap_or_default();
            outputs[i] = Some(match plan {
                Planned::Ready(out) => out,
                Planned::Builtin => match records[i].name.as_str() {
                    LOAD_SKILL => self.load_skill(&args),
                    TOOL_SEARCH => self.tool_search(&args),
                    READ_TOOL_OUTPUT => self
                        .spilled
                        .read(&args, self.request.budgets.tool_output_chars),
                    _ => self.load_reference(&args),
                },
                Planned::Run(tool) => {
                    let output = tool.call(&args, &self.writes);
                    if tool.effect == Effect::Write {
                        self.writes.push(PriorWrite {
                            tool: tool.name.clone(),
                            arguments: args,
                        });
                    }
                    output
                }
            });
        }
        for (record, output) in records.iter_mut().zip(outputs) {
            let output = output.expect("every call has an output");
            // A part read from a spilled file is already within the budget, with its own line
            // on how to read on: cutting or spilling it again would hide that line.
            let (text, cut) = if record.name == READ_TOOL_OUTPUT {
                (output.content, 0)
            } else {
                self.spilled.show(
                    &output.content,
                    self.request.budgets.tool_output_chars,
                    self.request.long_output,
                )
            };
            record.result = text;
            record.truncated_chars = cut;
            record.is_error = output.is_error;
            record.meta = output.meta;
        }
        records
    }
}

/// Runs the loop to its end. Never panics on model output; backend failures end the run with
/// `StopReason::Error` and keep the rounds done so far.
pub fn run(backend: &mut dyn Backend, request: &AgentRequest) -> Transcript {
    let started = Instant::now();
    let family = backend.family();
    let format = request.format.unwrap_or(family.default_call_format());
    let mut state = Loop {
        request,
        format,
        loaded: Vec::new(),
        searched: Vec::new(),
        spilled: SpillFiles::default(),
        user: request.user.map(ScriptedUser::new),
        writes: Vec::new(),
    };
    for name in &request.preload {
        if request.skills.get(name).is_some() && !state.loaded.contains(name) {
            state.loaded.push(name.clone());
        }
    }
    let stops: Vec<String> = family.end_of_turn().iter().map(|s| s.to_string()).collect();
    let mut history = request.messages.clone();
    let mut rounds: Vec<Round> = Vec::new();
    let mut metrics = RunMetrics::default();
    let mut reasks = 0u32;
    let stop = loop {
        if rounds.len() as u32 >= request.budgets.max_rounds {
            break StopReason::RoundBudget;
        }
        let left = request
            .budgets
            .max_generated_tokens
            .saturating_sub(metrics.generated_tokens);
        if left == 0 {
            break StopReason::TokenBudget;
        }
        let mut messages = state.opening();
        messages.extend(history.iter().cloned());
        let rendered = match render_marked(family, &messages) {
            Ok(rendered) => rendered,
            Err(e) => break StopReason::Error(e.to_string()),
        };
        let gen_request = GenRequest {
            prompt: rendered.text,
            max_tokens: left.min(request.budgets.max_tokens_per_round),
            stop: stops.clone(),
            sampling: request.sampling,
            grammar: state.call_grammar(),
            markers: rendered.markers,
        };
        let chat = ChatRound {
            messages,
            tools: state.chat_tools(),
            format,
        };
        let generation = match backend.generate_chat(&gen_request, &chat) {
            Ok(g) => g,
            Err(e) => break StopReason::Error(e.to_string()),
        };
        let m = &generation.metrics;
        if rounds.is_empty() {
            metrics.ttft_secs = m.ttft_secs;
        }
        metrics.prompt_tokens += m.prompt_tokens;
        metrics.generated_tokens += m.generated_tokens;
        metrics.prefill_secs += m.prefill_secs;
        metrics.decode_secs += m.decode_secs;

        let parsed = toolcall::parse(format, &generation.text);
        let tool_started = Instant::now();
        let calls = state.execute(parsed.calls);
        metrics.tool_secs += tool_started.elapsed().as_secs_f64();
        let mut round = Round {
            raw: generation.text.clone(),
            finish: generation.finish.clone(),
            metrics: generation.metrics.clone(),
            calls,
            prose: parsed.prose.clone(),
            repairs: parsed.repairs,
            problems: parsed.problems,
            reask: None,
            user: None,
        };
        history.push(Message::assistant(generation.text.trim()));
        if round.calls.is_empty() {
            let names = state.callable_names();
            let tool_params: Vec<(&str, Vec<String>)> = names
                .iter()
                .map(|n| {
                    let params = state
                        .schema_of(n)
                        .and_then(|s| {
                            s["properties"]
                                .as_object()
                                .map(|p| p.keys().cloned().collect())
                        })
                        .unwrap_or_default();
                    (n.as_str(), params)
                })
                .collect();
            if reasks < request.budgets.max_reasks {
                if let Some(tool) = describe::describes_call(&generation.text, &tool_params) {
                    let parameters = tool_params
                        .iter()
                        .find(|(name, _)| *name == tool)
                        .map(|(_, parameters)| parameters.clone())
                        .unwrap_or_default();
                    let message = describe::reask_message(&tool, &parameters, format);
                    history.push(Message::user(message.clone()));
                    round.reask = Some(message);
                    reasks += 1;
                    rounds.push(round);
                    continue;
                }
            }
            let out_of_tokens = generation.finish == FinishReason::MaxTokens
                && metrics.generated_tokens >= request.budgets.max_generated_tokens;
            // The scripted user replies to a question, or follows an answer up, and the
            // conversation goes on with what the harness would then show.
            let turn = match (&mut state.user, out_of_tokens) {
                (Some(user), false) => user.respond(conversation::classify(&round.prose)),
                _ => None,
            };
            if let Some(turn) = turn {
                history.push(Message::user(turn.said.clone()));
                round.user = Some(turn);
                rounds.push(round);
                continue;
            }
            rounds.push(round);
            break if out_of_tokens {
                StopReason::TokenBudget
            } else {
                StopReason::Answered
            };
        }
        for call in &round.calls {
            let shown = examples::tool_result_text(&call.name, &call.result);
            history.push(Message::tool(shown));
        }
        rounds.push(round);
    };
    metrics.rounds = rounds.len() as u32;
    metrics.wall_secs = started.elapsed().as_secs_f64();
    let reply = rounds
        .last()
        .filter(|r| r.calls.is_empty())
        .map(|r| r.prose.trim().to_string())
        .unwrap_or_default();
    Transcript {
        rounds,
        reply,
        stop,
        loaded_skills: state.loaded,
        metrics,
    }
}
