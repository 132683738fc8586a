//! `VectorScale`: softmax's last pass on one row, `y = y * (1 / sum)` in vectors.
//!
//! ```text
//! ordinal:  14
//! constants: fixed 4, per_unit 1 per row / f32 lanes
//! applies:  SoftmaxScale [1, n], f32; y not in registers, one contiguous run; sum a scalar not
//!           in vector registers
//! memory:   2 vector registers
//! cost:     fixed + per_unit * ceil(n / lanes) + vector_move_cost(y) + move_cost(sum)
//! ```

use super::vector_max::{loop_memory, row_vectors};
use super::{CalibrationCase, CalibrationSites, KernelDefinition, sized};
use super::{in_memory, scalar_accessible};
use crate::cost::{Cost, move_cost, vector_move_cost};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, MemVec, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration).memory(memory);

fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], _target: &Target) -> bool {
    kind == PrimitiveKind::SoftmaxScale
        && !levels.contains(&LevelKind::VectorRegisters)
        && matches!(levels[1], LevelKind::Cache | LevelKind::Memory)
        && dtypes.iter().all(|d| *d == Dtype::F32)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let o = &spec.operands;
    spec.kind == PrimitiveKind::SoftmaxScale
        && spec.shape.dim(0) == 1
        && o.iter().all(|o| o.dtype == Dtype::F32)
        && in_memory(&o[1], target)
        && o[1].is_fully_contiguous()
        && scalar_accessible(&o[0], target)
}

fn memory(_spec: &LogicalSpec, target: &Target) -> MemVec {
    loop_memory(target, 2)
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    c.fixed
        .saturating_add(c.per_unit.saturating_mul(row_vectors(target, spec.shape.dim(1))))
        .saturating_add(vector_move_cost(&spec.operands[1], target))
        .saturating_add(move_cost(&spec.operands[0], target))
}

/// Calibration: rows of 64 and 256 f32 in L1.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (Some(rf), l1) = (&s.rf, &s.l1) else { return Vec::new() };
    sized("", [64, 256], |n| format!("SoftmaxScale(1x{n}, f32 {rf} row-major, f32 {l1} row-major, serial)"))
}

/// The specs it takes and near misses it must refuse (on `x86-avx2`).
#[test]
fn applies_to_its_specs_only() {
    let takes = ["SoftmaxScale(1x12, f32 RF row-major, f32 GL row-major)"];
    let refuses = [
        "SoftmaxScale(1x12, f32 RF row-major, f32 RF row-major)",
        "SoftmaxScale(3x4, f32 L1 row-major, f32 L1 row-major)",
    ];
    super::tests::check_avx2(super::KernelKind::VectorScale, &takes, &refuses);
}
