//! `BroadcastSdot`: `out[v] += Σ_{j<4} lhs[j] * rhs[j][v]`, four consecutive i8 values of `lhs`
//! broadcast as one 32-bit word, each lane's dot product with the four i8 values of `rhs` beside
//! it, accumulated exactly into i32 vector registers (AArch64's dot-product extension, `sdot`,
//! `vdotq_s32`).
//!
//! The s8s8s32 register-block step of AArch64: with the output tile in 128-bit registers of four
//! i32 lanes, each step covers four values of `k`. `rhs` holds those four values of each column
//! side by side, the layout `[K/4][N][4]` of x86's VNNI kernel (`[0, 1, 2, 1 p(4)]`), so one
//! 16-byte load feeds four lanes.
//!
//! ```text
//! ordinal:  18
//! constants: fixed 0, per_unit 2 per output vectors
//! isa:      Neon, Dotprod
//! applies:  MatmulAccum [1, 1, 4, n], lhs i8, rhs i8, out i32; lhs and rhs in memory or a cache
//!           that moves to the output's vector registers (L1); lhs one contiguous run in k order;
//!           rhs one contiguous run holding element (k, n) at 4 n + k; out in vector registers of
//!           4 i32 lanes, n its innermost physical dim, whole vectors
//! memory:   1 vector register (the broadcast word)
//! cost:     fixed + per_unit * vectors + move_cost(lhs) + vector_move_cost(rhs)
//! ```
//!
//! Exact: `sdot` adds to each i32 lane four products of two i8 (each at most 128 * 128 in
//! magnitude) without saturation, and a valid spec's reduction is short enough that no sum wraps
//! (`crate::dtype::exact_reduction_limit`).

use super::{CalibrationCase, CalibrationSites, KernelDefinition, KernelKind, broadcast_quad_dot};
use super::{in_memory, in_vector_registers, vectors_along};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{MemVec, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, broadcast_quad_dot::cost, calibration)
        .after_tiling(could_apply_after_tiling)
        .memory(memory);

/// i32 lanes per output vector (128-bit vectors).
pub(super) const LANES: u32 = 4;

/// Values of `k` one `sdot` sums per lane.
pub(super) const QUAD: u32 = 4;

const DTYPES: [Dtype; 3] = [Dtype::I8, Dtype::I8, Dtype::I32];

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], target: &Target) -> bool {
    quad_could_apply(KernelKind::BroadcastSdot, DTYPES, kind, levels, dtypes, target)
}

/// [`could_apply`] of an AArch64 int8 step taking `wanted` dtypes.
pub(super) fn quad_could_apply(
    kernel: KernelKind,
    wanted: [Dtype; 3],
    kind: PrimitiveKind,
    levels: &[LevelKind],
    dtypes: &[Dtype],
    target: &Target,
) -> bool {
    let memory = |l: LevelKind| matches!(l, LevelKind::Cache | LevelKind::Memory);
    kind == (PrimitiveKind::Matmul { accum: true })
        && dtypes == wanted
        && kernel.required_isa().iter().all(|f| target.has_isa(*f))
        && memory(levels[0])
        && memory(levels[1])
        && levels[2] == LevelKind::VectorRegisters
}

/// Whether some tile of a matmul could take this kernel: i8 inputs in memory and an i32 output
/// that, if in vector registers, has whole 4-lane vectors along `n`.
fn could_apply_after_tiling(spec: &LogicalSpec, target: &Target) -> bool {
    quad_could_apply_after_tiling(KernelKind::BroadcastSdot, DTYPES, spec, target)
}

/// [`could_apply_after_tiling`] of an AArch64 int8 step taking `wanted` dtypes.
pub(super) fn quad_could_apply_after_tiling(
    kernel: KernelKind,
    wanted: [Dtype; 3],
    spec: &LogicalSpec,
    target: &Target,
) -> bool {
    let (PrimitiveKind::Matmul { .. }, [lhs, rhs, out]) = (spec.kind, spec.operands.as_slice()) else {
        return false;
    };
    [lhs.dtype, rhs.dtype, out.dtype] == wanted
        && kernel.required_isa().iter().all(|f| target.has_isa(*f))
        && in_memory(lhs, target)
        && in_memory(rhs, target)
        && (!in_vector_registers(out, target) || (out.vector_size == Some(LANES) && vectors_along(out, 2)))
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    broadcast_quad_dot::strip_step_applies(spec, target, KernelKind::BroadcastSdot, QUAD, LANES, |d| {
        d == DTYPES
    })
}

fn memory(spec: &LogicalSpec, _target: &Target) -> MemVec {
    MemVec::single(spec.output().level, 1)
}

/// Calibration: 1, 2 and 4 output vectors of 4 i32 lanes, the i8 quad and the i8 rows in L1 in
/// the `[K/4][N][4]` layout.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    broadcast_quad_dot::strip_calibration(s, QUAD, LANES, Dtype::I8)
}

/// The specs it takes and near misses it must refuse (on `arm-neon`).
#[test]
fn applies_to_its_specs_only() {
    let out = "i32 VRF row-major v4";
    let takes = [
        format!("MatmulAccum(1x1x4x4, i8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
        format!("MatmulAccum(1x1x4x16, i8 GL row-major, i8 L2 [0, 2, 1], {out})"),
    ];
    let refuses = [
        // rhs row-major: the four values of k of a column are not side by side.
        format!("MatmulAccum(1x1x4x4, i8 L1 row-major, i8 L1 row-major, {out})"),
        // u8 activations are BroadcastSdotU8's.
        format!("MatmulAccum(1x1x4x4, u8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
        // rhs in main memory, which does not move to vector registers.
        format!("MatmulAccum(1x1x4x4, i8 L1 row-major, i8 GL [0, 2, 1], {out})"),
        format!("MatmulAccum(1x1x2x4, i8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
        format!("Matmul(1x1x4x4, i8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
    ];
    let takes: Vec<&str> = takes.iter().map(String::as_str).collect();
    let refuses: Vec<&str> = refuses.iter().map(String::as_str).collect();
    super::tests::check_on("arm-neon", KernelKind::BroadcastSdot, &takes, &refuses);
    super::tests::check_on("arm-neon", KernelKind::BroadcastSdotU8, &[], &takes);
}
