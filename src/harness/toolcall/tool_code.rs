//! Gemma's calls: Python calls in a ```` ```tool_code ```` block, one a line or as a list,
//! perhaps wrapped in `print(…)`.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{prose_without, python_list, ParseOutcome};

/// A `tool_code` block, closed or cut off at the end of the reply.
static TOOL_CODE_BLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```[ \t]*tool_code[ \t]*\r?\n(.*?)(?:```|\z)").unwrap());

/// Reads the calls of every `tool_code` block in `text`.
pub fn parse(text: &str) -> ParseOutcome {
    let mut outcome = ParseOutcome::default();
    let mut spans: Vec<Range<usize>> = Vec::new();
    for block in TOOL_CODE_BLOCK.captures_iter(text) {
        let whole = block.get(0).expect("group 0 always matches");
        let body = block.get(1).map_or("", |m| m.as_str());
        let lines: Vec<&str> = body
            .lines()
            .map(|line| unprinted(line.trim()))
            .filter(|line| !line.is_empty())
            .collect();
        let source = match lines.as_slice() {
            [list] if list.starts_with('[') => list.to_string(),
            _ => format!("[{}]", lines.join(", ")),
        };
        let parsed = python_list::parse(&source);
        if parsed.calls.is_empty() || !parsed.prose.is_empty() {
            let reason = parsed
                .problems
                .first()
                .map_or("no call in it", String::as_str);
            outcome
                .problems
                .push(format!("tool_code block not run: {reason}"));
            continue;
        }
        outcome.calls.extend(parsed.calls);
        spans.push(whole.range());
    }
    outcome.prose = prose_without(text, &spans);
    outcome
}

/// `print(f(a=1))` as `f(a=1)`: Gemma prints the call's result as often as it makes the call.
fn unprinted(line: &str) -> &str {
    line.strip_prefix("print(")
        .and_then(|inner| inner.strip_suffix(')'))
        .map_or(line, str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Truth: Google's Gemma function-calling guide (the `tool_code` block).
    #[test]
    fn reads_calls_in_a_tool_code_block() {
        let outcome =
            parse("Let me check.\n```tool_code\nget_weather(city=\"Paris\")\nprint(ping())\n```\n");
        let names: Vec<&str> = outcome.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["get_weather", "ping"]);
        assert_eq!(outcome.prose, "Let me check.");
    }

    /// Truth: a change — a block of code that is no call is reported and stays prose.
    #[test]
    fn code_that_is_not_a_call_stays_prose() {
        let text = "```tool_code\nx = 1 +\n```";
        let outcome = parse(text);
        assert!(outcome.calls.is_empty());
        assert_eq!(outcome.prose, text);
        assert_eq!(outcome.problems.len(), 1);
    }
}
