//! Mistral's calls after its `[TOOL_CALLS]` token: a JSON list of `{"name", "arguments"}`
//! objects (v3 tokenizers: Mistral 7B v0.3, Nemo), or `name[ARGS]{…}` per call (v11 and later:
//! Mistral Small 3.2, Devstral, Magistral), perhaps with a `[CALL_ID]`.

use std::ops::Range;

use serde_json::Value;

use super::json_tag::{call_from_json, json_value_at};
use super::{prose_without, ParseOutcome, ParsedCall};

pub const TOOL_CALLS: &str = "[TOOL_CALLS]";
const ARGS: &str = "[ARGS]";
const CALL_ID: &str = "[CALL_ID]";

/// Reads the calls after every `[TOOL_CALLS]` in `text`.
pub fn parse(text: &str) -> ParseOutcome {
    let mut outcome = ParseOutcome::default();
    let mut spans: Vec<Range<usize>> = Vec::new();
    for (start, _) in text.match_indices(TOOL_CALLS) {
        if spans.last().is_some_and(|s| s.end > start) {
            continue;
        }
        let after = start + TOOL_CALLS.len();
        let body_at = after + (text[after..].len() - text[after..].trim_start().len());
        let read = match text[body_at..].chars().next() {
            Some('[') | Some('{') => json_calls(text, body_at),
            _ => named_call(text, body_at),
        };
        match read {
            Ok((calls, end)) => {
                outcome.calls.extend(calls);
                spans.push(start..end);
            }
            Err(problem) => outcome
                .problems
                .push(format!("{TOOL_CALLS} at byte {start}: {problem}")),
        }
    }
    outcome.prose = prose_without(text, &spans);
    outcome
}

/// A JSON list of calls, or one call object, at byte `at`.
fn json_calls(text: &str, at: usize) -> Result<(Vec<ParsedCall>, usize), String> {
    let (value, end) = json_value_at(text, at).ok_or("the calls are not valid JSON")?;
    let items = match value {
        Value::Array(items) => items,
        object => vec![object],
    };
    if items.is_empty() {
        return Err("the list of calls is empty".into());
    }
    let calls = items
        .into_iter()
        .map(|item| {
            let raw = item.to_string();
            call_from_json(item).map(|(name, arguments)| ParsedCall {
                name,
                arguments,
                raw,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok((calls, end))
}

/// `name[ARGS]{…}` or `name[CALL_ID]id[ARGS]{…}` at byte `at`.
fn named_call(text: &str, at: usize) -> Result<(Vec<ParsedCall>, usize), String> {
    let rest = &text[at..];
    let args = rest
        .find(ARGS)
        .ok_or("neither a JSON list nor name[ARGS]{…}")?;
    let head = &rest[..args];
    let name = head.split(CALL_ID).next().unwrap_or(head).trim();
    let is_name = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.is_empty() || !name.chars().all(is_name) {
        return Err(format!("{name:?} before {ARGS} is not a tool's name"));
    }
    let body_at = at + args + ARGS.len();
    let (value, end) =
        json_value_at(text, body_at).ok_or("the arguments after [ARGS] are not valid JSON")?;
    let Value::Object(arguments) = value else {
        return Err("the arguments after [ARGS] are not a JSON object".into());
    };
    let call = ParsedCall {
        name: name.to_string(),
        arguments,
        raw: text[at..end].to_string(),
    };
    Ok((vec![call], end))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Truth: the shapes Mistral's own chat templates write a call's turn in.
    #[test]
    fn reads_both_generations_of_the_syntax() {
        let v3 = parse(
            "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"a1b2c3d4e\"}]",
        );
        assert_eq!(v3.calls.len(), 1, "{v3:?}");
        assert_eq!(v3.calls[0].arguments["city"], "Paris");
        let v11 =
            parse("[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]ping[ARGS]{}");
        let names: Vec<&str> = v11.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["get_weather", "ping"]);
        assert_eq!(v11.prose, "");
    }

    /// Truth: a change — a broken call is reported, not run.
    #[test]
    fn a_broken_call_is_a_problem() {
        let outcome = parse("[TOOL_CALLS][{\"name\": \"f\", \"arguments\": ");
        assert!(outcome.calls.is_empty());
        assert_eq!(outcome.problems.len(), 1);
    }
}
