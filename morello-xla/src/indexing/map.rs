//! The [`IndexingMap`] value: results over dims and symbols, their ranges, and constraints.

use morello_core::expr::{ExprError, IndexExpr, Interval, Point, RangeEnv, Var};

use super::IndexingError;

/// A constraint `expr in [lo, hi]` on the dims and symbols of a map.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Constraint {
    /// The constrained expression.
    pub expr: IndexExpr,
    /// The inclusive range it must lie in.
    pub range: Interval,
}

impl Constraint {
    /// The constraint `expr in range`.
    pub fn new(expr: IndexExpr, range: Interval) -> Self {
        Constraint { expr, range }
    }

    /// The canonical unsatisfiable constraint `1 in [0, 0]`, which marks a map known to be empty.
    pub fn unsatisfiable() -> Self {
        Constraint { expr: IndexExpr::constant(1), range: Interval::point(0) }
    }

    /// Whether the constraint holds at a point.
    ///
    /// # Errors
    /// [`ExprError`] if the point lacks a variable or evaluation overflows.
    pub fn holds(&self, point: &Point<'_>) -> Result<bool, ExprError> {
        Ok(self.range.contains(self.expr.eval(point)?))
    }
}

/// An indexing map `(d0, ..., d{n-1})[s0, ..., s{m-1}] -> (f_0, ..., f_{k-1})` with its domain.
///
/// The map relates a *source* index `d` to the *target* indices `f(d, s)` for every symbol
/// value `s`, where `d` and `s` range over the inclusive [`dim_ranges`](Self::dim_ranges) and
/// [`symbol_ranges`](Self::symbol_ranges) and every [`Constraint`] holds:
///
/// ```text
/// { (d, f(d, s)) : lb_d <= d <= ub_d,  lb_s <= s <= ub_s,  lb_g <= g(d, s) <= ub_g for each constraint g }
/// ```
///
/// Symbols stand for the indices of the target that are not determined by the source (the
/// reduced dimensions of a reduce, the window of a reduce-window, the broadcast dimensions when
/// mapping a broadcast's input to its output).
///
/// # Invariants
/// Results and constraints only use `d_i` with `i < dim_ranges.len()` and `s_j` with
/// `j < symbol_ranges.len()`. Ranges may be empty (`lo > hi`), which makes the map empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IndexingMap {
    pub(super) dim_ranges: Vec<Interval>,
    pub(super) symbol_ranges: Vec<Interval>,
    pub(super) results: Vec<IndexExpr>,
    pub(super) constraints: Vec<Constraint>,
}

impl IndexingMap {
    /// A map from its parts, unsimplified.
    ///
    /// # Errors
    /// [`IndexingError::UnknownVariable`] if a result or constraint uses a dim or symbol that
    /// has no range.
    pub fn new(
        dim_ranges: Vec<Interval>,
        symbol_ranges: Vec<Interval>,
        results: Vec<IndexExpr>,
        constraints: Vec<Constraint>,
    ) -> Result<Self, IndexingError> {
        let map = IndexingMap { dim_ranges, symbol_ranges, results, constraints };
        let exprs = map.results.iter().chain(map.constraints.iter().map(|c| &c.expr));
        for var in exprs.flat_map(IndexExpr::vars) {
            if !map.has_var(var) {
                return Err(IndexingError::UnknownVariable {
                    var,
                    dims: map.dim_ranges.len(),
                    symbols: map.symbol_ranges.len(),
                });
            }
        }
        Ok(map)
    }

    /// The identity map on a shape: `(d0, ..., d{n-1}) -> (d0, ..., d{n-1})` with
    /// `d_i in [0, sizes[i] - 1]`.
    pub fn identity(sizes: &[i64]) -> Self {
        IndexingMap {
            dim_ranges: sizes.iter().map(|&s| Interval::indices(s)).collect(),
            symbol_ranges: Vec::new(),
            results: (0..sizes.len()).map(|i| IndexExpr::dim(var_index(i))).collect(),
            constraints: Vec::new(),
        }
    }

    /// The range of each dim `d_i`.
    pub fn dim_ranges(&self) -> &[Interval] {
        &self.dim_ranges
    }

    /// The range of each symbol `s_j`.
    pub fn symbol_ranges(&self) -> &[Interval] {
        &self.symbol_ranges
    }

    /// The result expressions (one per target dimension).
    pub fn results(&self) -> &[IndexExpr] {
        &self.results
    }

    /// The constraints on dims and symbols.
    pub fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }

    /// The number of dims (the source rank).
    pub fn num_dims(&self) -> usize {
        self.dim_ranges.len()
    }

    /// The number of symbols.
    pub fn num_symbols(&self) -> usize {
        self.symbol_ranges.len()
    }

    /// The variable ranges as an environment for [`IndexExpr::range`] and [`IndexExpr::simplify`].
    pub fn range_env(&self) -> RangeEnv {
        RangeEnv::from_dims_and_symbols(&self.dim_ranges, &self.symbol_ranges)
    }

    pub(super) fn has_var(&self, var: Var) -> bool {
        match var {
            Var::Dim(i) => (i as usize) < self.dim_ranges.len(),
            Var::Symbol(j) => (j as usize) < self.symbol_ranges.len(),
        }
    }

    /// Whether the map is known to relate nothing: a range is empty or a constraint on a
    /// constant fails (as in the canonical `1 in [0, 0]` that [`simplify`](Self::simplify)
    /// leaves in an unsatisfiable map). A `false` answer does not prove the map non-empty;
    /// [`enumerate`](Self::enumerate) decides it exactly for small maps.
    pub fn is_known_empty(&self) -> bool {
        self.dim_ranges.iter().chain(&self.symbol_ranges).any(Interval::is_empty)
            || self.constraints.iter().any(|c| c.expr.as_constant().is_some_and(|k| !c.range.contains(k)))
    }

    /// Evaluates the map at a point: `Some(f(d, s))` if `(d, s)` is in the domain (every range
    /// and constraint holds), `None` if it is not.
    ///
    /// ```
    /// use morello_xla::indexing::IndexingMap;
    /// let map: IndexingMap = "(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 9]".parse().unwrap();
    /// assert_eq!(map.evaluate(&[2, 7], &[]).unwrap(), Some(vec![7, 2]));
    /// assert_eq!(map.evaluate(&[4, 7], &[]).unwrap(), None);
    /// ```
    ///
    /// # Errors
    /// [`IndexingError::PointArity`] if the point has the wrong number of dims or symbols,
    /// [`IndexingError::Arithmetic`] on overflow.
    pub fn evaluate(&self, dims: &[i64], symbols: &[i64]) -> Result<Option<Vec<i64>>, IndexingError> {
        if dims.len() != self.num_dims() || symbols.len() != self.num_symbols() {
            return Err(IndexingError::PointArity {
                dims: self.num_dims(),
                symbols: self.num_symbols(),
                found_dims: dims.len(),
                found_symbols: symbols.len(),
            });
        }
        let inside =
            |values: &[i64], ranges: &[Interval]| values.iter().zip(ranges).all(|(v, r)| r.contains(*v));
        if !inside(dims, &self.dim_ranges) || !inside(symbols, &self.symbol_ranges) {
            return Ok(None);
        }
        let point = Point { dims, symbols };
        for constraint in &self.constraints {
            if !constraint.holds(&point)? {
                return Ok(None);
            }
        }
        let values = self.results.iter().map(|r| r.eval(&point)).collect::<Result<Vec<_>, _>>()?;
        Ok(Some(values))
    }
}

/// A dim or symbol number as the `u32` that [`Var`] stores.
///
/// Ranks and symbol counts come from shapes and attributes, far below `u32::MAX`; a larger
/// count saturates, and [`IndexingMap::new`] then reports the variable as unknown.
pub(crate) fn var_index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}
