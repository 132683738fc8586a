//! Elementwise ops and the ops that move elements without computing: each builds the list of
//! operand positions its result reads (or evaluates the scalar rule per element).

use crate::hlo::{ArrayShape, ElementwiseOp, GatherDimensions, PadDim, SliceDim, is_float_type};

use super::array::{Array, Data, for_each_index, strides, volume};
use super::scalar::{self, Scalar};
use super::{Evaluator, OpResult};

/// An elementwise op; rank-0 operands of a larger result (a select's predicate, a clamp's bounds)
/// are read by every element.
pub(super) fn elementwise(
    ev: &Evaluator<'_>,
    op: ElementwiseOp,
    result: &ArrayShape,
    operands: &[&Array],
) -> OpResult<Array> {
    let n = volume(&result.dims);
    let types: Vec<_> = operands.iter().map(|a| a.element_type).collect();
    let mut out = Vec::with_capacity(n);
    let mut args = vec![Scalar::int(0); operands.len()];
    for i in 0..n {
        for (k, a) in operands.iter().enumerate() {
            args[k] = a.scalar(if a.dims.is_empty() { 0 } else { i });
        }
        out.push(scalar::elementwise(op, result.element_type, &types, &args, &ev.options.rounding)?);
    }
    Ok(Array::from_scalars(result.element_type, &result.dims, out))
}

/// `iota`: each element is its index along `dimension`.
pub(super) fn iota(result: &ArrayShape, dimension: usize) -> OpResult<Array> {
    let mut values = Vec::with_capacity(volume(&result.dims));
    for_each_index(&result.dims, |index, _| values.push(index[dimension]));
    Ok(if is_float_type(result.element_type) {
        Array::floats(result.element_type, &result.dims, values.into_iter().map(|v| v as f64).collect())
    } else {
        Array::ints(result.element_type, &result.dims, values.into_iter().map(i128::from).collect())
    })
}

/// The array whose element at each index of `dims` is `operand`'s at `position(index)`.
fn pick(operand: &Array, dims: &[i64], mut position: impl FnMut(&[i64]) -> usize) -> Array {
    let mut positions = Vec::with_capacity(volume(dims));
    for_each_index(dims, |index, _| positions.push(position(index)));
    operand.gather_linear(dims, &positions)
}

/// `broadcast`: result dim `dimensions[k]` is operand dim `k`.
pub(super) fn broadcast(operand: &Array, result: &ArrayShape, dimensions: &[usize]) -> OpResult<Array> {
    let s = strides(&operand.dims);
    Ok(pick(operand, &result.dims, |index| {
        dimensions.iter().enumerate().map(|(k, &d)| index[d] as usize * s[k]).sum()
    }))
}

/// `transpose`: result dim `k` is operand dim `dimensions[k]`.
pub(super) fn transpose(operand: &Array, dimensions: &[usize]) -> OpResult<Array> {
    let s = strides(&operand.dims);
    let dims: Vec<i64> = dimensions.iter().map(|&d| operand.dims[d]).collect();
    Ok(pick(operand, &dims, |index| {
        dimensions.iter().enumerate().map(|(k, &d)| index[k] as usize * s[d]).sum()
    }))
}

/// `reverse` along `dimensions`.
pub(super) fn reverse(operand: &Array, dimensions: &[usize]) -> OpResult<Array> {
    let s = strides(&operand.dims);
    let dims = operand.dims.clone();
    Ok(pick(operand, &dims, |index| {
        (0..dims.len())
            .map(|d| {
                let i = if dimensions.contains(&d) { dims[d] - 1 - index[d] } else { index[d] };
                i as usize * s[d]
            })
            .sum()
    }))
}

/// `reshape`: the same elements in row-major order.
pub(super) fn reshape(operand: &Array, dims: &[i64]) -> Array {
    let mut out = operand.clone();
    out.dims = dims.to_vec();
    out
}

/// Strides of each logical dim of `shape` in its buffer (its layout's physical order).
pub(super) fn layout_strides(shape: &ArrayShape) -> Vec<usize> {
    let mut s = vec![0usize; shape.rank()];
    let mut stride = 1usize;
    for &d in &shape.minor_to_major_or_default() {
        s[d] = stride;
        stride *= usize::try_from(shape.dims[d]).unwrap_or(0);
    }
    s
}

/// `bitcast`: the result's element at a buffer position is the operand's at the same position.
pub(super) fn bitcast(operand: &Array, from: &ArrayShape, to: &ArrayShape) -> Array {
    let to_strides = layout_strides(to);
    // Operand buffer position -> operand row-major position.
    let from_strides = layout_strides(from);
    let mut by_position = vec![0usize; operand.len()];
    for_each_index(&from.dims, |index, linear| {
        let p: usize = index.iter().zip(&from_strides).map(|(&i, &s)| i as usize * s).sum();
        by_position[p] = linear;
    });
    let mut out = pick(operand, &to.dims, |index| {
        let p: usize = index.iter().zip(&to_strides).map(|(&i, &s)| i as usize * s).sum();
        by_position[p]
    });
    out.element_type = to.element_type;
    out
}

/// `slice`: `[start:limit:stride]` per dim.
pub(super) fn slice(operand: &Array, dims: &[SliceDim]) -> Array {
    let s = strides(&operand.dims);
    let out_dims: Vec<i64> = dims
        .iter()
        .map(|d| {
            let span = d.limit - d.start;
            span / d.stride + i64::from(span % d.stride != 0)
        })
        .collect();
    pick(operand, &out_dims, |index| {
        index.iter().zip(dims).zip(&s).map(|((&i, d), &st)| (d.start + i * d.stride) as usize * st).sum()
    })
}

/// `concatenate` along `dimension`.
pub(super) fn concatenate(operands: &[&Array], dimension: usize) -> Array {
    let mut dims = operands[0].dims.clone();
    dims[dimension] = operands.iter().map(|a| a.dims[dimension]).sum();
    let mut offsets = Vec::new();
    let mut at = 0i64;
    for a in operands {
        offsets.push(at);
        at += a.dims[dimension];
    }
    let mut data_f = Vec::new();
    let mut data_i = Vec::new();
    let mut error = Vec::with_capacity(volume(&dims));
    let all_strides: Vec<Vec<usize>> = operands.iter().map(|a| strides(&a.dims)).collect();
    for_each_index(&dims, |index, _| {
        let k = offsets.iter().rposition(|&o| o <= index[dimension]).unwrap_or(0);
        let p: usize = index
            .iter()
            .enumerate()
            .map(|(d, &i)| {
                let i = if d == dimension { i - offsets[k] } else { i };
                i as usize * all_strides[k][d]
            })
            .sum();
        match &operands[k].data {
            Data::Float(v) => data_f.push(v[p]),
            Data::Int(v) => data_i.push(v[p]),
        }
        error.push(operands[k].error[p]);
    });
    let data = if is_float_type(operands[0].element_type) { Data::Float(data_f) } else { Data::Int(data_i) };
    Array { element_type: operands[0].element_type, dims, data, error }
}

/// `pad`: the value everywhere, then the operand's elements at `low + i (interior + 1)` (a
/// negative `low` or `high` crops).
pub(super) fn pad(operand: &Array, value: &Array, dims: &[PadDim], out_dims: &[i64]) -> Array {
    let n = volume(out_dims);
    let mut out = value.gather_linear(out_dims, &vec![0; n]);
    let out_strides = strides(out_dims);
    for_each_index(&operand.dims, |index, linear| {
        let mut p = 0usize;
        for (d, (&i, pd)) in index.iter().zip(dims).enumerate() {
            let o = pd.low + i * (pd.interior + 1);
            if o < 0 || o >= out_dims[d] {
                return;
            }
            p += o as usize * out_strides[d];
        }
        match (&mut out.data, &operand.data) {
            (Data::Float(o), Data::Float(v)) => o[p] = v[linear],
            (Data::Int(o), Data::Int(v)) => o[p] = v[linear],
            _ => {}
        }
        out.error[p] = operand.error[linear];
    });
    out
}

/// Reads the scalar offsets of a dynamic slice or update, clamped so that `sizes` fit in `dims`;
/// `None` when an offset is not exact (its value is then unknown to the implementation).
fn offsets(scalars: &[&Array], dims: &[i64], sizes: &[i64]) -> Option<Vec<i64>> {
    let mut out = Vec::new();
    for (k, a) in scalars.iter().enumerate() {
        if a.error[0] != 0.0 {
            return None;
        }
        let v = a.scalar(0).value.as_i128();
        let hi = i128::from(dims[k] - sizes[k]);
        out.push(v.clamp(0, hi.max(0)) as i64);
    }
    Some(out)
}

fn unbounded(mut a: Array) -> Array {
    a.error.iter_mut().for_each(|e| *e = f64::INFINITY);
    a
}

/// `dynamic-slice(operand, offsets...)`: a window of `sizes` at the clamped offsets.
pub(super) fn dynamic_slice(operands: &[&Array], sizes: &[i64]) -> OpResult<Array> {
    let operand = operands[0];
    let known = offsets(&operands[1..], &operand.dims, sizes);
    let start = known.clone().unwrap_or_else(|| vec![0; sizes.len()]);
    let s = strides(&operand.dims);
    let out = pick(operand, sizes, |index| {
        index.iter().zip(&start).zip(&s).map(|((&i, &o), &st)| (i + o) as usize * st).sum()
    });
    Ok(if known.is_some() { out } else { unbounded(out) })
}

/// `dynamic-update-slice(operand, update, offsets...)`.
pub(super) fn dynamic_update_slice(operands: &[&Array]) -> OpResult<Array> {
    let (operand, update) = (operands[0], operands[1]);
    let known = offsets(&operands[2..], &operand.dims, &update.dims);
    let start = known.clone().unwrap_or_else(|| vec![0; update.dims.len()]);
    let mut out = operand.clone();
    let s = strides(&operand.dims);
    for_each_index(&update.dims, |index, linear| {
        let p: usize = index.iter().zip(&start).zip(&s).map(|((&i, &o), &st)| (i + o) as usize * st).sum();
        match (&mut out.data, &update.data) {
            (Data::Float(o), Data::Float(v)) => o[p] = v[linear],
            (Data::Int(o), Data::Int(v)) => o[p] = v[linear],
            _ => {}
        }
        out.error[p] = update.error[linear];
    });
    Ok(if known.is_some() { out } else { unbounded(out) })
}

/// `gather`: for each output index, the slice start (start indices clamped so that the slice
/// fits, batching dims taken from the batch index) plus the offset in the window dims.
pub(super) fn gather(
    operand: &Array,
    indices: &Array,
    dims: &GatherDimensions,
    result: &ArrayShape,
) -> OpResult<Array> {
    let rank = operand.dims.len();
    let index_rank = indices.dims.len();
    let batch_out: Vec<usize> = (0..result.rank()).filter(|d| !dims.offset_dims.contains(d)).collect();
    let window: Vec<usize> = (0..rank)
        .filter(|d| !dims.collapsed_slice_dims.contains(d) && !dims.operand_batching_dims.contains(d))
        .collect();
    let index_dims: Vec<usize> = (0..index_rank).filter(|&d| d != dims.index_vector_dim).collect();
    let index_strides = strides(&indices.dims);
    let operand_strides = strides(&operand.dims);
    let exact = indices.is_exact();
    let mut positions = Vec::with_capacity(volume(&result.dims));
    for_each_index(&result.dims, |index, _| {
        // The position in the start indices of this batch index, without the vector dim.
        let mut base = 0usize;
        for (k, &d) in index_dims.iter().enumerate() {
            base += index[batch_out[k]] as usize * index_strides[d];
        }
        let mut start = vec![0i64; rank];
        for (k, &d) in dims.start_index_map.iter().enumerate() {
            let p = base
                + if dims.index_vector_dim < index_rank {
                    k * index_strides[dims.index_vector_dim]
                } else {
                    0
                };
            let v = indices.scalar(p).value.as_i128();
            let hi = i128::from(operand.dims[d] - dims.slice_sizes[d]).max(0);
            start[d] = v.clamp(0, hi) as i64;
        }
        for (&o, &i) in dims.operand_batching_dims.iter().zip(&dims.start_indices_batching_dims) {
            let k = index_dims.iter().position(|&d| d == i).unwrap_or(0);
            start[o] = index[batch_out[k]];
        }
        for (k, &d) in window.iter().enumerate() {
            start[d] += index[dims.offset_dims[k]];
        }
        positions.push(start.iter().zip(&operand_strides).map(|(&i, &s)| i as usize * s).sum());
    });
    let out = operand.gather_linear(&result.dims, &positions);
    Ok(if exact { out } else { unbounded(out) })
}
