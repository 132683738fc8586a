//! The text form of XLA shapes, as HLO dumps write them, and its canonical printing.
//!
//! ```text
//! shape  = array | tuple
//! tuple  = "(" [shape ("," shape)*] ")"
//! array  = type "[" [size ("," size)*] "]" [layout]
//! size   = n | "<=" n | "?"                          static, bounded dynamic, unbounded
//! layout = "{" [dim ("," dim)*] [":" item*] "}"       dims: minor_to_major
//! item   = "T" tile tile*                             tilings, applied in order
//!        | "L(" n ")"                                 tail_padding_alignment_in_elements
//!        | "#(" type ")"                              index_primitive_type
//!        | "*(" type ")"                              pointer_primitive_type
//!        | "E(" n ")"                                 element_size_in_bits
//!        | "S(" n ")"                                 memory space
//!        | "SC" ("(" n ":" [n ("," n)*] ")")+          split configurations (the item may repeat)
//!        | "M(" n ")"                                 dynamic_shape_metadata_prefix_bytes
//!        | "D(" level ("," level)* ")"                dimension level types (sparse arrays)
//!        | "P(" shape ")"                             physical shape (of a sparse array)
//!        | "pad(" [n ("," n)*] ")"                    padded_dimensions (a morello extension)
//! tile   = "(" entry ("," entry)* ")"                 entry: a size or "*" (combine)
//! level  = ("D" | "C" | "S" | "H") ["+"] ["~"]        dense, compressed, singleton, loose
//!                                                     compressed; + not unique, ~ not ordered
//! type   = pred | s1 | s2 | s4 | ... | f8e4m3fn | ... | c64 | c128 | token | opaque
//! ```
//!
//! Spaces are allowed between tokens (also between an array and its layout) and element types
//! are read in any ASCII case (`F32`). Each layout item but `SC` may appear once, in any order.
//! XLA has no text for the older `padded_dimensions`; `pad(3,5)` gives the width of every
//! dimension in dimension-number order. A layout with a `D(..)` entry other than `D` describes a
//! sparse array: it is read, checked and printed, but has no dense buffer (a
//! [`BufferlessArrayShape`], like an array with a `?` dimension). `P(..)` is kept as it is
//! printed and changes no offsets.
//!
//! Printing is canonical and follows XLA's `Layout::ToString` order: lower-case type, no spaces
//! except `, ` between tuple elements, the layout always written for arrays with dimensions
//! (the default `{N-1,...,0}` included) and omitted for a scalar whose layout is the default,
//! items in the order `D pad T L # * E S SC P M`, and `L(1)`, `E(0)`, `S(0)`, `M(0)` omitted. Every
//! printed shape parses back to the same value.

use std::fmt;
use std::str::FromStr;

use morello_core::text::{Cursor, Span};

use super::error::fragment_of;
use super::{
    ArrayShape, BufferlessArrayShape, DimLevel, DimLevelType, DimSize, ElementType, MemorySpace, SplitConfig,
    Tile, TileDim, XlaError, XlaLayout, XlaShape,
};

/// How deep tuples may nest in text (deeper text is rejected rather than risking the stack).
const MAX_TUPLE_DEPTH: usize = 64;

impl fmt::Display for TileDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TileDim::Size(size) => write!(f, "{size}"),
            TileDim::Combine => f.write_str("*"),
        }
    }
}

impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({})", join(self.entries(), ","))
    }
}

/// Prints `SC(0:2,4)`, one configuration alone (a layout prints all of its configurations
/// after one `SC`: `SC(0:2,4)(1:3)`).
impl fmt::Display for SplitConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SC({}:{})", self.dimension, join(&self.split_indices, ","))
    }
}

impl fmt::Display for DimSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DimSize::Static(size) => write!(f, "{size}"),
            DimSize::Bounded(size) => write!(f, "<={size}"),
            DimSize::Unbounded => f.write_str("?"),
        }
    }
}

impl fmt::Display for DimLevelType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.level.letter())?;
        if !self.unique {
            f.write_str("+")?;
        }
        if !self.ordered {
            f.write_str("~")?;
        }
        Ok(())
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
        if !self.dim_level_types().is_empty() {
            items += &format!("D({})", join(self.dim_level_types(), ","));
        }
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
        if let Some(index) = self.index_primitive_type() {
            items += &format!("#({index})");
        }
        if let Some(pointer) = self.pointer_primitive_type() {
            items += &format!("*({pointer})");
        }
        if self.element_size_in_bits() != 0 {
            items += &format!("E({})", self.element_size_in_bits());
        }
        if self.memory_space() != MemorySpace::DEVICE_HBM {
            items += &self.memory_space().to_string();
        }
        if !self.split_configs().is_empty() {
            items += "SC";
            for split in self.split_configs() {
                items += &format!("({}:{})", split.dimension, join(&split.split_indices, ","));
            }
        }
        if let Some(physical) = self.physical_shape() {
            items += &format!("P({physical})");
        }
        if self.dynamic_shape_metadata_prefix_bytes() != 0 {
            items += &format!("M({})", self.dynamic_shape_metadata_prefix_bytes());
        }
        if !items.is_empty() {
            write!(f, ":{items}")?;
        }
        f.write_str("}")
    }
}

impl fmt::Display for ArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_array(f, self.element_type(), &self.dim_sizes(), self.layout())
    }
}

impl fmt::Display for BufferlessArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_array(f, self.element_type(), self.dims(), self.layout())
    }
}

fn write_array(
    f: &mut fmt::Formatter<'_>,
    element_type: ElementType,
    dims: &[DimSize],
    layout: &XlaLayout,
) -> fmt::Result {
    write!(f, "{element_type}[{}]", join(dims, ","))?;
    if !(dims.is_empty() && layout.is_default_for_rank(0)) {
        write!(f, "{layout}")?;
    }
    Ok(())
}

impl fmt::Display for XlaShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            XlaShape::Array(array) => write!(f, "{array}"),
            XlaShape::Bufferless(array) => write!(f, "{array}"),
            XlaShape::Tuple(elements) => write!(f, "({})", join(elements, ", ")),
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
            XlaShape::Bufferless(array) => Err(array.why_no_buffer()),
        }
    }
}

/// Where the parts of one array's text are, to locate errors found once the array is built.
struct ArraySpans {
    whole: Span,
    dims: Vec<Span>,
    minor_to_major: Option<Span>,
    padded: Option<Span>,
}

/// A layout block as read, before it meets its shape.
struct LayoutText {
    layout: XlaLayout,
    minor_to_major: Span,
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

    /// Items separated by `,` up to `close`, which is consumed; perhaps none. `separator` says
    /// what was expected after an item (`` `,` or `)` in the tuple ``).
    fn list<T>(
        &mut self,
        close: char,
        separator: &str,
        item: impl FnMut(&mut Self) -> Result<T, XlaError>,
    ) -> Result<Vec<T>, XlaError> {
        if self.eat(close) { Ok(Vec::new()) } else { self.non_empty_list(close, separator, item) }
    }

    /// As [`Self::list`], with at least one item.
    fn non_empty_list<T>(
        &mut self,
        close: char,
        separator: &str,
        mut item: impl FnMut(&mut Self) -> Result<T, XlaError>,
    ) -> Result<Vec<T>, XlaError> {
        let mut items = Vec::new();
        loop {
            items.push(item(self)?);
            if self.eat(close) {
                return Ok(items);
            }
            self.expect(',', separator)?;
        }
    }

    /// The layout item `name(...)` at the cursor: `body` reads what is between the parentheses.
    fn parenthesised<T>(
        &mut self,
        name: &str,
        body: impl FnOnce(&mut Self) -> Result<T, XlaError>,
    ) -> Result<T, XlaError> {
        self.cursor.advance(name.len());
        self.expect('(', &format!("`(` after `{name}`"))?;
        let value = body(self)?;
        self.expect(')', &format!("`)` closing `{name}(`"))?;
        Ok(value)
    }

    fn shape(&mut self, depth: usize) -> Result<XlaShape, XlaError> {
        match self.peek() {
            Some('(') => self.tuple(depth),
            _ => self.array(depth),
        }
    }

    fn tuple(&mut self, depth: usize) -> Result<XlaShape, XlaError> {
        if depth >= MAX_TUPLE_DEPTH {
            return Err(self.unexpected(format!("tuples nest deeper than {MAX_TUPLE_DEPTH} levels")));
        }
        self.expect('(', "`(`")?;
        let elements = self.list(')', "`,` or `)` in the tuple", |reader| reader.shape(depth + 1))?;
        Ok(XlaShape::Tuple(elements))
    }

    fn array(&mut self, depth: usize) -> Result<XlaShape, XlaError> {
        let name_span = self.cursor.take_while_after_space(|c| c.is_ascii_alphanumeric());
        let start = name_span.start;
        if name_span.is_empty() {
            return Err(self.unexpected("expected an element type (such as `f32`) or `(`"));
        }
        let element_type: ElementType =
            self.cursor.slice(name_span).parse().map_err(|e| self.invalid_at(name_span, e))?;
        self.expect('[', "`[` after the element type")?;
        let (dims, dim_spans): (Vec<DimSize>, Vec<Span>) = self
            .list(']', "`,` or `]` in the dimensions", |reader| {
                reader.cursor.skip_space();
                let dim_start = reader.cursor.offset();
                let size = if reader.eat('?') {
                    DimSize::Unbounded
                } else if reader.cursor.eat_str("<=") {
                    DimSize::Bounded(reader.size("a dimension bound")?.0)
                } else {
                    DimSize::Static(reader.size("a dimension size")?.0)
                };
                Ok((size, Span::new(dim_start, reader.cursor.offset())))
            })?
            .into_iter()
            .unzip();
        let layout = if self.peek() == Some('{') { Some(self.layout(dims.len(), depth)?) } else { None };
        let whole = Span::new(start, self.cursor.offset());
        let (layout, spans) = match layout {
            Some(text) => {
                let spans = ArraySpans {
                    whole,
                    dims: dim_spans,
                    minor_to_major: Some(text.minor_to_major),
                    padded: text.padded,
                };
                (text.layout, spans)
            }
            None => {
                let spans = ArraySpans { whole, dims: dim_spans, minor_to_major: None, padded: None };
                (XlaLayout::default_for_rank(dims.len()), spans)
            }
        };
        if dims.contains(&DimSize::Unbounded) || layout.is_sparse() {
            let array =
                BufferlessArrayShape::new(element_type, dims, layout).map_err(|e| self.locate(&spans, e))?;
            return Ok(XlaShape::Bufferless(array));
        }
        let dynamic = dims.iter().map(|d| matches!(d, DimSize::Bounded(_))).collect();
        let sizes = dims
            .iter()
            .map(|d| match *d {
                DimSize::Static(size) | DimSize::Bounded(size) => size,
                DimSize::Unbounded => unreachable!("unbounded dimensions were handled above"),
            })
            .collect();
        let array = ArrayShape::new(element_type, sizes, layout)
            .and_then(|array| array.with_dynamic_dimensions(dynamic))
            .map_err(|e| self.locate(&spans, e))?;
        Ok(XlaShape::Array(array))
    }

    /// Attaches the text an error from [`ArrayShape::new`] is about.
    fn locate(&self, spans: &ArraySpans, error: XlaError) -> XlaError {
        let span = match &error {
            XlaError::DimTooLarge { dimension, .. } => spans.dims.get(*dimension).copied(),
            XlaError::NotAPermutation { .. } => spans.minor_to_major,
            XlaError::PaddedDimensionsRank { .. }
            | XlaError::PaddedDimensionTooSmall { .. }
            | XlaError::PaddedDimensionTooLarge { .. } => spans.padded,
            _ => None,
        };
        self.invalid_at(span.unwrap_or(spans.whole), error)
    }

    fn layout(&mut self, rank: usize, depth: usize) -> Result<LayoutText, XlaError> {
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
                self.item(&mut items, depth)?;
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
            .with_padded_dimensions(items.padded.as_ref().map(|(widths, _)| widths.clone()))
            .with_sparse_types(items.index_type, items.pointer_type)
            .with_split_configs(items.split_configs)
            .with_element_size_in_bits(items.element_bits.unwrap_or(0))
            .expect("the element size was checked when read")
            .with_dynamic_shape_metadata_prefix_bytes(items.metadata_bytes.unwrap_or(0))
            .expect("the prefix was checked when read")
            .with_dim_level_types(items.dim_level_types.unwrap_or_default())
            .with_physical_shape(items.physical_shape.as_ref());
        if let Some(alignment) = items.alignment {
            layout =
                layout.with_tail_padding_alignment(alignment).expect("the alignment was checked when read");
        }
        Ok(LayoutText { layout, minor_to_major: list_span, padded: items.padded.map(|(_, span)| span) })
    }

    /// One layout item after the `:`.
    fn item(&mut self, items: &mut LayoutItems, depth: usize) -> Result<(), XlaError> {
        self.cursor.skip_space();
        let start = self.cursor.offset();
        let name_span = self.cursor.token_at(start, |c| c.is_ascii_alphanumeric());
        let name = self.cursor.slice(self.cursor.token_at(start, |c| c.is_ascii_alphabetic()));
        let name = if name.starts_with(|c: char| c.is_ascii_alphabetic()) { name } else { "" };
        // Refuses an item given before (`what` names it).
        let once = |reader: &Self, given: bool, what: &str| {
            if given {
                Err(reader.error_at(name_span, format!("{what} given twice in one layout")))
            } else {
                Ok(())
            }
        };
        match name {
            "T" => {
                once(self, items.seen_tiles, "tiles `T(...)`")?;
                items.seen_tiles = true;
                self.cursor.advance(1);
                if self.peek() != Some('(') {
                    return Err(self.unexpected("expected `(` starting a tile after `T`"));
                }
                while self.peek() == Some('(') {
                    items.tiles.push(self.tile()?);
                }
            }
            "L" => {
                once(self, items.alignment.is_some(), "`L(...)`")?;
                let alignment = self.parenthesised("L", |reader| {
                    let (alignment, span) = reader.size("tail_padding_alignment_in_elements")?;
                    if alignment == 0 {
                        return Err(reader.invalid_at(span, XlaError::ZeroTailPaddingAlignment));
                    }
                    Ok(alignment)
                })?;
                items.alignment = Some(alignment);
            }
            "S" => {
                once(self, items.memory_space.is_some(), "`S(...)`")?;
                let space = self.parenthesised("S", |reader| {
                    let (id, span) = reader.size("a memory space identifier")?;
                    MemorySpace::new(id).map_err(|e| reader.invalid_at(span, e))
                })?;
                items.memory_space = Some(space);
            }
            "E" => {
                once(self, items.element_bits.is_some(), "`E(...)`")?;
                let bits = self.parenthesised("E", |reader| reader.size("an element size in bits"))?.0;
                items.element_bits = Some(bits);
            }
            "M" => {
                once(self, items.metadata_bytes.is_some(), "`M(...)`")?;
                let bytes = self
                    .parenthesised("M", |reader| reader.size("a dynamic shape metadata prefix in bytes"))?
                    .0;
                items.metadata_bytes = Some(bytes);
            }
            "D" => {
                once(self, items.dim_level_types.is_some(), "dimension level types `D(...)`")?;
                self.cursor.advance(1);
                self.expect('(', "`(` after `D`")?;
                let levels = self.non_empty_list(')', "`,` or `)` in `D(...)`", |reader| {
                    reader.cursor.skip_space();
                    let Some(level) = reader.peek().and_then(DimLevel::from_letter) else {
                        return Err(reader.unexpected(
                            "expected a dimension level type: `D` (dense), `C` (compressed), `S` (singleton) \
                             or `H` (loose compressed)",
                        ));
                    };
                    reader.cursor.advance(1);
                    let unique = !reader.eat('+');
                    let ordered = !reader.eat('~');
                    Ok(DimLevelType { level, unique, ordered })
                })?;
                items.dim_level_types = Some(levels);
            }
            "P" => {
                once(self, items.physical_shape.is_some(), "physical shape `P(...)`")?;
                if depth >= MAX_TUPLE_DEPTH {
                    return Err(self.unexpected(format!("shapes nest deeper than {MAX_TUPLE_DEPTH} levels")));
                }
                items.physical_shape = Some(self.parenthesised("P", |reader| reader.shape(depth + 1))?);
            }
            "SC" => {
                // XLA writes every split configuration after one `SC`: `SC(0:3)(1:0,4)`.
                self.cursor.advance(2);
                if self.peek() != Some('(') {
                    return Err(self.unexpected("expected `(` after `SC`"));
                }
                while self.eat('(') {
                    let dimension = self.size("a dimension number")?.0;
                    self.expect(':', "`:` after the dimension in `SC(`")?;
                    let split_indices = self
                        .list(')', "`,` or `)` in `SC(...)`", |reader| Ok(reader.size("a split index")?.0))?;
                    items.split_configs.push(SplitConfig { dimension, split_indices });
                }
            }
            "" if self.cursor.rest().starts_with(['#', '*']) => {
                let pointer = self.cursor.rest().starts_with('*');
                let (slot, what) = if pointer {
                    (&mut items.pointer_type, "`*(...)`")
                } else {
                    (&mut items.index_type, "`#(...)`")
                };
                once(self, slot.is_some(), what)?;
                self.cursor.advance(1);
                self.expect('(', "`(` starting a primitive type")?;
                let span = self.cursor.take_while_after_space(|c| c.is_ascii_alphanumeric());
                let element_type: ElementType =
                    self.cursor.slice(span).parse().map_err(|e| self.invalid_at(span, e))?;
                self.expect(')', "`)` closing the primitive type")?;
                if pointer {
                    items.pointer_type = Some(element_type);
                } else {
                    items.index_type = Some(element_type);
                }
            }
            "pad" => {
                once(self, items.padded.is_some(), "`pad(...)`")?;
                self.cursor.advance(3);
                self.expect('(', "`(` after `pad`")?;
                let widths = self
                    .list(')', "`,` or `)` in `pad(...)`", |reader| Ok(reader.size("a padded width")?.0))?;
                items.padded = Some((widths, Span::new(start, self.cursor.offset())));
            }
            _ => {
                return Err(self.unexpected(
                    "expected a layout item: `T(...)`, `L(...)`, `E(...)`, `S(...)`, `SC(...)`, `M(...)`, \
                     `#(...)`, `*(...)`, `D(...)`, `P(...)`, `pad(...)` or `}`",
                ));
            }
        }
        Ok(())
    }

    /// One tile, `(8,128)` or `(*,2,128)`.
    fn tile(&mut self) -> Result<Tile, XlaError> {
        self.cursor.skip_space();
        let start = self.cursor.offset();
        self.expect('(', "`(` starting a tile")?;
        let sizes: Vec<Option<i128>> = self.list(')', "`,` or `)` in the tile", |reader| {
            if reader.eat('*') { Ok(None) } else { Ok(Some(reader.integer("a tile size or `*`")?.0)) }
        })?;
        let span = Span::new(start, self.cursor.offset());
        let written = || self.written(span);
        let mut entries = Vec::with_capacity(sizes.len());
        for (dimension, size) in sizes.into_iter().enumerate() {
            let entry = match size {
                None => TileDim::Combine,
                Some(size) if size <= 0 => {
                    let error = XlaError::TileSizeNotPositive { tile: written(), dimension, size };
                    return Err(self.invalid_at(span, error));
                }
                Some(size) if size > i128::from(i64::MAX) => {
                    let error = XlaError::TileSizeTooLarge { tile: written(), dimension, size };
                    return Err(self.invalid_at(span, error));
                }
                Some(size) => TileDim::Size(size as u64),
            };
            entries.push(entry);
        }
        Tile::with_entries(entries).map_err(|e| self.invalid_at(span, e))
    }
}

/// The items of a layout block read so far.
#[derive(Default)]
struct LayoutItems {
    seen_tiles: bool,
    tiles: Vec<Tile>,
    alignment: Option<u64>,
    memory_space: Option<MemorySpace>,
    padded: Option<(Vec<u64>, Span)>,
    element_bits: Option<u64>,
    metadata_bytes: Option<u64>,
    split_configs: Vec<SplitConfig>,
    index_type: Option<ElementType>,
    pointer_type: Option<ElementType>,
    dim_level_types: Option<Vec<DimLevelType>>,
    physical_shape: Option<XlaShape>,
}
