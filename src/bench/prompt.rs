//! The messages BFCL's prompting handlers send: a system prompt asking for a Python call list
//! with the function documents as indented JSON, put before any system text the entry has.
//! Java and JavaScript documents are first rewritten as BFCL rewrites them
//! (`func_doc_language_specific_pre_processing`): every parameter becomes a `string` whose
//! description names its Java or JavaScript type, since the reply is read as source text.

use std::fmt::Write as _;

use serde_json::Value;

use crate::harness::template::{Message, Role};
use crate::harness::toolcall::python_list::py_float_repr;

use super::check_types::Language;
use super::corpus::Entry;

/// The default prompt's parts (classic style, plaintext layout, Python calls, no tag),
/// kept as separate pieces because BFCL joins them with its own separators.
const PERSONA: &str = "You are an expert in composing functions.";
const TASK: &str = "You are given a question and a set of possible functions. Based on the question, you will need to make one or more function/tool calls to achieve the purpose. If none of the functions can be used, point it out. If the given question lacks the parameters required by the function, also point it out.";
const CALL_FORMAT: &str =
    "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]";
/// BFCL's paragraph on turns, in every prompt (harness mode adds it for multi-turn entries).
pub const MULTI_TURN_INSTRUCTION: &str = "At each turn, you should try your best to complete the tasks requested by the user within the current turn. Continue to output functions to call until you have fulfilled the user's request to the best of your ability. Once you have no more functions to call, the system will consider the current turn complete and proceed to the next turn or task.";

/// Appended to every function description for Python categories.
pub const PYTHON_HINT: &str = " Note that the provided function is in Python 3 syntax.";
const JAVA_HINT: &str = " Note that the provided function is in Java 8 SDK syntax.";
const JAVASCRIPT_HINT: &str = " Note that the provided function is in JavaScript syntax.";

/// The system prompt for these function documents, which get the language's hint first.
pub fn system_prompt(functions: &[Value], language: Language) -> String {
    let docs = Value::Array(
        functions
            .iter()
            .map(|f| language_specific(f, language))
            .collect(),
    );
    // The empty slot between ". " and " You" is where other return formats list their types.
    format!(
        "{PERSONA}{TASK}\n\nYou should only return the function calls in your response.\n\n\
         If you decide to invoke any of the function(s), you MUST put it in the format of \
         {CALL_FORMAT}.  You SHOULD NOT include any other text in the response.\n\n\
         {MULTI_TURN_INSTRUCTION}\n\nHere is a list of functions in json format that you can invoke.\n{}\n",
        python_json_dumps_indent4(&docs)
    )
}

/// Appends to a string field in place (BFCL's `d["description"] += text`).
fn append(object: &mut serde_json::Map<String, Value>, text: &str) {
    let description = object
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let appended = format!("{description}{text}");
    object.insert("description".into(), Value::String(appended));
}

/// One function document as BFCL shows it for the language.
pub fn language_specific(function: &Value, language: Language) -> Value {
    let mut function = function.clone();
    let Some(object) = function.as_object_mut() else {
        return function;
    };
    append(
        object,
        match language {
            Language::Python => PYTHON_HINT,
            Language::Java => JAVA_HINT,
            Language::JavaScript => JAVASCRIPT_HINT,
        },
    );
    if language == Language::Python {
        return function;
    }
    let name = if language == Language::Java {
        "Java"
    } else {
        "JavaScript"
    };
    let properties = object
        .get_mut("parameters")
        .and_then(|p| p.get_mut("properties"))
        .and_then(Value::as_object_mut);
    for details in properties.into_iter().flat_map(|p| p.values_mut()) {
        let Some(details) = details.as_object_mut() else {
            continue;
        };
        let kind = details
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if kind == "any" {
            append(
                details,
                &format!(
                    " This parameter can be of any type of {name} object in string representation."
                ),
            );
        } else {
            append(
                details,
                &format!(" This is {name} {kind} type parameter in string representation."),
            );
        }
        let listed = match language {
            Language::Java => kind == "ArrayList" || kind == "Array",
            _ => kind == "array",
        };
        if listed {
            let item = details
                .get("items")
                .and_then(|i| i.get("type"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            append(
                details,
                &format!(
                    " The list elements are of type {item}; they are not in string representation."
                ),
            );
            details.shift_remove("items");
        }
        if language == Language::JavaScript && kind == "dict" {
            if let Some(schema) = details.get("properties").cloned() {
                append(
                    details,
                    &format!(
                        " The dictionary entries have the following schema; they are not in string representation. {}",
                        python_json_dumps(&schema)
                    ),
                );
                details.shift_remove("properties");
            }
        }
        details.insert("type".into(), Value::String("string".into()));
    }
    function
}

/// The first turn's messages with the system prompt merged in: an existing system message
/// is kept after the prompt, separated by a blank line; otherwise the prompt is its own message.
pub fn render_messages(entry: &Entry) -> Vec<Message> {
    with_system_prompt(entry, entry.turns.first().cloned().unwrap_or_default())
}

/// `messages` with the entry's system prompt merged in, as [`render_messages`] merges it
/// into the first turn (a multi-turn entry's first turn may be replaced before it is sent).
pub fn with_system_prompt(entry: &Entry, mut messages: Vec<Message>) -> Vec<Message> {
    let prompt = system_prompt(&entry.functions, Language::of_category(&entry.category));
    match messages.first_mut() {
        Some(first) if first.role == Role::System => {
            first.content = format!("{prompt}\n\n{}", first.content);
        }
        _ => messages.insert(0, Message::system(prompt)),
    }
    messages
}

/// Python's `json.dumps(value, indent=4)`: ASCII-only output, `": "` after keys,
/// floats in Python's `repr` form.
pub fn python_json_dumps_indent4(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, 0, true);
    out
}

/// Python's `json.dumps(value)`: one line, `", "` between items and `": "` after keys.
pub fn python_json_dumps(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, 0, false);
    out
}

fn write_json(out: &mut String, value: &Value, depth: usize, indent: bool) {
    const INDENT: &str = "    ";
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => {
                let _ = write!(out, "{i}");
            }
            (_, Some(u), _) => {
                let _ = write!(out, "{u}");
            }
            (_, _, Some(f)) => out.push_str(&json_float(f)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => write_json_string(out, s),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Array(items) if !indent => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(out, item, depth, false);
            }
            out.push(']');
        }
        Value::Object(map) if !indent => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json_string(out, key);
                out.push_str(": ");
                write_json(out, item, depth, false);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.push_str(&INDENT.repeat(depth + 1));
                write_json(out, item, depth + 1, true);
            }
            out.push('\n');
            out.push_str(&INDENT.repeat(depth));
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.push_str(&INDENT.repeat(depth + 1));
                write_json_string(out, key);
                out.push_str(": ");
                write_json(out, item, depth + 1, true);
            }
            out.push('\n');
            out.push_str(&INDENT.repeat(depth));
            out.push('}');
        }
    }
}

/// JSON spells infinities and NaN the way Python's encoder does.
fn json_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        py_float_repr(f)
    }
}

fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dumps_like_python() {
        let value = json!({"a": [1, 2.5, 1e-7], "b": {}, "c": "é\u{1F600}\"", "d": []});
        assert_eq!(
            python_json_dumps_indent4(&value),
            "{\n    \"a\": [\n        1,\n        2.5,\n        1e-07\n    ],\n    \"b\": {},\n    \
             \"c\": \"\\u00e9\\ud83d\\ude00\\\"\",\n    \"d\": []\n}"
        );
    }
}
