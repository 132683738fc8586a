//! A cursor over HLO text: whitespace and comments, words, integers, balanced groups, and
//! positions turned into lines and columns for errors.
//!
//! Comments (`/* ... */` and `// ...` to the end of the line, outside string literals) are
//! blanked out before reading, byte for byte, so every byte offset is the same in the text read
//! and in the text the user wrote, and columns are counted in the latter.

use crate::xla::fragment_of;

use super::{HloTextError, HloTextErrorKind};

/// A byte range of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub start: usize,
    pub end: usize,
}

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
    pub text: &'a str,
    /// The current byte offset.
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(original: &'a str, text: &'a str) -> Self {
        Cursor { original, text, pos: 0 }
    }

    pub fn skip_space(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    pub fn at_end(&mut self) -> bool {
        self.skip_space();
        self.pos >= self.text.len()
    }

    pub fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.text[self.pos..].chars().next()
    }

    /// Whether the text at the cursor (after spaces) starts with `s`.
    pub fn looking_at(&mut self, s: &str) -> bool {
        self.skip_space();
        self.text[self.pos..].starts_with(s)
    }

    pub fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    pub fn expect(&mut self, c: char, what: &str) -> Result<(), HloTextError> {
        if self.eat(c) { Ok(()) } else { Err(self.unexpected(format!("expected {what}"))) }
    }

    /// A name or keyword: an optional `%`, then letters, digits, `_`, `.` and `-`. Returns the
    /// name without its `%` and the span of the whole word.
    pub fn name(&mut self) -> Option<(&'a str, Span)> {
        self.skip_space();
        let start = self.pos;
        let text = self.text;
        let body = start + usize::from(text[start..].starts_with('%'));
        let len: usize = text[body..].chars().take_while(|&c| is_name_char(c)).map(char::len_utf8).sum();
        if len == 0 {
            return None;
        }
        self.pos = body + len;
        Some((&text[body..body + len], Span { start, end: self.pos }))
    }

    /// A name, or an error saying `expected {what}`.
    pub fn expect_name(&mut self, what: &str) -> Result<(&'a str, Span), HloTextError> {
        self.name().ok_or_else(|| self.unexpected(format!("expected {what}")))
    }

    /// An optionally negative decimal integer that fits in `i64`.
    pub fn integer(&mut self, what: &str) -> Result<(i64, Span), HloTextError> {
        self.skip_space();
        let start = self.pos;
        let negative = self.text[start..].starts_with('-');
        let digits_start = start + usize::from(negative);
        let digits = self.text[digits_start..].bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(self.unexpected(format!("expected {what}")));
        }
        let span = Span { start, end: digits_start + digits };
        let value: Option<i64> = self.text[span.start..span.end].parse().ok();
        let value = value.ok_or_else(|| {
            self.error_at(
                span,
                HloTextErrorKind::Syntax {
                    message: format!("expected {what} between -2^63 and 2^63 - 1"),
                    found: fragment_of(&self.text[span.start..span.end]),
                },
            )
        })?;
        self.pos = span.end;
        Ok((value, span))
    }

    /// Skips a group opened by the bracket at the cursor up to its matching close, across
    /// nested `()`, `[]`, `{}` and string literals. Returns the span of the whole group.
    pub fn skip_group(&mut self) -> Result<Span, HloTextError> {
        self.skip_space();
        let start = self.pos;
        let mut stack: Vec<char> = Vec::new();
        let mut chars = self.text[start..].char_indices();
        while let Some((offset, c)) = chars.next() {
            match c {
                '(' | '[' | '{' => {
                    if stack.len() >= MAX_NESTING {
                        self.pos = start + offset;
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
                        self.pos = start + offset;
                        let expected = expected.unwrap_or('(');
                        return Err(
                            self.unexpected(format!("expected `{expected}` closing an earlier bracket"))
                        );
                    }
                    if stack.is_empty() {
                        self.pos = start + offset + 1;
                        return Ok(Span { start, end: self.pos });
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
                        self.pos = start + offset;
                        return Err(self.unexpected("a string that is never closed"));
                    }
                }
                _ if stack.is_empty() => {
                    self.pos = start + offset;
                    return Err(self.unexpected("expected `(`, `[` or `{`"));
                }
                _ => {}
            }
        }
        self.pos = start;
        let close = stack.last().copied().unwrap_or(')');
        Err(self.unexpected(format!("expected `{close}` closing this group before the end of the text")))
    }

    /// Skips a string literal at the cursor.
    pub fn skip_string(&mut self) -> Result<Span, HloTextError> {
        self.skip_space();
        let start = self.pos;
        let mut chars = self.text[start + 1..].char_indices();
        while let Some((offset, c)) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    self.pos = start + 1 + offset + 1;
                    return Ok(Span { start, end: self.pos });
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

    /// The end of the token starting at `start`: a name, or one character.
    fn token_end(&self, start: usize) -> usize {
        let rest = &self.text[start..];
        let word: usize = rest.chars().take_while(|&c| is_name_char(c)).map(char::len_utf8).sum();
        if word > 0 { start + word } else { start + rest.chars().next().map_or(0, char::len_utf8) }
    }

    /// An error of this kind at `span`, not yet placed in a computation or instruction.
    pub fn error_at(&self, span: Span, kind: HloTextErrorKind) -> HloTextError {
        let (line, column) = self.line_column(span.start);
        HloTextError { line, column, computation: None, instruction: None, kind: Box::new(kind) }
    }

    /// A syntax error quoting the token at the cursor.
    pub fn unexpected(&mut self, message: impl Into<String>) -> HloTextError {
        self.skip_space();
        let span = Span { start: self.pos, end: self.token_end(self.pos) };
        let found = fragment_of(&self.text[span.start..span.end]);
        self.error_at(span, HloTextErrorKind::Syntax { message: message.into(), found })
    }
}

/// The 1-based line and column (in characters) of a byte offset of `text`.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    (line, before[line_start..].chars().count() + 1)
}
