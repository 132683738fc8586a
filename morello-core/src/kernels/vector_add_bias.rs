//! `VectorAddBias`: `out[v] = act(out[v] + bias[v])` on whole f32 vector registers (or i32 ones
//! with the identity), the fused epilogue of a matmul whose output block is in registers.
//!
//! ```text
//! ordinal:  10
//! constants: fixed 1, per_unit 1 per output vectors (x8 for gelu)
//! applies:  AddBias (any activation on f32, the identity on i32); out f32 or i32 in vector
//!           registers, whole vectors whose lanes run
//!           along the last dim; bias in memory or a cache (it is loaded as vectors), one
//!           contiguous run
//! memory:   2 vector registers (the bias vector and a temporary; gelu's exp needs 2 more)
//! cost:     fixed + per_unit * vectors * (1, or 8 for gelu) + move_cost(bias)
//! ```
//!
//! Gelu is `x / (1 + exp(-2 y))` with `y = sqrt(2 / pi) (x + 0.044715 x^3)` and the polynomial
//! exp of the code generator (`docs/codegen.md`).

use super::{CalibrationCase, CalibrationSites, KernelDefinition, sized};
use super::{in_memory, in_vector_registers, output_vectors, vectors_along};
use crate::cost::{Cost, move_cost};
use crate::dtype::Dtype;
use crate::spec::{Activation, LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{Architecture, KernelCost, MemVec, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration)
        .after_tiling(could_apply_after_tiling)
        .memory(memory);

/// How many units of work one element costs for an activation (gelu's exp and divide).
pub(super) fn activation_weight(activation: Activation) -> u64 {
    match activation {
        Activation::Identity | Activation::Relu => 1,
        Activation::Gelu => 8,
    }
}

fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], _target: &Target) -> bool {
    matches!(kind, PrimitiveKind::AddBias { .. })
        && levels[1] == LevelKind::VectorRegisters
        && matches!(levels[0], LevelKind::Cache | LevelKind::Memory)
        && (dtypes.iter().all(|d| *d == Dtype::F32) || dtypes.iter().all(|d| *d == Dtype::I32))
}

fn could_apply_after_tiling(spec: &LogicalSpec, target: &Target) -> bool {
    let rank = spec.shape.rank();
    matches!(spec.kind, PrimitiveKind::AddBias { .. })
        && in_vector_registers(&spec.operands[1], target)
        && in_memory(&spec.operands[0], target)
        && vectors_along(&spec.operands[1], rank - 1)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let PrimitiveKind::AddBias { activation } = spec.kind else { return false };
    let (bias, out) = (&spec.operands[0], &spec.operands[1]);
    let integer = activation == Activation::Identity && target.architecture() != Some(Architecture::Aarch64);
    (out.dtype == Dtype::F32 || (integer && out.dtype == Dtype::I32))
        && bias.dtype == out.dtype
        && in_vector_registers(out, target)
        && in_memory(bias, target)
        && bias.is_fully_contiguous()
        && vectors_along(out, spec.shape.rank() - 1)
}

fn memory(spec: &LogicalSpec, _target: &Target) -> MemVec {
    let registers = if spec.kind.activation() == Some(Activation::Gelu) { 4 } else { 2 };
    MemVec::single(spec.output().level, registers)
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    let weight = spec.kind.activation().map_or(1, activation_weight);
    c.fixed
        .saturating_add(c.per_unit.saturating_mul(output_vectors(spec)).saturating_mul(weight))
        .saturating_add(move_cost(&spec.operands[0], target))
}

/// Calibration: relu on 1, 2 and 4 widest f32 vectors, the bias in L1.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (lanes, (l1, vrf)) = (s.lanes(), (&s.l1, &s.vrf));
    sized("v", [1, 2, 4], |v| {
        format!("AddBiasRelu(1x{}, f32 {l1} row-major, f32 {vrf} row-major v{lanes}, serial)", v * lanes)
    })
}

/// The specs it takes and near misses it must refuse (on `x86-avx2`).
#[test]
fn applies_to_its_specs_only() {
    let takes = [
        "AddBiasRelu(2x16, f32 L1 row-major, f32 VRF row-major v8)",
        "AddBiasGelu(1x8, f32 GL row-major, f32 VRF row-major v8)",
        "AddBias(2x8, i32 L1 row-major, i32 VRF row-major v8)",
    ];
    let refuses = [
        // The bias is loaded as vectors: never from scalar registers.
        "AddBiasRelu(1x8, f32 RF row-major, f32 VRF row-major v8)",
        "AddBiasRelu(1x8, f32 L1 row-major, f32 L1 row-major)",
        "AddBias(8x1, f32 L1 row-major, f32 VRF row-major v8)",
        "AddBias(1x8, i32 RF row-major, i32 VRF row-major v8)",
    ];
    super::tests::check_avx2(super::KernelKind::VectorAddBias, &takes, &refuses);
}
