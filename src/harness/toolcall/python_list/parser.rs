//! The expression grammar the decoder accepts, a subset of Python's: literals, names,
//! attributes, calls, subscripts, containers and arithmetic, read from tokens into a tree.

use std::ops::Range;

use super::lexer::{Tok, Token};
use super::values::PyValue;

#[derive(Debug, Clone)]
pub(super) enum Expr {
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
pub(super) struct CallExpr {
    pub(super) func: Expr,
    pub(super) args: Vec<Expr>,
    /// `None` name: a `**mapping` argument.
    pub(super) keywords: Vec<(Option<String>, Expr)>,
    /// Byte span of the call in the source, from its name to its closing parenthesis.
    pub(super) span: Range<usize>,
}

impl Expr {
    /// How errors name the kind of expression, e.g. "a call".
    pub(super) fn kind(&self) -> &'static str {
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

/// A recursive-descent parser over a token list that ends with `Tok::End`.
pub(super) struct Parser {
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
    pub(super) fn new(tokens: Vec<Token>) -> Parser {
        Parser { tokens, pos: 0 }
    }

    pub(super) fn peek(&self) -> &Tok {
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

    pub(super) fn skip_newlines(&mut self) {
        while matches!(self.peek(), Tok::Newline) {
            self.advance();
        }
    }

    /// A top-level expression: a bare tuple `a, b` is allowed, as in Python's eval mode.
    pub(super) fn expression(&mut self) -> Result<Expr, String> {
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
