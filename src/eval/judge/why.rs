//! Why a law failed on a transcript, in words: what `check` prints beside a failed law, so an
//! author sees the cause (a reply read as a plain question, a call never made) without
//! reading the judge.

use serde_json::{Map, Value};

use super::laws::{Check, Law};
use crate::harness::conversation::{classify, Act};
use crate::harness::transcript::Transcript;

/// A reply shown inside a sentence, cut to a line.
fn quoted(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(120) {
        Some((end, _)) => format!("{:?}…", &line[..end]),
        None => format!("{line:?}"),
    }
}

/// The values `tool`'s calls gave `argument`, as written.
fn argument_values(transcript: &Transcript, tool: &str, argument: &str) -> Option<String> {
    let values: Vec<String> = transcript
        .calls()
        .filter(|c| c.name == tool)
        .map(|c| {
            c.arguments
                .get(argument)
                .map_or("nothing".to_string(), Value::to_string)
        })
        .collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// What each reply before the first call to `tool` (every reply when there is none) was read
/// as: the scripted user's reading, or `classify`'s for the reply the exchange ended on.
fn readings(transcript: &Transcript, tool: Option<&str>) -> String {
    let first = transcript
        .rounds
        .iter()
        .position(|r| r.calls.iter().any(|c| tool.is_none_or(|t| c.name == t)));
    let rounds = &transcript.rounds[..first.unwrap_or(transcript.rounds.len())];
    let read: Vec<String> = rounds
        .iter()
        .filter(|r| r.calls.is_empty() && !r.prose.trim().is_empty())
        .map(|r| {
            let act = r.user.as_ref().map_or_else(|| classify(&r.prose), |u| u.on);
            let answered = if r.user.is_some() { "" } else { ", unanswered" };
            let act = match act {
                Act::Approval => "an approval question",
                Act::Question => "a question, not an approval",
                Act::Answer => "an answer, no question",
            };
            format!("{} read as {act}{answered}", quoted(&r.prose))
        })
        .collect();
    let whence = match (first, tool) {
        (Some(_), Some(tool)) => format!("before the first call to {tool}"),
        (Some(_), None) => "before the first call".to_string(),
        (None, Some(tool)) => format!("and {tool} was never called"),
        (None, None) => "and no tool was called".to_string(),
    };
    match read.is_empty() {
        true => format!("no reply {whence}"),
        false => format!("{} ({whence})", read.join("; ")),
    }
}

/// Why `law` failed on `transcript` for a sample with these `fields`. Kinds that read the
/// reply's text against results say which text they read; the rest say what happened.
pub fn why_failed(law: &Law, fields: &Map<String, Value>, transcript: &Transcript) -> String {
    let never = |tool: &str| format!("{tool} was never called");
    match law.check() {
        Check::ToolCalled { tool } => never(tool),
        Check::ToolNotCalled { tool } => {
            let called: Vec<&str> = transcript
                .calls()
                .filter(|c| tool.as_deref().is_none_or(|t| c.name == t))
                .map(|c| c.name.as_str())
                .collect();
            format!("the model called {}", called.join(", "))
        }
        Check::CallCount { tool, min, max } => format!(
            "{} call(s){}, outside {}..={}",
            transcript
                .calls()
                .filter(|c| tool.as_deref().is_none_or(|t| c.name == t))
                .count(),
            tool.as_deref().map(|t| format!(" to {t}")).unwrap_or_default(),
            min.unwrap_or(0),
            max.map_or("∞".to_string(), |m| m.to_string())
        ),
        Check::ArgumentEqualsField {
            tool,
            argument,
            field,
            ..
        } => match argument_values(transcript, tool, argument) {
            Some(values) => format!(
                "{tool}'s {argument} was {values}; the sample's {field} is {}",
                fields.get(field).map_or("missing".into(), Value::to_string)
            ),
            None => never(tool),
        },
        Check::ArgumentEquals {
            tool,
            argument,
            value,
            ..
        } => match argument_values(transcript, tool, argument) {
            Some(values) => format!("{tool}'s {argument} was {values}, not {value}"),
            None => never(tool),
        },
        Check::ArgumentMatches {
            tool,
            argument,
            pattern,
            ..
        } => match argument_values(transcript, tool, argument) {
            Some(values) => format!("{tool}'s {argument} was {values}, which `{pattern}` does not match"),
            None => never(tool),
        },
        Check::StopReasonIs { reason } => format!(
            "the exchange ended by {}, not {reason}",
            transcript.stop.name()
        ),
        Check::AsksBeforeCall { tool } => format!(
            "no question was answered before the call: {}",
            readings(transcript, tool.as_deref())
        ),
        Check::ConfirmsBeforeCall { tool } => format!(
            "no approval question came before the call: {}",
            readings(transcript, Some(tool))
        ),
        Check::NoUnapprovedWrite {} => {
            let refused: Vec<&str> = transcript
                .calls()
                .filter(|c| c.approved == Some(false))
                .map(|c| c.name.as_str())
                .collect();
            format!(
                "the model wrote ({}) before the user's yes, and the write was refused",
                refused.join(", ")
            )
        }
        Check::CallsAfter { tool, after } => {
            format!("no call to {tool} follows a call to {after} that did not fail")
        }
        Check::ArgumentFromUser {
            tool,
            argument,
            field,
            ..
        } => format!(
            "no call to {tool} made after the user said the sample's {field} passes it as {argument}"
        ),
        Check::ReplyMentionsToolValue { tool, .. } | Check::ReplyMentionsLastResult { tool, .. }
            if !transcript
                .calls()
                .any(|c| !c.is_error && tool.as_deref().is_none_or(|t| c.name == t)) =>
        {
            let tool = tool.as_deref().unwrap_or("a tool");
            format!("no result of {tool} without an error to read a value from (a call with no recording is an error)")
        }
        _ => format!(
            "the final reply {} does not meet it",
            quoted(&transcript.reply)
        ),
    }
}
