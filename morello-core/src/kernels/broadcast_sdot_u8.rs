//! `BroadcastSdotU8`: `out[v] += Σ_{j<4} lhs[j] * rhs[j][v]` for u8 `lhs` and i8 `rhs`, exactly,
//! with the signed dot product of AArch64's dot-product extension (`sdot`, `vdotq_s32`) on `lhs`
//! shifted into i8, corrected by the column sums of `rhs`.
//!
//! The u8s8s32 register-block step of AArch64 cores without the mixed-sign `usdot` (i8mm is not
//! in Neoverse N1, whose `arm-neon` target this serves). Each step covers four values of `k` of
//! the output tile in registers of four i32 lanes, `rhs` in the `[K/4][N][4]` layout as for
//! `BroadcastSdot`:
//!
//! ```text
//! Σ_j x_j w_j = Σ_j (x_j - 128) w_j - Σ_j (-128) w_j
//!             = sdot(x ^ 0x80, w) - sdot(splat(-128), w)
//! ```
//!
//! ```text
//! ordinal:  19
//! constants: fixed 0, per_unit 6 per output vectors
//! isa:      Neon, Dotprod
//! applies:  MatmulAccum [1, 1, 4, n], lhs u8, rhs i8, out i32; lhs and rhs in memory or a cache
//!           that moves to the output's vector registers (L1); lhs one contiguous run in k order;
//!           rhs one contiguous run holding element (k, n) at 4 n + k; out in vector registers of
//!           4 i32 lanes, n its innermost physical dim, whole vectors
//! memory:   3 vector registers (the shifted broadcast word, the -128 splat, the correction)
//! cost:     fixed + per_unit * vectors + move_cost(lhs) + vector_move_cost(rhs)
//! ```
//!
//! Exact for every u8 and i8: `x ^ 0x80` read as i8 is `x - 128` (in -128..=127); each `sdot`
//! adds four products of two i8 (at most 128 * 128 in magnitude each) without saturation, and
//! the two `sdot`s and the subtraction are i32 additions, so the lane holds the exact sum modulo
//! 2^32, which is the sum itself because a valid spec's reduction is short enough that it fits
//! (`crate::dtype::exact_reduction_limit`). Three instructions per output vector against one for
//! `sdot` alone: `per_unit` 6 against 2.

use super::{CalibrationCase, CalibrationSites, KernelDefinition, KernelKind};
use super::{broadcast_quad_dot, broadcast_sdot};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{MemVec, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, broadcast_quad_dot::cost, calibration)
        .after_tiling(could_apply_after_tiling)
        .memory(memory);

const DTYPES: [Dtype; 3] = [Dtype::U8, Dtype::I8, Dtype::I32];

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], target: &Target) -> bool {
    broadcast_sdot::quad_could_apply(KernelKind::BroadcastSdotU8, DTYPES, kind, levels, dtypes, target)
}

/// Whether some tile of a matmul could take this kernel: u8 and i8 inputs in memory and an i32
/// output that, if in vector registers, has whole 4-lane vectors along `n`.
fn could_apply_after_tiling(spec: &LogicalSpec, target: &Target) -> bool {
    broadcast_sdot::quad_could_apply_after_tiling(KernelKind::BroadcastSdotU8, DTYPES, spec, target)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let (quad, lanes) = (broadcast_sdot::QUAD, broadcast_sdot::LANES);
    broadcast_quad_dot::strip_step_applies(spec, target, KernelKind::BroadcastSdotU8, quad, lanes, |d| {
        d == DTYPES
    })
}

fn memory(spec: &LogicalSpec, _target: &Target) -> MemVec {
    MemVec::single(spec.output().level, 3)
}

/// Calibration: 1, 2 and 4 output vectors of 4 i32 lanes, the u8 quad and the i8 rows in L1 in
/// the `[K/4][N][4]` layout.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    broadcast_quad_dot::strip_calibration(s, broadcast_sdot::QUAD, broadcast_sdot::LANES, Dtype::U8)
}

/// The specs it takes and near misses it must refuse (on `arm-neon`, and not on a NEON target
/// without the dot-product extension).
#[test]
fn applies_to_its_specs_only() {
    let out = "i32 VRF row-major v4";
    let takes = [
        format!("MatmulAccum(1x1x4x4, u8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
        format!("MatmulAccum(1x1x4x8, u8 GL row-major, i8 L2 [0, 2, 1], {out})"),
    ];
    let refuses = [
        format!("MatmulAccum(1x1x4x4, u8 L1 row-major, i8 L1 row-major, {out})"),
        format!("MatmulAccum(1x1x4x4, i8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
        format!("MatmulAccum(1x1x4x4, u8 L1 row-major, i8 GL [0, 2, 1], {out})"),
        format!("MatmulAccum(1x1x8x4, u8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
    ];
    let takes: Vec<&str> = takes.iter().map(String::as_str).collect();
    let refuses: Vec<&str> = refuses.iter().map(String::as_str).collect();
    super::tests::check_on("arm-neon", KernelKind::BroadcastSdotU8, &takes, &refuses);
}
