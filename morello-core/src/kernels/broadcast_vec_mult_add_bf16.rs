//! `BroadcastVecMultAddBf16`: `out[v] += f32(s) * f32(x[v])`, one bf16 scalar broadcast times a
//! row of bf16 elements read from memory and widened to f32, accumulated into f32 vector registers.
//!
//! The bf16 counterpart of `BroadcastVecMultAdd` for a row-major `rhs` (where `DotProductBf16`,
//! which needs `rhs` contiguous along `k`, does not apply): a vector-matrix product keeps a row of
//! the output in registers and streams `rhs` row by row.
//!
//! ```text
//! ordinal:  9
//! constants: fixed 1, per_unit 3 per output vectors
//! applies:  MatmulAccum [1, 1, 1, n], lhs and rhs bf16, out f32; lhs a scalar not in vector
//!           registers; rhs in memory or a cache that moves to the output's vector registers
//!           (vector loads come from there: L1 on x86), one contiguous run along n in index order;
//!           out in vector registers of 8 or 16 f32 lanes (32 or 64 bytes), n its innermost
//!           physical dim, whole vectors
//! memory:   2 vector registers (the broadcast scalar and one widened row)
//! cost:     fixed + per_unit * vectors + move_cost(lhs) + vector_move_cost(rhs)
//! ```

use super::{CalibrationCase, CalibrationSites, KernelDefinition, sized};
use super::{
    in_index_order, in_memory, in_vector_registers, output_vectors, scalar_accessible, vectors_along,
    whole_vectors,
};
use crate::cost::{Cost, move_cost, vector_move_cost};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, MemVec, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration)
        .after_tiling(could_apply_after_tiling)
        .memory(memory);

/// f32 lanes per output vector the kernel's code handles (256- and 512-bit vectors).
pub const LANES: [u32; 2] = [8, 16];

const DTYPES: [Dtype; 3] = [Dtype::Bf16, Dtype::Bf16, Dtype::F32];

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], _target: &Target) -> bool {
    let memory = |l: LevelKind| matches!(l, LevelKind::Cache | LevelKind::Memory);
    kind == (PrimitiveKind::Matmul { accum: true })
        && dtypes == DTYPES
        && levels[0] != LevelKind::VectorRegisters
        && memory(levels[1])
        && levels[2] == LevelKind::VectorRegisters
}

/// Whether some tile of a matmul could take this kernel: bf16 inputs outside vector registers
/// and an f32 output that, if in vector registers, has whole vectors of a supported width
/// along `n`.
fn could_apply_after_tiling(spec: &LogicalSpec, target: &Target) -> bool {
    let (PrimitiveKind::Matmul { .. }, [lhs, rhs, out]) = (spec.kind, spec.operands.as_slice()) else {
        return false;
    };
    [lhs.dtype, rhs.dtype, out.dtype] == DTYPES
        && scalar_accessible(lhs, target)
        && in_memory(rhs, target)
        && (!in_vector_registers(out, target)
            || (out.vector_size.is_some_and(|v| LANES.contains(&v)) && vectors_along(out, 2)))
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    if spec.kind != (PrimitiveKind::Matmul { accum: true }) {
        return false;
    }
    let [1, 1, 1, n] = spec.shape.dims() else { return false };
    let (lhs, rhs, out) = (&spec.operands[0], &spec.operands[1], &spec.operands[2]);
    let Some(lanes) = out.vector_size else { return false };
    [lhs.dtype, rhs.dtype, out.dtype] == DTYPES
        && LANES.contains(&lanes)
        && *n % lanes == 0
        && scalar_accessible(lhs, target)
        && in_memory(rhs, target)
        && target.level(rhs.level).moves_to.contains(&out.level)
        && rhs.is_fully_contiguous()
        && in_index_order(rhs)
        && in_vector_registers(out, target)
        && vectors_along(out, 2)
        && whole_vectors(out, lanes)
}

fn memory(spec: &LogicalSpec, _target: &Target) -> MemVec {
    MemVec::single(spec.output().level, 2)
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    let inputs =
        move_cost(&spec.operands[0], target).saturating_add(vector_move_cost(&spec.operands[1], target));
    c.fixed.saturating_add(c.per_unit.saturating_mul(output_vectors(spec))).saturating_add(inputs)
}

/// Calibration: 1, 2 and 4 f32 vectors (at most 64 bytes), the bf16 scalar and rows in L1.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (lanes, (l1, vrf)) = (s.widest().min(64) / 4, (&s.l1, &s.vrf));
    let matmul = format!("bf16 {l1} row-major, bf16 {l1} row-major, f32 {vrf} row-major v{lanes}, serial");
    sized("v", [1, 2, 4], |v| format!("MatmulAccum(1x1x1x{}, {matmul})", v * lanes))
}
