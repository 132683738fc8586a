//! How an operand's dims derive from its spec's iteration dims ([`OperandDim`]), and the
//! derivations several operators share.
//!
//! Every operand dim is an iteration dim or a window over two (a convolution's image rows are
//! `stride h + dilation fh - pad_top`). For a box of the iteration space with sizes `t` starting at
//! `o`, an operand dim `a i + b j` spans `a (t_i - 1) + b (t_j - 1) + 1` elements from
//! `a o_i + b o_j`; padding shortens the operand (its zeros are not stored) and shifts the point a
//! whole spec reads, never a tile's origin (padded specs are only tiled along unpadded dims).

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
    /// Iteration dim `first` itself.
    pub const fn one(first: usize) -> Self {
        OperandDim { first, second: None, scale: 1, second_scale: 1, pad_before: 0, pad_after: 0 }
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
    pub fn window_extent(&self, sizes: &[u32]) -> u64 {
        let span = |size: u32, scale: u32| u64::from(size - 1) * u64::from(scale);
        span(sizes[self.first], self.scale) + self.second.map_or(0, |j| span(sizes[j], self.second_scale)) + 1
    }

    /// Whether the dim is a window (two iteration dims, or a stride).
    pub fn is_window(&self) -> bool {
        self.second.is_some() || self.scale != 1
    }
}

/// Every iteration dim in order: an operand of the iteration shape itself.
pub(super) fn identity(rank: usize) -> Vec<OperandDim> {
    (0..rank).map(OperandDim::one).collect()
}

/// A matmul's `lhs [b, m, k]`, `rhs [b, k, n]` and `out [b, m, n]` over `[b, m, k, n]`.
pub(super) fn matmul() -> Vec<Vec<OperandDim>> {
    vec![
        vec![OperandDim::one(0), OperandDim::one(1), OperandDim::one(2)],
        vec![OperandDim::one(0), OperandDim::one(2), OperandDim::one(3)],
        vec![OperandDim::one(0), OperandDim::one(1), OperandDim::one(3)],
    ]
}

/// A row-wise operator's whole tensor `[m, n]` over `[m, n]`.
pub(super) fn rows_cols() -> Vec<OperandDim> {
    vec![OperandDim::one(0), OperandDim::one(1)]
}

/// A row-wise operator's per-row tensor `[m]` over `[m, n]`.
pub(super) fn rows() -> Vec<OperandDim> {
    vec![OperandDim::one(0)]
}
