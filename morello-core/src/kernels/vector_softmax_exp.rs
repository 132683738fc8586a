//! `VectorSoftmaxExp`: softmax's middle pass on one row: `y = exp(x - max)` and `sum = Σ y`,
//! vectors of the polynomial exp (`docs/codegen.md`) stored and summed in one loop.
//!
//! ```text
//! ordinal:  13
//! constants: fixed 8, per_unit 8 per row / f32 lanes
//! applies:  SoftmaxExp or SoftmaxExpAccum [1, n], f32, on a target with fused multiply-adds (x86
//!           `fma`, or NEON); x and y not in registers, each one contiguous run; max and sum
//!           scalars not in vector registers
//! memory:   6 vector registers (the broadcast max, two partial sums, exp temporaries)
//! cost:     fixed + per_unit * ceil(n / lanes) + vector_move_cost(x) + vector_move_cost(y)
//!           + move_cost(max) + move_cost(sum)
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

fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], target: &Target) -> bool {
    matches!(kind, PrimitiveKind::SoftmaxExp { .. })
        && target.has_fused_multiply_add()
        && !levels.contains(&LevelKind::VectorRegisters)
        && matches!(levels[0], LevelKind::Cache | LevelKind::Memory)
        && matches!(levels[2], LevelKind::Cache | LevelKind::Memory)
        && dtypes.iter().all(|d| *d == Dtype::F32)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let o = &spec.operands;
    matches!(spec.kind, PrimitiveKind::SoftmaxExp { .. })
        && target.has_fused_multiply_add()
        && spec.shape.dim(0) == 1
        && o.iter().all(|o| o.dtype == Dtype::F32)
        && [&o[0], &o[2]].iter().all(|row| in_memory(row, target) && row.is_fully_contiguous())
        && [&o[1], &o[3]].iter().all(|scalar| scalar_accessible(scalar, target))
}

fn memory(_spec: &LogicalSpec, target: &Target) -> MemVec {
    loop_memory(target, 6)
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    let o = &spec.operands;
    c.fixed
        .saturating_add(c.per_unit.saturating_mul(row_vectors(target, spec.shape.dim(1))))
        .saturating_add(vector_move_cost(&o[0], target))
        .saturating_add(vector_move_cost(&o[2], target))
        .saturating_add(move_cost(&o[1], target))
        .saturating_add(move_cost(&o[3], target))
}

/// Calibration: rows of 64 and 256 f32 in L1.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (Some(rf), l1) = (&s.rf, &s.l1) else { return Vec::new() };
    let operands = format!("f32 {l1} row-major, f32 {rf} row-major, f32 {l1} row-major, f32 {rf} row-major");
    sized("", [64, 256], |n| format!("SoftmaxExp(1x{n}, {operands}, serial)"))
}

/// The specs it takes and near misses it must refuse (on `x86-avx2`).
#[test]
fn applies_to_its_specs_only() {
    let takes = ["SoftmaxExp(1x12, f32 GL row-major, f32 RF row-major, f32 GL row-major, f32 RF row-major)"];
    let refuses = [
        "SoftmaxExp(2x12, f32 GL row-major, f32 RF row-major, f32 GL row-major, f32 RF row-major)",
        "SoftmaxExp(1x12, f32 RF row-major, f32 RF row-major, f32 GL row-major, f32 RF row-major)",
    ];
    super::tests::check_avx2(super::KernelKind::VectorSoftmaxExp, &takes, &refuses);
}
