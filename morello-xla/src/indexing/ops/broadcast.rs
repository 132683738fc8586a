//! `broadcast`: output-to-input drops the new dimensions; input-to-output adds them back as
//! symbols.
//!
//! ```text
//! operand dim i is result dim b_i (b = dimensions)
//! output -> input:  (d_0, ..., d_{n-1}) -> (d_{b_0}, ..., d_{b_{m-1}})   (`select_dims` in `mod.rs`)
//! input -> output:  (d_0, ..., d_{m-1})[s...] -> (e_0, ..., e_{n-1}),  e_{b_i} = d_i,
//!                   every other e_k a new symbol in [0, size_k - 1]
//! ```

use crate::hlo::ArrayShape;
use crate::indexing::{IndexingError, IndexingMap};

use super::{d, over_with_symbols, s};

pub(super) fn input_to_output(
    input: &ArrayShape,
    output: &ArrayShape,
    dimensions: &[usize],
) -> Result<IndexingMap, IndexingError> {
    let mut symbols = Vec::new();
    let mut results = Vec::with_capacity(output.rank());
    for (k, &size) in output.dims.iter().enumerate() {
        match dimensions.iter().position(|&b| b == k) {
            Some(i) => results.push(d(i)),
            None => {
                results.push(s(symbols.len()));
                symbols.push(morello_core::expr::Interval::indices(size));
            }
        }
    }
    over_with_symbols(&input.dims, symbols, results)
}
