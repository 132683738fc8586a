//! `MatmulBias`: a matmul with an epilogue, `out = act(lhs * rhs + bias)`, the bias per column
//! and the activation the identity, ReLU or GELU (`MatmulBias`, `MatmulBiasRelu`,
//! `MatmulBiasGelu`).
//!
//! ```text
//! ordinal:  1
//! forms:    MatmulBias, MatmulBiasRelu, MatmulBiasGelu (activation)
//! space:    [b, m, k, n]
//! operands: lhs [b, m, k] in, rhs [b, k, n] in, bias [n] in, out [b, m, n] out
//! reduces:  k
//! dtypes:   lhs and rhs alike, out the same or wider (bf16 into f32); out and bias f32
//! computes: out[b, m, n] = act(Σ_k lhs[b, m, k] rhs[b, k, n] + bias[n]), the sum rounded to f32
//! verified: act's slope bound times 2 (k + 2) u M (M with |bias|), plus 16 u |out| for GELU
//! parts:    Matmul(lhs, rhs, out) then AddBias(bias, out)
//! ```
//!
//! The search reaches kernels only through its parts: `actions/epilogue.rs` splits it into the
//! matmul and its epilogue pass (fused when the output is in registers), whose own kernels run.

use super::{
    AbstractSpec, Activation, Arithmetic, Direction, FrontierLevels, KernelReach, OperandDim, OperandRole,
    OperandsMut, OperatorDefinition, Parts, PrimitiveKind, Tolerance, contraction, dims, operand,
};
use crate::dtype::Dtype;
use crate::shape::Shape;
use crate::target::{LevelId, Target};

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[
        (PrimitiveKind::MatmulBias { activation: Activation::Identity }, "MatmulBias"),
        (PrimitiveKind::MatmulBias { activation: Activation::Relu }, "MatmulBiasRelu"),
        (PrimitiveKind::MatmulBias { activation: Activation::Gelu }, "MatmulBiasGelu"),
    ],
    &OPERANDS,
    operand_dims,
    dtypes,
    semantics,
    tolerance,
    description,
    |m| {
        format!(
            "MatmulBias(1x2x3x4, f32 {m} row-major, f32 {m} row-major, f32 {m} row-major, f32 {m} row-major)"
        )
    },
)
.rank(4, Some(&["b", "m", "k", "n"]))
.reductions(&[2])
.activation(activation)
.arithmetic(Arithmetic::MultiplyAdd)
.frontier_levels(FrontierLevels::ReachingOperands)
.parts(parts, KernelReach::Parts)
.memory_bound(vector_product);

const OPERANDS: [OperandRole; 4] = [
    operand("lhs", Direction::In),
    operand("rhs", Direction::In),
    operand("bias", Direction::In),
    operand("out", Direction::Out),
];

/// The matmul's operands' dims with the bias's, `[n]`, third (`MatmulCorrected`'s too).
pub(super) fn operand_dims(_: PrimitiveKind, _: usize) -> Vec<Vec<OperandDim>> {
    let mut dims = dims::matmul();
    dims.insert(2, vec![OperandDim::one(3)]);
    dims
}

fn activation(kind: PrimitiveKind) -> Option<Activation> {
    match kind {
        PrimitiveKind::MatmulBias { activation } => Some(activation),
        _ => None,
    }
}

fn dtypes(kind: PrimitiveKind, d: &[Dtype]) -> Result<(), String> {
    if d[0] != d[1] || (d[3] != d[0] && !d[0].widens_to(d[3])) {
        return Err(format!(
            "{} inputs must have one dtype and the output the same (or f32 for bf16), found {}, {} and {}",
            kind.name(),
            d[0],
            d[1],
            d[3]
        ));
    }
    if d[3] != Dtype::F32 || d[2] != d[3] {
        return Err(format!(
            "{} needs an f32 output and an f32 bias, found {} and {}",
            kind.name(),
            d[3],
            d[2]
        ));
    }
    Ok(())
}

fn semantics(kind: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let activation = activation(kind).unwrap_or(Activation::Identity);
    contraction(kind, shape, ops, Some((2, activation)));
}

fn tolerance(kind: PrimitiveKind) -> Tolerance {
    Tolerance::Epilogue {
        activation: activation(kind).unwrap_or(Activation::Identity),
        argument: PrimitiveKind::MatmulBias { activation: Activation::Identity },
    }
}

/// The operands of each part, as indices of this operator's: the matmul on `lhs`, `rhs` and `out`,
/// then the epilogue on `bias` and `out` (the stages of the block that splits it).
pub const EPILOGUE_STAGES: [&[usize]; 2] = [&[0, 1, 3], &[2, 3]];

/// The matmul into the output, then the epilogue on it (`MatmulCorrected`'s parts too, the
/// identity's).
pub(super) fn parts(kind: PrimitiveKind, l: &[LevelId], d: &[Dtype], _: &Target) -> Parts {
    let activation = activation(kind).unwrap_or(Activation::Identity);
    let part = |kind, operands: &[usize]| AbstractSpec {
        kind,
        levels: operands.iter().map(|&i| l[i]).collect(),
        dtypes: operands.iter().map(|&i| d[i]).collect(),
    };
    let [matmul, epilogue] = EPILOGUE_STAGES;
    Parts::Also(vec![vec![
        part(PrimitiveKind::Matmul { accum: false }, matmul),
        part(PrimitiveKind::AddBias { activation }, epilogue),
    ]])
}

fn description(_: PrimitiveKind) -> &'static str {
    "a matmul with an epilogue"
}

/// As a matmul's: `m = 1` or `n = 1` is bound by memory.
fn vector_product(shape: &Shape) -> bool {
    matches!(shape.dims(), [_, 1, _, _] | [_, _, _, 1])
}
