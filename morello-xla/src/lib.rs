//! XLA's side of morello: shapes and layouts, HLO text, and indexing maps.
//!
//! - [`xla`]: XLA's shape and layout text, tiling, padding, linear indexing, and the bridge to
//!   morello's [`Layout`](morello_core::layout::Layout);
//! - [`hlo`]: a plain-data model of XLA HLO modules (the subset the indexing analysis reads) and
//!   its text reader;
//! - [`indexing`]: XLA-style indexing maps for every HLO op, composed through fusions;
//! - [`eval`]: a reference evaluator of HLO modules, with a bound on each result's rounding.
//!
//! Neither the search nor code generation uses this crate (`morello-compile` joins them); it depends on `morello-core` only for
//! index expressions, shapes and layouts. Nothing here does I/O, prints, or panics on a value a
//! user can write.

pub mod eval;
pub mod hlo;
pub mod indexing;
pub mod xla;
