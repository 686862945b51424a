//! `calculate`: exact arithmetic on two numbers, so that every call has its true answer and
//! none is a gap.

use serde_json::{json, Map, Value};

use super::exact::Ratio;
use crate::harness::tools::ToolOutput;

pub const TOOL_NAME: &str = "calculate";

pub const DESCRIPTION: &str = "Exact arithmetic on two numbers: a, then the operation, then b.";

const OPERATIONS: [&str; 4] = ["add", "subtract", "multiply", "divide"];

pub fn parameters_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "a": {"type": "number", "description": "The first number"},
            "operation": {
                "type": "string",
                "enum": OPERATIONS,
                "description": "One of add, subtract, multiply, divide",
            },
            "b": {"type": "number", "description": "The second number"},
        },
        "required": ["a", "operation", "b"],
    })
}

/// The tool's answer to one call: `12 × 3 = 36`, `10 ÷ 3 ≈ 3.3333`, or an error result saying
/// what is wrong with the arguments.
pub fn answer(args: &Map<String, Value>) -> ToolOutput {
    let number = |field: &str| args.get(field).and_then(Ratio::from_json);
    let (Some(a), Some(b)) = (number("a"), number("b")) else {
        return ToolOutput::error("a and b must both be numbers, e.g. 12 and 3.");
    };
    let operation = args
        .get("operation")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_lowercase();
    let (symbol, result) = match operation.as_str() {
        "add" => ("+", a.add(b)),
        "subtract" => ("-", a.sub(b)),
        "multiply" => ("×", a.mul(b)),
        "divide" if b.is_zero() => return ToolOutput::error("Cannot divide by zero."),
        "divide" => ("÷", a.div(b)),
        other => {
            return ToolOutput::error(format!(
                "Unknown operation {other:?}: use one of {}.",
                OPERATIONS.join(", ")
            ))
        }
    };
    let (Some(a), Some(b), Some(result)) = (a.exact_text(), b.exact_text(), result) else {
        return ToolOutput::error("The numbers are too large or too precise to work exactly.");
    };
    let (shown, exact) = result.show();
    let relation = if exact { "=" } else { "≈" };
    ToolOutput::ok(format!("{a} {symbol} {b} {relation} {shown}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(a: Value, operation: &str, b: Value) -> (bool, String) {
        let args = json!({"a": a, "operation": operation, "b": b});
        let out = answer(args.as_object().unwrap());
        (!out.is_error, out.content)
    }

    // Worked by hand; 0.1 + 0.2 is exactly 0.3 in decimal, where binary floats are not.
    #[test]
    fn arithmetic_is_exact_and_says_when_it_rounds() {
        let cases = [
            (json!(12), "multiply", json!(3), "12 × 3 = 36"),
            (json!(0.1), "add", json!(0.2), "0.1 + 0.2 = 0.3"),
            (json!(1250), "divide", json!(25), "1250 ÷ 25 = 50"),
            (json!(10), "divide", json!(3), "10 ÷ 3 ≈ 3.3333"),
            (json!(5), "subtract", json!(8.5), "5 - 8.5 = -3.5"),
            (json!("0.25"), "Multiply", json!(240), "0.25 × 240 = 60"),
            (json!(1e3), "add", json!(1), "1000 + 1 = 1001"),
        ];
        for (a, operation, b, expected) in cases {
            assert_eq!(said(a, operation, b), (true, expected.to_string()));
        }
    }

    #[test]
    fn wrong_arguments_are_errors_that_say_what_is_wrong() {
        assert_eq!(
            said(json!(1), "divide", json!(0)),
            (false, "Cannot divide by zero.".into())
        );
        let (ok, text) = said(json!(1), "power", json!(2));
        assert!(!ok && text.contains("\"power\""), "{text}");
        let (ok, text) = said(json!("twelve"), "add", json!(2));
        assert!(!ok && text.contains("numbers"), "{text}");
    }
}
