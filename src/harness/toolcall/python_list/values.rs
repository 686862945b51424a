//! The values the decoder produces: Python's types (`PyValue`), one decoded call, Python's `==`
//! across them, their `repr`, their JSON for the harness, and calls rendered back as source.

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

/// A Python value as the decoder produced it; the variant is the Python type.
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<PyValue>),
    Tuple(Vec<PyValue>),
    /// Entries in insertion order, keys unique under Python equality.
    Dict(Vec<(PyValue, PyValue)>),
}

/// One call: `name(key=value, …)`. Positional arguments are dropped, as BFCL drops them.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedCall {
    pub name: String,
    pub arguments: Vec<(String, PyValue)>,
}

impl DecodedCall {
    pub fn argument(&self, key: &str) -> Option<&PyValue> {
        self.arguments
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

impl PyValue {
    /// The Python type name, as `type(v).__name__` spells it.
    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::None => "NoneType",
            PyValue::Bool(_) => "bool",
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Str(_) => "str",
            PyValue::List(_) => "list",
            PyValue::Tuple(_) => "tuple",
            PyValue::Dict(_) => "dict",
        }
    }

    /// Python's `==`: numbers compare by value across bool/int/float, a list never equals a tuple.
    pub fn py_eq(&self, other: &PyValue) -> bool {
        use PyValue::*;
        if let (Some(a), Some(b)) = (self.as_number(), other.as_number()) {
            return a.equals(b);
        }
        match (self, other) {
            (None, None) => true,
            (Str(a), Str(b)) => a == b,
            (List(a), List(b)) | (Tuple(a), Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.py_eq(y))
            }
            (Dict(a), Dict(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(k, v)| {
                        b.iter()
                            .find(|(k2, _)| k2.py_eq(k))
                            .is_some_and(|(_, v2)| v2.py_eq(v))
                    })
            }
            _ => false,
        }
    }

    /// Python's `value in items`.
    pub fn py_in(&self, items: &[PyValue]) -> bool {
        items.iter().any(|item| item.py_eq(self))
    }

    /// Bools count as the integers 0 and 1, as in Python.
    pub(super) fn as_number(&self) -> Option<Num> {
        match self {
            PyValue::Bool(b) => Some(Num::Int(*b as i64)),
            PyValue::Int(i) => Some(Num::Int(*i)),
            PyValue::Float(f) => Some(Num::Float(*f)),
            _ => None,
        }
    }

    /// Reads JSON the way Python's `json.loads` would type it.
    pub fn from_json(value: &Value) -> PyValue {
        match value {
            Value::Null => PyValue::None,
            Value::Bool(b) => PyValue::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => PyValue::Int(i),
                None => PyValue::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => PyValue::Str(s.clone()),
            Value::Array(items) => PyValue::List(items.iter().map(PyValue::from_json).collect()),
            Value::Object(map) => PyValue::Dict(
                map.iter()
                    .map(|(k, v)| (PyValue::Str(k.clone()), PyValue::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// JSON for the harness: tuples become arrays, non-string dict keys their Python text,
    /// and floats JSON cannot hold (NaN, infinities) their Python text.
    pub fn to_json(&self) -> Value {
        match self {
            PyValue::None => Value::Null,
            PyValue::Bool(b) => Value::Bool(*b),
            PyValue::Int(i) => Value::Number((*i).into()),
            PyValue::Float(f) => Number::from_f64(*f)
                .map(Value::Number)
                .unwrap_or_else(|| Value::String(py_float_repr(*f))),
            PyValue::Str(s) => Value::String(s.clone()),
            PyValue::List(items) | PyValue::Tuple(items) => {
                Value::Array(items.iter().map(PyValue::to_json).collect())
            }
            PyValue::Dict(entries) => {
                let mut map = Map::new();
                for (k, v) in entries {
                    let key = match k {
                        PyValue::Str(s) => s.clone(),
                        other => other.repr(),
                    };
                    map.insert(key, v.to_json());
                }
                Value::Object(map)
            }
        }
    }

    /// Python's `repr`. It is Python source for the value except for infinities and NaN
    /// (`inf`, `nan`); [`PyValue::source`] is source for all.
    pub fn repr(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, Spelling::Repr);
        out
    }

    /// Python source that the decoder reads back as this value, in the layout of
    /// `ast.unparse`: `repr` but for infinities (`1e309`), NaN (`(1e309-1e309)`) and the
    /// smallest integer, whose digits alone are past 64 bits.
    pub fn source(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, Spelling::Source);
        out
    }

    fn write(&self, out: &mut String, spelling: Spelling) {
        match self {
            PyValue::None => out.push_str("None"),
            PyValue::Bool(true) => out.push_str("True"),
            PyValue::Bool(false) => out.push_str("False"),
            PyValue::Int(i64::MIN) if spelling == Spelling::Source => {
                let _ = write!(out, "({}-1)", i64::MIN + 1);
            }
            PyValue::Int(i) => {
                let _ = write!(out, "{i}");
            }
            PyValue::Float(f) if spelling == Spelling::Source && !f.is_finite() => {
                // As `ast.unparse` writes them: 1e309 overflows to infinity.
                let repr = py_float_repr(*f);
                out.push_str(&repr.replace("inf", "1e309").replace("nan", "(1e309-1e309)"));
            }
            PyValue::Float(f) => out.push_str(&py_float_repr(*f)),
            PyValue::Str(s) => out.push_str(&py_str_repr(s)),
            PyValue::List(items) => {
                out.push('[');
                write_joined(out, items, spelling);
                out.push(']');
            }
            PyValue::Tuple(items) => {
                out.push('(');
                write_joined(out, items, spelling);
                if items.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            PyValue::Dict(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.write(out, spelling);
                    out.push_str(": ");
                    v.write(out, spelling);
                }
                out.push('}');
            }
        }
    }
}

/// How a value is written: as Python's `repr`, or as source that reads back as the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spelling {
    Repr,
    Source,
}

fn write_joined(out: &mut String, items: &[PyValue], spelling: Spelling) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        item.write(out, spelling);
    }
}

/// Renders calls back as a Python call list, `[f(a=1), g()]`, that decodes to the same calls.
pub fn render_calls(calls: &[DecodedCall]) -> String {
    let mut out = String::from("[");
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if call.name.is_empty() {
            // BFCL names a call whose callee is no name (`(1)(a=1)`) "", and so does `(None)`.
            out.push_str("(None)");
        } else {
            out.push_str(&call.name);
        }
        out.push('(');
        for (j, (key, value)) in call.arguments.iter().enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            out.push_str(key);
            out.push('=');
            value.write(&mut out, Spelling::Source);
        }
        out.push(')');
    }
    out.push(']');
    out
}

/// A number of either Python type, for comparisons and arithmetic across them.
#[derive(Clone, Copy)]
pub(super) enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn equals(self, other: Num) -> bool {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a == b,
            (Num::Float(a), Num::Float(b)) => a == b,
            (Num::Int(i), Num::Float(f)) | (Num::Float(f), Num::Int(i)) => int_equals_float(i, f),
        }
    }
}

/// Exact comparison, as Python does it: no rounding of the integer to a float.
fn int_equals_float(i: i64, f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0 && f.abs() < 9.3e18 && (f as i128) == i as i128
}

/// Python's `repr(float)`: shortest round-trip digits, exponent form outside 1e-4..1e16.
pub fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..16).contains(&exponent) {
        let fixed = format!("{f}");
        if fixed.contains('.') {
            fixed
        } else {
            fixed + ".0"
        }
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}

/// Python's `repr(str)`: single quotes unless only double quotes avoid escaping.
pub fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        assert_eq!(py_float_repr(1.0), "1.0");
        assert_eq!(py_float_repr(1e-5), "1e-05");
        assert_eq!(py_float_repr(0.0001), "0.0001");
        assert_eq!(py_float_repr(1e16), "1e+16");
        assert_eq!(py_float_repr(123456789012345.6), "123456789012345.6");
        assert_eq!(py_float_repr(-2.5e-7), "-2.5e-07");
    }
}
