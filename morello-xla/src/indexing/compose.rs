//! Composition of indexing maps: follow one map, then another.

use morello_core::expr::{ExprError, IndexExpr, Var};

use super::{Constraint, IndexingError, IndexingMap};

/// The map that follows `first`, then `second`: `(d)[s, t] -> g(f(d, s), t)`.
///
/// With `first = (d)[s] -> f(d, s)` and `second = (e)[t] -> g(e, t)`, the result keeps the
/// dims of `first`, takes the symbols of `first` then those of `second` (renumbered after
/// them), and its domain is the domain of `first`, the constraints of `second` with `e := f(d,
/// s)`, and `f_i(d, s) in range(e_i)` for every dim of `second`. As relations it is exactly the
/// composition: `(x, z)` is related iff some `y` has `(x, y)` in `first` and `(y, z)` in
/// `second`. The result is simplified.
///
/// ```
/// use morello_xla::indexing::{IndexingMap, compose};
/// let transpose: IndexingMap = "(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 7]".parse().unwrap();
/// let reshape: IndexingMap = "(d0, d1) -> (d0 * 4 + d1), domain: d0 in [0, 7], d1 in [0, 3]".parse().unwrap();
/// let both = compose(&transpose, &reshape).unwrap();
/// assert_eq!(both.to_string(), "(d0, d1) -> (d0 + d1 * 4), domain: d0 in [0, 3], d1 in [0, 7]");
/// ```
///
/// # Errors
/// [`IndexingError::ComposeArity`] if `first` has not as many results as `second` has dims;
/// [`IndexingError::Arithmetic`] on overflow.
pub fn compose(first: &IndexingMap, second: &IndexingMap) -> Result<IndexingMap, IndexingError> {
    if first.results.len() != second.num_dims() {
        return Err(IndexingError::ComposeArity { results: first.results.len(), dims: second.num_dims() });
    }
    let shift = u32::try_from(first.num_symbols()).map_err(|_| ExprError::Overflow("a symbol number"))?;
    let mut substitute = |var: Var| -> Result<Option<IndexExpr>, ExprError> {
        Ok(Some(match var {
            Var::Dim(i) => first.results.get(i as usize).cloned().ok_or(ExprError::UnboundVariable(var))?,
            Var::Symbol(j) => {
                IndexExpr::symbol(j.checked_add(shift).ok_or(ExprError::Overflow("a symbol number"))?)
            }
        }))
    };
    let results =
        second.results.iter().map(|r| r.substitute(&mut substitute)).collect::<Result<Vec<_>, _>>()?;
    let mut constraints = first.constraints.clone();
    for c in &second.constraints {
        constraints.push(Constraint::new(c.expr.substitute(&mut substitute)?, c.range));
    }
    for (f, range) in first.results.iter().zip(&second.dim_ranges) {
        constraints.push(Constraint::new(f.clone(), *range));
    }
    let symbol_ranges = first.symbol_ranges.iter().chain(&second.symbol_ranges).copied().collect();
    let composed = IndexingMap { dim_ranges: first.dim_ranges.clone(), symbol_ranges, results, constraints };
    composed.simplify()
}
