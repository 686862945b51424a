//! Repairs shared by the formats: removing a code fence around a call, and
//! reading tag-delimited call blocks so that only a final call that lacks
//! nothing but its closer is closed.

use std::ops::Range;
use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde_json::{Map, Value};

use super::{prose_without, ParseOutcome, ParsedCall, Repair, RepairKind};

/// An opening fence (with a language tag, if any, on its line), its content, and its closing
/// fence or the end of the text (a reply cut short leaves the fence open).
static FENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)```[ \t]*(?:([A-Za-z0-9_+.-]+)?[ \t]*\r?\n)?(.*?)(?:```|\z)").unwrap()
});

/// Replaces each code fence whose content holds a call (as `parse` reads it)
/// by that content, and names each removal.
pub fn strip_call_fences(
    text: &str,
    parse: &dyn Fn(&str) -> ParseOutcome,
) -> (String, Vec<Repair>) {
    let mut unfenced = String::with_capacity(text.len());
    let mut repairs = Vec::new();
    let mut cursor = 0;
    for fence in FENCE.captures_iter(text) {
        let whole = fence.get(0).expect("group 0 always matches");
        let content = fence.get(2).map_or("", |m| m.as_str());
        if parse(content).calls.is_empty() {
            continue;
        }
        unfenced.push_str(&text[cursor..whole.start()]);
        unfenced.push_str(content.trim_end_matches([' ', '\t']));
        cursor = whole.end();
        let detail = match fence.get(1) {
            Some(language) => format!(
                "removed a ```{} code fence around a call",
                language.as_str()
            ),
            None => "removed a ``` code fence around a call".to_string(),
        };
        repairs.push(Repair {
            kind: RepairKind::StrippedFence,
            detail,
        });
    }
    unfenced.push_str(&text[cursor..]);
    (unfenced, repairs)
}

/// The tags that delimit one kind of call block.
pub(crate) struct BlockTags {
    /// A well-formed opener; its captures are handed to the body reader.
    pub opener: &'static LazyLock<Regex>,
    /// Anything that starts like an opener, to report the malformed ones.
    pub opener_start: &'static LazyLock<Regex>,
    pub closer: &'static LazyLock<Regex>,
    /// The closer as it is added to a final call that lacks it.
    pub closer_text: &'static str,
    /// How the opener is named in problems, e.g. `<function=…>`.
    pub opener_label: &'static str,
    /// How a closed block holding a second opener is read anyway (given the whole block, its
    /// tags included), or `None`: such a block is ambiguous and not run.
    pub nested_reading: Option<fn(&str) -> Option<BodyCall>>,
}

/// Where a block's body stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyEnd {
    /// At the block's closer.
    Closer,
    /// At the end of the text, with the closer missing.
    EndOfText,
}

/// A call read from a block body.
pub(crate) struct BodyCall {
    pub name: String,
    pub arguments: Map<String, Value>,
    /// Inner closers the body lacked at the end of the text (e.g. `</parameter>`).
    pub missing_inner_closers: String,
    /// Parameters left out because they were never closed inside a closed call.
    pub dropped_parameters: Vec<String>,
}

/// Reads a body into a call, or says why it can't be run.
pub(crate) type BodyReader<'a> = &'a dyn Fn(&Captures, &str, BodyEnd) -> Result<BodyCall, String>;

/// Finds the call blocks of one tag pair in `text`.
///
/// A block ends at the first closer after its opener. A block holding a second
/// opener is ambiguous and not run. A block without a closer is run only if it
/// is the last thing in the text and its body reader accepts it as complete.
pub(crate) fn scan_tagged_blocks(
    text: &str,
    tags: &BlockTags,
    read_body: BodyReader,
) -> ParseOutcome {
    let mut outcome = ParseOutcome::default();
    let openers: Vec<Captures> = tags.opener.captures_iter(text).collect();
    let mut executed: Vec<Range<usize>> = Vec::new();
    // Every block seen, run or not, so that its inner text is not also reported.
    let mut seen_blocks: Vec<Range<usize>> = Vec::new();
    let mut cursor = 0;

    for (index, opener) in openers.iter().enumerate() {
        let opener_span = opener.get(0).expect("group 0 always matches").range();
        if opener_span.start < cursor {
            continue;
        }
        let opener_text = &text[opener_span.clone()];
        let closer = tags.closer.find_at(text, opener_span.end);
        let block_end = closer.map_or(text.len(), |c| c.end());
        let body_end = closer.map_or(text.len(), |c| c.start());
        let inner_opener = openers[index + 1..]
            .iter()
            .map(|later| later.get(0).expect("group 0 always matches"))
            .find(|later| later.start() < body_end);
        seen_blocks.push(opener_span.start..block_end);
        cursor = block_end;

        let block = &text[opener_span.start..block_end];
        let recovered = inner_opener
            .filter(|_| closer.is_some())
            .and_then(|_| tags.nested_reading.and_then(|read| read(block)));
        if let (Some(inner), Some(call)) = (inner_opener, recovered) {
            outcome.repairs.push(Repair {
                kind: RepairKind::ReadNestedOpener,
                detail: format!(
                    "{} opens inside {opener_text}; read as a call to {} by the recovery reading",
                    inner.as_str(),
                    call.name
                ),
            });
            push_call(&mut outcome, call, block);
            executed.push(opener_span.start..block_end);
            continue;
        }
        if let Some(inner) = inner_opener {
            let reason = if closer.is_some() {
                "it was not run because it is ambiguous"
            } else {
                "it was never closed, so neither was run"
            };
            outcome.problems.push(format!(
                "{} opens inside {} before that block is closed; {reason}.",
                inner.as_str(),
                opener_text
            ));
            continue;
        }

        let body = &text[opener_span.end..body_end];
        let body_end_kind = if closer.is_some() {
            BodyEnd::Closer
        } else {
            BodyEnd::EndOfText
        };
        match read_body(opener, body, body_end_kind) {
            Ok(call) => {
                if body_end_kind == BodyEnd::EndOfText {
                    outcome.repairs.push(Repair {
                        kind: RepairKind::ClosedFinalCall,
                        detail: format!(
                            "closed the final call {} by adding {}{}",
                            call.name, call.missing_inner_closers, tags.closer_text
                        ),
                    });
                }
                push_call(&mut outcome, call, block);
                executed.push(opener_span.start..block_end);
            }
            Err(reason) if body_end_kind == BodyEnd::EndOfText => {
                outcome.problems.push(format!(
                    "{opener_text} is never closed with {}, and it was not run: {reason}",
                    tags.closer_text
                ));
            }
            Err(reason) => {
                outcome
                    .problems
                    .push(format!("{opener_text} was not run: {reason}"));
            }
        }
    }

    report_malformed_openers(text, tags, &seen_blocks, &mut outcome);
    outcome.prose = prose_without(text, &executed);
    outcome
}

/// Adds a call read from `block`, naming each parameter it dropped.
fn push_call(outcome: &mut ParseOutcome, call: BodyCall, block: &str) {
    for key in &call.dropped_parameters {
        outcome.repairs.push(Repair {
            kind: RepairKind::DroppedUnclosedParameter,
            detail: format!(
                "ran {} without parameter {key}: it is never closed with </parameter>",
                call.name
            ),
        });
    }
    outcome.calls.push(ParsedCall {
        name: call.name,
        arguments: call.arguments,
        raw: block.trim_end().to_string(),
    });
}

fn report_malformed_openers(
    text: &str,
    tags: &BlockTags,
    seen_blocks: &[Range<usize>],
    outcome: &mut ParseOutcome,
) {
    for start in tags.opener_start.find_iter(text) {
        let inside_block = seen_blocks
            .iter()
            .any(|block| block.contains(&start.start()));
        if inside_block {
            continue;
        }
        let excerpt: String = text[start.start()..].chars().take(40).collect();
        outcome.problems.push(format!(
            "`{}` is not a complete {} tag, so it was left as text.",
            excerpt.trim_end(),
            tags.opener_label
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::toolcall::{parse, CallFormat};

    #[test]
    fn fence_with_language_tag_around_markup_call_is_removed() {
        let text = "Checking.\n```xml\n<function=weather_lookup>\n<parameter=location>\nParis\n</parameter>\n</function>\n```\n";
        let outcome = parse(CallFormat::Markup, text);
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].arguments["location"], "Paris");
        assert_eq!(outcome.prose, "Checking.");
        assert_eq!(outcome.repairs.len(), 1);
        assert_eq!(outcome.repairs[0].kind, RepairKind::StrippedFence);
        assert!(outcome.repairs[0].detail.contains("```xml"));
    }

    #[test]
    fn fence_without_language_tag_around_json_call_is_removed() {
        let text = "```\n<tool_call>{\"name\": \"ping\", \"arguments\": {}}</tool_call>\n```";
        let outcome = parse(CallFormat::JsonTag, text);
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].name, "ping");
        assert_eq!(outcome.prose, "");
        assert_eq!(outcome.repairs[0].kind, RepairKind::StrippedFence);
    }

    #[test]
    fn fence_with_tool_code_tag_is_removed() {
        let text = "```tool_code\n<function=ping></function>\n```";
        let outcome = parse(CallFormat::Markup, text);
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.prose, "");
        assert!(outcome.repairs[0].detail.contains("```tool_code"));
    }

    #[test]
    fn fence_with_python_tag_around_a_call_list_is_removed() {
        let text = "Sure.\n```python\n[weather_lookup(location=\"Paris\")]\n```";
        let outcome = parse(CallFormat::PythonList, text);
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].arguments["location"], "Paris");
        assert_eq!(outcome.prose, "Sure.");
        assert_eq!(outcome.repairs[0].kind, RepairKind::StrippedFence);
    }

    #[test]
    fn fenced_call_of_another_format_is_not_unfenced() {
        let text = "```xml\n<function=ping></function>\n```";
        let outcome = parse(CallFormat::JsonTag, text);
        assert!(outcome.calls.is_empty());
        assert!(outcome.repairs.is_empty());
        assert_eq!(outcome.prose, text);
    }

    #[test]
    fn fence_without_a_call_is_left_alone() {
        let text = "Here is code:\n```python\nprint(1)\n```";
        let outcome = parse(CallFormat::Markup, text);
        assert!(outcome.calls.is_empty());
        assert!(outcome.repairs.is_empty());
        assert_eq!(outcome.prose, text);
    }

    #[test]
    fn unclosed_fence_around_a_final_call_is_removed() {
        let text = "```json\n<tool_call>{\"name\": \"ping\", \"arguments\": {}}</tool_call>";
        let outcome = parse(CallFormat::JsonTag, text);
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.prose, "");
        assert_eq!(outcome.repairs[0].kind, RepairKind::StrippedFence);
    }

    #[test]
    fn fenced_final_call_missing_its_closer_is_unfenced_and_closed() {
        let text = "```xml\n<function=ping>\n<parameter=host>a</parameter>\n```";
        let outcome = parse(CallFormat::Markup, text);
        assert_eq!(outcome.calls.len(), 1);
        let kinds: Vec<RepairKind> = outcome.repairs.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            vec![RepairKind::StrippedFence, RepairKind::ClosedFinalCall]
        );
    }
}
