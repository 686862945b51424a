//! Llama 3.1's calls: `{"name": …, "parameters": {…}}` as the reply (several joined by `;`),
//! perhaps after `<|python_tag|>`, and its built-in tools as `<|python_tag|>tool.call(a=1)`.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::json_tag::{call_from_json, json_value_at};
use super::{prose_without, python_list, ParseOutcome, ParsedCall};

pub const PYTHON_TAG: &str = "<|python_tag|>";

/// `brave_search.call(query="x")`, the form Llama 3.1 calls its built-in tools in.
static BUILT_IN_CALL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\.call\(").unwrap());

/// Reads every call in `text`: each JSON object whose keys are a call's (`name` and
/// `parameters` or `arguments`, perhaps `type`), and each built-in call after the tag.
pub fn parse(text: &str) -> ParseOutcome {
    let mut outcome = ParseOutcome::default();
    let mut spans: Vec<Range<usize>> = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        if rest.starts_with(PYTHON_TAG) {
            let after = at + PYTHON_TAG.len();
            if let Some((call, end)) = built_in_call(text, after) {
                outcome.calls.push(call);
                spans.push(at..end);
                at = end;
            } else {
                // The tag alone is the template's, never prose.
                spans.push(at..after);
                at = after;
            }
            continue;
        }
        if rest.starts_with('{') {
            if let Some((value, end)) = json_value_at(text, at) {
                if looks_like_a_call(&value) {
                    match call_from_json(value) {
                        Ok((name, arguments)) => outcome.calls.push(ParsedCall {
                            name,
                            arguments,
                            raw: text[at..end].to_string(),
                        }),
                        Err(problem) => outcome.problems.push(problem),
                    }
                    let end = end + separator_len(&text[end..]);
                    spans.push(at..end);
                    at = end;
                    continue;
                }
            }
        }
        at += rest.chars().next().map_or(1, char::len_utf8);
    }
    outcome.prose = prose_without(text, &spans);
    outcome
}

/// A JSON object with a string `name` and nothing but a call's keys besides.
fn looks_like_a_call(value: &Value) -> bool {
    let Value::Object(object) = value else {
        return false;
    };
    object.get("name").is_some_and(Value::is_string)
        && object
            .keys()
            .all(|k| matches!(k.as_str(), "name" | "parameters" | "arguments" | "type"))
}

/// The `;` (and spaces) between two calls of one reply.
fn separator_len(after: &str) -> usize {
    let trimmed = after.trim_start_matches([' ', '\t']);
    match trimmed.strip_prefix(';') {
        Some(_) => after.len() - trimmed.len() + 1,
        None => 0,
    }
}

/// `tool.call(a=1)` at byte `at`, read as the Python call `tool(a=1)`, up to the end of its line.
fn built_in_call(text: &str, at: usize) -> Option<(ParsedCall, usize)> {
    let rest = &text[at..];
    let head = BUILT_IN_CALL.captures(rest)?;
    let line_end = rest.find('\n').unwrap_or(rest.len());
    let line = rest[..line_end].trim_end();
    let name = head.get(1)?.as_str();
    let arguments = &line[head.get(0)?.end()..];
    let source = format!("[{name}({arguments}]");
    let mut parsed = python_list::parse(&source);
    if parsed.calls.len() != 1 || !parsed.prose.is_empty() {
        return None;
    }
    let mut call = parsed.calls.remove(0);
    call.raw = line.trim_start().to_string();
    Some((call, at + line.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Truth: Meta's Llama 3.1 model card (the JSON call form and the built-in form).
    #[test]
    fn reads_json_calls_and_built_in_calls() {
        let outcome =
            parse("{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; {\"name\": \"ping\", \"parameters\": {}}");
        let names: Vec<&str> = outcome.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["get_weather", "ping"]);
        assert_eq!(outcome.calls[0].arguments["city"], "Paris");
        assert_eq!(outcome.prose, "");

        let outcome = parse("<|python_tag|>brave_search.call(query=\"weather in Paris\")");
        assert_eq!(outcome.calls[0].name, "brave_search");
        assert_eq!(outcome.calls[0].arguments["query"], "weather in Paris");
    }

    /// Truth: a change — JSON in prose that is not a call's shape stays prose.
    #[test]
    fn other_json_is_prose() {
        let text = "The config is {\"name\": \"x\", \"port\": 8080}.";
        let outcome = parse(text);
        assert!(outcome.calls.is_empty());
        assert_eq!(outcome.prose, text);
    }
}
