//! `reduce-window` (variadic): a windowed reduce over the padded (and base-dilated) input, so its
//! maps are the window maps composed with a pad's maps.
//!
//! ```text
//! per dim, window size w, stride t, window dilation r; padded input of size m, output size n:
//! output -> padded:  d -> d t + s r,  s in [0, w - 1]
//! padded -> output:  x -> (x - s r) floordiv t,  s in [0, w - 1],
//!                    (x - s r) mod t in [0, 0],  x - s r in [0, (n - 1) t]
//! output -> input_i = (output -> padded) then (pad with low_high_(base dilation - 1): padded -> input)
//! input_i -> output = (input -> padded) then (padded -> output)
//! output -> init_i:  (d...) -> ();   init_i -> output: ()[s...] -> (s...)
//! ```

use crate::hlo::{ArrayShape, PadDim, WindowDim, padded_size};
use crate::indexing::{Constraint, IndexingError, IndexingMap, compose};
use morello_core::expr::{ExprError, Interval};

use super::{d, index_ranges, inputs_then_inits, over_with_symbols, pad, s};

fn pads(window: &[WindowDim]) -> Vec<PadDim> {
    window
        .iter()
        .map(|w| PadDim { low: w.pad_low, high: w.pad_high, interior: w.base_dilation - 1 })
        .collect()
}

fn padded_dims(input: &ArrayShape, window: &[WindowDim]) -> Result<Vec<i64>, ExprError> {
    input
        .dims
        .iter()
        .zip(pads(window))
        .map(|(&n, p)| padded_size(n, p.low, p.high, p.interior).ok_or(ExprError::Overflow("a padded size")))
        .collect()
}

/// Maps to every operand: the `n` inputs, then the `n` inits.
pub(super) fn output_to_input(
    input: &ArrayShape,
    output: &ArrayShape,
    window: &[WindowDim],
    operands: usize,
) -> Result<Vec<IndexingMap>, IndexingError> {
    let symbols = window.iter().map(|w| Interval::indices(w.size)).collect();
    let results = window
        .iter()
        .enumerate()
        .map(|(k, w)| d(k).mul(w.stride)?.add(&s(k).mul(w.window_dilation)?))
        .collect::<Result<Vec<_>, ExprError>>()?;
    let to_padded = over_with_symbols(&output.dims, symbols, results)?;
    let padded = padded_dims(input, window)?;
    let to_input = compose(&to_padded, &pad::padded_to_operand(input, &padded, &pads(window))?)?;
    inputs_then_inits(to_input, output, operands)
}

/// The map from any input to any output (an init's is `every_output` in `mod.rs`).
pub(super) fn input_to_output(
    input: &ArrayShape,
    output: &ArrayShape,
    window: &[WindowDim],
) -> Result<IndexingMap, IndexingError> {
    let padded = padded_dims(input, window)?;
    let symbols = window.iter().map(|w| Interval::indices(w.size)).collect();
    let mut results = Vec::with_capacity(window.len());
    let mut constraints = Vec::new();
    for (k, (w, &n)) in window.iter().zip(&output.dims).enumerate() {
        let x = d(k).sub(&s(k).mul(w.window_dilation)?)?;
        results.push(x.floordiv(w.stride)?);
        if w.stride > 1 {
            constraints.push(Constraint::new(x.modulo(w.stride)?, Interval::point(0)));
        }
        let last = (n - 1).checked_mul(w.stride).ok_or(ExprError::Overflow("a window bound"))?;
        constraints.push(Constraint::new(x, Interval::new(0, last)));
    }
    let from_padded = IndexingMap::new(index_ranges(&padded), symbols, results, constraints)?;
    compose(&pad::operand_to_padded(input, &padded, &pads(window))?, &from_padded)
}
