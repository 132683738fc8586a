//! `Requant`: the requantizing epilogue by itself, `out = requantize(acc (+ bias), scale,
//! zero_point)` with the bias, scale and zero point along the last dim (`Requant`, `BiasRequant`,
//! `BiasReluRequant`).
//!
//! ```text
//! ordinal:  11
//! forms:    Requant, BiasRequant, BiasReluRequant (epilogue)
//! space:    any rank, [..., n]
//! operands: acc [..., n] in, (bias [n] in,) scale [n] in, zero_point [n] in, out [..., n] out
//! dtypes:   acc and bias i32, scale f32, out u8 or i8 and zero_point the same
//! computes: out[..., j] = requantize(acc[..., j] + bias[j], scale[j], zero_point[j])
//!           (`super::requantize`; the sum wraps in i32), ReLU after the scale in BiasReluRequant
//! verified: exactly
//! ```
//!
//! Only `acc` moves (into vector registers for a separate pass): its kernels read `bias`, `scale`
//! and `zero_point` and write `out` where they are, in memory or a cache.
//! A pass of `MatmulRequant` that only the search makes (`actions/requant.rs`); its kernels are
//! `VectorRequant` (on a register block of the accumulator) and `ValueRequant`.

use super::{
    Direction, OperandDim, OperandRole, OperandsMut, Operator, OperatorDefinition, PrimitiveKind,
    RequantEpilogue, Requantization, Tolerance, dims, operand, requant_dtypes, requantize,
};
use crate::dtype::Dtype;
use crate::shape::Shape;

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[
        (PrimitiveKind::Requant { epilogue: RequantEpilogue::Plain }, "Requant"),
        (PrimitiveKind::Requant { epilogue: RequantEpilogue::Bias }, "BiasRequant"),
        (PrimitiveKind::Requant { epilogue: RequantEpilogue::BiasRelu }, "BiasReluRequant"),
    ],
    &OPERANDS,
    operand_dims,
    dtypes,
    semantics,
    tolerance,
    description,
    |m| format!("Requant(3x4, i32 {m} row-major, f32 {m} row-major, u8 {m} row-major, u8 {m} row-major)"),
)
.arithmetic(super::Arithmetic::Elementwise { flops_per_point: 2 })
.form_operands(form_operands)
.unmoved(&[1, 2, 3, 4])
.pass_of(Operator::MatmulRequant);

const OPERANDS: [OperandRole; 4] = [
    operand("acc", Direction::In),
    operand("scale", Direction::In),
    operand("zero_point", Direction::In),
    operand("out", Direction::Out),
];

const BIAS_OPERANDS: [OperandRole; 5] = [
    operand("acc", Direction::In),
    operand("bias", Direction::In),
    operand("scale", Direction::In),
    operand("zero_point", Direction::In),
    operand("out", Direction::Out),
];

fn form_operands(kind: PrimitiveKind) -> &'static [OperandRole] {
    if RequantEpilogue::of(kind).has_bias() { &BIAS_OPERANDS } else { &OPERANDS }
}

fn operand_dims(kind: PrimitiveKind, rank: usize) -> Vec<Vec<OperandDim>> {
    let column = vec![OperandDim::one(rank.saturating_sub(1))];
    let count = form_operands(kind).len();
    let mut dims = vec![dims::identity(rank)];
    dims.extend((1..count - 1).map(|_| column.clone()));
    dims.push(dims::identity(rank));
    dims
}

fn dtypes(kind: PrimitiveKind, d: &[Dtype]) -> Result<(), String> {
    if d[0] != Dtype::I32 {
        return Err(format!("{} reads an i32 accumulator, found {}", kind.name(), d[0]));
    }
    requant_dtypes(kind, &d[1..])
}

fn semantics(kind: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let last = shape.rank() - 1;
    let epilogue = RequantEpilogue::of(kind);
    let count = form_operands(kind).len();
    let (scale, zero_point, out_at) = (count - 3, count - 2, count - 1);
    let out = ops.dtype(out_at);
    for p in shape.points() {
        let column = [p[last]];
        let bias = epilogue.has_bias().then(|| ops.read(1, &column));
        let requant = Requantization {
            scale: ops.read(scale, &column),
            zero_point: ops.read(zero_point, &column),
            epilogue,
        };
        let value = requantize(ops.read(0, &p), bias, requant, out);
        ops.write(out_at, &p, value);
    }
}

fn tolerance(_: PrimitiveKind) -> Tolerance {
    Tolerance::Exact
}

fn description(_: PrimitiveKind) -> &'static str {
    "a requantizing epilogue"
}

#[cfg(test)]
mod tests {
    use super::super::{RequantEpilogue, Requantization, requantize};
    use crate::dtype::Dtype;
    use crate::interp::values::Value;

    fn with(
        acc: i32,
        bias: Option<i32>,
        scale: f32,
        zero_point: i64,
        epilogue: RequantEpilogue,
        out: Dtype,
    ) -> i64 {
        let requant =
            Requantization { scale: Value::Float(scale), zero_point: Value::Int(zero_point), epilogue };
        let bias = bias.map(|b| Value::Int(i64::from(b)));
        match requantize(Value::Int(i64::from(acc)), bias, requant, out) {
            Value::Int(v) => v,
            Value::Float(x) => panic!("a float result {x}"),
        }
    }

    fn requant(acc: i32, scale: f32, zero_point: i64, out: Dtype) -> i64 {
        with(acc, None, scale, zero_point, RequantEpilogue::Plain, out)
    }

    /// The bias is added in i32 before the conversion (exactly, where f32 addition would round),
    /// and wraps as the C's `vpaddd` does; ReLU after the scale raises the lower bound to 0.
    #[test]
    fn adds_the_bias_in_i32_and_applies_relu_after_the_scale() {
        let (u8, i8) = (Dtype::U8, Dtype::I8);
        let (bias, relu) = (RequantEpilogue::Bias, RequantEpilogue::BiasRelu);
        // (2^24 + 1) as f32 is 2^24: a sum in f32 would lose the 1; in i32, 2^24 + 2 is exact.
        assert_eq!(with(1 << 24, Some(1), 1.0 / 131_072.0, 0, bias, u8), 128);
        assert_eq!(with((1 << 24) + 1, Some(1), 1.0 / 262_144.0, 0, bias, u8), 64);
        assert_eq!(with(-7, Some(12), 1.0, 3, bias, u8), 8);
        // The bias at the i32 extremes, the sum in range: exact.
        assert_eq!(with(-100, Some(i32::MAX), 1e-7, 0, bias, u8), 215);
        assert_eq!(with(100, Some(i32::MIN), 1e-8, 0, bias, i8), -21);
        // Beyond: the i32 sum wraps (i32::MAX + 1 = i32::MIN).
        assert_eq!(with(1, Some(i32::MAX), 1.0, 0, bias, i8), -128);
        // ReLU: a negative scaled value is 0, then offset by the zero point; NaN is 0 too.
        assert_eq!(with(-50, Some(0), 1.0, 10, relu, u8), 10);
        assert_eq!(with(-50, Some(0), 1.0, -20, relu, i8), -20);
        assert_eq!(with(-50, Some(0), 1.0, -20, bias, i8), -70);
        assert_eq!(with(50, Some(3), 0.5, -20, relu, i8), 6);
        assert_eq!(with(7, Some(0), f32::NAN, 20, relu, u8), 20);
        assert_eq!(with(1000, Some(0), 1.0, 20, relu, u8), 255);
        // -0.5 rounds to -0 with or without ReLU (max(-0.5, 0) = 0).
        assert_eq!(with(-1, Some(0), 0.5, 3, relu, i8), 3);
    }

    /// Ties round to even, the zero point is added after rounding, and the result saturates.
    #[test]
    fn rounds_half_to_even_then_offsets_and_saturates() {
        let u8 = Dtype::U8;
        // 5 * 0.5 = 2.5 -> 2, 7 * 0.5 = 3.5 -> 4, -5 * 0.5 = -2.5 -> -2 (+ 10).
        assert_eq!(requant(5, 0.5, 0, u8), 2);
        assert_eq!(requant(7, 0.5, 0, u8), 4);
        assert_eq!(requant(-5, 0.5, 10, u8), 8);
        assert_eq!(requant(3, 0.25, 0, u8), 1);
        // Saturation at both ends, wherever the zero point puts them.
        assert_eq!(requant(1000, 1.0, 0, u8), 255);
        assert_eq!(requant(-1000, 1.0, 128, u8), 0);
        assert_eq!(requant(200, 1.0, 100, u8), 255);
        assert_eq!(requant(-101, 1.0, 100, u8), 0);
        assert_eq!(requant(i32::MAX, 1e30, 0, u8), 255);
        assert_eq!(requant(i32::MIN, 1e30, 0, u8), 0);
        let i8 = Dtype::I8;
        assert_eq!(requant(-1000, 1.0, 0, i8), -128);
        assert_eq!(requant(1000, 1.0, -5, i8), 127);
        assert_eq!(requant(-3, 0.5, -5, i8), -7);
        // -0.5 rounds to -0, which adds to the zero point as 0.
        assert_eq!(requant(-1, 0.5, 3, i8), 3);
    }

    /// The sum is converted to f32 first (rounded to nearest even), then multiplied in f32.
    #[test]
    fn converts_and_multiplies_in_f32() {
        // 2^24 + 1 converts to 2^24; times 2^-17 is 128 exactly (f64 arithmetic would give 128.0000076).
        assert_eq!(requant((1 << 24) + 1, 1.0 / 131_072.0, 0, Dtype::U8), 128);
        // 0.1f32 * 25 rounds to 2.5 in f32 (2.500000037 in exact arithmetic): a tie, to 2.
        assert_eq!(25.0f32 * 0.1f32, 2.5);
        assert_eq!(requant(25, 0.1, 0, Dtype::U8), 2);
    }

    /// NaN goes to the lower bound, as x86's maxps returns its second operand.
    #[test]
    fn nan_becomes_the_lower_bound() {
        assert_eq!(requant(7, f32::NAN, 20, Dtype::U8), 0);
        assert_eq!(requant(7, f32::NAN, 20, Dtype::I8), -128);
    }
}
