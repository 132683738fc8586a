//! `dot`: like a reduce over the contracting dimensions, with the free dimensions of the other
//! operand as symbols in the input-to-output direction.
//!
//! ```text
//! output dims: batch dims, then the lhs free dims, then the rhs free dims (each in order)
//! output -> lhs:  batch dim -> its output d, free dim -> its output d, contracting pair j -> s_j
//! output -> rhs:  the same, with the rhs dims
//! lhs -> output:  (d...)[s...] -> (batch d..., lhs free d..., s over the rhs free dims)
//! rhs -> output:  (d...)[s...] -> (batch d..., s over the lhs free dims, rhs free d...)
//! ```

use crate::hlo::{ArrayShape, DotDimensions};
use crate::indexing::{IndexingError, IndexingMap};
use morello_core::expr::{IndexExpr, Interval};

use super::{d, over_with_symbols, s};

/// Which operand of the dot.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Lhs,
    Rhs,
}

struct Sides<'a> {
    lhs: &'a ArrayShape,
    rhs: &'a ArrayShape,
    dims: &'a DotDimensions,
}

impl Sides<'_> {
    fn shape(&self, side: Side) -> &ArrayShape {
        if side == Side::Lhs { self.lhs } else { self.rhs }
    }

    fn batch(&self, side: Side) -> &[usize] {
        if side == Side::Lhs { &self.dims.lhs_batch } else { &self.dims.rhs_batch }
    }

    fn contracting(&self, side: Side) -> &[usize] {
        if side == Side::Lhs { &self.dims.lhs_contracting } else { &self.dims.rhs_contracting }
    }

    fn free(&self, side: Side) -> Vec<usize> {
        (0..self.shape(side).rank())
            .filter(|k| !self.batch(side).contains(k) && !self.contracting(side).contains(k))
            .collect()
    }

    /// The output position of the first free dim of `side`.
    fn free_offset(&self, side: Side) -> usize {
        self.dims.lhs_batch.len() + if side == Side::Lhs { 0 } else { self.free(Side::Lhs).len() }
    }

    fn output_to_input(&self, side: Side, output: &ArrayShape) -> Result<IndexingMap, IndexingError> {
        let shape = self.shape(side);
        let free = self.free(side);
        let offset = self.free_offset(side);
        let mut results = Vec::with_capacity(shape.rank());
        let mut symbols = Vec::new();
        for k in 0..shape.rank() {
            if let Some(b) = self.batch(side).iter().position(|&x| x == k) {
                results.push(d(b));
            } else if let Some(j) = self.contracting(side).iter().position(|&x| x == k) {
                results.push(s(j));
            } else {
                let f = free.iter().position(|&x| x == k).unwrap_or(0);
                results.push(d(offset + f));
            }
        }
        for &k in self.contracting(side) {
            symbols.push(Interval::indices(shape.dims.get(k).copied().unwrap_or(0)));
        }
        over_with_symbols(&output.dims, symbols, results)
    }

    fn input_to_output(&self, side: Side, output: &ArrayShape) -> Result<IndexingMap, IndexingError> {
        let shape = self.shape(side);
        let mut results: Vec<IndexExpr> = self.batch(side).iter().map(|&k| d(k)).collect();
        let mut symbols = Vec::new();
        for (position, &size) in output.dims.iter().enumerate().skip(results.len()) {
            let own = self.free_offset(side);
            let free = self.free(side);
            if (own..own + free.len()).contains(&position) {
                results.push(d(free[position - own]));
            } else {
                results.push(s(symbols.len()));
                symbols.push(Interval::indices(size));
            }
        }
        over_with_symbols(&shape.dims, symbols, results)
    }
}

/// Maps to the lhs and the rhs.
pub(super) fn output_to_input(
    lhs: &ArrayShape,
    rhs: &ArrayShape,
    output: &ArrayShape,
    dims: &DotDimensions,
) -> Result<Vec<IndexingMap>, IndexingError> {
    let sides = Sides { lhs, rhs, dims };
    Ok(vec![sides.output_to_input(Side::Lhs, output)?, sides.output_to_input(Side::Rhs, output)?])
}

pub(super) fn input_to_output(
    lhs: &ArrayShape,
    rhs: &ArrayShape,
    output: &ArrayShape,
    dims: &DotDimensions,
    operand: usize,
) -> Result<IndexingMap, IndexingError> {
    let side = if operand == 0 { Side::Lhs } else { Side::Rhs };
    Sides { lhs, rhs, dims }.input_to_output(side, output)
}
