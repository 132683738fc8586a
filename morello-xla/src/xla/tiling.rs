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
//! Tile coordinates come first (major), coordinates inside the tile last (minor); partial tiles
//! at the array's edge are padded, and so are widths from `padded_dimensions`. [`Geometry`]
//! computes the bounds of every stage once, with checked arithmetic, when a shape is built;
//! [`XlaIndexer`] turns an index into its offset without allocating; the inverse walks the
//! tilings backwards and reports which padding a position holds ([`BufferPosition`]).

use super::layout::MAX_SIZE;
use super::{ElementType, XlaError, XlaLayout};

/// The bounds of every stage of a valid shape's tiling, and its buffer size.
///
/// # Invariants
/// Every value here, every padded extent `ceil(d / t) * t`, and every offset is at most
/// `2^63 - 1`; `stages.len() == tiles.len() + 1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// The logical dimension at each physical position, most major first.
    pub physical: Vec<usize>,
    /// `stages[0]`: physical (padded) bounds; `stages[i + 1]`: bounds after tiling `i`.
    pub stages: Vec<Vec<u64>>,
    /// The product of the final bounds (tiling padding included, tail padding not).
    pub tiled_elements: u64,
    /// `tiled_elements` rounded up to the tail padding alignment.
    pub buffer_elements: u64,
    /// The buffer's size in bytes, sub-byte elements packed.
    pub buffer_bytes: u64,
}

impl Geometry {
    /// Checks every rule that needs the shape and computes the stages.
    pub fn new(element_type: ElementType, dims: &[u64], layout: &XlaLayout) -> Result<Geometry, XlaError> {
        let rank = dims.len();
        for (dimension, &size) in dims.iter().enumerate() {
            if size > MAX_SIZE {
                return Err(XlaError::DimTooLarge { dimension, size });
            }
        }
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
        let bounds = padded_bounds(dims, layout.padded_dimensions())?;
        let physical = layout.major_to_minor();
        let mut current: Vec<u64> = physical.iter().map(|&d| bounds[d]).collect();
        let mut stages = vec![current.clone()];
        for (index, tile) in layout.tiles().iter().enumerate() {
            let (k, r) = (tile.len(), current.len());
            if k > r {
                return Err(XlaError::TileTooManyDims {
                    index,
                    tile: tile.to_string(),
                    tile_dims: k,
                    rank: r,
                });
            }
            let mut next = current[..r - k].to_vec();
            for (j, &t) in tile.dims().iter().enumerate() {
                let count = current[r - k + j].div_ceil(t);
                if u128::from(count) * u128::from(t) > u128::from(MAX_SIZE) {
                    return Err(XlaError::Overflow {
                        what: format!(
                            "physical dimension {} of size {} padded to a multiple of {t} by tile {tile}",
                            r - k + j,
                            current[r - k + j]
                        ),
                    });
                }
                next.push(count);
            }
            next.extend_from_slice(tile.dims());
            stages.push(next.clone());
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
        let buffer_bytes = element_type
            .bytes_for(buffer_elements)
            .filter(|&v| v <= MAX_SIZE)
            .ok_or_else(|| XlaError::Overflow { what: "the size of the buffer in bytes".into() })?;
        Ok(Geometry { physical, stages, tiled_elements, buffer_elements, buffer_bytes })
    }

    /// The bounds after the last tiling, most major first.
    pub fn tiled_dims(&self) -> &[u64] {
        self.stages.last().expect("there is always a stage before the first tiling")
    }
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
pub(crate) fn position(geometry: &Geometry, dims: &[u64], layout: &XlaLayout, linear: u64) -> BufferPosition {
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
    for (index, tile) in layout.tiles().iter().enumerate().rev() {
        let before = &geometry.stages[index];
        let (k, r) = (tile.len(), before.len());
        let mut previous = coords[..r].to_vec();
        for (j, &t) in tile.dims().iter().enumerate() {
            // Below ceil(d / t) * t, which fits by the Geometry invariant.
            let value = coords[r - k + j] * t + coords[r + j];
            if value >= before[r - k + j] {
                return BufferPosition::Padding(PaddingKind::Tiling { tile: index });
            }
            previous[r - k + j] = value;
        }
        coords = previous;
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

/// One step of the digit a tiled axis takes from its dimension's coordinate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DigitOp {
    Div(u64),
    Mod(u64),
}

/// One axis of the tiled buffer: which dimension it reads, how, and its stride.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IndexerAxis {
    logical: usize,
    ops: Vec<DigitOp>,
    stride: u64,
}

/// Computes the buffer offsets of an array's elements without allocating, from the tilings
/// unrolled into one chain of `div` and `mod` per tiled axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XlaIndexer {
    dims: Vec<u64>,
    axes: Vec<IndexerAxis>,
}

impl XlaIndexer {
    pub(crate) fn new(geometry: &Geometry, dims: &[u64], layout: &XlaLayout) -> XlaIndexer {
        let mut axes: Vec<IndexerAxis> = geometry
            .physical
            .iter()
            .map(|&logical| IndexerAxis { logical, ops: Vec::new(), stride: 0 })
            .collect();
        for tile in layout.tiles() {
            let tail = axes.split_off(axes.len() - tile.len());
            let mut inners = Vec::with_capacity(tile.len());
            for (axis, &t) in tail.into_iter().zip(tile.dims()) {
                let mut outer = axis.clone();
                outer.ops.push(DigitOp::Div(t));
                let mut inner = axis;
                inner.ops.push(DigitOp::Mod(t));
                axes.push(outer);
                inners.push(inner);
            }
            axes.extend(inners);
        }
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
            .map(|axis| {
                let digit = axis.ops.iter().fold(index[axis.logical], |x, op| match *op {
                    DigitOp::Div(t) => x / t,
                    DigitOp::Mod(t) => x % t,
                });
                digit.wrapping_mul(axis.stride)
            })
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
