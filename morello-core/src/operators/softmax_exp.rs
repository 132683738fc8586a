//! `SoftmaxExp`: softmax's middle pass, `y = exp(x - max)` and `sum = Σ_row y` per row
//! (`SoftmaxExpAccum` adds to the sum's old value).
//!
//! ```text
//! ordinal:  5
//! forms:    SoftmaxExp, SoftmaxExpAccum (accum: true)
//! space:    [m, n]
//! operands: x [m, n] in, max [m] in, y [m, n] out, sum [m] out (in and out accumulating)
//! reduces:  n (the sum); an accumulating form's sum starts from zero
//! dtypes:   f32
//! computes: y[i, j] = exp(x[i, j] - max[i]), the difference in f32, exp exact then rounded;
//!           sum[i] (+)= Σ_j y[i, j] in f64, rounded
//! verified: relative: y within e, sum within e + (n + 1) u (e the polynomial exp's bound)
//! ```
//!
//! It writes two operands; the sum is its output (last). Made only by the search
//! (`actions/softmax.rs`); its kernel is `VectorSoftmaxExp`.

use super::{
    Accumulation, Direction, EXP_RELATIVE_ERROR, F32_UNIT_ROUNDOFF, FillValue, OperandDim, Operands,
    OperandsMut, Operator, OperatorDefinition, PrimitiveKind, Tolerance, all_f32, as_f32, dims, float,
    no_twin, operand, per_row,
};
use crate::interp::values::Value;
use crate::shape::Shape;

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[
        (PrimitiveKind::SoftmaxExp { accum: false }, "SoftmaxExp"),
        (PrimitiveKind::SoftmaxExp { accum: true }, "SoftmaxExpAccum"),
    ],
    &[
        operand("x", Direction::In),
        operand("max", Direction::In),
        operand("y", Direction::Out),
        operand("sum", Direction::Out),
    ],
    operand_dims,
    all_f32,
    semantics,
    tolerance,
    description,
    |m| {
        format!("SoftmaxExp(2x8, f32 {m} row-major, f32 {m} row-major, f32 {m} row-major, f32 {m} row-major)")
    },
)
.rank(2, None)
.reductions(&[1])
.accumulating(Accumulation { accumulates, twin: no_twin, init: FillValue::Zero })
.pass_of(Operator::Softmax);

fn operand_dims(_: PrimitiveKind, _: usize) -> Vec<Vec<OperandDim>> {
    vec![dims::rows_cols(), dims::rows(), dims::rows_cols(), dims::rows()]
}

fn accumulates(kind: PrimitiveKind) -> bool {
    matches!(kind, PrimitiveKind::SoftmaxExp { accum: true })
}

fn semantics(kind: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let [rows, cols] = [shape.dim(0), shape.dim(1)];
    for r in 0..rows {
        let max = ops.read(1, &[r]);
        let mut sum = if accumulates(kind) { float(ops.read(3, &[r])) } else { 0.0 };
        for c in 0..cols {
            let x = ops.read(0, &[r, c]);
            // The difference in f32 (as the kernel takes it), its exp exact, rounded.
            let y = f64::from(as_f32(x) - as_f32(max)).exp() as f32;
            ops.write(2, &[r, c], Value::Float(y));
            sum += f64::from(y);
        }
        ops.write(3, &[r], Value::Float(sum as f32));
    }
}

fn tolerance(_: PrimitiveKind) -> Tolerance {
    Tolerance::Relative(bounds)
}

/// `y` within the exp's bound (the reference takes exp of the same difference); the sum within
/// that and `n + 1` roundings.
fn bounds(_: PrimitiveKind, shape: &Shape, _: &dyn Operands) -> Vec<Option<Vec<f64>>> {
    let (e, n) = (EXP_RELATIVE_ERROR, f64::from(shape.dim(1)));
    vec![None, None, per_row(shape, e), per_row(shape, e + (n + 1.0) * F32_UNIT_ROUNDOFF)]
}

fn description(_: PrimitiveKind) -> &'static str {
    "softmax's exponentials"
}
