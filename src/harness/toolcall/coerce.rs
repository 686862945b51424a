//! Converting call arguments to the types a tool's JSON schema asks for.
//!
//! Small models write `"3"` for 3 or `"Paris"` for `["Paris"]`; such values are
//! converted and each change is recorded. What can't be converted is refused
//! with a message the model can act on.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Number, Value};

use super::{Repair, RepairKind};

/// Decimal notation only: `str::parse::<f64>` would also take "inf" and "NaN".
static NUMERIC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$").unwrap());

/// Coerces the arguments of a call to `tool` to its parameters' `schema`.
pub fn coerce_call_arguments(
    tool: &str,
    args: &Map<String, Value>,
    schema: &Value,
) -> Result<(Map<String, Value>, Vec<Repair>), String> {
    let mut coercion = Coercion::default();
    let coerced = coercion.object(args, schema, "");
    if coercion.faults.is_empty() {
        Ok((coerced, coercion.repairs))
    } else {
        Err(format!(
            "{} Call {tool} again with {}.",
            coercion.faults.join(" "),
            parameter_summary(schema)
        ))
    }
}

#[derive(Default)]
struct Coercion {
    repairs: Vec<Repair>,
    faults: Vec<String>,
}

impl Coercion {
    fn object(
        &mut self,
        args: &Map<String, Value>,
        schema: &Value,
        path: &str,
    ) -> Map<String, Value> {
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required = required_names(schema);
        for name in &required {
            if args.get(*name).is_none_or(Value::is_null) {
                self.faults.push(format!(
                    "Missing required argument \"{}\".",
                    join_path(path, name)
                ));
            }
        }
        let mut coerced = Map::new();
        for (name, value) in args {
            let value_path = join_path(path, name);
            let Some(property) = properties.get(name) else {
                // Kept as given and not reported: the executor decides what an
                // extra means, and refusing it would fail calls that small models
                // often pad with a harmless extra.
                coerced.insert(name.clone(), value.clone());
                continue;
            };
            let null_unwanted = !allowed_types(property).contains(&"null");
            if value.is_null() && !required.contains(&name.as_str()) && null_unwanted {
                // An optional argument given as null means "not given".
                self.record(&value_path, value, "omitted");
                continue;
            }
            if let Some(value) = self.value(value, property, &value_path) {
                coerced.insert(name.clone(), value);
            }
        }
        coerced
    }

    /// The value converted to `schema`, or `None` once a fault is recorded.
    fn value(&mut self, value: &Value, schema: &Value, path: &str) -> Option<Value> {
        let types = allowed_types(schema);
        let mut converted = value.clone();
        if !types.is_empty() && !types.iter().any(|wanted| has_type(value, wanted)) {
            match types.iter().find_map(|wanted| convert(value, wanted)) {
                Some(new_value) => {
                    self.record(path, value, &compact(&new_value));
                    converted = new_value;
                }
                None => {
                    self.faults.push(format!(
                        "Argument \"{path}\" must be {}; got {}.",
                        type_phrase(&types),
                        excerpt(value)
                    ));
                    return None;
                }
            }
        }
        converted = match converted {
            Value::Array(items) => match schema.get("items") {
                Some(item_schema) => {
                    let mut coerced_items = Vec::with_capacity(items.len());
                    for (index, item) in items.iter().enumerate() {
                        coerced_items.push(self.value(
                            item,
                            item_schema,
                            &format!("{path}[{index}]"),
                        )?);
                    }
                    Value::Array(coerced_items)
                }
                None => Value::Array(items),
            },
            Value::Object(fields) if schema.get("properties").is_some() => {
                let faults_before = self.faults.len();
                let coerced = self.object(&fields, schema, path);
                if self.faults.len() > faults_before {
                    return None;
                }
                Value::Object(coerced)
            }
            other => other,
        };
        if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
            if !choices.contains(&converted) {
                let listed: Vec<String> = choices.iter().map(compact).collect();
                self.faults.push(format!(
                    "Argument \"{path}\" must be one of {}; got {}.",
                    listed.join(", "),
                    excerpt(&converted)
                ));
                return None;
            }
        }
        Some(converted)
    }

    fn record(&mut self, path: &str, before: &Value, after: &str) {
        self.repairs.push(Repair {
            kind: RepairKind::CoercedArgument,
            detail: format!("{path}: {} → {after}", compact(before)),
        });
    }
}

fn required_names(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The schema's `type`, given as one name or a list; empty means any.
fn allowed_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn has_type(value: &Value, wanted: &str) -> bool {
    match wanted {
        "string" => value.is_string(),
        "number" => value.is_number(),
        // A float such as 3.0 is converted: executors read integers with as_i64.
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        // An unknown type name can't be checked, so it doesn't refuse anything.
        _ => true,
    }
}

fn convert(value: &Value, wanted: &str) -> Option<Value> {
    match (wanted, value) {
        ("string", Value::Number(number)) => Some(Value::String(number.to_string())),
        ("number", Value::String(text)) => parse_number(text).map(Value::Number),
        ("integer", Value::String(text)) => parse_number(text).and_then(integral),
        ("integer", Value::Number(number)) => integral(number.clone()),
        ("boolean", Value::String(text)) => match text.trim().to_ascii_lowercase().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        ("array", Value::String(text)) if text.trim_start().starts_with('[') => {
            serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_array)
        }
        ("array", single) if !single.is_null() => Some(Value::Array(vec![single.clone()])),
        ("object", Value::String(text)) => serde_json::from_str::<Value>(text)
            .ok()
            .filter(Value::is_object),
        _ => None,
    }
}

/// A number from its decimal text: an integer when it is integral.
fn parse_number(text: &str) -> Option<Number> {
    let text = text.trim();
    if !NUMERIC.is_match(text) {
        return None;
    }
    let without_plus = text.strip_prefix('+').unwrap_or(text);
    if let Ok(integer) = without_plus.parse::<i64>() {
        return Some(integer.into());
    }
    if let Ok(integer) = without_plus.parse::<u64>() {
        return Some(integer.into());
    }
    let float: f64 = without_plus.parse().ok()?;
    match whole_number(float) {
        Some(integer) => Some(integer.into()),
        None => Number::from_f64(float),
    }
}

/// The number as a JSON integer, if it has no fractional part and fits.
fn integral(number: Number) -> Option<Value> {
    if number.is_i64() || number.is_u64() {
        return Some(Value::Number(number));
    }
    whole_number(number.as_f64()?).map(Value::from)
}

fn whole_number(float: f64) -> Option<i64> {
    let fits = float.fract() == 0.0 && float >= i64::MIN as f64 && float < i64::MAX as f64;
    fits.then_some(float as i64)
}

fn type_phrase(types: &[&str]) -> String {
    let phrases: Vec<&str> = types
        .iter()
        .map(|name| match *name {
            "string" => "a string",
            "number" => "a number",
            "integer" => "an integer",
            "boolean" => "true or false",
            "array" => "a list",
            "object" => "an object",
            "null" => "null",
            other => other,
        })
        .collect();
    phrases.join(" or ")
}

/// `location (string, required), days (integer)`: what a correct call holds.
fn parameter_summary(schema: &Value) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return "arguments that match its parameters".to_string();
    };
    if properties.is_empty() {
        return "no arguments".to_string();
    }
    let required = required_names(schema);
    let described: Vec<String> = properties
        .iter()
        .map(|(name, property)| {
            let mut notes: Vec<String> = Vec::new();
            if let Some(choices) = property.get("enum").and_then(Value::as_array) {
                let listed: Vec<String> = choices.iter().map(compact).collect();
                notes.push(format!("one of {}", listed.join(" | ")));
            } else {
                let types = allowed_types(property);
                if !types.is_empty() {
                    notes.push(types.join(" or "));
                }
            }
            if required.contains(&name.as_str()) {
                notes.push("required".to_string());
            }
            if notes.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", notes.join(", "))
            }
        })
        .collect();
    described.join(", ")
}

fn join_path(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}.{name}")
    }
}

fn compact(value: &Value) -> String {
    value.to_string()
}

/// The value as JSON, shortened so a huge argument doesn't flood the message.
fn excerpt(value: &Value) -> String {
    const LIMIT: usize = 80;
    let text = compact(value);
    if text.chars().count() <= LIMIT {
        text
    } else {
        let head: String = text.chars().take(LIMIT).collect();
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn weather_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "location": {"type": "string"},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "metric": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "integer"}},
                "filter": {"type": "object", "properties": {"limit": {"type": "integer"}}},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
            },
            "required": ["location"]
        })
    }

    fn coerce(args: Value) -> Result<(Map<String, Value>, Vec<Repair>), String> {
        let Value::Object(args) = args else {
            panic!("test arguments must be an object")
        };
        coerce_call_arguments("weather_lookup", &args, &weather_schema())
    }

    fn details(repairs: &[Repair]) -> Vec<&str> {
        repairs.iter().map(|r| r.detail.as_str()).collect()
    }

    #[test]
    fn well_typed_arguments_pass_unchanged() {
        let args = json!({"location": "Paris", "count": 3, "metric": true});
        let (coerced, repairs) = coerce(args.clone()).unwrap();
        assert_eq!(Value::Object(coerced), args);
        assert!(repairs.is_empty());
    }

    #[test]
    fn integral_string_becomes_an_integer() {
        let (coerced, repairs) = coerce(json!({"location": "Paris", "count": "3"})).unwrap();
        assert_eq!(coerced["count"], json!(3));
        assert!(coerced["count"].is_i64());
        assert_eq!(details(&repairs), ["count: \"3\" → 3"]);
        assert_eq!(repairs[0].kind, RepairKind::CoercedArgument);
    }

    #[test]
    fn integral_float_becomes_an_integer() {
        let (coerced, _) = coerce(json!({"location": "Paris", "count": 4.0})).unwrap();
        assert!(coerced["count"].is_i64());
    }

    #[test]
    fn decimal_string_becomes_a_number_and_integral_one_an_integer() {
        let (coerced, _) = coerce(json!({"location": "P", "ratio": "0.25"})).unwrap();
        assert_eq!(coerced["ratio"], json!(0.25));
        let (coerced, _) = coerce(json!({"location": "P", "ratio": " 2 "})).unwrap();
        assert!(coerced["ratio"].is_i64());
    }

    #[test]
    fn boolean_strings_become_booleans_whatever_their_case() {
        let (coerced, repairs) = coerce(json!({"location": "P", "metric": "FALSE"})).unwrap();
        assert_eq!(coerced["metric"], json!(false));
        assert_eq!(details(&repairs), ["metric: \"FALSE\" → false"]);
    }

    #[test]
    fn single_value_becomes_a_one_element_list_with_items_coerced() {
        let (coerced, repairs) = coerce(json!({"location": "P", "tags": "7"})).unwrap();
        assert_eq!(coerced["tags"], json!([7]));
        assert_eq!(
            details(&repairs),
            ["tags: \"7\" → [\"7\"]", "tags[0]: \"7\" → 7"]
        );
    }

    #[test]
    fn json_string_holding_a_list_becomes_the_list() {
        let (coerced, _) = coerce(json!({"location": "P", "tags": "[1, 2]"})).unwrap();
        assert_eq!(coerced["tags"], json!([1, 2]));
    }

    #[test]
    fn json_string_holding_an_object_becomes_the_object_with_fields_coerced() {
        let (coerced, repairs) =
            coerce(json!({"location": "P", "filter": "{\"limit\": \"5\"}"})).unwrap();
        assert_eq!(coerced["filter"], json!({"limit": 5}));
        assert_eq!(repairs.len(), 2);
        assert_eq!(repairs[1].detail, "filter.limit: \"5\" → 5");
    }

    #[test]
    fn number_becomes_a_string_when_a_string_is_wanted() {
        let (coerced, repairs) = coerce(json!({"location": 75001})).unwrap();
        assert_eq!(coerced["location"], json!("75001"));
        assert_eq!(details(&repairs), ["location: 75001 → \"75001\""]);
    }

    #[test]
    fn null_optional_argument_is_omitted() {
        let (coerced, repairs) = coerce(json!({"location": "P", "unit": null})).unwrap();
        assert!(!coerced.contains_key("unit"));
        assert_eq!(details(&repairs), ["unit: null → omitted"]);
    }

    #[test]
    fn unknown_arguments_are_kept_without_a_repair() {
        let (coerced, repairs) = coerce(json!({"location": "P", "verbose": "yes"})).unwrap();
        assert_eq!(coerced["verbose"], json!("yes"));
        assert!(repairs.is_empty());
    }

    #[test]
    fn non_numeric_string_for_an_integer_is_refused() {
        let refusal = coerce(json!({"location": "P", "count": "abc"})).unwrap_err();
        assert!(
            refusal.starts_with("Argument \"count\" must be an integer; got \"abc\". Call weather_lookup again with location (string, required), count (integer)"),
            "{refusal}"
        );
    }

    #[test]
    fn fractional_string_for_an_integer_is_refused() {
        let refusal = coerce(json!({"location": "P", "count": "2.5"})).unwrap_err();
        assert!(refusal.contains("must be an integer; got \"2.5\""));
    }

    #[test]
    fn infinity_is_not_a_number() {
        assert!(coerce(json!({"location": "P", "ratio": "inf"})).is_err());
    }

    #[test]
    fn missing_required_argument_is_refused() {
        let refusal = coerce(json!({"count": 1})).unwrap_err();
        assert!(refusal.starts_with("Missing required argument \"location\"."));
        assert!(refusal.contains("Call weather_lookup again"));
    }

    #[test]
    fn value_outside_the_enum_is_refused() {
        let refusal = coerce(json!({"location": "P", "unit": "kelvin"})).unwrap_err();
        assert!(refusal.contains(
            "Argument \"unit\" must be one of \"celsius\", \"fahrenheit\"; got \"kelvin\"."
        ));
        assert!(refusal.contains("unit (one of \"celsius\" | \"fahrenheit\")"));
    }

    #[test]
    fn non_boolean_string_for_a_boolean_is_refused() {
        let refusal = coerce(json!({"location": "P", "metric": "maybe"})).unwrap_err();
        assert!(refusal.contains("\"metric\" must be true or false"));
    }

    #[test]
    fn every_fault_is_named_in_one_refusal() {
        let refusal = coerce(json!({"count": "x", "metric": "y"})).unwrap_err();
        assert!(refusal.contains("\"location\""));
        assert!(refusal.contains("\"count\""));
        assert!(refusal.contains("\"metric\""));
    }
}
