//! [`XlaError`]: why XLA shape text, a shape value, or an index into it is invalid.
//!
//! Every variant is the user's fault (their text, or the values a caller passes on from a user).
//! Errors found while reading text are [`XlaError::Syntax`] or [`XlaError::Invalid`], which name
//! the offending part of the text and its column, so a message reads like
//! ``"`T(8,0)` at column 12: tile (8,0) has size 0 in its dimension 1; tile sizes must be at least 1"``.
//! Messages are one line: control characters in quoted text are escaped.

/// Why an XLA shape, layout, or index is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XlaError {
    /// The text is not in the shape syntax (the user's text).
    #[error("{} at column {column}: {message}", quoted(.fragment))]
    Syntax {
        /// What was expected or what is wrong.
        message: String,
        /// The offending part of the text (empty at the end of the text).
        fragment: String,
        /// Its 1-based column, in characters.
        column: usize,
    },
    /// A well-formed part of the text whose value breaks a rule (the user's text).
    #[error("{} at column {column}: {error}", quoted(.fragment))]
    Invalid {
        /// The rule that is broken.
        error: Box<XlaError>,
        /// The part of the text that holds the value.
        fragment: String,
        /// Its 1-based column, in characters.
        column: usize,
    },
    /// An element type name that is not supported (the user's text).
    #[error("unknown element type `{name}`; supported: {}", super::ElementType::supported_names())]
    UnknownElementType {
        /// The name as written.
        name: String,
    },
    /// A dimension size above `i64::MAX` (the user's input).
    #[error("dimension {dimension} has size {size}, above the limit of 2^63 - 1")]
    DimTooLarge {
        /// Which dimension.
        dimension: usize,
        /// Its size.
        size: u64,
    },
    /// `minor_to_major` is not a permutation of `0..rank` (the user's input).
    #[error("minor_to_major {} is not a permutation of the shape's {}", list(.minor_to_major), dims_range(*.rank))]
    NotAPermutation {
        /// The list as given.
        minor_to_major: Vec<i128>,
        /// The shape's number of dimensions.
        rank: usize,
    },
    /// A tile with no dimensions, `T()` (the user's input).
    #[error("a tile needs at least one dimension")]
    EmptyTile,
    /// A tile size of zero or less (the user's input).
    #[error("tile {tile} has size {size} in its dimension {dimension}; tile sizes must be at least 1")]
    TileSizeNotPositive {
        /// The tile as written.
        tile: String,
        /// Which dimension of the tile.
        dimension: usize,
        /// The size.
        size: i128,
    },
    /// A tile size above `i64::MAX` (the user's input).
    #[error("tile {tile} has size {size} in its dimension {dimension}, above the limit of 2^63 - 1")]
    TileSizeTooLarge {
        /// The tile as written.
        tile: String,
        /// Which dimension of the tile.
        dimension: usize,
        /// The size.
        size: i128,
    },
    /// A tile whose last entry is `*`, with no more minor dimension to combine into (the
    /// user's input).
    #[error("tile {tile} ends with `*`, but `*` combines a dimension with the next more minor one")]
    CombineLast {
        /// The tile as text.
        tile: String,
    },
    /// `E(n)` narrower than the element type (the user's input).
    #[error("E({bits}) is narrower than {element_type}, which needs {needed} bits")]
    ElementSizeTooSmall {
        /// The element size given.
        bits: u64,
        /// The element type.
        element_type: super::ElementType,
        /// Its bit width.
        needed: u32,
    },
    /// `token` or `opaque` with dimensions or a layout (the user's input).
    #[error("{element_type} is not an array element type; it is written `{element_type}[]` alone")]
    NotAnArrayElement {
        /// The type.
        element_type: super::ElementType,
    },
    /// A split configuration naming a dimension the shape does not have (the user's input).
    #[error("SC({dimension}:...) splits dimension {dimension}, but the shape has {}", dims_range(*.rank))]
    SplitDimensionOutOfRange {
        /// The dimension named.
        dimension: u64,
        /// The shape's number of dimensions.
        rank: usize,
    },
    /// An unbounded dimension (`?`) where a size is needed (the user's shape).
    #[error("dimension {dimension} is unbounded (`?`): its size is known only at run time")]
    Unbounded {
        /// Which dimension.
        dimension: usize,
    },
    /// A sparse array (a `D(..)` entry other than dense) where a dense buffer is needed.
    #[error("the layout's D(..) makes this a sparse array, which has no dense buffer or offsets")]
    Sparse,
    /// `D(..)` with a number of entries other than the shape's rank (the user's input).
    #[error("D(..) has {len} dimension level types, but the shape has {rank} dimensions")]
    DimLevelTypesRank {
        /// The number of entries given.
        len: usize,
        /// The shape's number of dimensions.
        rank: usize,
    },
    /// `padded_dimensions` with a length other than the shape's rank (the user's input).
    #[error("padded_dimensions has {len} entries, but the shape has {rank} dimensions")]
    PaddedDimensionsRank {
        /// The number of entries given.
        len: usize,
        /// The shape's number of dimensions.
        rank: usize,
    },
    /// A padded width below its dimension's size (the user's input).
    #[error("padded_dimensions gives dimension {dimension} (size {size}) the smaller width {padded}")]
    PaddedDimensionTooSmall {
        /// Which dimension.
        dimension: usize,
        /// Its size.
        size: u64,
        /// The width given.
        padded: u64,
    },
    /// A padded width above `i64::MAX` (the user's input).
    #[error("padded_dimensions gives dimension {dimension} the width {padded}, above the limit of 2^63 - 1")]
    PaddedDimensionTooLarge {
        /// Which dimension.
        dimension: usize,
        /// The width given.
        padded: u64,
    },
    /// `tail_padding_alignment_in_elements` of zero (the user's input).
    #[error("tail_padding_alignment_in_elements must be at least 1, not 0")]
    ZeroTailPaddingAlignment,
    /// A value that does not fit XLA's `int64` (the user's input).
    #[error("{what} is {value}, above the limit of 2^63 - 1")]
    TooLarge {
        /// What the value is.
        what: &'static str,
        /// The value.
        value: u128,
    },
    /// Sizes that overflow 64-bit arithmetic once tiled or padded (the user's input).
    #[error("{what} exceeds 2^63 - 1")]
    Overflow {
        /// What overflows, in words.
        what: String,
    },
    /// A dimension number outside `-rank..rank` (the caller's input).
    #[error("dimension {dimension} is out of range for a shape with {rank} dimensions")]
    DimensionOutOfRange {
        /// The dimension number (negative counts from the end).
        dimension: i64,
        /// The shape's number of dimensions.
        rank: usize,
    },
    /// An array was needed but the text is a tuple (the user's input).
    #[error("expected an array shape, found the tuple {shape}")]
    NotAnArray {
        /// The tuple as text.
        shape: String,
    },
    /// A multi-index with the wrong number of coordinates (the caller's input).
    #[error("index has {len} coordinates, but the shape has {rank} dimensions")]
    IndexRank {
        /// The index's length.
        len: usize,
        /// The shape's number of dimensions.
        rank: usize,
    },
    /// A coordinate outside its dimension (the caller's input).
    #[error("coordinate {coordinate} is outside dimension {dimension} of size {size}")]
    IndexOutOfBounds {
        /// Which dimension.
        dimension: usize,
        /// The coordinate.
        coordinate: u64,
        /// The dimension's size.
        size: u64,
    },
    /// A linear index outside the buffer (the caller's input).
    #[error("linear index {index} is outside the buffer of {buffer_elements} elements")]
    LinearIndexOutOfBounds {
        /// The linear index.
        index: u64,
        /// The buffer's size in elements.
        buffer_elements: u64,
    },
}

/// A fragment of text as an error message shows it.
fn quoted(fragment: &str) -> String {
    if fragment.is_empty() { "the end of the text".to_string() } else { format!("`{fragment}`") }
}

/// The dimension numbers of a shape with `rank` dimensions: `dims 0..1` for rank 2.
fn dims_range(rank: usize) -> String {
    match rank {
        0 => "no dimensions".to_string(),
        1 => "dim 0".to_string(),
        _ => format!("dims 0..{}", rank - 1),
    }
}

/// `[a, b, c]`.
fn list(values: &[i128]) -> String {
    let items: Vec<String> = values.iter().map(i128::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// The longest fragment an error quotes, in characters.
const MAX_FRAGMENT_CHARS: usize = 48;

/// A fragment of user text made safe for a one-line message: control characters escaped and
/// long text cut short with `...`.
pub(crate) fn fragment_of(text: &str) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == MAX_FRAGMENT_CHARS {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
