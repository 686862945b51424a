//! A judge case or a reference conversation replayed as a run would answer it: the pack's
//! registry, fixture store, argument coercion and output budget, each earlier turn answered by
//! the sample's scripted user, and every write held to its approval.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::pack::Pack;
use super::replay::{self, LiveServices, RecordMode};
use crate::harness::backend::{FinishReason, GenMetrics};
use crate::harness::conversation::{self, Script, ScriptedUser};
use crate::harness::spill::{LongOutput, SpillFiles};
use crate::harness::toolcall::coerce::coerce_call_arguments;
use crate::harness::tools::{Effect, PriorWrite, Registry, ToolOutput};
use crate::harness::transcript::{CallRecord, Round, RunMetrics, StopReason, Transcript};

/// One call of a case; `result`, when given, replaces the fixture's answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseCall {
    pub tool: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    #[serde(default)]
    pub result: Option<String>,
}

/// An earlier turn of a conversation: the calls, then a reply the scripted user answers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseTurn {
    #[serde(default)]
    pub calls: Vec<CaseCall>,
    pub reply: String,
}

/// Answers calls as a run of the pack would: the same registry, fixture store, argument
/// coercion and output budget.
pub struct Replayer {
    registry: Registry,
    output_chars: usize,
    long_output: LongOutput,
    loaded_skills: Vec<String>,
}

impl Replayer {
    pub fn new(pack: &Pack) -> anyhow::Result<Replayer> {
        Self::recording(pack, RecordMode::Off)
    }

    /// A replayer whose calls with no recording are put to the live tool and kept (`check
    /// --record`), with the fixtures loaded and checked as a run loads them.
    pub fn recording(pack: &Pack, mode: RecordMode) -> anyhow::Result<Replayer> {
        let store = Arc::new(replay::load_fixtures(pack, mode)?);
        let registry = replay::build_registry(&pack.tools, store, mode, LiveServices::default());
        Ok(Replayer {
            registry,
            output_chars: pack.budgets.tool_output_chars,
            long_output: pack.long_tool_output,
            loaded_skills: if pack.preload {
                vec![pack.skill.clone()]
            } else {
                Vec::new()
            },
        })
    }

    /// A call answered after the conversation's `writes` (a write that runs joins them), a
    /// write held to the scripted `user`'s approval as in a run.
    fn answer(
        &self,
        call: &CaseCall,
        writes: &mut Vec<PriorWrite>,
        user: Option<&ScriptedUser>,
    ) -> CallRecord {
        let mut record = CallRecord::unanswered(&call.tool, &call.arguments);
        let tool = self.registry.get(&call.tool);
        // A write is held to the user's approval, whatever result the case gives it; with no
        // user every write runs, as in a run.
        let approved = tool
            .filter(|t| t.effect == Effect::Write)
            .map(|_| user.is_none_or(|u| u.approves_write()));
        record.approved = approved;
        let output = match (&call.result, tool, user) {
            (_, _, Some(user)) if approved == Some(false) => {
                ToolOutput::error(conversation::refusal_text(&call.tool, user.approval()))
            }
            (Some(result), _, _) => ToolOutput::ok(result.clone()),
            (None, None, _) => {
                ToolOutput::error(format!("There is no tool named {:?}.", call.tool))
            }
            (None, Some(tool), _) => {
                match coerce_call_arguments(&call.tool, &call.arguments, &tool.parameters) {
                    Err(message) => ToolOutput::error(message),
                    Ok((arguments, repairs)) => {
                        record.arguments = Value::Object(arguments.clone());
                        record.repairs = repairs;
                        let output = tool.call(&arguments, writes);
                        if approved == Some(true) {
                            writes.push(PriorWrite {
                                tool: call.tool.clone(),
                                arguments,
                            });
                        }
                        output
                    }
                }
            }
        };
        // Shown as the loop shows it; a spilled result names its file as the first spill would.
        let (text, cut) =
            SpillFiles::default().show(&output.content, self.output_chars, self.long_output);
        record.result = text;
        record.truncated_chars = cut;
        record.is_error = output.is_error;
        record.meta = output.meta;
        record
    }

    /// The transcript of a run that made these calls, then gave this reply.
    pub fn transcript(&self, calls: &[CaseCall], reply: &str, stop: StopReason) -> Transcript {
        self.conversation(None, &[], calls, reply, stop)
            .expect("a conversation with no earlier turn needs no user")
    }

    /// The transcript of a conversation: each earlier turn's calls and reply, answered by the
    /// scripted `user`, then these calls and this reply. An earlier turn the user would not
    /// answer (its reply asks nothing, or the script has nothing left to say) is an error.
    pub fn conversation(
        &self,
        user: Option<&Script>,
        turns: &[CaseTurn],
        calls: &[CaseCall],
        reply: &str,
        stop: StopReason,
    ) -> Result<Transcript, String> {
        let round = |calls: Vec<CallRecord>, prose: &str| Round {
            raw: prose.to_string(),
            finish: FinishReason::Eos,
            metrics: GenMetrics::default(),
            calls,
            prose: prose.to_string(),
            repairs: Vec::new(),
            problems: Vec::new(),
            reask: None,
            user: None,
        };
        let mut user = user.map(ScriptedUser::new);
        let mut writes = Vec::new();
        let mut rounds = Vec::new();
        let last = CaseTurn {
            calls: calls.to_vec(),
            reply: reply.to_string(),
        };
        for (i, turn) in turns.iter().chain([&last]).enumerate() {
            let records: Vec<CallRecord> = turn
                .calls
                .iter()
                .map(|c| self.answer(c, &mut writes, user.as_ref()))
                .collect();
            if !records.is_empty() {
                rounds.push(round(records, ""));
            }
            let mut answered = round(Vec::new(), &turn.reply);
            if i < turns.len() {
                let act = conversation::classify(&turn.reply);
                let said = user.as_mut().and_then(|u| u.respond(act));
                if said.is_none() {
                    return Err(format!(
                        "turn {}: the scripted user says nothing to this reply (it reads as {})",
                        i + 1,
                        act.name()
                    ));
                }
                answered.user = said;
            }
            rounds.push(answered);
        }
        Ok(Transcript {
            metrics: RunMetrics {
                rounds: rounds.len() as u32,
                ..RunMetrics::default()
            },
            rounds,
            reply: reply.to_string(),
            stop,
            loaded_skills: self.loaded_skills.clone(),
        })
    }
}
