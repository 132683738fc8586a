//! Canonical layouts, contiguity, and the layout of a tile.
//!
//! A [`LayoutView`] is a layout together with its contiguity: how many of its innermost physical
//! dims form one contiguous run of the underlying buffer. A dense buffer is fully contiguous; a
//! tile of it usually is not. The analysis under-approximates: it never claims a run that is not
//! contiguous (checked against a brute-force walk of the addresses in the tests).
//!
//! Canonicalisation (the same for dense buffers and tiles):
//!
//! ```text
//! 1. drop physical dims of extent 1;
//! 2. OddEven(2) -> Packed(2)                       (the permutation of 2 elements is the identity)
//! 3. the slowest dim of each logical dimension, if Packed, becomes Dynamic   (it is the rest)
//! 4. merge neighbours of one logical dimension, outer Dynamic/Packed(a) with inner Packed(b):
//!    -> Dynamic / Packed(a b), unless the pair straddles the end of the contiguous run
//! ```

use serde::{Deserialize, Serialize};

use super::index::{Entry, expand};
use super::text::dim_text;
use super::{Layout, LayoutDim, LayoutError, PhysDim};
use crate::shape::Shape;

/// A layout and how many of its innermost physical dims are contiguous in the buffer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LayoutView {
    /// The canonical layout of the view's shape.
    pub layout: Layout,
    /// How many innermost physical dims of `layout` form one contiguous run of memory.
    pub contiguous_dims: u8,
}

/// A physical dim of a tile: the parent's dim with the tile's extent along it.
#[derive(Debug, Clone, Copy)]
struct TileDim {
    dim: LayoutDim,
    extent: u64,
}

impl LayoutView {
    /// The canonical view of a whole, dense buffer of `shape` in `layout` (fully contiguous).
    ///
    /// # Errors
    /// [`LayoutError`] if the layout is not valid for `shape`.
    pub fn dense(layout: &Layout, shape: &Shape) -> Result<LayoutView, LayoutError> {
        // At most MAX_PHYSICAL_DIMS (64) dims, so the count fits in a u8.
        Self::from_parts(layout, layout.len() as u8, shape)
    }

    /// The canonical view of `layout` on `shape` when its innermost `contiguous_dims` physical
    /// dims are known to form one contiguous run (clamped to the number of dims).
    ///
    /// # Errors
    /// [`LayoutError`] if the layout is not valid for `shape`.
    pub fn from_parts(
        layout: &Layout,
        contiguous_dims: u8,
        shape: &Shape,
    ) -> Result<LayoutView, LayoutError> {
        let entries = expand(layout, shape)?;
        let run_start = entries.len().saturating_sub(usize::from(contiguous_dims));
        let kept: Vec<(usize, &Entry)> = entries.iter().enumerate().filter(|(_, e)| e.size > 1).collect();
        let contiguous = kept.iter().filter(|(position, _)| *position >= run_start).count();
        let dims = kept.iter().map(|(_, e)| TileDim { dim: e.dim, extent: e.size }).collect();
        Ok(canonical(dims, contiguous))
    }

    /// Whether every physical dim is in the contiguous run.
    pub fn is_fully_contiguous(&self) -> bool {
        usize::from(self.contiguous_dims) == self.layout.len()
    }

    /// The view of a tile of `tile_shape` of this view, whose shape is `parent_shape`.
    ///
    /// Tiles start at multiples of `tile_shape`. A tile fits the layout when, along each logical
    /// dimension, it covers whole strips of the faster physical dims and, in the physical dim where
    /// it stops, a divisor of that dim's size (any size in the slowest one); it may cover only
    /// one element of an `OddEven` strip or all of it.
    ///
    /// # Errors
    /// [`LayoutError`] if ranks differ, the tile is larger than the parent, or it does not fit.
    pub fn tile(&self, parent_shape: &Shape, tile_shape: &Shape) -> Result<LayoutView, LayoutError> {
        self.tile_view(parent_shape, tile_shape, None)
    }

    /// The view of one tile of `tile_shape` starting at `origin` (for example a boundary region
    /// after the full tiles of a loop). The tile must be a box of the buffer: along each logical
    /// dimension it covers whole, aligned strips of the faster physical dims and a range of the
    /// physical dim where it stops that does not wrap.
    ///
    /// # Errors
    /// [`LayoutError`] if ranks differ, the tile leaves the parent, or it is not a box.
    pub fn tile_at(
        &self,
        parent_shape: &Shape,
        tile_shape: &Shape,
        origin: &[u32],
    ) -> Result<LayoutView, LayoutError> {
        self.tile_view(parent_shape, tile_shape, Some(origin))
    }

    fn tile_view(
        &self,
        parent_shape: &Shape,
        tile_shape: &Shape,
        origin: Option<&[u32]>,
    ) -> Result<LayoutView, LayoutError> {
        self.tile_with_pitch(parent_shape, tile_shape, origin, None).map(|(view, _)| view)
    }

    /// The view of a tile (of `tile_shape` at multiples of it, or at `origin`) and its *pitch*:
    /// the buffer stride, in elements, of the tile's innermost physical dim outside its
    /// contiguous run (the distance between two consecutive runs), or `None` if the tile is one
    /// run. `parent_pitch` is the parent view's pitch (`None` for a dense buffer, whose strides
    /// are its layout's).
    ///
    /// Strides inside the parent's run are the layout's own. Outside it only the innermost
    /// dim's stride is known (`parent_pitch`); a tile whose innermost outer dim lies further out
    /// gets that pitch scaled by the ratio of the layout's own strides, an estimate (exact when
    /// the parent's outer dims are dense relative to each other; for matrices, tiles of tiles
    /// have one outer dim and are exact).
    ///
    /// # Errors
    /// As [`LayoutView::tile`] and [`LayoutView::tile_at`].
    pub fn tile_with_pitch(
        &self,
        parent_shape: &Shape,
        tile_shape: &Shape,
        origin: Option<&[u32]>,
        parent_pitch: Option<u64>,
    ) -> Result<(LayoutView, Option<u64>), LayoutError> {
        let rank_mismatch = || LayoutError::TileRankMismatch {
            parent: parent_shape.to_string(),
            tile: tile_shape.to_string(),
        };
        if parent_shape.rank() != tile_shape.rank() || origin.is_some_and(|o| o.len() != tile_shape.rank()) {
            return Err(rank_mismatch());
        }
        for (logical, (&t, &p)) in tile_shape.dims().iter().zip(parent_shape.dims()).enumerate() {
            let start = origin.map_or(0, |o| u64::from(o[logical]));
            if start + u64::from(t) > u64::from(p) {
                return Err(LayoutError::TileTooLarge { logical: logical as u8, tile: t, parent: p });
            }
        }
        let entries = expand(&self.layout, parent_shape)?;
        let extents = match origin {
            None => tile_extents(&entries, tile_shape)?,
            Some(origin) => tile_extents_at(&entries, tile_shape, origin)?,
        };
        // The parent's contiguous run: its innermost `contiguous_dims` physical dims.
        let run_start = entries.len().saturating_sub(usize::from(self.contiguous_dims));
        // Walk inwards-out: a tile dim joins the run while its stride equals the volume of the
        // tile dims already in it, and it lies in the parent's run.
        let mut contiguous = 0usize;
        let mut run_volume = 1u64;
        let mut broken = false;
        for (position, entry) in entries.iter().enumerate().rev() {
            let extent = extents[position];
            if extent == 1 {
                continue;
            }
            if !broken && position >= run_start && entry.stride == run_volume {
                contiguous += 1;
                run_volume *= extent;
            } else {
                broken = true;
            }
        }
        let dims: Vec<TileDim> = entries
            .iter()
            .zip(&extents)
            .filter(|(_, extent)| **extent > 1)
            .map(|(entry, &extent)| TileDim { dim: entry.dim, extent })
            .collect();
        // The tile's innermost dim outside its run: the `contiguous + 1`-th kept dim from the end.
        let pitch = entries
            .iter()
            .enumerate()
            .zip(&extents)
            .filter(|(_, extent)| **extent > 1)
            .rev()
            .nth(contiguous)
            .map(|((position, entry), _)| {
                // The parent's innermost outer dim, whose true stride is `parent_pitch`.
                let parent_outer = run_start.checked_sub(1).map(|p| entries[p].stride);
                match (parent_pitch, parent_outer) {
                    (Some(pitch), Some(outer)) if position < run_start => {
                        pitch.saturating_mul(entry.stride / outer.max(1))
                    }
                    _ => entry.stride,
                }
            });
        Ok((canonical(dims, contiguous), pitch))
    }
}

/// The extent of a tile starting at `origin` along every physical dim of the parent.
fn tile_extents_at(entries: &[Entry], tile_shape: &Shape, origin: &[u32]) -> Result<Vec<u64>, LayoutError> {
    let mut extents = vec![1u64; entries.len()];
    // Per logical dimension: tile size and origin, in units of the current digit's `inner`.
    let mut left: Vec<u64> = tile_shape.dims().iter().map(|&t| u64::from(t)).collect();
    let mut start: Vec<u64> = origin.iter().map(|&o| u64::from(o)).collect();
    for (position, entry) in entries.iter().enumerate().rev() {
        let logical = usize::from(entry.dim.logical);
        let (t, o, s) = (left[logical], start[logical], entry.size);
        if t == 1 {
            continue;
        }
        let not_a_box = || LayoutError::TileSplitsStrip {
            logical: entry.dim.logical,
            tile: tile_shape.dim(logical),
            dim: dim_text(&entry.dim),
            strip: s,
        };
        if o % s == 0 && t % s == 0 {
            // Whole, aligned cycles of this digit.
            extents[position] = s;
            left[logical] = t / s;
            start[logical] = o / s;
        } else {
            // Stops inside this digit without wrapping; never part of an odd-even strip.
            if o % s + t > s || matches!(entry.dim.kind, PhysDim::OddEven(_)) {
                return Err(not_a_box());
            }
            extents[position] = t;
            left[logical] = 1;
        }
    }
    Ok(extents)
}

/// The extent of a tile along every physical dim of the parent.
fn tile_extents(entries: &[Entry], tile_shape: &Shape) -> Result<Vec<u64>, LayoutError> {
    let mut extents = vec![1u64; entries.len()];
    let mut left: Vec<u64> = tile_shape.dims().iter().map(|&t| u64::from(t)).collect();
    for (position, entry) in entries.iter().enumerate().rev() {
        let logical = usize::from(entry.dim.logical);
        let t = left[logical];
        let splits = || LayoutError::TileSplitsStrip {
            logical: entry.dim.logical,
            tile: tile_shape.dim(logical),
            dim: dim_text(&entry.dim),
            strip: entry.size,
        };
        if t >= entry.size {
            // Covers whole values of this digit.
            if t % entry.size != 0 && !entry.outermost {
                return Err(splits());
            }
            extents[position] = entry.size.min(t);
            left[logical] = t / entry.size.min(t);
        } else {
            // Stops inside this digit: a divisor of it (any size in the slowest digit), and never
            // part of an odd-even strip, whose elements are not consecutive.
            let is_odd_even = matches!(entry.dim.kind, PhysDim::OddEven(_));
            if (!entry.outermost && entry.size % t != 0) || (is_odd_even && t > 1) {
                return Err(splits());
            }
            extents[position] = t;
            left[logical] = 1;
        }
    }
    Ok(extents)
}

/// Steps 2-4 of the canonical form (step 1 is done by the callers' filters).
fn canonical(mut dims: Vec<TileDim>, mut contiguous: usize) -> LayoutView {
    // OddEven(2) -> Packed(2)
    for d in &mut dims {
        if d.dim.kind == PhysDim::OddEven(2) {
            d.dim.kind = PhysDim::Packed(2);
        }
    }
    // The slowest dim of each logical dimension: Packed -> Dynamic.
    let mut seen = [false; 256];
    for d in &mut dims {
        let logical = usize::from(d.dim.logical);
        if !seen[logical] {
            seen[logical] = true;
            if matches!(d.dim.kind, PhysDim::Packed(_)) {
                d.dim.kind = PhysDim::Dynamic;
            }
        }
    }
    // Merge (outer Dynamic/Packed, inner Packed) neighbours of one logical dimension.
    let mut i = 0;
    while i + 1 < dims.len() {
        let (outer, inner) = (dims[i], dims[i + 1]);
        let run_start = dims.len() - contiguous;
        let same_side = (i >= run_start) == (i + 1 >= run_start);
        let mergeable = outer.dim.logical == inner.dim.logical
            && !matches!(outer.dim.kind, PhysDim::OddEven(_))
            && matches!(inner.dim.kind, PhysDim::Packed(_))
            && same_side;
        if mergeable {
            let extent = outer.extent * inner.extent;
            let kind = match outer.dim.kind {
                PhysDim::Dynamic => PhysDim::Dynamic,
                _ => PhysDim::Packed(
                    u32::try_from(extent).expect("a strip is at most one dimension's size (< 2^32)"),
                ),
            };
            dims[i] = TileDim { dim: LayoutDim { logical: outer.dim.logical, kind }, extent };
            dims.remove(i + 1);
            if i + 1 > run_start {
                contiguous -= 1;
            }
        } else {
            i += 1;
        }
    }
    let layout = Layout { dims: dims.iter().map(|d| d.dim).collect() };
    LayoutView { layout, contiguous_dims: contiguous as u8 }
}
