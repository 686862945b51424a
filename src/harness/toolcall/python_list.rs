//! Python-style call lists, `[f(a=1), g(b="x")]`, read the way BFCL's prompting decoder reads
//! them: only keyword arguments count, literals keep their Python type, a bare name is read as
//! its own text and a nested call without keywords as its source text.
//!
//! Known gaps against CPython's parser: byte strings, f-strings, complex numbers, integers
//! beyond 64 bits, `\N{...}` escapes, lone surrogates, and operators other than arithmetic
//! (comparisons, `and`/`or`, lambdas, comprehensions) are rejected as decode errors.

use std::fmt::Write as _;
use std::ops::Range;

use serde_json::{Map, Number, Value};

use super::{ParseOutcome, ParsedCall};

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

    fn as_number(&self) -> Option<Num> {
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

#[derive(Clone, Copy)]
enum Num {
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

// ---------------------------------------------------------------------------------------------
// Entry points

/// Decodes a model reply as BFCL's default prompting decoder does: trims backticks, newlines
/// and spaces from both ends, adds the outer brackets when missing, then reads a list of calls.
pub fn decode(text: &str) -> Result<Vec<DecodedCall>, String> {
    let trimmed = text.trim_matches(|c| c == '`' || c == '\n' || c == ' ');
    let mut wrapped = String::with_capacity(trimmed.len() + 2);
    if !trimmed.starts_with('[') {
        wrapped.push('[');
    }
    wrapped.push_str(trimmed);
    if !trimmed.ends_with(']') {
        wrapped.push(']');
    }
    // BFCL then trims whitespace and single quotes; a string that starts with `[` keeps its start.
    let source = wrapped.trim().trim_matches('\'');
    decode_list(source).map(|calls| calls.into_iter().map(|(call, _)| call).collect())
}

/// Finds a Python call list in free text for the harness. The first bracketed span that reads
/// as a non-empty list of calls wins; its calls are returned and the rest is prose.
pub fn parse(text: &str) -> ParseOutcome {
    let mut outcome = ParseOutcome::default();
    for (start, _) in text.match_indices('[') {
        let Some(end) = matching_bracket(text, start) else {
            continue;
        };
        let candidate = &text[start..end];
        match decode_list(candidate) {
            Ok(calls) if !calls.is_empty() => {
                outcome.calls = calls
                    .into_iter()
                    .map(|(call, span)| ParsedCall {
                        name: call.name,
                        arguments: call
                            .arguments
                            .into_iter()
                            .map(|(k, v)| (k, v.to_json()))
                            .collect(),
                        raw: candidate[span].to_string(),
                    })
                    .collect();
                let prose = format!("{}{}", &text[..start], &text[end..]);
                outcome.prose = prose.trim().to_string();
                return outcome;
            }
            Ok(_) => {}
            Err(err) => {
                if looks_like_call_list(candidate) {
                    outcome
                        .problems
                        .push(format!("unreadable call list {candidate:?}: {err}"));
                }
            }
        }
    }
    outcome.prose = text.trim().to_string();
    outcome
}

fn looks_like_call_list(candidate: &str) -> bool {
    let inner = candidate[1..].trim_start();
    let name_len = inner
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(inner.len());
    name_len > 0 && inner[name_len..].trim_start().starts_with('(')
}

/// End (exclusive) of the bracket group opening at `start`, skipping brackets inside strings.
fn matching_bracket(text: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text[start..].char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return (c == ']').then_some(start + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Reads `source` as one Python expression that must be a list of calls.
fn decode_list(source: &str) -> Result<Vec<(DecodedCall, Range<usize>)>, String> {
    let tokens = tokenize(source)?;
    let mut parser = Parser { tokens, pos: 0 };
    let expr = parser.expression()?;
    parser.skip_newlines();
    if !matches!(parser.peek(), Tok::End) {
        return Err(format!(
            "invalid syntax: unexpected {} after the expression",
            parser.peek().describe()
        ));
    }
    let items = match expr {
        Expr::List(items) | Expr::Tuple(items) => items,
        other => return Err(format!("expected a list of calls, got {}", other.kind())),
    };
    items
        .into_iter()
        .map(|item| match item {
            Expr::Call(call) => {
                let span = call.span.clone();
                resolve_call(*call).map(|c| (c, span))
            }
            other => Err(format!("list item is {}, not a call", other.kind())),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Int(i64),
    Float(f64),
    Str(String),
    Op(&'static str),
    /// A line break outside brackets: ends the expression in Python's eval mode.
    Newline,
    End,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Name(n) => format!("name {n:?}"),
            Tok::Int(i) => format!("number {i}"),
            Tok::Float(f) => format!("number {f}"),
            Tok::Str(_) => "string".into(),
            Tok::Op(op) => format!("{op:?}"),
            Tok::Newline => "line break".into(),
            Tok::End => "end of input".into(),
        }
    }
}

struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

/// Longest first, so that `**` wins over `*`.
const OPERATORS: [&str; 38] = [
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "(", ")", "[", "]", "{", "}", ",", ":",
    ".", ";", "=", "+", "-", "*",
];
const SINGLE_OPERATORS: &str = "/%~@<>|&^";

fn tokenize(src: &str) -> Result<Vec<Token>, String> {
    if src.contains('\0') {
        return Err("source cannot contain null bytes".into());
    }
    let mut tokens = Vec::new();
    let mut depth = 0usize;
    let bytes = src.as_bytes();
    let mut i = 0;
    while i < src.len() {
        let c = src[i..].chars().next().unwrap_or(' ');
        let start = i;
        if c == '\n' || c == '\r' {
            if depth == 0
                && !matches!(
                    tokens.last(),
                    None | Some(Token {
                        tok: Tok::Newline,
                        ..
                    })
                )
            {
                tokens.push(Token {
                    tok: Tok::Newline,
                    start,
                    end: i + 1,
                });
            }
            i += 1;
            continue;
        }
        if c == ' ' || c == '\t' || c == '\x0c' {
            i += 1;
            continue;
        }
        if c == '\\' {
            let rest = &src[i + 1..];
            if let Some(after) = rest
                .strip_prefix("\r\n")
                .or_else(|| rest.strip_prefix('\n'))
            {
                i = src.len() - after.len();
                continue;
            }
            return Err("unexpected character after line continuation character".into());
        }
        if c == '#' {
            i += src[i..].find('\n').unwrap_or(src.len() - i);
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (tok, len) = number(&src[i..])?;
            i += len;
            tokens.push(Token { tok, start, end: i });
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let len = src[i..]
                .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                .unwrap_or(src.len() - i);
            let word = &src[i..i + len];
            let next = src[i + len..].chars().next();
            if matches!(next, Some('\'' | '"')) && is_string_prefix(word) {
                let (value, str_len) = string_literal(&src[i..], word)?;
                i += str_len;
                tokens.push(Token {
                    tok: Tok::Str(value),
                    start,
                    end: i,
                });
            } else {
                i += len;
                tokens.push(Token {
                    tok: Tok::Name(word.to_string()),
                    start,
                    end: i,
                });
            }
            continue;
        }
        if c == '\'' || c == '"' {
            let (value, len) = string_literal(&src[i..], "")?;
            i += len;
            tokens.push(Token {
                tok: Tok::Str(value),
                start,
                end: i,
            });
            continue;
        }
        let op = OPERATORS
            .iter()
            .copied()
            .find(|op| src[i..].starts_with(op))
            .or_else(|| {
                SINGLE_OPERATORS
                    .find(c)
                    .map(|at| &SINGLE_OPERATORS[at..at + 1])
            });
        let Some(op) = op else {
            return Err(format!("invalid character {c:?} at byte {i}"));
        };
        match op {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("unmatched {op:?}"))?
            }
            _ => {}
        }
        i += op.len();
        tokens.push(Token {
            tok: Tok::Op(op),
            start,
            end: i,
        });
    }
    if depth != 0 {
        return Err("unexpected end of input: a bracket was never closed".into());
    }
    tokens.push(Token {
        tok: Tok::End,
        start: src.len(),
        end: src.len(),
    });
    Ok(tokens)
}

fn is_string_prefix(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "r" | "u" | "b" | "br" | "rb" | "f" | "fr" | "rf"
    )
}

/// Reads a number token; returns it and its byte length.
fn number(src: &str) -> Result<(Tok, usize), String> {
    let bytes = src.as_bytes();
    let radix = match (bytes.first(), bytes.get(1).map(u8::to_ascii_lowercase)) {
        (Some(b'0'), Some(b'x')) => 16,
        (Some(b'0'), Some(b'o')) => 8,
        (Some(b'0'), Some(b'b')) => 2,
        _ => 10,
    };
    if radix != 10 {
        let len = 2 + src[2..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(src.len() - 2);
        let digits = src[2..len].replace('_', "");
        let value = i64::from_str_radix(&digits, radix)
            .map_err(|_| format!("invalid or too large number {:?}", &src[..len]))?;
        return Ok((Tok::Int(value), len));
    }
    let mut len = 0;
    let mut is_float = false;
    let digits_at = |from: usize| {
        src[from..]
            .find(|c: char| !(c.is_ascii_digit() || c == '_'))
            .map_or(src.len(), |n| from + n)
    };
    len = digits_at(len);
    if src[len..].starts_with('.') {
        is_float = true;
        len = digits_at(len + 1);
    }
    if matches!(bytes.get(len), Some(b'e' | b'E')) {
        let mut exp = len + 1;
        if matches!(bytes.get(exp), Some(b'+' | b'-')) {
            exp += 1;
        }
        if bytes.get(exp).is_some_and(u8::is_ascii_digit) {
            is_float = true;
            len = digits_at(exp);
        }
    }
    let text = &src[..len];
    if text.ends_with('_') || text.contains("__") {
        return Err(format!("invalid decimal literal {text:?}"));
    }
    if let Some(next) = src[len..].chars().next() {
        if next == 'j' || next == 'J' {
            return Err("complex numbers are not supported".into());
        }
        if next.is_alphanumeric() || next == '_' {
            // Up to the end of `next`, which may be more than one byte.
            return Err(format!(
                "invalid decimal literal {:?}",
                &src[..len + next.len_utf8()]
            ));
        }
    }
    let clean = text.replace('_', "");
    if is_float {
        let value: f64 = clean
            .parse()
            .map_err(|_| format!("invalid number {text:?}"))?;
        Ok((Tok::Float(value), len))
    } else {
        if clean.len() > 1 && clean.starts_with('0') && clean.bytes().any(|b| b != b'0') {
            return Err("leading zeros in decimal integer literals are not permitted".into());
        }
        let value: i64 = clean
            .parse()
            .map_err(|_| format!("integer {text} is too large"))?;
        Ok((Tok::Int(value), len))
    }
}

/// Reads a string literal (after its prefix) and returns its value and total byte length.
fn string_literal(src: &str, prefix: &str) -> Result<(String, usize), String> {
    let lower = prefix.to_ascii_lowercase();
    if lower.contains('b') {
        return Err("byte strings are not supported".into());
    }
    if lower.contains('f') {
        return Err("f-strings are not supported".into());
    }
    let raw = lower.contains('r');
    let body_start = prefix.len();
    let quote = &src[body_start..body_start + 1];
    let triple: String = quote.repeat(3);
    let delimiter = if src[body_start..].starts_with(&triple) {
        triple.as_str()
    } else {
        quote
    };
    let mut i = body_start + delimiter.len();
    let mut value = String::new();
    loop {
        let rest = &src[i..];
        if rest.starts_with(delimiter) {
            return Ok((value, i + delimiter.len()));
        }
        let Some(c) = rest.chars().next() else {
            return Err("unterminated string literal".into());
        };
        if (c == '\n' || c == '\r') && delimiter.len() == 1 {
            return Err("unterminated string literal".into());
        }
        if c != '\\' {
            value.push(c);
            i += c.len_utf8();
            continue;
        }
        let Some(next) = rest[1..].chars().next() else {
            return Err("unterminated string literal".into());
        };
        if raw {
            // A raw string keeps the backslash, which still shields the next character.
            value.push('\\');
            value.push(next);
            i += 1 + next.len_utf8();
            continue;
        }
        i += 1 + next.len_utf8();
        match next {
            '\n' => {}
            '\r' => {
                if src[i..].starts_with('\n') {
                    i += 1;
                }
            }
            '\\' | '\'' | '"' => value.push(next),
            'n' => value.push('\n'),
            't' => value.push('\t'),
            'r' => value.push('\r'),
            'a' => value.push('\x07'),
            'b' => value.push('\x08'),
            'f' => value.push('\x0c'),
            'v' => value.push('\x0b'),
            '0'..='7' => {
                let extra = src[i..]
                    .chars()
                    .take(2)
                    .take_while(|c| ('0'..='7').contains(c))
                    .count();
                let code = u32::from_str_radix(&src[i - 1..i + extra], 8).unwrap_or(0);
                i += extra;
                value.push(char::from_u32(code).ok_or("invalid octal escape")?);
            }
            'x' | 'u' | 'U' => {
                let width = match next {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex = src.get(i..i + width).unwrap_or("");
                if hex.len() != width || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                    return Err(format!("truncated \\{next} escape"));
                }
                let code = u32::from_str_radix(hex, 16).unwrap_or(u32::MAX);
                value.push(
                    char::from_u32(code)
                        .ok_or_else(|| format!("escape \\{next}{hex} is not a character"))?,
                );
                i += width;
            }
            'N' => return Err("\\N{...} escapes are not supported".into()),
            other => {
                // Unknown escapes keep their backslash in Python.
                value.push('\\');
                value.push(other);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Syntax tree

#[derive(Debug, Clone)]
enum Expr {
    Const(PyValue),
    Ellipsis,
    Name(String),
    Attribute(Box<Expr>, String),
    Call(Box<CallExpr>),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Set(Vec<Expr>),
    /// `None` key: a `**mapping` entry.
    Dict(Vec<(Option<Expr>, Expr)>),
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Subscript(Box<Expr>, Box<Expr>),
    Slice(Option<Box<Expr>>, Option<Box<Expr>>),
    Starred(Box<Expr>),
}

#[derive(Debug, Clone)]
struct CallExpr {
    func: Expr,
    args: Vec<Expr>,
    /// `None` name: a `**mapping` argument.
    keywords: Vec<(Option<String>, Expr)>,
    span: Range<usize>,
}

impl Expr {
    fn kind(&self) -> &'static str {
        match self {
            Expr::Const(_) => "a constant",
            Expr::Ellipsis => "an ellipsis",
            Expr::Name(_) => "a name",
            Expr::Attribute(..) => "an attribute",
            Expr::Call(_) => "a call",
            Expr::List(_) => "a list",
            Expr::Tuple(_) => "a tuple",
            Expr::Set(_) => "a set",
            Expr::Dict(_) => "a dict",
            Expr::Unary(..) => "a unary operation",
            Expr::Binary(..) => "a binary operation",
            Expr::Subscript(..) => "a subscript",
            Expr::Slice(..) => "a slice",
            Expr::Starred(_) => "a starred expression",
        }
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

/// Binary operators by binding strength, weakest first (Python's grammar order).
const BINARY_LEVELS: [&[&str]; 6] = [
    &["|"],
    &["^"],
    &["&"],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "//", "%", "@"],
];

impl Parser {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }

    fn advance(&mut self) -> &Token {
        let token = &self.tokens[self.pos];
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        token
    }

    fn at_op(&self, op: &str) -> bool {
        matches!(self.peek(), Tok::Op(o) if *o == op)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if self.at_op(op) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect_op(&mut self, op: &str) -> Result<(), String> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(format!(
                "invalid syntax: expected {op:?}, found {}",
                self.peek().describe()
            ))
        }
    }

    fn skip_newlines(&mut self) {
        while matches!(self.peek(), Tok::Newline) {
            self.advance();
        }
    }

    /// A top-level expression: a bare tuple `a, b` is allowed, as in Python's eval mode.
    fn expression(&mut self) -> Result<Expr, String> {
        let first = self.single()?;
        if !self.at_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.ends_sequence() {
                break;
            }
            items.push(self.single()?);
        }
        Ok(Expr::Tuple(items))
    }

    fn ends_sequence(&self) -> bool {
        matches!(self.peek(), Tok::End | Tok::Newline)
            || self.at_op(")")
            || self.at_op("]")
            || self.at_op("}")
    }

    /// One expression without a top-level comma.
    fn single(&mut self) -> Result<Expr, String> {
        if let Tok::Name(word) = self.peek() {
            if matches!(
                word.as_str(),
                "lambda" | "not" | "await" | "yield" | "if" | "else" | "for" | "in" | "is"
            ) {
                if word == "not" {
                    self.advance();
                    let operand = self.single()?;
                    return Ok(Expr::Unary("not", Box::new(operand)));
                }
                return Err(format!("unsupported expression starting with {word:?}"));
            }
        }
        let expr = self.binary(0)?;
        match self.peek() {
            Tok::Name(w) if matches!(w.as_str(), "and" | "or" | "if" | "in" | "is" | "not") => {
                Err(format!("unsupported operator {w:?}"))
            }
            Tok::Op(op) if matches!(*op, "<" | ">" | "<=" | ">=" | "==" | "!=" | ":=") => {
                Err(format!("unsupported operator {op:?}"))
            }
            _ => Ok(expr),
        }
    }

    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        if level == BINARY_LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        loop {
            let op = match self.peek() {
                Tok::Op(op) if BINARY_LEVELS[level].contains(op) => *op,
                _ => return Ok(left),
            };
            self.advance();
            let right = self.binary(level + 1)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        for op in ["-", "+", "~"] {
            if self.eat_op(op) {
                let operand = self.unary()?;
                return Ok(Expr::Unary(op, Box::new(operand)));
            }
        }
        self.power()
    }

    fn power(&mut self) -> Result<Expr, String> {
        let base = self.postfix()?;
        if self.eat_op("**") {
            let exponent = self.unary()?;
            return Ok(Expr::Binary("**", Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<Expr, String> {
        let start = self.tokens[self.pos].start;
        let mut expr = self.atom()?;
        loop {
            if self.eat_op(".") {
                match self.advance().tok.clone() {
                    Tok::Name(name) => expr = Expr::Attribute(Box::new(expr), name),
                    other => {
                        return Err(format!(
                            "invalid syntax: expected a name after '.', found {}",
                            other.describe()
                        ))
                    }
                }
            } else if self.eat_op("(") {
                let (args, keywords) = self.call_arguments()?;
                let end = self.tokens[self.pos - 1].end;
                expr = Expr::Call(Box::new(CallExpr {
                    func: expr,
                    args,
                    keywords,
                    span: start..end,
                }));
            } else if self.eat_op("[") {
                let index = self.subscript()?;
                self.expect_op("]")?;
                expr = Expr::Subscript(Box::new(expr), Box::new(index));
            } else {
                return Ok(expr);
            }
        }
    }

    fn subscript(&mut self) -> Result<Expr, String> {
        let lower = if self.at_op(":") {
            None
        } else {
            let e = self.expression()?;
            if !self.at_op(":") {
                return Ok(e);
            }
            Some(Box::new(e))
        };
        self.expect_op(":")?;
        let upper = if self.at_op("]") {
            None
        } else {
            Some(Box::new(self.single()?))
        };
        Ok(Expr::Slice(lower, upper))
    }

    #[allow(clippy::type_complexity)]
    fn call_arguments(&mut self) -> Result<(Vec<Expr>, Vec<(Option<String>, Expr)>), String> {
        let mut args = Vec::new();
        let mut keywords: Vec<(Option<String>, Expr)> = Vec::new();
        while !self.eat_op(")") {
            if self.eat_op("**") {
                keywords.push((None, self.single()?));
            } else if self.eat_op("*") {
                args.push(Expr::Starred(Box::new(self.single()?)));
            } else if let (Tok::Name(name), Tok::Op("=")) =
                (self.peek().clone(), &self.tokens[self.pos + 1].tok)
            {
                self.advance();
                self.advance();
                keywords.push((Some(name), self.single()?));
            } else {
                if !keywords.is_empty() {
                    return Err("positional argument follows keyword argument".into());
                }
                args.push(self.single()?);
            }
            if !self.eat_op(",") {
                self.expect_op(")")?;
                break;
            }
        }
        Ok((args, keywords))
    }

    fn atom(&mut self) -> Result<Expr, String> {
        let token = self.advance().tok.clone();
        match token {
            Tok::Int(i) => Ok(Expr::Const(PyValue::Int(i))),
            Tok::Float(f) => Ok(Expr::Const(PyValue::Float(f))),
            Tok::Str(mut s) => {
                // Adjacent string literals are one constant.
                while let Tok::Str(next) = self.peek() {
                    s.push_str(next);
                    self.advance();
                }
                Ok(Expr::Const(PyValue::Str(s)))
            }
            Tok::Name(name) => Ok(match name.as_str() {
                "True" => Expr::Const(PyValue::Bool(true)),
                "False" => Expr::Const(PyValue::Bool(false)),
                "None" => Expr::Const(PyValue::None),
                _ => Expr::Name(name),
            }),
            Tok::Op("...") => Ok(Expr::Ellipsis),
            Tok::Op("(") => {
                if self.eat_op(")") {
                    return Ok(Expr::Tuple(Vec::new()));
                }
                let first = self.single()?;
                if self.eat_op(")") {
                    return Ok(first);
                }
                let mut items = vec![first];
                while self.eat_op(",") {
                    if self.at_op(")") {
                        break;
                    }
                    items.push(self.single()?);
                }
                self.expect_op(")")?;
                Ok(Expr::Tuple(items))
            }
            Tok::Op("[") => {
                let items = self.sequence("]")?;
                Ok(Expr::List(items))
            }
            Tok::Op("{") => self.brace(),
            other => Err(format!("invalid syntax: unexpected {}", other.describe())),
        }
    }

    fn sequence(&mut self, close: &str) -> Result<Vec<Expr>, String> {
        let mut items = Vec::new();
        while !self.eat_op(close) {
            if self.eat_op("*") {
                items.push(Expr::Starred(Box::new(self.single()?)));
            } else {
                items.push(self.single()?);
            }
            if matches!(self.peek(), Tok::Name(w) if w == "for") {
                return Err("comprehensions are not supported".into());
            }
            if !self.eat_op(",") {
                self.expect_op(close)?;
                break;
            }
        }
        Ok(items)
    }

    fn brace(&mut self) -> Result<Expr, String> {
        if self.eat_op("}") {
            return Ok(Expr::Dict(Vec::new()));
        }
        let mut entries = Vec::new();
        let mut set_items = Vec::new();
        loop {
            if self.eat_op("**") {
                entries.push((None, self.binary(0)?));
            } else {
                let key = self.single()?;
                if self.eat_op(":") {
                    entries.push((Some(key), self.single()?));
                } else {
                    set_items.push(key);
                }
            }
            if !entries.is_empty() && !set_items.is_empty() {
                return Err("invalid syntax: mixed dict and set entries".into());
            }
            if matches!(self.peek(), Tok::Name(w) if w == "for") {
                return Err("comprehensions are not supported".into());
            }
            if !self.eat_op(",") {
                self.expect_op("}")?;
                break;
            }
            if self.eat_op("}") {
                break;
            }
        }
        Ok(if set_items.is_empty() {
            Expr::Dict(entries)
        } else {
            Expr::Set(set_items)
        })
    }
}

// ---------------------------------------------------------------------------------------------
// From syntax to values, by BFCL's rules

fn resolve_call(call: CallExpr) -> Result<DecodedCall, String> {
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
    use super::*;

    fn one(text: &str) -> DecodedCall {
        let mut calls = decode(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(calls.len(), 1, "{text}");
        calls.remove(0)
    }

    #[test]
    fn keeps_python_types_apart() {
        let call = one("[f(a=1, b=1.0, c=True, d='x', e=[1], g=(1,), h={'k': None})]");
        let kinds: Vec<_> = call.arguments.iter().map(|(_, v)| v.type_name()).collect();
        assert_eq!(
            kinds,
            ["int", "float", "bool", "str", "list", "tuple", "dict"]
        );
    }

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

    #[test]
    fn float_repr_matches_python() {
        assert_eq!(py_float_repr(1.0), "1.0");
        assert_eq!(py_float_repr(1e-5), "1e-05");
        assert_eq!(py_float_repr(0.0001), "0.0001");
        assert_eq!(py_float_repr(1e16), "1e+16");
        assert_eq!(py_float_repr(123456789012345.6), "123456789012345.6");
        assert_eq!(py_float_repr(-2.5e-7), "-2.5e-07");
    }

    /// Found by fuzzing: a number followed by a multi-byte letter was cut inside the letter
    /// when the error quoted it.
    #[test]
    fn a_number_followed_by_a_multi_byte_letter_is_refused_not_a_panic() {
        assert!(decode("7\u{062b}[: ").is_err());
        let error = decode("[f(x=7\u{062b})]").unwrap_err();
        assert!(error.contains("7\u{062b}"), "{error}");
        let _ = parse("7\u{062b}[: ");
    }
}
