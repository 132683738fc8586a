//! `Matmul`: batched matrix multiplication, `out = lhs * rhs`, or `out += lhs * rhs` accumulating
//! (`MatmulAccum`).
//!
//! ```text
//! ordinal:  0
//! forms:    Matmul, MatmulAccum (accum: true)
//! space:    [b, m, k, n]
//! operands: lhs [b, m, k] in, rhs [b, k, n] in, out [b, m, n] out (in and out accumulating)
//! reduces:  k; the accumulating twin starts from zero
//! dtypes:   lhs and rhs alike, out the same or wider (bf16 into f32)
//! computes: out[b, m, n] (+)= Σ_k lhs[b, m, k] rhs[b, k, n], in k order
//! verified: within 2 (k + 1) u M, M the sum of |lhs rhs| terms and |initial out|
//! ```
//!
//! Its own rewrites (in `morello-search`): zero-then-accumulate, the packing of `rhs` into panels
//! (`actions/moves.rs`), padding its columns (`actions/pad.rs`) and peeling off a first chunk of
//! `k` (`actions/peel.rs`). Its kernels are the register-block microkernels
//! (`BroadcastVecMultAdd` and its bf16 twin), the dot products and `MultAdd`.

use super::{
    Accumulation, Arithmetic, Direction, FrontierLevels, OperandDim, OperandRole, OperatorDefinition,
    PrimitiveKind, contraction_dtypes, dims, operand, plain_contraction, sum_tolerance,
};
use crate::shape::Shape;

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[
        (PrimitiveKind::Matmul { accum: false }, "Matmul"),
        (PrimitiveKind::Matmul { accum: true }, "MatmulAccum"),
    ],
    &OPERANDS,
    operand_dims,
    contraction_dtypes,
    plain_contraction,
    sum_tolerance,
    description,
    |m| format!("Matmul(1x2x3x4, f32 {m} row-major, f32 {m} row-major, f32 {m} row-major)"),
)
.rank(4, Some(&["b", "m", "k", "n"]))
.reductions(&[2])
.accumulating(Accumulation { accumulates, twin, init: super::FillValue::Zero })
.arithmetic(Arithmetic::MultiplyAdd)
.frontier_levels(FrontierLevels::ReachingOperands)
.memory_bound(vector_product);

const OPERANDS: [OperandRole; 3] =
    [operand("lhs", Direction::In), operand("rhs", Direction::In), operand("out", Direction::Out)];

fn operand_dims(_: PrimitiveKind, _: usize) -> Vec<Vec<OperandDim>> {
    dims::matmul()
}

fn accumulates(kind: PrimitiveKind) -> bool {
    matches!(kind, PrimitiveKind::Matmul { accum: true })
}

fn twin(kind: PrimitiveKind) -> Option<PrimitiveKind> {
    matches!(kind, PrimitiveKind::Matmul { accum: false }).then_some(PrimitiveKind::Matmul { accum: true })
}

fn description(kind: PrimitiveKind) -> &'static str {
    if accumulates(kind) { "an accumulating matmul (out += lhs * rhs)" } else { "a matmul" }
}

/// A vector-matrix or matrix-vector product (`m = 1` or `n = 1`) streams a whole operand once per
/// multiply-add: bound by memory traffic.
pub(super) fn vector_product(shape: &Shape) -> bool {
    matches!(shape.dims(), [_, 1, _, _] | [_, _, _, 1])
}
