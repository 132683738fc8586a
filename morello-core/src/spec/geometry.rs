//! How operand dims relate to iteration dims, for shapes, tiles and tile origins.
//!
//! Every operand dim is an iteration dim or a window over two (a convolution's image rows are
//! `stride h + dilation fh - pad_top`). For a box of the iteration space with sizes `t` starting at
//! `o`, an operand dim `a i + b j` spans `a (t_i - 1) + b (t_j - 1) + 1` elements from
//! `a o_i + b o_j`; padding shortens the operand (its zeros are not stored) and shifts the point a
//! whole spec reads, never a tile's origin (padded specs are only tiled along unpadded dims).

use super::{ConvGeometry, PrimitiveKind, canonical::SpecError};
use crate::shape::{Shape, ShapeError};

/// One operand dim: an iteration dim, or a window `scale i + second_scale j - pad_before`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperandDim {
    /// The iteration dim.
    pub first: usize,
    /// A second iteration dim added to the first (sliding windows).
    pub second: Option<usize>,
    /// The step of the first dim (a convolution's stride; 1 otherwise).
    pub scale: u32,
    /// The step of the second dim (a convolution's dilation).
    pub second_scale: u32,
    /// Zeros before the operand's first element (padding).
    pub pad_before: u32,
    /// Zeros after its last element.
    pub pad_after: u32,
}

impl OperandDim {
    const fn one(first: usize) -> Self {
        OperandDim { first, second: None, scale: 1, second_scale: 1, pad_before: 0, pad_after: 0 }
    }

    fn window(first: usize, second: usize, g: &ConvGeometry, axis: usize) -> Self {
        let (pad_before, pad_after) = g.pad(axis);
        OperandDim {
            first,
            second: Some(second),
            scale: u32::from(g.stride[axis]),
            second_scale: u32::from(g.dilation[axis]),
            pad_before,
            pad_after,
        }
    }

    /// The operand index where an iteration box starting at `origin` starts.
    pub fn origin(&self, origin: &[u32]) -> u32 {
        u32::try_from(self.position(origin)).unwrap_or(u32::MAX)
    }

    fn position(&self, point: &[u32]) -> u64 {
        u64::from(self.scale) * u64::from(point[self.first])
            + self.second.map_or(0, |j| u64::from(self.second_scale) * u64::from(point[j]))
    }

    /// The operand index a point of the iteration space reads, `None` in the padding.
    pub fn index(&self, point: &[u32], extent: u32) -> Option<u32> {
        let index = self.position(point).checked_sub(u64::from(self.pad_before))?;
        u32::try_from(index).ok().filter(|&i| i < extent)
    }

    /// The operand's extent for an iteration box of `sizes`, before padding is removed.
    fn window_extent(&self, sizes: &[u32]) -> u64 {
        let span = |size: u32, scale: u32| u64::from(size - 1) * u64::from(scale);
        span(sizes[self.first], self.scale) + self.second.map_or(0, |j| span(sizes[j], self.second_scale)) + 1
    }

    /// Whether the dim is a window (two iteration dims, or a stride).
    pub fn is_window(&self) -> bool {
        self.second.is_some() || self.scale != 1
    }
}

fn matmul_dims() -> Vec<Vec<OperandDim>> {
    vec![
        vec![OperandDim::one(0), OperandDim::one(1), OperandDim::one(2)],
        vec![OperandDim::one(0), OperandDim::one(2), OperandDim::one(3)],
        vec![OperandDim::one(0), OperandDim::one(1), OperandDim::one(3)],
    ]
}

fn rows_cols() -> Vec<OperandDim> {
    vec![OperandDim::one(0), OperandDim::one(1)]
}

fn rows() -> Vec<OperandDim> {
    vec![OperandDim::one(0)]
}

fn conv_dims(g: &ConvGeometry) -> Vec<Vec<OperandDim>> {
    vec![
        vec![
            OperandDim::one(0),
            OperandDim::one(2),
            OperandDim::window(3, 5, g, 0),
            OperandDim::window(4, 6, g, 1),
        ],
        vec![OperandDim::one(1), OperandDim::one(2), OperandDim::one(5), OperandDim::one(6)],
        vec![OperandDim::one(0), OperandDim::one(1), OperandDim::one(3), OperandDim::one(4)],
    ]
}

impl PrimitiveKind {
    /// The iteration rank the kind requires, or `None` for any rank (moves and fills).
    pub const fn required_rank(self) -> Option<usize> {
        match self {
            PrimitiveKind::Matmul { .. } | PrimitiveKind::MatmulBias { .. } => Some(4),
            PrimitiveKind::Conv { .. } => Some(7),
            PrimitiveKind::Softmax
            | PrimitiveKind::Max { .. }
            | PrimitiveKind::SoftmaxExp { .. }
            | PrimitiveKind::SoftmaxScale => Some(2),
            PrimitiveKind::Move | PrimitiveKind::Fill { .. } | PrimitiveKind::AddBias { .. } => None,
        }
    }

    /// For each operand, how its dims derive from iteration dims of an iteration shape of `rank`.
    pub fn operand_dims(self, rank: usize) -> Vec<Vec<OperandDim>> {
        match self {
            PrimitiveKind::Matmul { .. } => matmul_dims(),
            PrimitiveKind::MatmulBias { .. } => {
                let mut dims = matmul_dims();
                dims.insert(2, vec![OperandDim::one(3)]);
                dims
            }
            PrimitiveKind::AddBias { .. } => {
                let identity: Vec<OperandDim> = (0..rank).map(OperandDim::one).collect();
                vec![vec![OperandDim::one(rank.saturating_sub(1))], identity]
            }
            PrimitiveKind::Conv { geometry, .. } => conv_dims(&geometry),
            PrimitiveKind::Softmax => vec![rows_cols(); 2],
            PrimitiveKind::Max { .. } => vec![rows_cols(), rows()],
            PrimitiveKind::SoftmaxExp { .. } => vec![rows_cols(), rows(), rows_cols(), rows()],
            PrimitiveKind::SoftmaxScale => vec![rows(), rows_cols()],
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
            .map(|(operand, dims)| {
                let dims: Vec<u32> = dims
                    .iter()
                    .map(|d| {
                        let extent = d.window_extent(sizes);
                        let kept = extent.saturating_sub(u64::from(d.pad_before) + u64::from(d.pad_after));
                        u32::try_from(kept).unwrap_or(u32::MAX)
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
