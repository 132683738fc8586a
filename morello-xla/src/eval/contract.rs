//! `dot` and `convolution`: sums of products, accumulated in `f64` (wrapping `i128` for
//! integers).
//!
//! The bound of an output element with terms `a_k b_k` is that of a sum in any order
//! ([`sum_bound`]) of the products, each carrying `|a| eb + |b| ea + ea eb`: 0 when the inputs are
//! exact and every partial sum is representable in the output type, else
//! `Σ (|a| eb + |b| ea + ea eb) + K u Σ |a b|` for `K` terms. An implementation may use fused
//! multiply-adds and any order of the additions.

use crate::hlo::{ArrayShape, ConvolutionDimensions, DotDimensions, WindowDim, is_float_type};

use super::array::{Array, Data, for_each_index, strides, volume, wrap};
use super::scalar::{lowest_bit_exponent, sum_bound};
use super::{EvalOptions, OpResult};

/// The running sum of one output element.
struct Terms {
    float: f64,
    int: i128,
    magnitude: f64,
    errors: f64,
    lowest_bit: i32,
    count: usize,
}

impl Terms {
    fn new() -> Terms {
        Terms { float: 0.0, int: 0, magnitude: 0.0, errors: 0.0, lowest_bit: i32::MAX, count: 0 }
    }

    fn add(&mut self, a: &Array, pa: usize, b: &Array, pb: usize, exact: bool) {
        self.count += 1;
        if let (Data::Int(x), Data::Int(y)) = (&a.data, &b.data) {
            self.int = self.int.wrapping_add(x[pa].wrapping_mul(y[pb]));
            return;
        }
        let (x, y) = (a.data.get_f64(pa), b.data.get_f64(pb));
        let p = x * y;
        self.float += p;
        self.magnitude += p.abs();
        if p != 0.0 && p.is_finite() {
            self.lowest_bit = self.lowest_bit.min(lowest_bit_exponent(p));
        }
        if !exact {
            let (ex, ey) = (a.error[pa], b.error[pb]);
            self.errors += x.abs() * ey + y.abs() * ex + ex * ey;
        }
    }

    fn finish(self, result: &ArrayShape, value: &mut Vec<f64>, ints: &mut Vec<i128>, error: &mut Vec<f64>) {
        if is_float_type(result.element_type) {
            value.push(self.float + self.int as f64);
            error.push(sum_bound(
                result.element_type,
                self.magnitude,
                self.errors,
                self.lowest_bit,
                self.count,
            ));
        } else {
            let v = if self.count > 0 && self.magnitude > 0.0 { self.float as i128 } else { 0 };
            ints.push(wrap(self.int.wrapping_add(v), result.element_type));
            error.push(if self.errors == 0.0 { 0.0 } else { f64::INFINITY });
        }
    }
}

fn array_of(result: &ArrayShape, value: Vec<f64>, ints: Vec<i128>, error: Vec<f64>) -> Array {
    let data = if is_float_type(result.element_type) { Data::Float(value) } else { Data::Int(ints) };
    Array { element_type: result.element_type, dims: result.dims.clone(), data, error }
}

/// `dot(lhs, rhs)`: the result is `[batch..., lhs free..., rhs free...]`.
pub(super) fn dot(
    lhs: &Array,
    rhs: &Array,
    dims: &DotDimensions,
    result: &ArrayShape,
    _options: &EvalOptions,
) -> OpResult<Array> {
    let free = |rank: usize, used: &[usize], other: &[usize]| -> Vec<usize> {
        (0..rank).filter(|d| !used.contains(d) && !other.contains(d)).collect()
    };
    let lhs_free = free(lhs.dims.len(), &dims.lhs_batch, &dims.lhs_contracting);
    let rhs_free = free(rhs.dims.len(), &dims.rhs_batch, &dims.rhs_contracting);
    let (ls, rs) = (strides(&lhs.dims), strides(&rhs.dims));
    let k_dims: Vec<i64> = dims.lhs_contracting.iter().map(|&d| lhs.dims[d]).collect();
    let mut k_offsets = Vec::with_capacity(volume(&k_dims));
    for_each_index(&k_dims, |k, _| {
        let l: usize = k.iter().zip(&dims.lhs_contracting).map(|(&i, &d)| i as usize * ls[d]).sum();
        let r: usize = k.iter().zip(&dims.rhs_contracting).map(|(&i, &d)| i as usize * rs[d]).sum();
        k_offsets.push((l, r));
    });
    let exact = lhs.is_exact() && rhs.is_exact();
    let nb = dims.lhs_batch.len();
    let nl = lhs_free.len();
    let (mut value, mut ints, mut error) = (Vec::new(), Vec::new(), Vec::new());
    for_each_index(&result.dims, |out, _| {
        let mut lbase = 0usize;
        let mut rbase = 0usize;
        for k in 0..nb {
            lbase += out[k] as usize * ls[dims.lhs_batch[k]];
            rbase += out[k] as usize * rs[dims.rhs_batch[k]];
        }
        for (k, &d) in lhs_free.iter().enumerate() {
            lbase += out[nb + k] as usize * ls[d];
        }
        for (k, &d) in rhs_free.iter().enumerate() {
            rbase += out[nb + nl + k] as usize * rs[d];
        }
        let mut terms = Terms::new();
        for &(l, r) in &k_offsets {
            terms.add(lhs, lbase + l, rhs, rbase + r, exact);
        }
        terms.finish(result, &mut value, &mut ints, &mut error);
    });
    Ok(array_of(result, value, ints, error))
}

/// A convolution's attributes.
pub(crate) struct Convolution<'a> {
    pub(crate) window: &'a [WindowDim],
    pub(crate) dims: &'a ConvolutionDimensions,
    pub(crate) feature_group_count: i64,
    pub(crate) batch_group_count: i64,
}

/// `convolution(lhs, rhs)`, as XLA's evaluator defines it: output feature `f` belongs to
/// feature group `f / (O / G)`, which reads input features `[g C/G, (g + 1) C/G)`; with batch
/// groups, it reads input batch `b + ((f / (O / B)) (B / H)) mod B` (`B` the input batch, `H`
/// the batch group count). Window position `w` of spatial dim `k` reads the dilated, padded
/// base at `o stride + w rhs_dilate - pad_low` (nothing in padding or between dilated
/// elements), and the kernel at `w`, or `size - 1 - w` when reversed.
pub(super) fn convolution(
    lhs: &Array,
    rhs: &Array,
    conv: &Convolution<'_>,
    result: &ArrayShape,
    _options: &EvalOptions,
) -> OpResult<Array> {
    let d = conv.dims;
    let (ls, rs) = (strides(&lhs.dims), strides(&rhs.dims));
    let input_batch = lhs.dims[d.lhs_batch];
    let input_features = lhs.dims[d.lhs_feature];
    let output_features = rhs.dims[d.rhs_output_feature];
    let g = conv.feature_group_count.max(1);
    let h = conv.batch_group_count.max(1);
    let group_in = input_features / g;
    let group_out = (output_features / g).max(1);
    let depthwise = if h > 1 { (output_features / input_batch).max(1) } else { 1 };
    let batch_group_size = input_batch / h;
    let window_dims: Vec<i64> = conv.window.iter().map(|w| w.size).collect();
    let exact = lhs.is_exact() && rhs.is_exact();
    let (mut value, mut ints, mut error) = (Vec::new(), Vec::new(), Vec::new());
    for_each_index(&result.dims, |out, _| {
        let f = out[d.output_feature];
        let group = f / group_out;
        let mut batch = out[d.output_batch];
        if h > 1 {
            batch += ((f / depthwise) * batch_group_size) % input_batch;
        }
        let mut terms = Terms::new();
        for c in 0..group_in {
            let lbase =
                batch as usize * ls[d.lhs_batch] + (group * group_in + c) as usize * ls[d.lhs_feature];
            let rbase = c as usize * rs[d.rhs_input_feature] + f as usize * rs[d.rhs_output_feature];
            for_each_index(&window_dims, |w, _| {
                let mut l = lbase;
                let mut r = rbase;
                for (k, wd) in conv.window.iter().enumerate() {
                    let base = out[d.output_spatial[k]] * wd.stride + w[k] * wd.window_dilation - wd.pad_low;
                    let extent = (lhs.dims[d.lhs_spatial[k]] - 1) * wd.base_dilation + 1;
                    if base < 0 || base >= extent || base % wd.base_dilation != 0 {
                        return;
                    }
                    l += (base / wd.base_dilation) as usize * ls[d.lhs_spatial[k]];
                    let tap = if wd.reversal { wd.size - 1 - w[k] } else { w[k] };
                    r += tap as usize * rs[d.rhs_spatial[k]];
                }
                terms.add(lhs, l, rhs, r, exact);
            });
        }
        terms.finish(result, &mut value, &mut ints, &mut error);
    });
    Ok(array_of(result, value, ints, error))
}
