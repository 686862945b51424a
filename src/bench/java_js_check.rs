//! The Java and JavaScript branch of BFCL's simple function checker (`ast_checker.py`): an
//! argument must still be source text (`type_error:java`, `type_error:js` otherwise), its
//! declared type picks the Python type it should have (`JAVA_TYPE_CONVERSION`,
//! `JS_TYPE_CONVERSION`) and the converter that reads it; `checker` then applies the rules all
//! languages share.

use serde_json::Value;

use crate::harness::toolcall::python_list::PyValue;

use super::check_types::{CheckResult, Language, PyType, Typed};
use super::java_js_convert;

/// Types whose items are converted with the item type (`NESTED_CONVERSION_TYPE_LIST`).
const NESTED_CONVERSION_TYPES: [&str; 3] = ["Array", "ArrayList", "array"];

/// `JAVA_TYPE_CONVERSION` / `JS_TYPE_CONVERSION`; `Err` where BFCL's lookup raises.
fn python_type(language: Language, type_name: &str) -> Result<PyType, String> {
    let found = match language {
        Language::Java => match type_name {
            "byte" | "short" | "integer" | "long" => Some(PyType::Int),
            "float" | "double" => Some(PyType::Float),
            "boolean" => Some(PyType::Bool),
            "char" | "String" | "any" => Some(PyType::Str),
            "Array" | "ArrayList" | "Queue" | "Stack" => Some(PyType::List),
            "Set" => Some(PyType::Set),
            "HashMap" | "Hashtable" => Some(PyType::Dict),
            _ => None,
        },
        _ => match type_name {
            "String" | "any" => Some(PyType::Str),
            "integer" | "Bigint" => Some(PyType::Int),
            "float" => Some(PyType::Float),
            "Boolean" => Some(PyType::Bool),
            "dict" => Some(PyType::Dict),
            "array" => Some(PyType::List),
            _ => None,
        },
    };
    found.ok_or_else(|| format!("type {type_name:?} is not among BFCL's {language:?} types"))
}

fn convert(
    language: Language,
    text: &str,
    type_name: &str,
    nested: Option<&str>,
) -> Result<PyValue, String> {
    match language {
        Language::Java => java_js_convert::java(text, type_name, nested),
        _ => java_js_convert::javascript(text, type_name, nested),
    }
}

/// One argument typed as BFCL's Java or JavaScript branch types it: `Ok(Err(_))` is a verdict,
/// `Err` an exception in BFCL's code.
pub(crate) fn typed(
    language: Language,
    param: &str,
    value: &PyValue,
    details: &Value,
    type_name: &str,
) -> Result<Result<Typed, CheckResult>, String> {
    let expected = python_type(language, type_name)?;
    let PyValue::Str(text) = value else {
        let error_type = match language {
            Language::Java => "type_error:java",
            _ => "type_error:js",
        };
        return Ok(Err(CheckResult::fail(
            error_type,
            format!(
                "Incorrect type for parameter {param:?}. Expected type String, got {}. Parameter value: {}.",
                value.type_name(),
                value.repr()
            ),
        )));
    };
    let (value, item_type) = if NESTED_CONVERSION_TYPES.contains(&type_name) {
        let nested = details
            .get("items")
            .and_then(|items| items.get("type"))
            .and_then(Value::as_str)
            .ok_or_else(|| format!("list parameter {param:?} has no item type"))?;
        let item_type = python_type(language, nested)?;
        (
            convert(language, text, type_name, Some(nested))?,
            Some(item_type),
        )
    } else {
        (convert(language, text, type_name, None)?, None)
    };
    Ok(Ok(Typed {
        value,
        expected,
        item_type,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn non_text_values_are_type_errors_of_the_language() {
        let details = json!({"type": "integer"});
        let verdict = typed(Language::Java, "n", &PyValue::Int(1), &details, "integer").unwrap();
        assert_eq!(
            verdict.err().unwrap().error_type.as_deref(),
            Some("type_error:java")
        );
        let verdict = typed(
            Language::JavaScript,
            "n",
            &PyValue::Int(1),
            &details,
            "integer",
        )
        .unwrap();
        assert_eq!(
            verdict.err().unwrap().error_type.as_deref(),
            Some("type_error:js")
        );
    }

    #[test]
    fn types_outside_the_language_table_are_internal_errors() {
        let details = json!({"type": "Bigint"});
        let text = PyValue::Str("1n".into());
        assert!(typed(Language::Java, "n", &text, &details, "Bigint").is_err());
        let typed = typed(Language::JavaScript, "n", &text, &details, "Bigint")
            .unwrap()
            .ok()
            .unwrap();
        assert_eq!(typed.value, PyValue::Int(1));
    }
}
