//! The bridge between XLA layouts and morello [`Layout`]s, both ways, where they agree.
//!
//! **XLA to morello.** Every axis of the tiled buffer is a digit of one dimension's index: a
//! tiling by `t` splits an axis of extent `a` into `a / t` (stays in place) and `t` (moved to the
//! minor end). When every tile divides what it tiles, each digit is a morello physical dim of
//! that dimension, in the same order: the most significant digit of each dimension is `Dynamic`
//! (even of size 1, so that the order of dimensions survives), the others `Packed(extent)`, and
//! digits of extent 1 are dropped (size-1 tile entries add no packing).
//!
//! ```text
//! f32[16,256]{1,0:T(8,128)}               ->  16x256      [0, 1, 0 p(8), 1 p(128)]
//! bf16[32,32,4096]{2,1,0:T(8,128)(2,1)}   ->  32x32x4096  [0, 1, 2, 1 p(4), 2 p(128), 1 p(2)]
//! ```
//!
//! Not expressible, with an error saying why ([`BridgeError`]): a tuple; padding of any kind (a
//! tile that does not divide, `padded_dimensions`, `tail_padding_alignment_in_elements`); sizes
//! morello shapes do not allow (0, above 2^31); a tiling that puts a finer digit of a dimension
//! before a coarser one (`f32[64]{0:T(8)(2,4)}`). The memory space is not part of a morello
//! layout: [`ArrayShape::from_morello`] takes it back as an argument.
//!
//! **Morello to XLA.** The `Dynamic` dims give the physical order (`minor_to_major` reversed;
//! dimensions the layout omits, all of size 1, go first). The packings that follow are cut into
//! passes, each a run of strictly more minor dimensions; pass `i` becomes tiling `i`, spanning
//! from its first dimension to the end (widened to span the later ones, so each tiling applies to
//! the in-tile dims of the one before), and its tile size along a dimension is the product of
//! that dimension's digits in this pass and the later ones. A layout not of that form (`OddEven(2)`
//! strips, `Dynamic` dims after packings, dimensions without a `Dynamic`) is first rewritten
//! with the same offsets: canonicalised ([`Layout::canonicalize`]), then each late `Dynamic`
//! turned into a packing with a `Dynamic` of size 1 moved to the front. Every answer is checked
//! by converting it back. Only `OddEven` strips of more than 2 elements have no XLA equivalent.
//!
//! **Round trip.** XLA -> morello -> XLA returns the same shape and layout for every tiling in the
//! form the reverse produces (nested tilings, no size-1 tile entry that only pads the tile's
//! rank, no tiling that could merge into the next: `T(8,128)`, `T(8,128)(2,1)`, `T(256)(128)`,
//! ...), and an equivalent one otherwise (`T(1,128)` comes back as `T(128)`). Offsets always
//! agree element by element. Both are property-tested.

use super::{ArrayShape, ElementType, MemorySpace, Tile, XlaError, XlaLayout};
use morello_core::layout::{Layout, LayoutDim, LayoutError, PhysDim};
use morello_core::shape::{MAX_DIM, Shape, ShapeError};

/// Why an XLA shape has no morello equivalent, or a morello layout no XLA one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BridgeError {
    /// A tuple has no single layout (the user's shape).
    #[error("a tuple has no single layout; convert its arrays one by one")]
    Tuple,
    /// `padded_dimensions` pads the array (the user's layout).
    #[error("padded_dimensions pads the array, and morello layouts have no padding")]
    PaddedDimensions,
    /// `tail_padding_alignment_in_elements` pads the buffer (the user's layout).
    #[error("L({alignment}) pads the end of the buffer, and morello layouts have no padding")]
    TailPadding {
        /// The alignment, in elements.
        alignment: u64,
    },
    /// A dimension of size 0 (the user's shape).
    #[error("dimension {dimension} has size 0, and morello shapes have no empty dimension")]
    ZeroSize {
        /// Which dimension.
        dimension: usize,
    },
    /// A dimension above morello's limit (the user's shape).
    #[error("dimension {dimension} has size {size}, above morello's limit of 2^31")]
    DimTooLarge {
        /// Which dimension.
        dimension: usize,
        /// Its size.
        size: u64,
    },
    /// More dimensions than a morello layout can name (the user's shape).
    #[error("the array has {rank} dimensions, above morello's limit of 256")]
    TooManyDims {
        /// The number of dimensions.
        rank: usize,
    },
    /// A tile with `*` entries, which combine dimensions (the user's layout).
    #[error(
        "tile {tile} (tiling number {index}) combines dimensions with `*`, which morello layouts cannot express"
    )]
    CombineDimensions {
        /// Which tiling.
        index: usize,
        /// The tile as text.
        tile: String,
    },
    /// A tile with more entries than the dimensions it meets, which adds dimensions of size 1
    /// (the user's layout).
    #[error(
        "tile {tile} (tiling number {index}) is longer than the {rank} dimensions it tiles, which morello \
         layouts cannot express"
    )]
    TileLongerThanShape {
        /// Which tiling.
        index: usize,
        /// The tile as text.
        tile: String,
        /// The number of dimensions it meets.
        rank: usize,
    },
    /// A tile that does not divide what it tiles (the user's layout).
    #[error(
        "tile {tile} (tiling number {index}) does not divide physical dimension {axis} of size {size}: \
         the last tile needs padding, and morello layouts have no padding"
    )]
    PartialTile {
        /// Which tiling.
        index: usize,
        /// The tile as text.
        tile: String,
        /// The physical dimension of the shape being tiled.
        axis: usize,
        /// Its size.
        size: u64,
    },
    /// A tiling that stores a finer digit of a dimension before a coarser one (the user's layout).
    #[error(
        "the tiling stores a finer part of dimension {dimension} before a coarser one, and morello's \
         physical dims of one dimension go from coarse to fine"
    )]
    DigitsOutOfOrder {
        /// The dimension.
        dimension: usize,
    },
    /// An `OddEven` strip (the user's morello layout).
    #[error("physical dim {position} is an odd-even strip of {size}, which XLA tilings cannot express")]
    OddEven {
        /// Its index in the layout.
        position: usize,
        /// The strip's size.
        size: u32,
    },
    /// No XLA tiling found for a morello layout (the user's morello layout).
    #[error("no XLA tiling found for the morello layout: {reason}")]
    NoTiling {
        /// Why.
        reason: String,
    },
    /// The morello layout does not fit the shape (the user's morello layout).
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// The morello shape is invalid (the user's morello shape).
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// The XLA shape built is invalid (the user's input, for example a buffer too large in bytes).
    #[error(transparent)]
    Xla(#[from] XlaError),
}

/// A morello shape and layout with the same offsets as an XLA array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MorelloArray {
    /// The shape (the XLA dimensions).
    pub shape: Shape,
    /// The layout.
    pub layout: Layout,
}

/// One axis of the tiled buffer as a digit of a dimension's index: `path` records, tiling by
/// tiling, whether the digit took the outer (`false`) or inner (`true`) part, so comparing paths
/// compares significance (coarser first).
#[derive(Debug, Clone)]
struct Digit {
    logical: usize,
    extent: u64,
    path: Vec<bool>,
}

impl ArrayShape {
    /// The morello shape and layout with the same offsets, if there is one.
    ///
    /// ```
    /// use morello_xla::xla::ArrayShape;
    /// let xla: ArrayShape = "f32[16,256]{1,0:T(8,128)}".parse().unwrap();
    /// let morello = xla.to_morello().unwrap();
    /// assert_eq!(morello.layout.to_string(), "[0, 1, 0 p(8), 1 p(128)]");
    /// ```
    ///
    /// # Errors
    /// [`BridgeError`] saying why there is none (padding, sizes, digit order).
    pub fn to_morello(&self) -> Result<MorelloArray, BridgeError> {
        let layout = self.layout();
        if layout.padded_dimensions().is_some() {
            return Err(BridgeError::PaddedDimensions);
        }
        if layout.tail_padding_alignment_in_elements() != 1 {
            return Err(BridgeError::TailPadding { alignment: layout.tail_padding_alignment_in_elements() });
        }
        let shape = morello_shape(self.dims())?;
        let mut digits: Vec<Digit> = layout
            .major_to_minor()
            .into_iter()
            .map(|logical| Digit { logical, extent: self.dims()[logical], path: Vec::new() })
            .collect();
        for (index, tile) in layout.tiles().iter().enumerate() {
            let Some(sizes) = tile.sizes() else {
                return Err(BridgeError::CombineDimensions { index, tile: tile.to_string() });
            };
            if tile.len() > digits.len() {
                return Err(BridgeError::TileLongerThanShape {
                    index,
                    tile: tile.to_string(),
                    rank: digits.len(),
                });
            }
            let tiled = digits.split_off(digits.len() - tile.len());
            let first_axis = digits.len();
            let mut inners = Vec::with_capacity(tile.len());
            for (j, (digit, &t)) in tiled.into_iter().zip(&sizes).enumerate() {
                if digit.extent % t != 0 {
                    return Err(BridgeError::PartialTile {
                        index,
                        tile: tile.to_string(),
                        axis: first_axis + j,
                        size: digit.extent,
                    });
                }
                let mut outer = digit.clone();
                outer.extent /= t;
                outer.path.push(false);
                let mut inner = digit;
                inner.extent = t;
                inner.path.push(true);
                digits.push(outer);
                inners.push(inner);
            }
            digits.extend(inners);
        }
        let mut last_path: Vec<Option<Vec<bool>>> = vec![None; self.num_dims()];
        let mut dims = Vec::new();
        for digit in digits {
            let outermost = digit.path.iter().all(|&inner| !inner);
            if !outermost && digit.extent < 2 {
                continue;
            }
            if last_path[digit.logical].as_ref().is_some_and(|previous| *previous > digit.path) {
                return Err(BridgeError::DigitsOutOfOrder { dimension: digit.logical });
            }
            let logical = u8::try_from(digit.logical).expect("morello_shape checked the rank");
            let kind = if outermost {
                PhysDim::Dynamic
            } else {
                PhysDim::Packed(
                    u32::try_from(digit.extent).expect("a digit is at most its dimension, <= 2^31"),
                )
            };
            dims.push(LayoutDim { logical, kind });
            last_path[digit.logical] = Some(digit.path);
        }
        let layout = Layout::new(dims)?;
        layout.physical_sizes(&shape)?;
        Ok(MorelloArray { shape, layout })
    }

    /// An XLA array with the same offsets as a morello shape and layout, in `memory_space`.
    ///
    /// ```
    /// use morello_xla::xla::{ArrayShape, ElementType, MemorySpace};
    /// let shape = "6x8".parse().unwrap();
    /// let layout = "[1, 0, 1 p(4)]".parse().unwrap();
    /// let xla = ArrayShape::from_morello(ElementType::F32, &shape, &layout, MemorySpace::DEVICE_HBM).unwrap();
    /// assert_eq!(xla.to_string(), "f32[6,8]{0,1:T(4,1)}");
    /// ```
    ///
    /// # Errors
    /// [`BridgeError`] if the layout does not fit the shape, has `OddEven` strips of more than 2
    /// elements, or no tiling reproduces it.
    pub fn from_morello(
        element_type: ElementType,
        shape: &Shape,
        layout: &Layout,
        memory_space: MemorySpace,
    ) -> Result<ArrayShape, BridgeError> {
        let sizes = layout.physical_sizes(shape)?;
        for (position, dim) in layout.dims().iter().enumerate() {
            match dim.kind {
                PhysDim::OddEven(size) if size > 2 => return Err(BridgeError::OddEven { position, size }),
                _ => {}
            }
        }
        let target = layout.canonicalize(shape)?;
        let attempt = |dims: &[LayoutDim], sizes: &[u64]| -> Result<ArrayShape, BridgeError> {
            let xla_layout = tiling_for(shape, dims, sizes)?.with_memory_space(memory_space);
            let dims = shape.dims().iter().map(|&d| u64::from(d)).collect();
            let candidate = ArrayShape::new(element_type, dims, xla_layout)?;
            let back = candidate.to_morello()?;
            if back.layout.canonicalize(shape)? == target {
                Ok(candidate)
            } else {
                Err(BridgeError::NoTiling {
                    reason: format!("the tiling found gives {} instead", back.layout),
                })
            }
        };
        match attempt(layout.dims(), &sizes) {
            Ok(found) => Ok(found),
            Err(first) => {
                let canonical_sizes = target.physical_sizes(shape)?;
                let (dims, sizes) = dynamic_dims_first(target.dims(), &canonical_sizes);
                attempt(&dims, &sizes).map_err(|_| first)
            }
        }
    }
}

/// The same offsets with every dimension's `Dynamic` before all packings: a `Dynamic` found
/// after a packing becomes a packing of its size, and a dimension without a `Dynamic` before
/// its strips gets one of size 1 at the end of the leading run of `Dynamic`s.
fn dynamic_dims_first(dims: &[LayoutDim], sizes: &[u64]) -> (Vec<LayoutDim>, Vec<u64>) {
    let leading = dims.iter().take_while(|d| d.kind == PhysDim::Dynamic).count();
    let mut head: Vec<(LayoutDim, u64)> =
        dims[..leading].iter().copied().zip(sizes[..leading].iter().copied()).collect();
    let mut tail = Vec::new();
    for (dim, &size) in dims[leading..].iter().zip(&sizes[leading..]) {
        if !head.iter().any(|(d, _)| d.logical == dim.logical) {
            head.push((LayoutDim::dynamic(dim.logical), 1));
        }
        match dim.kind {
            PhysDim::Dynamic if size < 2 => {}
            PhysDim::Dynamic => {
                let size32 = u32::try_from(size).expect("a physical size is at most its dimension, <= 2^31");
                tail.push((LayoutDim::packed(dim.logical, size32), size));
            }
            _ => tail.push((*dim, size)),
        }
    }
    head.extend(tail);
    head.into_iter().unzip()
}

/// The morello shape of XLA dimensions, if they fit its limits.
fn morello_shape(dims: &[u64]) -> Result<Shape, BridgeError> {
    if dims.len() > 256 {
        return Err(BridgeError::TooManyDims { rank: dims.len() });
    }
    let mut sizes = Vec::with_capacity(dims.len());
    for (dimension, &size) in dims.iter().enumerate() {
        if size == 0 {
            return Err(BridgeError::ZeroSize { dimension });
        }
        let size = u32::try_from(size)
            .ok()
            .filter(|&s| s <= MAX_DIM)
            .ok_or(BridgeError::DimTooLarge { dimension, size })?;
        sizes.push(size);
    }
    Ok(Shape::new(sizes)?)
}

/// The XLA layout (order and tiles) whose digits are the morello physical dims `dims`, whose
/// sizes are `sizes`; see the module docs.
fn tiling_for(shape: &Shape, dims: &[LayoutDim], sizes: &[u64]) -> Result<XlaLayout, BridgeError> {
    let rank = shape.rank();
    let no_tiling = |reason: String| BridgeError::NoTiling { reason };
    let mut has_dynamic = vec![false; rank];
    let mut present = Vec::new();
    let mut packings: Vec<(usize, u64)> = Vec::new();
    for (dim, &size) in dims.iter().zip(sizes) {
        let logical = usize::from(dim.logical);
        match dim.kind {
            PhysDim::Dynamic => {
                if !packings.is_empty() {
                    return Err(no_tiling(format!(
                        "the Dynamic dim of dimension {logical} follows a packing"
                    )));
                }
                has_dynamic[logical] = true;
                present.push(logical);
            }
            PhysDim::Packed(_) | PhysDim::OddEven(_) => {
                if !has_dynamic[logical] || matches!(dim.kind, PhysDim::OddEven(_)) {
                    return Err(no_tiling(format!(
                        "dimension {logical} has a strip not preceded by a Dynamic dim"
                    )));
                }
                packings.push((logical, size));
            }
        }
    }
    // Dimensions the layout leaves out have size 1; they go first (most major).
    let mut physical: Vec<usize> = (0..rank).filter(|&l| !has_dynamic[l]).collect();
    physical.extend(present);
    let mut position = vec![0usize; rank];
    for (p, &logical) in physical.iter().enumerate() {
        position[logical] = p;
    }
    // Passes: runs of strictly increasing physical position.
    let mut passes: Vec<Vec<(usize, u64)>> = Vec::new();
    for (logical, size) in packings {
        let p = position[logical];
        match passes.last_mut() {
            Some(pass) if pass.last().is_some_and(|&(previous, _)| previous < p) => pass.push((p, size)),
            _ => passes.push(vec![(p, size)]),
        }
    }
    // Each tiling spans from its pass's first dimension to the end, and at least what the next spans.
    let mut spans: Vec<usize> = passes.iter().map(|pass| rank - pass[0].0).collect();
    for i in (0..spans.len().saturating_sub(1)).rev() {
        spans[i] = spans[i].max(spans[i + 1]);
    }
    // Tile sizes from the last pass back, indexed by distance from the most minor dimension.
    let mut tiles_reversed: Vec<Vec<u64>> = Vec::new();
    for (pass, &span) in passes.iter().zip(&spans).rev() {
        let mut sizes = vec![1u64; span];
        for &(p, size) in pass {
            sizes[rank - 1 - p] = size;
        }
        if let Some(later) = tiles_reversed.last() {
            for (size, &inner) in sizes.iter_mut().zip(later) {
                // Products of one dimension's digits divide its size (<= 2^31).
                *size = size.checked_mul(inner).expect("a product of digits of one dimension fits");
            }
        }
        tiles_reversed.push(sizes);
    }
    let tiles = tiles_reversed
        .into_iter()
        .rev()
        .map(|sizes| Tile::new(sizes.into_iter().rev().collect()))
        .collect::<Result<Vec<Tile>, XlaError>>()?;
    Ok(XlaLayout::new(physical.into_iter().rev().collect()).with_tiles(tiles))
}
