//! `BroadcastQuadDotAvx`: `out[v] += Σ_{j<4} lhs[j] * rhs[j][v]`, four consecutive u8 values of
//! `lhs` broadcast as one 32-bit word, each lane's dot product with the four i8 values of `rhs`
//! beside it, accumulated exactly into i32 vector registers of 8 lanes (AVX-VNNI `vpdpbusd` on
//! 256-bit vectors).
//!
//! `BroadcastQuadDot` on the 256-bit vectors of an AVX2 core that has AVX-VNNI but not AVX-512
//! (target `x86-avx2-vnni`): the same step of four values of `k` of a register block, `rhs` in
//! the same VNNI layout (`[0, 1, 2, 1 p(4)]`), but read from registers of 32 i8 lanes only
//! (register `j` the quads of output register `j`'s 8 columns): a block moves each step's `rhs`
//! into registers once for all its rows, as the f32 blocks do. A form that also loaded `rhs` from
//! L1 in each row's step was priced by the line (two 32-byte loads a line) and so chosen in blocks
//! of one row that reload it, which ran 1.4x slower at 256^3 than blocks of four rows sharing
//! registers. It replaces the widening `BroadcastPairDot` there: one instruction per output
//! vector and four values of `k` instead of three per two.
//!
//! ```text
//! ordinal:  21
//! constants: fixed 0, per_unit 2 per output vectors
//! isa:      Avx2, Avxvnni
//! applies:  MatmulAccum [1, 1, 4, n], lhs u8, rhs i8, out i32; lhs in memory or a cache, one
//!           contiguous run in k order; rhs in whole vector registers of 32 i8 lanes, element
//!           (k, n) at lane 4 n + k of them (the VNNI layout); out in vector registers of 8 i32
//!           lanes, n its innermost physical dim, whole vectors
//! memory:   1 vector register (the broadcast word)
//! cost:     fixed + per_unit * vectors + move_cost(lhs)
//! ```
//!
//! Exact for the same reason as `BroadcastQuadDot`: `vpdpbusd` adds four products of a u8 and an
//! i8 to each i32 lane without saturation, and a valid spec's reduction is short enough that no
//! sum wraps (`crate::dtype::exact_reduction_limit`).

use super::broadcast_quad_dot::{self, QuadForm, RhsSource};
use super::{CalibrationCase, CalibrationSites, KernelDefinition, KernelKind};
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
pub(crate) const LANES: u32 = 8;

const FORM: QuadForm =
    QuadForm { kernel: KernelKind::BroadcastQuadDotAvx, lanes: LANES, rhs: RhsSource::Registers };

fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], target: &Target) -> bool {
    FORM.could_apply(kind, levels, dtypes, target)
}

fn could_apply_after_tiling(spec: &LogicalSpec, target: &Target) -> bool {
    FORM.could_apply_after_tiling(spec, target)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    FORM.applies(spec, target)
}

fn memory(spec: &LogicalSpec, _target: &Target) -> MemVec {
    MemVec::single(spec.output().level, 1)
}

/// Calibration: 1, 2 and 4 output vectors of 8 i32 lanes, the u8 quad in L1 and the i8 rows in
/// the VNNI layout in 32-lane registers (`r1` ...).
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    FORM.calibration(s)
}

/// The specs it takes and near misses it must refuse (on `x86-avx2-vnni`; `x86-avx2` has no
/// AVX-VNNI, and `x86-avx512`'s 16-lane vectors take `BroadcastQuadDot`).
#[test]
fn applies_to_its_specs_only() {
    let out = "i32 VRF row-major v8";
    let takes = [
        // rhs in registers: register j holds the quads of output register j's 8 columns.
        format!("MatmulAccum(1x1x4x8, u8 L1 row-major, i8 VRF [0, 2, 1] v32, {out})"),
        format!("MatmulAccum(1x1x4x16, u8 GL row-major, i8 VRF [0, 2, 1] v32, {out})"),
    ];
    let refuses = [
        // rhs in a cache: a block moves it into registers once for all its rows.
        format!("MatmulAccum(1x1x4x8, u8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
        format!("MatmulAccum(1x1x4x16, u8 GL row-major, i8 L2 [0, 2, 1], {out})"),
        // rhs row-major: the four values of k of a column are not side by side.
        format!("MatmulAccum(1x1x4x8, u8 L1 row-major, i8 L1 row-major, {out})"),
        // An i8 lhs: vpdpbusd reads it as unsigned.
        format!("MatmulAccum(1x1x4x8, i8 L1 row-major, i8 VRF [0, 2, 1] v32, {out})"),
        format!("MatmulAccum(1x1x8x8, u8 L1 row-major, i8 VRF [0, 2, 1] v32, {out})"),
        // rhs in registers of 16 lanes (half an output register's quads), or in k-major order.
        format!("MatmulAccum(1x1x4x16, u8 L1 row-major, i8 VRF [0, 2, 1] v16, {out})"),
        format!("MatmulAccum(1x1x4x16, u8 L1 row-major, i8 VRF row-major v32, {out})"),
        format!("Matmul(1x1x4x8, u8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
    ];
    let takes: Vec<&str> = takes.iter().map(String::as_str).collect();
    let refuses: Vec<&str> = refuses.iter().map(String::as_str).collect();
    super::tests::check_on("x86-avx2-vnni", KernelKind::BroadcastQuadDotAvx, &takes, &refuses);
    for target in ["x86-avx2", "x86-avx512"] {
        let target = Target::builtin(target, 1).unwrap();
        let spec = LogicalSpec::parse(takes[0], &target).unwrap().canonicalize(&target).unwrap();
        assert!(!KernelKind::BroadcastQuadDotAvx.applies(&spec, &target), "no AVX-VNNI on {}", target.name());
    }
}
