//! The reference steps of a sample: what a reply that does what the skill asks would write.
//!
//! In order of precedence:
//! - for a conversation, the sample's own `reference_turns`: each turn's calls, then its reply
//!   (a question the scripted user answers, or the last turn's answer);
//! - the sample's own `reference_call` (`{"tool": …, "arguments": {…}}`, or `null` for "no call")
//!   and `reference_answer` fields;
//! - from the pack's laws: a `tool_not_called` law that applies makes "no call" the reference;
//!   the `argument_equals_field` laws that apply give the call (each argument the sample's
//!   field as written), as `skilleval check` builds its reference call; a `tool_called` law
//!   alone gives the tool with no arguments to read;
//! - the answer after the call's recorded result: a hand-labelled case of the sample
//!   (`judge-cases.jsonl`) that calls that tool and passes every law, else the reply `check`
//!   builds from the result when it passes every law.

use serde_json::{Map, Value};

use crate::eval::corpus::Sample;
use crate::eval::judge::{self, Check, Law};
use crate::eval::law_cases::{self, Case, CaseCall, CaseTurn, Replayer};
use crate::eval::pack::Pack;
use crate::harness::transcript::StopReason;

/// The field of a sample that names its reference call (or `null`: no call).
pub const CALL_FIELD: &str = "reference_call";
/// The field of a sample that gives its reference answer after the call's result.
pub const ANSWER_FIELD: &str = "reference_answer";

/// What the first reply should do.
#[derive(Debug, Clone, PartialEq)]
pub enum FirstStep {
    /// Call this tool; `arguments` are read only when `arguments_known`.
    Call {
        tool: String,
        arguments: Map<String, Value>,
        arguments_known: bool,
    },
    /// Make no call.
    NoCall,
}

/// A sample's reference steps, and where they came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub first: FirstStep,
    /// The answer after the call's result, when one is known.
    pub answer: Option<String>,
    /// `sample`, `laws`, or `laws and a judge case`: said in the steps file.
    pub source: &'static str,
    /// A conversation's whole reference (`reference_turns`): every turn's calls and reply, each
    /// scored in the state the turns before it left; empty for a single request.
    pub turns: Vec<CaseTurn>,
}

/// The sample's reference steps; `None` when neither its fields nor the laws say what it should
/// do (it is then not scored, and counted).
pub fn reference(
    pack: &Pack,
    replayer: &Replayer,
    cases: &[Case],
    sample: &Sample,
) -> anyhow::Result<Option<Reference>> {
    if let Some(turns) = law_cases::reference_turns(pack, sample)? {
        let first = match turns[0].calls.first() {
            Some(call) => FirstStep::Call {
                tool: call.tool.clone(),
                arguments: call.arguments.clone(),
                arguments_known: true,
            },
            None => FirstStep::NoCall,
        };
        return Ok(Some(Reference {
            first,
            answer: turns.last().map(|t| t.reply.clone()),
            source: "sample's reference conversation",
            turns,
        }));
    }
    let given = given_reference(pack, sample)?;
    let first = match &given {
        Some(first) => Some(first.clone()),
        None => from_laws(pack, sample),
    };
    let Some(first) = first else {
        return Ok(None);
    };
    let explicit_answer = match sample.fields.get(ANSWER_FIELD) {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) if !text.trim().is_empty() => Some(text.clone()),
        Some(_) => anyhow::bail!(
            "sample {:?}: field `{ANSWER_FIELD}`: give the answer as a non-empty string",
            sample.id
        ),
    };
    let answer = match (&first, explicit_answer) {
        (_, Some(text)) => Some(text),
        (
            FirstStep::Call {
                tool,
                arguments,
                arguments_known: true,
            },
            None,
        ) => answer_from_cases(pack, replayer, cases, sample, tool)
            .or_else(|| built_answer(pack, replayer, sample, tool, arguments)),
        _ => None,
    };
    let source = match (given.is_some(), &answer) {
        (true, _) => "sample",
        (false, Some(_)) => "laws and the recorded result",
        (false, None) => "laws",
    };
    Ok(Some(Reference {
        first,
        answer,
        source,
        turns: Vec::new(),
    }))
}

/// The sample's own `reference_call`, when it has the field.
fn given_reference(pack: &Pack, sample: &Sample) -> anyhow::Result<Option<FirstStep>> {
    let Some(value) = sample.fields.get(CALL_FIELD) else {
        return Ok(None);
    };
    let bad = || {
        anyhow::anyhow!(
            "sample {:?}: field `{CALL_FIELD}`: give {{\"tool\": NAME, \"arguments\": {{…}}}}, or null for a reply that makes no call",
            sample.id
        )
    };
    match value {
        Value::Null => Ok(Some(FirstStep::NoCall)),
        Value::Object(call) => {
            let tool = call
                .get("tool")
                .and_then(Value::as_str)
                .filter(|t| !t.trim().is_empty())
                .ok_or_else(bad)?;
            if !crate::harness::builtins::BUILT_IN_TOOLS.contains(&tool)
                && !pack.tools.iter().any(|t| t.name == tool)
            {
                let known: Vec<&str> = pack.tools.iter().map(|t| t.name.as_str()).collect();
                anyhow::bail!(
                    "sample {:?}: field `{CALL_FIELD}`: {tool:?} is not a tool of the pack (its tools: {})",
                    sample.id,
                    known.join(", ")
                );
            }
            let arguments = match call.get("arguments") {
                None => Map::new(),
                Some(Value::Object(arguments)) => arguments.clone(),
                Some(_) => return Err(bad()),
            };
            pack.check_written_call(tool, &arguments).map_err(|e| {
                anyhow::anyhow!("sample {:?}: field `{CALL_FIELD}`: {e}", sample.id)
            })?;
            Ok(Some(FirstStep::Call {
                tool: tool.to_string(),
                arguments_known: true,
                arguments,
            }))
        }
        _ => Err(bad()),
    }
}

/// The first step the laws that apply to the sample ask for.
fn from_laws(pack: &Pack, sample: &Sample) -> Option<FirstStep> {
    if let Some(call) = law_cases::law_reference_call(pack, sample) {
        return Some(FirstStep::Call {
            tool: call.tool,
            arguments: call.arguments,
            arguments_known: true,
        });
    }
    let applicable: Vec<&Law> = pack
        .laws
        .iter()
        .filter(|law| judge::applies(law, &sample.category, &sample.fields))
        .collect();
    if let Some(tool) = applicable.iter().find_map(|law| match law.check() {
        Check::ToolCalled { tool } => Some(tool.clone()),
        _ => None,
    }) {
        return Some(FirstStep::Call {
            tool,
            arguments: Map::new(),
            arguments_known: false,
        });
    }
    applicable
        .iter()
        .any(|law| matches!(law.check(), Check::ToolNotCalled { tool: None }))
        .then_some(FirstStep::NoCall)
}

/// A person's reply to the sample that calls `tool` and that every law passes.
fn answer_from_cases(
    pack: &Pack,
    replayer: &Replayer,
    cases: &[Case],
    sample: &Sample,
    tool: &str,
) -> Option<String> {
    cases
        .iter()
        .filter(|c| c.prompt_id == sample.id && !c.reply.trim().is_empty())
        .filter(|c| c.calls.len() == 1 && c.calls[0].tool == tool)
        .filter(|c| c.verdicts.values().all(|v| *v))
        .find(|c| {
            let transcript = replayer.transcript(&c.calls, &c.reply, StopReason::Answered);
            judge::judge_sample(&pack.laws, sample, &transcript).passed
        })
        .map(|c| c.reply.clone())
}

/// The reply `check` builds from the call's recorded result (the place, then the result's
/// lines), when every law passes it and the call has a recording.
fn built_answer(
    pack: &Pack,
    replayer: &Replayer,
    sample: &Sample,
    tool: &str,
    arguments: &Map<String, Value>,
) -> Option<String> {
    let call = CaseCall {
        tool: tool.to_string(),
        arguments: arguments.clone(),
        result: None,
    };
    let answered = replayer.transcript(std::slice::from_ref(&call), "", StopReason::Answered);
    let record = answered.calls().next()?;
    if record.is_error || judge::has_fixture_gap(&answered) {
        return None;
    }
    law_cases::built_reference_replies(pack, sample, &record.result)
        .into_iter()
        .find(|reply| {
            let transcript =
                replayer.transcript(std::slice::from_ref(&call), reply, StopReason::Answered);
            judge::judge_sample(&pack.laws, sample, &transcript).passed
        })
}
