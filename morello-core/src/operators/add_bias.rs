//! `AddBias`: an epilogue by itself, `out = act(out + bias)` with the bias along the last dim and
//! the activation the identity, ReLU or GELU (`AddBias`, `AddBiasRelu`, `AddBiasGelu`).
//!
//! ```text
//! ordinal:  2
//! forms:    AddBias, AddBiasRelu, AddBiasGelu (activation)
//! space:    any rank, [..., n]
//! operands: bias [n] in, out [..., n] in and out
//! dtypes:   f32, or i32 with the identity
//! computes: out[..., j] = act(out[..., j] + bias[j]), the sum rounded to f32 (wrapping in i32)
//! verified: as MatmulBias's epilogue, with no sum before it (i32 exactly)
//! ```
//!
//! A pass of `MatmulBias` (and, on i32, of `MatmulCorrected`) that only the search makes
//! (`actions/epilogue.rs`); its kernels are `VectorAddBias` (on a register block of the output)
//! and `ValueAddBias`.

use super::{
    Activation, Direction, OperandDim, OperandsMut, Operator, OperatorDefinition, PrimitiveKind, Tolerance,
    dims, epilogue, operand,
};
use crate::dtype::Dtype;
use crate::shape::Shape;

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[
        (PrimitiveKind::AddBias { activation: Activation::Identity }, "AddBias"),
        (PrimitiveKind::AddBias { activation: Activation::Relu }, "AddBiasRelu"),
        (PrimitiveKind::AddBias { activation: Activation::Gelu }, "AddBiasGelu"),
    ],
    &[operand("bias", Direction::In), operand("out", Direction::InOut)],
    operand_dims,
    dtypes,
    semantics,
    tolerance,
    description,
    |m| format!("AddBias(3x4, f32 {m} row-major, f32 {m} row-major)"),
)
.activation(activation)
.pass_of(Operator::MatmulBias);

fn operand_dims(_: PrimitiveKind, rank: usize) -> Vec<Vec<OperandDim>> {
    vec![vec![OperandDim::one(rank.saturating_sub(1))], dims::identity(rank)]
}

fn activation(kind: PrimitiveKind) -> Option<Activation> {
    match kind {
        PrimitiveKind::AddBias { activation } => Some(activation),
        _ => None,
    }
}

fn dtypes(kind: PrimitiveKind, d: &[Dtype]) -> Result<(), String> {
    let integer = d == [Dtype::I32, Dtype::I32] && activation(kind) == Some(Activation::Identity);
    if (d[1] != Dtype::F32 || d[0] != d[1]) && !integer {
        return Err(format!(
            "{} needs f32 operands (or i32 ones without an activation), found {} and {}",
            kind.name(),
            d[0],
            d[1]
        ));
    }
    Ok(())
}

fn semantics(kind: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let activation = activation(kind).unwrap_or(Activation::Identity);
    let bias_dim = shape.rank() - 1;
    for p in shape.points() {
        let bias = ops.read(0, &[p[bias_dim]]);
        let v = ops.read(1, &p);
        ops.write(1, &p, epilogue(v, bias, activation));
    }
}

fn tolerance(kind: PrimitiveKind) -> Tolerance {
    Tolerance::Epilogue {
        activation: activation(kind).unwrap_or(Activation::Identity),
        argument: PrimitiveKind::AddBias { activation: Activation::Identity },
    }
}

fn description(_: PrimitiveKind) -> &'static str {
    "an epilogue"
}
