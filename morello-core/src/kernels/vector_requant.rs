//! `VectorRequant`: `out[v] = requant(acc[v] (+ bias))` from whole i32 vector registers into 8-bit
//! values in memory, the fused requantizing epilogue of an int8 matmul whose accumulator block is
//! in registers.
//!
//! ```text
//! ordinal:  22
//! constants: fixed 1, per_unit 2 per accumulator vectors
//! isa:      Avx2
//! applies:  Requant, BiasRequant, BiasReluRequant; acc i32 in vector registers of 8 or 16 lanes,
//!           whole vectors whose lanes run along the last dim; bias, scale, zero_point and out in
//!           memory or a cache, the last dim innermost and contiguous in each (bias, scale and
//!           zero_point one contiguous run)
//! memory:   3 vector registers (the scaled values, the zero points, a bound)
//! cost:     fixed + per_unit * vectors + Σ move_cost(operand) over the operands after acc
//! ```
//!
//! Per register: add the biases (i32, wrapping), convert to f32, multiply by the scales, clamp to
//! the output's range less the zero points (the lower bound 0 with ReLU), convert to i32 rounding
//! to nearest even (the default rounding mode), add the zero points and narrow (exactly: the
//! values are in range). 16 lanes need AVX-512F, 8 lanes AVX2.

use super::{CalibrationCase, CalibrationSites, KernelDefinition, sized};
use super::{in_memory, in_vector_registers, output_vectors, vectors_along};
use crate::cost::{Cost, move_cost};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind, TensorSpec};
use crate::target::LevelKind;
use crate::target::{KernelCost, MemVec, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration)
        .after_tiling(could_apply_after_tiling)
        .memory(memory);

fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], _target: &Target) -> bool {
    matches!(kind, PrimitiveKind::Requant { .. })
        && levels[0] == LevelKind::VectorRegisters
        && levels[1..].iter().all(|l| matches!(l, LevelKind::Cache | LevelKind::Memory))
        && dtypes[0] == Dtype::I32
}

fn could_apply_after_tiling(spec: &LogicalSpec, target: &Target) -> bool {
    matches!(spec.kind, PrimitiveKind::Requant { .. })
        && in_vector_registers(&spec.operands[0], target)
        && spec.operands[1..].iter().all(|o| in_memory(o, target))
        && vectors_along(&spec.operands[0], spec.shape.rank() - 1)
}

/// Whether the last dim of `t` is innermost and contiguous, so a register's lanes may be a run.
fn last_dim_innermost(t: &TensorSpec) -> bool {
    let last = t.shape.rank() - 1;
    t.layout.dims().last().map(|d| usize::from(d.logical)) == Some(last) && t.contiguous_dims >= 1
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let PrimitiveKind::Requant { .. } = spec.kind else { return false };
    // acc, then the per-column operands (bias, scale, zero_point), then out.
    let [acc, columns @ .., out] = &spec.operands[..] else { return false };
    acc.dtype == Dtype::I32
        && matches!(acc.vector_size, Some(8 | 16))
        && in_vector_registers(acc, target)
        && vectors_along(acc, spec.shape.rank() - 1)
        && columns.iter().chain([out]).all(|o| in_memory(o, target))
        && columns.iter().all(TensorSpec::is_fully_contiguous)
        && last_dim_innermost(out)
}

fn memory(spec: &LogicalSpec, _target: &Target) -> MemVec {
    MemVec::single(spec.operands[0].level, 3)
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    let vectors = spec.operands[0].shape.volume() / u64::from(spec.operands[0].vector_size.unwrap_or(1));
    debug_assert_eq!(output_vectors(spec), spec.operands[spec.operands.len() - 1].shape.volume());
    spec.operands[1..].iter().fold(c.fixed.saturating_add(c.per_unit.saturating_mul(vectors)), |acc, o| {
        acc.saturating_add(move_cost(o, target))
    })
}

/// Calibration: u8 outputs of 1, 2 and 4 widest i32 vectors, the scales and zero points in L1;
/// then the same with a bias and ReLU (which adds a load and an add per vector).
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (lanes, (l1, vrf)) = (s.lanes(), (&s.l1, &s.vrf));
    let mut cases = sized("v", [1, 2, 4], |v| {
        format!(
            "Requant(1x{}, i32 {vrf} row-major v{lanes}, f32 {l1} row-major, u8 {l1} row-major, u8 {l1} row-major, \
             serial)",
            v * lanes
        )
    });
    cases.extend(sized("bias-relu-v", [1, 4], |v| {
        format!(
            "BiasReluRequant(1x{}, i32 {vrf} row-major v{lanes}, i32 {l1} row-major, f32 {l1} row-major, \
             i8 {l1} row-major, i8 {l1} row-major, serial)",
            v * lanes
        )
    }));
    cases
}

/// The specs it takes and near misses it must refuse (on `x86-avx2`).
#[test]
fn applies_to_its_specs_only() {
    let takes = [
        "Requant(2x16, i32 VRF row-major v8, f32 L1 row-major, u8 L1 row-major, u8 GL row-major)",
        "Requant(1x8, i32 VRF row-major v8, f32 GL row-major, i8 GL row-major, i8 L1 row-major)",
        "BiasRequant(2x16, i32 VRF row-major v8, i32 L1 row-major, f32 L1 row-major, u8 L1 row-major, \
         u8 GL row-major)",
        "BiasReluRequant(1x8, i32 VRF row-major v8, i32 GL row-major, f32 GL row-major, i8 GL row-major, \
         i8 L1 row-major)",
    ];
    let refuses = [
        // The scales are loaded as vectors: never from scalar registers.
        "Requant(1x8, i32 VRF row-major v8, f32 RF row-major, u8 L1 row-major, u8 L1 row-major)",
        // The output is stored from the registers: not into registers.
        "Requant(1x8, i32 VRF row-major v8, f32 L1 row-major, u8 L1 row-major, u8 RF row-major)",
        "Requant(1x8, i32 L1 row-major, f32 L1 row-major, u8 L1 row-major, u8 L1 row-major)",
        "Requant(8x1, i32 VRF row-major v8, f32 L1 row-major, u8 L1 row-major, u8 L1 row-major)",
        // The lanes run down a column of the output.
        "Requant(8x8, i32 VRF row-major v8, f32 L1 row-major, u8 L1 row-major, u8 L1 col-major)",
        // The biases are loaded as vectors too.
        "BiasRequant(1x8, i32 VRF row-major v8, i32 RF row-major, f32 L1 row-major, u8 L1 row-major, \
         u8 L1 row-major)",
    ];
    super::tests::check_avx2(super::KernelKind::VectorRequant, &takes, &refuses);
}
