//! The reference every baseline is checked against before it is timed: each [`Problem`]
//! computed in f64 (u32 matmuls in wrapping u32 arithmetic, exactly) on the same inputs, with a
//! tolerance per output element.
//!
//! Tolerances, for an output element `e` (f64) and what a library returns `a` (f32):
//!
//! ```text
//! matmul, conv:  t_sum = (K + 1) * 2^-23 * (Σ |lhs * rhs| + |bias|)      K = the reduction length
//!                identity, relu:  |a - e| <= t_sum + 2^-23 |e|           (relu is 1-Lipschitz)
//!                gelu (tanh):     |a - e| <= 1.2 t_sum + 2^-23 |e| + 1e-5 max(1, |v|)
//!                                 v = the value before the activation (libraries use
//!                                 approximate tanh / exp; gelu's slope is below 1.2)
//! softmax:       |a - e| <= e (1e-5 + 2 C 2^-23) + 1e-9                  C = the row length
//! u32 matmul:    a == e                                                   (wrapping arithmetic)
//! int8 matmul:   a == e                                                   (exact i32 sums)
//! int8 conv:     a == e                                                   (likewise)
//! requant:       a == e, or a == a library's order of rounding (below)
//! ```
//!
//! A requantized matmul's `e` is the definition of `docs/operators.md` computed as the kernels
//! compute it: `y = f32(acc) * scale` in f32, clamped to `[lo - zp, hi - zp]`, rounded half to even,
//! plus `zp`. Libraries add the zero point before rounding (oneDNN in f32:
//! `saturate(round_half_even(y + zp))`), which differs by one from `round_half_even(y) + zp` when
//! `y` is a half-integer and `zp` is odd, and may differ when `y + zp`, rounded to f32 (or fused in
//! an FMA, rounded once), lands on a half-integer that `y` does not. So an output may also be
//! `saturate(round_half_even(v))` for `v` either of `f32(y + zp)` and `f32(acc * scale + zp)` (the
//! FMA): where these differ from `e` (by one), that value is accepted too, and nothing else. This
//! is the baselines' check only: morello's own kernels are verified against the reference
//! interpreter, exactly.
//!
//! The seeded inputs are multiples of 1/16 below 2 in magnitude, so products are exact and
//! every partial sum of a reduction up to 2^16 long is exact in f32: a correct library is far
//! inside these bounds, and a misconfigured call (a transposed operand, a wrong stride or
//! padding, a softmax along the wrong axis) is far outside them.

use morello_codegen::harness::Buffer;

use super::problem::{Activation, ConvProblem, Epilogue, MatmulProblem, Problem, SoftmaxProblem};

/// The expected output and the allowed error of each element.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The exact (or f64) value of each output element.
    pub expected: Vec<f64>,
    /// The largest allowed absolute error of each.
    pub tolerance: Vec<f64>,
}

/// How well an output agrees with the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreement {
    /// The largest absolute difference.
    pub max_abs_error: f64,
    /// The number of elements compared.
    pub elements: usize,
}

/// Computes the reference of `problem` on `inputs` (the read parameters' contents, in signature
/// order).
///
/// # Errors
/// A sentence if the inputs do not match the problem's parameters.
pub fn reference(problem: &Problem, inputs: &[Buffer]) -> Result<Reference, String> {
    let signature = problem.signature("reference");
    let read: Vec<_> = signature.params.iter().filter(|p| p.role.is_read()).collect();
    if read.len() != inputs.len() {
        return Err(format!("{} inputs given for {} read parameters", inputs.len(), read.len()));
    }
    for (param, buffer) in read.iter().zip(inputs) {
        if buffer.len() != param.elements || buffer.c_type() != param.c_type {
            return Err(format!("input `{}` is not {}[{}]", param.name, param.c_type, param.elements));
        }
    }
    if let (Problem::Matmul(p), [lhs, rhs, Buffer::F32(scale), zero_point]) = (problem, inputs)
        && p.epilogue.requant
        && let (Some(lhs), Some(rhs), Some(zero_point)) =
            (small_integers(lhs), small_integers(rhs), small_integers(zero_point))
    {
        let sums = matmul_exact(p, &lhs, &rhs).expected;
        return requant(p, &sums, scale, &zero_point);
    }
    if let (Problem::Matmul(p), [Buffer::U32(lhs), Buffer::U32(rhs)]) = (problem, inputs) {
        return Ok(matmul_u32(p, lhs, rhs));
    }
    if let (Problem::Matmul(p), [lhs, rhs]) = (problem, inputs)
        && let (Some(lhs), Some(rhs)) = (small_integers(lhs), small_integers(rhs))
    {
        return Ok(matmul_exact(p, &lhs, &rhs));
    }
    if let (Problem::Conv(p), [input, filter]) = (problem, inputs)
        && p.inputs.is_some()
        && let (Some(input), Some(filter)) = (small_integers(input), small_integers(filter))
    {
        // 8-bit values are exact in f32, and their sums in the f64 reference: exact, tolerance 0.
        let [input, filter] = [input, filter].map(|v| v.into_iter().map(|x| x as f32).collect::<Vec<_>>());
        let mut reference = conv(p, &[&input, &filter]);
        reference.tolerance.iter_mut().for_each(|t| *t = 0.0);
        return Ok(reference);
    }
    let floats: Vec<&[f32]> = inputs.iter().filter_map(Buffer::as_f32).collect();
    if floats.len() != inputs.len() {
        return Err(format!("{} has no reference for these element types", problem.describe()));
    }
    Ok(match problem {
        Problem::Matmul(p) => matmul_f32(p, &floats),
        Problem::Conv(p) => conv(p, &floats),
        Problem::Softmax(p) => softmax(p, floats[0]),
    })
}

/// Compares `actual` with `reference` element by element.
///
/// # Errors
/// The first element outside its tolerance (or not a number): `out[12] = 3.5, expected 4
/// (tolerance 1e-5)`; or a length or type mismatch.
pub fn check(reference: &Reference, actual: &Buffer) -> Result<Agreement, String> {
    let values: Vec<f64> = match actual {
        Buffer::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        Buffer::U8(v) => v.iter().map(|&x| f64::from(x)).collect(),
        Buffer::I8(v) => v.iter().map(|&x| f64::from(x)).collect(),
        Buffer::U32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        Buffer::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        other => return Err(format!("an output of {} has no reference", other.c_type())),
    };
    if values.len() != reference.expected.len() {
        return Err(format!("{} output elements, expected {}", values.len(), reference.expected.len()));
    }
    let mut max_abs_error = 0.0f64;
    for (index, ((a, e), t)) in values.iter().zip(&reference.expected).zip(&reference.tolerance).enumerate() {
        let error = (a - e).abs();
        if error.is_nan() || error > *t {
            return Err(format!("out[{index}] = {a}, expected {e} (tolerance {t:.3e})"));
        }
        max_abs_error = max_abs_error.max(error);
    }
    Ok(Agreement { max_abs_error, elements: values.len() })
}

const EPS: f64 = f32::EPSILON as f64;

/// The tolerance of one output of a reduction: `exact` and `magnitude` are the sum and the sum
/// of absolute products, `length` the reduction length; `bias` what the epilogue adds.
fn epilogue_output(epilogue: Epilogue, exact: f64, magnitude: f64, length: usize, bias: f64) -> (f64, f64) {
    let value = exact + bias;
    let t_sum = (length as f64 + 1.0) * EPS * (magnitude + bias.abs());
    let expected = epilogue.activation.apply(value);
    let tolerance = match epilogue.activation {
        Activation::Identity | Activation::Relu => t_sum + EPS * expected.abs(),
        Activation::Gelu => 1.2 * t_sum + EPS * expected.abs() + 1e-5 * value.abs().max(1.0),
    };
    (expected, tolerance)
}

fn matmul_f32(p: &MatmulProblem, inputs: &[&[f32]]) -> Reference {
    let (m, k, n) = (p.m, p.k, p.n);
    let (lhs, rhs) = (inputs[0], inputs[1]);
    let bias = if p.epilogue.bias { Some(inputs[2]) } else { None };
    let mut exact = vec![0.0f64; m * n];
    let mut magnitude = vec![0.0f64; m * n];
    for i in 0..m {
        let (row, row_mag) = (&mut exact[i * n..(i + 1) * n], &mut magnitude[i * n..(i + 1) * n]);
        for q in 0..k {
            let a = f64::from(lhs[i * k + q]);
            for (j, (out, mag)) in row.iter_mut().zip(row_mag.iter_mut()).enumerate() {
                let product = a * f64::from(rhs[q * n + j]);
                *out += product;
                *mag += product.abs();
            }
        }
    }
    let mut reference =
        Reference { expected: Vec::with_capacity(m * n), tolerance: Vec::with_capacity(m * n) };
    for (index, (e, mag)) in exact.iter().zip(&magnitude).enumerate() {
        let b = bias.map_or(0.0, |b| f64::from(b[index % n]));
        let (expected, tolerance) = epilogue_output(p.epilogue, *e, *mag, k, b);
        reference.expected.push(expected);
        reference.tolerance.push(tolerance);
    }
    reference
}

fn matmul_u32(p: &MatmulProblem, lhs: &[u32], rhs: &[u32]) -> Reference {
    let (m, k, n) = (p.m, p.k, p.n);
    let mut out = vec![0u32; m * n];
    for i in 0..m {
        for q in 0..k {
            let a = lhs[i * k + q];
            for j in 0..n {
                out[i * n + j] = out[i * n + j].wrapping_add(a.wrapping_mul(rhs[q * n + j]));
            }
        }
    }
    Reference { expected: out.into_iter().map(f64::from).collect(), tolerance: vec![0.0; m * n] }
}

/// The values of an 8-bit integer buffer (a quantized matmul's inputs).
fn small_integers(buffer: &Buffer) -> Option<Vec<i64>> {
    match buffer {
        Buffer::U8(v) => Some(v.iter().map(|&x| i64::from(x)).collect()),
        Buffer::I8(v) => Some(v.iter().map(|&x| i64::from(x)).collect()),
        _ => None,
    }
}

/// A quantized matmul, exact in i64 (an i32 output holds it: the spec's reduction length is
/// bounded so that no sum wraps), compared with tolerance 0.
fn matmul_exact(p: &MatmulProblem, lhs: &[i64], rhs: &[i64]) -> Reference {
    let (m, k, n) = (p.m, p.k, p.n);
    let mut out = vec![0i64; m * n];
    for i in 0..m {
        for q in 0..k {
            let a = lhs[i * k + q];
            for (o, &b) in out[i * n..(i + 1) * n].iter_mut().zip(&rhs[q * n..(q + 1) * n]) {
                *o += a * b;
            }
        }
    }
    Reference { expected: out.into_iter().map(|x| x as f64).collect(), tolerance: vec![0.0; m * n] }
}

/// The requantization of the exact sums `sums` (row-major `M x N`) to the problem's 8-bit type:
/// the definition's value, and the one a library's order of rounding gives where it differs.
///
/// # Errors
/// If the output type is not u8 or i8.
fn requant(p: &MatmulProblem, sums: &[f64], scale: &[f32], zero_point: &[i64]) -> Result<Reference, String> {
    let (lo, hi) = match p.dtype {
        morello_codegen::harness::CType::U8 => (0.0f32, 255.0f32),
        morello_codegen::harness::CType::I8 => (-128.0, 127.0),
        other => return Err(format!("a requantized matmul's output is u8 or i8, not {other}")),
    };
    // `max` first, as `maxps` does: NaN becomes the lower bound.
    let clamp = |v: f32, lo: f32, hi: f32| if v >= lo { v } else { lo }.min(hi);
    let mut reference = Reference { expected: Vec::with_capacity(sums.len()), tolerance: Vec::new() };
    for (index, &sum) in sums.iter().enumerate() {
        let column = index % p.n;
        let (s, zp) = (scale[column], zero_point[column] as f32);
        let acc = sum as i32 as f32;
        let y = acc * s;
        let ours = clamp(y, lo - zp, hi - zp).round_ties_even() + zp;
        let added = clamp(y + zp, lo, hi).round_ties_even();
        let fused = clamp(acc.mul_add(s, zp), lo, hi).round_ties_even();
        let low = ours.min(added).min(fused);
        let high = ours.max(added).max(fused);
        let (expected, tolerance) = (f64::from(low + high) / 2.0, f64::from(high - low) / 2.0);
        reference.expected.push(expected);
        reference.tolerance.push(tolerance);
    }
    Ok(reference)
}

fn conv(p: &ConvProblem, inputs: &[&[f32]]) -> Reference {
    let (input, filter) = (inputs[0], inputs[1]);
    let bias = if p.epilogue.bias { Some(inputs[2]) } else { None };
    let (oh, ow) = (p.out_h(), p.out_w());
    let [_, _, out_elements] = p.elements();
    let mut reference = Reference { expected: vec![0.0; out_elements], tolerance: vec![0.0; out_elements] };
    let length = p.in_channels * p.kernel_h * p.kernel_w;
    let tap = |origin: usize, step: usize, pad: usize, size: usize| -> Option<usize> {
        (origin + step).checked_sub(pad).filter(|&v| v < size)
    };
    for n in 0..p.batch {
        for k in 0..p.out_channels {
            for y in 0..oh {
                for x in 0..ow {
                    let (mut exact, mut magnitude) = (0.0f64, 0.0f64);
                    for r in 0..p.kernel_h {
                        let Some(iy) = tap(y * p.stride[0], r * p.dilation[0], p.padding.top, p.height)
                        else {
                            continue;
                        };
                        for s in 0..p.kernel_w {
                            let Some(ix) = tap(x * p.stride[1], s * p.dilation[1], p.padding.left, p.width)
                            else {
                                continue;
                            };
                            for c in 0..p.in_channels {
                                let product = f64::from(input[p.input_index(n, c, iy, ix)])
                                    * f64::from(filter[p.filter_index(k, c, r, s)]);
                                exact += product;
                                magnitude += product.abs();
                            }
                        }
                    }
                    let b = bias.map_or(0.0, |b| f64::from(b[k]));
                    let (expected, tolerance) = epilogue_output(p.epilogue, exact, magnitude, length, b);
                    let index = p.output_index(n, k, y, x);
                    reference.expected[index] = expected;
                    reference.tolerance[index] = tolerance;
                }
            }
        }
    }
    reference
}

fn softmax(p: &SoftmaxProblem, input: &[f32]) -> Reference {
    let mut reference = Reference { expected: Vec::with_capacity(input.len()), tolerance: Vec::new() };
    for row in input.chunks(p.cols) {
        let max = row.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(f64::from(x)));
        let exps: Vec<f64> = row.iter().map(|&x| (f64::from(x) - max).exp()).collect();
        let sum: f64 = exps.iter().sum();
        reference.expected.extend(exps.iter().map(|e| e / sum));
    }
    let relative = 1e-5 + 2.0 * p.cols as f64 * EPS;
    reference.tolerance = reference.expected.iter().map(|e| e * relative + 1e-9).collect();
    reference
}

#[cfg(test)]
mod tests {
    use super::super::problem::{ActivationLayout, ConvPadding, FilterLayout};
    use super::*;

    #[test]
    fn a_known_matmul_with_bias_and_relu() {
        let problem = Problem::Matmul(MatmulProblem::f32(2, 2, 2).with_epilogue(Epilogue {
            bias: true,
            activation: Activation::Relu,
            requant: false,
        }));
        let inputs = [
            Buffer::F32(vec![1.0, 2.0, 3.0, 4.0]),
            Buffer::F32(vec![5.0, 6.0, 7.0, 8.0]),
            Buffer::F32(vec![-20.0, -60.0]),
        ];
        let reference = reference(&problem, &inputs).expect("matches");
        assert_eq!(reference.expected, vec![0.0, 0.0, 23.0, 0.0]);
        assert!(check(&reference, &Buffer::F32(vec![0.0, 0.0, 23.0, 0.0])).is_ok());
        let error = check(&reference, &Buffer::F32(vec![0.0, 0.0, 22.0, 0.0])).expect_err("off by one");
        assert!(error.starts_with("out[2] = 22, expected 23"), "{error}");
        assert!(check(&reference, &Buffer::F32(vec![0.0, f32::NAN, 23.0, 0.0])).is_err());
    }

    #[test]
    fn gelu_matches_its_closed_form() {
        assert_eq!(Activation::Gelu.apply(0.0), 0.0);
        assert!((Activation::Gelu.apply(1.0) - 0.841_191_990_9).abs() < 1e-9);
        assert!(Activation::Gelu.apply(-10.0).abs() < 1e-9);
    }

    #[test]
    fn a_padded_strided_dilated_conv_in_every_layout_agrees_with_nchw() {
        let base = ConvProblem {
            stride: [2, 1],
            padding: ConvPadding { top: 1, bottom: 0, left: 2, right: 1 },
            dilation: [1, 2],
            ..ConvProblem::new([2, 3, 5, 6], [4, 2, 3], ActivationLayout::Nchw, FilterLayout::Oihw)
        };
        assert_eq!(base.out_dims(), Some([3, 5]));
        let [input_n, filter_n, _] = base.elements();
        let input: Vec<f32> = (0..input_n).map(|i| (i % 13) as f32 - 6.0).collect();
        let filter: Vec<f32> = (0..filter_n).map(|i| (i % 7) as f32 - 3.0).collect();
        let nchw =
            reference(&Problem::Conv(base), &[Buffer::F32(input.clone()), Buffer::F32(filter.clone())])
                .expect("matches");
        // One output by hand: n=1, k=2, y=1, x=3 reads rows 2*1 + r - 1 and columns 3 + 2s - 2.
        let mut by_hand = 0.0;
        for c in 0..3 {
            for r in 0..2 {
                for s in 0..3 {
                    let (iy, ix) = (2 + r - 1, 3 + 2 * s - 2);
                    if ix < 6 {
                        by_hand += f64::from(
                            input[base.input_index(1, c, iy, ix)] * filter[base.filter_index(2, c, r, s)],
                        );
                    }
                }
            }
        }
        assert_eq!(nchw.expected[base.output_index(1, 2, 1, 3)], by_hand);
        for (layout, filter_layout) in [
            (ActivationLayout::Nhwc, FilterLayout::Hwio),
            (ActivationLayout::Nhwc, FilterLayout::Ohwi),
            (ActivationLayout::Nchw, FilterLayout::Hwio),
        ] {
            let other = ConvProblem { layout, filter_layout, ..base };
            let mut input2 = vec![0.0; input_n];
            let mut filter2 = vec![0.0; filter_n];
            for n in 0..2 {
                for c in 0..3 {
                    for y in 0..5 {
                        for x in 0..6 {
                            input2[other.input_index(n, c, y, x)] = input[base.input_index(n, c, y, x)];
                        }
                    }
                }
            }
            for k in 0..4 {
                for c in 0..3 {
                    for r in 0..2 {
                        for s in 0..3 {
                            filter2[other.filter_index(k, c, r, s)] = filter[base.filter_index(k, c, r, s)];
                        }
                    }
                }
            }
            let result = reference(&Problem::Conv(other), &[Buffer::F32(input2), Buffer::F32(filter2)])
                .expect("matches");
            for n in 0..2 {
                for k in 0..4 {
                    for y in 0..3 {
                        for x in 0..5 {
                            assert_eq!(
                                result.expected[other.output_index(n, k, y, x)],
                                nchw.expected[base.output_index(n, k, y, x)]
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn softmax_rows_sum_to_one_and_bad_inputs_are_refused() {
        let problem = Problem::Softmax(SoftmaxProblem { rows: 2, cols: 3 });
        let reference = reference(&problem, &[Buffer::F32(vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0])]).expect("ok");
        assert!((reference.expected[..3].iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((reference.expected[3] - 1.0 / 3.0).abs() < 1e-12);
        assert!(super::reference(&problem, &[Buffer::F32(vec![1.0; 5])]).is_err());
        assert!(super::reference(&problem, &[]).is_err());
    }
}
