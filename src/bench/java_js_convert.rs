//! bfcl-eval's type converters for Java and JavaScript (`java_type_converter.py`,
//! `js_type_converter.py`): an argument's source text and its declared type give the Python
//! value the AST checker then compares. Text that does not read as the type stays a string.
//!
//! The regular expressions are BFCL's, with Python's meaning kept: `$` also matches before a
//! final newline, `\s` also takes `\x1c`–`\x1f`, and `int()`/`float()` read text as Python does
//! (surrounding spaces, `_` between digits, `inf`/`nan`, any script's decimal digits).
//! `Err` stands for an exception in BFCL's code. Known gap: integers beyond 64 bits saturate.

use std::sync::LazyLock;

use regex::Regex;

use crate::harness::toolcall::python_list::PyValue;

type Converted = Result<PyValue, String>;

/// A regex written in Python's syntax, given Python's `$` and `\s`.
fn py_re(pattern: &str) -> Regex {
    let pattern = pattern
        .replace(r"\s", r"[\s\x1C-\x1F]")
        .replace('$', r"(?:\n?\z)");
    Regex::new(&pattern).expect("valid pattern")
}

macro_rules! re {
    ($name:ident, $pattern:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| py_re($pattern));
    };
}

re!(INTEGER, r"\A-?\d+$");
re!(JAVA_FLOAT, r"\A-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$");
re!(JAVA_DOUBLE, r"\A-?\d+(\.\d+)?([eE][+-]?\d+)?$");
re!(JAVA_LONG, r"\A-?\d+[lL]$");
re!(
    ARRAYLIST_AS_LIST,
    r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)"
);
re!(
    ARRAYLIST_ADDS,
    r"(?s)new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}"
);
re!(ADD_CALL, r"add\((.+?)\)");
re!(ARRAYLIST_EMPTY, r"new\s+ArrayList<\w*>\(\)");
re!(ARRAY, r"new\s+\w+\[\]\s*\{(.*?)\}");
re!(
    HASHMAP,
    r"(?s)new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}"
);
re!(PUT_CALL, r#"put\("(.*?)",\s*(.*?)\)"#);
re!(HASHMAP_EMPTY, r"new\s+HashMap<.*?>\s*\(\)");
re!(JS_FLOAT, r"\A-?\d+(\.\d+)?$");
re!(JS_BIGINT, r"\A-?\d+n$");
re!(
    JS_ARRAY_2D,
    r"\A(?:\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\))"
);
re!(JS_INNER_ARRAY, r"\[(.*?)\]");
re!(JS_ARRAY, r"\A(?:\[(.*?)\]|\bnew\s+Array\((.*?)\))");
re!(JS_DICT, r"\A\{(.*?)\}");
re!(DECIMAL_DIGIT, r"\A\p{Nd}\z");
re!(
    PY_FLOAT,
    r"\A[+-]?(?:(?:[0-9](?:_?[0-9])*)?\.[0-9](?:_?[0-9])*|[0-9](?:_?[0-9])*\.?)(?:[eE][+-]?[0-9](?:_?[0-9])*)?\z"
);
re!(PY_SPECIAL_FLOAT, r"(?i)\A[+-]?(?:inf|infinity|nan)\z");
re!(PY_INT, r"\A[+-]?[0-9](?:_?[0-9])*\z");

/// Python's `str.isspace`.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `str.strip()`.
pub fn py_strip(text: &str) -> &str {
    text.trim_matches(is_py_space)
}

/// Python's `text[1:-1]`.
fn inner(text: &str) -> String {
    let mut chars = text.chars();
    chars.next();
    chars.next_back();
    chars.collect()
}

/// Python's `text[:-1]`.
fn drop_last(text: &str) -> &str {
    match text.char_indices().next_back() {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// Decimal digits of any script as ASCII (Python's `int` and `float` accept them all); Unicode
/// lays each script's digits out as a run from 0 to 9.
fn ascii_digits(text: &str) -> String {
    let is_digit = |c: char| DECIMAL_DIGIT.is_match(c.encode_utf8(&mut [0; 4]));
    text.chars()
        .map(|c| {
            if c.is_ascii() || !is_digit(c) {
                return c;
            }
            let mut zero = c as u32;
            while zero > 0 && char::from_u32(zero - 1).is_some_and(is_digit) {
                zero -= 1;
            }
            char::from_digit((c as u32 - zero) % 10, 10).unwrap_or(c)
        })
        .collect()
}

/// Python's `int(text)`, base 10; `None` where it raises.
pub fn py_int(text: &str) -> Option<PyValue> {
    let text = ascii_digits(py_strip(text));
    if !PY_INT.is_match(&text) {
        return None;
    }
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    Some(PyValue::Int(digits.parse::<i64>().unwrap_or_else(|_| {
        if digits.starts_with('-') {
            i64::MIN
        } else {
            i64::MAX
        }
    })))
}

/// Python's `float(text)`; `None` where it raises.
pub fn py_float(text: &str) -> Option<PyValue> {
    let text = ascii_digits(py_strip(text));
    if PY_SPECIAL_FLOAT.is_match(&text) {
        let lower = text.to_ascii_lowercase();
        let negative = lower.starts_with('-');
        let f = if lower.ends_with("nan") {
            f64::NAN
        } else if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        return Some(PyValue::Float(f));
    }
    if !PY_FLOAT.is_match(&text) {
        return None;
    }
    let cleaned: String = text.chars().filter(|&c| c != '_').collect();
    cleaned.parse::<f64>().ok().map(PyValue::Float)
}

fn str_value(text: &str) -> PyValue {
    PyValue::Str(text.to_string())
}

/// Python's `dict[key] = value`: a repeated key keeps its place and takes the new value.
fn dict_set(entries: &mut Vec<(PyValue, PyValue)>, key: PyValue, value: PyValue) {
    match entries.iter_mut().find(|(k, _)| k.py_eq(&key)) {
        Some(entry) => entry.1 = value,
        None => entries.push((key, value)),
    }
}

/// `java_type_converter(value, expected_type, nested_type)`.
pub fn java(value: &str, expected: &str, nested: Option<&str>) -> Converted {
    match expected {
        "byte" | "short" | "integer" => Ok(if INTEGER.is_match(value) {
            py_int(value).ok_or_else(|| format!("int({value:?})"))?
        } else {
            str_value(value)
        }),
        "float" => Ok(if JAVA_FLOAT.is_match(value) {
            let number = strip_suffix_at_end(value, &['f', 'F']);
            py_float(&number).ok_or_else(|| format!("float({number:?})"))?
        } else {
            str_value(value)
        }),
        "double" => Ok(if JAVA_DOUBLE.is_match(value) {
            py_float(value).ok_or_else(|| format!("float({value:?})"))?
        } else {
            str_value(value)
        }),
        "long" => Ok(if JAVA_LONG.is_match(value) {
            let number = strip_suffix_at_end(value, &['l', 'L']);
            py_int(&number).ok_or_else(|| format!("int({number:?})"))?
        } else {
            str_value(value)
        }),
        "boolean" => Ok(match value {
            "true" => PyValue::Bool(true),
            "false" => PyValue::Bool(false),
            _ => str_value(value),
        }),
        // BFCL's char pattern `^\'.$\'` can never match, so a char stays as written.
        "char" | "String" | "any" => Ok(str_value(value)),
        "Array" => java_array(value, nested),
        "ArrayList" => java_arraylist(value, nested),
        "HashMap" => java_hashmap(value),
        "Set" | "Hashtable" | "Queue" | "Stack" => {
            Err(format!("{expected} conversion is not implemented"))
        }
        other => Err(format!("Unsupported type: {other}")),
    }
}

/// `re.sub(r"[xX]$", "", value)`: the suffix letter at the end or before a final newline.
fn strip_suffix_at_end(value: &str, letters: &[char]) -> String {
    if value.ends_with(letters) {
        return drop_last(value).to_string();
    }
    if let Some(head) = value.strip_suffix('\n') {
        if head.ends_with(letters) {
            return format!("{}\n", drop_last(head));
        }
    }
    value.to_string()
}

/// An element of an ArrayList: chars and Strings lose their quotes, others are converted.
fn java_list_element(text: &str, nested: Option<&str>) -> Converted {
    match nested {
        Some("char") | Some("String") => Ok(PyValue::Str(inner(text))),
        Some(kind) => java(text, kind, None),
        None => java_value(text),
    }
}

fn java_arraylist(input: &str, nested: Option<&str>) -> Converted {
    if let Some(found) = ARRAYLIST_AS_LIST.captures(input) {
        let items = found[1]
            .split(',')
            .map(|e| java_list_element(py_strip(e), nested))
            .collect::<Result<_, _>>()?;
        return Ok(PyValue::List(items));
    }
    if let Some(found) = ARRAYLIST_ADDS.captures(input) {
        let items = ADD_CALL
            .captures_iter(&found[1])
            .map(|add| java_list_element(py_strip(&add[1]), nested))
            .collect::<Result<_, _>>()?;
        return Ok(PyValue::List(items));
    }
    if ARRAYLIST_EMPTY.is_match(input) {
        return Ok(PyValue::List(Vec::new()));
    }
    Ok(str_value(input))
}

fn java_array(input: &str, nested: Option<&str>) -> Converted {
    let Some(found) = ARRAY.captures(input) else {
        return Ok(str_value(input));
    };
    let items = found[1]
        .split(',')
        .map(py_strip)
        .filter(|x| !x.is_empty())
        .map(|x| match nested {
            Some(kind) => java(x, kind, None),
            None => java_value(x),
        })
        .collect::<Result<_, _>>()?;
    Ok(PyValue::List(items))
}

fn java_hashmap(input: &str) -> Converted {
    if let Some(found) = HASHMAP.captures(input) {
        let mut entries = Vec::new();
        let puts = &found[1];
        if !py_strip(puts).is_empty() {
            for put in PUT_CALL.captures_iter(puts) {
                let value = java_value(py_strip(&put[2]))?;
                dict_set(&mut entries, str_value(&put[1]), value);
            }
        }
        return Ok(PyValue::Dict(entries));
    }
    if HASHMAP_EMPTY.is_match(input) {
        return Ok(PyValue::Dict(Vec::new()));
    }
    Ok(str_value(input))
}

/// `parse_java_value`: a value read without knowing its type.
fn java_value(text: &str) -> Converted {
    if text == "true" {
        return Ok(PyValue::Bool(true));
    }
    if text == "false" {
        return Ok(PyValue::Bool(false));
    }
    if text.starts_with('"') && text.ends_with('"') {
        return Ok(PyValue::Str(inner(text)));
    }
    if JAVA_LONG.is_match(text) {
        let number = drop_last(text);
        return py_int(number).ok_or_else(|| format!("int({number:?})"));
    }
    if JAVA_FLOAT.is_match(text) {
        let number = strip_suffix_at_end(text, &['f', 'F']);
        return py_float(&number).ok_or_else(|| format!("float({number:?})"));
    }
    Ok(py_int(text)
        .or_else(|| py_float(text))
        .unwrap_or_else(|| str_value(text)))
}

/// `js_type_converter(value, expected_type, nested_type)`.
pub fn javascript(value: &str, expected: &str, nested: Option<&str>) -> Converted {
    match expected {
        "String" => {
            let quoted = (value.starts_with('"') && value.ends_with('"'))
                || (value.starts_with('\'') && value.ends_with('\''));
            Ok(if quoted {
                PyValue::Str(inner(value))
            } else {
                str_value(value)
            })
        }
        "integer" => Ok(if INTEGER.is_match(value) {
            py_int(value).ok_or_else(|| format!("int({value:?})"))?
        } else {
            str_value(value)
        }),
        "float" => Ok(if JS_FLOAT.is_match(value) {
            py_float(value).ok_or_else(|| format!("float({value:?})"))?
        } else {
            str_value(value)
        }),
        "Bigint" => Ok(if JS_BIGINT.is_match(value) {
            let number = drop_last(value);
            py_int(number).ok_or_else(|| format!("int({number:?})"))?
        } else {
            str_value(value)
        }),
        "Boolean" => Ok(match value {
            "true" => PyValue::Bool(true),
            "false" => PyValue::Bool(false),
            _ => str_value(value),
        }),
        "dict" => Ok(js_dict(value)),
        "array" => Ok(js_array(value, nested)),
        "any" => Ok(str_value(value)),
        other => Err(format!("Unsupported type: {other}")),
    }
}

/// `parse_js_collection(code, "array", nested_type)`; BFCL returns the text on any exception.
fn js_array(code: &str, nested: Option<&str>) -> PyValue {
    let code = py_strip(code);
    js_array_or_raise(code, nested).unwrap_or_else(|_| str_value(code))
}

fn js_array_or_raise(code: &str, nested: Option<&str>) -> Converted {
    if let Some(found) = JS_ARRAY_2D.find(code) {
        let mut rows = Vec::new();
        for (index, row) in JS_INNER_ARRAY.captures_iter(found.as_str()).enumerate() {
            let mut row = py_strip(&row[1]);
            if index == 0 {
                row = row.strip_prefix('[').unwrap_or(row);
            }
            rows.push(PyValue::List(
                row.split(',').map(|e| js_value(py_strip(e))).collect(),
            ));
        }
        return Ok(PyValue::List(rows));
    }
    let Some(found) = JS_ARRAY.captures(code) else {
        return Ok(str_value(code));
    };
    let elements: Vec<&str> = match found.get(1).or_else(|| found.get(2)) {
        Some(group) => {
            let text = py_strip(group.as_str());
            if text.is_empty() {
                Vec::new()
            } else {
                text.split(',').collect()
            }
        }
        None => Vec::new(),
    };
    elements
        .into_iter()
        .map(|e| {
            let e = py_strip(e);
            match nested {
                Some(kind) if e.starts_with(['\'', '"']) => javascript(e, kind, Some("String")),
                Some(kind) => javascript(e, kind, None),
                None => Ok(js_value(e)),
            }
        })
        .collect::<Result<_, _>>()
        .map(PyValue::List)
}

/// `parse_js_collection(code, "dict")`.
fn js_dict(code: &str) -> PyValue {
    let code = py_strip(code);
    if code == "{}" {
        return PyValue::Dict(Vec::new());
    }
    let Some(found) = JS_DICT.captures(code) else {
        return str_value(code);
    };
    let mut entries = Vec::new();
    for (key, value) in js_dict_pairs(&found[1]) {
        let key = py_strip(&key).trim_matches(['\'', '"']).to_string();
        let value = py_strip(&value);
        let value = if value.starts_with('[') && value.ends_with(']') {
            js_array(value, None)
        } else if value.starts_with('{') && value.ends_with('}') {
            js_dict(value)
        } else {
            js_value(value.trim_matches(['\'', '"']))
        };
        dict_set(&mut entries, PyValue::Str(key), value);
    }
    PyValue::Dict(entries)
}

/// `re.findall(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)", content)`, which needs a lookahead the
/// regex crate lacks, so it is walked by hand. `content` has no newline (it came from `.*?`).
fn js_dict_pairs(content: &str) -> Vec<(String, String)> {
    let chars: Vec<char> = content.chars().collect();
    let text = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
    let len = chars.len();
    // `(?=[^,]+:)` at `s`: a colon after `s` with no comma from `s` up to it.
    let lookahead = |s: usize| {
        let comma = (s..len).find(|&i| chars[i] == ',').unwrap_or(len);
        (s + 1..comma).any(|k| chars[k] == ':')
    };
    let mut pairs = Vec::new();
    let mut at = 0;
    while at < len {
        if chars[at] == ':' {
            at += 1;
            continue;
        }
        // `[^:]+` then `:`: only the first colon can follow.
        let Some(colon) = (at..len).find(|&i| chars[i] == ':') else {
            break;
        };
        let mut start = colon + 1;
        while start < len && is_py_space(chars[start]) {
            start += 1;
        }
        // `(.*?)` grows until `,\s*(?=…)` or the end follows; backing off `\s*` never helps.
        let mut end = None;
        for e in start..len {
            if chars[e] != ',' {
                continue;
            }
            let mut spaces_end = e + 1;
            while spaces_end < len && is_py_space(chars[spaces_end]) {
                spaces_end += 1;
            }
            if let Some(s) = (e + 1..=spaces_end).rev().find(|&s| lookahead(s)) {
                end = Some((e, s));
                break;
            }
        }
        let (value_end, next) = end.unwrap_or((len, len));
        pairs.push((text(at, colon), text(start, value_end)));
        at = next;
    }
    pairs
}

/// `parse_js_value`: a value read without knowing its type.
fn js_value(text: &str) -> PyValue {
    let text = py_strip(text);
    match text {
        "true" => PyValue::Bool(true),
        "false" => PyValue::Bool(false),
        _ if (text.starts_with('"') && text.ends_with('"'))
            || (text.starts_with('\'') && text.ends_with('\'')) =>
        {
            PyValue::Str(inner(text))
        }
        _ => py_int(text)
            .or_else(|| py_float(text))
            .unwrap_or_else(|| str_value(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> PyValue {
        PyValue::Str(text.into())
    }

    #[test]
    fn java_scalars_follow_bfcl_patterns() {
        assert_eq!(java("-12", "integer", None), Ok(PyValue::Int(-12)));
        assert_eq!(java("12L", "integer", None), Ok(s("12L")));
        assert_eq!(java("12L", "long", None), Ok(PyValue::Int(12)));
        assert_eq!(java("3.5f", "float", None), Ok(PyValue::Float(3.5)));
        assert_eq!(java("3.5", "float", None), Ok(s("3.5")));
        assert_eq!(java("true", "boolean", None), Ok(PyValue::Bool(true)));
        assert_eq!(java("'a'", "char", None), Ok(s("'a'")));
        assert!(java("x", "Set", None).is_err());
    }

    #[test]
    fn java_collections() {
        assert_eq!(
            java(r#"new String[]{"a","b"}"#, "Array", Some("String")),
            Ok(PyValue::List(vec![s("\"a\""), s("\"b\"")]))
        );
        assert_eq!(
            java(
                r#"new ArrayList<>(Arrays.asList("a", "b"))"#,
                "ArrayList",
                Some("String")
            ),
            Ok(PyValue::List(vec![s("a"), s("b")]))
        );
        assert_eq!(
            java(
                r#"new HashMap<String, Object>() {{ put("k", 1); put("j", "v"); }}"#,
                "HashMap",
                None
            ),
            Ok(PyValue::Dict(vec![
                (s("k"), PyValue::Int(1)),
                (s("j"), s("v"))
            ]))
        );
        assert_eq!(
            java("new HashMap<>()", "HashMap", None),
            Ok(PyValue::Dict(vec![]))
        );
    }

    #[test]
    fn javascript_collections() {
        assert_eq!(
            javascript("[1, 'two', true]", "array", None),
            Ok(PyValue::List(vec![
                PyValue::Int(1),
                s("two"),
                PyValue::Bool(true)
            ]))
        );
        assert_eq!(
            javascript(" [ [ 1, 2 ], [ 3,   4]]", "array", Some("array")),
            Ok(PyValue::List(vec![
                PyValue::List(vec![PyValue::Int(1), PyValue::Int(2)]),
                PyValue::List(vec![PyValue::Int(3), PyValue::Int(4)]),
            ]))
        );
        assert_eq!(
            javascript(r#"{"a": x, "b": ["m"], c: 'v, w', d: 2}"#, "dict", None),
            Ok(PyValue::Dict(vec![
                (s("a"), s("x")),
                (s("b"), PyValue::List(vec![s("m")])),
                (s("c"), s("v, w")),
                (s("d"), PyValue::Int(2)),
            ]))
        );
    }

    #[test]
    fn python_number_reading() {
        assert_eq!(py_int(" 1_000 "), Some(PyValue::Int(1000)));
        assert_eq!(py_int("1__0"), None);
        assert_eq!(py_int("\u{0661}\u{0662}"), Some(PyValue::Int(12)));
        assert_eq!(py_float("1e3"), Some(PyValue::Float(1000.0)));
        assert_eq!(py_float(".5"), Some(PyValue::Float(0.5)));
        assert_eq!(
            py_float("-Infinity"),
            Some(PyValue::Float(f64::NEG_INFINITY))
        );
        assert_eq!(py_float("1e"), None);
    }
}
