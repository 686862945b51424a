//! `<tool_call>{"name": …, "arguments": {…}}</tool_call>` calls (Qwen, Hermes).
//!
//! `"parameters"` is read as a synonym of `"arguments"`, and arguments given
//! as a JSON string holding an object are unpacked, as some models write them so.

use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde_json::{Map, Value};

use super::repair::{scan_tagged_blocks, BlockTags, BodyCall, BodyEnd};
use super::ParseOutcome;

static TOOL_CALL_OPENER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)<tool_call\s{0,64}>").unwrap());
static TOOL_CALL_OPENER_START: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)<tool_call(?:\s|>|$)").unwrap());
static TOOL_CALL_CLOSER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)</tool_call\s{0,64}>").unwrap());

static TOOL_CALL_TAGS: BlockTags = BlockTags {
    opener: &TOOL_CALL_OPENER,
    opener_start: &TOOL_CALL_OPENER_START,
    closer: &TOOL_CALL_CLOSER,
    closer_text: "</tool_call>",
    opener_label: "<tool_call>",
    nested_reading: None,
};

/// Reads every `<tool_call>` block in `text`.
pub fn parse(text: &str) -> ParseOutcome {
    scan_tagged_blocks(text, &TOOL_CALL_TAGS, &read_tool_call_body)
}

fn read_tool_call_body(_opener: &Captures, body: &str, _end: BodyEnd) -> Result<BodyCall, String> {
    // At the end of the text the same test decides: a body that is one whole
    // JSON object lacks nothing but its closer.
    let value: Value =
        serde_json::from_str(body.trim()).map_err(|error| format!("invalid JSON ({error})"))?;
    let (name, arguments) = call_from_json(value)?;
    Ok(BodyCall {
        name,
        arguments,
        missing_inner_closers: String::new(),
        dropped_parameters: Vec::new(),
    })
}

/// A call written as one JSON object, `{"name": …, "arguments": {…}}`: its name and
/// arguments. Other keys (`"type"`, `"id"`) are ignored.
pub(crate) fn call_from_json(value: Value) -> Result<(String, Map<String, Value>), String> {
    let Value::Object(mut call) = value else {
        return Err("the JSON must be one object with \"name\" and \"arguments\"".to_string());
    };
    let name = match call.remove("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_string(),
        _ => return Err("\"name\" must be the tool's name as a string".to_string()),
    };
    let arguments = match (call.remove("arguments"), call.remove("parameters")) {
        (Some(arguments), None) | (None, Some(arguments)) => arguments_object(arguments)?,
        (None, None) => Map::new(),
        (Some(arguments), Some(parameters)) if arguments == parameters => {
            arguments_object(arguments)?
        }
        (Some(_), Some(_)) => {
            return Err(
                "\"arguments\" and \"parameters\" differ; give only \"arguments\"".to_string(),
            )
        }
    };
    Ok((name, arguments))
}

/// The JSON value that starts at byte `at` of `text`, and the byte where it ends.
pub(crate) fn json_value_at(text: &str, at: usize) -> Option<(Value, usize)> {
    let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
    let value = values.next()?.ok()?;
    Some((value, at + values.byte_offset()))
}

fn arguments_object(arguments: Value) -> Result<Map<String, Value>, String> {
    match arguments {
        Value::Object(arguments) => Ok(arguments),
        Value::Null => Ok(Map::new()),
        Value::String(encoded) => match serde_json::from_str(&encoded) {
            Ok(Value::Object(arguments)) => Ok(arguments),
            _ => Err("\"arguments\" is a string that does not hold a JSON object".to_string()),
        },
        _ => Err("\"arguments\" must be a JSON object".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::toolcall::RepairKind;

    #[test]
    fn reads_name_and_arguments() {
        let text = "<tool_call>\n{\"name\": \"weather_lookup\", \"arguments\": {\"location\": \"Paris\", \"days\": 3}}\n</tool_call>";
        let outcome = parse(text);
        assert_eq!(outcome.calls.len(), 1);
        let call = &outcome.calls[0];
        assert_eq!(call.name, "weather_lookup");
        assert_eq!(call.arguments["location"], "Paris");
        assert_eq!(call.arguments["days"], 3);
        assert_eq!(call.raw, text);
        assert_eq!(outcome.prose, "");
    }

    #[test]
    fn parameters_is_a_synonym_of_arguments() {
        let outcome = parse("<tool_call>{\"name\": \"f\", \"parameters\": {\"a\": 1}}</tool_call>");
        assert_eq!(outcome.calls[0].arguments["a"], 1);
    }

    #[test]
    fn arguments_given_as_a_json_string_are_unpacked() {
        let outcome =
            parse(r#"<tool_call>{"name": "f", "arguments": "{\"a\": \"x\"}"}</tool_call>"#);
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].arguments["a"], "x");
    }

    #[test]
    fn missing_arguments_mean_none() {
        let outcome = parse("<tool_call>{\"name\": \"ping\"}</tool_call>");
        assert_eq!(outcome.calls.len(), 1);
        assert!(outcome.calls[0].arguments.is_empty());
    }

    #[test]
    fn invalid_json_is_a_problem_and_not_run() {
        let text = "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": }</tool_call>";
        let outcome = parse(text);
        assert!(outcome.calls.is_empty());
        assert_eq!(outcome.prose, text);
        assert!(outcome.problems[0].contains("invalid JSON"));
    }

    #[test]
    fn arguments_string_without_an_object_is_refused() {
        let outcome = parse(r#"<tool_call>{"name": "f", "arguments": "a=1"}</tool_call>"#);
        assert!(outcome.calls.is_empty());
        assert!(outcome.problems[0].contains("does not hold a JSON object"));
    }

    #[test]
    fn missing_name_is_refused() {
        let outcome = parse("<tool_call>{\"arguments\": {}}</tool_call>");
        assert!(outcome.calls.is_empty());
        assert!(outcome.problems[0].contains("\"name\""));
    }

    #[test]
    fn tags_are_case_insensitive_and_calls_are_read_in_order() {
        let outcome = parse(
            "First.\n<TOOL_CALL>{\"name\": \"a\"}</Tool_Call>\n<tool_call>{\"name\": \"b\"}</tool_call>\nThen.",
        );
        let names: Vec<&str> = outcome.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(outcome.prose, "First.\nThen.");
    }

    #[test]
    fn nested_opener_makes_the_block_ambiguous() {
        let outcome = parse(
            "<tool_call>{\"name\": \"a\"}<tool_call>{\"name\": \"b\"}</tool_call></tool_call>",
        );
        assert!(outcome.calls.is_empty());
        assert!(outcome.problems[0].contains("ambiguous"));
    }

    #[test]
    fn final_call_missing_its_closer_is_closed() {
        let outcome =
            parse("Looking.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n");
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.prose, "Looking.");
        assert_eq!(outcome.repairs[0].kind, RepairKind::ClosedFinalCall);
        assert!(outcome.repairs[0].detail.ends_with("adding </tool_call>"));
    }

    #[test]
    fn unclosed_call_followed_by_prose_is_not_repaired() {
        let outcome = parse("<tool_call>{\"name\": \"a\"}\nThat should do it.");
        assert!(outcome.calls.is_empty());
        assert!(outcome.repairs.is_empty());
        assert!(outcome.problems[0].contains("never closed"));
    }

    #[test]
    fn unclosed_call_followed_by_another_call_runs_neither() {
        let outcome =
            parse("<tool_call>{\"name\": \"a\"}\n<tool_call>{\"name\": \"b\"}</tool_call>");
        assert!(outcome.calls.is_empty());
        assert_eq!(outcome.problems.len(), 1);
    }

    #[test]
    fn text_after_the_closer_is_prose() {
        let outcome = parse("<tool_call>{\"name\": \"a\"}</tool_call>{\"arguments\": {\"x\": 1}}");
        assert_eq!(outcome.calls.len(), 1);
        assert!(outcome.calls[0].arguments.is_empty());
        assert_eq!(outcome.prose, "{\"arguments\": {\"x\": 1}}");
    }

    #[test]
    fn incomplete_opener_stays_prose() {
        let text = "<tool_call {\"name\": \"a\"}</tool_call>";
        let outcome = parse(text);
        assert!(outcome.calls.is_empty());
        assert_eq!(outcome.prose, text);
        assert_eq!(outcome.problems.len(), 1);
    }
}
