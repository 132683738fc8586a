//! The one text cursor every parser of the workspace reads with: [`Cursor`] over a `&str`, and
//! [`Span`], a byte range of it.
//!
//! The cursor knows nothing of any grammar. It skips whitespace, eats characters and strings,
//! takes runs of characters, reads decimal integers (reporting overflow instead of wrapping),
//! and turns byte offsets into the columns and lines that error messages show. Each text form
//! (index expressions, layouts, specs, XLA shapes, HLO, indexing maps) keeps its own grammar and
//! its own error type on top of it.
//!
//! # Invariants
//! The position is always on a character boundary and never past the end, so slicing the text
//! at a span the cursor produced never panics.
//!
//! ```
//! use morello_core::text::Cursor;
//! let mut cursor = Cursor::new("  f32[10, -3]");
//! let name = cursor.take_while_after_space(|c| c.is_ascii_alphanumeric());
//! assert_eq!(cursor.slice(name), "f32");
//! assert!(cursor.eat('['));
//! assert_eq!(cursor.integer().and_then(|i| i.value), Some(10));
//! assert!(cursor.eat(','));
//! let negative = cursor.integer().expect("an integer is next");
//! assert_eq!((negative.value, cursor.column(negative.span.start)), (Some(-3), 11));
//! ```

/// A byte range `[start, end)` of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The range `[start, end)`.
    pub const fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// An empty range at `offset`.
    pub const fn at(offset: usize) -> Span {
        Span { start: offset, end: offset }
    }

    /// The smallest range covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    /// The length in bytes.
    pub const fn len(self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// Whether the range is empty.
    pub const fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// A decimal integer as read: its span and its value (`None` when it does not fit in `i128`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Integer {
    /// Where the integer is, its sign included.
    pub span: Span,
    /// The value, `None` beyond 128 bits.
    pub value: Option<i128>,
    /// Whether a `-` was written (so `-0` is told from `0`).
    pub negative: bool,
}

impl Integer {
    /// The value if it fits in `i64`.
    pub fn to_i64(self) -> Option<i64> {
        self.value.and_then(|v| i64::try_from(v).ok())
    }
}

/// A position in a text. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`.
    pub const fn new(text: &'a str) -> Self {
        Cursor { text, pos: 0 }
    }

    /// The whole text.
    pub const fn text(&self) -> &'a str {
        self.text
    }

    /// The current byte offset.
    pub const fn offset(&self) -> usize {
        self.pos
    }

    /// Moves to `offset`, clamped to the text and moved back to a character boundary.
    pub fn set_offset(&mut self, offset: usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        self.pos = offset;
    }

    /// Moves forward over `bytes` bytes (as [`Cursor::set_offset`]).
    pub fn advance(&mut self, bytes: usize) {
        self.set_offset(self.pos.saturating_add(bytes));
    }

    /// The text from the cursor on.
    pub fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    /// The text of a span (empty if the span is not inside the text).
    pub fn slice(&self, span: Span) -> &'a str {
        self.text.get(span.start..span.end).unwrap_or("")
    }

    /// Skips whitespace.
    pub fn skip_space(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// Skips spaces and tabs only (not line breaks).
    pub fn skip_blanks(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start_matches([' ', '\t']).len();
    }

    /// Whether only whitespace is left (skips it).
    pub fn at_end(&mut self) -> bool {
        self.skip_space();
        self.pos >= self.text.len()
    }

    /// The next character after whitespace, not consumed.
    pub fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.peek_here()
    }

    /// The character at the cursor, whitespace included, not consumed.
    pub fn peek_here(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// Whether the text after whitespace starts with `s` (nothing consumed but the whitespace).
    pub fn looking_at(&mut self, s: &str) -> bool {
        self.skip_space();
        self.rest().starts_with(s)
    }

    /// Consumes `c` after whitespace if it is next.
    pub fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        self.eat_here(c)
    }

    /// Consumes `s` after whitespace if it is next.
    pub fn eat_str(&mut self, s: &str) -> bool {
        let found = self.looking_at(s);
        if found {
            self.pos += s.len();
        }
        found
    }

    /// Consumes `c` at the cursor, without skipping whitespace first.
    pub fn eat_here(&mut self, c: char) -> bool {
        if self.peek_here() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    /// Consumes the longest run of characters satisfying `pred` at the cursor (possibly empty)
    /// and returns its span.
    pub fn take_while(&mut self, pred: impl Fn(char) -> bool) -> Span {
        let start = self.pos;
        let len: usize = self.rest().chars().take_while(|&c| pred(c)).map(char::len_utf8).sum();
        self.pos += len;
        Span::new(start, self.pos)
    }

    /// Skips whitespace, then as [`Cursor::take_while`].
    pub fn take_while_after_space(&mut self, pred: impl Fn(char) -> bool) -> Span {
        self.skip_space();
        self.take_while(pred)
    }

    /// Reads a decimal integer after whitespace: an optional `-` directly followed by digits.
    /// Returns `None`, consuming only the whitespace, if no digit follows.
    pub fn integer(&mut self) -> Option<Integer> {
        self.skip_space();
        let negative = self.rest().starts_with('-');
        self.number(negative)
    }

    /// Reads an unsigned decimal integer after whitespace (a `-` is not part of it).
    pub fn unsigned(&mut self) -> Option<Integer> {
        self.skip_space();
        self.number(false)
    }

    fn number(&mut self, negative: bool) -> Option<Integer> {
        let start = self.pos;
        let digits_start = start + usize::from(negative);
        let digits = self.text[digits_start..].bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let end = digits_start + digits;
        let magnitude = self.text[digits_start..end]
            .bytes()
            .try_fold(0i128, |acc, b| acc.checked_mul(10)?.checked_add(i128::from(b - b'0')));
        self.pos = end;
        let value = magnitude.map(|m| if negative { -m } else { m });
        Some(Integer { span: Span::new(start, end), value, negative })
    }

    /// The span of the token starting at `start`, for quoting in an error: the run of
    /// characters satisfying `is_word` there, or else the one character there (empty at the
    /// end of the text).
    pub fn token_at(&self, start: usize, is_word: impl Fn(char) -> bool) -> Span {
        let start = start.min(self.text.len());
        let rest = self.text.get(start..).unwrap_or("");
        let word: usize = rest.chars().take_while(|&c| is_word(c)).map(char::len_utf8).sum();
        let len = if word > 0 { word } else { rest.chars().next().map_or(0, char::len_utf8) };
        Span::new(start, start + len)
    }

    /// The 1-based column, in characters, of a byte offset (on the offset's line for a text of
    /// several lines).
    pub fn column(&self, offset: usize) -> usize {
        line_column(self.text, offset).1
    }

    /// The 1-based position, in characters from the start of the whole text, of a byte offset
    /// (the column of a text read as one line, whatever line breaks it holds).
    pub fn char_position(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        self.text[..offset].chars().count() + 1
    }

    /// The 1-based line and column (in characters) of a byte offset.
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        line_column(self.text, offset)
    }
}

/// The 1-based line and column (in characters) of a byte offset of `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_report_overflow_and_sign() {
        let mut cursor = Cursor::new(" -0 170141183460469231731687303715884105728 12x");
        let zero = cursor.integer().expect("digits");
        assert_eq!((zero.value, zero.negative, zero.span), (Some(0), true, Span::new(1, 3)));
        assert_eq!(cursor.integer().expect("digits").value, None);
        assert_eq!(cursor.unsigned().expect("digits").value, Some(12));
        assert_eq!(cursor.integer(), None);
        assert_eq!(cursor.peek(), Some('x'));
        let mut minus = Cursor::new("- 1");
        assert_eq!(minus.integer(), None);
        assert_eq!(minus.offset(), 0);
    }

    #[test]
    fn positions_are_character_based() {
        let cursor = Cursor::new("ab\nçd é");
        assert_eq!(cursor.line_column(0), (1, 1));
        assert_eq!(cursor.line_column(3), (2, 1));
        assert_eq!(cursor.line_column(6), (2, 3));
        // A byte inside `é` is moved back to its start.
        assert_eq!(cursor.line_column(8), (2, 4));
        assert_eq!(cursor.char_position(8), 7);
        assert_eq!(cursor.token_at(3, char::is_alphabetic), Span::new(3, 6));
        assert_eq!(cursor.token_at(100, char::is_alphabetic), Span::new(9, 9));
    }

    #[test]
    fn offsets_stay_on_boundaries() {
        let mut cursor = Cursor::new("é");
        cursor.set_offset(1);
        assert_eq!(cursor.offset(), 0);
        cursor.advance(10);
        assert_eq!(cursor.offset(), 2);
        assert!(cursor.at_end());
    }
}
