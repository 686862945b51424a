//! Python-style call lists, `[f(a=1), g(b="x")]`, read the way BFCL's prompting decoder reads
//! them: only keyword arguments count, literals keep their Python type, a bare name is read as
//! its own text and a nested call without keywords as its source text.
//!
//! Known gaps against CPython's parser: byte strings, f-strings, complex numbers, integers
//! beyond 64 bits, `\N{...}` escapes, lone surrogates, and operators other than arithmetic
//! (comparisons, `and`/`or`, lambdas, comprehensions) are rejected as decode errors.
//!
//! [`decode`] reads a reply as BFCL does and [`parse`] finds a call list in free text; both run
//! the same steps: `lexer` turns the text into tokens, `parser` builds the expression, `resolve`
//! turns it into calls, and `values` holds what comes out.

use std::ops::Range;

use super::{ParseOutcome, ParsedCall};

mod lexer;
mod parser;
mod resolve;
mod values;

pub use values::{py_float_repr, py_str_repr, render_calls, DecodedCall, PyValue};

use lexer::{tokenize, Tok};
use parser::{Expr, Parser};
use resolve::resolve_call;

/// The first step of BFCL's prompting decoders, in every language: backticks, newlines and
/// spaces trimmed from both ends, then `[` and `]` added where missing.
pub fn bracketed(reply: &str) -> String {
    let trimmed = reply.trim_matches(|c| c == '`' || c == '\n' || c == ' ');
    let mut wrapped = String::with_capacity(trimmed.len() + 2);
    if !trimmed.starts_with('[') {
        wrapped.push('[');
    }
    wrapped.push_str(trimmed);
    if !trimmed.ends_with(']') {
        wrapped.push(']');
    }
    wrapped
}

/// Decodes a model reply as BFCL's default prompting decoder does: trims backticks, newlines
/// and spaces from both ends, adds the outer brackets when missing, then reads a list of calls.
pub fn decode(text: &str) -> Result<Vec<DecodedCall>, String> {
    let wrapped = bracketed(text);
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
    let mut parser = Parser::new(tokens);
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

/// The one call `text` decodes to, for the tests of this folder's modules.
#[cfg(test)]
fn one(text: &str) -> DecodedCall {
    let mut calls = decode(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(calls.len(), 1, "{text}");
    calls.remove(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_python_types_apart() {
        let call = one("[f(a=1, b=1.0, c=True, d='x', e=[1], g=(1,), h={'k': None})]");
        let kinds: Vec<_> = call.arguments.iter().map(|(_, v)| v.type_name()).collect();
        assert_eq!(
            kinds,
            ["int", "float", "bool", "str", "list", "tuple", "dict"]
        );
    }
}
