//! `ValueAssign`: copies one scalar, widening bf16 to f32 if the dtypes differ.
//!
//! ```text
//! ordinal:  5
//! constants: fixed 1, per_unit 0
//! applies:  Move of volume 1, neither side in vector registers
//! cost:     fixed + move_cost(source) + move_cost(destination)
//! ```

use super::scalar_accessible;
use super::{CalibrationCase, CalibrationSites, KernelDefinition};
use crate::cost::{Cost, move_cost};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration);

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], _dtypes: &[Dtype], _target: &Target) -> bool {
    kind == PrimitiveKind::Move && !levels.contains(&LevelKind::VectorRegisters)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    spec.kind == PrimitiveKind::Move
        && spec.shape.volume() == 1
        && spec.operands.iter().all(|o| scalar_accessible(o, target))
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    spec.operands.iter().fold(c.fixed, |acc, o| acc.saturating_add(move_cost(o, target)))
}

/// Calibration: one f32 loaded from L1 into a register, and stored back.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (Some(rf), l1) = (&s.rf, &s.l1) else { return Vec::new() };
    [("load", l1, rf), ("store", rf, l1)]
        .into_iter()
        .map(|(label, from, to)| {
            CalibrationCase::new(label, format!("Move(1, f32 {from} row-major, f32 {to} row-major, serial)"))
        })
        .collect()
}
