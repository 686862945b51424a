//! Harness mode: an entry's functions become harness tools that only record their calls, the
//! loop runs one round, and that round's calls (after the harness's coercion) are checked.
//!
//! Java and JavaScript tools take the documents BFCL shows those models (every parameter a
//! string of source text); their calls are written as source, `[f(a=<text>, …)]`, and that text
//! is scored as a prompt-mode reply, so BFCL's decoder and `bench score` agree with the verdict.

use serde_json::{Map, Value};

use crate::harness::agent::{self, AgentRequest, Budgets};
use crate::harness::backend::Backend;
use crate::harness::skills::SkillTree;
use crate::harness::template::{Message, Role};
use crate::harness::toolcall::python_list::{render_calls, DecodedCall, PyValue};
use crate::harness::toolcall::CallFormat;
use crate::harness::tools::{Effect, Registry, ToolDef, ToolOutput};
use crate::harness::transcript::{CallRecord, StopReason, Transcript};

use super::check_types::{CheckResult, Language};
use super::checker::{check_calls, CheckOptions};
use super::corpus::Entry;
use super::prompt::language_specific;
use super::{inference_error_result, EntryOptions, EntryOutcome, Mode};

/// BFCL's task statement without its call syntax: the harness explains its own.
pub const INSTRUCTIONS: &str = "You are an expert in composing functions. You are given a question and a set of possible functions. Based on the question, you will need to make one or more function/tool calls to achieve the purpose. If none of the functions can be used, point it out. If the given question lacks the parameters required by the function, also point it out.";

/// What every recording tool answers.
pub const TOOL_RESULT: &str = "ok";

/// A BFCL parameter schema in JSON Schema terms: `dict` → `object`, `float` → `number`,
/// `tuple` → `array`, and `any` loses its type, so the harness's coercion understands it.
pub fn json_schema(bfcl: &Value) -> Value {
    match bfcl {
        Value::Object(map) => {
            let mut converted = Map::new();
            for (key, value) in map {
                let value = match key.as_str() {
                    "type" => match value.as_str() {
                        Some("any") => continue,
                        Some(name) => Value::String(json_type(name).to_string()),
                        None => value.clone(),
                    },
                    "properties" => match value.as_object() {
                        Some(properties) => Value::Object(
                            properties
                                .iter()
                                .map(|(name, schema)| (name.clone(), json_schema(schema)))
                                .collect(),
                        ),
                        None => value.clone(),
                    },
                    "items" | "additionalProperties" => json_schema(value),
                    _ => value.clone(),
                };
                converted.insert(key.clone(), value);
            }
            Value::Object(converted)
        }
        other => other.clone(),
    }
}

fn json_type(bfcl: &str) -> &str {
    match bfcl {
        "dict" => "object",
        "float" => "number",
        "tuple" => "array",
        other => other,
    }
}

/// One tool per function document, each answering [`TOOL_RESULT`] to any call.
pub fn registry(functions: &[Value]) -> Registry {
    let mut registry = Registry::new();
    for function in functions {
        let Some(name) = function.get("name").and_then(Value::as_str) else {
            continue;
        };
        let description = function
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let parameters = function
            .get("parameters")
            .map(json_schema)
            .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
        registry.add(ToolDef::new(
            name,
            description,
            parameters,
            Effect::Write,
            |_| ToolOutput::ok(TOOL_RESULT),
        ));
    }
    registry
}

/// A JSON argument as the Python value BFCL's checker expects for its declared type: JSON
/// does not tell `2` from `2.0`, so numbers take the type the schema names.
pub fn py_value(value: &Value, bfcl_schema: Option<&Value>) -> PyValue {
    let declared = bfcl_schema
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str);
    match (declared, value) {
        (Some("float"), Value::Number(n)) => PyValue::Float(n.as_f64().unwrap_or(f64::NAN)),
        (Some("array" | "tuple"), Value::Array(items)) => {
            let item_schema = bfcl_schema.and_then(|s| s.get("items"));
            PyValue::List(items.iter().map(|i| py_value(i, item_schema)).collect())
        }
        (Some("dict"), Value::Object(fields)) => {
            let properties = bfcl_schema.and_then(|s| s.get("properties"));
            PyValue::Dict(
                fields
                    .iter()
                    .map(|(key, field)| {
                        let schema = properties.and_then(|p| p.get(key));
                        (PyValue::Str(key.clone()), py_value(field, schema))
                    })
                    .collect(),
            )
        }
        _ => PyValue::from_json(value),
    }
}

/// A call the harness recorded, as the decoder would have produced it from Python text.
pub fn decoded_call(functions: &[Value], name: &str, arguments: &Value) -> DecodedCall {
    let properties = functions
        .iter()
        .find(|f| f.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|f| f.get("parameters"))
        .and_then(|p| p.get("properties"));
    let arguments = arguments
        .as_object()
        .map(|args| {
            args.iter()
                .map(|(key, value)| {
                    let schema = properties.and_then(|p| p.get(key));
                    (key.clone(), py_value(value, schema))
                })
                .collect()
        })
        .unwrap_or_default();
    DecodedCall {
        name: name.to_string(),
        arguments,
    }
}

/// The calls of the transcript's first round: coerced arguments where coercion succeeded,
/// the arguments as written where it refused them.
pub fn first_round_calls(functions: &[Value], transcript: &Transcript) -> Vec<DecodedCall> {
    first_round(transcript)
        .iter()
        .map(|call| decoded_call(functions, &call.name, &call.arguments))
        .collect()
}

/// The calls of the transcript's first round, the only one BFCL's single-turn categories check.
fn first_round(transcript: &Transcript) -> &[CallRecord] {
    transcript.rounds.first().map_or(&[], |round| &round.calls)
}

/// The function documents offered as tools: Java and JavaScript ones as BFCL rewrites them.
pub fn tool_documents(entry: &Entry) -> Vec<Value> {
    match Language::of_category(&entry.category) {
        Language::Python => entry.functions.clone(),
        language => entry
            .functions
            .iter()
            .map(|f| language_specific(f, language))
            .collect(),
    }
}

/// Recorded calls as Java or JavaScript source: text arguments as written (they are source),
/// others as JSON.
pub fn source_calls(transcript: &Transcript) -> String {
    let calls: Vec<String> = first_round(transcript)
        .iter()
        .map(|call| {
            let arguments: Vec<String> = call
                .arguments
                .as_object()
                .map(|args| {
                    args.iter()
                        .map(|(key, value)| match value {
                            Value::String(text) => format!("{key}={text}"),
                            other => format!("{key}={other}"),
                        })
                        .collect()
                })
                .unwrap_or_default();
            format!("{}({})", call.name, arguments.join(", "))
        })
        .collect();
    format!("[{}]", calls.join(", "))
}

/// Checks decoded calls the way [`super::checker::check`] checks a decoded reply.
pub fn check_decoded(entry: &Entry, calls: &[DecodedCall]) -> CheckResult {
    if entry.category.contains("relevance") {
        let irrelevance = entry.is_irrelevance();
        return match (irrelevance, calls.is_empty()) {
            (true, false) => CheckResult::fail(
                "irrelevance_error:decoder_success",
                "Decoded a function call where none was expected.",
            ),
            (false, true) => CheckResult::fail(
                "relevance_error:decoder_failed",
                "Expected a function call; the harness found none.",
            ),
            _ => CheckResult::pass(),
        };
    }
    let truth = entry.ground_truth.as_deref().unwrap_or_default();
    check_calls(
        &entry.category,
        &entry.functions,
        calls,
        truth,
        CheckOptions::default(),
    )
}

/// The entry's system text goes after the benchmark's instructions; the rest stays messages.
fn instructions_and_messages(entry: &Entry) -> (String, Vec<Message>) {
    let mut instructions = INSTRUCTIONS.to_string();
    let mut messages = Vec::new();
    for message in entry.turns.first().cloned().unwrap_or_default() {
        if message.role == Role::System {
            instructions.push_str("\n\n");
            instructions.push_str(&message.content);
        } else {
            messages.push(message);
        }
    }
    (instructions, messages)
}

/// Runs each entry through the harness for one round and checks the calls it made.
/// `format` is the call syntax the model is taught; `None` uses the family's default.
pub fn run_harness_mode(
    backend: &mut dyn Backend,
    entries: &[Entry],
    options: &EntryOptions,
    format: Option<CallFormat>,
    on_entry: &mut dyn FnMut(&EntryOutcome),
) -> Vec<EntryOutcome> {
    let mut outcomes = Vec::with_capacity(entries.len());
    for entry in entries {
        let outcome = harness_entry(backend, entry, options, format);
        on_entry(&outcome);
        outcomes.push(outcome);
    }
    outcomes
}

/// One entry in harness mode: its functions offered as tools for one round, the calls checked.
pub fn harness_entry(
    backend: &mut dyn Backend,
    entry: &Entry,
    options: &EntryOptions,
    format: Option<CallFormat>,
) -> EntryOutcome {
    let skills = SkillTree::default();
    let budgets = Budgets {
        max_rounds: 1,
        max_generated_tokens: options.max_tokens,
        max_tokens_per_round: options.max_tokens,
        // A re-ask would be a second chance BFCL does not give.
        max_reasks: 0,
        ..Budgets::default()
    };
    let tools = registry(&tool_documents(entry));
    let (instructions, messages) = instructions_and_messages(entry);
    let request = AgentRequest {
        instructions: &instructions,
        messages,
        skills: &skills,
        preload: Vec::new(),
        tools: &tools,
        format,
        sampling: options.sampling_for(&entry.id),
        budgets,
        // BFCL judges what the model writes unaided.
        constrain_calls: false,
        examples: Default::default(),
        long_output: Default::default(),
        user: None,
    };
    let transcript = agent::run(backend, &request);
    let reply = transcript
        .rounds
        .first()
        .map(|r| r.raw.clone())
        .unwrap_or_default();
    let (result, check, inference_error) = match (&transcript.stop, transcript.rounds.len()) {
        (StopReason::Error(error), 0) => {
            let result = inference_error_result(&anyhow::anyhow!("{error}"));
            let result = Value::String(result);
            let check = super::score::check_entry(entry, &result);
            (result, check, Some(error.clone()))
        }
        _ if Language::of_category(&entry.category) != Language::Python => {
            let result = Value::String(source_calls(&transcript));
            let check = super::score::check_entry(entry, &result);
            (result, check, None)
        }
        _ => {
            let calls = first_round_calls(&entry.functions, &transcript);
            (
                Value::String(render_calls(&calls)),
                check_decoded(entry, &calls),
                None,
            )
        }
    };
    let metrics = &transcript.metrics;
    EntryOutcome {
        id: entry.id.clone(),
        category: entry.category.clone(),
        mode: Mode::Harness,
        repeat: options.repeat,
        reply,
        result,
        check,
        inference_error,
        prompt_tokens: metrics.prompt_tokens,
        generated_tokens: metrics.generated_tokens,
        seconds: metrics.prefill_secs + metrics.decode_secs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bfcl_types_become_json_schema_types() {
        let bfcl = json!({
            "type": "dict",
            "properties": {
                "ratio": {"type": "float", "description": "x"},
                "point": {"type": "tuple", "items": {"type": "float"}},
                "anything": {"type": "any"},
                "nested": {"type": "dict", "properties": {"n": {"type": "integer"}}}
            },
            "required": ["ratio"]
        });
        assert_eq!(
            json_schema(&bfcl),
            json!({
                "type": "object",
                "properties": {
                    "ratio": {"type": "number", "description": "x"},
                    "point": {"type": "array", "items": {"type": "number"}},
                    "anything": {},
                    "nested": {"type": "object", "properties": {"n": {"type": "integer"}}}
                },
                "required": ["ratio"]
            })
        );
    }

    #[test]
    fn numbers_take_the_declared_python_type() {
        let functions = vec![json!({
            "name": "f",
            "parameters": {"type": "dict", "properties": {
                "x": {"type": "float"},
                "n": {"type": "integer"},
                "xs": {"type": "array", "items": {"type": "float"}},
                "d": {"type": "dict", "properties": {"y": {"type": "float"}}}
            }}
        })];
        let call = decoded_call(
            &functions,
            "f",
            &json!({"x": 2, "n": 3, "xs": [1, 2.5], "d": {"y": 4}, "extra": 5}),
        );
        assert_eq!(call.argument("x"), Some(&PyValue::Float(2.0)));
        assert_eq!(call.argument("n"), Some(&PyValue::Int(3)));
        assert_eq!(
            call.argument("xs"),
            Some(&PyValue::List(vec![
                PyValue::Float(1.0),
                PyValue::Float(2.5)
            ]))
        );
        assert_eq!(
            call.argument("d"),
            Some(&PyValue::Dict(vec![(
                PyValue::Str("y".into()),
                PyValue::Float(4.0)
            )]))
        );
        assert_eq!(call.argument("extra"), Some(&PyValue::Int(5)));
    }
}
