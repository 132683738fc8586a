//! The text form of XLA shapes, as HLO dumps write them, and its canonical printing.
//!
//! ```text
//! shape  = array | tuple
//! tuple  = "(" [shape ("," shape)*] ")"
//! array  = type "[" [size ("," size)*] "]" [layout]
//! layout = "{" [dim ("," dim)*] [":" item*] "}"       dims: minor_to_major
//! item   = "T" tile tile*                             tilings, applied in order
//!        | "L(" n ")"                                 tail_padding_alignment_in_elements
//!        | "S(" n ")"                                 memory space
//!        | "pad(" [n ("," n)*] ")"                    padded_dimensions (a morello extension)
//! tile   = "(" n ("," n)* ")"
//! type   = pred | s4 | s8 | s16 | s32 | s64 | u4 | u8 | u16 | u32 | u64 | f16 | bf16 | f32 | f64
//! ```
//!
//! Spaces are allowed between tokens and element types are read in any ASCII case (`F32`).
//! Each layout item may appear once, in any order. XLA has no text for the older
//! `padded_dimensions`; `pad(3,5)` gives the width of every dimension in dimension-number order.
//! Other XLA layout items (`D`, `E`, `P`, `M`, `SC`, `#`, `*`), dynamic sizes (`?`, `<=N`) and
//! combine-dimension tiles (`*` inside `T(...)`) are rejected with a message saying so.
//!
//! Printing is canonical: lower-case type, no spaces except `, ` between tuple elements, the
//! layout always written for arrays with dimensions (the default `{N-1,...,0}` included) and
//! omitted for a scalar whose layout is the default, items in the order `pad T L S`, and
//! `L(1)`, `S(0)` omitted. Every printed shape parses back to the same value.

use std::fmt;
use std::str::FromStr;

use morello_core::text::{Cursor, Span};

use super::error::fragment_of;
use super::{ArrayShape, ElementType, MemorySpace, Tile, XlaError, XlaLayout, XlaShape};

/// How deep tuples may nest in text (deeper text is rejected rather than risking the stack).
const MAX_TUPLE_DEPTH: usize = 64;

impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({})", join(self.dims(), ","))
    }
}

impl fmt::Display for MemorySpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S({})", self.id())
    }
}

/// Prints the layout block, `{1,0:T(8,128)S(1)}`.
impl fmt::Display for XlaLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}", join(self.minor_to_major(), ","))?;
        let mut items = String::new();
        if let Some(padded) = self.padded_dimensions() {
            items += &format!("pad({})", join(padded, ","));
        }
        if !self.tiles().is_empty() {
            items.push('T');
            for tile in self.tiles() {
                items += &tile.to_string();
            }
        }
        if self.tail_padding_alignment_in_elements() != 1 {
            items += &format!("L({})", self.tail_padding_alignment_in_elements());
        }
        if self.memory_space() != MemorySpace::DEVICE_HBM {
            items += &self.memory_space().to_string();
        }
        if !items.is_empty() {
            write!(f, ":{items}")?;
        }
        f.write_str("}")
    }
}

impl fmt::Display for ArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.element_type(), join(self.dims(), ","))?;
        if !(self.num_dims() == 0 && self.layout().is_default_for_rank(0)) {
            write!(f, "{}", self.layout())?;
        }
        Ok(())
    }
}

impl fmt::Display for XlaShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            XlaShape::Array(array) => write!(f, "{array}"),
            XlaShape::Tuple(elements) => {
                f.write_str("(")?;
                for (i, element) in elements.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{element}")?;
                }
                f.write_str(")")
            }
        }
    }
}

fn join<T: ToString>(values: &[T], separator: &str) -> String {
    values.iter().map(T::to_string).collect::<Vec<_>>().join(separator)
}

impl FromStr for ElementType {
    type Err = XlaError;

    /// Reads a type name in any ASCII case.
    fn from_str(name: &str) -> Result<Self, XlaError> {
        ElementType::from_name(name).ok_or_else(|| XlaError::UnknownElementType { name: fragment_of(name) })
    }
}

impl FromStr for XlaShape {
    type Err = XlaError;

    /// Reads an array or tuple shape; see the module docs for the syntax.
    fn from_str(text: &str) -> Result<Self, XlaError> {
        let mut reader = Reader { cursor: Cursor::new(text) };
        let shape = reader.shape(0)?;
        if !reader.cursor.at_end() {
            return Err(reader.unexpected("unexpected text after the shape"));
        }
        Ok(shape)
    }
}

impl FromStr for ArrayShape {
    type Err = XlaError;

    /// Reads an array shape; a tuple is an error.
    fn from_str(text: &str) -> Result<Self, XlaError> {
        match text.parse::<XlaShape>()? {
            XlaShape::Array(array) => Ok(array),
            tuple @ XlaShape::Tuple(_) => {
                Err(XlaError::NotAnArray { shape: fragment_of(&tuple.to_string()) })
            }
        }
    }
}

/// Where the parts of one array's text are, to locate errors found once the array is built.
struct ArraySpans {
    whole: Span,
    dims: Vec<Span>,
    minor_to_major: Option<Span>,
    tiles: Vec<Span>,
    padded: Option<Span>,
}

/// A layout block as read, before it meets its shape.
struct LayoutText {
    layout: XlaLayout,
    minor_to_major: Span,
    tiles: Vec<Span>,
    padded: Option<Span>,
}

/// The shape grammar over the workspace's [`Cursor`].
struct Reader<'a> {
    cursor: Cursor<'a>,
}

impl Reader<'_> {
    fn peek(&mut self) -> Option<char> {
        self.cursor.peek()
    }

    fn eat(&mut self, c: char) -> bool {
        self.cursor.eat(c)
    }

    /// The written text of a span.
    fn written(&self, span: Span) -> String {
        fragment_of(self.cursor.slice(span))
    }

    fn error_at(&self, span: Span, message: impl Into<String>) -> XlaError {
        XlaError::Syntax {
            message: message.into(),
            fragment: self.written(span),
            column: self.cursor.char_position(span.start),
        }
    }

    /// A syntax error quoting the token at the cursor (a run of ASCII letters and digits, or one
    /// character).
    fn unexpected(&mut self, message: impl Into<String>) -> XlaError {
        self.cursor.skip_space();
        let span = self.cursor.token_at(self.cursor.offset(), |c| c.is_ascii_alphanumeric());
        self.error_at(span, message)
    }

    fn invalid_at(&self, span: Span, error: XlaError) -> XlaError {
        XlaError::Invalid {
            error: Box::new(error),
            fragment: self.written(span),
            column: self.cursor.char_position(span.start),
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), XlaError> {
        if self.eat(c) { Ok(()) } else { Err(self.unexpected(format!("expected {what}"))) }
    }

    /// An optionally negative integer, with its span.
    fn integer(&mut self, what: &str) -> Result<(i128, Span), XlaError> {
        let Some(integer) = self.cursor.integer() else {
            return Err(self.unexpected(format!("expected {what}")));
        };
        let value = integer
            .value
            .ok_or_else(|| self.error_at(integer.span, format!("{what} is above the limit of 2^63 - 1")))?;
        Ok((value, integer.span))
    }

    /// A non-negative integer no larger than `2^63 - 1`.
    fn size(&mut self, what: &str) -> Result<(u64, Span), XlaError> {
        let (value, span) = self.integer(what)?;
        if value < 0 || self.cursor.slice(span).starts_with('-') {
            return Err(self.error_at(span, format!("{what} must not be negative")));
        }
        let size = u64::try_from(value)
            .ok()
            .filter(|&v| v <= i64::MAX as u64)
            .ok_or_else(|| self.error_at(span, format!("{what} is above the limit of 2^63 - 1")))?;
        Ok((size, span))
    }

    fn shape(&mut self, depth: usize) -> Result<XlaShape, XlaError> {
        match self.peek() {
            Some('(') => self.tuple(depth),
            _ => Ok(XlaShape::Array(self.array()?)),
        }
    }

    fn tuple(&mut self, depth: usize) -> Result<XlaShape, XlaError> {
        if depth >= MAX_TUPLE_DEPTH {
            return Err(self.unexpected(format!("tuples nest deeper than {MAX_TUPLE_DEPTH} levels")));
        }
        self.expect('(', "`(`")?;
        let mut elements = Vec::new();
        if !self.eat(')') {
            loop {
                elements.push(self.shape(depth + 1)?);
                if self.eat(')') {
                    break;
                }
                self.expect(',', "`,` or `)` in the tuple")?;
            }
        }
        Ok(XlaShape::Tuple(elements))
    }

    fn array(&mut self) -> Result<ArrayShape, XlaError> {
        let name_span = self.cursor.take_while_after_space(|c| c.is_ascii_alphanumeric());
        let start = name_span.start;
        if name_span.is_empty() {
            return Err(self.unexpected("expected an element type (such as `f32`) or `(`"));
        }
        let element_type: ElementType =
            self.cursor.slice(name_span).parse().map_err(|e| self.invalid_at(name_span, e))?;
        self.expect('[', "`[` after the element type")?;
        let mut dims = Vec::new();
        let mut dim_spans = Vec::new();
        if !self.eat(']') {
            loop {
                if matches!(self.peek(), Some('?' | '<')) {
                    return Err(self.unexpected("dynamic dimension sizes (`?`, `<=N`) are not supported"));
                }
                let (size, span) = self.size("a dimension size")?;
                dims.push(size);
                dim_spans.push(span);
                if self.eat(']') {
                    break;
                }
                self.expect(',', "`,` or `]` in the dimensions")?;
            }
        }
        let layout = if self.peek() == Some('{') { Some(self.layout(dims.len())?) } else { None };
        let whole = Span::new(start, self.cursor.offset());
        let (layout, spans) = match layout {
            Some(text) => {
                let spans = ArraySpans {
                    whole,
                    dims: dim_spans,
                    minor_to_major: Some(text.minor_to_major),
                    tiles: text.tiles,
                    padded: text.padded,
                };
                (text.layout, spans)
            }
            None => {
                let spans = ArraySpans {
                    whole,
                    dims: dim_spans,
                    minor_to_major: None,
                    tiles: Vec::new(),
                    padded: None,
                };
                (XlaLayout::default_for_rank(dims.len()), spans)
            }
        };
        ArrayShape::new(element_type, dims, layout).map_err(|e| self.locate(&spans, e))
    }

    /// Attaches the text an error from [`ArrayShape::new`] is about.
    fn locate(&self, spans: &ArraySpans, error: XlaError) -> XlaError {
        let span = match &error {
            XlaError::DimTooLarge { dimension, .. } => spans.dims.get(*dimension).copied(),
            XlaError::NotAPermutation { .. } => spans.minor_to_major,
            XlaError::TileTooManyDims { index, .. } => spans.tiles.get(*index).copied(),
            XlaError::PaddedDimensionsRank { .. }
            | XlaError::PaddedDimensionTooSmall { .. }
            | XlaError::PaddedDimensionTooLarge { .. } => spans.padded,
            _ => None,
        };
        self.invalid_at(span.unwrap_or(spans.whole), error)
    }

    fn layout(&mut self, rank: usize) -> Result<LayoutText, XlaError> {
        self.expect('{', "`{`")?;
        let open = self.cursor.offset() - 1;
        let mut minor_to_major = Vec::new();
        self.cursor.skip_space();
        let list_start = self.cursor.offset();
        if !matches!(self.peek(), Some(':' | '}')) {
            loop {
                minor_to_major.push(self.integer("a dimension number")?.0);
                if matches!(self.peek(), Some(':' | '}')) {
                    break;
                }
                self.expect(',', "`,`, `:` or `}` in the layout")?;
            }
        }
        let list_span = if minor_to_major.is_empty() {
            // `{}` or `{:`: quote the braces, there is no list.
            Span { start: open, end: list_start + 1 }
        } else {
            Span::new(list_start, self.cursor.offset())
        };
        let mut items = LayoutItems::default();
        if self.eat(':') {
            while !matches!(self.peek(), Some('}') | None) {
                self.item(&mut items)?;
            }
        }
        self.expect('}', "`}` closing the layout")?;
        // Negative or huge entries cannot be stored as dimension numbers: report them here, with
        // the same error `ArrayShape::new` gives for other non-permutations.
        let minor_to_major: Vec<usize> =
            minor_to_major.iter().map(|&d| usize::try_from(d).ok()).collect::<Option<_>>().ok_or_else(
                || self.invalid_at(list_span, XlaError::NotAPermutation { minor_to_major, rank }),
            )?;
        let mut layout = XlaLayout::new(minor_to_major)
            .with_tiles(items.tiles)
            .with_memory_space(items.memory_space.unwrap_or_default())
            .with_padded_dimensions(items.padded.as_ref().map(|(widths, _)| widths.clone()));
        if let Some(alignment) = items.alignment {
            layout =
                layout.with_tail_padding_alignment(alignment).expect("the alignment was checked when read");
        }
        Ok(LayoutText {
            layout,
            minor_to_major: list_span,
            tiles: items.tile_spans,
            padded: items.padded.map(|(_, span)| span),
        })
    }

    /// One layout item after the `:`.
    fn item(&mut self, items: &mut LayoutItems) -> Result<(), XlaError> {
        self.cursor.skip_space();
        let start = self.cursor.offset();
        let name_span = self.cursor.token_at(start, |c| c.is_ascii_alphanumeric());
        let name = self.cursor.slice(self.cursor.token_at(start, |c| c.is_ascii_alphabetic()));
        let name = if name.starts_with(|c: char| c.is_ascii_alphabetic()) { name } else { "" };
        let twice = |reader: &Self, what: &str| {
            reader.error_at(name_span, format!("{what} given twice in one layout"))
        };
        match name {
            "T" => {
                if items.seen_tiles {
                    return Err(twice(self, "tiles `T(...)`"));
                }
                items.seen_tiles = true;
                self.cursor.advance(1);
                if self.peek() != Some('(') {
                    return Err(self.unexpected("expected `(` starting a tile after `T`"));
                }
                while self.peek() == Some('(') {
                    let (tile, span) = self.tile()?;
                    items.tiles.push(tile);
                    items.tile_spans.push(span);
                }
            }
            "L" => {
                if items.alignment.is_some() {
                    return Err(twice(self, "`L(...)`"));
                }
                self.cursor.advance(1);
                self.expect('(', "`(` after `L`")?;
                let (alignment, span) = self.size("tail_padding_alignment_in_elements")?;
                if alignment == 0 {
                    return Err(self.invalid_at(span, XlaError::ZeroTailPaddingAlignment));
                }
                self.expect(')', "`)` closing `L(`")?;
                items.alignment = Some(alignment);
            }
            "S" => {
                if items.memory_space.is_some() {
                    return Err(twice(self, "`S(...)`"));
                }
                self.cursor.advance(1);
                self.expect('(', "`(` after `S`")?;
                let (id, span) = self.size("a memory space identifier")?;
                let space = MemorySpace::new(id).map_err(|e| self.invalid_at(span, e))?;
                self.expect(')', "`)` closing `S(`")?;
                items.memory_space = Some(space);
            }
            "pad" => {
                if items.padded.is_some() {
                    return Err(twice(self, "`pad(...)`"));
                }
                self.cursor.advance(3);
                self.expect('(', "`(` after `pad`")?;
                let mut widths = Vec::new();
                if !self.eat(')') {
                    loop {
                        widths.push(self.size("a padded width")?.0);
                        if self.eat(')') {
                            break;
                        }
                        self.expect(',', "`,` or `)` in `pad(...)`")?;
                    }
                }
                items.padded = Some((widths, Span::new(start, self.cursor.offset())));
            }
            _ => {
                let unsupported = match name {
                    "D" => Some("dimension level types `D(...)`"),
                    "E" => Some("element size in bits `E(...)`"),
                    "P" => Some("physical shape `P(...)`"),
                    "M" => Some("dynamic shape metadata `M(...)`"),
                    "SC" => Some("split configurations `SC(...)`"),
                    "" if self.cursor.rest().starts_with('#') => Some("index type `#(...)`"),
                    "" if self.cursor.rest().starts_with('*') => Some("pointer type `*(...)`"),
                    _ => None,
                };
                let message = match unsupported {
                    Some(what) => format!("the layout item {what} is not supported"),
                    None => {
                        "expected a layout item: `T(...)`, `L(...)`, `S(...)`, `pad(...)` or `}`".to_string()
                    }
                };
                return Err(self.unexpected(message));
            }
        }
        Ok(())
    }

    /// One tile, `(8,128)`, with its span; a `*` entry is rejected once the tile is read.
    fn tile(&mut self) -> Result<(Tile, Span), XlaError> {
        self.cursor.skip_space();
        let start = self.cursor.offset();
        self.expect('(', "`(` starting a tile")?;
        let mut sizes: Vec<i128> = Vec::new();
        let mut combines = false;
        if self.peek() != Some(')') {
            loop {
                if self.eat('*') {
                    combines = true;
                    sizes.push(-1);
                } else {
                    sizes.push(self.integer("a tile size")?.0);
                }
                if self.eat(')') {
                    break;
                }
                self.expect(',', "`,` or `)` in the tile")?;
            }
        } else {
            self.cursor.advance(1);
        }
        let span = Span::new(start, self.cursor.offset());
        let written = || self.written(span);
        if combines {
            return Err(self.invalid_at(span, XlaError::CombineDimensions { tile: written() }));
        }
        if sizes.is_empty() {
            return Err(self.invalid_at(span, XlaError::EmptyTile));
        }
        for (dimension, &size) in sizes.iter().enumerate() {
            if size <= 0 {
                let error = XlaError::TileSizeNotPositive { tile: written(), dimension, size };
                return Err(self.invalid_at(span, error));
            }
            if size > i128::from(i64::MAX) {
                let error = XlaError::TileSizeTooLarge { tile: written(), dimension, size };
                return Err(self.invalid_at(span, error));
            }
        }
        let dims = sizes.iter().map(|&s| s as u64).collect();
        let tile = Tile::new(dims).map_err(|e| self.invalid_at(span, e))?;
        Ok((tile, span))
    }
}

/// The items of a layout block read so far.
#[derive(Default)]
struct LayoutItems {
    seen_tiles: bool,
    tiles: Vec<Tile>,
    tile_spans: Vec<Span>,
    alignment: Option<u64>,
    memory_space: Option<MemorySpace>,
    padded: Option<(Vec<u64>, Span)>,
}
