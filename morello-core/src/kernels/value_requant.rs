//! `ValueRequant`: `out = requant(acc (+ bias))` on one i32 scalar (the requantizing epilogue's
//! remainders).
//!
//! ```text
//! ordinal:  23
//! constants: fixed 4, per_unit 0
//! applies:  Requant, BiasRequant, BiasReluRequant of volume 1, no operand in vector registers
//! cost:     fixed + Σ move_cost(operand)
//! ```
//!
//! The same operations as `VectorRequant` on one value, in C (a wrapping i32 add, `(float)`, `*`,
//! two comparisons and `nearbyintf` in the default rounding mode), so the two agree bit for bit.

use super::{CalibrationCase, CalibrationSites, KernelDefinition, scalar_accessible};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::Target;

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, super::mult_add::cost, calibration);

fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], _target: &Target) -> bool {
    matches!(kind, PrimitiveKind::Requant { .. })
        && !levels.contains(&LevelKind::VectorRegisters)
        && dtypes[0] == Dtype::I32
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    matches!(spec.kind, PrimitiveKind::Requant { .. })
        && spec.shape.volume() == 1
        && spec.operands.iter().all(|o| scalar_accessible(o, target))
}

/// Calibration: one i32 in a register into a u8 in L1, the scale and zero point in L1.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let Some(rf) = &s.rf else { return Vec::new() };
    let l1 = &s.l1;
    vec![CalibrationCase::new(
        "",
        format!(
            "Requant(1, i32 {rf} row-major, f32 {l1} row-major, u8 {l1} row-major, u8 {l1} row-major, serial)"
        ),
    )]
}

/// The specs it takes and near misses it must refuse (on `x86-avx2`).
#[test]
fn applies_to_its_specs_only() {
    let takes = [
        "Requant(1x1, i32 RF row-major, f32 L1 row-major, u8 L1 row-major, u8 GL row-major)",
        "Requant(1, i32 L1 row-major, f32 RF row-major, i8 RF row-major, i8 RF row-major)",
        "BiasReluRequant(1x1, i32 RF row-major, i32 L1 row-major, f32 L1 row-major, u8 L1 row-major, \
         u8 GL row-major)",
    ];
    let refuses = [
        "Requant(1x2, i32 RF row-major, f32 L1 row-major, u8 L1 row-major, u8 GL row-major)",
        "Requant(1x8, i32 VRF row-major v8, f32 L1 row-major, u8 L1 row-major, u8 L1 row-major)",
        "BiasRequant(1x2, i32 RF row-major, i32 L1 row-major, f32 L1 row-major, u8 L1 row-major, \
         u8 GL row-major)",
    ];
    super::tests::check_avx2(super::KernelKind::ValueRequant, &takes, &refuses);
}
