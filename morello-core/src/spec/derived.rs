//! Specs derived from a spec: tiles of its iteration space, an operand replaced, the
//! accumulating twin, and the moves and fills of operands. These are the building blocks of every
//! rewrite.
//!
//! A tile's operands are views of the parent's operands: their layouts and contiguity come from
//! [`LayoutView::tile`] (full tiles, at multiples of the tile) or [`LayoutView::tile_at`] (one
//! region at a given origin). Operand dims that slide (a convolution's image rows `h + fh`) are
//! only tiled when that logical dim has a single physical dim, so every window is a box.

use smallvec::SmallVec;

use super::canonical::{assemble, canonical_operand, canonical_pitch};
use super::geometry::operand_tile_shape;
use super::{
    Activation, CanonicalSpec, FillValue, LogicalSpec, OperandDim, PrimitiveKind, SpecError, TensorSpec,
};
use crate::layout::{Layout, LayoutView, PhysDim};
use crate::shape::Shape;
use crate::target::{LevelKind, Target};

impl CanonicalSpec {
    /// The spec of a full tile of the iteration space: the box of `sizes`, repeated at multiples of
    /// `sizes`. `serial_only` is set when the tile is the body of a parallel loop.
    ///
    /// # Errors
    /// [`SpecError`] if a size is 0 or larger than the spec, or an operand's layout does not admit
    /// the tile (it would not be a box of the buffer at every position).
    pub fn tile(
        &self,
        sizes: &[u32],
        serial_only: bool,
        target: &Target,
    ) -> Result<CanonicalSpec, SpecError> {
        self.tile_view(sizes, None, serial_only, target)
    }

    /// The spec of the iteration box of `sizes` starting at `origin` (a boundary region).
    ///
    /// # Errors
    /// As [`CanonicalSpec::tile`].
    pub fn tile_at(
        &self,
        sizes: &[u32],
        origin: &[u32],
        serial_only: bool,
        target: &Target,
    ) -> Result<CanonicalSpec, SpecError> {
        self.tile_view(sizes, Some(origin), serial_only, target)
    }

    fn tile_view(
        &self,
        sizes: &[u32],
        origin: Option<&[u32]>,
        serial_only: bool,
        target: &Target,
    ) -> Result<CanonicalSpec, SpecError> {
        let shape =
            Shape::from_slice(sizes).map_err(|source| SpecError::OperandShape { operand: 0, source })?;
        if shape.rank() != self.shape.rank() || origin.is_some_and(|o| o.len() != shape.rank()) {
            return Err(SpecError::WrongRank {
                kind: self.kind.name(),
                expected: self.shape.rank(),
                found: shape.rank(),
            });
        }
        if self.kind.conv_geometry().is_some_and(|g| g.is_padded())
            && (3..7).any(|d| sizes[d] != self.shape.dim(d))
        {
            return Err(SpecError::PaddedTile);
        }
        let dims = self.kind.operand_dims(sizes.len());
        let tile_shapes = dims
            .iter()
            .enumerate()
            .map(|(i, operand_dims)| operand_tile_shape(i, operand_dims, sizes))
            .collect::<Result<SmallVec<[Shape; 4]>, _>>()?;
        let mut operands = Vec::with_capacity(self.operands.len());
        for (i, (operand, tile_shape)) in self.operands.iter().zip(tile_shapes).enumerate() {
            // A tile that covers the whole operand (the tiled dims are not its own) is the operand
            // itself where its pitch is known to carry over (see `whole_tile_is_operand`).
            let whole = tile_shape == operand.shape
                && origin.is_none_or(|o| dims[i].iter().all(|d| d.origin(o) == 0))
                && whole_tile_is_operand(operand, target);
            let tile = if whole {
                debug_assert_eq!(
                    tile_operand(i, operand, &dims[i], tile_shape, origin, target).as_ref(),
                    Ok(operand),
                    "a whole tile of a canonical operand is the operand"
                );
                operand.clone()
            } else {
                tile_operand(i, operand, &dims[i], tile_shape, origin, target)?
            };
            operands.push(tile);
        }
        // Tiles of canonical views are canonical: no need to canonicalise the operands again.
        Ok(assemble(self.kind, shape, operands, self.serial_only || serial_only, target))
    }

    /// The spec with operand `index` replaced (moved to another level or layout).
    ///
    /// # Errors
    /// [`SpecError`] if the new operand is invalid for the spec.
    pub fn with_operand(
        &self,
        index: usize,
        operand: TensorSpec,
        target: &Target,
    ) -> Result<CanonicalSpec, SpecError> {
        let mut operands = self.operands.clone();
        if operand.shape != operands[index].shape || operand.dtype != operands[index].dtype {
            operands[index] = operand;
            let spec = LogicalSpec {
                kind: self.kind,
                shape: self.shape.clone(),
                operands,
                serial_only: self.serial_only,
            };
            return spec.canonicalize(target);
        }
        // Same shape and dtype: `self` is canonical, so only the new operand needs checking.
        operands[index] = canonical_operand(index, &operand, target)?;
        Ok(assemble(self.kind, self.shape.clone(), operands, self.serial_only, target))
    }

    /// The accumulating twin of a `Matmul` or `Conv` (same operands), if the kind has one.
    ///
    /// # Errors
    /// [`SpecError`] if the result is invalid (it cannot be, for a valid spec).
    pub fn as_accum(&self, target: &Target) -> Option<Result<CanonicalSpec, SpecError>> {
        let kind = self.kind.as_accum()?;
        Some(
            LogicalSpec {
                kind,
                shape: self.shape.clone(),
                operands: self.operands.clone(),
                serial_only: self.serial_only,
            }
            .canonicalize(target),
        )
    }
}

impl CanonicalSpec {
    /// A `MatmulBias` (or `MatmulCorrected`, its correction the bias) split into its matmul
    /// `Matmul(lhs, rhs, out)` and its epilogue `AddBias(bias, out)` over `[b, m, n]`; `None` for
    /// other kinds.
    ///
    /// # Errors
    /// [`SpecError`] if a part is invalid (it cannot be, for a valid spec).
    pub fn split_epilogue(
        &self,
        target: &Target,
    ) -> Option<Result<(CanonicalSpec, CanonicalSpec), SpecError>> {
        let activation = match self.kind {
            PrimitiveKind::MatmulBias { activation } => activation,
            PrimitiveKind::MatmulCorrected => Activation::Identity,
            _ => return None,
        };
        let o = &self.operands;
        let [b, m, _, n] = *self.shape.dims() else { return None };
        let split = || {
            let matmul = LogicalSpec {
                kind: PrimitiveKind::Matmul { accum: false },
                shape: self.shape.clone(),
                operands: vec![o[0].clone(), o[1].clone(), o[3].clone()],
                serial_only: self.serial_only,
            }
            .canonicalize(target)?;
            let shape =
                Shape::new(vec![b, m, n]).map_err(|source| SpecError::OperandShape { operand: 3, source })?;
            let epilogue = LogicalSpec {
                kind: PrimitiveKind::AddBias { activation },
                shape,
                operands: vec![o[2].clone(), o[3].clone()],
                serial_only: self.serial_only,
            }
            .canonicalize(target)?;
            Ok((matmul, epilogue))
        };
        Some(split())
    }

    /// `Move(source -> destination)` over the tensors' shape.
    ///
    /// # Errors
    /// [`SpecError`] if the tensors differ in shape or the move is invalid.
    pub fn move_between(
        source: &TensorSpec,
        destination: &TensorSpec,
        serial_only: bool,
        target: &Target,
    ) -> Result<CanonicalSpec, SpecError> {
        LogicalSpec {
            kind: PrimitiveKind::Move,
            shape: source.shape.clone(),
            operands: vec![source.clone(), destination.clone()],
            serial_only,
        }
        .canonicalize(target)
    }

    /// `Fill(value)` of one tensor.
    ///
    /// # Errors
    /// [`SpecError`] if the tensor is invalid.
    pub fn fill(
        value: FillValue,
        out: &TensorSpec,
        serial_only: bool,
        target: &Target,
    ) -> Result<CanonicalSpec, SpecError> {
        LogicalSpec {
            kind: PrimitiveKind::Fill { value },
            shape: out.shape.clone(),
            operands: vec![out.clone()],
            serial_only,
        }
        .canonicalize(target)
    }
}

/// Whether [`tile_operand`] of `operand`'s whole shape, at multiples of it or at its origin, is
/// `operand` itself, so [`CanonicalSpec::tile`] can skip the layout walk for the operands a tile
/// leaves alone.
///
/// Every physical dim keeps its extent, so the walk finds the same run and the canonical layout is
/// the operand's (canonical already). The pitch carries over where the operand has one (its class,
/// which `canonical_pitch` keeps), where it is one run or in registers (no pitch either way), or
/// where it is a two-dimensional strided tensor without one (its tiles inherit none). Otherwise a
/// strided operand without a pitch (spec text may leave it out) gets one from its layout's strides
/// when tiled, so the walk runs. Checked in debug builds and by the property
/// `a_whole_tile_of_an_operand_is_the_operand`.
pub(super) fn whole_tile_is_operand(operand: &TensorSpec, target: &Target) -> bool {
    operand.pitch.is_some()
        || operand.is_fully_contiguous()
        || target.level(operand.level).kind.counts_registers()
        || crate::cost::two_dim_strided(operand)
}

/// The tile of `operand` (operand `i` of a spec, over `operand_dims`) of `tile_shape`, at multiples
/// of it or at the iteration `origin`: its canonical layout, contiguity and pitch class.
pub(super) fn tile_operand(
    i: usize,
    operand: &TensorSpec,
    operand_dims: &[OperandDim],
    tile_shape: Shape,
    origin: Option<&[u32]>,
    target: &Target,
) -> Result<TensorSpec, SpecError> {
    let layout_error = |source| SpecError::Layout { operand: i, source };
    let view = LayoutView { layout: operand.layout.clone(), contiguous_dims: operand.contiguous_dims };
    let sliding = operand_dims.iter().enumerate().any(|(d, od)| slides(od, operand, d, &tile_shape));
    let parent_pitch = operand.pitch.map(u64::from);
    let (tiled, pitch) = match (origin, sliding) {
        (Some(origin), _) => {
            let origin: SmallVec<[u32; 4]> = operand_dims.iter().map(|d| d.origin(origin)).collect();
            view.tile_with_pitch(&operand.shape, &tile_shape, Some(&origin), parent_pitch)
        }
        (None, false) => view.tile_with_pitch(&operand.shape, &tile_shape, None, parent_pitch),
        (None, true) => {
            if !sliding_dims_are_plain(operand_dims, operand, &tile_shape) {
                return Err(SpecError::SlidingTile { operand: i });
            }
            let origin: SmallVec<[u32; 4]> = smallvec::smallvec![0; tile_shape.rank()];
            view.tile_with_pitch(&operand.shape, &tile_shape, Some(&origin), parent_pitch)
        }
    }
    .map_err(layout_error)?;
    if let Some(v) = operand.vector_size {
        if tile_shape.volume() % u64::from(v) != 0 {
            return Err(SpecError::VectorSize {
                operand: i,
                message: format!(
                    "shape {} ({} elements) is not a whole number of v{v} vectors",
                    tile_shape,
                    tile_shape.volume()
                ),
            });
        }
    }
    // Registers hold scalars one by one: their layout stays the canonical row-major.
    let (layout, contiguous_dims) = if target.level(operand.level).kind == LevelKind::ScalarRegisters {
        let dense = LayoutView::dense(&Layout::row_major(tile_shape.rank() as u8), &tile_shape)
            .map_err(layout_error)?;
        (dense.layout, dense.contiguous_dims)
    } else {
        (tiled.layout, tiled.contiguous_dims)
    };
    let mut tile = operand.view(tile_shape, layout, contiguous_dims);
    // A tile of a strided tensor whose pitch cannot matter has none either
    // (`crate::cost::pitch_cannot_matter`); its pitch is not derived from the parent's
    // shape, which is not its buffer's.
    let inherits_none =
        operand.pitch.is_none() && !operand.is_fully_contiguous() && crate::cost::two_dim_strided(operand);
    tile.pitch = if inherits_none { None } else { canonical_pitch(&tile, pitch, target) };
    Ok(tile)
}

/// Whether an operand dim is a sliding window (a sum of two iteration dims) that the tile cuts.
fn slides(od: &OperandDim, operand: &TensorSpec, d: usize, tile_shape: &Shape) -> bool {
    od.is_window() && tile_shape.dim(d) < operand.shape.dim(d)
}

/// Whether every sliding dim the tile cuts is laid out as one plain (`Dynamic`) physical dim.
fn sliding_dims_are_plain(dims: &[OperandDim], operand: &TensorSpec, tile_shape: &Shape) -> bool {
    dims.iter().enumerate().filter(|(d, od)| slides(od, operand, *d, tile_shape)).all(|(d, _)| {
        operand
            .layout
            .dims()
            .iter()
            .filter(|ld| usize::from(ld.logical) == d)
            .all(|ld| ld.kind == PhysDim::Dynamic)
    })
}
