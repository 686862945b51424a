//! What the AST checker's parts share: the verdict, the language of a category, the Python
//! types values are checked as, and a value typed for the rules.

use serde::{Deserialize, Serialize};

use crate::harness::toolcall::python_list::PyValue;

/// One verdict: BFCL's error type when invalid, with our own wording of the errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub valid: bool,
    pub error_type: Option<String>,
    pub errors: Vec<String>,
}

impl CheckResult {
    pub fn pass() -> Self {
        CheckResult {
            valid: true,
            error_type: None,
            errors: Vec::new(),
        }
    }

    pub fn fail(error_type: &str, error: impl Into<String>) -> Self {
        CheckResult {
            valid: false,
            error_type: Some(error_type.to_string()),
            errors: vec![error.into()],
        }
    }
}

/// The language of a category's function documents, as BFCL tells it from the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Python,
    Java,
    JavaScript,
}

impl Language {
    /// `is_java`/`is_js` of bfcl-eval: `javascript` in the name, or `java` without it.
    pub fn of_category(category: &str) -> Language {
        if category.contains("javascript") {
            Language::JavaScript
        } else if category.contains("java") {
            Language::Java
        } else {
            Language::Python
        }
    }
}

/// A verdict, or `Err` where BFCL's own checker would raise.
pub(crate) type Outcome = Result<CheckResult, String>;

/// Python types as the checker names them in function documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PyType {
    Str,
    Int,
    Float,
    Bool,
    List,
    Tuple,
    Dict,
    NoneType,
    /// Java's `Set`: no decoded value has it.
    Set,
}

pub(crate) fn type_of(value: &PyValue) -> PyType {
    match value {
        PyValue::None => PyType::NoneType,
        PyValue::Bool(_) => PyType::Bool,
        PyValue::Int(_) => PyType::Int,
        PyValue::Float(_) => PyType::Float,
        PyValue::Str(_) => PyType::Str,
        PyValue::List(_) => PyType::List,
        PyValue::Tuple(_) => PyType::Tuple,
        PyValue::Dict(_) => PyType::Dict,
    }
}

/// `""`: among accepted values, BFCL's mark of a parameter that may be omitted.
pub(crate) fn empty_str() -> PyValue {
    PyValue::Str(String::new())
}

/// A value ready for the type and value rules, with the Python types it should have.
pub(crate) struct Typed {
    pub value: PyValue,
    pub expected: PyType,
    pub item_type: Option<PyType>,
}

/// Accepted values as BFCL prints them in an error message.
pub(crate) fn repr_all(values: &[PyValue]) -> String {
    PyValue::List(values.to_vec()).repr()
}
