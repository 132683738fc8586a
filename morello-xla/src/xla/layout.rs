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

/// `value` if it is at most [`MAX_SIZE`], else [`XlaError::TooLarge`](super::XlaError::TooLarge)
/// naming the field `what`.
fn at_most_max_size(what: &'static str, value: u64) -> Result<u64, super::XlaError> {
    if value > MAX_SIZE {
        return Err(super::XlaError::TooLarge { what, value: u128::from(value) });
    }
    Ok(value)
}

/// One entry of a [`Tile`]: a size, or `*`, which combines this dimension with the next more
/// minor one before the tiling applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TileDim {
    /// Tile this dimension by a size of at least 1.
    Size(u64),
    /// `*`: merge this dimension into the next more minor one (XLA's `kCombineDimension`).
    Combine,
}

/// One level of tiling: the sizes of a tile over the most minor dimensions it applies to.
///
/// A tile with more entries than the array it tiles has dimensions applies as if the array had
/// leading dimensions of size 1 (`f32[]{:T(128)}` is one tile of 128 elements).
///
/// # Invariants
/// At least one entry; every size in `[1, 2^63 - 1]`; the last (most minor) entry is a size,
/// since a `*` needs a more minor dimension to combine into.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tile {
    entries: Vec<TileDim>,
}

impl Tile {
    /// A tile with these sizes, most major first (`Tile::new(vec![8, 128])` is `(8,128)`).
    ///
    /// # Errors
    /// [`XlaError::EmptyTile`](super::XlaError::EmptyTile) with no sizes,
    /// [`XlaError::TileSizeNotPositive`](super::XlaError::TileSizeNotPositive) for a size of 0,
    /// [`XlaError::TileSizeTooLarge`](super::XlaError::TileSizeTooLarge) above `2^63 - 1`.
    pub fn new(dims: Vec<u64>) -> Result<Tile, super::XlaError> {
        Tile::with_entries(dims.into_iter().map(TileDim::Size).collect())
    }

    /// A tile with these entries, sizes or `*`, most major first.
    ///
    /// # Errors
    /// As [`Tile::new`], and
    /// [`XlaError::CombineLast`](super::XlaError::CombineLast) when the last entry is `*`.
    pub fn with_entries(entries: Vec<TileDim>) -> Result<Tile, super::XlaError> {
        if entries.is_empty() {
            return Err(super::XlaError::EmptyTile);
        }
        let tile = Tile { entries };
        for (dimension, &entry) in tile.entries.iter().enumerate() {
            match entry {
                TileDim::Size(0) => {
                    return Err(super::XlaError::TileSizeNotPositive {
                        tile: tile.to_string(),
                        dimension,
                        size: 0,
                    });
                }
                TileDim::Size(size) if size > MAX_SIZE => {
                    return Err(super::XlaError::TileSizeTooLarge {
                        tile: tile.to_string(),
                        dimension,
                        size: i128::from(size),
                    });
                }
                _ => {}
            }
        }
        if tile.entries.last() == Some(&TileDim::Combine) {
            return Err(super::XlaError::CombineLast { tile: tile.to_string() });
        }
        Ok(tile)
    }

    /// The entries, most major first.
    pub fn entries(&self) -> &[TileDim] {
        &self.entries
    }

    /// The sizes, most major first, when no entry is `*`.
    pub fn sizes(&self) -> Option<Vec<u64>> {
        self.entries
            .iter()
            .map(|entry| match *entry {
                TileDim::Size(size) => Some(size),
                TileDim::Combine => None,
            })
            .collect()
    }

    /// Whether some entry is `*`.
    pub fn combines(&self) -> bool {
        self.entries.contains(&TileDim::Combine)
    }

    /// The number of dimensions the tile spans (`*` entries included).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Always false: a tile has at least one dimension.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// One split configuration of a layout, `SC(dimension:index,index,...)`: where XLA splits a
/// dimension into separate allocations. It does not change addresses within the buffer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SplitConfig {
    /// The dimension split (a dimension number).
    pub dimension: u64,
    /// The split indices along it.
    pub split_indices: Vec<u64>,
}

/// How one dimension of a sparse array is stored, one letter of `D(..)` in a layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DimLevel {
    /// `D`: every index is stored (a dense dimension).
    Dense,
    /// `C`: compressed, only the indices present are stored.
    Compressed,
    /// `S`: singleton, one index per parent entry.
    Singleton,
    /// `H`: loose compressed, compressed with room between segments.
    LooseCompressed,
}

impl DimLevel {
    /// The letter XLA writes for it.
    pub fn letter(self) -> char {
        match self {
            DimLevel::Dense => 'D',
            DimLevel::Compressed => 'C',
            DimLevel::Singleton => 'S',
            DimLevel::LooseCompressed => 'H',
        }
    }

    /// The level a letter names, if any.
    pub fn from_letter(letter: char) -> Option<DimLevel> {
        match letter {
            'D' => Some(DimLevel::Dense),
            'C' => Some(DimLevel::Compressed),
            'S' => Some(DimLevel::Singleton),
            'H' => Some(DimLevel::LooseCompressed),
            _ => None,
        }
    }
}

/// One entry of `D(..)`: a dimension's level type and whether its indices are unique (written
/// `+` when not) and ordered (written `~` when not), as XLA's `dim_unique` and `dim_ordered`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DimLevelType {
    /// How the dimension is stored.
    pub level: DimLevel,
    /// Whether each index appears at most once (`+` when false).
    pub unique: bool,
    /// Whether indices are stored in order (`~` when false).
    pub ordered: bool,
}

impl DimLevelType {
    /// A dense dimension, unique and ordered (`D`).
    pub const DENSE: DimLevelType = DimLevelType { level: DimLevel::Dense, unique: true, ordered: true };
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
        Ok(MemorySpace(at_most_max_size("memory space identifier", id)?))
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
/// element_size_in_bits                E(n): elements packed n bits each (0: XLA's byte width)
/// index_primitive_type                #(type): the integer type of sparse indices (no effect here)
/// pointer_primitive_type              *(type): the integer type of sparse pointers (no effect here)
/// split_configs                       SC(d:i,...): separate allocations (no effect on offsets)
/// dynamic_shape_metadata_prefix_bytes M(n): bytes of dynamic sizes before the data (no effect)
/// dim_level_types                     D(..): how each dimension of a sparse array is stored
/// physical_shape                      P(shape): the buffers of a sparse array (no effect here)
/// ```
///
/// A layout with a `D(..)` entry other than dense describes a sparse array, which has no dense
/// buffer ([`XlaLayout::is_sparse`]): such arrays are read and printed, with no offsets.
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
    element_size_in_bits: u64,
    index_primitive_type: Option<super::ElementType>,
    pointer_primitive_type: Option<super::ElementType>,
    split_configs: Vec<SplitConfig>,
    dynamic_shape_metadata_prefix_bytes: u64,
    dim_level_types: Vec<DimLevelType>,
    /// `P(..)`, kept as its canonical text (it is a shape, read and checked when parsed).
    physical_shape: Option<String>,
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
            element_size_in_bits: 0,
            index_primitive_type: None,
            pointer_primitive_type: None,
            split_configs: Vec::new(),
            dynamic_shape_metadata_prefix_bytes: 0,
            dim_level_types: Vec::new(),
            physical_shape: None,
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
        self.tail_padding_alignment_in_elements =
            at_most_max_size("tail_padding_alignment_in_elements", elements)?;
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

    /// This layout with `element_size_in_bits` (`E(n)`) set; 0 means XLA's byte width.
    ///
    /// # Errors
    /// [`XlaError::TooLarge`](super::XlaError::TooLarge) above `2^63 - 1`.
    pub fn with_element_size_in_bits(mut self, bits: u64) -> Result<XlaLayout, super::XlaError> {
        self.element_size_in_bits = at_most_max_size("element_size_in_bits", bits)?;
        Ok(self)
    }

    /// This layout with the index and pointer primitive types (`#(..)`, `*(..)`) set.
    pub fn with_sparse_types(
        mut self,
        index_primitive_type: Option<super::ElementType>,
        pointer_primitive_type: Option<super::ElementType>,
    ) -> XlaLayout {
        self.index_primitive_type = index_primitive_type;
        self.pointer_primitive_type = pointer_primitive_type;
        self
    }

    /// This layout with these split configurations (`SC(..)`).
    pub fn with_split_configs(mut self, split_configs: Vec<SplitConfig>) -> XlaLayout {
        self.split_configs = split_configs;
        self
    }

    /// This layout with `dynamic_shape_metadata_prefix_bytes` (`M(n)`) set.
    ///
    /// # Errors
    /// [`XlaError::TooLarge`](super::XlaError::TooLarge) above `2^63 - 1`.
    pub fn with_dynamic_shape_metadata_prefix_bytes(
        mut self,
        bytes: u64,
    ) -> Result<XlaLayout, super::XlaError> {
        self.dynamic_shape_metadata_prefix_bytes =
            at_most_max_size("dynamic_shape_metadata_prefix_bytes", bytes)?;
        Ok(self)
    }

    /// This layout with these dimension level types (`D(..)`: one per dimension, in the order
    /// XLA writes them; empty clears it). The count is checked against the shape's rank when an
    /// array is built.
    pub fn with_dim_level_types(mut self, dim_level_types: Vec<DimLevelType>) -> XlaLayout {
        self.dim_level_types = dim_level_types;
        self
    }

    /// This layout with a physical shape (`P(..)`), given as a shape.
    pub fn with_physical_shape(mut self, physical_shape: Option<&super::XlaShape>) -> XlaLayout {
        self.physical_shape = physical_shape.map(ToString::to_string);
        self
    }

    /// `D(..)`: the dimension level types; empty when not set.
    pub fn dim_level_types(&self) -> &[DimLevelType] {
        &self.dim_level_types
    }

    /// Whether the layout describes a sparse array: some `D(..)` entry is not dense (XLA's
    /// `LayoutUtil::IsSparse`). A sparse array has no dense buffer.
    pub fn is_sparse(&self) -> bool {
        self.dim_level_types.iter().any(|t| t.level != DimLevel::Dense)
    }

    /// `P(..)`: the physical shape as XLA prints it, if set.
    pub fn physical_shape(&self) -> Option<&str> {
        self.physical_shape.as_deref()
    }

    /// `E(n)`: the bits each element takes in the buffer, packed; 0 when not set.
    pub fn element_size_in_bits(&self) -> u64 {
        self.element_size_in_bits
    }

    /// `#(type)`: the index primitive type, if set.
    pub fn index_primitive_type(&self) -> Option<super::ElementType> {
        self.index_primitive_type
    }

    /// `*(type)`: the pointer primitive type, if set.
    pub fn pointer_primitive_type(&self) -> Option<super::ElementType> {
        self.pointer_primitive_type
    }

    /// `SC(..)`: the split configurations, in order.
    pub fn split_configs(&self) -> &[SplitConfig] {
        &self.split_configs
    }

    /// `M(n)`: the bytes of dynamic-size metadata before the data; 0 when not set.
    pub fn dynamic_shape_metadata_prefix_bytes(&self) -> u64 {
        self.dynamic_shape_metadata_prefix_bytes
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
