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
//!   expression with [`IndexExpr::simplify`](morello_core::expr::IndexExpr::simplify);
//! - [`compose`]: one map after another;
//! - `enumerate`: every `(source, target)` pair of a small map ([`IndexingMap::enumerate`]);
//! - `ops`: the maps of every op of [`crate::hlo`], output-to-input ([`output_to_input`]) and
//!   input-to-output ([`input_to_output`]);
//! - `fusion`: maps through a whole computation, composed op by op from its root to each
//!   parameter and back, given the maps of each instruction;
//! - `analysis`: the entry points, joining the two: an instruction's maps ([`output_to_input`],
//!   [`input_to_output`], a fusion's through its computation) and a computation's
//!   ([`computation_output_to_parameters`], [`computation_parameter_to_outputs`]), and from any
//!   value of a computation ([`computation_output_to_values`], XLA's grouped indexing, and
//!   [`computation_value_to_outputs`], its epilogue indexing);
//! - `physical`: the same maps between indices in memory order, as XLA's `use_physical_layout`
//!   ([`physical_output_to_input`], [`physical_input_to_output`]).
//!
//! ```
//! use morello_xla::hlo::{ComputationBuilder, ComputationId, HloModule, HloOp, HloShape};
//! use morello_xla::indexing::output_to_input;
//! let mut f = ComputationBuilder::new("f");
//! let p0 = f.add("p0", HloShape::array(&[20]), HloOp::Parameter { number: 0 }, &[]);
//! let bc = f.add("bc0", HloShape::array(&[10, 20, 30]), HloOp::Broadcast { dimensions: vec![1] }, &[p0]);
//! let module = HloModule::new("m", vec![f.finish(bc)], ComputationId(0)).unwrap();
//! let maps = output_to_input(&module, ComputationId(0), bc, 0).unwrap();
//! assert_eq!(
//!     maps[0].maps[0].to_string(),
//!     "(d0, d1, d2) -> (d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]"
//! );
//! ```
//!
//! This module computes maps; it does not read HLO text or print anything.

mod analysis;
mod compose;
mod enumerate;
mod error;
mod fusion;
mod map;
mod ops;
mod physical;
mod simplify;
#[cfg(test)]
mod tests;
mod text;

/// `docs/indexing-maps.md`, whose Rust example runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/indexing-maps.md")]
struct IndexingMapsGuide;

pub use analysis::{
    computation_output_to_parameters, computation_output_to_values, computation_parameter_to_outputs,
    computation_value_to_outputs, input_to_output, output_to_input,
};
pub use compose::compose;
pub use enumerate::{EnumerationLimits, IndexPair};
pub use error::IndexingError;
pub use fusion::MAX_MAPS_PER_VALUE;
pub use map::{Constraint, IndexingMap};
pub use ops::{Completeness, OperandMaps, OutputMaps, ValueMaps};
pub use physical::{physical_input_to_output, physical_output_to_input};
