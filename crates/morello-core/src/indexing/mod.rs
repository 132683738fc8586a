//! XLA-style indexing maps (seed 003): which elements of one tensor an element of another reads.
//!
//! An [`IndexingMap`] `(d0, d1)[s0] -> (d0, s0)` maps an index `d` of a *source* tensor to
//! indices `f(d, s)` of a *target* tensor, for every value of the symbols `s`, over a domain of
//! inclusive ranges for every dim and symbol plus constraints `g(d, s) in [lo, hi]`:
//!
//! ```text
//! (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 9], d1 in [0, 19], s0 in [0, 29]
//! ```
//!
//! - [`map`](IndexingMap): the value, evaluation at a point, and emptiness;
//! - `text`: printing and parsing (the form above; see [`IndexingMap`]'s `FromStr`);
//! - `simplify`: the canonical form ([`IndexingMap::simplify`]) that rewrites constraints to
//!   bounds, drops constraints that always hold, detects unsatisfiable ones, and simplifies every
//!   expression with [`IndexExpr::simplify`](crate::expr::IndexExpr::simplify);
//! - [`compose`]: one map after another;
//! - `enumerate`: every `(source, target)` pair of a small map ([`IndexingMap::enumerate`]).
//!
//! This module computes maps; it does not read text files or print anything.

mod compose;
mod enumerate;
mod error;
mod map;
mod simplify;
#[cfg(test)]
mod tests;
mod text;

pub use compose::compose;
pub use enumerate::{EnumerationLimits, IndexPair};
pub use error::IndexingError;
pub use map::{Constraint, IndexingMap};
