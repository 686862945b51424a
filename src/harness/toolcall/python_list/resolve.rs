//! From the syntax tree to calls and values, by BFCL's rules: keyword arguments only, names
//! and argument-less calls as their source text, constant arithmetic evaluated.

use super::parser::{CallExpr, Expr};
use super::values::{DecodedCall, Num, PyValue};

/// A call with its keyword arguments resolved; BFCL keeps the last of a repeated keyword.
pub(super) fn resolve_call(call: CallExpr) -> Result<DecodedCall, String> {
    let name = dotted_name(&call.func);
    let mut arguments = Vec::with_capacity(call.keywords.len());
    for (key, value) in call.keywords {
        let key = key.ok_or("`**` arguments are not supported")?;
        let value = resolve(value)?;
        // The parser accepts a repeated keyword; BFCL's dict then keeps the last value.
        match arguments
            .iter_mut()
            .find(|(k, _): &&mut (String, PyValue)| *k == key)
        {
            Some(slot) => slot.1 = value,
            None => arguments.push((key, value)),
        }
    }
    Ok(DecodedCall { name, arguments })
}

/// `a.b.c` for attribute chains on a name; parts that are not names are left out.
fn dotted_name(func: &Expr) -> String {
    let mut parts = Vec::new();
    let mut current = func;
    while let Expr::Attribute(inner, attr) = current {
        parts.push(attr.as_str());
        current = inner;
    }
    if let Expr::Name(name) = current {
        parts.push(name);
    }
    parts.reverse();
    parts.join(".")
}

fn resolve(expr: Expr) -> Result<PyValue, String> {
    match expr {
        Expr::Const(v) => Ok(v),
        Expr::Ellipsis => Ok(PyValue::Str("...".into())),
        Expr::Name(name) => Ok(PyValue::Str(name)),
        Expr::List(items) => Ok(PyValue::List(resolve_all(items)?)),
        Expr::Tuple(items) => Ok(PyValue::Tuple(resolve_all(items)?)),
        Expr::Dict(entries) => {
            let mut dict = Vec::with_capacity(entries.len());
            for (key, value) in entries {
                let key = resolve(key.ok_or("`**` in a dict is not supported")?)?;
                let value = resolve(value)?;
                dict_insert(&mut dict, key, value)?;
            }
            Ok(PyValue::Dict(dict))
        }
        // BFCL negates the operand's constant whatever the operator is, so `+5` reads as -5.
        Expr::Unary(_, operand) => match *operand {
            Expr::Const(PyValue::Int(i)) => i
                .checked_neg()
                .map(PyValue::Int)
                .ok_or_else(|| "integer overflow".to_string()),
            Expr::Const(PyValue::Bool(b)) => Ok(PyValue::Int(-(b as i64))),
            Expr::Const(PyValue::Float(f)) => Ok(PyValue::Float(-f)),
            Expr::Const(other) => Err(format!(
                "bad operand type for unary -: '{}'",
                other.type_name()
            )),
            other => Err(format!("unsupported operand: {}", other.kind())),
        },
        Expr::Binary(..) => evaluate(&expr),
        Expr::Call(call) => {
            if call.keywords.is_empty() {
                Ok(PyValue::Str(unparse(&Expr::Call(call))))
            } else {
                let call = resolve_call(*call)?;
                let args = call
                    .arguments
                    .into_iter()
                    .map(|(k, v)| (PyValue::Str(k), v))
                    .collect();
                Ok(PyValue::Dict(vec![(
                    PyValue::Str(call.name),
                    PyValue::Dict(args),
                )]))
            }
        }
        Expr::Subscript(value, index) => Ok(PyValue::Str(format!(
            "{}[{}]",
            unparse(&value),
            unparse(&index)
        ))),
        other => Err(format!("unsupported value: {}", other.kind())),
    }
}

fn resolve_all(items: Vec<Expr>) -> Result<Vec<PyValue>, String> {
    items.into_iter().map(resolve).collect()
}

/// Python dict assignment: an equal key keeps its first spelling and takes the new value.
fn dict_insert(
    dict: &mut Vec<(PyValue, PyValue)>,
    key: PyValue,
    value: PyValue,
) -> Result<(), String> {
    if matches!(key, PyValue::List(_) | PyValue::Dict(_)) {
        return Err(format!("unhashable type: '{}'", key.type_name()));
    }
    match dict.iter_mut().find(|(k, _)| k.py_eq(&key)) {
        Some(entry) => entry.1 = value,
        None => dict.push((key, value)),
    }
    Ok(())
}

/// Evaluates constant arithmetic, as BFCL does with `eval` on binary operations.
fn evaluate(expr: &Expr) -> Result<PyValue, String> {
    match expr {
        Expr::Const(v) => Ok(v.clone()),
        Expr::Ellipsis => Ok(PyValue::Str("...".into())),
        Expr::List(items) => Ok(PyValue::List(
            items.iter().map(evaluate).collect::<Result<_, _>>()?,
        )),
        Expr::Tuple(items) => Ok(PyValue::Tuple(
            items.iter().map(evaluate).collect::<Result<_, _>>()?,
        )),
        Expr::Unary(op, operand) => {
            let value = evaluate(operand)?;
            match (*op, value.as_number()) {
                ("not", _) => Err("`not` is not supported".into()),
                ("+", Some(Num::Int(i))) => Ok(PyValue::Int(i)),
                ("+", Some(Num::Float(f))) => Ok(PyValue::Float(f)),
                ("-", Some(Num::Int(i))) => i
                    .checked_neg()
                    .map(PyValue::Int)
                    .ok_or("integer overflow".into()),
                ("-", Some(Num::Float(f))) => Ok(PyValue::Float(-f)),
                ("~", Some(Num::Int(i))) => Ok(PyValue::Int(!i)),
                _ => Err(format!(
                    "bad operand type for unary {op}: '{}'",
                    value.type_name()
                )),
            }
        }
        Expr::Binary(op, left, right) => arithmetic(op, evaluate(left)?, evaluate(right)?),
        Expr::Name(name) => Err(format!("name '{name}' is not defined")),
        other => Err(format!("cannot evaluate {}", other.kind())),
    }
}

fn arithmetic(op: &str, left: PyValue, right: PyValue) -> Result<PyValue, String> {
    let overflow = || "integer overflow".to_string();
    match (left.as_number(), right.as_number()) {
        (Some(Num::Int(a)), Some(Num::Int(b))) => match op {
            "+" => a.checked_add(b).map(PyValue::Int).ok_or_else(overflow),
            "-" => a.checked_sub(b).map(PyValue::Int).ok_or_else(overflow),
            "*" => a.checked_mul(b).map(PyValue::Int).ok_or_else(overflow),
            "/" if b == 0 => Err("division by zero".into()),
            "/" => Ok(PyValue::Float(a as f64 / b as f64)),
            "//" | "%" if b == 0 => Err("integer division or modulo by zero".into()),
            // Python floors; `checked_` because `i64::MIN // -1` leaves 64 bits.
            "//" => {
                let quotient = a.checked_div_euclid(b).ok_or_else(overflow)?;
                let remainder = a.checked_rem_euclid(b).ok_or_else(overflow)?;
                Ok(PyValue::Int(quotient - i64::from(b < 0 && remainder != 0)))
            }
            "%" => {
                let r = a.checked_rem_euclid(b).ok_or_else(overflow)?;
                Ok(PyValue::Int(if b < 0 && r != 0 { r + b } else { r }))
            }
            "**" if b < 0 && a == 0 => {
                Err("0.0 cannot be raised to a negative power (division by zero)".into())
            }
            "**" if b < 0 => Ok(PyValue::Float((a as f64).powf(b as f64))),
            "**" => u32::try_from(b)
                .ok()
                .and_then(|e| a.checked_pow(e))
                .map(PyValue::Int)
                .ok_or_else(overflow),
            _ => Err(format!("unsupported operator {op}")),
        },
        (Some(a), Some(b)) => {
            let to_f = |n: Num| match n {
                Num::Int(i) => i as f64,
                Num::Float(f) => f,
            };
            let (a, b) = (to_f(a), to_f(b));
            match op {
                "+" => Ok(PyValue::Float(a + b)),
                "-" => Ok(PyValue::Float(a - b)),
                "*" => Ok(PyValue::Float(a * b)),
                "/" | "//" | "%" if b == 0.0 => Err("float division by zero".into()),
                "**" if a == 0.0 && b < 0.0 => {
                    Err("0.0 cannot be raised to a negative power (division by zero)".into())
                }
                "/" => Ok(PyValue::Float(a / b)),
                "//" => Ok(PyValue::Float((a / b).floor())),
                "%" => Ok(PyValue::Float(a - b * (a / b).floor())),
                "**" => Ok(PyValue::Float(a.powf(b))),
                _ => Err(format!("unsupported operator {op}")),
            }
        }
        _ => match (op, left, right) {
            ("+", PyValue::Str(a), PyValue::Str(b)) => Ok(PyValue::Str(a + &b)),
            ("+", PyValue::List(a), PyValue::List(b)) => Ok(PyValue::List([a, b].concat())),
            ("+", PyValue::Tuple(a), PyValue::Tuple(b)) => Ok(PyValue::Tuple([a, b].concat())),
            ("*", PyValue::Str(s), PyValue::Int(n)) | ("*", PyValue::Int(n), PyValue::Str(s)) => {
                repeat_str(&s, n)
            }
            (op, l, r) => Err(format!(
                "unsupported operand types for {op}: '{}' and '{}'",
                l.type_name(),
                r.type_name()
            )),
        },
    }
}

/// The longest string `str * int` may build: a reply holds no longer value, and a huge count
/// must be an error, not an allocation failure.
const MAX_REPEATED_STR_BYTES: usize = 1 << 20;

fn repeat_str(s: &str, count: i64) -> Result<PyValue, String> {
    let count = usize::try_from(count).unwrap_or(0);
    match s.len().checked_mul(count) {
        Some(bytes) if bytes <= MAX_REPEATED_STR_BYTES => Ok(PyValue::Str(s.repeat(count))),
        _ => Err(format!(
            "a repeated string of more than {MAX_REPEATED_STR_BYTES} bytes is too long"
        )),
    }
}

/// Source text of an expression in the layout of Python's `ast.unparse`.
fn unparse(expr: &Expr) -> String {
    match expr {
        Expr::Const(v) => v.source(),
        Expr::Ellipsis => "...".into(),
        Expr::Name(n) => n.clone(),
        Expr::Attribute(value, attr) => format!("{}.{attr}", unparse(value)),
        Expr::Call(call) => {
            let mut parts: Vec<String> = call.args.iter().map(unparse).collect();
            parts.extend(call.keywords.iter().map(|(k, v)| match k {
                Some(k) => format!("{k}={}", unparse(v)),
                None => format!("**{}", unparse(v)),
            }));
            format!("{}({})", unparse(&call.func), parts.join(", "))
        }
        Expr::List(items) => format!("[{}]", join_unparsed(items)),
        Expr::Tuple(items) if items.len() == 1 => format!("({},)", unparse(&items[0])),
        Expr::Tuple(items) => format!("({})", join_unparsed(items)),
        Expr::Set(items) => format!("{{{}}}", join_unparsed(items)),
        Expr::Dict(entries) => {
            let parts: Vec<String> = entries
                .iter()
                .map(|(k, v)| match k {
                    Some(k) => format!("{}: {}", unparse(k), unparse(v)),
                    None => format!("**{}", unparse(v)),
                })
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Expr::Unary("not", operand) => format!("not {}", unparse(operand)),
        Expr::Unary(op, operand) => format!("{op}{}", unparse(operand)),
        Expr::Binary(op, left, right) => {
            let wrap = |e: &Expr| match e {
                Expr::Binary(..) => format!("({})", unparse(e)),
                _ => unparse(e),
            };
            format!("{} {op} {}", wrap(left), wrap(right))
        }
        Expr::Subscript(value, index) => format!("{}[{}]", unparse(value), unparse(index)),
        Expr::Slice(lower, upper) => format!(
            "{}:{}",
            lower.as_deref().map(unparse).unwrap_or_default(),
            upper.as_deref().map(unparse).unwrap_or_default()
        ),
        Expr::Starred(inner) => format!("*{}", unparse(inner)),
    }
}

fn join_unparsed(items: &[Expr]) -> String {
    items.iter().map(unparse).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::super::{decode, one, PyValue};

    #[test]
    fn unary_operators_all_negate_like_bfcl() {
        assert_eq!(one("f(a=-3)").argument("a"), Some(&PyValue::Int(-3)));
        assert_eq!(one("f(a=+3)").argument("a"), Some(&PyValue::Int(-3)));
        assert_eq!(one("f(a=-True)").argument("a"), Some(&PyValue::Int(-1)));
        assert!(decode("f(a=-x)").is_err());
    }

    #[test]
    fn names_and_argless_calls_read_as_text() {
        let call = one("f(a=x, b=g(), c=np.array([1,2]), d=h(k=1))");
        assert_eq!(call.argument("a"), Some(&PyValue::Str("x".into())));
        assert_eq!(call.argument("b"), Some(&PyValue::Str("g()".into())));
        assert_eq!(
            call.argument("c"),
            Some(&PyValue::Str("np.array([1, 2])".into()))
        );
        let nested = PyValue::Dict(vec![(
            PyValue::Str("h".into()),
            PyValue::Dict(vec![(PyValue::Str("k".into()), PyValue::Int(1))]),
        )]);
        assert_eq!(call.argument("d"), Some(&nested));
    }
}
