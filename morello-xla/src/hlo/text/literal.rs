//! Constant literals: the text between a `constant`'s parentheses, read into a [`Literal`].
//!
//! ```text
//! literal = scalar                                   rank 0: 42, 1.5, -inf, nan, true
//!         | "{" [literal ("," literal)*] "}"          one brace level per dimension
//!         | "{...}"                                  elided by XLA's printer: no values
//! scalar  = integer | float | "inf" | "-inf" | "nan" | "-nan" | "nan(0x..)" | "true" | "false"
//! ```
//!
//! Each brace level must hold exactly its dimension's size of entries. `pred` takes `true`,
//! `false`, `1` and `0`; integers must fit their type. Tuple, complex, token and opaque constants
//! are read without values, as is an elided literal (`{...}`): their `literal` is `None`.

use std::sync::Arc;

use crate::hlo::literal::{Literal, LiteralValues, integer_range, is_float_type};
use crate::xla::{ElementType, XlaShape};

use super::HloTextErrorKind;
use super::cursor::Span;
use super::syntax::{Arguments, RawInstruction};

/// The literal of a `constant` instruction, `None` when it has no values to read.
pub(super) fn read(instr: &RawInstruction<'_>) -> Result<Option<Arc<Literal>>, (Span, HloTextErrorKind)> {
    let Arguments::Literal(text, span) = instr.arguments else { return Ok(None) };
    let XlaShape::Array(array) = &instr.shape else { return Ok(None) };
    let element_type = array.element_type();
    if matches!(element_type, ElementType::C64 | ElementType::C128) || !element_type.is_array_element() {
        return Ok(None);
    }
    if text.trim() == "{...}" || text.trim_start().starts_with('"') {
        return Ok(None);
    }
    let dims: Vec<i64> = array.dims().iter().map(|&d| i64::try_from(d).unwrap_or(i64::MAX)).collect();
    let mut reader = Reader { text, at: 0, element_type, floats: Vec::new(), integers: Vec::new() };
    let error = |at: usize, message: String| {
        let start = span.start + at.min(text.len());
        (Span::new(start, start), HloTextErrorKind::BadLiteral { message })
    };
    // A lone scalar for an array shape fills every element (`bf16[17,22] constant(1)`).
    let lone_scalar = !dims.is_empty() && !text.trim_start().starts_with('{');
    let level = if lone_scalar { reader.scalar() } else { reader.level(&dims, 0) };
    level.map_err(|(at, message)| error(at, message))?;
    reader.skip_space();
    if reader.at < text.len() {
        return Err(error(reader.at, "unexpected text after the literal".to_string()));
    }
    let count =
        dims.iter().try_fold(1usize, |acc, &d| usize::try_from(d).ok().and_then(|d| acc.checked_mul(d)));
    let fill = |n: usize| if lone_scalar { count.unwrap_or(n) } else { n };
    let values = if is_float_type(element_type) {
        let n = fill(reader.floats.len());
        LiteralValues::Floats(reader.floats.iter().copied().cycle().take(n).collect())
    } else {
        let n = fill(reader.integers.len());
        LiteralValues::Integers(reader.integers.iter().copied().cycle().take(n).collect())
    };
    Literal::new(element_type, &dims, values).map(|l| Some(Arc::new(l))).map_err(|message| error(0, message))
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
    element_type: ElementType,
    floats: Vec<f64>,
    integers: Vec<i128>,
}

type Step = Result<(), (usize, String)>;

impl Reader<'_> {
    fn skip_space(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start().len();
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.text[self.at..].chars().next()
    }

    /// Dimension `depth` of `dims` and everything inside it (a scalar once past the last).
    fn level(&mut self, dims: &[i64], depth: usize) -> Step {
        let Some(&size) = dims.get(depth) else { return self.scalar() };
        if self.peek() != Some('{') {
            return Err((self.at, format!("expected `{{` opening dimension {depth} of the literal")));
        }
        let open = self.at;
        self.at += 1;
        let mut count = 0i64;
        if self.peek() == Some('}') {
            self.at += 1;
        } else {
            loop {
                self.level(dims, depth + 1)?;
                count += 1;
                match self.peek() {
                    Some(',') => self.at += 1,
                    Some('}') => {
                        self.at += 1;
                        break;
                    }
                    _ => return Err((self.at, "expected `,` or `}` in the literal".to_string())),
                }
            }
        }
        if count != size {
            return Err((
                open,
                format!("dimension {depth} of the literal has {count} entries, expected {size}"),
            ));
        }
        Ok(())
    }

    fn scalar(&mut self) -> Step {
        self.skip_space();
        let start = self.at;
        let rest = &self.text[start..];
        let mut depth = 0i32;
        let len = rest
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth <= 0 && (c.is_whitespace() || c == ',' || c == '}' || c == '{' || depth < 0)
            })
            .map_or(rest.len(), |(i, _)| i);
        let token = &rest[..len];
        self.at += len;
        let bad = |what: &str| (start, format!("`{token}` is not {what}"));
        if token.is_empty() {
            return Err((start, "expected a value in the literal".to_string()));
        }
        if is_float_type(self.element_type) {
            self.floats.push(float(token).ok_or_else(|| bad("a number"))?);
            return Ok(());
        }
        let value = match (self.element_type, token) {
            (ElementType::Pred, "true") => 1,
            (ElementType::Pred, "false") => 0,
            _ => token.parse::<i128>().map_err(|_| bad("an integer"))?,
        };
        let (lo, hi) = integer_range(self.element_type).unwrap_or((0, 0));
        if !(lo..=hi).contains(&value) {
            return Err((start, format!("{value} is outside the range of {}", self.element_type)));
        }
        self.integers.push(value);
        Ok(())
    }
}

/// A float as XLA prints it: a decimal, `inf`, `-inf`, `nan`, `-nan`, `nan(0x..)`.
fn float(token: &str) -> Option<f64> {
    let (negative, body) = match token.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, token.strip_prefix('+').unwrap_or(token)),
    };
    let magnitude = if body == "inf" {
        f64::INFINITY
    } else if body == "nan" || (body.starts_with("nan(0x") && body.ends_with(')')) {
        f64::NAN
    } else if body.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')) {
        body.parse::<f64>().ok()?
    } else {
        return None;
    };
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use crate::hlo::{HloModule, HloOp, LiteralValues};

    fn literal(instruction: &str) -> Result<Option<LiteralValues>, String> {
        let module: HloModule =
            format!("ENTRY e {{\n  ROOT c = {instruction}\n}}").parse().map_err(|e| format!("{e}"))?;
        match &module.entry().root_instruction().unwrap().op {
            HloOp::Constant { literal, .. } => Ok(literal.as_ref().map(|l| l.values().clone())),
            other => panic!("not a constant: {other:?}"),
        }
    }

    #[test]
    fn literals_of_every_kind_read() {
        assert_eq!(literal("f32[] constant(1.41421354)"), Ok(Some(LiteralValues::Floats(vec![1.41421354]))));
        assert_eq!(literal("f32[] constant(-inf)"), Ok(Some(LiteralValues::Floats(vec![f64::NEG_INFINITY]))));
        let Ok(Some(LiteralValues::Floats(nan))) = literal("f32[] constant(nan(0x7fffff))") else { panic!() };
        assert!(nan[0].is_nan());
        assert_eq!(
            literal("s32[2,3] constant({ {1, 2, 3}, {-4, 5, 2147483647} })"),
            Ok(Some(LiteralValues::Integers(vec![1, 2, 3, -4, 5, 2147483647])))
        );
        assert_eq!(literal("pred[2] constant({true, false})"), Ok(Some(LiteralValues::Integers(vec![1, 0]))));
        assert_eq!(literal("f32[0] constant({})"), Ok(Some(LiteralValues::Floats(vec![]))));
        assert_eq!(literal("s32[2,2] constant(7)"), Ok(Some(LiteralValues::Integers(vec![7; 4]))));
        assert_eq!(literal("f32[] constant(\"a string\")"), Ok(None));
        assert_eq!(literal("f32[1000] constant({...})"), Ok(None));
        assert_eq!(
            literal("u64[] constant(18446744073709551615)"),
            Ok(Some(LiteralValues::Integers(vec![(1 << 64) - 1])))
        );
    }

    #[test]
    fn malformed_literals_are_errors_at_the_value() {
        for (text, message) in [
            (
                "s32[2] constant({1, 2, 3})",
                "column 28, instruction `c` in computation `e`: invalid literal: dimension 0 of the literal has 3 entries, expected 2",
            ),
            ("s8[] constant(300)", "300 is outside the range of s8"),
            ("f32[] constant(one)", "`one` is not a number"),
            ("f32[2,2] constant({1, 2})", "expected `{` opening dimension 1"),
            ("s32[] constant(1 2)", "unexpected text after the literal"),
        ] {
            let error = literal(text).unwrap_err();
            assert!(error.contains(message), "{text}: {error}");
        }
    }
}
