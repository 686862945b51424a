//! Worked examples written in a skill's body: fenced ```` ```example ```` blocks, each one
//! exchange of `User:`, `Assistant:` and `Tool:` turns. A loaded skill's examples reach the model
//! as earlier turns of the conversation, in its chat format and its call syntax, so a small model
//! learns the skill's behaviour the way it learns best: by continuing exchanges it has seen. The
//! rest of the body stays in the system text.

use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};

use super::template::{Message, Role};
use super::toolcall::{json_tag, markup, render::render_call, CallFormat, ParsedCall};

/// How a loaded skill's `example` blocks reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Presentation {
    /// Each block becomes earlier turns in the run's chat format and call syntax; the rest of
    /// the body is the skill's text.
    #[default]
    Turns,
    /// The body is shown as written, blocks included, as text: what a harness that knows no
    /// `example` blocks shows.
    Text,
}

impl Presentation {
    pub fn name(self) -> &'static str {
        match self {
            Presentation::Turns => "turns",
            Presentation::Text => "text",
        }
    }
}

/// One turn of an example, as written: calls in an assistant turn are kept as parsed calls so
/// that they can be shown in whichever syntax the run teaches.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    User(String),
    /// Prose around the calls, and the calls.
    Assistant {
        prose: String,
        calls: Vec<ParsedCall>,
    },
    /// A tool's result, answering the first call of the assistant turn before it.
    Tool {
        tool: String,
        result: String,
    },
}

/// One fenced block: a short conversation that starts with the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    pub turns: Vec<Turn>,
}

const FENCE_OPEN: &str = "```example";
const FENCE_CLOSE: &str = "```";

/// The speakers of a worked example written as prose, as a line begins with them.
const PROSE_SPEAKERS: [&str; 8] = [
    "user:",
    "assistant:",
    "call:",
    "tool:",
    "result:",
    "answer:",
    "model:",
    "response:",
];

/// The 0-based lines of `body`, outside `example` blocks, where a worked exchange written as
/// prose begins: a `User:` line (after list, quote or bold marks) followed within a few lines
/// by another speaker's. A small model is shown such text as instructions, not as turns it can
/// continue, and copies no call from it.
pub fn prose_example_lines(body: &str) -> Vec<usize> {
    let inside: Vec<bool> = {
        let mut open = false;
        body.lines()
            .map(|line| {
                let trimmed = line.trim();
                let was = open;
                if !open && trimmed == FENCE_OPEN {
                    open = true;
                } else if open && trimmed == FENCE_CLOSE {
                    open = false;
                }
                was || open
            })
            .collect()
    };
    let speaker = |line: &str| -> Option<&'static str> {
        let bare = line
            .trim_start()
            .trim_start_matches(['-', '*', '>', '#', '_', ' ', '`'])
            .to_lowercase();
        PROSE_SPEAKERS
            .into_iter()
            .find(|s| bare.starts_with(s) || bare.starts_with(&s.replace(':', "**:")))
    };
    let lines: Vec<&str> = body.lines().collect();
    let mut found = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if inside[index] || speaker(line) != Some("user:") {
            continue;
        }
        let answered = (index + 1..lines.len().min(index + 6))
            .any(|next| !inside[next] && speaker(lines[next]).is_some_and(|s| s != "user:"));
        if answered {
            found.push(index);
        }
    }
    found
}

/// Where each example block sits in `body`: byte ranges from the opening fence to the end of
/// the closing fence's line. An unclosed block is an error.
fn block_ranges(
    body: &str,
) -> anyhow::Result<Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>> {
    let mut blocks = Vec::new();
    let mut offset = 0;
    let mut open: Option<(usize, usize, usize)> = None; // block start, content start, line number
    for (index, line) in body.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim();
        match open {
            None if trimmed == FENCE_OPEN => open = Some((start, offset, index + 1)),
            Some((block_start, content_start, _)) if trimmed == FENCE_CLOSE => {
                blocks.push((block_start..offset, content_start..start));
                open = None;
            }
            _ => {}
        }
    }
    if let Some((_, _, line)) = open {
        bail!("the example block opened on line {line} of the body is not closed by a line ```");
    }
    Ok(blocks)
}

/// The body without its example blocks, blank runs they leave squeezed to one blank line.
pub fn strip(body: &str) -> String {
    let Ok(blocks) = block_ranges(body) else {
        return body.trim().to_string();
    };
    let mut kept = String::new();
    let mut at = 0;
    for (block, _) in &blocks {
        kept.push_str(&body[at..block.start]);
        at = block.end;
    }
    kept.push_str(&body[at..]);
    let mut out = String::new();
    let mut blank = 0;
    for line in kept.trim().lines() {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// The calls written in an assistant turn, in the markup or the JSON-tag syntax.
fn read_calls(text: &str) -> (String, Vec<ParsedCall>) {
    for parse in [markup::parse, json_tag::parse] {
        let outcome = parse(text);
        if !outcome.calls.is_empty() {
            return (outcome.prose.trim().to_string(), outcome.calls);
        }
    }
    (text.trim().to_string(), Vec::new())
}

fn parse_exchange(text: &str) -> anyhow::Result<Exchange> {
    let mut raw: Vec<(Role, String)> = Vec::new();
    for line in text.lines() {
        let speaker = [
            ("User:", Role::User),
            ("Assistant:", Role::Assistant),
            ("Tool:", Role::Tool),
        ]
        .into_iter()
        .find_map(|(tag, role)| line.strip_prefix(tag).map(|rest| (role, rest)));
        match (speaker, raw.last_mut()) {
            (Some((role, rest)), _) => raw.push((role, rest.trim_start().to_string())),
            (None, Some((_, content))) => {
                content.push('\n');
                content.push_str(line);
            }
            (None, None) if line.trim().is_empty() => {}
            (None, None) => bail!("text before the first `User:` line: {:?}", line.trim()),
        }
    }
    match raw.first() {
        None => bail!("the block holds no turns"),
        Some((Role::User, _)) => {}
        Some(_) => bail!("the first turn must be `User:`"),
    }
    let mut turns: Vec<Turn> = Vec::new();
    for (role, content) in raw {
        let content = content.trim().to_string();
        if content.is_empty() {
            bail!("an empty `{}` turn", speaker_name(role));
        }
        let turn = match role {
            Role::User | Role::System => Turn::User(content),
            Role::Assistant => {
                let (prose, calls) = read_calls(&content);
                Turn::Assistant { prose, calls }
            }
            Role::Tool => {
                let tool = match turns.last() {
                    Some(Turn::Assistant { calls, .. }) if !calls.is_empty() => {
                        calls[0].name.clone()
                    }
                    _ => bail!("a `Tool:` turn must follow an `Assistant:` turn that calls a tool"),
                };
                Turn::Tool {
                    tool,
                    result: content,
                }
            }
        };
        turns.push(turn);
    }
    Ok(Exchange { turns })
}

fn speaker_name(role: Role) -> &'static str {
    match role {
        Role::User | Role::System => "User:",
        Role::Assistant => "Assistant:",
        Role::Tool => "Tool:",
    }
}

/// Every example block of a skill body, in order. Errors say which block and why.
pub fn parse(body: &str) -> anyhow::Result<Vec<Exchange>> {
    block_ranges(body)?
        .into_iter()
        .enumerate()
        .map(|(index, (_, content))| {
            parse_exchange(&body[content]).with_context(|| format!("example block {}", index + 1))
        })
        .collect()
}

/// The exchange as conversation turns: calls written in `format`, tool results worded as the
/// loop words them (`NAME returned:` and the result).
pub fn to_messages(exchange: &Exchange, format: CallFormat) -> Vec<Message> {
    exchange
        .turns
        .iter()
        .map(|turn| match turn {
            Turn::User(text) => Message::user(text.clone()),
            Turn::Assistant { prose, calls } => {
                let mut parts: Vec<String> = Vec::new();
                if !prose.is_empty() {
                    parts.push(prose.clone());
                }
                parts.extend(
                    calls
                        .iter()
                        .map(|c| render_call(format, &c.name, &c.arguments)),
                );
                Message::assistant(parts.join("\n"))
            }
            Turn::Tool { tool, result } => Message::tool(tool_result_text(tool, result)),
        })
        .collect()
}

/// How the loop shows a tool's result to the model.
pub fn tool_result_text(tool: &str, result: &str) -> String {
    format!("{tool} returned:\n{result}")
}

/// The first call in the examples to `tool`, for showing the call syntax with real values.
pub fn first_call_to<'e>(exchanges: &'e [Exchange], tool: &str) -> Option<&'e ParsedCall> {
    exchanges
        .iter()
        .flat_map(|e| &e.turns)
        .find_map(|turn| match turn {
            Turn::Assistant { calls, .. } => calls.iter().find(|c| c.name == tool),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::template::Role;

    const BODY: &str = "Use the tool for weather.\n\n```example\nUser: rain in Graz?\nAssistant:\n<function=weather_lookup>\n<parameter=location>\nGraz\n</parameter>\n</function>\nTool: Graz, Austria\nNow: 9°C\nAssistant: In Graz, Austria it is 9°C.\n```\n\nAnswer briefly.\n\n```example\nUser: what is 2 plus 2?\nAssistant: 4.\n```\n";

    #[test]
    fn blocks_become_turns_with_the_call_in_the_run_s_syntax() {
        let exchanges = parse(BODY).unwrap();
        assert_eq!(exchanges.len(), 2);
        let markup = to_messages(&exchanges[0], CallFormat::Markup);
        let roles: Vec<Role> = markup.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
        );
        assert_eq!(markup[0].content, "rain in Graz?");
        assert_eq!(
            markup[1].content,
            "<function=weather_lookup>\n<parameter=location>\nGraz\n</parameter>\n</function>"
        );
        assert_eq!(
            markup[2].content,
            "weather_lookup returned:\nGraz, Austria\nNow: 9°C"
        );
        assert_eq!(markup[3].content, "In Graz, Austria it is 9°C.");
        let json = to_messages(&exchanges[0], CallFormat::JsonTag);
        assert_eq!(
            json[1].content,
            "<tool_call>\n{\"name\": \"weather_lookup\", \"arguments\": {\"location\": \"Graz\"}}\n</tool_call>"
        );
        assert_eq!(
            to_messages(&exchanges[1], CallFormat::Markup),
            [Message::user("what is 2 plus 2?"), Message::assistant("4.")]
        );
    }

    #[test]
    fn the_body_left_for_the_system_text_has_no_example_in_it() {
        assert_eq!(strip(BODY), "Use the tool for weather.\n\nAnswer briefly.");
        assert_eq!(strip("No examples here.\n"), "No examples here.");
        assert_eq!(strip("```example\nUser: hi\nAssistant: hello\n```"), "");
    }

    #[test]
    fn other_code_blocks_stay_in_the_body() {
        let body = "Format:\n```\nUser: not an example\n```";
        assert!(parse(body).unwrap().is_empty());
        assert_eq!(strip(body), body);
    }

    #[test]
    fn malformed_blocks_are_refused_with_the_reason() {
        let unclosed = parse("```example\nUser: hi\n").unwrap_err().to_string();
        assert!(unclosed.contains("not closed"), "{unclosed}");
        let no_user = format!("{:#}", parse("```example\nAssistant: hi\n```").unwrap_err());
        assert!(
            no_user.contains("example block 1") && no_user.contains("first turn"),
            "{no_user}"
        );
        let stray = format!(
            "{:#}",
            parse("```example\nhello\nUser: hi\n```").unwrap_err()
        );
        assert!(stray.contains("before the first"), "{stray}");
        let orphan = format!(
            "{:#}",
            parse("```example\nUser: hi\nAssistant: hello\nTool: 3\n```").unwrap_err()
        );
        assert!(orphan.contains("must follow"), "{orphan}");
        let empty = format!("{:#}", parse("```example\n```").unwrap_err());
        assert!(empty.contains("no turns"), "{empty}");
    }

    #[test]
    fn the_first_example_call_to_a_tool_is_found() {
        let exchanges = parse(BODY).unwrap();
        let call = first_call_to(&exchanges, "weather_lookup").unwrap();
        assert_eq!(call.arguments["location"], "Graz");
        assert!(first_call_to(&exchanges, "other").is_none());
    }

    #[test]
    fn examples_written_as_prose_are_found_and_example_blocks_are_not() {
        let body = "Look parcels up.\n\nExample:\nUser: Where is 1Z999?\nCall: track(number=\"1Z999\")\nAnswer: It is in transit.\n\n- **User:** And 1Z111?\n- **Assistant:** Let me look.\n\n```example\nUser: Where is 1Z5?\nAssistant: <function=track><parameter=number>1Z5</parameter></function>\n```\n\nUser: someone with no reply after.\n";
        let lines: Vec<&str> = body.lines().collect();
        let found = prose_example_lines(body);
        assert_eq!(
            found.iter().map(|&i| lines[i]).collect::<Vec<_>>(),
            ["User: Where is 1Z999?", "- **User:** And 1Z111?"]
        );
        assert!(prose_example_lines("```example\nUser: a\nAssistant: b\n```\n").is_empty());
    }
}
