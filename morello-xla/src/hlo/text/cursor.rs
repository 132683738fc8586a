//! HLO's layer over the workspace's text [`Cursor`](morello_core::text::Cursor): comments, names,
//! integers, balanced groups, and positions turned into lines and columns for errors.
//!
//! Comments (`/* ... */` and `// ...` to the end of the line, outside string literals) are
//! blanked out before reading, byte for byte, so every byte offset is the same in the text read
//! and in the text the user wrote, and columns are counted in the latter.

pub(super) use morello_core::text::Span;
use morello_core::text::{self, Integer};

use crate::xla::fragment_of;

use super::{HloTextError, HloTextErrorKind};

/// The most deeply nested brackets a balanced group may have (deeper text is rejected rather
/// than risking very long scans of broken text).
const MAX_NESTING: usize = 256;

/// The text with comments replaced by spaces, newlines kept.
pub(super) fn blank_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'"', _) => {
                in_string = true;
                i += 1;
            }
            (b'/', Some(b'*')) => {
                let end = text[i + 2..].find("*/").map_or(bytes.len(), |p| i + 2 + p + 2);
                blank(&mut out, i, end);
                i = end;
            }
            (b'/', Some(b'/')) => {
                let end = text[i..].find('\n').map_or(bytes.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
            }
            _ => i += 1,
        }
    }
    // Only whole characters were replaced, each byte by an ASCII space or kept as it was.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

fn blank(out: &mut [u8], start: usize, end: usize) {
    for b in &mut out[start..end] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

/// Whether `c` may appear in a name or keyword (after an optional leading `%`).
pub(super) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// A position in the text being read. Offsets always sit on character boundaries.
pub(super) struct Cursor<'a> {
    /// The text the user wrote (for columns).
    original: &'a str,
    /// The same text with comments blanked (what is read).
    inner: text::Cursor<'a>,
}

impl<'a> Cursor<'a> {
    pub fn new(original: &'a str, text: &'a str) -> Self {
        Cursor { original, inner: text::Cursor::new(text) }
    }

    pub fn offset(&self) -> usize {
        self.inner.offset()
    }

    pub fn set_offset(&mut self, offset: usize) {
        self.inner.set_offset(offset);
    }

    pub fn advance(&mut self, bytes: usize) {
        self.inner.advance(bytes);
    }

    /// The length of the text: the offset of its end.
    pub fn end_offset(&self) -> usize {
        self.inner.text().len()
    }

    /// The (comment-blanked) text from the cursor on.
    pub fn rest(&self) -> &'a str {
        self.inner.rest()
    }

    /// The (comment-blanked) text of a span.
    pub fn slice(&self, span: Span) -> &'a str {
        self.inner.slice(span)
    }

    pub fn skip_space(&mut self) {
        self.inner.skip_space();
    }

    pub fn skip_blanks(&mut self) {
        self.inner.skip_blanks();
    }

    pub fn take_while(&mut self, pred: impl Fn(char) -> bool) -> Span {
        self.inner.take_while(pred)
    }

    pub fn at_end(&mut self) -> bool {
        self.inner.at_end()
    }

    pub fn peek(&mut self) -> Option<char> {
        self.inner.peek()
    }

    pub fn eat(&mut self, c: char) -> bool {
        self.inner.eat(c)
    }

    pub fn eat_str(&mut self, s: &str) -> bool {
        self.inner.eat_str(s)
    }

    pub fn expect(&mut self, c: char, what: &str) -> Result<(), HloTextError> {
        if self.eat(c) { Ok(()) } else { Err(self.unexpected(format!("expected {what}"))) }
    }

    /// A name or keyword: an optional `%`, then letters, digits, `_`, `.` and `-`. Returns the
    /// name without its `%` and the span of the whole word.
    pub fn name(&mut self) -> Option<(&'a str, Span)> {
        self.skip_space();
        let start = self.offset();
        self.inner.eat_here('%');
        let body = self.take_while(is_name_char);
        if body.is_empty() {
            self.set_offset(start);
            return None;
        }
        Some((self.slice(body), Span::new(start, body.end)))
    }

    /// The span of `keyword` (`ENTRY`, `ROOT`) if the next name is that word; otherwise `None`,
    /// and the cursor does not move.
    pub fn keyword(&mut self, keyword: &str) -> Option<Span> {
        let start = self.offset();
        match self.name() {
            Some((name, span)) if name == keyword => Some(span),
            _ => {
                self.set_offset(start);
                None
            }
        }
    }

    /// A name, or an error saying `expected {what}`.
    pub fn expect_name(&mut self, what: &str) -> Result<(&'a str, Span), HloTextError> {
        self.name().ok_or_else(|| self.unexpected(format!("expected {what}")))
    }

    /// An optionally negative decimal integer that fits in `i64`.
    pub fn integer(&mut self, what: &str) -> Result<(i64, Span), HloTextError> {
        let start = self.offset();
        let Some(Integer { span, value, .. }) = self.inner.integer() else {
            return Err(self.unexpected(format!("expected {what}")));
        };
        let value = value.and_then(|v| i64::try_from(v).ok()).ok_or_else(|| {
            self.error_at(
                span,
                HloTextErrorKind::Syntax {
                    message: format!("expected {what} between -2^63 and 2^63 - 1"),
                    found: fragment_of(self.slice(span)),
                },
            )
        });
        if value.is_err() {
            self.set_offset(start);
        }
        Ok((value?, span))
    }

    /// Skips a group opened by the bracket at the cursor up to its matching close, across
    /// nested `()`, `[]`, `{}` and string literals. Returns the span of the whole group.
    pub fn skip_group(&mut self) -> Result<Span, HloTextError> {
        self.skip_space();
        let start = self.offset();
        let mut stack: Vec<char> = Vec::new();
        let mut chars = self.rest().char_indices();
        while let Some((offset, c)) = chars.next() {
            match c {
                '(' | '[' | '{' => {
                    if stack.len() >= MAX_NESTING {
                        self.set_offset(start + offset);
                        return Err(
                            self.unexpected(format!("brackets nested deeper than {MAX_NESTING} levels"))
                        );
                    }
                    stack.push(match c {
                        '(' => ')',
                        '[' => ']',
                        _ => '}',
                    });
                }
                ')' | ']' | '}' => {
                    let expected = stack.pop();
                    if expected != Some(c) {
                        self.set_offset(start + offset);
                        let expected = expected.unwrap_or('(');
                        return Err(
                            self.unexpected(format!("expected `{expected}` closing an earlier bracket"))
                        );
                    }
                    if stack.is_empty() {
                        self.set_offset(start + offset + 1);
                        return Ok(Span::new(start, self.offset()));
                    }
                }
                '"' => {
                    let mut closed = false;
                    while let Some((_, c)) = chars.next() {
                        match c {
                            '\\' => {
                                chars.next();
                            }
                            '"' => {
                                closed = true;
                                break;
                            }
                            _ => {}
                        }
                    }
                    if !closed {
                        self.set_offset(start + offset);
                        return Err(self.unexpected("a string that is never closed"));
                    }
                }
                _ if stack.is_empty() => {
                    self.set_offset(start + offset);
                    return Err(self.unexpected("expected `(`, `[` or `{`"));
                }
                _ => {}
            }
        }
        self.set_offset(start);
        let close = stack.last().copied().unwrap_or(')');
        Err(self.unexpected(format!("expected `{close}` closing this group before the end of the text")))
    }

    /// Skips a string literal at the cursor.
    pub fn skip_string(&mut self) -> Result<Span, HloTextError> {
        self.skip_space();
        let start = self.offset();
        let mut chars = self.rest().char_indices().skip(1);
        while let Some((offset, c)) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    self.set_offset(start + offset + 1);
                    return Ok(Span::new(start, self.offset()));
                }
                _ => {}
            }
        }
        Err(self.unexpected("a string that is never closed"))
    }

    /// The 1-based line and column of a byte offset, in the text as written.
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        line_column(self.original, offset)
    }

    /// An error of this kind at `span`, not yet placed in a computation or instruction.
    pub fn error_at(&self, span: Span, kind: HloTextErrorKind) -> HloTextError {
        let (line, column) = self.line_column(span.start);
        HloTextError { line, column, computation: None, instruction: None, kind: Box::new(kind) }
    }

    /// A syntax error quoting the token at the cursor.
    pub fn unexpected(&mut self, message: impl Into<String>) -> HloTextError {
        self.skip_space();
        let span = self.inner.token_at(self.offset(), is_name_char);
        let found = fragment_of(self.slice(span));
        self.error_at(span, HloTextErrorKind::Syntax { message: message.into(), found })
    }
}

pub(super) use morello_core::text::line_column;
