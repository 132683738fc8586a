//! The text form of index expressions (MLIR-like) and a small reusable parser.
//!
//! ```text
//! expr   = term (("+" | "-") term)*
//! term   = "-" term | factor (("*" factor) | ("floordiv" | "ceildiv" | "mod") integer)*
//! factor = integer [factor]          (juxtaposition multiplies: "2d0", "4(d1 + 1)")
//!        | "d" digits | "s" digits | "(" expr ")" | "-" factor
//! ```
//!
//! `*`, `floordiv`, `ceildiv` and `mod` bind tighter than `+`/`-` and associate to the left, as in
//! MLIR; a leading minus negates the whole term (`-x floordiv 2` is `-(x floordiv 2)`), as in the
//! seed's `-(-11d0 - d1 + 109) floordiv 11 + 9`. One side of every `*` must be a constant. Coefficients are accumulated in 128 bits and
//! checked on the way back to 64, so every expression [`IndexExpr`]'s `Display` prints parses back.
//! [`Parser`] is public so that other text forms (indexing maps, layouts) can embed expressions.

use std::collections::BTreeMap;
use std::fmt;

use super::{Atom, ExprError, IndexExpr, Term, Var};
use crate::text::Cursor;

/// A syntax or range error in expression text, with the byte offset where it was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at column {column}", column = .offset + 1)]
pub struct ExprParseError {
    /// What was wrong.
    pub message: String,
    /// Byte offset into the text.
    pub offset: usize,
}

/// A token of the expression language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// An unsigned integer literal.
    Int(i128),
    /// A word: a variable such as `d0`, a keyword such as `floordiv`, or another name.
    Word(String),
    /// `->`.
    Arrow,
    /// Any other single character.
    Punct(char),
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Int(v) => write!(f, "`{v}`"),
            Token::Word(w) => write!(f, "`{w}`"),
            Token::Arrow => f.write_str("`->`"),
            Token::Punct(c) => write!(f, "`{c}`"),
        }
    }
}

/// A tokenizer and parser over expression text, on the workspace's [`Cursor`]; the indexing
/// maps' text form builds on it.
#[derive(Debug, Clone)]
pub struct Parser<'a> {
    cursor: Cursor<'a>,
}

/// A parsed value before it is known to be a plain constant: coefficients in 128 bits.
#[derive(Debug, Clone)]
struct Linear {
    terms: BTreeMap<Atom, i128>,
    constant: i128,
}

impl Linear {
    fn constant(c: i128) -> Self {
        Linear { terms: BTreeMap::new(), constant: c }
    }

    fn as_constant(&self) -> Option<i128> {
        self.terms.values().all(|c| *c == 0).then_some(self.constant)
    }

    fn add(mut self, other: Linear, sign: i128) -> Option<Linear> {
        for (atom, c) in other.terms {
            let entry = self.terms.entry(atom).or_insert(0);
            *entry = entry.checked_add(c.checked_mul(sign)?)?;
        }
        self.constant = self.constant.checked_add(other.constant.checked_mul(sign)?)?;
        Some(self)
    }

    fn scale(mut self, k: i128) -> Option<Linear> {
        for c in self.terms.values_mut() {
            *c = c.checked_mul(k)?;
        }
        self.constant = self.constant.checked_mul(k)?;
        Some(self)
    }

    fn into_expr(self) -> Option<IndexExpr> {
        let terms = self
            .terms
            .into_iter()
            .map(|(atom, c)| Some(Term { coeff: i64::try_from(c).ok()?, atom }))
            .collect::<Option<Vec<_>>>()?;
        IndexExpr::from_terms(terms, i64::try_from(self.constant).ok()?).ok()
    }

    fn from_expr(e: IndexExpr) -> Self {
        Linear {
            terms: e.terms.into_iter().map(|t| (t.atom, i128::from(t.coeff))).collect(),
            constant: i128::from(e.constant),
        }
    }
}

impl<'a> Parser<'a> {
    /// A parser at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Parser { cursor: Cursor::new(text) }
    }

    /// The current byte offset.
    pub fn offset(&self) -> usize {
        self.cursor.offset()
    }

    /// An error at the current offset.
    pub fn error(&self, message: impl Into<String>) -> ExprParseError {
        ExprParseError { message: message.into(), offset: self.offset() }
    }

    fn skip_space(&mut self) {
        self.cursor.skip_space();
    }

    /// Whether only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.cursor.at_end()
    }

    /// The next token and its length in bytes, without consuming it.
    pub fn peek(&mut self) -> Option<(Token, usize)> {
        let c = self.cursor.peek()?;
        let mut ahead = self.cursor.clone();
        if c.is_ascii_digit() {
            // Literals beyond 128 bits are reported by `parse_int` as out of range.
            let int = ahead.unsigned().expect("a digit is next");
            return Some((Token::Int(int.value.unwrap_or(i128::MAX)), int.span.len()));
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let span = ahead.take_while(|ch| ch.is_ascii_alphanumeric() || ch == '_');
            return Some((Token::Word(ahead.slice(span).to_string()), span.len()));
        }
        if ahead.rest().starts_with("->") {
            return Some((Token::Arrow, 2));
        }
        Some((Token::Punct(c), c.len_utf8()))
    }

    /// Consumes and returns the next token.
    pub fn next_token(&mut self) -> Option<Token> {
        let (token, len) = self.peek()?;
        self.cursor.advance(len);
        Some(token)
    }

    /// Consumes the punctuation `c` if it is next.
    pub fn eat_punct(&mut self, c: char) -> bool {
        matches!(self.peek(), Some((Token::Punct(p), _)) if p == c) && self.cursor.eat(c)
    }

    /// Consumes the word `w` if it is next.
    pub fn eat_word(&mut self, w: &str) -> bool {
        match self.peek() {
            Some((Token::Word(word), len)) if word == w => {
                self.cursor.advance(len);
                true
            }
            _ => false,
        }
    }

    /// Consumes `->` if it is next.
    pub fn eat_arrow(&mut self) -> bool {
        matches!(self.peek(), Some((Token::Arrow, _))) && self.cursor.eat_str("->")
    }

    /// Requires the punctuation `c` next.
    ///
    /// # Errors
    /// A parse error naming what was found instead.
    pub fn expect_punct(&mut self, c: char) -> Result<(), ExprParseError> {
        if self.eat_punct(c) { Ok(()) } else { Err(self.unexpected(&format!("`{c}`"))) }
    }

    /// Requires `->` next.
    ///
    /// # Errors
    /// A parse error naming what was found instead.
    pub fn expect_arrow(&mut self) -> Result<(), ExprParseError> {
        if self.eat_arrow() { Ok(()) } else { Err(self.unexpected("`->`")) }
    }

    /// An error saying `expected` was wanted but something else was found.
    pub fn unexpected(&mut self, expected: &str) -> ExprParseError {
        match self.peek() {
            Some((token, _)) => self.error(format!("expected {expected}, found {token}")),
            None => self.error(format!("expected {expected}, found the end of the text")),
        }
    }

    /// Parses a signed 64-bit integer literal (an optional `-` then digits).
    ///
    /// # Errors
    /// A parse error if no integer is next or it does not fit in 64 bits.
    pub fn parse_int(&mut self) -> Result<i64, ExprParseError> {
        let start = self.offset();
        let negative = self.eat_punct('-');
        match self.next_token() {
            Some(Token::Int(v)) => {
                let v = if negative { -v } else { v };
                i64::try_from(v).map_err(|_| ExprParseError {
                    message: "integer does not fit in 64 bits".into(),
                    offset: start,
                })
            }
            _ => {
                self.cursor.set_offset(start);
                Err(self.unexpected("an integer"))
            }
        }
    }

    /// Parses one index expression.
    ///
    /// # Errors
    /// A parse error for malformed text, a product of two non-constants, a non-positive divisor,
    /// or a value that does not fit in 64 bits.
    pub fn parse_expr(&mut self) -> Result<IndexExpr, ExprParseError> {
        let start = self.offset();
        let linear = self.sum()?;
        linear.into_expr().ok_or(ExprParseError {
            message: "a coefficient or constant does not fit in 64 bits".into(),
            offset: start,
        })
    }

    fn sum(&mut self) -> Result<Linear, ExprParseError> {
        let mut acc = self.term()?;
        loop {
            let sign = if self.eat_punct('+') {
                1
            } else if self.eat_punct('-') {
                -1
            } else {
                return Ok(acc);
            };
            let at = self.offset();
            let rhs = self.term()?;
            acc = acc.add(rhs, sign).ok_or_else(|| overflow(at))?;
        }
    }

    /// A term; a leading `-` negates the whole term, so `-x floordiv 2` is `-(x floordiv 2)`.
    fn term(&mut self) -> Result<Linear, ExprParseError> {
        self.skip_space();
        let at = self.offset();
        if self.eat_punct('-') {
            return self.term()?.scale(-1).ok_or_else(|| overflow(at));
        }
        let mut acc = self.factor()?;
        loop {
            self.skip_space();
            let at = self.offset();
            if self.eat_punct('*') {
                let rhs = self.factor()?;
                acc = multiply(acc, rhs, at)?;
            } else if let Some(op) = self.division_keyword() {
                let c = self.parse_int()?;
                acc = divide(acc, op, c, at)?;
            } else {
                return Ok(acc);
            }
        }
    }

    fn division_keyword(&mut self) -> Option<&'static str> {
        ["floordiv", "ceildiv", "mod"].into_iter().find(|op| self.eat_word(op))
    }

    fn factor(&mut self) -> Result<Linear, ExprParseError> {
        self.skip_space();
        let at = self.offset();
        match self.next_token() {
            Some(Token::Int(v)) => {
                if v == i128::MAX {
                    return Err(ExprParseError {
                        message: "integer literal is too large".into(),
                        offset: at,
                    });
                }
                // Juxtaposition: `2d0` or `4(d1 + 1)`, only when nothing separates them.
                let adjacent = self.cursor.rest().starts_with(|c: char| c.is_ascii_alphabetic() || c == '(');
                if adjacent && !self.next_is_keyword() {
                    let rhs = self.factor()?;
                    return rhs.scale(v).ok_or_else(|| overflow(at));
                }
                Ok(Linear::constant(v))
            }
            Some(Token::Word(w)) => {
                let var = parse_var(&w).ok_or_else(|| ExprParseError {
                    message: format!("expected a variable such as d0 or s0, found `{w}`"),
                    offset: at,
                })?;
                Ok(Linear::from_expr(IndexExpr::var(var)))
            }
            Some(Token::Punct('(')) => {
                let inner = self.sum()?;
                self.expect_punct(')')?;
                Ok(inner)
            }
            Some(Token::Punct('-')) => self.factor()?.scale(-1).ok_or_else(|| overflow(at)),
            _ => {
                self.cursor.set_offset(at);
                Err(self.unexpected("an integer, a variable or `(`"))
            }
        }
    }

    fn next_is_keyword(&mut self) -> bool {
        matches!(self.peek(), Some((Token::Word(w), _)) if matches!(w.as_str(), "floordiv" | "ceildiv" | "mod"))
    }
}

fn overflow(offset: usize) -> ExprParseError {
    ExprParseError { message: "a coefficient or constant does not fit in 64 bits".into(), offset }
}

fn parse_var(word: &str) -> Option<Var> {
    let (kind, digits) = word.split_at(1);
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    let index = digits.parse::<u32>().ok()?;
    match kind {
        "d" => Some(Var::Dim(index)),
        "s" => Some(Var::Symbol(index)),
        _ => None,
    }
}

fn multiply(lhs: Linear, rhs: Linear, at: usize) -> Result<Linear, ExprParseError> {
    let product = match (lhs.as_constant(), rhs.as_constant()) {
        (Some(k), _) => rhs.scale(k),
        (_, Some(k)) => lhs.scale(k),
        (None, None) => {
            return Err(ExprParseError {
                message: "a product needs a constant on one side (index expressions are affine)".into(),
                offset: at,
            });
        }
    };
    product.ok_or_else(|| overflow(at))
}

fn divide(lhs: Linear, op: &str, c: i64, at: usize) -> Result<Linear, ExprParseError> {
    let e = lhs.into_expr().ok_or_else(|| overflow(at))?;
    let result = match op {
        "floordiv" => e.floordiv(c),
        "ceildiv" => e.ceildiv(c),
        _ => e.modulo(c),
    };
    result.map(Linear::from_expr).map_err(|err| ExprParseError {
        message: match err {
            ExprError::NonPositiveDivisor(c) => format!("`{op}` needs a positive constant, got {c}"),
            other => other.to_string(),
        },
        offset: at,
    })
}

pub(super) fn parse_expr(text: &str) -> Result<IndexExpr, ExprParseError> {
    let mut parser = Parser::new(text);
    let e = parser.parse_expr()?;
    if !parser.at_end() {
        return Err(parser.unexpected("an operator or the end of the expression"));
    }
    Ok(e)
}

/// Parses a parenthesised, comma-separated list of expressions, such as `(d0, d1 floordiv 2)`.
///
/// # Errors
/// A parse error for malformed text.
pub fn parse_expr_list(parser: &mut Parser<'_>) -> Result<Vec<IndexExpr>, ExprParseError> {
    parser.expect_punct('(')?;
    let mut out = Vec::new();
    if parser.eat_punct(')') {
        return Ok(out);
    }
    loop {
        out.push(parser.parse_expr()?);
        if parser.eat_punct(')') {
            return Ok(out);
        }
        parser.expect_punct(',')?;
    }
}
