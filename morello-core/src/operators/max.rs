//! `Max`: the maximum of each row of a 2-D tensor (`MaxAccum`: the maximum of it and the
//! output's old value).
//!
//! ```text
//! ordinal:  4
//! forms:    Max, MaxAccum (accum: true)
//! space:    [m, n]
//! operands: x [m, n] in, out [m] out (in and out accumulating)
//! reduces:  n; an accumulating form's output starts from negative infinity
//! dtypes:   f32
//! computes: out[i] = max(out[i] if accumulating, x[i, 0], ..., x[i, n - 1])
//! verified: exactly (relative bound 0)
//! ```
//!
//! Softmax's first pass, made only by the search (`actions/softmax.rs`); its kernel is
//! `VectorMax`.

use super::{
    Accumulation, Direction, FillValue, OperandDim, Operands, OperandsMut, Operator, OperatorDefinition,
    PrimitiveKind, Tolerance, all_f32, dims, float, no_twin, operand, per_row,
};
use crate::interp::values::Value;
use crate::shape::Shape;

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[(PrimitiveKind::Max { accum: false }, "Max"), (PrimitiveKind::Max { accum: true }, "MaxAccum")],
    &[operand("x", Direction::In), operand("out", Direction::Out)],
    operand_dims,
    all_f32,
    semantics,
    tolerance,
    description,
    |m| format!("Max(2x8, f32 {m} row-major, f32 {m} row-major)"),
)
.rank(2, None)
.reductions(&[1])
.accumulating(Accumulation { accumulates, twin: no_twin, init: FillValue::NegInf })
.pass_of(Operator::Softmax);

fn operand_dims(_: PrimitiveKind, _: usize) -> Vec<Vec<OperandDim>> {
    vec![dims::rows_cols(), dims::rows()]
}

fn accumulates(kind: PrimitiveKind) -> bool {
    matches!(kind, PrimitiveKind::Max { accum: true })
}

fn semantics(kind: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let [rows, cols] = [shape.dim(0), shape.dim(1)];
    for r in 0..rows {
        let start = if accumulates(kind) { float(ops.read(1, &[r])) } else { f64::NEG_INFINITY };
        let max = (0..cols).map(|c| float(ops.read(0, &[r, c]))).fold(start, f64::max);
        ops.write(1, &[r], Value::Float(max as f32));
    }
}

fn tolerance(_: PrimitiveKind) -> Tolerance {
    Tolerance::Relative(bounds)
}

/// The maximum is one of the values: exact.
fn bounds(_: PrimitiveKind, shape: &Shape, _: &dyn Operands) -> Vec<Option<Vec<f64>>> {
    vec![None, per_row(shape, 0.0)]
}

fn description(kind: PrimitiveKind) -> &'static str {
    if accumulates(kind) { "an accumulating row maximum" } else { "a row maximum" }
}
