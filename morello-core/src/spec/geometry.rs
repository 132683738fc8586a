//! How operand dims relate to iteration dims, for shapes, tiles and tile origins.
//!
//! Every operand dim is an iteration dim or the sum of two (a convolution's image rows are
//! `h + fh`). For a box of the iteration space with sizes `t` starting at `o`, an operand dim
//! `i + j` spans `t_i + t_j - 1` elements from `o_i + o_j`.

use super::{PrimitiveKind, canonical::SpecError};
use crate::shape::Shape;

/// One operand dim: an iteration dim, or the sum of two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperandDim {
    /// The iteration dim.
    pub first: usize,
    /// A second iteration dim added to the first (sliding windows).
    pub second: Option<usize>,
}

impl OperandDim {
    const fn one(first: usize) -> Self {
        OperandDim { first, second: None }
    }

    const fn sum(first: usize, second: usize) -> Self {
        OperandDim { first, second: Some(second) }
    }

    /// The operand index where an iteration box starting at `origin` starts.
    pub fn origin(&self, origin: &[u32]) -> u32 {
        origin[self.first] + self.second.map_or(0, |j| origin[j])
    }
}

const MATMUL: [&[OperandDim]; 3] = [
    &[OperandDim::one(0), OperandDim::one(1), OperandDim::one(2)],
    &[OperandDim::one(0), OperandDim::one(2), OperandDim::one(3)],
    &[OperandDim::one(0), OperandDim::one(1), OperandDim::one(3)],
];

const CONV: [&[OperandDim]; 3] = [
    &[OperandDim::one(0), OperandDim::one(2), OperandDim::sum(3, 5), OperandDim::sum(4, 6)],
    &[OperandDim::one(1), OperandDim::one(2), OperandDim::one(5), OperandDim::one(6)],
    &[OperandDim::one(0), OperandDim::one(1), OperandDim::one(3), OperandDim::one(4)],
];

impl PrimitiveKind {
    /// The iteration rank the kind requires, or `None` for any rank (moves and fills).
    pub const fn required_rank(self) -> Option<usize> {
        match self {
            PrimitiveKind::Matmul { .. } => Some(4),
            PrimitiveKind::Conv { .. } => Some(7),
            PrimitiveKind::Move | PrimitiveKind::Fill { .. } => None,
        }
    }

    /// For each operand, how its dims derive from iteration dims of an iteration shape of `rank`.
    pub fn operand_dims(self, rank: usize) -> Vec<Vec<OperandDim>> {
        match self {
            PrimitiveKind::Matmul { .. } => MATMUL.iter().map(|dims| dims.to_vec()).collect(),
            PrimitiveKind::Conv { .. } => CONV.iter().map(|dims| dims.to_vec()).collect(),
            PrimitiveKind::Move | PrimitiveKind::Fill { .. } => {
                let identity: Vec<OperandDim> = (0..rank).map(OperandDim::one).collect();
                vec![identity; self.operand_count()]
            }
        }
    }

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
    /// # Errors
    /// [`SpecError::OperandShape`] if an operand would be too large (a convolution's image can be
    /// larger than the iteration space).
    pub fn operand_tile_shapes(self, sizes: &[u32]) -> Result<Vec<Shape>, SpecError> {
        self.operand_dims(sizes.len())
            .iter()
            .enumerate()
            .map(|(operand, dims)| {
                let dims: Vec<u32> = dims
                    .iter()
                    .map(|d| match d.second {
                        None => sizes[d.first],
                        Some(j) => sizes[d.first].saturating_add(sizes[j]) - 1,
                    })
                    .collect();
                Shape::new(dims).map_err(|source| SpecError::OperandShape { operand, source })
            })
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
