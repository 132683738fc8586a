//! `slice` with strides: output-to-input is affine on the whole output; input-to-output is
//! defined on the strided subset of the input that is read.
//!
//! ```text
//! per dim k, with start a, stride t and n output elements:
//! output -> input:  d_k -> a + t d_k
//! input -> output:  d_k -> (d_k - a) floordiv t,  d_k in [a, a + t (n - 1)],  (d_k - a) mod t in [0, 0]
//! ```

use crate::hlo::{ArrayShape, SliceDim};
use crate::indexing::{Constraint, IndexingError, IndexingMap};
use morello_core::expr::{ExprError, Interval};

use super::{d, over};

pub(super) fn output_to_input(output: &ArrayShape, dims: &[SliceDim]) -> Result<IndexingMap, IndexingError> {
    let results = dims
        .iter()
        .enumerate()
        .map(|(k, sd)| d(k).mul(sd.stride)?.add_constant(sd.start))
        .collect::<Result<Vec<_>, ExprError>>()?;
    over(&output.dims, results)
}

pub(super) fn input_to_output(
    input: &ArrayShape,
    output: &ArrayShape,
    dims: &[SliceDim],
) -> Result<IndexingMap, IndexingError> {
    let mut ranges = Vec::with_capacity(input.rank());
    let mut results = Vec::with_capacity(input.rank());
    let mut constraints = Vec::new();
    for (k, (sd, &n)) in dims.iter().zip(&output.dims).enumerate() {
        let last =
            n.checked_sub(1).and_then(|m| m.checked_mul(sd.stride)).and_then(|m| m.checked_add(sd.start));
        ranges.push(Interval::new(sd.start, last.ok_or(ExprError::Overflow("a slice bound"))?));
        let offset = d(k).add_constant(-sd.start)?;
        results.push(offset.floordiv(sd.stride)?);
        if sd.stride > 1 {
            constraints.push(Constraint::new(offset.modulo(sd.stride)?, Interval::point(0)));
        }
    }
    IndexingMap::new(ranges, Vec::new(), results, constraints)
}
