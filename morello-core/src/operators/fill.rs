//! `Fill`: set every element of a tensor to a value: zero, negative infinity or the dtype's
//! minimum (`FillZero`, `FillNegInf`, `FillMin`).
//!
//! ```text
//! ordinal:  8
//! forms:    FillZero, FillNegInf, FillMin (value)
//! space:    any rank, the tensor's shape
//! operands: out out
//! dtypes:   any
//! computes: out[p] = value (for integers, negative infinity is the minimum)
//! verified: exactly
//! ```
//!
//! The search makes fills for zero-then-accumulate (`actions/to_accum.rs`: zero, or negative
//! infinity before a maximum) and for outputs a padded convolution's windows never reach. Its
//! kernels are `ValueFill`, `VectorFill` and `MemsetZero`.

use super::{
    Direction, FillValue, OperandDim, OperandsMut, OperatorDefinition, PrimitiveKind, Tolerance, dims,
    operand,
};
use crate::dtype::Dtype;
use crate::interp::values::Value;
use crate::shape::Shape;

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[
        (PrimitiveKind::Fill { value: FillValue::Zero }, "FillZero"),
        (PrimitiveKind::Fill { value: FillValue::NegInf }, "FillNegInf"),
        (PrimitiveKind::Fill { value: FillValue::Min }, "FillMin"),
    ],
    &[operand("out", Direction::Out)],
    operand_dims,
    any_dtype,
    semantics,
    tolerance,
    description,
    |m| format!("FillZero(3x4, f32 {m} row-major)"),
);

fn operand_dims(_: PrimitiveKind, rank: usize) -> Vec<Vec<OperandDim>> {
    vec![dims::identity(rank)]
}

fn any_dtype(_: PrimitiveKind, _: &[Dtype]) -> Result<(), String> {
    Ok(())
}

/// The value a fill writes for a dtype.
pub fn fill_value(value: FillValue, dtype: Dtype) -> Value {
    if dtype.is_float() {
        return Value::Float(match value {
            FillValue::Zero => 0.0,
            FillValue::NegInf => f32::NEG_INFINITY,
            FillValue::Min => f32::MIN,
        });
    }
    let min = match dtype {
        Dtype::I8 => i64::from(i8::MIN),
        Dtype::I16 => i64::from(i16::MIN),
        Dtype::I32 => i64::from(i32::MIN),
        _ => 0,
    };
    Value::Int(match value {
        FillValue::Zero => 0,
        FillValue::NegInf | FillValue::Min => min,
    })
}

fn semantics(kind: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let PrimitiveKind::Fill { value } = kind else { return };
    let v = fill_value(value, ops.dtype(0));
    for p in shape.points() {
        ops.write(0, &p, v);
    }
}

fn tolerance(_: PrimitiveKind) -> Tolerance {
    Tolerance::Exact
}

fn description(_: PrimitiveKind) -> &'static str {
    "a fill"
}
