//! Verification tests: the fast matmul reference against the interpreter, and mismatches found
//! and described.

use morello_core::spec::LogicalSpec;
use morello_core::target::Target;

use super::reference::{Reference, fast_conv, fast_matmul, reference, to_values};
use super::*;
use crate::emit::kernel_signature;

fn avx2() -> Target {
    Target::builtin("x86-avx2", 1).expect("target")
}

fn spec(text: &str, t: &Target) -> LogicalSpec {
    LogicalSpec::parse(text, t).expect("parses").canonicalize(t).expect("valid").into_logical()
}

fn seeded(spec: &LogicalSpec, seed: u64) -> Vec<Vec<Value>> {
    let signature = kernel_signature(spec, "k").expect("signature");
    signature
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| to_values(&Buffer::from_seed(p.c_type, p.elements, seed, i)))
        .collect()
}

/// Asserts that `fast` computes exactly what the interpreter does for each spec of `texts` on
/// inputs seeded with `seed`: the same values, and the same output magnitudes where both have
/// them. Exact, because seeded floats make every partial sum exact in f32 and f64.
fn assert_agrees_with_the_interpreter(
    texts: &[&str],
    seed: u64,
    fast: impl Fn(&LogicalSpec, &[Vec<Value>]) -> Result<Reference, CodegenError>,
) {
    let t = avx2();
    for text in texts {
        let s = spec(text, &t);
        let initial = seeded(&s, seed);
        let slow = reference(&s, &t, &initial).expect("interpreter");
        let fast = fast(&s, &initial).expect("fast");
        assert_eq!(slow.method, ReferenceMethod::Interpreter);
        assert_eq!(slow.values, fast.values, "{text}");
        if let (Some(a), Some(b)) = (&slow.magnitudes[2], &fast.magnitudes[2]) {
            assert_eq!(a, b, "{text}");
        }
    }
}

#[test]
fn the_fast_matmul_agrees_with_the_interpreter() {
    let texts = [
        "Matmul(1x5x7x3, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
        "MatmulAccum(2x3x4x5, f32 GL col-major, f32 GL [0, 2, 1], f32 GL row-major)",
        "MatmulAccum(1x4x8x8, u32 GL row-major, u32 GL [0, 2, 1, 2 p(4)], u32 GL col-major)",
        "Matmul(1x3x6x2, i32 GL row-major, i32 GL row-major, i32 GL col-major)",
        "MatmulAccum(1x2x9x3, bf16 GL row-major, bf16 GL col-major, f32 GL row-major)",
    ];
    assert_agrees_with_the_interpreter(&texts, 11, fast_matmul);
}

#[test]
fn the_fast_convolution_agrees_with_the_interpreter() {
    let texts = [
        "Conv(1x3x2x4x4x3x3, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
        "Conv:s2x1:d1x2:p1x0x2x1(2x3x2x3x4x3x2, f32 GL [0, 2, 3, 1], f32 GL [2, 3, 1, 0], f32 GL [0, 2, 3, 1])",
        "ConvAccum:p1x1x1x1(1x2x3x4x4x3x3, u32 GL [0, 2, 3, 1], u32 GL [0, 2, 3, 1], u32 GL row-major)",
    ];
    assert_agrees_with_the_interpreter(&texts, 5, fast_conv);
}

/// A kernel's outputs checked against the reference: its spec on AVX2, its signature and the
/// seed of its inputs, for a test to corrupt a correct output and check it.
struct Checked {
    t: Target,
    s: LogicalSpec,
    signature: KernelSignature,
    seed: u64,
}

impl Checked {
    fn new(text: &str, seed: u64) -> Self {
        let t = avx2();
        let s = spec(text, &t);
        let signature = kernel_signature(&s, "k").expect("signature");
        Checked { t, s, signature, seed }
    }

    /// The buffers after a correct kernel: the reference's values, as the kernel's buffers
    /// would hold them.
    fn correct(&self) -> Vec<Buffer> {
        let expected = reference(&self.s, &self.t, &seeded(&self.s, self.seed)).expect("reference");
        self.signature
            .params
            .iter()
            .zip(&expected.values)
            .map(|(p, values)| match p.c_type {
                crate::CType::F32 => Buffer::F32(
                    values.iter().map(|v| if let Value::Float(x) = v { *x } else { f32::NAN }).collect(),
                ),
                crate::CType::U32 => Buffer::U32(
                    values.iter().map(|v| if let Value::Int(i) = v { *i as u32 } else { 0 }).collect(),
                ),
                other => panic!("no test conversion for {other}"),
            })
            .collect()
    }

    /// `after` (the buffers after the kernel ran) checked against the reference.
    fn check(&self, after: &[Buffer]) -> Verification {
        check_outputs(&self.s, &self.t, &self.signature, after, self.seed).expect("checks")
    }
}

#[test]
fn a_wrong_element_is_reported_with_its_index_and_values() {
    let checked = Checked::new("Matmul(1x2x3x4, u32 GL row-major, u32 GL row-major, u32 GL col-major)", 5);
    let mut after = checked.correct();
    let ok = checked.check(&after);
    assert!(ok.verified && ok.mismatch.is_none() && ok.max_abs_error == 0.0);
    assert_eq!(ok.elements, 8);
    // Corrupt out[1, 2] (col-major: offset 1 + 2 * 2 = 5).
    if let Buffer::U32(v) = &mut after[2] {
        v[5] = v[5].wrapping_add(1);
    }
    let bad = checked.check(&after);
    assert!(!bad.verified);
    let m = bad.mismatch.expect("a mismatch");
    assert_eq!((m.param.as_str(), m.point.as_slice(), m.offset), ("out", &[0, 1, 2][..], 5));
    assert_eq!(m.got, m.expected + 1.0);
    assert_eq!(m.tolerance, 0.0);
    assert!(m.to_string().starts_with("out[0, 1, 2] (buffer offset 5) is "), "{m}");
    assert!(
        m.to_string().ends_with("in Matmul(1x2x3x4, u32 GL row-major, u32 GL row-major, u32 GL col-major)"),
        "{m}"
    );
}

#[test]
fn float_errors_within_the_stated_tolerance_pass() {
    let checked = Checked::new("Matmul(1x2x16x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)", 3);
    let mut after = checked.correct();
    let exact = checked.check(&after);
    assert_eq!(exact.reduction_length, 16);
    // tolerance = 2 (n + 1) u M with M = Σ |a b| over 16 products.
    let tolerance = exact.max_tolerance;
    assert!(tolerance > 0.0 && tolerance < 1e-3, "{tolerance}");
    let Buffer::F32(out) = &mut after[2] else { panic!("f32") };
    let base = out[0];
    out[0] = base + (tolerance as f32) * 0.25;
    assert!(checked.check(&after).verified);
    let Buffer::F32(out) = &mut after[2] else { panic!("f32") };
    out[0] = base + 1.0;
    let wrong = checked.check(&after);
    assert!(!wrong.verified);
    assert_eq!(wrong.mismatch.expect("mismatch").point, [0, 0, 0]);
}

#[test]
fn moves_compare_bits() {
    let checked = Checked::new("Move(3x2, f32 GL row-major, f32 GL col-major)", 9);
    let mut after = checked.correct();
    assert!(checked.check(&after).verified);
    let Buffer::F32(dst) = &mut after[1] else { panic!("f32") };
    dst[0] = f32::from_bits(dst[0].to_bits() ^ 1);
    let wrong = checked.check(&after);
    assert_eq!(wrong.mismatch.expect("mismatch").tolerance, 0.0);
}

#[test]
fn verification_memory_counts_the_buffers_and_the_values_compared() {
    let t = avx2();
    let signature = |text: &str| kernel_signature(&spec(text, &t), "kernel").expect("signature");
    // A 4x4 f32 fill: a 64-byte buffer; morello holds it, and per element three values, one read
    // back and a tolerance.
    let fill = signature("FillZero(4x4, f32 GL row-major)");
    let value = size_of::<Value>() as u64;
    assert_eq!(verification_bytes(&fill), 64 + 16 * (3 * value + value + 8));
    // More elements take more; a huge fill saturates instead of overflowing.
    let matmul = signature("Matmul(1x8x8x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
    assert!(verification_bytes(&matmul) > 3 * verification_bytes(&fill));
    let huge = signature("FillZero(2147483648x2147483647, f32 GL row-major)");
    assert_eq!(verification_bytes(&huge), u64::MAX);
}
