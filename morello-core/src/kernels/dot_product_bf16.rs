//! `DotProductBf16`: `out += Σ_k lhs[k] * rhs[k]` with bf16 inputs and an f32 result, using the
//! AVX-512 BF16 instruction `vdpbf16ps` (32 bf16 pairs per instruction).
//!
//! ```text
//! ordinal:  8
//! constants: fixed 4, per_unit 1 per K / 32
//! isa:      Avx512f, Avx512bf16
//! applies:  MatmulAccum [1, 1, K, 1], lhs and rhs bf16, out f32; lhs and rhs in memory or a
//!           cache, each one contiguous run in k order (no odd-even strip); out not in vector
//!           registers; K a multiple of 32
//! memory:   ACCUMULATORS + 1 vector registers
//! cost:     fixed + per_unit * K / 32 + Σ move_cost(operand)
//! ```

use super::{CalibrationCase, CalibrationSites, KernelDefinition, KernelKind, sized};
use super::{in_index_order, in_memory, scalar_accessible, widest_vector_level};
use crate::cost::{Cost, move_cost};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, MemVec, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration).memory(memory);

/// bf16 pairs one `vdpbf16ps` consumes.
pub const STEP: u32 = 32;

/// Vector accumulators the loop keeps.
pub const ACCUMULATORS: u64 = 4;

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], target: &Target) -> bool {
    let memory = |l: LevelKind| matches!(l, LevelKind::Cache | LevelKind::Memory);
    kind == (PrimitiveKind::Matmul { accum: true })
        && KernelKind::DotProductBf16.required_isa().iter().all(|f| target.has_isa(*f))
        && dtypes == [Dtype::Bf16, Dtype::Bf16, Dtype::F32]
        && memory(levels[0])
        && memory(levels[1])
        && levels[2] != LevelKind::VectorRegisters
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    if spec.kind != (PrimitiveKind::Matmul { accum: true }) {
        return false;
    }
    let [1, 1, k, 1] = spec.shape.dims() else { return false };
    let (lhs, rhs, out) = (&spec.operands[0], &spec.operands[1], &spec.operands[2]);
    spec.kind == (PrimitiveKind::Matmul { accum: true })
        && KernelKind::DotProductBf16.required_isa().iter().all(|f| target.has_isa(*f))
        && lhs.dtype == Dtype::Bf16
        && rhs.dtype == Dtype::Bf16
        && out.dtype == Dtype::F32
        && k % STEP == 0
        && in_memory(lhs, target)
        && in_memory(rhs, target)
        && lhs.is_fully_contiguous()
        && rhs.is_fully_contiguous()
        && in_index_order(lhs)
        && in_index_order(rhs)
        && scalar_accessible(out, target)
}

fn memory(_spec: &LogicalSpec, target: &Target) -> MemVec {
    widest_vector_level(target).map_or(MemVec::ZERO, |(level, _)| MemVec::single(level, ACCUMULATORS + 1))
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    let steps = u64::from(spec.shape.dim(2) / STEP);
    spec.operands.iter().fold(c.fixed.saturating_add(c.per_unit.saturating_mul(steps)), |acc, o| {
        acc.saturating_add(move_cost(o, target))
    })
}

/// Calibration: K = 128, 512 and 2048 bf16 pairs in L1.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (Some(rf), l1) = (&s.rf, &s.l1) else { return Vec::new() };
    let operands = format!("bf16 {l1} row-major, bf16 {l1} row-major, f32 {rf} row-major");
    sized("k", [128, 512, 2048], |k| format!("MatmulAccum(1x1x{k}x1, {operands}, serial)"))
}
