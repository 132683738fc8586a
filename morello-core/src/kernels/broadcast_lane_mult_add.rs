//! `BroadcastLaneMultAdd`: `out[v] += Σ_l lhs[l] * rhs[l][v]`, each lane of one `lhs` vector
//! broadcast by the multiply-add itself (NEON's by-element FMA, `vfmaq_laneq_f32`).
//!
//! A register block's step on AArch64 without broadcast loads: one vector load brings `lanes`
//! consecutive elements of a row of `lhs` (its `k` run, contiguous in a row-major `lhs`), and each
//! lane multiplies one row of `rhs` into the output row, so four steps of `k` cost one load of `lhs`
//! instead of four broadcasts.
//!
//! ```text
//! ordinal:  17
//! constants: fixed 0, per_unit 2 per vector multiply-adds
//! isa:      Neon
//! applies:  MatmulAccum [1, 1, k, n], f32, every operand in vector registers: lhs [1, 1, k] one
//!           vector along k (k its vector size), rhs [1, k, n] and out [1, 1, n] with one vector
//!           size, whole vectors along n
//! cost:     fixed + per_unit * k * output vectors (no broadcast: the multiply-add reads the lane)
//! ```

use super::{CalibrationCase, CalibrationSites, KernelDefinition};
use super::{in_vector_registers, output_vectors, vectors_along, whole_vectors};
use crate::cost::Cost;
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration).after_tiling(could_apply_after_tiling);

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], _target: &Target) -> bool {
    kind == (PrimitiveKind::Matmul { accum: true })
        && levels.iter().all(|l| *l == LevelKind::VectorRegisters)
        && dtypes.iter().all(|d| *d == Dtype::F32)
}

/// Whether some tile of a matmul could take this kernel, given which operands are already in
/// vector registers: `lhs` vectors along `k`, `rhs` and the output along `n`.
fn could_apply_after_tiling(spec: &LogicalSpec, target: &Target) -> bool {
    let o = &spec.operands;
    matches!(spec.kind, PrimitiveKind::Matmul { .. })
        && o.iter().all(|t| t.dtype == Dtype::F32)
        && [(0, 2), (1, 2), (2, 2)]
            .iter()
            .all(|&(i, dim)| !in_vector_registers(&o[i], target) || vectors_along(&o[i], dim))
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    if spec.kind != (PrimitiveKind::Matmul { accum: true }) {
        return false;
    }
    let &[1, 1, k, n] = spec.shape.dims() else { return false };
    let (lhs, rhs, out) = (&spec.operands[0], &spec.operands[1], &spec.operands[2]);
    let (Some(lhs_lanes), Some(lanes)) = (lhs.vector_size, out.vector_size) else { return false };
    spec.operands.iter().all(|t| t.dtype == Dtype::F32 && in_vector_registers(t, target))
        && k == lhs_lanes
        && vectors_along(lhs, 2)
        && n >= lanes
        && rhs.vector_size == out.vector_size
        && vectors_along(rhs, 2)
        && vectors_along(out, 2)
        && whole_vectors(rhs, lanes)
        && whole_vectors(out, lanes)
}

fn cost(spec: &LogicalSpec, _target: &Target, c: KernelCost) -> Cost {
    let steps = u64::from(spec.shape.dim(2));
    c.fixed.saturating_add(c.per_unit.saturating_mul(steps.saturating_mul(output_vectors(spec))))
}

/// Calibration: 1, 2 and 4 output vectors of the widest f32 vectors, `k` one vector, while the
/// `rhs` rows, the output and the `lhs` vector fit in the registers.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (lanes, vrf) = (s.lanes(), &s.vrf);
    let mut cases = Vec::new();
    for v in [1u64, 2, 4] {
        let registers = v * u64::from(lanes) + v + 1;
        if registers > s.vector_registers {
            break;
        }
        let n = v * u64::from(lanes);
        let operand = format!("f32 {vrf} row-major v{lanes}");
        cases.push(CalibrationCase::new(
            format!("v{v}"),
            format!("MatmulAccum(1x1x{lanes}x{n}, {operand}, {operand}, {operand}, serial)"),
        ));
    }
    cases
}

/// The specs it takes and near misses it must refuse (on `arm-neon`).
#[test]
fn applies_to_its_specs_only() {
    let takes = [
        "MatmulAccum(1x1x4x4, f32 VRF row-major v4, f32 VRF row-major v4, f32 VRF row-major v4)",
        "MatmulAccum(1x1x4x16, f32 VRF row-major v4, f32 VRF row-major v4, f32 VRF row-major v4)",
    ];
    let refuses = [
        // k is not one lhs vector; lhs not in registers; a column of rhs; other dtypes.
        "MatmulAccum(1x1x8x4, f32 VRF row-major v4, f32 VRF row-major v4, f32 VRF row-major v4)",
        "MatmulAccum(1x1x4x4, f32 L1 row-major, f32 VRF row-major v4, f32 VRF row-major v4)",
        "MatmulAccum(1x2x4x4, f32 VRF row-major v4, f32 VRF row-major v4, f32 VRF row-major v4)",
        "MatmulAccum(1x1x4x4, f32 VRF row-major v4, f32 VRF col-major v4, f32 VRF row-major v4)",
        "MatmulAccum(1x1x4x4, u32 VRF row-major v4, u32 VRF row-major v4, u32 VRF row-major v4)",
        "Matmul(1x1x4x4, f32 VRF row-major v4, f32 VRF row-major v4, f32 VRF row-major v4)",
    ];
    super::tests::check_on("arm-neon", super::KernelKind::BroadcastLaneMultAdd, &takes, &refuses);
}
