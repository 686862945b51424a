//! Grammars that hold a call the model opens to what it is offered: a tool's name, its
//! parameters in the schema's order, and values of the schema's type (a listed `enum`, a number,
//! a boolean), as llama.cpp's tool-call grammars do. They are lazy: the model writes freely until
//! it opens a call, so answering in prose instead stays its own choice; once it writes the
//! format's opening (`<function=`, `<tool_call>`), only a well-formed call to an offered tool
//! can follow, then more calls or text that opens none (where the turn's stop strings end it).
//!
//! The grammars are GBNF, the form llama.cpp's grammar sampler and its server read.

use serde_json::Value;

use super::CallFormat;

/// A lazy grammar: `gbnf` holds the text from the first `trigger` on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CallGrammar {
    pub gbnf: String,
    pub trigger: String,
}

/// A tool as the grammar offers it: its name and its parameters' JSON schema.
#[derive(Debug, Clone)]
pub struct OfferedTool {
    pub name: String,
    pub parameters: Value,
}

/// The grammar for calls in `format` to `tools`, or `None` for a format without one (the Python
/// list of BFCL) or when nothing is offered.
pub fn for_calls(format: CallFormat, tools: &[OfferedTool]) -> Option<CallGrammar> {
    if tools.is_empty() {
        return None;
    }
    match format {
        CallFormat::Markup => Some(markup(tools)),
        CallFormat::JsonTag => Some(json_tag(tools)),
        CallFormat::PythonList => None,
    }
}

/// A GBNF string literal for `text`.
fn literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One parameter: its name and schema.
struct Parameter<'a> {
    name: &'a str,
    schema: &'a Value,
    required: bool,
}

/// The parameters of `schema` in its order, the required ones marked.
fn parameters(schema: &Value) -> Vec<Parameter<'_>> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema["properties"]
        .as_object()
        .map(|props| {
            props
                .iter()
                .map(|(name, schema)| Parameter {
                    name,
                    schema,
                    required: required.contains(&name.as_str()),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The strings a schema's `enum` allows, when it lists only strings.
fn string_enum(schema: &Value) -> Option<Vec<&str>> {
    let values = schema["enum"].as_array()?;
    let strings: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
    (!strings.is_empty() && strings.len() == values.len()).then_some(strings)
}

fn schema_type(schema: &Value) -> Option<&str> {
    schema["type"].as_str()
}

/// What may follow the calls: text that opens no call. Without it the model could only open
/// another call or end the turn, and a base model, which ends few turns with its end token,
/// opened call after call; with it, it goes on as its examples do, to the turn's stop string.
const AFTER: &str = "after ::= [^<]*\n";

/// Rules shared by both formats.
const NUMBERS: &str = r#"integer ::= "-"? [0-9]+
number ::= "-"? [0-9]+ ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
boolean ::= "true" | "false"
"#;

/// Rules `name ::= body` for each tool, with the parameter sequence `params` builds from the
/// tool's rule prefix.
fn tool_rules(
    tools: &[OfferedTool],
    rules: &mut String,
    call_of: impl Fn(&str, &str) -> String,
    params: impl Fn(&str, &[Parameter], &mut String) -> String,
) -> Vec<String> {
    let mut names = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let rule = format!("tool{i}");
        let sequence = params(&rule, &parameters(&tool.parameters), rules);
        rules.push_str(&format!("{rule} ::= {}\n", call_of(&tool.name, &sequence)));
        names.push(rule);
    }
    names
}

/// `<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n…</function>`, as `render_call`
/// writes it; a free value is one line, as the format's instructions say, so that a model
/// cannot pour a tool's output into an argument.
fn markup(tools: &[OfferedTool]) -> CallGrammar {
    let mut rules = String::new();
    let names = tool_rules(
        tools,
        &mut rules,
        |name, sequence| {
            format!(
                "{} {sequence} \"</function>\"",
                literal(&format!("<function={name}>\n"))
            )
        },
        |rule, parameters, rules| {
            let mut required = Vec::new();
            let mut optional = Vec::new();
            for (j, parameter) in parameters.iter().enumerate() {
                let value = markup_value(parameter.schema);
                let block = format!("{rule}p{j}");
                rules.push_str(&format!(
                    "{block} ::= {} {value} \"\\n</parameter>\\n\"\n",
                    literal(&format!("<parameter={}>\n", parameter.name))
                ));
                if parameter.required {
                    required.push(block);
                } else {
                    optional.push(block);
                }
            }
            let mut sequence = required.join(" ");
            if !optional.is_empty() {
                sequence.push_str(&format!(" ({})*", optional.join(" | ")));
            }
            if sequence.trim().is_empty() {
                "\"\"".into()
            } else {
                sequence.trim().to_string()
            }
        },
    );
    let gbnf = format!(
        "root ::= call (\"\\n\" call)* after\ncall ::= {}\n{rules}{NUMBERS}{AFTER}text ::= [^<\\n]+\n",
        names.join(" | ")
    );
    CallGrammar {
        gbnf,
        trigger: "<function=".into(),
    }
}

/// A markup value: written as `render_call` writes it, a string bare and anything else as JSON.
fn markup_value(schema: &Value) -> String {
    if let Some(values) = string_enum(schema) {
        return format!(
            "({})",
            values
                .iter()
                .map(|v| literal(v))
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    match schema_type(schema) {
        Some("integer") => "integer".into(),
        Some("number") => "number".into(),
        Some("boolean") => "boolean".into(),
        _ => "text".into(),
    }
}

/// `<tool_call>\n{"name": NAME, "arguments": {…}}\n</tool_call>`, with free spacing.
fn json_tag(tools: &[OfferedTool]) -> CallGrammar {
    let mut rules = String::new();
    let names = tool_rules(
        tools,
        &mut rules,
        |name, sequence| {
            format!(
                "\"{{\" ws \"\\\"name\\\"\" ws \":\" ws {} ws \",\" ws \"\\\"arguments\\\"\" ws \":\" ws \"{{\" ws {sequence} ws \"}}\" ws \"}}\"",
                literal(&format!("\"{name}\""))
            )
        },
        |rule, parameters, rules| {
            let mut members = Vec::new();
            for (j, parameter) in parameters.iter().enumerate() {
                let value = json_value(parameter.schema);
                let member = format!("{rule}m{j}");
                rules.push_str(&format!(
                    "{member} ::= {} ws \":\" ws {value}\n",
                    literal(&format!("\"{}\"", parameter.name))
                ));
                members.push((member, parameter.required));
            }
            // Required members in order, each optional one after them when any is required;
            // with none required, any of them, in any order.
            let comma = |member: &str| format!("ws \",\" ws {member}");
            let required: Vec<&str> = members
                .iter()
                .filter(|(_, r)| *r)
                .map(|(m, _)| m.as_str())
                .collect();
            let optional: Vec<&str> = members
                .iter()
                .filter(|(_, r)| !*r)
                .map(|(m, _)| m.as_str())
                .collect();
            let mut sequence = String::new();
            if let Some((first, rest)) = required.split_first() {
                sequence.push_str(first);
                for member in rest {
                    sequence.push_str(&format!(" {}", comma(member)));
                }
                for member in &optional {
                    sequence.push_str(&format!(" ({})?", comma(member)));
                }
            } else if !optional.is_empty() {
                let any = format!("({})", optional.join(" | "));
                sequence = format!("({any} ({})*)?", comma(&any));
            }
            if sequence.trim().is_empty() {
                "\"\"".into()
            } else {
                sequence.trim().to_string()
            }
        },
    );
    let gbnf = format!(
        "root ::= call (ws call)* after\ncall ::= \"<tool_call>\" ws ({}) ws \"</tool_call>\"\n{rules}{NUMBERS}{AFTER}{JSON}",
        names.join(" | ")
    );
    CallGrammar {
        gbnf,
        trigger: "<tool_call>".into(),
    }
}

/// A JSON value of the schema's type.
fn json_value(schema: &Value) -> String {
    if let Some(values) = string_enum(schema) {
        return format!(
            "({})",
            values
                .iter()
                .map(|v| literal(&serde_json::to_string(v).expect("a string serializes")))
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    match schema_type(schema) {
        Some("integer") => "integer".into(),
        Some("number") => "number".into(),
        Some("boolean") => "boolean".into(),
        Some("string") => "string".into(),
        Some("array") => "array".into(),
        Some("object") => "object".into(),
        _ => "value".into(),
    }
}

const JSON: &str = r#"ws ::= [ \t\n]*
value ::= object | array | string | number | boolean | "null"
object ::= "{" ws (string ws ":" ws value (ws "," ws string ws ":" ws value)*)? ws "}"
array ::= "[" ws (value (ws "," ws value)*)? ws "]"
string ::= "\"" ([^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F]))* "\""
"#;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<OfferedTool> {
        vec![
            OfferedTool {
                name: "load_skill".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"name": {"type": "string", "enum": ["weather", "unit-conversion"]}},
                    "required": ["name"]
                }),
            },
            OfferedTool {
                name: "convert_units".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "from_unit": {"type": "string"},
                        "to_unit": {"type": "string"},
                        "precise": {"type": "boolean"}
                    },
                    "required": ["value", "from_unit", "to_unit"]
                }),
            },
        ]
    }

    #[test]
    fn nothing_offered_or_the_python_list_has_no_grammar() {
        assert_eq!(for_calls(CallFormat::Markup, &[]), None);
        assert_eq!(for_calls(CallFormat::PythonList, &tools()), None);
    }

    #[test]
    fn markup_names_each_tool_its_parameters_and_enum_values() {
        let grammar = for_calls(CallFormat::Markup, &tools()).unwrap();
        assert_eq!(grammar.trigger, "<function=");
        let g = &grammar.gbnf;
        assert!(g.starts_with("root ::= call"), "{g}");
        assert!(g.contains("call ::= tool0 | tool1\n"), "{g}");
        assert!(
            g.contains("tool0p0 ::= \"<parameter=name>\\n\" (\"weather\" | \"unit-conversion\") \"\\n</parameter>\\n\"\n"),
            "{g}"
        );
        assert!(
            g.contains("tool1p0 ::= \"<parameter=value>\\n\" number "),
            "{g}"
        );
        // Required parameters in order, the optional one any number of times after them.
        assert!(
            g.contains("tool1 ::= \"<function=convert_units>\\n\" tool1p0 tool1p1 tool1p2 (tool1p3)* \"</function>\"\n"),
            "{g}"
        );
    }

    #[test]
    fn json_tag_spells_names_and_members_as_json() {
        let grammar = for_calls(CallFormat::JsonTag, &tools()).unwrap();
        assert_eq!(grammar.trigger, "<tool_call>");
        let g = &grammar.gbnf;
        assert!(g.contains("\"\\\"load_skill\\\"\""), "{g}");
        assert!(
            g.contains("(\"\\\"weather\\\"\" | \"\\\"unit-conversion\\\"\")"),
            "{g}"
        );
        assert!(
            g.contains("tool1m3 ::= \"\\\"precise\\\"\" ws \":\" ws boolean\n"),
            "{g}"
        );
    }

    #[test]
    fn literals_escape_what_gbnf_reads_specially() {
        assert_eq!(literal("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
    }
}
