//! `ValueShiftCorrection`: `out = -128 Σ_k rhs` for one column (the columns of `ShiftCorrection`
//! no vector covers).
//!
//! ```text
//! ordinal:  25
//! constants: fixed 4, per_unit 1 per k and the store (K + 1)
//! applies:  ShiftCorrection [1, K, 1]; rhs and out in memory or a cache
//! cost:     fixed + per_unit * (K + 1) + Σ move_cost(operand)
//! ```
//!
//! A loop over `k` (over strips of `k` with the strip unrolled, for a strip layout) adding the
//! values in an `int32_t`, then `-128` times the sum stored.

use super::dot_product_loop::steps_cost;
use super::{CalibrationCase, CalibrationSites, KernelDefinition, in_memory, sized};
use crate::cost::Cost;
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration);

fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], _target: &Target) -> bool {
    kind == PrimitiveKind::ShiftCorrection
        && dtypes == [Dtype::I8, Dtype::I32]
        && levels.iter().all(|l| matches!(l, LevelKind::Cache | LevelKind::Memory))
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    spec.kind == PrimitiveKind::ShiftCorrection
        && matches!(spec.shape.dims(), [1, _, 1])
        && spec.operands.iter().all(|o| in_memory(o, target))
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    let steps = u64::from(spec.shape.dim(1)) + 1;
    steps_cost(spec, target, c, steps)
}

/// Calibration: K = 16, 64 and 256 rows in L1 into one column.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let l1 = &s.l1;
    sized("k", [16, 64, 256], |k| {
        format!("ShiftCorrection(1x{k}x1, i8 {l1} row-major, i32 {l1} row-major, serial)")
    })
}

/// The specs it takes and near misses it must refuse (on `x86-avx2`).
#[test]
fn applies_to_its_specs_only() {
    let takes = [
        "ShiftCorrection(1x16x1, i8 L1 row-major, i32 L1 row-major)",
        "ShiftCorrection(1x3x1, i8 GL col-major, i32 GL row-major)",
    ];
    let refuses = [
        "ShiftCorrection(1x16x2, i8 L1 row-major, i32 L1 row-major)",
        "ShiftCorrection(2x16x1, i8 L1 row-major, i32 L1 row-major)",
    ];
    super::tests::check_avx2(super::KernelKind::ValueShiftCorrection, &takes, &refuses);
}
