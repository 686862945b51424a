//! BFCL's AST checker, rule for rule: the verdict and the error type match the official
//! checker; the error messages are our own wording. Java and JavaScript replies are decoded by
//! `java_js_decode` and their values typed by `java_js_check` before the same rules apply; the
//! value rules for strings, lists and dicts are `value_check`'s.
//!
//! Where the official checker would raise (answers or schemas of a shape it cannot handle),
//! this one returns an invalid result with the error type [`INTERNAL_ERROR`].

use serde_json::Value;

use crate::harness::toolcall::python_list::{decode, DecodedCall, PyValue};

use super::check_types::{
    empty_str, repr_all, type_of, CheckResult, Language, Outcome, PyType, Typed,
};
use super::value_check::{dict_check, list_check, list_of_dicts_check, string_check};
use super::{java_js_check, java_js_decode};

/// Error type for inputs on which BFCL's own checker would crash.
pub const INTERNAL_ERROR: &str = "checker:internal_error";

/// A decoded call as the rules see it; `None` names an unnamed argument (Java, JavaScript).
#[derive(Debug, Clone, PartialEq)]
struct Call {
    name: String,
    arguments: Vec<(Option<String>, PyValue)>,
}

impl Call {
    fn argument(&self, key: &str) -> Option<&PyValue> {
        self.arguments
            .iter()
            .find(|(k, _)| k.as_deref() == Some(key))
            .map(|(_, v)| v)
    }
}

impl From<&DecodedCall> for Call {
    fn from(call: &DecodedCall) -> Self {
        Call {
            name: call.name.clone(),
            arguments: call
                .arguments
                .iter()
                .map(|(k, v)| (Some(k.clone()), v.clone()))
                .collect(),
        }
    }
}

/// How function names in answers are matched against the model's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// For models whose API forbids dots in names: expect `a_b` where the answer says `a.b`.
    pub underscore_to_dot: bool,
}

/// Checks a raw model reply for one entry of `category`.
pub fn check(
    category: &str,
    functions: &[Value],
    model_output: &str,
    ground_truth: &[Value],
) -> CheckResult {
    check_with(
        category,
        functions,
        model_output,
        ground_truth,
        CheckOptions::default(),
    )
}

pub fn check_with(
    category: &str,
    functions: &[Value],
    model_output: &str,
    ground_truth: &[Value],
    options: CheckOptions,
) -> CheckResult {
    // BFCL reads relevance replies as Python whatever the category.
    let language = Language::of_category(category);
    if language != Language::Python && !category.contains("relevance") {
        return match java_js_decode::decode(language, model_output) {
            Err(err) => CheckResult::fail(
                "ast_decoder:decoder_failed",
                format!("Failed to decode: {err}"),
            ),
            Ok(None) => CheckResult::fail(
                "ast_decoder:decoder_wrong_output_format",
                "The reply holds no function call.",
            ),
            Ok(Some(calls)) => {
                // Every value is source text until the converters read it.
                let calls: Vec<Call> = calls
                    .into_iter()
                    .map(|call| Call {
                        name: call.name,
                        arguments: call
                            .arguments
                            .into_iter()
                            .map(|(k, v)| (k, PyValue::Str(v)))
                            .collect(),
                    })
                    .collect();
                check_language_calls(language, category, functions, &calls, ground_truth, options)
            }
        };
    }
    let decoded = decode(model_output);
    if category.contains("relevance") {
        // A reply that fails to decode, or decodes to no call, counts as no call.
        let has_call = decoded.as_ref().is_ok_and(|calls| !calls.is_empty());
        return match (category.contains("irrelevance"), has_call) {
            (true, true) => CheckResult::fail(
                "irrelevance_error:decoder_success",
                "Decoded a function call where none was expected.",
            ),
            (false, false) => CheckResult::fail(
                "relevance_error:decoder_failed",
                format!(
                    "Expected a function call: {}",
                    decoded.err().unwrap_or_default()
                ),
            ),
            _ => CheckResult::pass(),
        };
    }
    match decoded {
        Err(err) => CheckResult::fail(
            "ast_decoder:decoder_failed",
            format!("Failed to decode: {err}"),
        ),
        Ok(calls) => check_calls(category, functions, &calls, ground_truth, options),
    }
}

/// Checks already decoded Python calls; `ground_truth` items are `{name: {param: [accepted]}}`.
pub fn check_calls(
    category: &str,
    functions: &[Value],
    calls: &[DecodedCall],
    ground_truth: &[Value],
    options: CheckOptions,
) -> CheckResult {
    let calls: Vec<Call> = calls.iter().map(Call::from).collect();
    check_language_calls(
        Language::Python,
        category,
        functions,
        &calls,
        ground_truth,
        options,
    )
}

fn check_language_calls(
    language: Language,
    category: &str,
    functions: &[Value],
    calls: &[Call],
    ground_truth: &[Value],
    options: CheckOptions,
) -> CheckResult {
    let rules = Rules { language, options };
    let outcome = if category.contains("parallel") {
        parallel_no_order(functions, calls, ground_truth, rules)
    } else if category.contains("multiple") {
        multiple(functions, calls, ground_truth, rules)
    } else if calls.len() != 1 {
        Ok(CheckResult::fail(
            "simple_function_checker:wrong_count",
            format!("Expected one call, got {}.", calls.len()),
        ))
    } else {
        match (functions.first(), ground_truth.first()) {
            (Some(function), Some(answer)) => one_call(function, &calls[0], answer, rules),
            _ => Err("no function or no answer for the entry".into()),
        }
    };
    outcome.unwrap_or_else(|err| CheckResult::fail(INTERNAL_ERROR, err))
}

/// What a check needs besides the entry: how values are typed, how names are matched.
#[derive(Clone, Copy)]
struct Rules {
    language: Language,
    options: CheckOptions,
}

fn answer_name(answer: &Value) -> Result<&str, String> {
    answer
        .as_object()
        .and_then(|o| o.keys().next())
        .map(String::as_str)
        .ok_or_else(|| format!("answer {answer} is not {{name: params}}"))
}

fn find_function<'a>(functions: &'a [Value], name: &str) -> Result<&'a Value, String> {
    functions
        .iter()
        .find(|f| f.get("name").and_then(Value::as_str) == Some(name))
        .ok_or_else(|| format!("no function named {name:?} for the answer"))
}

fn multiple(functions: &[Value], calls: &[Call], answers: &[Value], rules: Rules) -> Outcome {
    if calls.len() != answers.len() {
        return Ok(CheckResult::fail(
            "multiple_function_checker:wrong_count",
            format!("Expected {} call(s), got {}.", answers.len(), calls.len()),
        ));
    }
    let answer = answers.first().ok_or("no answer")?;
    let function = find_function(functions, answer_name(answer)?)?;
    one_call(function, &calls[0], answer, rules)
}

/// Each answer in turn takes the first unclaimed call that passes for it; no backtracking.
fn parallel_no_order(
    functions: &[Value],
    calls: &[Call],
    answers: &[Value],
    rules: Rules,
) -> Outcome {
    if calls.len() != answers.len() {
        return Ok(CheckResult::fail(
            "parallel_function_checker_no_order:wrong_count",
            format!("Expected {} calls, got {}.", answers.len(), calls.len()),
        ));
    }
    let mut claimed = vec![false; calls.len()];
    for (answer_index, answer) in answers.iter().enumerate() {
        let function = find_function(functions, answer_name(answer)?)?;
        let mut errors = Vec::new();
        let mut found = false;
        for (call_index, call) in calls.iter().enumerate() {
            if claimed[call_index] {
                continue;
            }
            let result = one_call(function, call, answer, rules)?;
            if result.valid {
                claimed[call_index] = true;
                found = true;
                break;
            }
            errors.push(format!(
                "call {call_index}: {} {}",
                result.error_type.unwrap_or_default(),
                result.errors.join(" ")
            ));
        }
        if !found {
            errors.insert(
                0,
                format!("No call matches answer {answer_index} among the unclaimed calls."),
            );
            return Ok(CheckResult {
                valid: false,
                error_type: Some("parallel_function_checker_no_order:cannot_find_match".into()),
                errors,
            });
        }
    }
    Ok(CheckResult::pass())
}

/// Schema type names to Python types; `tuple` values are compared as lists, `any` as strings.
fn schema_type(name: &str) -> Result<PyType, String> {
    Ok(match name {
        "string" | "any" => PyType::Str,
        "integer" => PyType::Int,
        "float" => PyType::Float,
        "boolean" => PyType::Bool,
        "array" | "tuple" => PyType::List,
        "dict" => PyType::Dict,
        other => return Err(format!("unknown parameter type {other:?}")),
    })
}

/// The type of the first accepted value that is not the "may be omitted" marker `""`.
fn answer_type(accepted: &[PyValue]) -> Option<PyType> {
    accepted
        .iter()
        .find(|v| !v.py_eq(&empty_str()))
        .map(type_of)
}

/// Python's branch: the value as decoded; tuples compare as lists, an int passes for a float.
fn python_typed(
    param: &str,
    value: &PyValue,
    details: &Value,
    type_name: &str,
) -> Result<Typed, String> {
    let expected = schema_type(type_name)?;
    let item_type = if matches!(type_name, "array" | "tuple") {
        let item_name = details
            .get("items")
            .and_then(|i| i.get("type"))
            .and_then(Value::as_str)
            .ok_or_else(|| format!("array parameter {param:?} has no item type"))?;
        Some(schema_type(item_name)?)
    } else {
        None
    };
    let mut value = value.clone();
    if type_name == "tuple" {
        if let PyValue::Tuple(items) = value {
            value = PyValue::List(items);
        }
    }
    // Python would accept an int where a float is declared, at the top level only.
    if type_name == "float" {
        if let PyValue::Int(i) = value {
            value = PyValue::Float(i as f64);
        }
    }
    Ok(Typed {
        value,
        expected,
        item_type,
    })
}

fn one_call(function: &Value, call: &Call, answer: &Value, rules: Rules) -> Outcome {
    let options = rules.options;
    let accepted_by_param = answer
        .as_object()
        .and_then(|o| o.values().next())
        .and_then(Value::as_object)
        .ok_or_else(|| format!("answer {answer} is not {{name: {{param: values}}}}"))?;
    let mut name = function
        .get("name")
        .and_then(Value::as_str)
        .ok_or("function without a name")?
        .to_string();
    let parameters = function
        .get("parameters")
        .ok_or("function without parameters")?;
    let properties = parameters
        .get("properties")
        .and_then(Value::as_object)
        .ok_or("function parameters without properties")?;
    let required = parameters
        .get("required")
        .and_then(Value::as_array)
        .ok_or("function parameters without a required list")?;

    if options.underscore_to_dot && name.contains('.') {
        name = name.replace('.', "_");
    }
    if call.name != name {
        return Ok(CheckResult::fail(
            "simple_function_checker:wrong_func_name",
            format!("Function name {name:?} not found in model output."),
        ));
    }
    for param in required {
        let param = param.as_str().unwrap_or_default();
        if call.argument(param).is_none() {
            return Ok(CheckResult::fail(
                "simple_function_checker:missing_required",
                format!("Missing required parameter: {param:?}."),
            ));
        }
    }

    for (key, value) in &call.arguments {
        let known = key
            .as_deref()
            .and_then(|k| Some((k, properties.get(k)?, accepted_by_param.get(k)?)));
        let Some((param, details, accepted)) = known else {
            return Ok(CheckResult::fail(
                "simple_function_checker:unexpected_param",
                format!("Unexpected parameter: {key:?}."),
            ));
        };
        let accepted = accepted_list(accepted)?;
        let type_name = details
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("parameter {param:?} has no type"))?;
        let typed = match rules.language {
            Language::Python => python_typed(param, value, details, type_name)?,
            language => match java_js_check::typed(language, param, value, details, type_name)? {
                Ok(typed) => typed,
                Err(failure) => return Ok(failure),
            },
        };
        let Typed {
            value,
            expected,
            item_type,
        } = typed;

        let typed = type_check(param, &value, &accepted, type_name, expected, item_type);
        if !typed.valid {
            return Ok(typed.result);
        }
        if !typed.is_variable {
            let special = match (expected, &value) {
                (PyType::Dict, PyValue::Dict(entries)) => Some(dict_check(entries, &accepted)?),
                (PyType::List, PyValue::List(items)) if item_type == Some(PyType::Dict) => {
                    Some(list_of_dicts_check(items, &accepted)?)
                }
                (PyType::Str, PyValue::Str(text)) => Some(string_check(param, text, &accepted)),
                (PyType::List, PyValue::List(items)) => Some(list_check(param, items, &accepted)?),
                _ => None,
            };
            if let Some(result) = special {
                if !result.valid {
                    return Ok(result);
                }
                continue;
            }
        }
        if !value.py_in(&accepted) {
            return Ok(CheckResult::fail(
                "value_error:others",
                format!(
                    "Invalid value for parameter {param:?}: {}. Expected one of {}.",
                    value.repr(),
                    repr_all(&accepted)
                ),
            ));
        }
    }

    for (param, accepted) in accepted_by_param {
        let accepted = accepted_list(accepted)?;
        if call.argument(param).is_none() && !empty_str().py_in(&accepted) {
            return Ok(CheckResult::fail(
                "simple_function_checker:missing_optional",
                format!("Optional parameter {param:?} not provided and not marked as optional."),
            ));
        }
    }
    Ok(CheckResult::pass())
}

fn accepted_list(accepted: &Value) -> Result<Vec<PyValue>, String> {
    match PyValue::from_json(accepted) {
        PyValue::List(items) => Ok(items),
        other => Err(format!("accepted values {} are not a list", other.repr())),
    }
}

struct TypeCheck {
    valid: bool,
    /// The answer gives a value of another type than the schema (a variable name, say):
    /// then only plain membership is checked.
    is_variable: bool,
    result: CheckResult,
}

fn type_check(
    param: &str,
    value: &PyValue,
    accepted: &[PyValue],
    type_name: &str,
    expected: PyType,
    item_type: Option<PyType>,
) -> TypeCheck {
    let accepted_type = answer_type(accepted);
    let is_variable = accepted_type.is_some_and(|t| t != expected);
    let mut error_type = "type_error:simple";
    let mut errors = Vec::new();

    if type_of(value) == expected {
        let Some(item_type) = item_type else {
            return TypeCheck {
                valid: true,
                is_variable,
                result: CheckResult::pass(),
            };
        };
        let items: &[PyValue] = match value {
            PyValue::List(items) | PyValue::Tuple(items) => items,
            _ => &[],
        };
        for option in accepted {
            // An option that is not a list (the omit marker, a variable) accepts any items.
            let items_ok = match option {
                PyValue::List(option_items) => items
                    .iter()
                    .all(|item| type_check(param, item, option_items, "", item_type, None).valid),
                _ => true,
            };
            if items_ok {
                return TypeCheck {
                    valid: true,
                    is_variable,
                    result: CheckResult::pass(),
                };
            }
        }
        error_type = "type_error:nested";
        errors.push(format!(
            "Nested type checking failed for parameter {param:?}. Expected outer type {type_name} with inner type {item_type:?}. Parameter value: {}.",
            value.repr()
        ));
    }

    if accepted_type == Some(type_of(value)) {
        // BFCL returns here with whatever validity the nested check left.
        let valid = errors.is_empty();
        return TypeCheck {
            valid,
            is_variable: true,
            result: CheckResult {
                valid,
                error_type: (!valid).then(|| error_type.to_string()),
                errors,
            },
        };
    }
    errors.push(format!(
        "Incorrect type for parameter {param:?}. Expected type {type_name}, got {}. Parameter value: {}.",
        value.type_name(),
        value.repr()
    ));
    TypeCheck {
        valid: false,
        is_variable,
        result: CheckResult {
            valid: false,
            error_type: Some("type_error:simple".into()),
            errors,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn area_function() -> Value {
        json!({"name": "area", "parameters": {"type": "dict", "properties": {
            "base": {"type": "integer"}, "unit": {"type": "string"},
            "scale": {"type": "float"}}, "required": ["base"]}})
    }

    fn area_answer() -> Value {
        json!({"area": {"base": [10], "unit": ["cm", ""], "scale": [1.0, ""]}})
    }

    fn verdict(output: &str) -> (bool, Option<String>) {
        let r = check(
            "simple_python",
            &[area_function()],
            output,
            &[area_answer()],
        );
        (r.valid, r.error_type)
    }

    #[test]
    fn int_is_accepted_for_float_but_bool_is_not_int() {
        assert_eq!(verdict("[area(base=10, scale=1)]"), (true, None));
        assert_eq!(
            verdict("[area(base=True)]").1.as_deref(),
            Some("type_error:simple")
        );
    }

    #[test]
    fn strings_are_standardized() {
        assert!(verdict("[area(base=10, unit='C-M')]").0);
        assert_eq!(
            verdict("[area(base=10, unit='mm')]").1.as_deref(),
            Some("value_error:string")
        );
    }
}
