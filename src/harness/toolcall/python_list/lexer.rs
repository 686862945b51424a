//! Python tokens for the decoder: names, numbers, string literals (escapes read, prefixes
//! checked), operators, and line breaks outside brackets, each with its byte span.

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
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
    pub(super) fn describe(&self) -> String {
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

/// A token and its byte span in the source.
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// Longest first, so that `**` wins over `*`.
const OPERATORS: [&str; 38] = [
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "(", ")", "[", "]", "{", "}", ",", ":",
    ".", ";", "=", "+", "-", "*",
];
const SINGLE_OPERATORS: &str = "/%~@<>|&^";

pub(super) fn tokenize(src: &str) -> Result<Vec<Token>, String> {
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

#[cfg(test)]
mod tests {
    use super::super::{decode, parse};

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
