//! `gather`: slices of the operand at run-time start indices, in every form XLA's HLO allows
//! (XLA's own analysis answers only for the "simplified" form its GatherSimplifier produces:
//! indices of rank 2, `index_vector_dim=1`, nothing collapsed; on that form the maps are XLA's).
//!
//! ```text
//! batch dims B  = output dims not in offset_dims; B[p] indexes start_indices dim I[p]
//!                 (I = every start_indices dim but index_vector_dim, in order)
//! window dims W = operand dims neither collapsed nor batching; W[w] is indexed by offset_dims[w]
//! output -> operand:  e_i = start_i + offset_i
//!                     start_i  = rt_k over [0, operand_i - slice_i]   if i = start_index_map[k]
//!                              = d_{B[p]}                             if i is batching, paired with I[p]
//!                              = 0                                    otherwise
//!                     offset_i = d_{offset_dims[w]} if i = W[w], else 0
//! output -> start_indices:  (d_{B[0]}, ..., s, ...) with s over the index vector at index_vector_dim
//! ```
//!
//! The start indices are clamped so that the slice fits, hence the ranges of `rt_k`. When the
//! start indices are an `iota` (or an integer scalar constant), the values are known and folded
//! in, as XLA folds them; where an iota's value would be clamped, the map splits in two: the
//! values that fit, and the clamped last start. XLA has no input-to-output map of a gather,
//! and neither does this file (the analysis answers unknown).

use morello_core::expr::{IndexExpr, Interval};

use crate::hlo::{ArrayShape, GatherDimensions};
use crate::indexing::{Constraint, IndexingError, IndexingMap};

use super::{d, index_ranges, over_with_symbols, s};

/// What is known of the values of the start indices.
pub(super) enum StartValues {
    /// Run-time values.
    Unknown,
    /// An `iota` along this dimension of the start indices.
    Iota(usize),
    /// An integer scalar constant (start indices of rank 0).
    Scalar(i64),
}

/// One way a start index can be: its expression, and the range its value must lie in for it.
type Piece = (IndexExpr, Option<Constraint>);

/// The maps to the operand (one or more) and to the start indices.
pub(super) fn output_to_input(
    operand: &ArrayShape,
    indices: &ArrayShape,
    output: &ArrayShape,
    dims: &GatherDimensions,
    values: &StartValues,
) -> Result<(Vec<IndexingMap>, IndexingMap), IndexingError> {
    let batch_out: Vec<usize> = (0..output.rank()).filter(|k| !dims.offset_dims.contains(k)).collect();
    let index_batch: Vec<usize> = (0..indices.rank()).filter(|&k| k != dims.index_vector_dim).collect();
    // The output dim that indexes start_indices dim `j` (j != index_vector_dim).
    let batch_dim_of = |j: usize| index_batch.iter().position(|&k| k == j).map(|p| batch_out[p]);

    // Start indices: the batch dims, and the index vector as a symbol.
    let vector = indices.dims.get(dims.index_vector_dim).copied();
    let index_results: Vec<IndexExpr> = (0..indices.rank())
        .map(|j| {
            if j == dims.index_vector_dim { s(0) } else { batch_dim_of(j).map_or(IndexExpr::constant(0), d) }
        })
        .collect();
    let index_symbols = vector.map(|k| vec![Interval::indices(k)]).unwrap_or_default();
    let to_indices = over_with_symbols(&output.dims, index_symbols, index_results)?;

    // The start index of each operand dim, as the alternatives it may take.
    let window: Vec<usize> = (0..operand.rank())
        .filter(|k| !dims.collapsed_slice_dims.contains(k) && !dims.operand_batching_dims.contains(k))
        .collect();
    let mut starts: Vec<Vec<Piece>> = Vec::with_capacity(operand.rank());
    for i in 0..operand.rank() {
        let pieces = if let Some(k) = dims.start_index_map.iter().position(|&m| m == i) {
            let last = operand.dims[i] - dims.slice_sizes[i];
            start_pieces(k, last, dims, &batch_dim_of, output, values)?
        } else if let Some(j) = dims.operand_batching_dims.iter().position(|&m| m == i) {
            let dim = batch_dim_of(dims.start_indices_batching_dims[j]);
            vec![(dim.map_or(IndexExpr::constant(0), d), None)]
        } else {
            vec![(IndexExpr::constant(0), None)]
        };
        starts.push(pieces);
    }
    let symbols: Vec<Interval> = dims
        .start_index_map
        .iter()
        .map(|&i| Interval::new(0, operand.dims[i] - dims.slice_sizes[i]))
        .collect();
    let mut to_operand = Vec::new();
    for choice in product(&starts) {
        let mut results = Vec::with_capacity(operand.rank());
        let mut constraints = Vec::new();
        for (i, (start, constraint)) in choice.into_iter().enumerate() {
            let offset = window
                .iter()
                .position(|&w| w == i)
                .map_or(IndexExpr::constant(0), |w| d(dims.offset_dims[w]));
            results.push(start.add(&offset)?);
            constraints.extend(constraint);
        }
        to_operand.push(IndexingMap::new(index_ranges(&output.dims), symbols.clone(), results, constraints)?);
    }
    Ok((to_operand, to_indices))
}

/// The alternatives for start index `k` (of operand dim range `[0, last]`): the symbol `rt_k`,
/// or a known value, split where the clamp moves it.
fn start_pieces(
    k: usize,
    last: i64,
    dims: &GatherDimensions,
    batch_dim_of: &impl Fn(usize) -> Option<usize>,
    output: &ArrayShape,
    values: &StartValues,
) -> Result<Vec<Piece>, IndexingError> {
    let unknown = vec![(s(k), None)];
    Ok(match *values {
        StartValues::Unknown => unknown,
        // XLA folds a constant only inside the range the clamp allows.
        StartValues::Scalar(v) if (0..=last).contains(&v) => vec![(IndexExpr::constant(v), None)],
        StartValues::Scalar(_) => unknown,
        // The iota counts along the index vector: the value is the component number.
        StartValues::Iota(dimension) if dimension == dims.index_vector_dim => {
            vec![(IndexExpr::constant(i64::try_from(k).unwrap_or(i64::MAX).clamp(0, last.max(0))), None)]
        }
        StartValues::Iota(dimension) => match batch_dim_of(dimension) {
            None => unknown,
            Some(b) => {
                let largest = output.dims[b] - 1;
                if largest <= last {
                    vec![(d(b), None)]
                } else {
                    vec![
                        (d(b), Some(Constraint::new(d(b), Interval::new(0, last)))),
                        (
                            IndexExpr::constant(last),
                            Some(Constraint::new(d(b), Interval::new(last + 1, largest))),
                        ),
                    ]
                }
            }
        },
    })
}

/// Every way to pick one piece per dimension.
fn product(starts: &[Vec<Piece>]) -> Vec<Vec<Piece>> {
    starts.iter().fold(vec![Vec::new()], |acc, pieces| {
        acc.into_iter()
            .flat_map(|prefix| {
                pieces.iter().map(move |piece| {
                    let mut next = prefix.clone();
                    next.push(piece.clone());
                    next
                })
            })
            .collect()
    })
}
