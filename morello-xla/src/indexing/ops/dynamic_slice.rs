//! `dynamic-slice` and `dynamic-update-slice`: the run-time offsets become symbols `rt_k`, each
//! over the range XLA clamps it to, so that the window fits in the operand.
//!
//! ```text
//! dynamic-slice, window sizes w, operand sizes n:
//!   output -> operand:  d_k -> d_k + rt_k,     rt_k in [0, n_k - w_k]
//!   operand -> output:  d_k -> d_k - rt_k,     rt_k in [0, n_k - w_k],  d_k - rt_k in [0, w_k - 1]
//! dynamic-update-slice, update sizes u, output sizes n:
//!   output -> operand:  identity (XLA's map: every output element may keep the operand's value)
//!   output -> update:   d_k -> d_k - rt_k,     rt_k in [0, n_k - u_k],  d_k - rt_k in [0, u_k - 1]
//!   update -> output:   d_k -> d_k + rt_k,     rt_k in [0, n_k - u_k]
//! offsets (scalars):    output -> offset: (d...) -> ();  offset -> output: ()[s...] -> (s...)
//! ```
//!
//! A window of size 1 gives `d_k in [0, 0]`, and simplification turns `d_k + rt_k` into `rt_k`.
//!
//! A dynamic-slice offset that is an integer constant inside its clamped range is folded into
//! the map (`d0 + 42`), as XLA folds it; an offset outside the range stays a symbol over the
//! whole range, as in XLA. Dynamic-update-slice offsets are never folded (XLA does not either).

use crate::indexing::{Constraint, IndexingError, IndexingMap};
use morello_core::expr::{ExprError, IndexExpr, Interval};

use super::{d, index_ranges, s};

/// The ranges `[0, outer_k - inner_k]` of the offsets of a window `inner` inside `outer`.
fn offset_ranges(outer: &[i64], inner: &[i64]) -> Vec<Interval> {
    outer.iter().zip(inner).map(|(&n, &w)| Interval::new(0, n - w)).collect()
}

/// The offset in dimension `k`: the known value, or the symbol `rt_k` over its clamped range.
fn offset(k: usize, known: &[Option<i64>]) -> IndexExpr {
    match known.get(k).copied().flatten() {
        Some(value) => IndexExpr::constant(value),
        None => s(k),
    }
}

/// The offsets that are known: a scalar integer constant inside the range the clamp allows is
/// its own value (XLA folds it the same way); anything else is unknown (`None`), including a
/// constant the clamp would move, which XLA keeps as a run-time variable too.
pub(super) fn known_offsets(constants: &[Option<i64>], outer: &[i64], window: &[i64]) -> Vec<Option<i64>> {
    offset_ranges(outer, window)
        .iter()
        .zip(constants)
        .map(|(range, value)| value.filter(|v| range.contains(*v)))
        .collect()
}

/// `(d...)[rt...] -> (d_k + rt_k)` over `window`, the offsets ranging over `outer - window`
/// (a known offset is its value).
pub(super) fn window_to_outer(
    window: &[i64],
    outer: &[i64],
    known: &[Option<i64>],
) -> Result<IndexingMap, IndexingError> {
    let results =
        (0..window.len()).map(|k| d(k).add(&offset(k, known))).collect::<Result<Vec<_>, ExprError>>()?;
    IndexingMap::new(index_ranges(window), offset_ranges(outer, window), results, Vec::new())
}

/// `(d...)[rt...] -> (d_k - rt_k)` over `outer`, with `d_k - rt_k` inside `window` (a known
/// offset is its value).
pub(super) fn outer_to_window(
    outer: &[i64],
    window: &[i64],
    known: &[Option<i64>],
) -> Result<IndexingMap, IndexingError> {
    let mut results = Vec::with_capacity(outer.len());
    let mut constraints = Vec::with_capacity(outer.len());
    for (k, &w) in window.iter().enumerate() {
        let inside = d(k).sub(&offset(k, known))?;
        constraints.push(Constraint::new(inside.clone(), Interval::indices(w)));
        results.push(inside);
    }
    IndexingMap::new(index_ranges(outer), offset_ranges(outer, window), results, constraints)
}
