//! What a layout means for addresses: tiling, padding, buffer sizes and linear indexing.
//!
//! With `e` an element's index and `d` the bounds, both in physical order (most major first, the
//! reverse of `minor_to_major`), and `t` a tile over the last `k` of them:
//!
//! ```text
//! bounds     d = padded_dimensions (if set) else the dimension sizes, permuted to physical order
//! one tiling (e, d) -> (e[..n-k] ++ e[n-k..] div t ++ e[n-k..] mod t,
//!                       d[..n-k] ++ ceil(d[n-k..] / t) ++ t)          elementwise, ++ concatenates
//! tilings    applied in order, each to the previous result (its most minor dims)
//! linear     row-major position of the final e in the final d
//! buffer     ceil(Π final d / tail_padding_alignment_in_elements) * tail_padding_alignment_in_elements
//! ```
//!
//! A tile longer than the bounds it meets first adds leading bounds of 1. A `*` entry combines
//! its dimension with the next more minor one before tiling (bounds `a, b` become `a * b`, and
//! coordinates `x, y` become `x * b + y`), so `(*,2,*,3)` tiles `[2,8,11,10]` as `[16,110]` by
//! `(2,3)`.
//!
//! Tile coordinates come first (major), coordinates inside the tile last (minor); partial tiles
//! at the array's edge are padded, and so are widths from `padded_dimensions`. [`Geometry`]
//! computes the bounds of every stage once, with checked arithmetic, when a shape is built;
//! [`XlaIndexer`] turns an index into its offset without allocating; the inverse walks the
//! tilings backwards and reports which padding a position holds ([`BufferPosition`]).

use super::layout::MAX_SIZE;
use super::{ElementType, Tile, TileDim, XlaError, XlaLayout};

/// The pointer size XLA's CPU and GPU backends pass to `ShapeUtil::ByteSizeOf`: the bytes of
/// an `opaque[]` value.
pub(crate) const POINTER_BYTES: u64 = 8;

/// How one tiling rearranges the bounds before it: leading dimensions of size 1 added when the
/// tile is longer than the shape, runs of dimensions combined by `*`, then the tiling proper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TileStep {
    /// How many leading dimensions of size 1 were added.
    pub lifted: usize,
    /// The bounds after adding them.
    pub lifted_bounds: Vec<u64>,
    /// Where the tiled dimensions start in `lifted_bounds`.
    pub first: usize,
    /// For each tiled dimension, the positions in `lifted_bounds` it combines (one unless `*`).
    pub groups: Vec<std::ops::Range<usize>>,
    /// The bounds of the tiled dimensions once combined.
    pub merged: Vec<u64>,
    /// The tile sizes, one per tiled dimension.
    pub sizes: Vec<u64>,
}

/// The bounds of every stage of a valid shape's tiling, and its buffer size.
///
/// # Invariants
/// Every value here, every padded extent `ceil(d / t) * t`, and every offset is at most
/// `2^63 - 1`; `stages.len() == steps.len() + 1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// The logical dimension at each physical position, most major first.
    pub physical: Vec<usize>,
    /// `stages[0]`: physical (padded) bounds; `stages[i + 1]`: bounds after tiling `i`.
    pub stages: Vec<Vec<u64>>,
    /// What each tiling does to the bounds before it.
    pub steps: Vec<TileStep>,
    /// The product of the final bounds (tiling padding included, tail padding not).
    pub tiled_elements: u64,
    /// `tiled_elements` rounded up to the tail padding alignment.
    pub buffer_elements: u64,
    /// The buffer's size in bytes (XLA's byte width per element, or packed by `E(n)`).
    pub buffer_bytes: u64,
}

impl Geometry {
    /// Checks every rule that needs the shape and computes the stages.
    pub fn new(element_type: ElementType, dims: &[u64], layout: &XlaLayout) -> Result<Geometry, XlaError> {
        let rank = dims.len();
        if !element_type.is_array_element() && (rank != 0 || !layout.is_default_for_rank(0)) {
            return Err(XlaError::NotAnArrayElement { element_type });
        }
        for (dimension, &size) in dims.iter().enumerate() {
            if size > MAX_SIZE {
                return Err(XlaError::DimTooLarge { dimension, size });
            }
        }
        check_layout_for_rank(layout, rank)?;
        if layout.is_sparse() {
            return Err(XlaError::Sparse);
        }
        let bits = layout.element_size_in_bits();
        if bits != 0 && bits < u64::from(element_type.bits()) {
            return Err(XlaError::ElementSizeTooSmall { bits, element_type, needed: element_type.bits() });
        }
        let bounds = padded_bounds(dims, layout.padded_dimensions())?;
        let physical = layout.major_to_minor();
        let mut current: Vec<u64> = physical.iter().map(|&d| bounds[d]).collect();
        let mut stages = vec![current.clone()];
        let mut steps = Vec::new();
        for tile in layout.tiles() {
            let step = tile_step(&current, tile)?;
            let mut next = step.lifted_bounds[..step.first].to_vec();
            for (j, (&d, &t)) in step.merged.iter().zip(&step.sizes).enumerate() {
                let count = d.div_ceil(t);
                if u128::from(count) * u128::from(t) > u128::from(MAX_SIZE) {
                    return Err(XlaError::Overflow {
                        what: format!(
                            "physical dimension {} of size {d} padded to a multiple of {t} by tile {tile}",
                            step.first + j,
                        ),
                    });
                }
                next.push(count);
            }
            next.extend_from_slice(&step.sizes);
            stages.push(next.clone());
            steps.push(step);
            current = next;
        }
        let tiled_elements = if current.contains(&0) {
            0
        } else {
            current
                .iter()
                .try_fold(1u64, |acc, &b| acc.checked_mul(b).filter(|&v| v <= MAX_SIZE))
                .ok_or_else(|| XlaError::Overflow {
                    what: "the number of elements of the tiled buffer".into(),
                })?
        };
        let alignment = layout.tail_padding_alignment_in_elements();
        let buffer_elements = u128::from(tiled_elements.div_ceil(alignment)) * u128::from(alignment);
        let buffer_elements =
            u64::try_from(buffer_elements).ok().filter(|&v| v <= MAX_SIZE).ok_or_else(|| {
                XlaError::Overflow {
                    what: format!("the number of elements of the buffer padded to a multiple of {alignment}"),
                }
            })?;
        let buffer_bytes = if element_type == ElementType::Opaque {
            Some(POINTER_BYTES)
        } else {
            element_type.bytes_for(buffer_elements, bits)
        };
        let buffer_bytes = buffer_bytes
            .filter(|&v| v <= MAX_SIZE)
            .ok_or_else(|| XlaError::Overflow { what: "the size of the buffer in bytes".into() })?;
        Ok(Geometry { physical, stages, steps, tiled_elements, buffer_elements, buffer_bytes })
    }

    /// The bounds after the last tiling, most major first.
    pub fn tiled_dims(&self) -> &[u64] {
        self.stages.last().expect("there is always a stage before the first tiling")
    }
}

/// The layout rules that need only the number of dimensions: `minor_to_major` a permutation,
/// split configurations naming existing dimensions.
pub(crate) fn check_layout_for_rank(layout: &XlaLayout, rank: usize) -> Result<(), XlaError> {
    let minor_to_major = layout.minor_to_major();
    let mut seen = vec![false; rank];
    let is_permutation = minor_to_major.len() == rank
        && minor_to_major.iter().all(|&d| d < rank && !std::mem::replace(&mut seen[d], true));
    if !is_permutation {
        return Err(XlaError::NotAPermutation {
            minor_to_major: minor_to_major.iter().map(|&d| d as i128).collect(),
            rank,
        });
    }
    for split in layout.split_configs() {
        if usize::try_from(split.dimension).map_or(true, |d| d >= rank) {
            return Err(XlaError::SplitDimensionOutOfRange { dimension: split.dimension, rank });
        }
    }
    let levels = layout.dim_level_types().len();
    if levels != 0 && levels != rank {
        return Err(XlaError::DimLevelTypesRank { len: levels, rank });
    }
    Ok(())
}

/// What `tile` does to bounds `current`: lift, combine, and the sizes that tile.
fn tile_step(current: &[u64], tile: &Tile) -> Result<TileStep, XlaError> {
    let k = tile.len();
    let lifted = k.saturating_sub(current.len());
    let mut lifted_bounds = vec![1u64; lifted];
    lifted_bounds.extend_from_slice(current);
    let first = lifted_bounds.len() - k;
    let mut groups = Vec::new();
    let mut merged = Vec::new();
    let mut sizes = Vec::new();
    let mut start = first;
    let mut product: u128 = 1;
    for (j, entry) in tile.entries().iter().enumerate() {
        let position = first + j;
        product *= u128::from(lifted_bounds[position]);
        if product > u128::from(MAX_SIZE) {
            return Err(XlaError::Overflow { what: format!("the dimensions tile {tile} combines with `*`") });
        }
        if let TileDim::Size(size) = *entry {
            groups.push(start..position + 1);
            merged.push(product as u64);
            sizes.push(size);
            start = position + 1;
            product = 1;
        }
    }
    Ok(TileStep { lifted, lifted_bounds, first, groups, merged, sizes })
}

/// The dimension sizes, or the widths of `padded_dimensions` once checked.
fn padded_bounds(dims: &[u64], padded: Option<&[u64]>) -> Result<Vec<u64>, XlaError> {
    let Some(padded) = padded else { return Ok(dims.to_vec()) };
    if padded.len() != dims.len() {
        return Err(XlaError::PaddedDimensionsRank { len: padded.len(), rank: dims.len() });
    }
    for (dimension, (&size, &width)) in dims.iter().zip(padded).enumerate() {
        if width > MAX_SIZE {
            return Err(XlaError::PaddedDimensionTooLarge { dimension, padded: width });
        }
        if width < size {
            return Err(XlaError::PaddedDimensionTooSmall { dimension, size, padded: width });
        }
    }
    Ok(padded.to_vec())
}

/// What sits at a position of an array's buffer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BufferPosition {
    /// The element with this index (one coordinate per dimension, in dimension-number order).
    Element(Vec<u64>),
    /// Padding, holding no element.
    Padding(PaddingKind),
}

/// Which rule put padding at a buffer position (the first that applies, walking from the
/// buffer's end back to the logical index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PaddingKind {
    /// Past the tiled buffer, up to the `tail_padding_alignment_in_elements` multiple.
    TailAlignment,
    /// Inside a partial tile of this tiling (0 is the first).
    Tiling {
        /// Which tiling.
        tile: usize,
    },
    /// Inside the widths added by `padded_dimensions`.
    PaddedDimensions,
}

/// The buffer position of `linear` (below the buffer size), by undoing the tilings.
pub(crate) fn position(geometry: &Geometry, dims: &[u64], linear: u64) -> BufferPosition {
    if linear >= geometry.tiled_elements {
        return BufferPosition::Padding(PaddingKind::TailAlignment);
    }
    let final_bounds = geometry.tiled_dims();
    let mut coords = vec![0u64; final_bounds.len()];
    let mut rest = linear;
    for (slot, &bound) in coords.iter_mut().zip(final_bounds).rev() {
        *slot = rest % bound;
        rest /= bound;
    }
    for (index, step) in geometry.steps.iter().enumerate().rev() {
        let n = step.sizes.len();
        let outer = step.first;
        let mut lifted = coords[..outer].to_vec();
        for (j, (&t, group)) in step.sizes.iter().zip(&step.groups).enumerate() {
            // Below ceil(d / t) * t, which fits by the Geometry invariant.
            let mut value = coords[outer + j] * t + coords[outer + n + j];
            if value >= step.merged[j] {
                return BufferPosition::Padding(PaddingKind::Tiling { tile: index });
            }
            let mut digits = vec![0u64; group.len()];
            for (slot, position) in digits.iter_mut().zip(group.clone()).rev() {
                let bound = step.lifted_bounds[position];
                *slot = value % bound;
                value /= bound;
            }
            lifted.extend(digits);
        }
        // The added leading dimensions have size 1: their coordinates are 0.
        coords = lifted.split_off(step.lifted);
    }
    let mut index = vec![0u64; dims.len()];
    for (&logical, &coordinate) in geometry.physical.iter().zip(&coords) {
        if coordinate >= dims[logical] {
            return BufferPosition::Padding(PaddingKind::PaddedDimensions);
        }
        index[logical] = coordinate;
    }
    BufferPosition::Element(index)
}

/// The value of one axis of the tiled buffer, as a function of the element's index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum AxisValue {
    /// The coordinate of a dimension.
    Logical(usize),
    /// An added leading dimension of size 1.
    Zero,
    /// `value / t`.
    Div(Box<AxisValue>, u64),
    /// `value mod t`.
    Mod(Box<AxisValue>, u64),
    /// Axes combined by `*`, most major first, each with its bound: mixed radix.
    Combine(Vec<(AxisValue, u64)>),
}

impl AxisValue {
    fn eval(&self, index: &[u64]) -> u64 {
        match self {
            AxisValue::Logical(d) => index[*d],
            AxisValue::Zero => 0,
            AxisValue::Div(value, t) => value.eval(index) / t,
            AxisValue::Mod(value, t) => value.eval(index) % t,
            AxisValue::Combine(parts) => parts
                .iter()
                .fold(0u64, |acc, (value, bound)| acc.wrapping_mul(*bound).wrapping_add(value.eval(index))),
        }
    }
}

/// One axis of the tiled buffer: its value and its stride.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IndexerAxis {
    value: AxisValue,
    stride: u64,
}

/// Computes the buffer offsets of an array's elements without allocating, from the tilings
/// unrolled into one expression of `div`, `mod` and combination per tiled axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XlaIndexer {
    dims: Vec<u64>,
    axes: Vec<IndexerAxis>,
}

impl XlaIndexer {
    pub(crate) fn new(geometry: &Geometry, dims: &[u64]) -> XlaIndexer {
        let mut values: Vec<AxisValue> = geometry.physical.iter().map(|&d| AxisValue::Logical(d)).collect();
        for step in &geometry.steps {
            let mut lifted = vec![AxisValue::Zero; step.lifted];
            lifted.append(&mut values);
            let covered = lifted.split_off(step.first);
            let mut covered: Vec<Option<AxisValue>> = covered.into_iter().map(Some).collect();
            let mut inners = Vec::with_capacity(step.sizes.len());
            for (group, &t) in step.groups.iter().zip(&step.sizes) {
                let mut parts: Vec<(AxisValue, u64)> = group
                    .clone()
                    .map(|position| {
                        let value = covered[position - step.first].take().expect("groups do not overlap");
                        (value, step.lifted_bounds[position])
                    })
                    .collect();
                let value = if parts.len() == 1 {
                    parts.pop().expect("one part").0
                } else {
                    AxisValue::Combine(parts)
                };
                lifted.push(AxisValue::Div(Box::new(value.clone()), t));
                inners.push(AxisValue::Mod(Box::new(value), t));
            }
            lifted.extend(inners);
            values = lifted;
        }
        let mut axes: Vec<IndexerAxis> =
            values.into_iter().map(|value| IndexerAxis { value, stride: 0 }).collect();
        let mut stride = 1u64;
        for (axis, &bound) in axes.iter_mut().zip(geometry.tiled_dims()).rev() {
            axis.stride = stride;
            // Partial products of the final bounds are at most the tiled size, which fits.
            stride = stride.saturating_mul(bound);
        }
        XlaIndexer { dims: dims.to_vec(), axes }
    }

    /// The buffer offset of the element at `index` (dimension-number order).
    ///
    /// # Panics
    /// If `index` has the wrong number of coordinates (a caller bug). Coordinates out of bounds
    /// give a meaningless offset; [`ArrayShape::linear_index`](super::ArrayShape::linear_index)
    /// checks them.
    pub fn offset(&self, index: &[u64]) -> u64 {
        assert_eq!(index.len(), self.dims.len(), "index must have one coordinate per dimension");
        self.axes
            .iter()
            .map(|axis| axis.value.eval(index).wrapping_mul(axis.stride))
            .fold(0u64, u64::wrapping_add)
    }
    /// The offset of every element, in row-major order of the logical index (the last dimension
    /// fastest); nothing for an array with a dimension of size 0.
    pub fn offsets_row_major(&self) -> impl Iterator<Item = u64> + '_ {
        let empty = self.dims.contains(&0);
        let mut index = vec![0u64; self.dims.len()];
        let mut done = empty;
        std::iter::from_fn(move || {
            if done {
                return None;
            }
            let offset = self.offset(&index);
            done = true;
            for (slot, &size) in index.iter_mut().zip(&self.dims).rev() {
                *slot += 1;
                if *slot < size {
                    done = false;
                    break;
                }
                *slot = 0;
            }
            Some(offset)
        })
    }
}
