//! The morello IR and its algebra.
//!
//! This crate holds the values every other stage manipulates, and nothing that does I/O, prints,
//! or searches:
//!
//! - [`expr`]: integer index expressions with a range-driven simplifier;
//! - [`layout`]: the layout algebra (`PhysDim::{Dynamic, Packed, OddEven}`) and buffer indexing;
//! - [`hlo`]: a plain-data model of XLA HLO modules (the subset the indexing analysis reads);
//! - [`indexing`]: XLA-style indexing maps for every HLO op, composed through fusions.
//!
//! Every value a user can write has a text form that prints and parses back, and nothing in this
//! crate panics on a value a user can write.

pub mod expr;
pub mod hlo;
pub mod indexing;
pub mod layout;
pub mod shape;
