//! `MultAdd`: `out += lhs * rhs` on single scalars.
//!
//! ```text
//! ordinal:  0
//! constants: fixed 1, per_unit 0
//! applies:  MatmulAccum or unpadded ConvAccum of volume 1; no operand in vector registers;
//!           inputs of one dtype, output the same or f32 for bf16 inputs
//! cost:     fixed + Σ move_cost(operand)
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
    matches!(kind, PrimitiveKind::Matmul { accum: true } | PrimitiveKind::Conv { accum: true, .. })
        && kind.conv_geometry().is_none_or(|g| !g.is_padded())
        && !levels.contains(&LevelKind::VectorRegisters)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    matches!(spec.kind, PrimitiveKind::Matmul { accum: true } | PrimitiveKind::Conv { accum: true, .. })
        && spec.kind.conv_geometry().is_none_or(|g| !g.is_padded())
        && spec.shape.volume() == 1
        && spec.operands.iter().all(|o| scalar_accessible(o, target))
}

/// `fixed` plus moving each operand (a scalar kernel's cost).
pub(super) fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    spec.operands.iter().fold(c.fixed, |acc, o| acc.saturating_add(move_cost(o, target)))
}

/// Calibration: f32 scalars in registers.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let Some(rf) = &s.rf else { return Vec::new() };
    vec![CalibrationCase::new(
        "",
        format!("MatmulAccum(1x1x1x1, f32 {rf} row-major, f32 {rf} row-major, f32 {rf} row-major, serial)"),
    )]
}

/// The specs it takes and near misses it must refuse (on `x86-avx2`).
#[test]
fn applies_to_its_specs_only() {
    let takes = [
        "MatmulAccum(1x1x1x1, f32 RF row-major, f32 RF row-major, f32 RF row-major)",
        "MatmulAccum(1x1x1x1, u32 L1 row-major, u32 GL row-major, u32 RF row-major)",
        "ConvAccum(1x1x1x1x1x1x1, f32 L1 row-major, f32 L1 row-major, f32 L1 row-major)",
    ];
    let refuses = [
        "Matmul(1x1x1x1, f32 RF row-major, f32 RF row-major, f32 RF row-major)",
        "MatmulAccum(1x1x2x1, f32 RF row-major, f32 RF row-major, f32 RF row-major)",
    ];
    super::tests::check_avx2(super::KernelKind::MultAdd, &takes, &refuses);
}
