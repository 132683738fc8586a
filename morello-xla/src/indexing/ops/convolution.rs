//! `convolution`: output-to-input maps, as XLA's; XLA has no input-to-output map of a
//! convolution, and neither does this file (the analysis answers unknown).
//!
//! ```text
//! symbols: one window offset w_k per spatial dimension k, and the input feature i in a group
//! output (b, f, p_k) -> lhs:  batch    g B' + b, g in [0, H - 1]             (H batch groups)
//!                             feature  (f floordiv (F / G)) (C / G) + i     (G feature groups)
//!                             spatial  p_k t_k + w_k r_k, then the pad of the window's padding
//!                                      and base dilation (as reduce-window's)
//! output (b, f, p_k) -> rhs:  (w_k, i, f): every kernel element of the output's group is read
//! ```
//!
//! `F` is the number of output features, `B'` the output batch, `C` the input features.
//!
//! With batch groups, the batch group `g` an output feature reads is a symbol over every group,
//! as in XLA's map: the StableHLO specification gives output feature `f` the group
//! `f floordiv (F / H)`, while XLA's reference evaluator uses `(f floordiv (F / B)) B' mod B`
//! (they differ when `B' > 1`), so the map relates each output feature to every group, which
//! contains what either reads.

use crate::hlo::{ArrayShape, ConvolutionDimensions, PadDim, WindowDim, padded_size};
use crate::indexing::{IndexingError, IndexingMap, compose};
use morello_core::expr::{ExprError, IndexExpr, Interval};

use super::{d, over_with_symbols, pad, s};

/// A convolution's attributes.
pub(super) struct Convolution<'a> {
    pub window: &'a [WindowDim],
    pub dims: &'a ConvolutionDimensions,
    pub feature_group_count: i64,
    pub batch_group_count: i64,
}

/// The maps to the lhs and the rhs.
pub(super) fn output_to_input(
    lhs: &ArrayShape,
    rhs: &ArrayShape,
    output: &ArrayShape,
    conv: &Convolution<'_>,
) -> Result<Vec<IndexingMap>, IndexingError> {
    let dims = conv.dims;
    let n = dims.lhs_spatial.len();
    let out_features = output.dims[dims.output_feature];
    let group_features = rhs.dims[dims.rhs_input_feature];
    let mut symbols: Vec<Interval> = conv.window.iter().map(|w| Interval::indices(w.size)).collect();
    symbols.push(Interval::indices(group_features));
    let feature = s(n);
    let feature_group = if conv.feature_group_count == 1 {
        IndexExpr::constant(0)
    } else {
        d(dims.output_feature).floordiv(out_features / conv.feature_group_count)?
    };
    let mut lhs_symbols = symbols.clone();
    let batch_group = if conv.batch_group_count == 1 {
        IndexExpr::constant(0)
    } else {
        lhs_symbols.push(Interval::indices(conv.batch_group_count));
        s(n + 1)
    };
    // In the padded, base-dilated lhs.
    let mut results = vec![IndexExpr::constant(0); n + 2];
    results[dims.lhs_batch] = batch_group.mul(output.dims[dims.output_batch])?.add(&d(dims.output_batch))?;
    results[dims.lhs_feature] = feature_group.mul(group_features)?.add(&feature)?;
    let mut pads = vec![PadDim { low: 0, high: 0, interior: 0 }; n + 2];
    let mut padded = lhs.dims.clone();
    for (k, w) in conv.window.iter().enumerate() {
        let at = dims.lhs_spatial[k];
        results[at] = d(dims.output_spatial[k]).mul(w.stride)?.add(&s(k).mul(w.window_dilation)?)?;
        pads[at] = PadDim { low: w.pad_low, high: w.pad_high, interior: w.base_dilation - 1 };
        padded[at] = padded_size(lhs.dims[at], w.pad_low, w.pad_high, w.base_dilation - 1)
            .ok_or(ExprError::Overflow("a padded size"))?;
    }
    let to_padded = over_with_symbols(&output.dims, lhs_symbols, results)?;
    let to_lhs = compose(&to_padded, &pad::padded_to_operand(lhs, &padded, &pads)?)?;
    let mut kernel = vec![IndexExpr::constant(0); n + 2];
    kernel[dims.rhs_output_feature] = d(dims.output_feature);
    kernel[dims.rhs_input_feature] = feature;
    for k in 0..n {
        kernel[dims.rhs_spatial[k]] = s(k);
    }
    let to_rhs = over_with_symbols(&output.dims, symbols, kernel)?;
    Ok(vec![to_lhs, to_rhs])
}
