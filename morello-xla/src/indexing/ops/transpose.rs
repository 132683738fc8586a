//! `transpose`: a permutation of the dimensions.
//!
//! ```text
//! result dim i is operand dim p_i (p = dimensions)
//! output -> input:  operand dim p_i = d_i, i.e. (d_0, ...) -> (d_{q_0}, ...) with q = p^-1
//! input -> output:  (d_0, ...) -> (d_{p_0}, d_{p_1}, ...)
//! ```

use crate::hlo::ArrayShape;
use crate::indexing::{IndexingError, IndexingMap};

use super::{d, index_ranges};

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
    let results = inverse.into_iter().map(d).collect();
    IndexingMap::new(index_ranges(&output.dims), Vec::new(), results, Vec::new())
}

pub(super) fn input_to_output(
    input: &ArrayShape,
    dimensions: &[usize],
) -> Result<IndexingMap, IndexingError> {
    let results = dimensions.iter().map(|&p| d(p)).collect();
    IndexingMap::new(index_ranges(&input.dims), Vec::new(), results, Vec::new())
}
