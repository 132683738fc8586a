//! Operand shapes, tiles and tile origins from an iteration box, by the operand dims of the
//! kind's operator ([`PrimitiveKind::operand_dims`], each an iteration dim or a window over two: see
//! [`OperandDim`](crate::operators::OperandDim)).
//!
//! Padding is removed from windows (its zeros are not stored), so a padded convolution's tiles must
//! span its whole windows.

use smallvec::SmallVec;

use super::{PrimitiveKind, canonical::SpecError};
use crate::operators::OperandDim;
use crate::shape::{Shape, ShapeError};

impl PrimitiveKind {
    /// The shape of every operand for an iteration shape.
    ///
    /// # Errors
    /// [`SpecError::WrongRank`] if the iteration shape has the wrong rank for the kind.
    pub fn operand_shapes(self, shape: &Shape) -> Result<Vec<Shape>, SpecError> {
        if let Some(rank) = self.required_rank() {
            if shape.rank() != rank {
                return Err(SpecError::WrongRank { kind: self.name(), expected: rank, found: shape.rank() });
            }
        }
        self.operand_tile_shapes(shape.dims())
    }

    /// The shape of every operand's tile for an iteration box of `sizes` (each at least 1).
    ///
    /// Padding is removed from windows, so a padded convolution's tiles must span its whole
    /// windows (see the module doc).
    ///
    /// # Errors
    /// [`SpecError::OperandShape`] if an operand would be too large (a convolution's image can be
    /// larger than the iteration space) or padding leaves nothing of it.
    pub fn operand_tile_shapes(self, sizes: &[u32]) -> Result<Vec<Shape>, SpecError> {
        if sizes.contains(&0) {
            return Err(SpecError::OperandShape { operand: 0, source: ShapeError::ZeroDim { index: 0 } });
        }
        self.operand_dims(sizes.len())
            .iter()
            .enumerate()
            .map(|(operand, dims)| operand_tile_shape(operand, dims, sizes))
            .collect()
    }

    /// Where every operand's tile starts for an iteration box starting at `origin`.
    pub fn operand_origins(self, origin: &[u32]) -> Vec<Vec<u32>> {
        self.operand_dims(origin.len())
            .iter()
            .map(|dims| dims.iter().map(|d| d.origin(origin)).collect())
            .collect()
    }
}

/// The shape of the tile of `operand`, whose dims are `dims`, for an iteration box of `sizes`
/// (each at least 1): see [`PrimitiveKind::operand_tile_shapes`].
pub(super) fn operand_tile_shape(
    operand: usize,
    dims: &[OperandDim],
    sizes: &[u32],
) -> Result<Shape, SpecError> {
    let extents: SmallVec<[u32; 4]> = dims
        .iter()
        .map(|d| {
            let extent = d.window_extent(sizes);
            let kept = extent.saturating_sub(u64::from(d.pad_before) + u64::from(d.pad_after));
            u32::try_from(kept).unwrap_or(u32::MAX)
        })
        .collect();
    Shape::from_slice(&extents).map_err(|source| SpecError::OperandShape { operand, source })
}
