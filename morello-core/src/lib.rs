//! The morello IR and its algebra.
//!
//! This crate holds the values every other stage manipulates, and nothing that does I/O, prints,
//! or searches:
//!
//! - [`expr`]: integer index expressions with a range-driven simplifier;
//! - [`shape`], [`layout`]: shapes and the layout algebra (`PhysDim::{Dynamic, Packed, OddEven}`);
//! - [`dtype`], [`target`]: element types, and targets as data (levels, kernels, cost constants);
//! - [`operators`]: the operator catalogue, what specs compute (one file per operator);
//! - [`spec`]: what to compute on which operands (canonical forms, text), built on the operators;
//! - [`kernels`]: the kernel catalogue; [`cost`]: the cost model;
//! - [`imp`]: implementation trees; [`interp`]: the reference interpreter;
//! - [`text`]: the one text cursor and span every parser in the workspace reads with.
//!
//! XLA's shapes, HLO text and indexing maps are in the `morello-xla` crate, which builds on
//! [`expr`], [`shape`] and [`layout`].
//!
//! Every value a user can write has a text form that prints and parses back, and nothing in this
//! crate panics on a value a user can write.

pub mod cost;
pub mod dtype;
pub mod expr;
pub mod imp;
pub mod interp;
pub mod isa;
#[macro_use]
mod kernel_kind;
pub mod kernels;
pub mod layout;
pub mod operators;
pub mod shape;
pub mod spec;
pub mod target;
pub mod text;
