//! `transpose`: a permutation of the dimensions.
//!
//! ```text
//! result dim i is operand dim p_i (p = dimensions)
//! output -> input:  operand dim p_i = d_i, i.e. (d_0, ...) -> (d_{q_0}, ...) with q = p^-1
//! input -> output:  (d_0, ...) -> (d_{p_0}, d_{p_1}, ...)   (`select_dims` in `mod.rs`)
//! ```

use crate::hlo::ArrayShape;
use crate::indexing::{IndexingError, IndexingMap};

use super::select_dims;

pub(super) fn output_to_input(
    output: &ArrayShape,
    dimensions: &[usize],
) -> Result<IndexingMap, IndexingError> {
    let mut inverse = vec![0; dimensions.len()];
    for (i, &p) in dimensions.iter().enumerate() {
        if let Some(slot) = inverse.get_mut(p) {
            *slot = i;
        }
    }
    select_dims(output, &inverse)
}
