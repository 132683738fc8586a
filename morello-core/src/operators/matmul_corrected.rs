//! `MatmulCorrected`: the u8 x i8 matmul of a shifted s8s8s32 matmul with its column correction
//! added, `out = lhs * rhs + correction`, the correction per column.
//!
//! ```text
//! ordinal:  13
//! forms:    MatmulCorrected
//! space:    [b, m, k, n]
//! operands: lhs [b, m, k] in, rhs [b, k, n] in, correction [n] in, out [b, m, n] out
//! reduces:  k
//! dtypes:   lhs u8, rhs i8, correction i32, out i32
//! computes: out[b, m, n] = correction[n] + Σ_k lhs[b, m, k] rhs[b, k, n], modulo 2^32
//! verified: exactly
//! parts:    Matmul(lhs, rhs, out) then AddBias(correction, out)
//! ```
//!
//! The search makes it (`morello-search/src/actions/shift.rs`) with `lhs` the shifted `lhs` of an
//! s8s8s32 matmul and `correction = -128 Σ_k rhs` (`ShiftCorrection`), and reaches kernels only
//! through its parts (`actions/epilogue.rs`, offered only once the output is in registers): after
//! tiling the output down to a register block and moving it into vector registers, the correction
//! is added to the registers before they are stored (`VectorAddBias` on i32), so the correction
//! costs a read of the block's columns instead of a pass over the whole output. No sum wraps there: the products' sum lies within the
//! u8s8s32 bound (`K <= 65793`, checked like any u8 x i8 reduction) and the corrected sum is the
//! s8s8s32 result. Any other correction wraps modulo `2^32`, as the reference does.

use super::{
    Activation, Arithmetic, Direction, FrontierLevels, KernelReach, OperandRole, OperandsMut,
    OperatorDefinition, Parts, PrimitiveKind, Tolerance, contraction, operand,
};
use crate::dtype::Dtype;
use crate::shape::Shape;
use crate::target::{LevelId, Target};

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[(PrimitiveKind::MatmulCorrected, "MatmulCorrected")],
    &OPERANDS,
    super::matmul_bias::operand_dims,
    dtypes,
    semantics,
    tolerance,
    description,
    |m| {
        format!(
            "MatmulCorrected(1x2x8x16, u8 {m} row-major, i8 {m} row-major, i32 {m} row-major, i32 {m} row-major)"
        )
    },
)
.rank(4, Some(&["b", "m", "k", "n"]))
.reductions(&[2])
.arithmetic(Arithmetic::MultiplyAdd)
.frontier_levels(FrontierLevels::ReachingOperands)
.parts(parts, KernelReach::Parts)
.unmoved(&[2])
.memory_bound(super::matmul::vector_product);

const OPERANDS: [OperandRole; 4] = [
    operand("lhs", Direction::In),
    operand("rhs", Direction::In),
    operand("correction", Direction::In),
    operand("out", Direction::Out),
];

fn dtypes(kind: PrimitiveKind, d: &[Dtype]) -> Result<(), String> {
    if d != [Dtype::U8, Dtype::I8, Dtype::I32, Dtype::I32] {
        return Err(format!(
            "{} multiplies a u8 lhs by an i8 rhs into an i32 output with an i32 correction, found {}, {}, {} \
             and {}",
            kind.name(),
            d[0],
            d[1],
            d[2],
            d[3]
        ));
    }
    Ok(())
}

fn semantics(kind: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    contraction(kind, shape, ops, Some((2, Activation::Identity)));
}

fn tolerance(_: PrimitiveKind) -> Tolerance {
    Tolerance::Exact
}

/// The matmul into the output, then the correction added to it (the stages of the block that
/// splits it, `super::EPILOGUE_STAGES`): a `MatmulBias`'s parts without an activation.
fn parts(_: PrimitiveKind, l: &[LevelId], d: &[Dtype], target: &Target) -> Parts {
    super::matmul_bias::parts(PrimitiveKind::MatmulBias { activation: Activation::Identity }, l, d, target)
}

fn description(_: PrimitiveKind) -> &'static str {
    "a shifted int8 matmul with its column correction"
}
