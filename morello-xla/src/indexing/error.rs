//! Errors of indexing maps and of the per-op and fusion analyses.

use morello_core::expr::{ExprError, Var};

/// Why an indexing-map operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexingError {
    /// Index arithmetic overflowed 64 bits (the shapes or maps are too large).
    #[error(transparent)]
    Arithmetic(#[from] ExprError),
    /// A result or constraint uses a variable the map does not declare (the caller's map).
    #[error("{var} is used but the map has {dims} dims and {symbols} symbols")]
    UnknownVariable {
        /// The variable.
        var: Var,
        /// Declared dims.
        dims: usize,
        /// Declared symbols.
        symbols: usize,
    },
    /// A point has the wrong number of dims or symbols (the caller's point).
    #[error(
        "the map takes {dims} dims and {symbols} symbols, but the point has {found_dims} and {found_symbols}"
    )]
    PointArity {
        /// Dims of the map.
        dims: usize,
        /// Symbols of the map.
        symbols: usize,
        /// Dims given.
        found_dims: usize,
        /// Symbols given.
        found_symbols: usize,
    },
    /// Two maps cannot be composed: the first's results are not the second's dims.
    #[error("cannot compose: the first map has {results} results but the second has {dims} dims")]
    ComposeArity {
        /// Results of the first map.
        results: usize,
        /// Dims of the second map.
        dims: usize,
    },
    /// Enumeration would visit more candidate points than allowed.
    #[error("the map's domain has {points} candidate points, more than the limit of {limit}")]
    TooManyPoints {
        /// Candidate points (the product of all range sizes), saturated at `u128::MAX`.
        points: u128,
        /// The limit.
        limit: u64,
    },
    /// Enumeration found more pairs than allowed.
    #[error("the map relates more than {limit} pairs of indices")]
    TooManyPairs {
        /// The limit.
        limit: usize,
    },
    /// A fusion reads one value in more distinct ways than allowed.
    #[error("instruction `{instruction}` is reached by more than {limit} distinct indexing maps")]
    TooManyMaps {
        /// The instruction.
        instruction: String,
        /// The limit.
        limit: usize,
    },
    /// The caller asked about a computation, instruction, operand or output that does not
    /// exist.
    #[error("{0} does not exist")]
    NoSuch(String),
}
