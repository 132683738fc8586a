//! XLA layout values: [`XlaLayout`] (`minor_to_major`, tiles, tail padding, memory space and the
//! older `padded_dimensions`), [`Tile`] and [`MemorySpace`].
//!
//! These are plain values with the rules that need no shape (tile sizes at least 1, an alignment
//! of at least 1). The rules that need the shape (a permutation of its dimensions, tiles no wider
//! than what they tile, sizes that fit 64 bits) are checked when an
//! [`ArrayShape`](super::ArrayShape) is built. The text form lives in `text.rs`; what the fields
//! mean for addresses in `tiling.rs`.

/// The largest size, width, alignment or identifier XLA's `int64` fields can hold.
pub(crate) const MAX_SIZE: u64 = i64::MAX as u64;

/// One level of tiling: the sizes of a tile over the most minor dimensions it applies to.
///
/// # Invariants
/// At least one dimension; every size in `[1, 2^63 - 1]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tile {
    dims: Vec<u64>,
}

impl Tile {
    /// A tile with these sizes, most major first (`Tile::new(vec![8, 128])` is `(8,128)`).
    ///
    /// # Errors
    /// [`XlaError::EmptyTile`](super::XlaError::EmptyTile) with no sizes,
    /// [`XlaError::TileSizeNotPositive`](super::XlaError::TileSizeNotPositive) for a size of 0,
    /// [`XlaError::TileSizeTooLarge`](super::XlaError::TileSizeTooLarge) above `2^63 - 1`.
    pub fn new(dims: Vec<u64>) -> Result<Tile, super::XlaError> {
        if dims.is_empty() {
            return Err(super::XlaError::EmptyTile);
        }
        let tile = Tile { dims };
        for (dimension, &size) in tile.dims.iter().enumerate() {
            if size == 0 {
                return Err(super::XlaError::TileSizeNotPositive {
                    tile: tile.to_string(),
                    dimension,
                    size: 0,
                });
            }
            if size > MAX_SIZE {
                return Err(super::XlaError::TileSizeTooLarge {
                    tile: tile.to_string(),
                    dimension,
                    size: i128::from(size),
                });
            }
        }
        Ok(tile)
    }

    /// The sizes, most major first.
    pub fn dims(&self) -> &[u64] {
        &self.dims
    }

    /// The number of dimensions the tile spans.
    pub fn len(&self) -> usize {
        self.dims.len()
    }

    /// Always false: a tile has at least one dimension.
    pub fn is_empty(&self) -> bool {
        self.dims.is_empty()
    }
}

/// Where an array lives, written `S(n)` in a layout; `S(0)` (device HBM) is the default.
///
/// # Invariants
/// The identifier is at most `2^63 - 1` (XLA's field is an `int64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct MemorySpace(u64);

impl MemorySpace {
    /// `S(0)`: the device's high-bandwidth memory (the default, usually not written).
    pub const DEVICE_HBM: MemorySpace = MemorySpace(0);
    /// `S(1)`: on-device VMEM (on a TPU).
    pub const VMEM: MemorySpace = MemorySpace(1);
    /// `S(5)`: host memory.
    pub const HOST: MemorySpace = MemorySpace(5);

    /// The memory space `S(id)`.
    ///
    /// # Errors
    /// [`XlaError::TooLarge`](super::XlaError::TooLarge) above `2^63 - 1`.
    pub fn new(id: u64) -> Result<MemorySpace, super::XlaError> {
        if id > MAX_SIZE {
            return Err(super::XlaError::TooLarge { what: "memory space identifier", value: u128::from(id) });
        }
        Ok(MemorySpace(id))
    }

    /// The identifier `n` of `S(n)`.
    pub fn id(self) -> u64 {
        self.0
    }

    /// What the identifier denotes: `device HBM` (0), `VMEM` (1), `host` (5), otherwise
    /// `device specific`.
    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "device HBM",
            1 => "VMEM",
            5 => "host",
            _ => "device specific",
        }
    }
}

/// How an array is stored: the order of its dimensions, its tilings, padding and memory space.
///
/// ```text
/// minor_to_major                      dimension numbers, most minor first (a permutation)
/// tiles                               applied in order, each to the previous result
/// tail_padding_alignment_in_elements  the tiled buffer is padded to a multiple of this (>= 1)
/// memory_space                        S(n)
/// padded_dimensions                   the older field: a width for every dimension (>= its size)
/// ```
///
/// # Invariants
/// `tail_padding_alignment_in_elements >= 1` and every tile is valid ([`Tile::new`]). Whether the
/// layout fits a shape is checked by [`ArrayShape::new`](super::ArrayShape::new).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct XlaLayout {
    minor_to_major: Vec<usize>,
    tiles: Vec<Tile>,
    tail_padding_alignment_in_elements: u64,
    memory_space: MemorySpace,
    padded_dimensions: Option<Vec<u64>>,
}

impl XlaLayout {
    /// An untiled, unpadded layout in `S(0)` with this `minor_to_major` order.
    pub fn new(minor_to_major: Vec<usize>) -> XlaLayout {
        XlaLayout {
            minor_to_major,
            tiles: Vec::new(),
            tail_padding_alignment_in_elements: 1,
            memory_space: MemorySpace::DEVICE_HBM,
            padded_dimensions: None,
        }
    }

    /// The default layout of a shape with `rank` dimensions: major to minor, `[rank-1, ..., 0]`.
    pub fn default_for_rank(rank: usize) -> XlaLayout {
        XlaLayout::new((0..rank).rev().collect())
    }

    /// This layout with these tiles (replacing any).
    pub fn with_tiles(mut self, tiles: Vec<Tile>) -> XlaLayout {
        self.tiles = tiles;
        self
    }

    /// This layout with `tail_padding_alignment_in_elements` set.
    ///
    /// # Errors
    /// [`XlaError::ZeroTailPaddingAlignment`](super::XlaError::ZeroTailPaddingAlignment) for 0,
    /// [`XlaError::TooLarge`](super::XlaError::TooLarge) above `2^63 - 1`.
    pub fn with_tail_padding_alignment(mut self, elements: u64) -> Result<XlaLayout, super::XlaError> {
        if elements == 0 {
            return Err(super::XlaError::ZeroTailPaddingAlignment);
        }
        if elements > MAX_SIZE {
            return Err(super::XlaError::TooLarge {
                what: "tail_padding_alignment_in_elements",
                value: u128::from(elements),
            });
        }
        self.tail_padding_alignment_in_elements = elements;
        Ok(self)
    }

    /// This layout in another memory space.
    pub fn with_memory_space(mut self, memory_space: MemorySpace) -> XlaLayout {
        self.memory_space = memory_space;
        self
    }

    /// This layout with the older `padded_dimensions` field set (or cleared with `None`): the
    /// width each dimension is padded to, in dimension-number order.
    pub fn with_padded_dimensions(mut self, padded_dimensions: Option<Vec<u64>>) -> XlaLayout {
        self.padded_dimensions = padded_dimensions;
        self
    }

    /// Dimension numbers, most minor first.
    pub fn minor_to_major(&self) -> &[usize] {
        &self.minor_to_major
    }

    /// The tilings, in the order they apply.
    pub fn tiles(&self) -> &[Tile] {
        &self.tiles
    }

    /// The tiled buffer is padded at its end to a multiple of this many elements (1: no padding).
    pub fn tail_padding_alignment_in_elements(&self) -> u64 {
        self.tail_padding_alignment_in_elements
    }

    /// The memory space.
    pub fn memory_space(&self) -> MemorySpace {
        self.memory_space
    }

    /// The width each dimension is padded to (the older layout field), if set.
    pub fn padded_dimensions(&self) -> Option<&[u64]> {
        self.padded_dimensions.as_deref()
    }

    /// Dimension numbers, most major first (the reverse of `minor_to_major`).
    pub fn major_to_minor(&self) -> Vec<usize> {
        self.minor_to_major.iter().rev().copied().collect()
    }

    /// Whether this is the default layout for `rank` dimensions with nothing else set, the
    /// layout a shape written without `{...}` gets.
    pub fn is_default_for_rank(&self, rank: usize) -> bool {
        *self == XlaLayout::default_for_rank(rank)
    }
}
