//! Integer index expressions over dimensions `d_i` and symbols `s_j`.
//!
//! An [`IndexExpr`] is a sum of `coefficient * atom` terms plus a constant, where an [`Atom`] is a
//! variable, `e floordiv c`, `e ceildiv c` or `e mod c` for a positive constant `c`. This is the
//! language of buffer offsets (layouts), tile origins and XLA indexing maps.
//!
//! ```text
//! expr  = Σ coeff_i * atom_i + constant      (terms sorted by atom, atoms unique, coeffs non-zero)
//! atom  = d_i | s_j | (expr) floordiv c | (expr) ceildiv c | (expr) mod c      (c > 0)
//! ```
//!
//! Semantics follow MLIR's affine expressions: `floordiv` rounds toward negative infinity,
//! `ceildiv` toward positive infinity, and `x mod c` is always in `[0, c - 1]`.
//! All arithmetic is on `i64`; an overflow is reported as [`ExprError::Overflow`], never wrapped.
//!
//! The constructors normalise sums (like terms merge, constants fold) but apply no range-driven
//! rewrite; [`IndexExpr::simplify`] does that given a [`RangeEnv`].
//!
//! This module does not know about layouts or maps; it is pure integer algebra.

mod interval;
mod parse;
mod simplify;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use interval::{Interval, RangeEnv};
pub use parse::ExprParseError;

/// A variable of an index expression: a dimension `d_i` or a symbol `s_j`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Var {
    /// The dimension variable `d_i`.
    Dim(u32),
    /// The symbol variable `s_j`.
    Symbol(u32),
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Var::Dim(i) => write!(f, "d{i}"),
            Var::Symbol(j) => write!(f, "s{j}"),
        }
    }
}

/// Errors of index-expression arithmetic and evaluation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    /// A result does not fit in 64 bits (the caller's values are too large).
    #[error("integer overflow while computing {0}")]
    Overflow(&'static str),
    /// A divisor or modulus was zero or negative (the caller passed a bad constant).
    #[error("divisor must be positive, got {0}")]
    NonPositiveDivisor(i64),
    /// A variable has no value or no range in the given environment (the caller's environment is incomplete).
    #[error("variable {0} has no value or range")]
    UnboundVariable(Var),
}

/// One `coeff * atom` term of an [`IndexExpr`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Term {
    /// The non-zero coefficient.
    pub coeff: i64,
    /// The atom it multiplies.
    pub atom: Atom,
}

/// The non-linear building blocks of an [`IndexExpr`].
///
/// The derived order (variables first, dimensions before symbols, then `floordiv`, `ceildiv` and
/// `mod` atoms) is the canonical order of terms in a sum and when printing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Atom {
    /// A variable.
    Var(Var),
    /// `e floordiv c` with `c > 0`.
    FloorDiv(Box<IndexExpr>, i64),
    /// `e ceildiv c` with `c > 0`.
    CeilDiv(Box<IndexExpr>, i64),
    /// `e mod c` with `c > 0`, in `[0, c - 1]`.
    Mod(Box<IndexExpr>, i64),
}

/// An integer index expression: `Σ coeff_i * atom_i + constant`.
///
/// # Invariants
/// Terms are sorted by atom, no two terms share an atom, and no coefficient is zero. Two
/// expressions that are equal as sums therefore compare equal.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct IndexExpr {
    terms: Vec<Term>,
    constant: i64,
}

/// Values of the variables at one point, for [`IndexExpr::eval`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Point<'a> {
    /// Values of `d0, d1, ...`.
    pub dims: &'a [i64],
    /// Values of `s0, s1, ...`.
    pub symbols: &'a [i64],
}

impl Point<'_> {
    fn value(&self, var: Var) -> Result<i64, ExprError> {
        let found = match var {
            Var::Dim(i) => self.dims.get(i as usize),
            Var::Symbol(j) => self.symbols.get(j as usize),
        };
        found.copied().ok_or(ExprError::UnboundVariable(var))
    }
}

pub(crate) fn checked_add(a: i64, b: i64) -> Result<i64, ExprError> {
    a.checked_add(b).ok_or(ExprError::Overflow("a sum"))
}

pub(crate) fn checked_mul(a: i64, b: i64) -> Result<i64, ExprError> {
    a.checked_mul(b).ok_or(ExprError::Overflow("a product"))
}

fn check_divisor(c: i64) -> Result<(), ExprError> {
    if c > 0 { Ok(()) } else { Err(ExprError::NonPositiveDivisor(c)) }
}

/// `a floordiv c` for `c > 0` (rounds toward negative infinity).
pub(crate) fn floor_div(a: i64, c: i64) -> i64 {
    a.div_euclid(c)
}

/// `a ceildiv c` for `c > 0` (rounds toward positive infinity).
pub(crate) fn ceil_div(a: i64, c: i64) -> Result<i64, ExprError> {
    // ceil(a / c) = -floor(-a / c); -a overflows only for i64::MIN.
    let neg = a.checked_neg().ok_or(ExprError::Overflow("a ceildiv"))?;
    floor_div(neg, c).checked_neg().ok_or(ExprError::Overflow("a ceildiv"))
}

impl IndexExpr {
    /// The constant expression `c`.
    pub fn constant(c: i64) -> Self {
        IndexExpr { terms: Vec::new(), constant: c }
    }

    /// The expression consisting of one variable.
    pub fn var(var: Var) -> Self {
        Self::from_atom(Atom::Var(var))
    }

    /// The dimension variable `d_i`.
    pub fn dim(i: u32) -> Self {
        Self::var(Var::Dim(i))
    }

    /// The symbol variable `s_j`.
    pub fn symbol(j: u32) -> Self {
        Self::var(Var::Symbol(j))
    }

    fn from_atom(atom: Atom) -> Self {
        IndexExpr { terms: vec![Term { coeff: 1, atom }], constant: 0 }
    }

    /// Builds a normalised sum from arbitrary terms (merging like atoms, dropping zeros).
    ///
    /// # Errors
    /// [`ExprError::Overflow`] if merging coefficients overflows.
    pub fn from_terms(terms: impl IntoIterator<Item = Term>, constant: i64) -> Result<Self, ExprError> {
        let mut terms: Vec<Term> = terms.into_iter().filter(|t| t.coeff != 0).collect();
        terms.sort_by(|a, b| a.atom.cmp(&b.atom));
        let mut merged: Vec<Term> = Vec::with_capacity(terms.len());
        for term in terms {
            match merged.last_mut() {
                Some(last) if last.atom == term.atom => {
                    last.coeff = checked_add(last.coeff, term.coeff)?;
                }
                _ => merged.push(term),
            }
        }
        merged.retain(|t| t.coeff != 0);
        Ok(IndexExpr { terms: merged, constant })
    }

    /// The terms, sorted by atom.
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// The constant part of the sum.
    pub fn constant_part(&self) -> i64 {
        self.constant
    }

    /// The value if the expression has no terms.
    pub fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// The variable if the expression is exactly one variable.
    pub fn as_var(&self) -> Option<Var> {
        match (self.terms.as_slice(), self.constant) {
            ([Term { coeff: 1, atom: Atom::Var(v) }], 0) => Some(*v),
            _ => None,
        }
    }

    /// `self + other`.
    ///
    /// # Errors
    /// [`ExprError::Overflow`] if a coefficient or the constant overflows.
    pub fn add(&self, other: &IndexExpr) -> Result<Self, ExprError> {
        let constant = checked_add(self.constant, other.constant)?;
        Self::from_terms(self.terms.iter().chain(&other.terms).cloned(), constant)
    }

    /// `self + c`.
    ///
    /// # Errors
    /// [`ExprError::Overflow`] if the constant overflows.
    pub fn add_constant(&self, c: i64) -> Result<Self, ExprError> {
        Ok(IndexExpr { terms: self.terms.clone(), constant: checked_add(self.constant, c)? })
    }

    /// `self - other`.
    ///
    /// # Errors
    /// [`ExprError::Overflow`] if a coefficient or the constant overflows.
    pub fn sub(&self, other: &IndexExpr) -> Result<Self, ExprError> {
        self.add(&other.neg()?)
    }

    /// `-self`.
    ///
    /// # Errors
    /// [`ExprError::Overflow`] if a coefficient is `i64::MIN`.
    pub fn neg(&self) -> Result<Self, ExprError> {
        self.mul(-1)
    }

    /// `self * c`.
    ///
    /// # Errors
    /// [`ExprError::Overflow`] if a coefficient or the constant overflows.
    pub fn mul(&self, c: i64) -> Result<Self, ExprError> {
        if c == 0 {
            return Ok(Self::constant(0));
        }
        let terms = self
            .terms
            .iter()
            .map(|t| Ok(Term { coeff: checked_mul(t.coeff, c)?, atom: t.atom.clone() }))
            .collect::<Result<Vec<_>, ExprError>>()?;
        Ok(IndexExpr { terms, constant: checked_mul(self.constant, c)? })
    }

    /// `self floordiv c`, folding constants and `c = 1`.
    ///
    /// # Errors
    /// [`ExprError::NonPositiveDivisor`] if `c <= 0`.
    pub fn floordiv(&self, c: i64) -> Result<Self, ExprError> {
        check_divisor(c)?;
        Ok(match (self.as_constant(), c) {
            (_, 1) => self.clone(),
            (Some(k), _) => Self::constant(floor_div(k, c)),
            _ => Self::from_atom(Atom::FloorDiv(Box::new(self.clone()), c)),
        })
    }

    /// `self ceildiv c`, folding constants and `c = 1`.
    ///
    /// # Errors
    /// [`ExprError::NonPositiveDivisor`] if `c <= 0`, [`ExprError::Overflow`] on a constant overflow.
    pub fn ceildiv(&self, c: i64) -> Result<Self, ExprError> {
        check_divisor(c)?;
        Ok(match (self.as_constant(), c) {
            (_, 1) => self.clone(),
            (Some(k), _) => Self::constant(ceil_div(k, c)?),
            _ => Self::from_atom(Atom::CeilDiv(Box::new(self.clone()), c)),
        })
    }

    /// `self mod c` (always in `[0, c - 1]`), folding constants and `c = 1`.
    ///
    /// # Errors
    /// [`ExprError::NonPositiveDivisor`] if `c <= 0`.
    pub fn modulo(&self, c: i64) -> Result<Self, ExprError> {
        check_divisor(c)?;
        Ok(match (self.as_constant(), c) {
            (_, 1) => Self::constant(0),
            (Some(k), _) => Self::constant(k.rem_euclid(c)),
            _ => Self::from_atom(Atom::Mod(Box::new(self.clone()), c)),
        })
    }

    /// Evaluates the expression at a point.
    ///
    /// # Errors
    /// [`ExprError::UnboundVariable`] if the point lacks a variable, [`ExprError::Overflow`] on overflow.
    pub fn eval(&self, point: &Point<'_>) -> Result<i64, ExprError> {
        let mut acc = self.constant;
        for term in &self.terms {
            let value = term.atom.eval(point)?;
            acc = checked_add(acc, checked_mul(term.coeff, value)?)?;
        }
        Ok(acc)
    }

    /// A sound inclusive interval containing every value the expression takes when each variable
    /// ranges over its interval in `env`.
    ///
    /// # Errors
    /// [`ExprError::UnboundVariable`] if `env` lacks a variable, [`ExprError::Overflow`] if a bound overflows.
    pub fn range(&self, env: &RangeEnv) -> Result<Interval, ExprError> {
        interval::range_of(self, env)
    }

    /// Replaces variables: `f(v)` returns the replacement, or `None` to keep `v`.
    ///
    /// # Errors
    /// Whatever `f` returns, and [`ExprError::Overflow`] while rebuilding.
    pub fn substitute(
        &self,
        f: &mut impl FnMut(Var) -> Result<Option<IndexExpr>, ExprError>,
    ) -> Result<Self, ExprError> {
        let mut acc = Self::constant(self.constant);
        for term in &self.terms {
            let replaced = match &term.atom {
                Atom::Var(v) => f(*v)?.unwrap_or_else(|| Self::var(*v)),
                Atom::FloorDiv(e, c) => e.substitute(f)?.floordiv(*c)?,
                Atom::CeilDiv(e, c) => e.substitute(f)?.ceildiv(*c)?,
                Atom::Mod(e, c) => e.substitute(f)?.modulo(*c)?,
            };
            acc = acc.add(&replaced.mul(term.coeff)?)?;
        }
        Ok(acc)
    }

    /// Every variable that occurs in the expression.
    pub fn vars(&self) -> BTreeSet<Var> {
        let mut out = BTreeSet::new();
        self.collect_vars(&mut out);
        out
    }

    fn collect_vars(&self, out: &mut BTreeSet<Var>) {
        for term in &self.terms {
            match &term.atom {
                Atom::Var(v) => {
                    out.insert(*v);
                }
                Atom::FloorDiv(e, _) | Atom::CeilDiv(e, _) | Atom::Mod(e, _) => e.collect_vars(out),
            }
        }
    }

    /// The simplified form of the expression under the variable ranges in `env`.
    ///
    /// Variables without a range in `env` are treated as unbounded (only range-free rules apply
    /// to expressions that mention them). The result has the same value at every point inside the
    /// ranges, and simplifying it again changes nothing.
    ///
    /// ```
    /// use morello_core::expr::{IndexExpr, Interval, RangeEnv};
    /// let e: IndexExpr = "d0 + d1 floordiv 16".parse().unwrap();
    /// let env = RangeEnv::from_dims(&[Interval::new(0, 6), Interval::new(0, 14)]);
    /// assert_eq!(e.simplify(&env).unwrap().to_string(), "d0");
    /// ```
    ///
    /// # Errors
    /// [`ExprError::Overflow`] if a rewrite would overflow.
    pub fn simplify(&self, env: &RangeEnv) -> Result<Self, ExprError> {
        simplify::simplify(self, env)
    }

    /// The number of atoms in the expression tree (a size measure for rewrites and tests).
    pub fn size(&self) -> usize {
        self.terms
            .iter()
            .map(|t| match &t.atom {
                Atom::Var(_) => 1,
                Atom::FloorDiv(e, _) | Atom::CeilDiv(e, _) | Atom::Mod(e, _) => 1 + e.size(),
            })
            .sum()
    }
}

impl Atom {
    fn eval(&self, point: &Point<'_>) -> Result<i64, ExprError> {
        match self {
            Atom::Var(v) => point.value(*v),
            Atom::FloorDiv(e, c) => Ok(floor_div(e.eval(point)?, *c)),
            Atom::CeilDiv(e, c) => ceil_div(e.eval(point)?, *c),
            Atom::Mod(e, c) => Ok(e.eval(point)?.rem_euclid(*c)),
        }
    }
}

impl From<Var> for IndexExpr {
    fn from(var: Var) -> Self {
        IndexExpr::var(var)
    }
}

impl From<i64> for IndexExpr {
    fn from(c: i64) -> Self {
        IndexExpr::constant(c)
    }
}

/// Prints the canonical text form: terms in canonical order, `d0 * 4` for a scaled variable,
/// `(d1 floordiv 8) * 4` for a scaled compound atom, the constant last.
impl fmt::Display for IndexExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            return write!(f, "{}", self.constant);
        }
        for (i, term) in self.terms.iter().enumerate() {
            let negative = term.coeff < 0;
            match (i, negative) {
                (0, true) => f.write_str("-")?,
                (0, false) => {}
                (_, true) => f.write_str(" - ")?,
                (_, false) => f.write_str(" + ")?,
            }
            let magnitude = term.coeff.unsigned_abs();
            match (&term.atom, magnitude) {
                (atom, 1) => write!(f, "{atom}")?,
                (Atom::Var(v), m) => write!(f, "{v} * {m}")?,
                (atom, m) => write!(f, "({atom}) * {m}")?,
            }
        }
        match self.constant {
            0 => Ok(()),
            c if c < 0 => write!(f, " - {}", c.unsigned_abs()),
            c => write!(f, " + {c}"),
        }
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (inner, op, c) = match self {
            Atom::Var(v) => return write!(f, "{v}"),
            Atom::FloorDiv(e, c) => (e, "floordiv", c),
            Atom::CeilDiv(e, c) => (e, "ceildiv", c),
            Atom::Mod(e, c) => (e, "mod", c),
        };
        let bare = inner.as_var().is_some() || (inner.as_constant().is_some_and(|k| k >= 0));
        if bare { write!(f, "{inner} {op} {c}") } else { write!(f, "({inner}) {op} {c}") }
    }
}

impl std::str::FromStr for IndexExpr {
    type Err = ExprParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse::parse_expr(s)
    }
}

pub use parse::{Parser, parse_expr_list};
