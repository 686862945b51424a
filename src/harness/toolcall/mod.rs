//! Tool-call formats, their parsers and the repairs a small model needs.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The written form a model uses to call a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallFormat {
    /// `<function=NAME><parameter=KEY>VALUE</parameter></function>`
    Markup,
    /// `<tool_call>{"name": …, "arguments": {…}}</tool_call>`
    JsonTag,
    /// `[f(a=1, b="x"), g()]`
    PythonList,
    /// `{"name": …, "parameters": {…}}`, perhaps after `<|python_tag|>` (Llama 3.1 and 3.2)
    LlamaJson,
    /// `[TOOL_CALLS][{"name": …, "arguments": {…}}]` or `[TOOL_CALLS]name[ARGS]{…}` (Mistral)
    Mistral,
    /// ```` ```tool_code ```` blocks of Python calls (Gemma)
    ToolCode,
}

impl CallFormat {
    pub const ALL: [CallFormat; 6] = [
        CallFormat::Markup,
        CallFormat::JsonTag,
        CallFormat::PythonList,
        CallFormat::LlamaJson,
        CallFormat::Mistral,
        CallFormat::ToolCode,
    ];

    /// The text every call of this format opens with: a reply that does not begin with it
    /// makes no call in its first words.
    pub fn opener(self) -> &'static str {
        match self {
            CallFormat::Markup => "<function=",
            CallFormat::JsonTag => "<tool_call>",
            CallFormat::PythonList => "[",
            CallFormat::LlamaJson => "{",
            CallFormat::Mistral => mistral::TOOL_CALLS,
            CallFormat::ToolCode => "```tool_code",
        }
    }

    /// The syntax a chat template writes an assistant's calls in, when it shows one.
    pub fn from_template(template: &str) -> Option<CallFormat> {
        let shows = |marker: &str| template.contains(marker);
        if shows(mistral::TOOL_CALLS) {
            Some(CallFormat::Mistral)
        } else if shows("<tool_call>") {
            Some(CallFormat::JsonTag)
        } else if shows(llama_json::PYTHON_TAG)
            || (shows("<|start_header_id|>") && shows("\"parameters\""))
        {
            Some(CallFormat::LlamaJson)
        } else if shows("tool_code") {
            Some(CallFormat::ToolCode)
        } else if shows("<function=") {
            Some(CallFormat::Markup)
        } else {
            None
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepairKind {
    /// A code fence around a call was removed.
    StrippedFence,
    /// The last call lacked only its closing tag, which was added.
    ClosedFinalCall,
    /// An argument was converted to the type its schema asks for.
    CoercedArgument,
    /// A block holding a nested opener was read by the seed grammar's recovery reading.
    ReadNestedOpener,
    /// A parameter never closed inside a closed call was left out; the call ran without it.
    DroppedUnclosedParameter,
}

/// A change made to what the model wrote so that it could be executed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repair {
    pub kind: RepairKind,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParsedCall {
    pub name: String,
    pub arguments: Map<String, Value>,
    /// The source text of the call.
    pub raw: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ParseOutcome {
    pub calls: Vec<ParsedCall>,
    /// What is left for the user once calls are taken out.
    pub prose: String,
    pub repairs: Vec<Repair>,
    /// Call-like blocks that were not executed, with the reason.
    pub problems: Vec<String>,
}

pub mod coerce;
pub mod describe;
pub mod grammar;
pub mod json_tag;
pub mod llama_json;
pub mod markup;
pub mod mistral;
pub mod python_list;
pub mod render;
pub mod repair;
pub mod think;
pub mod tool_code;

/// Reads the calls in a model reply written in `format`, after removing its thinking
/// (`think`) and the code fences that wrap a call.
pub fn parse(format: CallFormat, text: &str) -> ParseOutcome {
    match think::strip_thinking(text) {
        Some(thought_out) => parse_answer(format, &thought_out),
        None => parse_answer(format, text),
    }
}

fn parse_answer(format: CallFormat, text: &str) -> ParseOutcome {
    let parse_unfenced = |text: &str| match format {
        CallFormat::Markup => markup::parse(text),
        CallFormat::JsonTag => json_tag::parse(text),
        CallFormat::PythonList => python_list::parse(text),
        CallFormat::LlamaJson => llama_json::parse(text),
        CallFormat::Mistral => mistral::parse(text),
        CallFormat::ToolCode => tool_code::parse(text),
    };
    let (unfenced, fence_repairs) = repair::strip_call_fences(text, &parse_unfenced);
    if fence_repairs.is_empty() {
        return parse_unfenced(text);
    }
    let mut outcome = parse_unfenced(&unfenced);
    if outcome.calls.is_empty() {
        // A fence only counts as a repair when a call comes out of it.
        return parse_unfenced(text);
    }
    outcome.repairs.splice(0..0, fence_repairs);
    outcome
}

/// The text left once the byte ranges `spans` (sorted, disjoint) are cut out,
/// with the whitespace around each cut tidied.
pub(crate) fn prose_without(text: &str, spans: &[std::ops::Range<usize>]) -> String {
    let mut joined = String::new();
    let mut cursor = 0;
    for span in spans {
        join_piece(&mut joined, &text[cursor..span.start]);
        cursor = span.end;
    }
    join_piece(&mut joined, &text[cursor..]);
    tidy_prose(&joined)
}

/// Appends `piece`, leaving one space where a cut fell between two words of a line.
fn join_piece(joined: &mut String, piece: &str) {
    let horizontal = [' ', '\t'];
    if joined.is_empty() {
        joined.push_str(piece);
        return;
    }
    let kept = joined.trim_end_matches(horizontal).len();
    joined.truncate(kept);
    let mut piece = piece.trim_start_matches(horizontal);
    let left_ends_line = joined.ends_with('\n');
    let right_line_break = ["\r\n", "\n"]
        .into_iter()
        .find(|candidate| piece.starts_with(candidate));
    match right_line_break {
        // The cut took a whole line: drop its line break too.
        Some(line_break) if left_ends_line => piece = &piece[line_break.len()..],
        Some(_) => {}
        None if !piece.is_empty() && !left_ends_line => joined.push(' '),
        None => {}
    }
    joined.push_str(piece);
}

/// Trims the text and each line's end, and keeps at most one blank line in a row.
pub fn tidy_prose(text: &str) -> String {
    let mut tidied = String::new();
    let mut blank_run = 0;
    for line in text.trim().lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        tidied.push_str(line);
        tidied.push('\n');
    }
    tidied.truncate(tidied.trim_end().len());
    tidied
}
