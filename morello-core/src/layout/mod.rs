//! Layouts: how a tensor's logical points are arranged in its buffer (seed 004).
//!
//! A [`Layout`] is a list of physical dimensions from slowest to fastest varying, each tied to a
//! logical dimension and one of three kinds ([`PhysDim`]):
//!
//! - `Dynamic`: the rest of that logical dimension, its size inferred from the shape;
//! - `Packed(n)`: a strip of `n` elements of that logical dimension;
//! - `OddEven(n)`: a strip of `n` elements stored with the even-indexed ones first, then the odd.
//!
//! The physical dims of one logical dimension `d` split its index `i` into mixed-radix digits,
//! outermost first: with sizes `s_1, ..., s_m` and `inner_j = s_{j+1} * ... * s_m`, digit `j` is
//! `q_j = (i floordiv inner_j) mod s_j`. The physical coordinate is `q_j` for `Dynamic` and
//! `Packed`, and `q_j floordiv 2 + (q_j mod 2) * (n / 2)` for `OddEven(n)`. The buffer offset is
//! the row-major position of the physical coordinates:
//!
//! ```text
//! offset = Σ_j coord_j * stride_j,   stride_j = Π_{k > j} s_k
//! ```
//!
//! Text form: `[1, 0, 1 p(4)]`, `[0, 1 oe(16)]`; [`Layout::parse_for_rank`] also accepts the names
//! `row-major` and `col-major`.
//!
//! This module knows shapes and index expressions; it knows nothing of memory levels or specs.

mod canon;
mod index;
#[cfg(test)]
mod tests;
mod text;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::shape::Shape;

pub use canon::LayoutView;
pub use index::LayoutIndexer;
pub use text::LayoutParseError;

/// The kind of one physical dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PhysDim {
    /// The remainder of its logical dimension; the size comes from the shape.
    Dynamic,
    /// A strip of this many consecutive elements (at least 2).
    Packed(u32),
    /// A strip of this many elements (even, at least 2), even-indexed elements first.
    OddEven(u32),
}

/// One physical dimension: which logical dimension it walks, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LayoutDim {
    /// The logical dimension.
    pub logical: u8,
    /// The kind of physical dimension.
    pub kind: PhysDim,
}

impl LayoutDim {
    /// A `Dynamic` physical dim of logical dim `logical`.
    pub const fn dynamic(logical: u8) -> Self {
        LayoutDim { logical, kind: PhysDim::Dynamic }
    }

    /// A `Packed(n)` physical dim of logical dim `logical`.
    pub const fn packed(logical: u8, n: u32) -> Self {
        LayoutDim { logical, kind: PhysDim::Packed(n) }
    }

    /// An `OddEven(n)` physical dim of logical dim `logical`.
    pub const fn odd_even(logical: u8, n: u32) -> Self {
        LayoutDim { logical, kind: PhysDim::OddEven(n) }
    }
}

/// The most physical dims a layout may have.
pub const MAX_PHYSICAL_DIMS: usize = 64;

/// Why a layout is invalid, alone or for a shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// More than [`MAX_PHYSICAL_DIMS`] physical dims (the user's layout).
    #[error("a layout may have at most 64 physical dims, found {count}")]
    TooManyDims {
        /// How many there were.
        count: usize,
    },
    /// A `Packed` or `OddEven` size below 2 (the user's layout).
    #[error("physical dim {position} (`{dim}`) has size {size}; packings must have size at least 2")]
    PackingTooSmall {
        /// Index in the layout.
        position: usize,
        /// The physical dim as text.
        dim: String,
        /// Its size.
        size: u32,
    },
    /// An odd `OddEven` size (the user's layout).
    #[error("physical dim {position} (`{dim}`) is an odd-even strip of odd size {size}; it must be even")]
    OddEvenNotEven {
        /// Index in the layout.
        position: usize,
        /// The physical dim as text.
        dim: String,
        /// Its size.
        size: u32,
    },
    /// Two `Dynamic` dims for one logical dimension (the user's layout).
    #[error(
        "logical dimension {logical} has two Dynamic physical dims (positions {first} and {second}); at most one is allowed"
    )]
    DuplicateDynamic {
        /// The logical dimension.
        logical: u8,
        /// Index of the first.
        first: usize,
        /// Index of the second.
        second: usize,
    },
    /// A `Dynamic` faster than a packing of the same logical dimension (the user's layout).
    #[error(
        "the Dynamic dim of logical dimension {logical} (position {dynamic}) must come before its packing at position {packing}"
    )]
    DynamicInsidePacking {
        /// The logical dimension.
        logical: u8,
        /// Index of the Dynamic.
        dynamic: usize,
        /// Index of the packing it follows.
        packing: usize,
    },
    /// A physical dim names a logical dimension the shape does not have (the user's input).
    #[error("physical dim {position} names logical dimension {logical}, but the shape has rank {rank}")]
    DimOutOfRange {
        /// Index in the layout.
        position: usize,
        /// The logical dimension named.
        logical: u8,
        /// The shape's rank.
        rank: usize,
    },
    /// A packing does not divide what is left of its logical dimension (the user's input).
    #[error(
        "physical dim {position} (`{dim}`) does not divide the remaining size {remaining} of logical dimension {logical}"
    )]
    PackingDoesNotDivide {
        /// Index in the layout.
        position: usize,
        /// The physical dim as text.
        dim: String,
        /// The logical dimension.
        logical: u8,
        /// Its size left after the faster packings.
        remaining: u64,
    },
    /// A logical dimension without a `Dynamic` whose packings do not cover it (the user's input).
    #[error(
        "logical dimension {logical} has size {size} but its packings cover only {covered}; add a Dynamic dim (`{logical}`)"
    )]
    NotCovered {
        /// The logical dimension.
        logical: u8,
        /// Its size.
        size: u64,
        /// The product of its packings.
        covered: u64,
    },
    /// A tile's rank differs from its parent's (a caller bug or bad input).
    #[error("tile shape {tile} has a different rank from the tensor shape {parent}")]
    TileRankMismatch {
        /// The parent shape.
        parent: String,
        /// The tile shape.
        tile: String,
    },
    /// A tile is larger than its parent in some dimension.
    #[error("tile size {tile} of dimension {logical} exceeds the tensor's size {parent}")]
    TileTooLarge {
        /// The logical dimension.
        logical: u8,
        /// The tile's size.
        tile: u32,
        /// The parent's size.
        parent: u32,
    },
    /// A tile that cuts a strip of the layout unevenly, so it is not a box of the buffer.
    #[error("a tile of {tile} along dimension {logical} does not fit the layout's strip `{dim}` of {strip}")]
    TileSplitsStrip {
        /// The logical dimension.
        logical: u8,
        /// The tile's size.
        tile: u32,
        /// The physical dim as text.
        dim: String,
        /// The strip size.
        strip: u64,
    },
}

/// A layout: physical dimensions from slowest to fastest varying.
///
/// # Invariants
/// Shape-independent rules hold: packings have size at least 2, `OddEven` sizes are even, each
/// logical dimension has at most one `Dynamic`, and it is slower than that dimension's packings.
/// Rules that need a shape (packings divide, dims in range) are checked by the methods taking one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "Vec<LayoutDim>", into = "Vec<LayoutDim>")]
pub struct Layout {
    dims: SmallVec<[LayoutDim; 5]>,
}

impl Layout {
    /// A layout from physical dims, slowest first.
    ///
    /// # Errors
    /// [`LayoutError`] naming the first broken rule.
    pub fn new(dims: Vec<LayoutDim>) -> Result<Self, LayoutError> {
        if dims.len() > MAX_PHYSICAL_DIMS {
            return Err(LayoutError::TooManyDims { count: dims.len() });
        }
        let mut dynamic_at: Vec<Option<usize>> = Vec::new();
        let mut first_packing: Vec<Option<usize>> = Vec::new();
        for (position, dim) in dims.iter().enumerate() {
            let logical = usize::from(dim.logical);
            if dynamic_at.len() <= logical {
                dynamic_at.resize(logical + 1, None);
                first_packing.resize(logical + 1, None);
            }
            match dim.kind {
                PhysDim::Dynamic => {
                    if let Some(first) = dynamic_at[logical] {
                        return Err(LayoutError::DuplicateDynamic {
                            logical: dim.logical,
                            first,
                            second: position,
                        });
                    }
                    if let Some(packing) = first_packing[logical] {
                        return Err(LayoutError::DynamicInsidePacking {
                            logical: dim.logical,
                            dynamic: position,
                            packing,
                        });
                    }
                    dynamic_at[logical] = Some(position);
                }
                PhysDim::Packed(size) | PhysDim::OddEven(size) => {
                    if size < 2 {
                        return Err(LayoutError::PackingTooSmall {
                            position,
                            dim: text::dim_text(dim),
                            size,
                        });
                    }
                    if matches!(dim.kind, PhysDim::OddEven(_)) && size % 2 != 0 {
                        return Err(LayoutError::OddEvenNotEven { position, dim: text::dim_text(dim), size });
                    }
                    first_packing[logical].get_or_insert(position);
                }
            }
        }
        Ok(Layout { dims: SmallVec::from_vec(dims) })
    }

    /// The row-major layout of a rank-`rank` tensor: `[0, 1, ..., rank - 1]`.
    pub fn row_major(rank: u8) -> Self {
        Layout { dims: (0..rank).map(LayoutDim::dynamic).collect() }
    }

    /// The column-major layout of a rank-`rank` tensor: `[rank - 1, ..., 1, 0]`.
    pub fn col_major(rank: u8) -> Self {
        Layout { dims: (0..rank).rev().map(LayoutDim::dynamic).collect() }
    }

    /// The physical dims, slowest first.
    pub fn dims(&self) -> &[LayoutDim] {
        &self.dims
    }

    /// Bytes the layout holds on the heap: 0 up to five physical dims (stored inline), else its
    /// buffer.
    pub fn heap_bytes(&self) -> usize {
        if self.dims.spilled() { self.dims.capacity() * size_of::<LayoutDim>() } else { 0 }
    }

    /// The number of physical dims.
    pub fn len(&self) -> usize {
        self.dims.len()
    }

    /// Whether the layout has no physical dim (a tensor whose dims are all 1).
    pub fn is_empty(&self) -> bool {
        self.dims.is_empty()
    }

    /// The size of every physical dim for `shape`, checking the rules that need a shape.
    ///
    /// # Errors
    /// [`LayoutError`] if a dim is out of range, a packing does not divide, a logical dimension
    /// is not covered.
    pub fn physical_sizes(&self, shape: &Shape) -> Result<Vec<u64>, LayoutError> {
        index::physical_sizes(self, shape)
    }

    /// [`Layout::physical_sizes`] held inline (no allocation for up to six physical dims): the
    /// search asks for them for most tiles it makes.
    ///
    /// # Errors
    /// As [`Layout::physical_sizes`].
    pub(crate) fn physical_sizes_inline(&self, shape: &Shape) -> Result<SmallVec<[u64; 6]>, LayoutError> {
        Ok(index::expand(self, shape)?.iter().map(|e| e.size).collect())
    }

    /// Whether the layout is valid for `shape`.
    pub fn applies_to(&self, shape: &Shape) -> bool {
        index::expand(self, shape).is_ok()
    }

    /// The number of buffer elements the layout uses for `shape` (its volume: layouts do not pad).
    ///
    /// # Errors
    /// [`LayoutError`] if the layout is not valid for `shape`.
    pub fn buffer_elements(&self, shape: &Shape) -> Result<u64, LayoutError> {
        Ok(self.physical_sizes(shape)?.iter().product())
    }

    /// The simplified buffer-indexing expression over `d0, d1, ...` for `shape`.
    ///
    /// ```
    /// use morello_core::layout::Layout;
    /// let layout: Layout = "[1, 0, 1 p(4)]".parse().unwrap();
    /// let expr = layout.buffer_index(&"6x8".parse().unwrap()).unwrap();
    /// assert_eq!(expr.to_string(), "d0 * 4 + (d1 floordiv 4) * 24 + d1 mod 4");
    /// ```
    ///
    /// # Errors
    /// [`LayoutError`] if the layout is not valid for `shape`.
    pub fn buffer_index(&self, shape: &Shape) -> Result<crate::expr::IndexExpr, LayoutError> {
        index::buffer_index(self, shape)
    }

    /// A precomputed offset calculator for `shape` (fast, for interpreters and tests).
    ///
    /// # Errors
    /// [`LayoutError`] if the layout is not valid for `shape`.
    pub fn indexer(&self, shape: &Shape) -> Result<LayoutIndexer, LayoutError> {
        LayoutIndexer::new(self, shape)
    }

    /// The canonical form of this layout for `shape`: physical dims of size 1 dropped, consecutive
    /// dims of one logical dimension merged, the slowest packing of each logical dimension made
    /// `Dynamic`. Every offset is unchanged.
    ///
    /// # Errors
    /// [`LayoutError`] if the layout is not valid for `shape`.
    pub fn canonicalize(&self, shape: &Shape) -> Result<Layout, LayoutError> {
        Ok(LayoutView::dense(self, shape)?.layout)
    }

    /// The layout and contiguity of a tile of `tile_shape` taken from a dense buffer of
    /// `parent_shape` in this layout (tiles start at multiples of the tile shape).
    ///
    /// # Errors
    /// [`LayoutError`] if the layout does not apply to `parent_shape`, or the tile does not fit it.
    pub fn update_for_tile(
        &self,
        parent_shape: &Shape,
        tile_shape: &Shape,
    ) -> Result<LayoutView, LayoutError> {
        LayoutView::dense(self, parent_shape)?.tile(parent_shape, tile_shape)
    }

    /// Whether this is `[0, 1, ..., n - 1]` over the given rank, skipping nothing.
    pub fn is_row_major(&self, rank: usize) -> bool {
        *self == Layout::row_major(rank as u8)
    }
}

impl TryFrom<Vec<LayoutDim>> for Layout {
    type Error = LayoutError;

    fn try_from(dims: Vec<LayoutDim>) -> Result<Self, LayoutError> {
        Layout::new(dims)
    }
}

impl From<Layout> for Vec<LayoutDim> {
    fn from(layout: Layout) -> Self {
        layout.dims.to_vec()
    }
}
