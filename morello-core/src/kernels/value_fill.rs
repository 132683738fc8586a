//! `ValueFill`: sets one scalar to a fill value (0, negative infinity or the minimum).
//!
//! ```text
//! ordinal:  6
//! constants: fixed 1, per_unit 0
//! applies:  Fill of volume 1, not in vector registers
//! cost:     fixed + move_cost(out)
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
    matches!(kind, PrimitiveKind::Fill { .. }) && levels[0] != LevelKind::VectorRegisters
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    matches!(spec.kind, PrimitiveKind::Fill { .. })
        && spec.shape.volume() == 1
        && scalar_accessible(spec.output(), target)
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    c.fixed.saturating_add(move_cost(spec.output(), target))
}

/// Calibration: one f32 register set to zero.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let Some(rf) = &s.rf else { return Vec::new() };
    vec![CalibrationCase::new("", format!("FillZero(1, f32 {rf} row-major, serial)"))]
}
