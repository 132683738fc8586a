//! `BroadcastVecMultAdd`: `out[v] += s * x[v]`, one scalar broadcast times whole vectors.
//!
//! The building block of register-tiled matmul microkernels: with the output tile in vector
//! registers, each step broadcasts one element of `lhs` and multiplies a row of `rhs`.
//!
//! ```text
//! ordinal:  1
//! constants: fixed 0, per_unit 2 per output vectors
//! applies:  MatmulAccum [1, 1, 1, n]: lhs scalar, rhs [1, 1, n] and out [1, 1, n] in vector registers
//!        or MatmulAccum [1, m, 1, 1]: rhs scalar, lhs [1, m, 1] and out [1, m, 1] in vector registers;
//!           the scalar not in vector registers; the vector operand and the output with one layout
//!           and one vector size, each made of whole vectors; one dtype: f32, u32 or i32
//! memory:   1 vector register (the broadcast scalar); 2 for integers (and the product: there is
//!           no integer multiply-add)
//! cost:     fixed + per_unit * vectors + move_cost(scalar), with the constants of its dtype
//!           (built in: 0, 2 for f32; 1, 4 for u32 and i32, a multiply at half the FMA's rate
//!           and an add)
//! ```
//!
//! The f32 `fixed` is 0 because the broadcast's issue is counted where it can delay anything: on
//! a register block's load side (`load_issue` per broadcast,
//! [`register_step_stall`](crate::cost::register_block::register_step_stall)), which the core
//! overlaps with the FMAs. A `fixed` here would count each broadcast twice and price blocks of few
//! vectors a row (6 x 2) above blocks that run as fast (`docs/cost-model.md`, "Register blocks").

use super::{CalibrationCase, CalibrationSites, KernelDefinition};
use super::{in_vector_registers, output_vectors, scalar_accessible, vectors_along, whole_vectors};
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

/// The scalar operand and the vector operand, if the spec has this kernel's form.
pub(crate) fn roles(spec: &LogicalSpec) -> Option<(&TensorSpec, &TensorSpec)> {
    if spec.kind != (PrimitiveKind::Matmul { accum: true }) {
        return None;
    }
    match spec.shape.dims() {
        [1, 1, 1, n] if *n > 1 => Some((&spec.operands[0], &spec.operands[1])),
        [1, m, 1, 1] if *m > 1 => Some((&spec.operands[1], &spec.operands[0])),
        _ => None,
    }
}

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], _target: &Target) -> bool {
    let vector = |i: usize| levels[i] == LevelKind::VectorRegisters;
    kind == (PrimitiveKind::Matmul { accum: true })
        && vector(2)
        && vector(0) != vector(1)
        && matches!(dtypes[2], Dtype::F32 | Dtype::U32 | Dtype::I32)
        && dtypes.iter().all(|d| *d == dtypes[2])
}

/// Whether some tile of a matmul could take this kernel, given which operands are already in
/// vector registers: column form `[1, m, 1, 1]` (lhs and out vectors along `m`) or row form
/// `[1, 1, 1, n]` (rhs and out vectors along `n`), never both inputs in registers.
fn could_apply_after_tiling(spec: &LogicalSpec, target: &Target) -> bool {
    if !matches!(spec.kind, PrimitiveKind::Matmul { .. }) {
        return false;
    }
    let vector = |i: usize| in_vector_registers(&spec.operands[i], target);
    let (lhs, rhs, out) = (&spec.operands[0], &spec.operands[1], &spec.operands[2]);
    // Operand dims: lhs [b, m, k], rhs [b, k, n], out [b, m, n].
    let same_lanes = |i: usize| !vector(i) || !vector(2) || spec.operands[i].vector_size == out.vector_size;
    let column = !vector(1)
        && same_lanes(0)
        && (!vector(0) || vectors_along(lhs, 1))
        && (!vector(2) || vectors_along(out, 1));
    let row = !vector(0)
        && same_lanes(1)
        && (!vector(1) || vectors_along(rhs, 2))
        && (!vector(2) || vectors_along(out, 2));
    column || row
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let Some((scalar, vector)) = roles(spec) else { return false };
    let out = spec.output();
    let dtype_ok = matches!(out.dtype, Dtype::F32 | Dtype::U32 | Dtype::I32)
        && scalar.dtype == out.dtype
        && vector.dtype == out.dtype;
    let Some(lanes) = out.vector_size else { return false };
    dtype_ok
        && scalar_accessible(scalar, target)
        && in_vector_registers(vector, target)
        && in_vector_registers(out, target)
        && vector.vector_size == out.vector_size
        && vector.layout == out.layout
        && whole_vectors(vector, lanes)
        && whole_vectors(out, lanes)
}

fn memory(spec: &LogicalSpec, _target: &Target) -> MemVec {
    let registers = if spec.output().dtype == Dtype::F32 { 1 } else { 2 };
    MemVec::single(spec.output().level, registers)
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    let scalar_cost = roles(spec).map_or(0, |(scalar, _)| move_cost(scalar, target));
    c.fixed.saturating_add(c.per_unit.saturating_mul(output_vectors(spec))).saturating_add(scalar_cost)
}

/// Calibration: 1, 2, 4, ... widest f32 vectors, the scalar in L1, while half the registers (the
/// accumulators) and the row fit; the same in each 32-bit integer type the target gives constants
/// of its own (`u32.v1`, ...: `vpmulld` then `vpaddd`).
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (lanes, (l1, vrf)) = (s.lanes(), (&s.l1, &s.vrf));
    let accumulators = (s.vector_registers / 2).max(1);
    let mut cases = Vec::new();
    let dtypes = std::iter::once(Dtype::F32)
        .chain(s.own_multiply_adds.iter().copied().filter(|d| matches!(d, Dtype::U32 | Dtype::I32)));
    for dtype in dtypes {
        let tag = if dtype == Dtype::F32 { String::new() } else { format!("{dtype}.") };
        let mut v = 1;
        while v <= accumulators && accumulators + v < s.vector_registers {
            let n = v * u64::from(lanes);
            cases.push(CalibrationCase::new(
                format!("{tag}v{v}"),
                format!("MatmulAccum(1x1x1x{n}, {dtype} {l1} row-major, {dtype} {vrf} row-major v{lanes}, {dtype} {vrf} row-major v{lanes}, serial)"),
            ));
            v *= 2;
        }
    }
    cases
}
