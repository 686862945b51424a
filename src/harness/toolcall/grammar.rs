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
/// list of BFCL and the model-native syntaxes) or when nothing is offered.
pub fn for_calls(format: CallFormat, tools: &[OfferedTool]) -> Option<CallGrammar> {
    if tools.is_empty() {
        return None;
    }
    match format {
        CallFormat::Markup => Some(markup(tools)),
        CallFormat::JsonTag => Some(json_tag(tools)),
        CallFormat::PythonList
        | CallFormat::LlamaJson
        | CallFormat::Mistral
        | CallFormat::ToolCode => None,
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

/// The `enum` strings as alternatives, each spelled as the format writes it; `None` without one.
fn enum_rule(schema: &Value, spell: impl Fn(&str) -> String) -> Option<String> {
    let values = string_enum(schema)?;
    let spelled: Vec<String> = values.iter().map(|v| spell(v)).collect();
    Some(format!("({})", spelled.join(" | ")))
}

/// The shared rule for a number or a boolean, which both formats write bare.
fn scalar_rule(schema: &Value) -> Option<String> {
    match schema["type"].as_str()? {
        kind @ ("integer" | "number" | "boolean") => Some(kind.to_string()),
        _ => None,
    }
}

/// A parameter sequence, or the empty string where a tool takes none.
fn sequence_or_empty(sequence: &str) -> String {
    match sequence.trim() {
        "" => "\"\"".into(),
        trimmed => trimmed.to_string(),
    }
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

/// One rule per tool (`toolN`) and per parameter (`toolNpM`), appended to `rules`; returns the
/// tools' rule names. `parameter` spells one parameter's rule body; `call` the tool's, from its
/// name and its required and optional parameter rules.
fn tool_rules(
    tools: &[OfferedTool],
    rules: &mut String,
    parameter: impl Fn(&Parameter) -> String,
    call: impl Fn(&str, &[String], &[String]) -> String,
) -> Vec<String> {
    let mut names = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let rule = format!("tool{i}");
        let (mut required, mut optional) = (Vec::new(), Vec::new());
        for (j, p) in parameters(&tool.parameters).iter().enumerate() {
            let name = format!("{rule}p{j}");
            rules.push_str(&format!("{name} ::= {}\n", parameter(p)));
            if p.required {
                required.push(name);
            } else {
                optional.push(name);
            }
        }
        rules.push_str(&format!(
            "{rule} ::= {}\n",
            call(&tool.name, &required, &optional)
        ));
        names.push(rule);
    }
    names
}

/// `<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n…</function>`, as `render_call`
/// writes it: required parameters in order, then optional ones any number of times. A free value
/// is one line, as the format's instructions say, so that a model cannot pour a tool's output
/// into an argument.
fn markup(tools: &[OfferedTool]) -> CallGrammar {
    let mut rules = String::new();
    let names = tool_rules(
        tools,
        &mut rules,
        |p| {
            format!(
                "{} {} \"\\n</parameter>\\n\"",
                literal(&format!("<parameter={}>\n", p.name)),
                markup_value(p.schema)
            )
        },
        |name, required, optional| {
            let mut sequence = required.join(" ");
            if !optional.is_empty() {
                sequence.push_str(&format!(" ({})*", optional.join(" | ")));
            }
            format!(
                "{} {} \"</function>\"",
                literal(&format!("<function={name}>\n")),
                sequence_or_empty(&sequence)
            )
        },
    );
    lazy(
        "<function=",
        format!(
            "root ::= call (\"\\n\" call)* after\ncall ::= {}\n{rules}text ::= [^<\\n]+\n",
            names.join(" | ")
        ),
    )
}

/// The grammar with the rules both formats share, opened by `trigger`.
fn lazy(trigger: &str, gbnf: String) -> CallGrammar {
    CallGrammar {
        gbnf: format!("{gbnf}{NUMBERS}{AFTER}"),
        trigger: trigger.into(),
    }
}

/// A markup value: written as `render_call` writes it, a string bare and anything else as JSON.
fn markup_value(schema: &Value) -> String {
    enum_rule(schema, literal)
        .or_else(|| scalar_rule(schema))
        .unwrap_or_else(|| "text".into())
}

/// `<tool_call>\n{"name": NAME, "arguments": {…}}\n</tool_call>`, with free spacing: required
/// members in order, each optional one after them when any is required; with none required,
/// any of them in any order.
fn json_tag(tools: &[OfferedTool]) -> CallGrammar {
    let mut rules = String::new();
    let names = tool_rules(
        tools,
        &mut rules,
        |p| {
            format!(
                "{} ws \":\" ws {}",
                literal(&format!("\"{}\"", p.name)),
                json_value(p.schema)
            )
        },
        |name, required, optional| {
            let comma = |member: &str| format!("ws \",\" ws {member}");
            let mut sequence = String::new();
            if let Some((first, rest)) = required.split_first() {
                sequence.push_str(first);
                for member in rest {
                    sequence.push_str(&format!(" {}", comma(member)));
                }
                for member in optional {
                    sequence.push_str(&format!(" ({})?", comma(member)));
                }
            } else if !optional.is_empty() {
                let any = format!("({})", optional.join(" | "));
                sequence = format!("({any} ({})*)?", comma(&any));
            }
            format!(
                "\"{{\" ws \"\\\"name\\\"\" ws \":\" ws {} ws \",\" ws \"\\\"arguments\\\"\" ws \":\" ws \"{{\" ws {} ws \"}}\" ws \"}}\"",
                literal(&format!("\"{name}\"")),
                sequence_or_empty(&sequence)
            )
        },
    );
    lazy(
        "<tool_call>",
        format!(
            "root ::= call (ws call)* after\ncall ::= \"<tool_call>\" ws ({}) ws \"</tool_call>\"\n{rules}{JSON}",
            names.join(" | ")
        ),
    )
}

/// A JSON value of the schema's type.
fn json_value(schema: &Value) -> String {
    let quoted = |v: &str| literal(&serde_json::to_string(v).expect("a string serializes"));
    enum_rule(schema, quoted)
        .or_else(|| scalar_rule(schema))
        .unwrap_or_else(|| match schema["type"].as_str() {
            Some(kind @ ("string" | "array" | "object")) => kind.to_string(),
            _ => "value".into(),
        })
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

    /// A tool with an enum, and one with required parameters of three types and an optional one.
    fn tools() -> Vec<OfferedTool> {
        let tool = |name: &str, parameters: Value| OfferedTool {
            name: name.into(),
            parameters,
        };
        vec![
            tool(
                "load_skill",
                json!({"properties": {"name": {"enum": ["weather", "unit-conversion"]}}, "required": ["name"]}),
            ),
            tool(
                "convert_units",
                json!({"properties": {"value": {"type": "number"}, "from_unit": {"type": "string"},
                    "to_unit": {}, "precise": {"type": "boolean"}}, "required": ["value", "from_unit", "to_unit"]}),
            ),
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
            g.contains("tool1p3 ::= \"\\\"precise\\\"\" ws \":\" ws boolean\n"),
            "{g}"
        );
    }

    #[test]
    fn literals_escape_what_gbnf_reads_specially() {
        assert_eq!(literal("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
    }
}
