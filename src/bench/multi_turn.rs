//! Multi-turn entries, driven as BFCL's `inference_multi_turn_prompting` drives them: each user
//! turn is added to the conversation, then the model is asked step after step; a step whose
//! reply decodes to calls has them executed on BFCL's API instances (through the helper) and
//! their results added as tool messages; a step with no call, or one BFCL cannot decode, ends
//! the turn; more than BFCL's step limit of executed steps in one turn ends the entry.
//!
//! Prompt mode sends BFCL's prompt and records each raw reply. Harness mode offers the
//! functions as harness tools in the family's call syntax, reads each reply with the harness's
//! parser, and records the calls it found as a Python call list, which BFCL decodes back to the
//! calls executed. Either way the result is BFCL's: one list per turn of step replies, checked
//! by BFCL's own evaluator.
//!
//! Memory entries run the same loop over one memory backend. The helper gives their turns with
//! BFCL's memory prompt (which shows the memory saved so far) and loads the memory from BFCL's
//! snapshots in the model's result folder; a prerequisite conversation saves its memory there
//! when it ends (`memory_prerequisite`), and a question's final prose reply is its answer,
//! checked by BFCL's agentic checker.

use std::path::Path;

use anyhow::Context as _;
use serde_json::{json, Value};

use crate::harness::backend::{Backend, GenMetrics, GenRequest};
use crate::harness::examples::tool_result_text;
use crate::harness::prompt::SystemPrompt;
use crate::harness::skills::SkillTree;
use crate::harness::template::{Message, Role};
use crate::harness::toolcall::python_list::render_calls;
use crate::harness::toolcall::{self, CallFormat};
use crate::harness::tools::ToolDef;

use super::check_types::CheckResult;
use super::corpus::{parse_turns, Entry, MultiTurn};
use super::harness_mode::{decoded_call, registry, INSTRUCTIONS};
use super::multi_turn_helper::{Decoded, Helper, HelperLaunch};
use super::prompt::{with_system_prompt, MULTI_TURN_INSTRUCTION};
use super::score::ResultLine;
use super::{inference_error_result, EntryOptions, EntryOutcome, Mode};

/// BFCL's user message when a turn adds held-out functions to a function-calling model's tools.
pub const ADDED_FUNCTIONS_MESSAGE: &str =
    "I have updated some more functions you can choose from. What about now?";

/// How the steps of one entry went.
#[derive(Debug, Default)]
struct Conversation {
    /// Per turn, what the result file holds for each step.
    turns: Vec<Vec<String>>,
    /// Per turn, each step's text as generated.
    raw: Vec<Vec<String>>,
    metrics: GenMetrics,
    /// The entry ended at the step limit (BFCL's force quit).
    forced_to_quit: bool,
}

/// What one conversation left, before any check.
struct Ran {
    /// What the result file holds: one list per turn of step replies, or BFCL's inference
    /// error text.
    result: Value,
    /// Per turn, each step's text as generated.
    raw: Vec<Vec<String>>,
    inference_error: Option<String>,
    metrics: GenMetrics,
}

impl Ran {
    fn outcome(
        self,
        entry: &Entry,
        options: &EntryOptions,
        mode: Mode,
        check: CheckResult,
    ) -> EntryOutcome {
        EntryOutcome {
            id: entry.id.clone(),
            category: entry.category.clone(),
            mode,
            repeat: options.repeat,
            reply: serde_json::to_string(&self.raw).expect("texts serialize"),
            result: self.result,
            check,
            inference_error: self.inference_error,
            prompt_tokens: self.metrics.prompt_tokens,
            generated_tokens: self.metrics.generated_tokens,
            seconds: self.metrics.prefill_secs + self.metrics.decode_secs,
        }
    }

    /// The line of BFCL's result file, for a conversation that is not checked.
    fn result_line(self, id: &str) -> ResultLine {
        ResultLine {
            id: id.to_string(),
            result: self.result,
            input_token_count: Some(self.metrics.prompt_tokens.into()),
            output_token_count: Some(self.metrics.generated_tokens.into()),
            latency: Some(self.metrics.prefill_secs + self.metrics.decode_secs),
        }
    }
}

/// How one conversation reaches the model and BFCL's helper.
#[derive(Debug, Clone, Copy)]
pub struct Conduct<'a> {
    pub launch: &'a HelperLaunch,
    pub mode: Mode,
    pub format: Option<CallFormat>,
    /// The model's BFCL result folder: memory entries keep their snapshots under it.
    pub results: &'a Path,
}

/// One multi-turn or memory entry: its turns through the model, its result checked by BFCL
/// (a memory entry's final answer by BFCL's agentic checker).
pub fn multi_turn_entry(
    backend: &mut dyn Backend,
    entry: &Entry,
    options: &EntryOptions,
    conduct: &Conduct,
) -> EntryOutcome {
    let (ran, helper) = run_conversation(backend, entry, options, conduct);
    let multi_turn = entry
        .multi_turn
        .as_ref()
        .expect("a multi-turn entry has its question");
    let truth = entry.ground_truth.as_deref().unwrap_or_default();
    let check = match helper {
        Some(mut helper) => helper
            .end(&entry.id, false)
            .and_then(|()| helper.check(&multi_turn.question, truth, &ran.result)),
        None => Err(anyhow::anyhow!("no BFCL helper")),
    }
    .unwrap_or_else(|error| {
        // Named as BFCL's evaluator names an unusable result of the entry's kind.
        let kind = match multi_turn.scenario {
            Some(_) => "agentic:inference_error",
            None => "multi_turn:inference_error",
        };
        CheckResult::fail(kind, format!("BFCL's checker could not run: {error:#}"))
    });
    ran.outcome(entry, options, conduct.mode, check)
}

/// One prerequisite conversation of a memory scenario. It has no answer (BFCL does not score
/// it); its memory is saved for the next conversation when it ran without an inference error.
/// The line is what BFCL's prerequisite result file holds.
pub fn memory_prerequisite(
    backend: &mut dyn Backend,
    entry: &Entry,
    options: &EntryOptions,
    conduct: &Conduct,
) -> anyhow::Result<ResultLine> {
    let (ran, helper) = run_conversation(backend, entry, options, conduct);
    if let Some(mut helper) = helper {
        helper
            .end(&entry.id, ran.inference_error.is_none())
            .with_context(|| format!("saving the memory of {}", entry.id))?;
    }
    Ok(ran.result_line(&entry.id))
}

fn run_conversation(
    backend: &mut dyn Backend,
    entry: &Entry,
    options: &EntryOptions,
    conduct: &Conduct,
) -> (Ran, Option<Helper>) {
    let multi_turn = entry
        .multi_turn
        .as_ref()
        .expect("a multi-turn entry has its question");
    let mut conversation = Conversation::default();
    let mut helper = None;
    let ran = Helper::start(conduct.launch).and_then(|started| {
        let helper = helper.insert(started);
        let sent = helper.begin(&multi_turn.question, conduct.results)?;
        let turns = parse_turns(
            Path::new("the BFCL helper's question"),
            0,
            &json!({"question": sent}),
        )?;
        converse(
            backend,
            helper,
            entry,
            &turns,
            multi_turn,
            options,
            conduct,
            &mut conversation,
        )
    });
    let (result, inference_error) = match ran {
        Ok(()) => (json!(conversation.turns), None),
        Err(error) => (
            Value::String(inference_error_result(&error)),
            Some(format!("{error:#}")),
        ),
    };
    let ran = Ran {
        result,
        raw: conversation.raw,
        inference_error,
        metrics: conversation.metrics,
    };
    (ran, helper)
}

/// The tools and prompt of harness mode; they grow when a turn adds held-out functions.
struct HarnessView {
    format: CallFormat,
    functions: Vec<Value>,
    instructions: String,
}

impl HarnessView {
    fn system_message(&self) -> Message {
        let tools = registry(&self.functions);
        let offered: Vec<&ToolDef> = tools.all().collect();
        let skills = SkillTree::default();
        let prompt = SystemPrompt {
            instructions: &self.instructions,
            format: self.format,
            skills: &skills,
            loaded: &[],
            tools: &offered,
            examples: Default::default(),
            deferred: &[],
            read_tool_output: false,
        };
        Message::system(prompt.render())
    }
}

#[allow(clippy::too_many_arguments)]
fn converse(
    backend: &mut dyn Backend,
    helper: &mut Helper,
    entry: &Entry,
    turns: &[Vec<Message>],
    multi_turn: &MultiTurn,
    options: &EntryOptions,
    conduct: &Conduct,
    conversation: &mut Conversation,
) -> anyhow::Result<()> {
    let family = backend.family();
    // A memory entry's last reply is its answer in prose, which the result file must keep.
    let answers_in_prose = multi_turn.scenario.is_some();
    let mut harness = (conduct.mode == Mode::Harness).then(|| HarnessView {
        format: conduct.format.unwrap_or(family.default_call_format()),
        functions: entry.functions.clone(),
        instructions: format!("{INSTRUCTIONS}\n\n{MULTI_TURN_INSTRUCTION}"),
    });
    // Prompt mode: BFCL's system prompt joins the first turn. Harness mode: the entry's own
    // system text joins the instructions, and the system message is made at each step.
    let mut history: Vec<Message> = Vec::new();
    for (index, turn) in turns.iter().enumerate() {
        let mut added = match multi_turn.held_out.get(&index) {
            Some(functions) => match harness.as_mut() {
                Some(view) => {
                    view.functions.extend(functions.iter().cloned());
                    vec![Message::user(ADDED_FUNCTIONS_MESSAGE)]
                }
                None => vec![Message::user(helper.held_out_message(functions)?)],
            },
            None => turn.clone(),
        };
        if index == 0 {
            match harness.as_mut() {
                None => added = with_system_prompt(entry, added),
                Some(view) => {
                    added.retain(|message| {
                        let system = message.role == Role::System;
                        if system {
                            view.instructions.push_str("\n\n");
                            view.instructions.push_str(&message.content);
                        }
                        !system
                    });
                }
            }
        }
        history.extend(added);
        let mut steps = Vec::new();
        let mut raw_steps = Vec::new();
        let mut executed = 0u32;
        loop {
            let mut messages = Vec::new();
            if let Some(view) = &harness {
                messages.push(view.system_message());
            }
            messages.extend(history.iter().cloned());
            let request = GenRequest::chat(
                family,
                &messages,
                options.max_tokens,
                options.sampling_for(&entry.id),
            )?;
            let generation = backend.generate(&request)?;
            add_metrics(&mut conversation.metrics, &generation.metrics);
            let text = generation.text;
            history.push(Message::assistant(text.clone()));
            raw_steps.push(text.clone());
            // What the result file holds, and the call names for the tool messages.
            let (step, names) = match &harness {
                None => (text, Vec::new()),
                Some(view) => {
                    let parsed = toolcall::parse(view.format, &text);
                    let calls: Vec<_> = parsed
                        .calls
                        .iter()
                        .map(|call| {
                            decoded_call(
                                &view.functions,
                                &call.name,
                                &Value::Object(call.arguments.clone()),
                            )
                        })
                        .collect();
                    if calls.is_empty() && answers_in_prose {
                        // No call: the reply is the answer, and the turn ends.
                        steps.push(text);
                        break;
                    }
                    let names = calls.iter().map(|c| c.name.clone()).collect();
                    (render_calls(&calls), names)
                }
            };
            steps.push(step.clone());
            let calls = match helper.decode(&step)? {
                Decoded::Calls(calls) => calls,
                Decoded::Empty | Decoded::Undecodable(_) => break,
            };
            let results = helper.execute(&entry.id, &calls)?;
            for (i, (call, result)) in calls.iter().zip(&results).enumerate() {
                let content = match &harness {
                    None => result.clone(),
                    Some(_) => {
                        let name = names.get(i).map_or(call.as_str(), String::as_str);
                        tool_result_text(name, result)
                    }
                };
                history.push(Message::tool(content));
            }
            executed += 1;
            if executed > helper.max_steps {
                conversation.forced_to_quit = true;
                break;
            }
        }
        conversation.turns.push(steps);
        conversation.raw.push(raw_steps);
        if conversation.forced_to_quit {
            break;
        }
    }
    Ok(())
}

fn add_metrics(total: &mut GenMetrics, step: &GenMetrics) {
    total.prompt_tokens += step.prompt_tokens;
    total.cached_prompt_tokens += step.cached_prompt_tokens;
    total.generated_tokens += step.generated_tokens;
    total.prefill_secs += step.prefill_secs;
    total.decode_secs += step.decode_secs;
}
