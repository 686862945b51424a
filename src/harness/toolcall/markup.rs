//! `<function=NAME><parameter=KEY>VALUE</parameter></function>` calls.
//!
//! Tags are case-insensitive. A name is 1-64 characters, none of them
//! whitespace, `<` or `>`; at most 64 whitespace characters may stand around
//! `=` and before `>`. Anything longer is not a tag and stays as text, so a
//! runaway generation can't be read as a call.
//!
//! Two readings follow the seed grammar (docs/harness.md, "Seed grammar"): a closed block that
//! holds a second function opener is read by the recovery reading (`read_nested_block`), and a
//! parameter never closed inside a closed block adds no argument but leaves the call standing.

use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde_json::{Map, Value};

use super::repair::{scan_tagged_blocks, BlockTags, BodyCall, BodyEnd};
use super::ParseOutcome;

static FUNCTION_OPENER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<function\s{0,64}=\s{0,64}([^\s<>]{1,64})\s{0,64}>").unwrap()
});
static FUNCTION_OPENER_START: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)<function(?:\s|=|>|$)").unwrap());
static FUNCTION_CLOSER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)</function\s{0,64}>").unwrap());
static PARAMETER_OPENER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<parameter\s{0,64}=\s{0,64}([^\s<>]{1,64})\s{0,64}>").unwrap()
});
static PARAMETER_CLOSER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)</parameter\s{0,64}>").unwrap());

static FUNCTION_TAGS: BlockTags = BlockTags {
    opener: &FUNCTION_OPENER,
    opener_start: &FUNCTION_OPENER_START,
    closer: &FUNCTION_CLOSER,
    closer_text: "</function>",
    opener_label: "<function=NAME> (NAME: 1-64 characters, no whitespace, < or >)",
    nested_reading: Some(read_nested_block),
};

/// Reads every `<function=…>` call in `text`; values are strings.
pub fn parse(text: &str) -> ParseOutcome {
    scan_tagged_blocks(text, &FUNCTION_TAGS, &read_function_body)
}

fn read_function_body(opener: &Captures, body: &str, end: BodyEnd) -> Result<BodyCall, String> {
    let name = opener[1].to_string();
    let mut arguments = Map::new();
    let mut missing_inner_closers = String::new();
    let mut dropped_parameters = Vec::new();
    let mut position = 0;
    loop {
        position += body[position..].len() - body[position..].trim_start().len();
        if position == body.len() {
            break;
        }
        let parameter = PARAMETER_OPENER
            .captures_at(body, position)
            .filter(|found| found.get(0).is_some_and(|m| m.start() == position));
        let Some(parameter) = parameter else {
            let stray: String = body[position..].chars().take(40).collect();
            return Err(format!(
                "text outside <parameter=…> tags: `{}`",
                stray.trim_end()
            ));
        };
        let key = parameter[1].to_string();
        let value_start = parameter.get(0).map_or(position, |m| m.end());
        let closer = PARAMETER_CLOSER.find_at(body, value_start);
        let value_end = closer.map_or(body.len(), |c| c.start());
        if let Some(next) = PARAMETER_OPENER.find(&body[value_start..value_end]) {
            return Err(format!(
                "parameter {key} is not closed with </parameter> before {}",
                next.as_str()
            ));
        }
        match closer {
            Some(closer) => position = closer.end(),
            // Only the last parameter of a final, unclosed call may lack its closer.
            None if end == BodyEnd::EndOfText => {
                missing_inner_closers.push_str("</parameter>");
                position = body.len();
            }
            // Inside a closed call, an unclosed parameter adds nothing and voids nothing.
            None => {
                dropped_parameters.push(key);
                break;
            }
        }
        if arguments.contains_key(&key) {
            return Err(format!("parameter {key} is given twice"));
        }
        let value = trim_one_newline(&body[value_start..value_end]);
        arguments.insert(key, Value::String(value.to_string()));
    }
    Ok(BodyCall {
        name,
        arguments,
        missing_inner_closers,
        dropped_parameters,
    })
}

/// The seed grammar's recovery reading of a closed block holding a nested function opener:
/// the first lowercase `<function=` (no whitespace before `=`) names the call, from the text
/// between `=` and `>` (at most 64 characters, then trimmed); the call takes the complete
/// lowercase parameters after it, up to the first lowercase `</function>`. Every other function
/// opener is passed over. No such opener or closer, a name that is not one, a key given twice
/// or a parameter opener inside a value: no call.
fn read_nested_block(block: &str) -> Option<BodyCall> {
    let (name, after_name) = lowercase_tag_name(block, "<function=")?;
    let body = &after_name[..after_name.find("</function>")?];
    let mut arguments = Map::new();
    let mut dropped_parameters = Vec::new();
    let mut rest = body;
    while let Some(opener) = rest.find("<parameter=") {
        let Some((key, after_key)) = lowercase_tag_name(&rest[opener..], "<parameter=") else {
            rest = &rest[opener + "<parameter=".len()..];
            continue;
        };
        let Some(value_end) = after_key.find("</parameter>") else {
            dropped_parameters.push(key);
            break;
        };
        let value = &after_key[..value_end];
        if value.to_lowercase().contains("<parameter") || arguments.contains_key(&key) {
            return None;
        }
        arguments.insert(key, Value::String(trim_one_newline(value).to_string()));
        rest = &after_key[value_end + "</parameter>".len()..];
    }
    Some(BodyCall {
        name,
        arguments,
        missing_inner_closers: String::new(),
        dropped_parameters,
    })
}

/// The name of the first `opener` (`<function=` or `<parameter=`, lowercase) in `text` and the
/// text after its `>`: the text between `=` and `>` is at most 64 characters, and trimmed it
/// must be a name (1-64 characters, none of them whitespace, `<` or `>`).
fn lowercase_tag_name<'t>(text: &'t str, opener: &str) -> Option<(String, &'t str)> {
    let after_equals = &text[text.find(opener)? + opener.len()..];
    let inside = after_equals
        .char_indices()
        .nth(64)
        .map_or(after_equals, |(i, c)| &after_equals[..i + c.len_utf8()]);
    let bracket = inside.find('>')?;
    let name = inside[..bracket].trim();
    let valid = !name.is_empty() && !name.contains(|c: char| c.is_whitespace() || c == '<');
    valid.then(|| (name.to_string(), &after_equals[bracket + 1..]))
}

/// Drops one line break at each end: models often put a value on its own line.
fn trim_one_newline(value: &str) -> &str {
    let value = value
        .strip_prefix("\r\n")
        .or_else(|| value.strip_prefix('\n'))
        .unwrap_or(value);
    value
        .strip_suffix("\r\n")
        .or_else(|| value.strip_suffix('\n'))
        .unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::toolcall::RepairKind;

    const WEATHER: &str =
        "<function=weather_lookup>\n<parameter=location>\nParis\n</parameter>\n</function>";

    #[test]
    fn reads_a_call_and_trims_one_newline_around_values() {
        let outcome = parse(WEATHER);
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].name, "weather_lookup");
        assert_eq!(outcome.calls[0].arguments["location"], "Paris");
        assert_eq!(outcome.calls[0].raw, WEATHER);
        assert!(outcome.problems.is_empty());
        assert!(outcome.repairs.is_empty());
        assert_eq!(outcome.prose, "");
    }

    #[test]
    fn only_one_newline_is_trimmed_and_inner_text_is_kept() {
        let outcome = parse(
            "<function=note><parameter=text>\n\n  two lines\nhere \n\n</parameter></function>",
        );
        assert_eq!(outcome.calls[0].arguments["text"], "\n  two lines\nhere \n");
    }

    #[test]
    fn tags_are_case_insensitive() {
        let outcome = parse("<FUNCTION=ping><Parameter=host>a</PARAMETER></Function>");
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].name, "ping");
        assert_eq!(outcome.calls[0].arguments["host"], "a");
    }

    #[test]
    fn whitespace_around_equals_and_before_closing_bracket_is_allowed() {
        let outcome = parse("<function = ping  ><parameter =\thost >a</parameter ></function >");
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].arguments["host"], "a");
    }

    #[test]
    fn sixty_five_whitespace_before_bracket_is_not_a_tag() {
        let text = format!("<function=ping{}></function>", " ".repeat(65));
        let outcome = parse(&text);
        assert!(outcome.calls.is_empty());
        assert_eq!(outcome.prose, text.trim_end());
        assert_eq!(outcome.problems.len(), 1);
        assert!(outcome.problems[0].contains("not a complete"));
    }

    #[test]
    fn sixty_four_whitespace_before_bracket_is_still_a_tag() {
        let text = format!("<function=ping{}></function>", " ".repeat(64));
        assert_eq!(parse(&text).calls.len(), 1);
    }

    #[test]
    fn name_of_sixty_five_characters_is_not_a_tag() {
        let text = format!("<function={}></function>", "a".repeat(65));
        let outcome = parse(&text);
        assert!(outcome.calls.is_empty());
        assert_eq!(outcome.prose, text);
        assert_eq!(outcome.problems.len(), 1);
    }

    #[test]
    fn name_of_sixty_four_characters_is_a_tag() {
        let name = "a".repeat(64);
        let outcome = parse(&format!("<function={name}></function>"));
        assert_eq!(outcome.calls[0].name, name);
    }

    #[test]
    fn parameter_ends_at_the_first_closer() {
        let outcome = parse("<function=f><parameter=a>1</parameter>2</parameter></function>");
        assert!(outcome.calls.is_empty());
        assert!(outcome.problems[0].contains("outside <parameter"));
    }

    #[test]
    fn function_ends_at_first_closer_and_later_text_is_prose() {
        let outcome = parse(
            "<function=f><parameter=a>1</parameter></function><parameter=b>2</parameter></function> Done.",
        );
        assert_eq!(outcome.calls.len(), 1);
        let arguments = &outcome.calls[0].arguments;
        assert_eq!(arguments.len(), 1);
        assert_eq!(arguments["a"], "1");
        assert_eq!(outcome.prose, "<parameter=b>2</parameter></function> Done.");
    }

    #[test]
    fn prose_around_calls_is_kept_and_tidied() {
        let text = format!("Let me check.\n\n{WEATHER}\n\n\n\nBack soon.");
        let outcome = parse(&text);
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.prose, "Let me check.\n\nBack soon.");
    }

    #[test]
    fn call_inside_a_line_leaves_one_space() {
        let outcome = parse("Sure. <function=ping></function> Done.");
        assert_eq!(outcome.prose, "Sure. Done.");
    }

    #[test]
    fn several_calls_are_read_in_order() {
        let outcome = parse(
            "<function=a><parameter=x>1</parameter></function>\n<function=b></function>\n<function=c><parameter=y>2</parameter><parameter=z>3</parameter></function>",
        );
        let names: Vec<&str> = outcome.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(outcome.calls[2].arguments["z"], "3");
    }

    /// Truth: the seed README's grammar section. Parameters before the naming opener are not
    /// the call's; the text after the block's first closer is prose.
    #[test]
    fn nested_function_opener_is_read_by_the_recovery_reading() {
        let outcome = parse(
            "<function=a><parameter=x>1</parameter><function=b><parameter=y>2</parameter></function></function>",
        );
        assert_eq!(outcome.calls.len(), 1, "{:?}", outcome.problems);
        assert_eq!(outcome.calls[0].name, "a");
        assert_eq!(outcome.calls[0].arguments.len(), 2);
        assert_eq!(outcome.repairs[0].kind, RepairKind::ReadNestedOpener);
        assert!(outcome.repairs[0].detail.contains("<function=b>"));
        assert_eq!(outcome.prose, "</function>");
        let outcome = parse("<FUNCTION=a><parameter=x>1</parameter><function=b></function>");
        assert_eq!(outcome.calls[0].name, "b");
        assert!(outcome.calls[0].arguments.is_empty());
    }

    /// Truth: the seed README's grammar section (no lowercase opener or closer, no call).
    #[test]
    fn nested_block_without_a_lowercase_opener_or_closer_stays_ambiguous() {
        for text in [
            "<FUNCTION=a><FUNCTION=b></function>",
            "<function=a><function=b></FUNCTION>",
            "<function=a><function=b><parameter=x>1</parameter>",
            &format!("<FUNCTION=a><function={}></function>", "b".repeat(65)),
            "<function=a><function=b><parameter=x>1<parameter=y>2</parameter></function>",
            "<function=a><function=b><parameter=x>1</parameter><parameter=x>2</parameter></function>",
        ] {
            let outcome = parse(text);
            assert!(outcome.calls.is_empty(), "{text}: {:?}", outcome.calls);
            assert_eq!(outcome.problems.len(), 1, "{text}");
        }
    }

    /// Truth: "a change" — the name inside a nested block may stand 64 characters from `=`,
    /// not 65 (the seed README's limit).
    #[test]
    fn nested_naming_opener_reads_64_characters_from_the_equals_sign() {
        let name = format!("{}b", " ".repeat(63));
        let outcome = parse(&format!("<FUNCTION=a><function={name}></function>"));
        assert_eq!(outcome.calls[0].name, "b");
        let outcome = parse(&format!("<FUNCTION=a><function= {name}></function>"));
        assert!(outcome.calls.is_empty());
    }

    /// Truth: the seed README's grammar section: a block ends at the first closer, so the
    /// second opener is nested in the first block, which the recovery reading runs.
    #[test]
    fn unclosed_block_followed_by_another_call_runs_the_first_with_both_parameters() {
        let outcome = parse(
            "<function=a><parameter=x>1</parameter>\n<function=b><parameter=y>2</parameter></function>",
        );
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].name, "a");
        assert_eq!(outcome.calls[0].arguments.len(), 2);
        assert_eq!(outcome.prose, "");
    }

    #[test]
    fn unclosed_block_followed_by_prose_is_not_repaired() {
        let text = "<function=a><parameter=x>1</parameter>\nI will wait for the result.";
        let outcome = parse(text);
        assert!(outcome.calls.is_empty());
        assert!(outcome.repairs.is_empty());
        assert_eq!(outcome.prose, text);
        assert!(outcome.problems[0].contains("never closed"));
    }

    #[test]
    fn final_call_missing_function_closer_is_closed() {
        let outcome = parse("Checking.\n<function=a>\n<parameter=x>\n1\n</parameter>\n");
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].arguments["x"], "1");
        assert_eq!(outcome.prose, "Checking.");
        assert_eq!(outcome.repairs.len(), 1);
        assert_eq!(outcome.repairs[0].kind, RepairKind::ClosedFinalCall);
        assert!(outcome.repairs[0].detail.ends_with("adding </function>"));
    }

    #[test]
    fn final_call_missing_parameter_and_function_closers_is_closed() {
        let outcome = parse("<function=a><parameter=x>1</parameter><parameter=y>\nParis\n");
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].arguments["y"], "Paris");
        assert!(outcome.repairs[0]
            .detail
            .ends_with("adding </parameter></function>"));
    }

    /// Truth: the seed README's grammar section: the unclosed parameter adds no argument and
    /// does not void the call.
    #[test]
    fn unclosed_parameter_inside_a_closed_call_is_left_out() {
        let outcome = parse("<function=a><parameter=y>2</parameter><parameter=x>1</function>");
        assert_eq!(outcome.calls.len(), 1, "{:?}", outcome.problems);
        assert_eq!(outcome.calls[0].arguments.len(), 1);
        assert_eq!(outcome.calls[0].arguments["y"], "2");
        assert_eq!(
            outcome.repairs[0].kind,
            RepairKind::DroppedUnclosedParameter
        );
        assert!(outcome.repairs[0].detail.contains("without parameter x"));
        // An opener inside the unclosed value still makes the block ambiguous.
        let outcome = parse("<function=a><parameter=x>1<parameter=y>2</function>");
        assert!(outcome.calls.is_empty());
    }

    #[test]
    fn incomplete_opener_stays_prose() {
        let outcome = parse("I'll call <function=weather_lookup");
        assert!(outcome.calls.is_empty());
        assert_eq!(outcome.prose, "I'll call <function=weather_lookup");
        assert_eq!(outcome.problems.len(), 1);
    }

    #[test]
    fn repeated_parameter_is_refused() {
        let outcome =
            parse("<function=a><parameter=x>1</parameter><parameter=x>2</parameter></function>");
        assert!(outcome.calls.is_empty());
        assert!(outcome.problems[0].contains("given twice"));
    }

    #[test]
    fn parameter_opener_inside_a_value_is_refused() {
        let outcome = parse("<function=a><parameter=x>1<parameter=y>2</parameter></function>");
        assert!(outcome.calls.is_empty());
        assert!(outcome.problems[0].contains("before <parameter=y>"));
    }

    #[test]
    fn plain_prose_has_no_calls_or_problems() {
        let outcome = parse("It is 18 degrees in Paris.");
        assert!(outcome.calls.is_empty());
        assert!(outcome.problems.is_empty());
        assert_eq!(outcome.prose, "It is 18 degrees in Paris.");
    }
}
