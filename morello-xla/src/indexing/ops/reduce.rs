//! `reduce` (variadic): output-to-input adds a symbol for every reduced dimension; the inits
//! are read by every output element.
//!
//! ```text
//! output -> input_i:  (d...)[s...] -> input index with reduced dim k = the next s (in [0, size_k - 1])
//!                     and kept dim k = the next d
//! output -> init_i:   (d...) -> ()
//! input_i -> output:  (d...) -> (the kept d_k)
//! init_i -> output:   ()[s...] -> (s...), s ranging over the output
//! ```
//! Every output of a variadic reduce reads every input, so the maps do not depend on which
//! output is asked for.

use crate::hlo::ArrayShape;
use crate::indexing::{IndexingError, IndexingMap};
use morello_core::expr::Interval;

use super::{d, index_ranges, s};

/// Maps to every operand: the `n` inputs, then the `n` inits.
pub(super) fn output_to_input(
    input: &ArrayShape,
    output: &ArrayShape,
    dimensions: &[usize],
    operands: usize,
) -> Result<Vec<IndexingMap>, IndexingError> {
    let mut symbols = Vec::new();
    let mut results = Vec::with_capacity(input.rank());
    let mut kept = 0;
    for (k, &size) in input.dims.iter().enumerate() {
        if dimensions.contains(&k) {
            results.push(s(symbols.len()));
            symbols.push(Interval::indices(size));
        } else {
            results.push(d(kept));
            kept += 1;
        }
    }
    let to_input = IndexingMap::new(index_ranges(&output.dims), symbols, results, Vec::new())?;
    let to_init = IndexingMap::new(index_ranges(&output.dims), Vec::new(), Vec::new(), Vec::new())?;
    let n = operands / 2;
    Ok((0..operands).map(|i| if i < n { to_input.clone() } else { to_init.clone() }).collect())
}

/// The map from operand `operand` (an input if below `n`, else an init) to any output.
pub(super) fn input_to_output(
    input: &ArrayShape,
    output: &ArrayShape,
    dimensions: &[usize],
    operand: usize,
    operands: usize,
) -> Result<IndexingMap, IndexingError> {
    if operand >= operands / 2 {
        return every_output(output);
    }
    let results = (0..input.rank()).filter(|k| !dimensions.contains(k)).map(d).collect();
    IndexingMap::new(index_ranges(&input.dims), Vec::new(), results, Vec::new())
}

/// `()[s...] -> (s...)` over the output: a scalar read by every output element.
pub(super) fn every_output(output: &ArrayShape) -> Result<IndexingMap, IndexingError> {
    let results = (0..output.rank()).map(s).collect();
    IndexingMap::new(Vec::new(), index_ranges(&output.dims), results, Vec::new())
}
