//! Physical sizes and buffer offsets of a layout for a shape.
//!
//! [`expand`] resolves every physical dim's size, the volume of the faster dims of the same
//! logical dimension (`inner`) and its stride in the buffer. Both the symbolic offset
//! ([`buffer_index`]) and the numeric one ([`LayoutIndexer`]) are built from that table, with the
//! digit formula of the module docs.

use super::{Layout, LayoutDim, LayoutError, PhysDim, text::dim_text};
use crate::expr::{IndexExpr, RangeEnv};
use crate::shape::Shape;
use smallvec::SmallVec;

/// One physical dim with everything needed to compute offsets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub dim: LayoutDim,
    /// Number of values of this digit.
    pub size: u64,
    /// Product of the sizes of the faster physical dims of the same logical dimension.
    pub inner: u64,
    /// Distance in the buffer between consecutive values of this physical coordinate.
    pub stride: u64,
    /// Whether this is the slowest physical dim of its logical dimension.
    pub outermost: bool,
}

/// Physical dims of one layout; most layouts have few, so they live inline.
pub(crate) type Entries = SmallVec<[Entry; 6]>;

pub(crate) fn expand(layout: &Layout, shape: &Shape) -> Result<Entries, LayoutError> {
    let rank = shape.rank();
    let dims = layout.dims();
    let mut entries: Entries = SmallVec::with_capacity(dims.len());
    for (position, dim) in dims.iter().enumerate() {
        if usize::from(dim.logical) >= rank {
            return Err(LayoutError::DimOutOfRange { position, logical: dim.logical, rank });
        }
        entries.push(Entry { dim: *dim, size: 0, inner: 1, stride: 1, outermost: false });
    }
    // Walk each logical dimension from its fastest physical dim outwards.
    let mut remaining: SmallVec<[u64; 6]> = shape.dims().iter().map(|&d| u64::from(d)).collect();
    for position in (0..entries.len()).rev() {
        let logical = usize::from(entries[position].dim.logical);
        entries[position].inner = u64::from(shape.dim(logical)) / remaining[logical];
        let size = match entries[position].dim.kind {
            PhysDim::Dynamic => std::mem::replace(&mut remaining[logical], 1),
            PhysDim::Packed(n) | PhysDim::OddEven(n) => {
                let n = u64::from(n);
                if remaining[logical] % n != 0 {
                    return Err(LayoutError::PackingDoesNotDivide {
                        position,
                        dim: dim_text(&entries[position].dim),
                        logical: logical as u8,
                        remaining: remaining[logical],
                    });
                }
                remaining[logical] /= n;
                n
            }
        };
        entries[position].size = size;
    }
    for (logical, &left) in remaining.iter().enumerate() {
        if left != 1 {
            let size = u64::from(shape.dim(logical));
            return Err(LayoutError::NotCovered { logical: logical as u8, size, covered: size / left });
        }
    }
    // Strides (row-major over physical sizes) and which dim is outermost per logical dimension.
    let mut stride = 1u64;
    let mut outer_seen: SmallVec<[bool; 6]> = smallvec::smallvec![false; rank];
    for entry in entries.iter_mut().rev() {
        entry.stride = stride;
        stride *= entry.size;
    }
    for entry in entries.iter_mut() {
        let logical = usize::from(entry.dim.logical);
        entry.outermost = !outer_seen[logical];
        outer_seen[logical] = true;
    }
    Ok(entries)
}

pub(crate) fn physical_sizes(layout: &Layout, shape: &Shape) -> Result<Vec<u64>, LayoutError> {
    Ok(expand(layout, shape)?.iter().map(|e| e.size).collect())
}

/// `(i floordiv inner) mod size` for a physical digit, then the OddEven permutation.
fn digit_expr(entry: &Entry) -> IndexExpr {
    // Every constant here is a factor of the shape's volume, which fits in i64 by the Shape
    // invariant, so none of these operations can overflow or see a non-positive divisor.
    let expect = "layout constants divide the shape's volume, which fits in i64";
    let as_i64 = |v: u64| i64::try_from(v).expect(expect);
    let mut q = IndexExpr::dim(u32::from(entry.dim.logical)).floordiv(as_i64(entry.inner)).expect(expect);
    if !entry.outermost {
        q = q.modulo(as_i64(entry.size)).expect(expect);
    }
    if let PhysDim::OddEven(n) = entry.dim.kind {
        let half = i64::from(n / 2);
        let evens = q.floordiv(2).expect(expect);
        let odds = q.modulo(2).expect(expect).mul(half).expect(expect);
        q = evens.add(&odds).expect(expect);
    }
    q
}

pub(crate) fn buffer_index(layout: &Layout, shape: &Shape) -> Result<IndexExpr, LayoutError> {
    let entries = expand(layout, shape)?;
    let expect = "offsets are below the shape's volume, which fits in i64";
    let mut offset = IndexExpr::constant(0);
    for entry in &entries {
        let term = digit_expr(entry).mul(i64::try_from(entry.stride).expect(expect)).expect(expect);
        offset = offset.add(&term).expect(expect);
    }
    let env = RangeEnv::for_shape(&shape.dims().iter().map(|&d| u64::from(d)).collect::<Vec<_>>());
    Ok(offset.simplify(&env).expect(expect))
}

/// Computes buffer offsets of logical points directly from the digit table (no expression).
#[derive(Debug, Clone)]
pub struct LayoutIndexer {
    entries: Entries,
    rank: usize,
}

impl LayoutIndexer {
    pub(crate) fn new(layout: &Layout, shape: &Shape) -> Result<Self, LayoutError> {
        Ok(LayoutIndexer { entries: expand(layout, shape)?, rank: shape.rank() })
    }

    /// The buffer offset of a logical point.
    ///
    /// # Panics
    /// If `point` has the wrong rank (a caller bug).
    pub fn offset(&self, point: &[u32]) -> u64 {
        assert_eq!(point.len(), self.rank, "point rank must match the shape's rank");
        self.entries
            .iter()
            .map(|e| {
                let i = u64::from(point[usize::from(e.dim.logical)]);
                let q = (i / e.inner) % e.size;
                let coord = match e.dim.kind {
                    PhysDim::OddEven(n) => q / 2 + (q % 2) * u64::from(n / 2),
                    _ => q,
                };
                coord * e.stride
            })
            .sum()
    }
}
