//! `ShiftCorrection`: `out[n] = -128 Σ_k rhs[b, k, n]`, the column-sum correction an s8s8s32
//! matmul needs when its i8 `lhs` is shifted into u8, once per column.
//!
//! ```text
//! ordinal:  12
//! forms:    ShiftCorrection
//! space:    [b, k, n]
//! operands: rhs [b, k, n] in, out [n] out
//! reduces:  b, k
//! dtypes:   rhs i8, out i32
//! computes: out[n] = -128 Σ_b Σ_k rhs[b, k, n]
//! verified: exactly
//! ```
//!
//! `vpdpbusd` multiplies u8 by i8, so the search computes an s8s8s32 matmul on it through the
//! identity (`u = s + 128`, the bits `s ^ 0x80`, a `Move` from i8 to u8):
//!
//! ```text
//! Σ_k s[m, k] rhs[k, n] = -128 Σ_k rhs[k, n]  +  Σ_k u[m, k] rhs[k, n]
//!                         ShiftCorrection(rhs, c), then MatmulCorrected(u, rhs, c, out)
//! ```
//!
//! (`morello-search/src/actions/shift.rs`, one batch at a time: `b` is 1 there, and summing over
//! it is what a larger `b` means here). It is exact in i32 wherever the s8s8s32 matmul is
//! (`crate::dtype::exact_reduction_limit`: `K <= 131071`): `|-128 Σ_k rhs| <= 16384 K`. Made only
//! by the search; its kernels are `VectorShiftCorrection` (one vector of columns) and
//! `ValueShiftCorrection` (one column). It does not move: its kernels read `rhs` and write `out`
//! where they are.

use super::{
    Direction, OperandDim, OperandsMut, Operator, OperatorDefinition, PrimitiveKind, Tolerance, dims, operand,
};
use crate::dtype::Dtype;
use crate::interp::values::{Value, wrap};
use crate::shape::Shape;

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[(PrimitiveKind::ShiftCorrection, "ShiftCorrection")],
    &[operand("rhs", Direction::In), operand("out", Direction::Out)],
    operand_dims,
    dtypes,
    semantics,
    tolerance,
    description,
    |m| format!("ShiftCorrection(1x8x16, i8 {m} row-major, i32 {m} row-major)"),
)
.rank(3, Some(&["b", "k", "n"]))
.reductions(&[0, 1])
.unmoved(&[0, 1])
.pass_of(Operator::Matmul);

/// The operands of the shifted matmul's stages, as indices of the matmul's (`lhs` 0, `rhs` 1,
/// `out` 2) and its temporaries, the shifted `lhs` (3) and the correction (4): the shift, the
/// correction, the corrected matmul.
pub const SHIFT_STAGES: [&[usize]; 3] = [&[0, 3], &[1, 4], &[3, 1, 4, 2]];

fn operand_dims(_: PrimitiveKind, _: usize) -> Vec<Vec<OperandDim>> {
    vec![dims::identity(3), vec![OperandDim::one(2)]]
}

fn dtypes(kind: PrimitiveKind, d: &[Dtype]) -> Result<(), String> {
    if (d[0], d[1]) != (Dtype::I8, Dtype::I32) {
        return Err(format!(
            "{} reads an i8 rhs into an i32 output, found {} and {}",
            kind.name(),
            d[0],
            d[1]
        ));
    }
    Ok(())
}

fn semantics(_: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let [batch, depth, cols] = *shape.dims() else { return };
    for n in 0..cols {
        let mut sum = 0i64;
        for b in 0..batch {
            for k in 0..depth {
                if let Value::Int(w) = ops.read(0, &[b, k, n]) {
                    sum += w;
                }
            }
        }
        ops.write(1, &[n], Value::Int(wrap(-128 * sum, Dtype::I32)));
    }
}

fn tolerance(_: PrimitiveKind) -> Tolerance {
    Tolerance::Exact
}

fn description(_: PrimitiveKind) -> &'static str {
    "the column-sum correction of a shifted int8 matmul"
}
