//! `SoftmaxScale`: softmax's last pass, `y = y / sum` per row.
//!
//! ```text
//! ordinal:  6
//! forms:    SoftmaxScale
//! space:    [m, n]
//! operands: sum [m] in, y [m, n] in and out
//! dtypes:   f32
//! computes: y[i, j] = y[i, j] / sum[i] in f64, rounded
//! verified: relative: y within 3 u (times a rounded reciprocal)
//! ```
//!
//! Made only by the search (`actions/softmax.rs`); its kernel is `VectorScale`.

use super::{
    Direction, F32_UNIT_ROUNDOFF, OperandDim, Operands, OperandsMut, Operator, OperatorDefinition,
    PrimitiveKind, Tolerance, all_f32, dims, float, operand, per_row,
};
use crate::interp::values::Value;
use crate::shape::Shape;

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[(PrimitiveKind::SoftmaxScale, "SoftmaxScale")],
    &[operand("sum", Direction::In), operand("y", Direction::InOut)],
    operand_dims,
    all_f32,
    semantics,
    tolerance,
    description,
    |m| format!("SoftmaxScale(2x8, f32 {m} row-major, f32 {m} row-major)"),
)
.rank(2, None)
.pass_of(Operator::Softmax);

fn operand_dims(_: PrimitiveKind, _: usize) -> Vec<Vec<OperandDim>> {
    vec![dims::rows(), dims::rows_cols()]
}

fn semantics(_: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let [rows, cols] = [shape.dim(0), shape.dim(1)];
    for r in 0..rows {
        let sum = float(ops.read(0, &[r]));
        for c in 0..cols {
            let y = float(ops.read(1, &[r, c]));
            ops.write(1, &[r, c], Value::Float((y / sum) as f32));
        }
    }
}

fn tolerance(_: PrimitiveKind) -> Tolerance {
    Tolerance::Relative(bounds)
}

fn bounds(_: PrimitiveKind, shape: &Shape, _: &dyn Operands) -> Vec<Option<Vec<f64>>> {
    vec![None, per_row(shape, 3.0 * F32_UNIT_ROUNDOFF)]
}

fn description(_: PrimitiveKind) -> &'static str {
    "softmax's scaling"
}
