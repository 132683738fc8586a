//! `Requant`: the requantizing epilogue by itself, `out = requantize(acc, scale, zero_point)` with
//! the scale and the zero point along the last dim.
//!
//! ```text
//! ordinal:  11
//! forms:    Requant
//! space:    any rank, [..., n]
//! operands: acc [..., n] in, scale [n] in, zero_point [n] in, out [..., n] out
//! dtypes:   acc i32, scale f32, out u8 or i8 and zero_point the same
//! computes: out[..., j] = requantize(acc[..., j], scale[j], zero_point[j]) (`super::requantize`)
//! verified: exactly
//! ```
//!
//! Only `acc` moves (into vector registers for a separate pass): its kernels read `scale` and
//! `zero_point` and write `out` where they are, in memory or a cache.
//! A pass of `MatmulRequant` that only the search makes (`actions/requant.rs`); its kernels are
//! `VectorRequant` (on a register block of the accumulator) and `ValueRequant`.

use super::{
    Direction, OperandDim, OperandsMut, Operator, OperatorDefinition, PrimitiveKind, Tolerance, dims,
    operand, requant_dtypes, requantize,
};
use crate::dtype::Dtype;
use crate::shape::Shape;

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[(PrimitiveKind::Requant, "Requant")],
    &[
        operand("acc", Direction::In),
        operand("scale", Direction::In),
        operand("zero_point", Direction::In),
        operand("out", Direction::Out),
    ],
    operand_dims,
    dtypes,
    semantics,
    tolerance,
    description,
    |m| format!("Requant(3x4, i32 {m} row-major, f32 {m} row-major, u8 {m} row-major, u8 {m} row-major)"),
)
.arithmetic(super::Arithmetic::Elementwise { flops_per_point: 2 })
.unmoved(&[1, 2, 3])
.pass_of(Operator::MatmulRequant);

fn operand_dims(_: PrimitiveKind, rank: usize) -> Vec<Vec<OperandDim>> {
    let column = vec![OperandDim::one(rank.saturating_sub(1))];
    vec![dims::identity(rank), column.clone(), column, dims::identity(rank)]
}

fn dtypes(kind: PrimitiveKind, d: &[Dtype]) -> Result<(), String> {
    if d[0] != Dtype::I32 {
        return Err(format!("{} reads an i32 accumulator, found {}", kind.name(), d[0]));
    }
    requant_dtypes(kind, d[1], d[2], d[3])
}

fn semantics(_: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let last = shape.rank() - 1;
    let out = ops.dtype(3);
    for p in shape.points() {
        let column = [p[last]];
        let value = requantize(ops.read(0, &p), ops.read(1, &column), ops.read(2, &column), out);
        ops.write(3, &p, value);
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
    use super::super::requantize;
    use crate::dtype::Dtype;
    use crate::interp::values::Value;

    fn requant(acc: i32, scale: f32, zero_point: i64, out: Dtype) -> i64 {
        match requantize(Value::Int(i64::from(acc)), Value::Float(scale), Value::Int(zero_point), out) {
            Value::Int(v) => v,
            Value::Float(x) => panic!("a float result {x}"),
        }
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
