//! Inclusive integer intervals and the range analysis of index expressions.
//!
//! The analysis is interval arithmetic: sound (every value an expression takes lies in its
//! interval) but not always tight, since it treats repeated variables independently.

use serde::{Deserialize, Serialize};

use super::{Atom, ExprError, IndexExpr, Var, ceil_div, checked_add, checked_mul, floor_div};

/// An inclusive interval `[lo, hi]` of `i64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Interval {
    /// The smallest value.
    pub lo: i64,
    /// The largest value.
    pub hi: i64,
}

impl Interval {
    /// The interval `[lo, hi]`.
    pub const fn new(lo: i64, hi: i64) -> Self {
        Interval { lo, hi }
    }

    /// The single point `[v, v]`.
    pub const fn point(v: i64) -> Self {
        Interval { lo: v, hi: v }
    }

    /// The interval `[0, size - 1]` of indices into a dimension of `size` elements.
    pub const fn indices(size: i64) -> Self {
        Interval { lo: 0, hi: size - 1 }
    }

    /// Whether the interval holds no value (`lo > hi`).
    pub const fn is_empty(&self) -> bool {
        self.lo > self.hi
    }

    /// Whether `v` lies in the interval.
    pub const fn contains(&self, v: i64) -> bool {
        self.lo <= v && v <= self.hi
    }

    /// Whether every value of `other` lies in `self`.
    pub const fn contains_interval(&self, other: &Interval) -> bool {
        other.is_empty() || (self.lo <= other.lo && other.hi <= self.hi)
    }

    fn add(self, other: Interval) -> Result<Interval, ExprError> {
        Ok(Interval { lo: checked_add(self.lo, other.lo)?, hi: checked_add(self.hi, other.hi)? })
    }

    fn scale(self, c: i64) -> Result<Interval, ExprError> {
        let a = checked_mul(self.lo, c)?;
        let b = checked_mul(self.hi, c)?;
        Ok(if c >= 0 { Interval { lo: a, hi: b } } else { Interval { lo: b, hi: a } })
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}, {}]", self.lo, self.hi)
    }
}

/// The inclusive range of each variable, for [`IndexExpr::range`] and [`IndexExpr::simplify`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeEnv {
    dims: Vec<Option<Interval>>,
    symbols: Vec<Option<Interval>>,
}

impl RangeEnv {
    /// An environment with no ranges.
    pub fn new() -> Self {
        Self::default()
    }

    /// An environment giving `d_i` the range `dims[i]`.
    pub fn from_dims(dims: &[Interval]) -> Self {
        RangeEnv { dims: dims.iter().copied().map(Some).collect(), symbols: Vec::new() }
    }

    /// An environment giving `d_i` the range `dims[i]` and `s_j` the range `symbols[j]`.
    pub fn from_dims_and_symbols(dims: &[Interval], symbols: &[Interval]) -> Self {
        RangeEnv {
            dims: dims.iter().copied().map(Some).collect(),
            symbols: symbols.iter().copied().map(Some).collect(),
        }
    }

    /// The environment for indices into a shape: `d_i` in `[0, shape[i] - 1]`.
    pub fn for_shape(shape: &[u64]) -> Self {
        let dims: Vec<Interval> =
            shape.iter().map(|&s| Interval::indices(i64::try_from(s).unwrap_or(i64::MAX))).collect();
        Self::from_dims(&dims)
    }

    /// Sets the range of one variable.
    pub fn set(&mut self, var: Var, range: Interval) {
        let (list, index) = match var {
            Var::Dim(i) => (&mut self.dims, i as usize),
            Var::Symbol(j) => (&mut self.symbols, j as usize),
        };
        if list.len() <= index {
            list.resize(index + 1, None);
        }
        list[index] = Some(range);
    }

    /// The range of one variable, if known.
    pub fn get(&self, var: Var) -> Option<Interval> {
        match var {
            Var::Dim(i) => self.dims.get(i as usize).copied().flatten(),
            Var::Symbol(j) => self.symbols.get(j as usize).copied().flatten(),
        }
    }
}

pub(super) fn range_of(expr: &IndexExpr, env: &RangeEnv) -> Result<Interval, ExprError> {
    let mut acc = Interval::point(expr.constant);
    for term in &expr.terms {
        acc = acc.add(atom_range(&term.atom, env)?.scale(term.coeff)?)?;
    }
    Ok(acc)
}

fn atom_range(atom: &Atom, env: &RangeEnv) -> Result<Interval, ExprError> {
    match atom {
        Atom::Var(v) => env.get(*v).ok_or(ExprError::UnboundVariable(*v)),
        // floor is monotone: [floor(lo / c), floor(hi / c)].
        Atom::FloorDiv(e, c) => {
            let r = range_of(e, env)?;
            Ok(Interval::new(floor_div(r.lo, *c), floor_div(r.hi, *c)))
        }
        // ceil is monotone: [ceil(lo / c), ceil(hi / c)].
        Atom::CeilDiv(e, c) => {
            let r = range_of(e, env)?;
            Ok(Interval::new(ceil_div(r.lo, *c)?, ceil_div(r.hi, *c)?))
        }
        // x mod c is in [0, c - 1]; when [lo, hi] lies inside one block [q c, q c + c - 1] it is
        // exactly [lo - q c, hi - q c].
        Atom::Mod(e, c) => match range_of(e, env) {
            Ok(r) if floor_div(r.lo, *c) == floor_div(r.hi, *c) => {
                Ok(Interval::new(r.lo.rem_euclid(*c), r.hi.rem_euclid(*c)))
            }
            _ => Ok(Interval::new(0, c - 1)),
        },
    }
}
