//! `pad`: the inverse of a strided slice. Output-to-input is defined on the output positions
//! that hold operand elements, with a stride constraint when there is interior padding; the
//! padding value is read by every output element.
//!
//! ```text
//! per dim, with low padding l, interior padding i, q = i + 1, operand size n, result size m:
//! operand element k lands at l + k q; the kept k are those with 0 <= l + k q <= m - 1,
//! i.e. k in [k_lo, k_hi] = [max(0, ceil(-l / q)), min(n - 1, floor((m - 1 - l) / q))]
//! output -> operand:  d -> (d - l) floordiv q,  d in [l + k_lo q, l + k_hi q],  (d - l) mod q in [0, 0]
//! output -> value:    (d...) -> ()
//! operand -> output:  d -> l + d q,  d in [k_lo, k_hi]
//! value -> output:    ()[s...] -> (s...)
//! ```

use crate::hlo::{ArrayShape, PadDim};
use crate::indexing::{Constraint, IndexingError, IndexingMap};
use morello_core::expr::{ExprError, Interval};

use super::{d, every_output, scalar_read};

/// The operand elements kept in one padded dimension: `[k_lo, k_hi]` (empty if none is).
fn kept(n: i64, m: i64, p: &PadDim) -> Result<Interval, ExprError> {
    let overflow = || ExprError::Overflow("a pad bound");
    let (l, q) = (i128::from(p.low), i128::from(p.interior) + 1);
    let k_lo = (-l).div_euclid(q) + i128::from((-l).rem_euclid(q) != 0);
    let k_lo = k_lo.max(0);
    let k_hi = (i128::from(m) - 1 - l).div_euclid(q).min(i128::from(n) - 1);
    let k_lo = i64::try_from(k_lo).map_err(|_| overflow())?;
    let k_hi = i64::try_from(k_hi.max(i128::from(k_lo) - 1)).map_err(|_| overflow())?;
    Ok(Interval::new(k_lo, k_hi))
}

/// One padded dimension: its padding, the operand size `n`, the padded size `m` and the stride
/// `q = interior + 1` between operand elements.
struct PaddedDim<'a> {
    pad: &'a PadDim,
    n: i64,
    m: i64,
    q: i64,
}

/// The padded dimensions of `operand`, in order.
fn padded_dims<'a>(
    operand: &'a ArrayShape,
    padded: &'a [i64],
    dims: &'a [PadDim],
) -> impl Iterator<Item = Result<PaddedDim<'a>, ExprError>> + 'a {
    dims.iter().zip(&operand.dims).zip(padded).map(|((pad, &n), &m)| {
        let q = pad.interior.checked_add(1).ok_or(ExprError::Overflow("a pad stride"))?;
        Ok(PaddedDim { pad, n, m, q })
    })
}

/// The map from the padded shape to the operand.
pub(super) fn padded_to_operand(
    operand: &ArrayShape,
    padded: &[i64],
    dims: &[PadDim],
) -> Result<IndexingMap, IndexingError> {
    let mut ranges = Vec::with_capacity(dims.len());
    let mut results = Vec::with_capacity(dims.len());
    let mut constraints = Vec::new();
    for (k, dim) in padded_dims(operand, padded, dims).enumerate() {
        let PaddedDim { pad: p, n, m, q } = dim?;
        let keep = kept(n, m, p)?;
        let position = |k: i64| k.checked_mul(q).and_then(|x| x.checked_add(p.low));
        let lo = position(keep.lo).ok_or(ExprError::Overflow("a pad bound"))?;
        let hi = if keep.is_empty() {
            lo - 1
        } else {
            position(keep.hi).ok_or(ExprError::Overflow("a pad bound"))?
        };
        ranges.push(Interval::new(lo, hi));
        let offset = d(k).add_constant(p.low.checked_neg().ok_or(ExprError::Overflow("a pad bound"))?)?;
        results.push(offset.floordiv(q)?);
        if q > 1 {
            constraints.push(Constraint::new(offset.modulo(q)?, Interval::point(0)));
        }
    }
    IndexingMap::new(ranges, Vec::new(), results, constraints)
}

/// The map from the operand to the padded shape.
pub(super) fn operand_to_padded(
    operand: &ArrayShape,
    padded: &[i64],
    dims: &[PadDim],
) -> Result<IndexingMap, IndexingError> {
    let (ranges, results) = padded_dims(operand, padded, dims)
        .enumerate()
        .map(|(k, dim)| {
            let PaddedDim { pad: p, n, m, q } = dim?;
            Ok((kept(n, m, p)?, d(k).mul(q)?.add_constant(p.low)?))
        })
        .collect::<Result<(Vec<_>, Vec<_>), ExprError>>()?;
    IndexingMap::new(ranges, Vec::new(), results, Vec::new())
}

/// Maps to the operand and to the padding value.
pub(super) fn output_to_input(
    operand: &ArrayShape,
    output: &ArrayShape,
    dims: &[PadDim],
) -> Result<Vec<IndexingMap>, IndexingError> {
    Ok(vec![padded_to_operand(operand, &output.dims, dims)?, scalar_read(output)?])
}

pub(super) fn input_to_output(
    operand: &ArrayShape,
    output: &ArrayShape,
    dims: &[PadDim],
    position: usize,
) -> Result<IndexingMap, IndexingError> {
    if position == 0 { operand_to_padded(operand, &output.dims, dims) } else { every_output(output) }
}
