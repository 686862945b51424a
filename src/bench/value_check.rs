//! BFCL's value rules for strings, lists, dicts and lists of dicts: values are compared after
//! standardizing, so that formatting differences do not count.

use crate::harness::toolcall::python_list::PyValue;

use super::check_types::{empty_str, repr_all, CheckResult, Outcome};

/// Drops spaces and `,./-_*^`, lowercases, and reads `'` as `"`, so that formatting
/// differences such as "April 1, 2024" vs "april 1 2024" do not count.
pub fn standardize_string(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, ' ' | ',' | '.' | '/' | '-' | '_' | '*' | '^'))
        .collect::<String>()
        .to_lowercase()
        .replace('\'', "\"")
}

fn standardized(value: &PyValue) -> PyValue {
    match value {
        PyValue::Str(s) => PyValue::Str(standardize_string(s)),
        other => other.clone(),
    }
}

/// Items of a list, or the characters of a string, as Python iterates them.
fn sequence_items(value: &PyValue) -> Result<Vec<PyValue>, String> {
    match value {
        PyValue::List(items) | PyValue::Tuple(items) => Ok(items.clone()),
        PyValue::Str(s) => Ok(s.chars().map(|c| PyValue::Str(c.to_string())).collect()),
        other => Err(format!("cannot index into {}", other.repr())),
    }
}

pub(crate) fn string_check(param: &str, text: &str, accepted: &[PyValue]) -> CheckResult {
    let wanted: Vec<PyValue> = accepted
        .iter()
        .filter(|v| matches!(v, PyValue::Str(_)))
        .map(standardized)
        .collect();
    if PyValue::Str(standardize_string(text)).py_in(&wanted) {
        CheckResult::pass()
    } else {
        CheckResult::fail(
            "value_error:string",
            format!(
                "Invalid value for parameter {param:?}: {}. Expected one of {}. Case insensitive.",
                PyValue::Str(text.into()).repr(),
                repr_all(accepted)
            ),
        )
    }
}

pub(crate) fn list_check(
    param: &str,
    items: &[PyValue],
    accepted: &[PyValue],
) -> Result<CheckResult, String> {
    let given = PyValue::List(items.iter().map(standardized).collect());
    let mut wanted = Vec::with_capacity(accepted.len());
    for option in accepted {
        let option_items = sequence_items(option)?;
        wanted.push(PyValue::List(
            option_items.iter().map(standardized).collect(),
        ));
    }
    Ok(if given.py_in(&wanted) {
        CheckResult::pass()
    } else {
        CheckResult::fail(
            "value_error:list/tuple",
            format!(
                "Invalid value for parameter {param:?}: {}. Expected one of {}.",
                PyValue::List(items.to_vec()).repr(),
                repr_all(accepted)
            ),
        )
    })
}

fn dict_lookup<'a>(entries: &'a [(PyValue, PyValue)], key: &PyValue) -> Option<&'a PyValue> {
    entries.iter().find(|(k, _)| k.py_eq(key)).map(|(_, v)| v)
}

/// Tries each accepted dict in turn; keys must all be known, values standardized like strings.
pub(crate) fn dict_check(given: &[(PyValue, PyValue)], accepted: &[PyValue]) -> Outcome {
    // With only omit markers to compare with, BFCL reports this unclear failure.
    let mut result = CheckResult {
        valid: false,
        error_type: Some("dict_checker:unclear".into()),
        errors: Vec::new(),
    };
    for option in accepted {
        if option.py_eq(&empty_str()) {
            continue;
        }
        let PyValue::Dict(option) = option else {
            return Err(format!("accepted value {} is not a dict", option.repr()));
        };
        result = CheckResult::fail("dict_checker:unclear", "");
        result.errors.clear();
        let mut matched = true;
        for (key, value) in given {
            let Some(key_options) = dict_lookup(option, key) else {
                result = CheckResult::fail(
                    "value_error:dict_key",
                    format!("Unexpected dict key parameter: {}.", key.repr()),
                );
                matched = false;
                break;
            };
            let wanted: Vec<PyValue> = sequence_items(key_options)?
                .iter()
                .map(standardized)
                .collect();
            if !standardized(value).py_in(&wanted) {
                result = CheckResult::fail(
                    "value_error:dict_value",
                    format!(
                        "Invalid value for parameter {}: {}. Expected one of {}.",
                        key.repr(),
                        value.repr(),
                        repr_all(&wanted)
                    ),
                );
                matched = false;
                break;
            }
        }
        for (key, key_options) in option {
            // `"" in value`: membership for a list; a string always contains "".
            let may_omit = match key_options {
                PyValue::Str(_) => true,
                other => empty_str().py_in(&sequence_items(other)?),
            };
            if dict_lookup(given, key).is_none() && !may_omit {
                result.valid = false;
                result.error_type = Some("value_error:dict_key".into());
                result
                    .errors
                    .push(format!("Missing dict key parameter: {}.", key.repr()));
                matched = false;
                break;
            }
        }
        if matched {
            return Ok(CheckResult::pass());
        }
    }
    Ok(result)
}

/// Lists of dicts compare dict by dict, in order, against each accepted list.
pub(crate) fn list_of_dicts_check(given: &[PyValue], accepted: &[PyValue]) -> Outcome {
    let mut result = CheckResult {
        valid: false,
        error_type: Some("list_dict_checker:unclear".into()),
        errors: Vec::new(),
    };
    for option in accepted {
        // BFCL compares lengths before indexing, so a dict option can still fail on count.
        let option_items = sequence_items(option).or_else(|e| match option {
            PyValue::Dict(entries) => Ok(vec![PyValue::None; entries.len()]),
            _ => Err(e),
        })?;
        if given.len() != option_items.len() {
            result = CheckResult::fail(
                "value_error:list_dict_count",
                "Wrong number of dictionaries in the list.",
            );
            continue;
        }
        let mut matched = true;
        for (item, wanted) in given.iter().zip(&option_items) {
            let PyValue::Dict(entries) = item else {
                return Err(format!("list item {} is not a dict", item.repr()));
            };
            if matches!(option, PyValue::Dict(_)) {
                return Err("accepted list of dicts is a dict".into());
            }
            result = dict_check(entries, std::slice::from_ref(wanted))?;
            if !result.valid {
                matched = false;
                break;
            }
        }
        if matched {
            return Ok(CheckResult::pass());
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standardize_matches_bfcl_rules() {
        assert_eq!(
            standardize_string("April 1, 2024 'x'_*^/."),
            "april12024\"x\""
        );
    }
}
