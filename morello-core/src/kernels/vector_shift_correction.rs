//! `VectorShiftCorrection`: `out = -128 Σ_k rhs` for one vector of columns (the correction of a
//! shifted s8s8s32 matmul, `ShiftCorrection`).
//!
//! ```text
//! ordinal:  24
//! constants: fixed 4, per_unit 1 per k step and the store (K / 4 + 1 for quads, K + 1 for rows)
//! isa:      Avx2
//! applies:  ShiftCorrection [1, K, lanes], lanes the i32 lanes of the widest vectors; rhs and
//!           out in memory or a cache; rhs either rows (each k's lanes consecutive) or VNNI quads
//!           [K/4][n][4] (each four k's lanes consecutive, K a multiple of 4, with vpdpbusd:
//!           AVX-512 VNNI for 16 lanes, AVX-VNNI for 8); out's lanes consecutive
//! memory:   2 vector registers
//! cost:     fixed + per_unit * (steps + 1) + Σ move_cost(operand)
//! ```
//!
//! Rows: each step sign-extends `lanes` bytes of `rhs` to i32 (`vpmovsxbd`) and adds them; the sum
//! is multiplied by -128 (`0 - (sum << 7)`). Quads: each step is one `vpdpbusd` of a splat of
//! u8 128 with four values of `k` per lane, which sums `128 rhs` directly (at most
//! `128 * 128 * 131071 < 2^31`), then negated. Then one store.

use super::{CalibrationCase, CalibrationSites, KernelDefinition, in_index_order, in_memory, sized};
use super::{dot_product_loop::steps_cost, widest_vector_level};
use crate::cost::Cost;
use crate::dtype::Dtype;
use crate::isa::IsaFeature;
use crate::layout::PhysDim;
use crate::spec::{LogicalSpec, PrimitiveKind, TensorSpec};
use crate::target::LevelKind;
use crate::target::{KernelCost, MemVec, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration).memory(memory);

/// How `rhs` `[1, K, n]` holds its values of `k` for a run of columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnRun {
    /// Each value of `k` holds the columns side by side (row-major rows).
    Rows,
    /// Each `strip` values of `k` hold the columns side by side, the strip inside each column
    /// (`[K/strip][n][strip]`, the VNNI quads or the pairs).
    Strips(u32),
}

/// How `rhs` of a `ShiftCorrection` holds its columns: rows when its innermost physical dim is `n`
/// and contiguous, strips when it is a strip of `k` inside a contiguous `n`.
pub fn column_run(rhs: &TensorSpec) -> Option<ColumnRun> {
    let dims = rhs.layout.dims();
    if !in_index_order(rhs) {
        return None;
    }
    match dims {
        [.., last] if last.logical == 2 && last.kind == PhysDim::Dynamic && rhs.contiguous_dims >= 1 => {
            Some(ColumnRun::Rows)
        }
        [.., inner, last] if inner.logical == 2 && last.logical == 1 && rhs.contiguous_dims >= 2 => {
            match last.kind {
                PhysDim::Packed(s) if rhs.shape.dim(1) % s == 0 => Some(ColumnRun::Strips(s)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The i32 lanes of the target's widest vectors.
pub fn lanes(target: &Target) -> Option<u32> {
    widest_vector_level(target).map(|(_, bytes)| bytes / 4)
}

/// The `vpdpbusd` the quads of `lanes` i32 need, if the kernel has one for that width.
pub fn quad_isa(lanes: u32) -> Option<IsaFeature> {
    match lanes {
        16 => Some(IsaFeature::Avx512vnni),
        8 => Some(IsaFeature::Avxvnni),
        _ => None,
    }
}

/// The sign extension rows of `lanes` i32 need.
pub fn row_isa(lanes: u32) -> Option<IsaFeature> {
    match lanes {
        16 => Some(IsaFeature::Avx512f),
        8 => Some(IsaFeature::Avx2),
        _ => None,
    }
}

fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], target: &Target) -> bool {
    kind == PrimitiveKind::ShiftCorrection
        && lanes(target).is_some()
        && dtypes == [Dtype::I8, Dtype::I32]
        && levels.iter().all(|l| matches!(l, LevelKind::Cache | LevelKind::Memory))
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    if spec.kind != PrimitiveKind::ShiftCorrection {
        return false;
    }
    let (Some(lanes), [1, _, n]) = (lanes(target), spec.shape.dims()) else { return false };
    let (rhs, out) = (&spec.operands[0], &spec.operands[1]);
    let isa = match column_run(rhs) {
        Some(ColumnRun::Rows) => row_isa(lanes),
        Some(ColumnRun::Strips(4)) => quad_isa(lanes),
        _ => None,
    };
    *n == lanes
        && isa.is_some_and(|f| target.has_isa(f))
        && in_memory(rhs, target)
        && in_memory(out, target)
        && out.layout.dims().last().is_some_and(|d| d.logical == 0 && d.kind == PhysDim::Dynamic)
        && out.contiguous_dims >= 1
}

/// The steps along `k`: `K / 4` for quads, `K` for rows.
fn steps(spec: &LogicalSpec) -> u64 {
    let k = u64::from(spec.shape.dim(1));
    match column_run(&spec.operands[0]) {
        Some(ColumnRun::Strips(s)) => k / u64::from(s),
        _ => k,
    }
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    steps_cost(spec, target, c, steps(spec).saturating_add(1))
}

/// Two registers of the widest vector level (the sum and a loaded or constant vector).
fn memory(_spec: &LogicalSpec, target: &Target) -> MemVec {
    widest_vector_level(target).map_or(MemVec::ZERO, |(level, _)| MemVec::single(level, 2))
}

/// Calibration: K = 16, 64 and 256 rows in L1 into one vector of columns.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (l1, lanes) = (&s.l1, s.lanes());
    sized("k", [16, 64, 256], |k| {
        format!("ShiftCorrection(1x{k}x{lanes}, i8 {l1} row-major, i32 {l1} row-major, serial)")
    })
}

/// The specs it takes and near misses it must refuse (on `x86-avx2` and `x86-avx512`).
#[test]
fn applies_to_its_specs_only() {
    let takes = [
        "ShiftCorrection(1x16x8, i8 L1 row-major, i32 L1 row-major)",
        "ShiftCorrection(1x3x8, i8 GL row-major, i32 GL row-major)",
    ];
    let refuses = [
        "ShiftCorrection(1x16x16, i8 L1 row-major, i32 L1 row-major)",
        "ShiftCorrection(2x16x8, i8 L1 row-major, i32 L1 row-major)",
        "ShiftCorrection(1x16x8, i8 L1 col-major, i32 L1 row-major)",
        // Quads need vpdpbusd, which x86-avx2 lacks.
        "ShiftCorrection(1x16x8, i8 L1 [0, 1, 2, 1 p(4)], i32 L1 row-major)",
    ];
    super::tests::check_avx2(super::KernelKind::VectorShiftCorrection, &takes, &refuses);
    let takes = [
        "ShiftCorrection(1x16x16, i8 L1 row-major, i32 L1 row-major)",
        "ShiftCorrection(1x16x16, i8 L1 [0, 1, 2, 1 p(4)], i32 L1 row-major)",
    ];
    let refuses = [
        "ShiftCorrection(1x18x16, i8 L1 [0, 1, 2, 1 p(2)], i32 L1 row-major)",
        "ShiftCorrection(1x16x16, i8 L1 col-major, i32 L1 row-major)",
    ];
    super::tests::check_on("x86-avx512", super::KernelKind::VectorShiftCorrection, &takes, &refuses);
}
