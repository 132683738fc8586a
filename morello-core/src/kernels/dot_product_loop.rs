//! `DotProductLoop`: `out += Σ_k lhs[k] * rhs[k]` in f32 with vector accumulators.
//!
//! The loop keeps [`ACCUMULATORS`] vector accumulators of the target's widest f32 vector, then
//! sums them horizontally.
//!
//! ```text
//! ordinal:  7
//! constants: fixed 4, per_unit 1 per K / f32 lanes
//! applies:  MatmulAccum [1, 1, K, 1] in f32; lhs and rhs in memory or a cache, each one
//!           contiguous run in k order (no odd-even strip); out not in vector registers; K a
//!           multiple of the vector's lanes
//! memory:   ACCUMULATORS + 1 vector registers
//! cost:     fixed + per_unit * K / lanes + Σ move_cost(operand)
//! ```

use super::{CalibrationCase, CalibrationSites, KernelDefinition, sized};
use super::{in_index_order, in_memory, scalar_accessible, widest_vector_level};
use crate::cost::{Cost, move_cost};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, MemVec, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration).memory(memory);

/// Vector accumulators the loop keeps.
pub const ACCUMULATORS: u64 = 4;

/// f32 lanes of the target's widest vector.
pub(crate) fn lanes(target: &Target) -> Option<u32> {
    widest_vector_level(target).map(|(_, bytes)| bytes / 4)
}

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], target: &Target) -> bool {
    lanes(target).is_some() && dtypes.iter().all(|d| *d == Dtype::F32) && could_stream(kind, levels)
}

/// Whether a dot-product loop could apply at these levels: an accumulating matmul with `lhs` and
/// `rhs` in memory or a cache and `out` not in vector registers.
pub(super) fn could_stream(kind: PrimitiveKind, levels: &[LevelKind]) -> bool {
    let memory = |l: LevelKind| matches!(l, LevelKind::Cache | LevelKind::Memory);
    kind == (PrimitiveKind::Matmul { accum: true })
        && memory(levels[0])
        && memory(levels[1])
        && levels[2] != LevelKind::VectorRegisters
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    if spec.kind != (PrimitiveKind::Matmul { accum: true }) {
        return false;
    }
    let [1, 1, k, 1] = spec.shape.dims() else { return false };
    let Some(lanes) = lanes(target) else { return false };
    spec.operands.iter().all(|o| o.dtype == Dtype::F32) && k % lanes == 0 && streams_in_k_order(spec, target)
}

/// Whether an accumulating matmul's operands have the form both dot-product loops read: `lhs` and
/// `rhs` in memory or a cache, each one contiguous run in k order (no odd-even strip), and `out`
/// reachable as a scalar.
pub(super) fn streams_in_k_order(spec: &LogicalSpec, target: &Target) -> bool {
    let (lhs, rhs, out) = (&spec.operands[0], &spec.operands[1], &spec.operands[2]);
    [lhs, rhs].into_iter().all(|o| in_memory(o, target) && o.is_fully_contiguous() && in_index_order(o))
        && scalar_accessible(out, target)
}

/// [`ACCUMULATORS`] + 1 registers of the widest vector level (the accumulators and one operand).
pub(super) fn memory(_spec: &LogicalSpec, target: &Target) -> MemVec {
    widest_vector_level(target).map_or(MemVec::ZERO, |(level, _)| MemVec::single(level, ACCUMULATORS + 1))
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    steps_cost(spec, target, c, u64::from(spec.shape.dim(2) / lanes(target).unwrap_or(1)))
}

/// A dot-product loop's cost: `fixed + per_unit * steps + Σ move_cost(operand)`.
pub(super) fn steps_cost(spec: &LogicalSpec, target: &Target, c: KernelCost, steps: u64) -> Cost {
    spec.operands.iter().fold(c.fixed.saturating_add(c.per_unit.saturating_mul(steps)), |acc, o| {
        acc.saturating_add(move_cost(o, target))
    })
}

/// Calibration: K = 4, 16 and 64 widest f32 vectors (at most 1024) in L1.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (Some(rf), l1) = (&s.rf, &s.l1) else { return Vec::new() };
    let operands = format!("f32 {l1} row-major, f32 {l1} row-major, f32 {rf} row-major");
    let sizes = [4, 16, 64].map(|v| v * s.lanes()).into_iter().filter(|&k| k <= 1024);
    sized("k", sizes, |k| format!("MatmulAccum(1x1x{k}x1, {operands}, serial)"))
}
