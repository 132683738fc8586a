//! `BroadcastPairDot`: `out[v] += lhs[0] * rhs[0][v] + lhs[1] * rhs[1][v]`, two consecutive 8-bit
//! values of `lhs` (u8 or i8) widened to 16 bits and broadcast as one 32-bit pair, each lane's
//! dot product with the two i8 values of `rhs` beside it, also widened, accumulated exactly into
//! i32 vector registers (AVX2 `vpmovsxbw`, `vpmaddwd`, `vpaddd`).
//!
//! The exact int8 register-block step for machines without VNNI, for u8 and i8 activations alike.
//! `rhs` must hold the two values of `k` of each column side by side: for a matmul's `rhs`
//! `[b, k, n]` the layout `[0, 1, 2, 1 p(2)]` (a strip of 2 along `k` inside `n`), which a tile of
//! two rows of `k` starting at an even row reads as one run, column after column.
//!
//! ```text
//! ordinal:  16
//! constants: fixed 0, per_unit 3 per output vectors
//! isa:      Avx2
//! applies:  MatmulAccum [1, 1, 2, n], lhs u8 or i8, rhs i8, out i32; lhs and rhs in memory or a
//!           cache that moves to the output's vector registers (L1 on x86); lhs one contiguous
//!           run in k order; rhs one contiguous run holding element (k, n) at 2 n + k; out in
//!           vector registers of 8 i32 lanes, n its innermost physical dim, whole vectors
//! memory:   2 vector registers (the broadcast pair and one widened row)
//! cost:     fixed + per_unit * vectors + move_cost(lhs) + vector_move_cost(rhs)
//! ```
//!
//! Exact: both factors are widened to i16 (no saturating `vpmaddubsw`, whose i16 sum of two
//! u8 x i8 products can overflow), `vpmaddwd` adds two i16 x i16 products into an i32 (at most
//! 2 * 255 * 128 in magnitude), and a valid spec's reduction is short enough that no sum wraps
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

/// i32 lanes per output vector (256-bit vectors).
const LANES: u32 = 8;

/// Values of `k` one step sums per lane.
pub(crate) const PAIR: u32 = 2;

/// Whether the dtypes are an 8-bit `lhs`, an i8 `rhs` and an i32 output.
fn int8_dtypes(dtypes: &[Dtype]) -> bool {
    matches!(dtypes, [Dtype::U8 | Dtype::I8, Dtype::I8, Dtype::I32])
}

fn has_isa(target: &Target) -> bool {
    KernelKind::BroadcastPairDot.required_isa().iter().all(|f| target.has_isa(*f))
}

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], target: &Target) -> bool {
    let memory = |l: LevelKind| matches!(l, LevelKind::Cache | LevelKind::Memory);
    kind == (PrimitiveKind::Matmul { accum: true })
        && int8_dtypes(dtypes)
        && has_isa(target)
        && memory(levels[0])
        && memory(levels[1])
        && levels[2] == LevelKind::VectorRegisters
}

/// Whether some tile of a matmul could take this kernel: 8-bit inputs in memory and an i32
/// output that, if in vector registers, has whole 8-lane vectors along `n`.
fn could_apply_after_tiling(spec: &LogicalSpec, target: &Target) -> bool {
    let (PrimitiveKind::Matmul { .. }, [lhs, rhs, out]) = (spec.kind, spec.operands.as_slice()) else {
        return false;
    };
    int8_dtypes(&[lhs.dtype, rhs.dtype, out.dtype])
        && has_isa(target)
        && in_memory(lhs, target)
        && in_memory(rhs, target)
        && (!in_vector_registers(out, target) || (out.vector_size == Some(LANES) && vectors_along(out, 2)))
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    broadcast_quad_dot::strip_step_applies(
        spec,
        target,
        KernelKind::BroadcastPairDot,
        PAIR,
        LANES,
        int8_dtypes,
    )
}

fn memory(spec: &LogicalSpec, _target: &Target) -> MemVec {
    MemVec::single(spec.output().level, 2)
}

/// Calibration: 1, 2 and 4 output vectors of 8 i32 lanes, the u8 pair and the i8 rows in L1 in
/// the pair layout.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    broadcast_quad_dot::strip_calibration(s, PAIR, LANES, Dtype::U8)
}

/// The specs it takes and near misses it must refuse (on `x86-avx2`).
#[test]
fn applies_to_its_specs_only() {
    let out = "i32 VRF row-major v8";
    let takes = [
        format!("MatmulAccum(1x1x2x8, u8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
        format!("MatmulAccum(1x1x2x16, i8 L2 row-major, i8 L2 [0, 2, 1], {out})"),
    ];
    let refuses = [
        // rhs row-major: the two values of k of a column are not side by side.
        format!("MatmulAccum(1x1x2x8, u8 L1 row-major, i8 L1 row-major, {out})"),
        format!("MatmulAccum(1x1x4x8, u8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
        format!("MatmulAccum(1x1x2x8, u8 L1 row-major, i8 GL [0, 2, 1], {out})"),
        "MatmulAccum(1x1x2x4, u8 L1 row-major, i8 L1 [0, 2, 1], i32 VRF row-major v4)".to_string(),
    ];
    let takes: Vec<&str> = takes.iter().map(String::as_str).collect();
    let refuses: Vec<&str> = refuses.iter().map(String::as_str).collect();
    super::tests::check_avx2(KernelKind::BroadcastPairDot, &takes, &refuses);
}
