//! Writing calls in each format (for few-shot examples and for echoing the
//! model's own calls into the history) and explaining the syntax to the model.

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};
use serde_json::{json, Map, Value};

use super::CallFormat;

/// The call as a model of that format would write it.
pub fn render_call(format: CallFormat, name: &str, args: &Map<String, Value>) -> String {
    match format {
        CallFormat::Markup => {
            let mut rendered = format!("<function={name}>\n");
            for (key, value) in args {
                let value = match value {
                    Value::String(text) => text.clone(),
                    other => spaced_json(other),
                };
                rendered.push_str(&format!("<parameter={key}>\n{value}\n</parameter>\n"));
            }
            rendered.push_str("</function>");
            rendered
        }
        CallFormat::JsonTag => {
            let call = json!({"name": name, "arguments": args});
            format!("<tool_call>\n{}\n</tool_call>", spaced_json(&call))
        }
        CallFormat::PythonList => format!("[{}]", python_call(name, args)),
        CallFormat::LlamaJson => spaced_json(&json!({"name": name, "parameters": args})),
        CallFormat::Mistral => {
            let call = json!([{"name": name, "arguments": args}]);
            format!("[TOOL_CALLS]{}", spaced_json(&call))
        }
        CallFormat::ToolCode => format!("```tool_code\n{}\n```", python_call(name, args)),
    }
}

/// `name(key=value, …)` with Python literals.
fn python_call(name: &str, args: &Map<String, Value>) -> String {
    let keywords: Vec<String> = args
        .iter()
        .map(|(key, value)| format!("{key}={}", python_literal(value)))
        .collect();
    format!("{name}({})", keywords.join(", "))
}

/// A tool call shown to the model as the syntax's example: a real tool with real values.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownCall<'a> {
    pub tool: &'a str,
    /// The tool's parameter names, for the spelled-out shape when no values are known.
    pub parameters: Vec<String>,
    /// Values for the call, when the skill's worked examples or the schema give them.
    pub arguments: Option<Map<String, Value>>,
}

/// A short explanation of the call syntax for the system prompt. It names a real tool and its
/// real parameters: a small model copies a placeholder such as `TOOL_NAME` into its calls.
pub fn format_instructions(format: CallFormat, shown: &ShownCall) -> String {
    let shape = match format {
        CallFormat::Markup => {
            "To call a tool, write its name in a function tag and each argument in a parameter tag, the value on a line of its own"
        }
        CallFormat::JsonTag => {
            "To call a tool, write one JSON object with its name and arguments between <tool_call> and </tool_call>"
        }
        CallFormat::PythonList => {
            "To call tools, write a list of calls in Python syntax, arguments by keyword \
             (strings in double quotes; True, False and None as in Python)"
        }
        CallFormat::LlamaJson => {
            "To call a tool, write one JSON object with its name and its parameters"
        }
        CallFormat::Mistral => {
            "To call tools, write [TOOL_CALLS] and then a JSON list of objects, each with a tool's name and arguments"
        }
        CallFormat::ToolCode => {
            "To call a tool, write the call in Python syntax, arguments by keyword, in a tool_code block"
        }
    };
    let example = match &shown.arguments {
        Some(arguments) => format!(
            ". A call to {}:\n{}",
            shown.tool,
            render_call(format, shown.tool, arguments)
        ),
        None => format!(
            ": {}.",
            spelled_out_call(format, shown.tool, &shown.parameters)
        ),
    };
    let several = match format {
        CallFormat::PythonList | CallFormat::Mistral => "Put several calls in the same list.",
        CallFormat::ToolCode => "For several calls, write one a line in the same block.",
        _ => "For several calls, write one after another.",
    };
    let results = match format {
        CallFormat::ToolCode => "Their results come back to you before you answer.",
        _ => "Write calls as plain text, not in a code block; their results come back to you before you answer.",
    };
    format!("{shape}{example}\n{several} {results}")
}

/// The shape of a call to `tool` in words, with its real tag and argument names and no value
/// anywhere to copy.
pub fn spelled_out_call(format: CallFormat, tool: &str, parameters: &[String]) -> String {
    let quoted: Vec<String> = parameters.iter().map(|p| format!("\"{p}\"")).collect();
    match format {
        CallFormat::Markup => {
            let arguments: Vec<String> = parameters
                .iter()
                .map(|p| format!("<parameter={p}>, the value on the next line, then </parameter>"))
                .collect();
            if arguments.is_empty() {
                format!("a call to {tool} is <function={tool}> followed by </function>")
            } else {
                format!(
                    "a call to {tool} starts with <function={tool}>, gives each argument as {}, and ends with </function>",
                    arguments.join("; ")
                )
            }
        }
        CallFormat::JsonTag => {
            if quoted.is_empty() {
                format!("a call to {tool} is {{\"name\": \"{tool}\", \"arguments\": {{}}}}")
            } else {
                format!(
                    "a call to {tool} has \"name\": \"{tool}\" and its \"arguments\" object holds {} with their values",
                    quoted.join(", ")
                )
            }
        }
        CallFormat::LlamaJson => {
            if quoted.is_empty() {
                format!("a call to {tool} is {{\"name\": \"{tool}\", \"parameters\": {{}}}}")
            } else {
                format!(
                    "a call to {tool} has \"name\": \"{tool}\" and its \"parameters\" object holds {} with their values",
                    quoted.join(", ")
                )
            }
        }
        CallFormat::Mistral => {
            if quoted.is_empty() {
                format!("a call to {tool} is [TOOL_CALLS][{{\"name\": \"{tool}\", \"arguments\": {{}}}}]")
            } else {
                format!(
                    "a call to {tool} is [TOOL_CALLS] then a list holding an object with \"name\": \"{tool}\" and an \"arguments\" object that holds {} with their values",
                    quoted.join(", ")
                )
            }
        }
        CallFormat::ToolCode => {
            let keywords: Vec<String> = parameters.iter().map(|p| format!("{p}=")).collect();
            format!(
                "a call to {tool} is {tool}( with {} each followed by its value, then ), in a block that opens with ```tool_code and closes with ```",
                keywords.join(", ")
            )
        }
        CallFormat::PythonList => {
            if parameters.is_empty() {
                format!("a call to {tool} is [{tool}()]")
            } else {
                let keywords: Vec<String> = parameters.iter().map(|p| format!("{p}=")).collect();
                format!(
                    "a call to {tool} is {tool}( with {} each followed by its value, then ), all inside [ and ]",
                    keywords.join(", ")
                )
            }
        }
    }
}

/// JSON with a space after each `,` and `:`, as chat templates print it.
fn spaced_json(value: &Value) -> String {
    let mut bytes = Vec::new();
    let mut serializer = Serializer::with_formatter(&mut bytes, SpacedFormatter);
    value
        .serialize(&mut serializer)
        .expect("a JSON value always serializes into memory");
    String::from_utf8(bytes).expect("serde_json writes UTF-8")
}

struct SpacedFormatter;

impl Formatter for SpacedFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }
}

fn python_literal(value: &Value) -> String {
    match value {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => python_string(text),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(python_literal).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(key, value)| format!("{}: {}", python_string(key), python_literal(value)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
    }
}

fn python_string(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for character in text.chars() {
        match character {
            '\\' => quoted.push_str("\\\\"),
            '"' => quoted.push_str("\\\""),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            control if (control as u32) < 0x20 => {
                quoted.push_str(&format!("\\x{:02x}", control as u32));
            }
            other => quoted.push(other),
        }
    }
    quoted.push('"');
    quoted
}

/// Words a model would copy into a call as if they were names or values: no text the harness
/// shows may hold one (checked by the unit and loop tests).
#[doc(hidden)]
pub const PLACEHOLDERS: [&str; 6] = [
    "TOOL_NAME",
    "ARGUMENT_NAME",
    "OTHER_TOOL",
    "example_tool",
    "\nvalue\n",
    "…",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::toolcall::{json_tag, markup, python_list};

    fn args(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(args) => args,
            _ => panic!("test arguments must be an object"),
        }
    }

    #[test]
    fn markup_puts_each_value_on_its_own_line() {
        let rendered = render_call(
            CallFormat::Markup,
            "weather_lookup",
            &args(json!({"location": "Paris", "days": 3})),
        );
        assert_eq!(
            rendered,
            "<function=weather_lookup>\n<parameter=location>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>"
        );
    }

    #[test]
    fn markup_rendering_reads_back_to_the_same_strings() {
        let original = args(json!({"path": "a/b.txt", "text": "line one\nline two"}));
        let rendered = render_call(CallFormat::Markup, "write_file", &original);
        let outcome = markup::parse(&rendered);
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].arguments, original);
    }

    #[test]
    fn json_tag_uses_spaced_json_and_reads_back() {
        let original = args(json!({"location": "Paris", "tags": [1, 2], "metric": false}));
        let rendered = render_call(CallFormat::JsonTag, "weather_lookup", &original);
        assert_eq!(
            rendered,
            "<tool_call>\n{\"name\": \"weather_lookup\", \"arguments\": {\"location\": \"Paris\", \"tags\": [1, 2], \"metric\": false}}\n</tool_call>"
        );
        assert_eq!(json_tag::parse(&rendered).calls[0].arguments, original);
    }

    #[test]
    fn python_list_uses_python_literals() {
        let rendered = render_call(
            CallFormat::PythonList,
            "f",
            &args(json!({
                "key": "v \"q\"\n",
                "n": 3,
                "on": true,
                "off": false,
                "none": null,
                "list": [1.5, "x"],
                "map": {"a": null}
            })),
        );
        assert_eq!(
            rendered,
            r#"[f(key="v \"q\"\n", n=3, on=True, off=False, none=None, list=[1.5, "x"], map={"a": None})]"#
        );
    }

    #[test]
    fn python_list_rendering_reads_back() {
        let original = args(json!({"q": "a \"b\"\n", "n": 3, "on": false, "tags": ["x"]}));
        let rendered = render_call(CallFormat::PythonList, "search", &original);
        let outcome = python_list::parse(&rendered);
        assert_eq!(outcome.calls.len(), 1);
        assert_eq!(outcome.calls[0].name, "search");
        assert_eq!(outcome.calls[0].arguments, original);
    }

    #[test]
    fn python_list_without_arguments_has_empty_parentheses() {
        assert_eq!(
            render_call(CallFormat::PythonList, "ping", &Map::new()),
            "[ping()]"
        );
    }

    #[test]
    fn instructions_show_a_real_call_in_each_syntax() {
        let shown = ShownCall {
            tool: "weather_lookup",
            parameters: vec!["location".into()],
            arguments: Some(args(json!({"location": "Graz"}))),
        };
        let markup = format_instructions(CallFormat::Markup, &shown);
        assert!(markup.contains(
            "A call to weather_lookup:\n<function=weather_lookup>\n<parameter=location>\nGraz\n</parameter>\n</function>\n"
        ));
        let json = format_instructions(CallFormat::JsonTag, &shown);
        assert!(json
            .contains("{\"name\": \"weather_lookup\", \"arguments\": {\"location\": \"Graz\"}}"));
        let python = format_instructions(CallFormat::PythonList, &shown);
        assert!(python.contains("[weather_lookup(location=\"Graz\")]"));
    }

    #[test]
    fn without_values_the_shape_is_spelled_out_with_real_names() {
        let shown = ShownCall {
            tool: "send_mail",
            parameters: vec!["to".into(), "body".into()],
            arguments: None,
        };
        let markup = format_instructions(CallFormat::Markup, &shown);
        assert!(markup.contains("<function=send_mail>"), "{markup}");
        assert!(
            markup.contains("<parameter=to>, the value on the next line"),
            "{markup}"
        );
        assert!(markup.contains("<parameter=body>"), "{markup}");
        let json = format_instructions(CallFormat::JsonTag, &shown);
        assert!(json.contains("\"name\": \"send_mail\""), "{json}");
        assert!(json.contains("\"to\", \"body\""), "{json}");
        let python = format_instructions(CallFormat::PythonList, &shown);
        assert!(python.contains("send_mail( with to=, body="), "{python}");
        let bare = ShownCall {
            tool: "ping",
            parameters: vec![],
            arguments: None,
        };
        assert!(format_instructions(CallFormat::PythonList, &bare).contains("[ping()]"));
    }

    #[test]
    fn no_instruction_holds_a_placeholder() {
        for format in CallFormat::ALL {
            for arguments in [None, Some(args(json!({"location": "Graz"})))] {
                let shown = ShownCall {
                    tool: "weather_lookup",
                    parameters: vec!["location".into()],
                    arguments,
                };
                let text = format_instructions(format, &shown);
                for placeholder in PLACEHOLDERS {
                    assert!(
                        !text.contains(placeholder),
                        "{format:?}: {placeholder:?} in {text}"
                    );
                }
            }
        }
    }
}
