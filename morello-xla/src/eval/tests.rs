//! The evaluator op by op, against values computed by hand.

#![allow(clippy::unwrap_used)]

use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};

use super::*;
use crate::xla::ElementType;

fn run(text: &str, args: &[Array]) -> Vec<Array> {
    let module: HloModule = text.parse().unwrap_or_else(|e| panic!("{e}"));
    evaluate(&module, args, &EvalOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn f32s(dims: &[i64], values: &[f64]) -> Array {
    Array::floats(ElementType::F32, dims, values.iter().map(|&v| round_to(v, ElementType::F32)).collect())
}

fn s32s(dims: &[i64], values: &[i128]) -> Array {
    Array::ints(ElementType::S32, dims, values.to_vec())
}

fn floats(a: &Array) -> Vec<f64> {
    match &a.data {
        Data::Float(v) => v.clone(),
        Data::Int(v) => v.iter().map(|&x| x as f64).collect(),
    }
}

fn ints(a: &Array) -> Vec<i128> {
    match &a.data {
        Data::Int(v) => v.clone(),
        Data::Float(_) => panic!("not integers"),
    }
}

/// Evaluates `ROOT r = <op>` over parameters `p0, p1, ...` of the given shapes.
fn op(params: &[&str], op: &str, args: &[Array]) -> Array {
    let mut text =
        String::from("add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n");
    text += "max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b) }\n";
    text += "addi { a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(a, b) }\n";
    text += "ENTRY e {\n";
    for (i, p) in params.iter().enumerate() {
        text += &format!("  p{i} = {p} parameter({i})\n");
    }
    text += &format!("  ROOT r = {op}\n}}");
    run(&text, args).remove(0)
}

#[test]
fn elementwise_and_scalar_operands() {
    let x = f32s(&[3], &[1.0, -2.0, 0.5]);
    assert_eq!(
        floats(&op(&["f32[3]"], "f32[3] negate(p0)", std::slice::from_ref(&x))),
        vec![-1.0, 2.0, -0.5]
    );
    let p = Array::ints(ElementType::Pred, &[], vec![0]);
    let picked = op(
        &["pred[]", "f32[3]", "f32[3]"],
        "f32[3] select(p0, p1, p2)",
        &[p, x.clone(), f32s(&[3], &[7.0, 8.0, 9.0])],
    );
    assert_eq!(floats(&picked), vec![7.0, 8.0, 9.0]);
    let clamped = op(
        &["f32[]", "f32[3]", "f32[]"],
        "f32[3] clamp(p0, p1, p2)",
        &[f32s(&[], &[-1.0]), x.clone(), f32s(&[], &[0.75])],
    );
    assert_eq!(floats(&clamped), vec![0.75, -1.0, 0.5]);
    let lt = op(
        &["f32[3]", "f32[3]"],
        "pred[3] compare(p0, p1), direction=LT",
        &[x.clone(), f32s(&[3], &[0.0; 3])],
    );
    assert_eq!(ints(&lt), vec![0, 1, 0]);
    let converted = op(&["f32[3]"], "s32[3] convert(p0)", &[f32s(&[3], &[2.5, -2.5, 1e10])]);
    assert_eq!(ints(&converted), vec![2, -2, i128::from(i32::MAX)]);
    let e = op(&["f32[1]"], "f32[1] exponential(p0)", &[f32s(&[1], &[0.0])]);
    assert_eq!(floats(&e), vec![1.0]);
    let r = op(&["f32[1]"], "f32[1] rsqrt(p0)", &[f32s(&[1], &[4.0])]);
    assert_eq!(floats(&r), vec![0.5]);
    let l = op(&["f32[1]"], "f32[1] logistic(p0)", &[f32s(&[1], &[0.0])]);
    assert_eq!(floats(&l), vec![0.5]);
    let wrapped =
        op(&["s32[1]", "s32[1]"], "s32[1] multiply(p0, p1)", &[s32s(&[1], &[65536]), s32s(&[1], &[65536])]);
    assert_eq!(ints(&wrapped), vec![0]);
}

#[test]
fn data_movement() {
    let x = f32s(&[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let t = op(&["f32[2,3]"], "f32[3,2] transpose(p0), dimensions={1,0}", std::slice::from_ref(&x));
    assert_eq!(floats(&t), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let b = op(&["f32[3]"], "f32[2,3] broadcast(p0), dimensions={1}", &[f32s(&[3], &[1.0, 2.0, 3.0])]);
    assert_eq!(floats(&b), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    let rev = op(&["f32[2,3]"], "f32[2,3] reverse(p0), dimensions={1}", std::slice::from_ref(&x));
    assert_eq!(floats(&rev), vec![2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
    let s = op(&["f32[2,3]"], "f32[1,2] slice(p0), slice={[1:2], [0:3:2]}", std::slice::from_ref(&x));
    assert_eq!(floats(&s), vec![3.0, 5.0]);
    let r = op(&["f32[2,3]"], "f32[3,2] reshape(p0)", std::slice::from_ref(&x));
    assert_eq!(floats(&r), floats(&x));
    // A bitcast to the column-major layout of the transpose reads the same buffer.
    let bc = op(&["f32[2,3]"], "f32[3,2]{0,1} bitcast(p0)", std::slice::from_ref(&x));
    assert_eq!(floats(&bc), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let c = op(
        &["f32[2,1]", "f32[2,2]"],
        "f32[2,3] concatenate(p0, p1), dimensions={1}",
        &[f32s(&[2, 1], &[9.0, 8.0]), f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0])],
    );
    assert_eq!(floats(&c), vec![9.0, 1.0, 2.0, 8.0, 3.0, 4.0]);
    let p = op(
        &["f32[2]", "f32[]"],
        "f32[5] pad(p0, p1), padding=1_0_2",
        &[f32s(&[2], &[1.0, 2.0]), f32s(&[], &[-1.0])],
    );
    assert_eq!(floats(&p), vec![-1.0, 1.0, -1.0, -1.0, 2.0]);
    let cropped = op(
        &["f32[3]", "f32[]"],
        "f32[2] pad(p0, p1), padding=-1_0",
        &[f32s(&[3], &[1.0, 2.0, 3.0]), f32s(&[], &[0.0])],
    );
    assert_eq!(floats(&cropped), vec![2.0, 3.0]);
    let i = op(&[], "s32[2,3] iota(), iota_dimension=1", &[]);
    assert_eq!(ints(&i), vec![0, 1, 2, 0, 1, 2]);
    // Offsets are clamped so that the window fits: 5 becomes 1.
    let ds = op(
        &["f32[2,3]", "s32[]", "s32[]"],
        "f32[1,2] dynamic-slice(p0, p1, p2), dynamic_slice_sizes={1,2}",
        &[x.clone(), s32s(&[], &[5]), s32s(&[], &[-3])],
    );
    assert_eq!(floats(&ds), vec![3.0, 4.0]);
    let dus = op(
        &["f32[2,3]", "f32[1,2]", "s32[]", "s32[]"],
        "f32[2,3] dynamic-update-slice(p0, p1, p2, p3)",
        &[x.clone(), f32s(&[1, 2], &[-1.0, -2.0]), s32s(&[], &[0]), s32s(&[], &[7])],
    );
    assert_eq!(floats(&dus), vec![0.0, -1.0, -2.0, 3.0, 4.0, 5.0]);
}

#[test]
fn gather_clamps_its_starts() {
    let table = f32s(&[3, 2], &[0.0, 1.0, 10.0, 11.0, 20.0, 21.0]);
    let g = op(
        &["f32[3,2]", "s32[3,1]"],
        "f32[3,2] gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}",
        &[table, s32s(&[3, 1], &[2, -5, 9])],
    );
    assert_eq!(floats(&g), vec![20.0, 21.0, 0.0, 1.0, 20.0, 21.0]);
}

#[test]
fn reductions() {
    let x = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let sum = op(
        &["f32[2,3]", "f32[]"],
        "f32[3] reduce(p0, p1), dimensions={0}, to_apply=add",
        &[x.clone(), f32s(&[], &[0.5])],
    );
    assert_eq!(floats(&sum), vec![5.5, 7.5, 9.5]);
    assert_eq!(sum.error, vec![0.0; 3], "sums of multiples of 1/2 below 2^23 are exact");
    let max = op(
        &["f32[2,3]", "f32[]"],
        "f32[2] reduce(p0, p1), dimensions={1}, to_apply=max",
        &[x.clone(), f32s(&[], &[f64::NEG_INFINITY])],
    );
    assert_eq!(floats(&max), vec![3.0, 6.0]);
    let isum = op(
        &["s32[4]", "s32[]"],
        "s32[] reduce(p0, p1), dimensions={0}, to_apply=addi",
        &[s32s(&[4], &[i128::from(i32::MAX), 1, 2, 3]), s32s(&[], &[0])],
    );
    assert_eq!(ints(&isum), vec![i128::from(i32::MIN) + 5]);
    // Windows of 2 with stride 2 and one column of padding on the right, which is skipped.
    let rw = op(
        &["f32[2,3]", "f32[]"],
        "f32[1,2] reduce-window(p0, p1), window={size=2x2 stride=2x2 pad=0_0x0_1}, to_apply=max",
        &[x.clone(), f32s(&[], &[f64::NEG_INFINITY])],
    );
    assert_eq!(floats(&rw), vec![5.0, 6.0]);
}

#[test]
fn a_reducer_of_several_ops_is_evaluated_per_element() {
    // argmax: (value, index) pairs, keeping the larger value and on ties the smaller index.
    let text = "argmax {\n  a = f32[] parameter(0)\n  i = s32[] parameter(1)\n  b = f32[] parameter(2)\n  j = s32[] parameter(3)\n  \
        gt = pred[] compare(a, b), direction=GT\n  eq = pred[] compare(a, b), direction=EQ\n  lt = pred[] compare(i, j), direction=LT\n  \
        keep_i = pred[] and(eq, lt)\n  keep = pred[] or(gt, keep_i)\n  v = f32[] select(keep, a, b)\n  k = s32[] select(keep, i, j)\n  \
        ROOT t = (f32[], s32[]) tuple(v, k)\n}\n\
        ENTRY e {\n  x = f32[5] parameter(0)\n  i = s32[5] iota(), iota_dimension=0\n  ninf = f32[] constant(-inf)\n  z = s32[] constant(0)\n  \
        ROOT r = (f32[], s32[]) reduce(x, i, ninf, z), dimensions={0}, to_apply=argmax\n}";
    let out = run(text, &[f32s(&[5], &[1.0, 7.0, -2.0, 7.0, 3.0])]);
    assert_eq!(floats(&out[0]), vec![7.0]);
    assert_eq!(ints(&out[1]), vec![1]);
}

#[test]
fn dots_with_dims_anywhere() {
    let a = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = f32s(&[3, 2], &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    let d = op(
        &["f32[2,3]", "f32[3,2]"],
        "f32[2,2] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
        &[a.clone(), b],
    );
    assert_eq!(floats(&d), vec![4.0, 5.0, 10.0, 11.0]);
    // a times its own transpose, contracting dim 1 of both.
    let g = op(
        &["f32[2,3]", "f32[2,3]"],
        "f32[2,2] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
        &[a.clone(), a.clone()],
    );
    assert_eq!(floats(&g), vec![14.0, 32.0, 32.0, 77.0]);
    // Batch dim 1 of the lhs [m, b, k] and 0 of the rhs [b, k, n].
    let l = f32s(&[1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let r = f32s(&[2, 2, 1], &[1.0, 1.0, 2.0, 0.0]);
    let batched = op(
        &["f32[1,2,2]", "f32[2,2,1]"],
        "f32[2,1,1] dot(p0, p1), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}",
        &[l, r],
    );
    assert_eq!(floats(&batched), vec![3.0, 6.0]);
    let third = op(
        &["f32[1,1]", "f32[1,1]"],
        "f32[1,1] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
        &[f32s(&[1, 1], &[1.0 / 3.0]), f32s(&[1, 1], &[3.0])],
    );
    assert!(third.error[0] > 0.0, "a product that is not an f32 value has a bound");
}

#[test]
fn convolutions() {
    // NHWC image 1x3x3x1 of 1..9, a 2x2 HWIO kernel of ones, stride 1, no padding: window sums.
    let image = f32s(&[1, 3, 3, 1], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    let ones = f32s(&[2, 2, 1, 1], &[1.0; 4]);
    let c = op(
        &["f32[1,3,3,1]", "f32[2,2,1,1]"],
        "f32[1,2,2,1] convolution(p0, p1), window={size=2x2}, dim_labels=b01f_01io->b01f",
        &[image.clone(), ones.clone()],
    );
    assert_eq!(floats(&c), vec![12.0, 16.0, 24.0, 28.0]);
    // Padding 1 on every side and stride 2: the corners' windows.
    let padded = op(
        &["f32[1,3,3,1]", "f32[2,2,1,1]"],
        "f32[1,2,2,1] convolution(p0, p1), window={size=2x2 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
        &[image.clone(), ones.clone()],
    );
    assert_eq!(floats(&padded), vec![1.0, 5.0, 11.0, 28.0]);
    // A reversed kernel [[1, 2], [3, 4]] is read as [[4, 3], [2, 1]].
    let kernel = f32s(&[2, 2, 1, 1], &[1.0, 2.0, 3.0, 4.0]);
    let reversed = op(
        &["f32[1,3,3,1]", "f32[2,2,1,1]"],
        "f32[1,1,1,1] convolution(p0, p1), window={size=2x2 stride=2x2 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f",
        &[image.clone(), kernel.clone()],
    );
    assert_eq!(floats(&reversed), vec![4.0 + 6.0 + 8.0 + 5.0]);
    // Dilated kernel (rhs_dilate 2): taps 0 and 2 of each dim.
    let dilated = op(
        &["f32[1,3,3,1]", "f32[2,2,1,1]"],
        "f32[1,1,1,1] convolution(p0, p1), window={size=2x2 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f",
        &[image.clone(), kernel],
    );
    assert_eq!(floats(&dilated), vec![1.0 + 2.0 * 3.0 + 3.0 * 7.0 + 4.0 * 9.0]);
    // Two feature groups: each output feature reads its own input feature (depthwise).
    let two = f32s(&[1, 1, 1, 2], &[3.0, 5.0]);
    let k = f32s(&[1, 1, 1, 2], &[2.0, 10.0]);
    let grouped = op(
        &["f32[1,1,1,2]", "f32[1,1,1,2]"],
        "f32[1,1,1,2] convolution(p0, p1), window={size=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=2",
        &[two, k],
    );
    assert_eq!(floats(&grouped), vec![6.0, 50.0]);
}

#[test]
fn calls_fusions_and_tuples() {
    let text = "f {\n  a = f32[2] parameter(0)\n  ROOT t = (f32[2], f32[2]) tuple(a, a)\n}\n\
        g {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n\
        ENTRY e {\n  x = f32[2] parameter(0)\n  t = (f32[2], f32[2]) fusion(x), kind=kLoop, calls=f\n  \
        y = f32[2] get-tuple-element(t), index=1\n  c = f32[2] call(y), to_apply=g\n  ROOT r = (f32[2], f32[2]) tuple(c, x)\n}";
    let out = run(text, &[f32s(&[2], &[1.0, -3.0])]);
    assert_eq!(floats(&out[0]), vec![-1.0, 3.0]);
    assert_eq!(floats(&out[1]), vec![1.0, -3.0]);
}

#[test]
fn bad_arguments_and_unsupported_ops_are_errors() {
    let module: HloModule =
        "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT s = f32[2] sort(x), dimensions={0}\n}".parse().unwrap();
    let x = f32s(&[2], &[1.0, 0.0]);
    let error = evaluate(&module, std::slice::from_ref(&x), &EvalOptions::default()).unwrap_err().to_string();
    assert!(error.contains("instruction `s` in computation `e`: `sort` is not evaluated"), "{error}");
    let error = evaluate(&module, &[], &EvalOptions::default()).unwrap_err().to_string();
    assert!(error.contains("too few arguments"), "{error}");
    let error = evaluate(&module, &[f32s(&[3], &[0.0; 3])], &EvalOptions::default()).unwrap_err().to_string();
    assert!(error.contains("should be f32[2]"), "{error}");
    let huge: HloModule =
        "ENTRY e {\n  ROOT i = s32[1099511627776] iota(), iota_dimension=0\n}".parse().unwrap();
    let error = evaluate(&huge, &[], &EvalOptions::default()).unwrap_err().to_string();
    assert!(error.contains("more than the evaluator's limit"), "{error}");
    let elided: HloModule = "ENTRY e {\n  ROOT c = f32[100] constant({...})\n}".parse().unwrap();
    let error = evaluate(&elided, &[], &EvalOptions::default()).unwrap_err().to_string();
    assert!(error.contains("values are not in the module"), "{error}");
}

/// Deterministic arguments for a module's entry: floats multiples of 1/16 in [-2, 2), integers
/// in [-8, 8), preds 0 or 1.
fn arguments(module: &HloModule) -> Vec<Array> {
    let entry = module.entry();
    let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut next = move || rng.random_range(-32..32i64);
    let mut out = Vec::new();
    for p in entry.parameters() {
        for a in entry.instructions[p.0].shape.arrays() {
            let n = volume(&a.dims);
            out.push(match a.element_type {
                ElementType::Pred => {
                    Array::ints(a.element_type, &a.dims, (0..n).map(|_| i128::from(next() & 1)).collect())
                }
                t if crate::hlo::is_float_type(t) => {
                    Array::floats(t, &a.dims, (0..n).map(|_| next() as f64 / 16.0).collect())
                }
                t => Array::ints(t, &a.dims, (0..n).map(|_| i128::from(next() / 4)).collect()),
            });
        }
    }
    out
}

/// Each JAX fixture as XLA received it and as XLA's CPU compiler optimised it evaluates to the
/// same values, within the sum of the two bounds.
#[test]
fn optimised_and_unoptimised_jax_fixtures_agree() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/jax");
    let mut checked = 0;
    for name in ["mlp_layer", "attention", "conv_block", "reduce_transpose", "embedding", "window"] {
        let read = |suffix: &str| -> HloModule {
            let text = std::fs::read_to_string(dir.join(format!("{name}{suffix}"))).unwrap();
            text.parse().unwrap_or_else(|e| panic!("{name}{suffix}: {e}"))
        };
        let (plain, optimised) = (read(".hlo"), read(".opt.hlo"));
        let args = arguments(&plain);
        let a = evaluate(&plain, &args, &EvalOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let b = evaluate(&optimised, &args, &EvalOptions::default())
            .unwrap_or_else(|e| panic!("{name}.opt: {e}"));
        assert_eq!(a.len(), b.len(), "{name}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.dims, y.dims, "{name}");
            for i in 0..x.len() {
                let (u, v) = (x.data.get_f64(i), y.data.get_f64(i));
                let tolerance = x.error[i] + y.error[i];
                assert!(
                    (u - v).abs() <= tolerance,
                    "{name}[{i}]: {u} and {v} differ by more than {tolerance}"
                );
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 6);
}
