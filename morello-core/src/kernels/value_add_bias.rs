//! `ValueAddBias`: `out = act(out + bias)` on one f32 scalar, or one i32 with the identity (the
//! epilogue's remainders).
//!
//! ```text
//! ordinal:  11
//! constants: fixed 1, per_unit 0
//! applies:  AddBias of volume 1, f32 (or i32 with the identity), no operand in vector registers
//! cost:     fixed * (1, or 8 for gelu) + Σ move_cost(operand)
//! ```

use super::vector_add_bias::activation_weight;
use super::{CalibrationCase, CalibrationSites, KernelDefinition, scalar_accessible};
use crate::cost::{Cost, move_cost};
use crate::dtype::Dtype;
use crate::spec::{Activation, LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration);

fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], _target: &Target) -> bool {
    matches!(kind, PrimitiveKind::AddBias { .. })
        && !levels.contains(&LevelKind::VectorRegisters)
        && (dtypes.iter().all(|d| *d == Dtype::F32) || dtypes.iter().all(|d| *d == Dtype::I32))
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let PrimitiveKind::AddBias { activation } = spec.kind else { return false };
    let dtype = if activation == Activation::Identity { spec.operands[1].dtype } else { Dtype::F32 };
    spec.shape.volume() == 1
        && matches!(dtype, Dtype::F32 | Dtype::I32)
        && spec.operands.iter().all(|o| o.dtype == dtype && scalar_accessible(o, target))
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    let weight = spec.kind.activation().map_or(1, activation_weight);
    spec.operands
        .iter()
        .fold(c.fixed.saturating_mul(weight), |acc, o| acc.saturating_add(move_cost(o, target)))
}

/// Calibration: relu on one f32 in a register, the bias in L1.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let Some(rf) = &s.rf else { return Vec::new() };
    vec![CalibrationCase::new(
        "",
        format!("AddBiasRelu(1, f32 {} row-major, f32 {rf} row-major, serial)", s.l1),
    )]
}
