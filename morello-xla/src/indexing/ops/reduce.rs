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

use super::{d, inputs_then_inits, over, over_with_symbols, s};

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
    inputs_then_inits(over_with_symbols(&output.dims, symbols, results)?, output, operands)
}

/// The map from any input to any output (an init's is `every_output` in `mod.rs`).
pub(super) fn input_to_output(
    input: &ArrayShape,
    dimensions: &[usize],
) -> Result<IndexingMap, IndexingError> {
    let results = (0..input.rank()).filter(|k| !dimensions.contains(k)).map(d).collect();
    over(&input.dims, results)
}
