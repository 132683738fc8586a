//! `VectorMax`: the maximum of one row, a loop of vector maxima over the row in memory.
//!
//! ```text
//! ordinal:  12
//! constants: fixed 4, per_unit 1 per row / f32 lanes
//! applies:  Max or MaxAccum [1, n], f32; the row not in registers, one contiguous run; the
//!           output one scalar not in vector registers
//! memory:   5 vector registers (four partial maxima and a load)
//! cost:     fixed + per_unit * ceil(n / lanes) + vector_move_cost(row) + move_cost(out)
//! ```

use super::{CalibrationCase, CalibrationSites, KernelDefinition, sized};
use super::{in_memory, scalar_accessible, widest_vector_level};
use crate::cost::{Cost, move_cost, vector_move_cost};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, MemVec, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration).memory(memory);

fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], _target: &Target) -> bool {
    matches!(kind, PrimitiveKind::Max { .. })
        && !levels.contains(&LevelKind::VectorRegisters)
        && matches!(levels[0], LevelKind::Cache | LevelKind::Memory)
        && dtypes.iter().all(|d| *d == Dtype::F32)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    matches!(spec.kind, PrimitiveKind::Max { .. })
        && spec.shape.dim(0) == 1
        && spec.operands.iter().all(|o| o.dtype == Dtype::F32)
        && in_memory(&spec.operands[0], target)
        && spec.operands[0].is_fully_contiguous()
        && scalar_accessible(&spec.operands[1], target)
}

/// Vector registers the loop uses, at the widest vector level.
pub(super) fn loop_memory(target: &Target, registers: u64) -> MemVec {
    widest_vector_level(target).map_or(MemVec::ZERO, |(level, _)| MemVec::single(level, registers))
}

/// Vectors in a row of `n` f32 at the target's widest width.
pub(super) fn row_vectors(target: &Target, n: u32) -> u64 {
    let lanes = widest_vector_level(target).map_or(1, |(_, bytes)| bytes / 4).max(1);
    u64::from(n.div_ceil(lanes))
}

fn memory(_spec: &LogicalSpec, target: &Target) -> MemVec {
    loop_memory(target, 5)
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    c.fixed
        .saturating_add(c.per_unit.saturating_mul(row_vectors(target, spec.shape.dim(1))))
        .saturating_add(vector_move_cost(&spec.operands[0], target))
        .saturating_add(move_cost(&spec.operands[1], target))
}

/// Calibration: rows of 64 and 256 f32 in L1.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (Some(rf), l1) = (&s.rf, &s.l1) else { return Vec::new() };
    sized("", [64, 256], |n| format!("Max(1x{n}, f32 {l1} row-major, f32 {rf} row-major, serial)"))
}

/// The specs it takes and near misses it must refuse (on `x86-avx2`).
#[test]
fn applies_to_its_specs_only() {
    let takes = [
        "Max(1x12, f32 GL row-major, f32 RF row-major)",
        "MaxAccum(1x8, f32 L1 row-major, f32 L1 row-major)",
    ];
    let refuses =
        ["Max(2x12, f32 GL row-major, f32 RF row-major)", "Max(1x8, f32 VRF row-major v8, f32 RF row-major)"];
    super::tests::check_avx2(super::KernelKind::VectorMax, &takes, &refuses);
}
