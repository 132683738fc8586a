//! `concatenate`: each operand owns a disjoint band of the output along the joined dimension.
//!
//! ```text
//! operand i starts at offset o_i = size_0 + ... + size_{i-1} along dim k
//! output -> operand i:  d_k -> d_k - o_i,  d_k in [o_i, o_i + size_i - 1], other dims unchanged
//! operand i -> output:  d_k -> d_k + o_i
//! ```

use crate::hlo::ArrayShape;
use crate::indexing::{IndexingError, IndexingMap};
use morello_core::expr::{ExprError, Interval};

use super::{d, index_ranges, over};

fn offsets(operands: &[&ArrayShape], dimension: usize) -> Result<Vec<i64>, ExprError> {
    let mut out = Vec::with_capacity(operands.len());
    let mut acc: i64 = 0;
    for operand in operands {
        out.push(acc);
        let size = operand.dims.get(dimension).copied().unwrap_or(0);
        acc = acc.checked_add(size).ok_or(ExprError::Overflow("a concatenate offset"))?;
    }
    Ok(out)
}

/// Maps to every operand.
pub(super) fn output_to_input(
    operands: &[&ArrayShape],
    output: &ArrayShape,
    dimension: usize,
) -> Result<Vec<IndexingMap>, IndexingError> {
    let offsets = offsets(operands, dimension)?;
    operands
        .iter()
        .zip(offsets)
        .map(|(operand, offset)| {
            let mut ranges = index_ranges(&output.dims);
            let size = operand.dims.get(dimension).copied().unwrap_or(0);
            if let Some(r) = ranges.get_mut(dimension) {
                *r = Interval::new(offset, offset + size - 1);
            }
            let results = (0..output.rank())
                .map(|k| if k == dimension { d(k).add_constant(-offset) } else { Ok(d(k)) })
                .collect::<Result<Vec<_>, _>>()?;
            IndexingMap::new(ranges, Vec::new(), results, Vec::new())
        })
        .collect()
}

pub(super) fn input_to_output(
    operands: &[&ArrayShape],
    operand: usize,
    dimension: usize,
) -> Result<IndexingMap, IndexingError> {
    let offset = offsets(operands, dimension)?.get(operand).copied().unwrap_or(0);
    let input = operands.get(operand).ok_or_else(|| IndexingError::NoSuch(format!("operand {operand}")))?;
    let results = (0..input.rank())
        .map(|k| if k == dimension { d(k).add_constant(offset) } else { Ok(d(k)) })
        .collect::<Result<Vec<_>, _>>()?;
    over(&input.dims, results)
}
