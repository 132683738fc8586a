//! `reshape` and `bitcast`: linearise the source index, then delinearise it in the target shape.
//!
//! A reshape keeps the row-major order of elements. A bitcast keeps the buffer: each shape is
//! walked in its layout's physical order (major to minor), which is a transpose, a reshape of
//! the physical shapes, and a transpose back. With the physical order `o_0, ..., o_{n-1}` of a
//! shape (major first) and `stride_j` the product of the sizes of `o_{j+1}, ...`:
//!
//! ```text
//! linear(d)          = Σ_j d_{o_j} stride_j
//! delinear(x)_{o_j}  = (x floordiv stride_j) mod size_{o_j}
//! map                = source index -> delinear_target(linear_source(d))
//! ```
//!
//! Collapse (`[4, 8] -> [32]`: `d0 -> (d0 floordiv 8, d0 mod 8)`), expand and the generic
//! reshapes are all this one formula; the simplifier turns it into the seed's forms.

use crate::hlo::ArrayShape;
use crate::indexing::{IndexingError, IndexingMap};
use morello_core::expr::{ExprError, IndexExpr};

use super::{d, index_ranges};

/// The map from indices of `source` to indices of `target` that hold the same element in
/// row-major order.
pub(super) fn reshape(source: &ArrayShape, target: &ArrayShape) -> Result<IndexingMap, IndexingError> {
    let row_major = |shape: &ArrayShape| (0..shape.rank()).collect::<Vec<_>>();
    relinearize(source, &row_major(source), target, &row_major(target))
}

/// The map from indices of `source` to indices of `target` that hold the same buffer position
/// under their layouts.
pub(super) fn bitcast(source: &ArrayShape, target: &ArrayShape) -> Result<IndexingMap, IndexingError> {
    relinearize(source, &source.major_to_minor(), target, &target.major_to_minor())
}

fn relinearize(
    source: &ArrayShape,
    source_order: &[usize],
    target: &ArrayShape,
    target_order: &[usize],
) -> Result<IndexingMap, IndexingError> {
    let ranges = index_ranges(&source.dims);
    if source.dims.contains(&0) || target.dims.contains(&0) {
        // No element: the map is empty, whatever its results.
        let results = vec![IndexExpr::constant(0); target.rank()];
        return IndexingMap::new(ranges, Vec::new(), results, Vec::new());
    }
    let mut linear = IndexExpr::constant(0);
    for (&dim, stride) in source_order.iter().zip(strides(source, source_order)?) {
        linear = linear.add(&d(dim).mul(stride)?)?;
    }
    let mut results = vec![IndexExpr::constant(0); target.rank()];
    for (&dim, stride) in target_order.iter().zip(strides(target, target_order)?) {
        let size = target.dims.get(dim).copied().unwrap_or(1);
        if let Some(slot) = results.get_mut(dim) {
            *slot = linear.floordiv(stride)?.modulo(size)?;
        }
    }
    IndexingMap::new(ranges, Vec::new(), results, Vec::new())
}

/// The stride of each physical dimension, in the order given (major first).
fn strides(shape: &ArrayShape, order: &[usize]) -> Result<Vec<i64>, ExprError> {
    let mut out = vec![1i64; order.len()];
    let mut acc: i64 = 1;
    for j in (0..order.len()).rev() {
        out[j] = acc;
        let size = shape.dims.get(order[j]).copied().unwrap_or(1);
        acc = acc.checked_mul(size).ok_or(ExprError::Overflow("a stride"))?;
    }
    Ok(out)
}
