//! `VectorAssign`: copies whole vectors between vector registers and memory (loads, stores), or
//! shifts i8 into u8 on the way (one xor with `0x80` per vector, `crate::operators::shifts`).
//!
//! ```text
//! ordinal:  2
//! constants: fixed 0, per_unit 1 per vectors
//! applies:  Move, one dtype (or i8 into u8), one layout; at least one side in vector registers; every side in
//!           vector registers made of whole vectors of the vector size; a side in memory or a
//!           cache with contiguous runs that are whole vectors (so each vector is one load/store);
//!           two register sides with one vector size
//! cost:     per_unit * vectors + vector_move_cost(side in memory)
//! ```

use super::{CalibrationCase, CalibrationSites, KernelDefinition};
use super::{in_memory, in_vector_registers, vectors_along, whole_vectors};
use crate::cost::{Cost, vector_move_cost};
use crate::dtype::Dtype;
use crate::operators::shifts;
use crate::spec::{LogicalSpec, PrimitiveKind, TensorSpec};
use crate::target::LevelKind;
use crate::target::{KernelCost, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration).after_tiling(could_apply_after_tiling);

/// The vector size of the register side(s).
fn lanes(spec: &LogicalSpec) -> Option<u32> {
    spec.operands.iter().find_map(|o| o.vector_size)
}

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], _target: &Target) -> bool {
    kind == PrimitiveKind::Move
        && (dtypes[0] == dtypes[1] || shifts(dtypes[0], dtypes[1]))
        && levels.contains(&LevelKind::VectorRegisters)
        && !levels.contains(&LevelKind::ScalarRegisters)
}

/// Whether some tile of a move could take this kernel (checked after the spec itself): a tile one
/// vector long along one dim, which is then every side's innermost dim, must be whole vectors on
/// every side.
fn could_apply_after_tiling(spec: &LogicalSpec, target: &Target) -> bool {
    if spec.kind != PrimitiveKind::Move || !same_or_shifted(spec) {
        return false;
    }
    let Some(register) = spec.operands.iter().find(|o| in_vector_registers(o, target)) else { return false };
    let lanes = register.vector_size.unwrap_or(1);
    (0..spec.shape.rank()).any(|dim| {
        spec.operands.iter().all(|side| {
            let along = TensorSpec { vector_size: Some(lanes), ..side.clone() };
            (in_vector_registers(side, target) || in_memory(side, target)) && vectors_along(&along, dim)
        })
    })
}

/// Whether the two sides have one dtype, or the move shifts i8 into u8.
fn same_or_shifted(spec: &LogicalSpec) -> bool {
    let (src, dst) = (spec.operands[0].dtype, spec.operands[1].dtype);
    src == dst || shifts(src, dst)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    if spec.kind != PrimitiveKind::Move {
        return false;
    }
    let (src, dst) = (&spec.operands[0], &spec.operands[1]);
    let Some(lanes) = lanes(spec) else { return false };
    if !same_or_shifted(spec) || src.layout != dst.layout {
        return false;
    }
    [src, dst].iter().all(|side| {
        if in_vector_registers(side, target) {
            side.vector_size == Some(lanes) && whole_vectors(side, lanes)
        } else {
            in_memory(side, target) && whole_vectors(side, lanes)
        }
    })
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    let vectors = spec.shape.volume() / u64::from(lanes(spec).unwrap_or(1));
    let memory_side: Cost = spec
        .operands
        .iter()
        .filter(|o| !in_vector_registers(o, target))
        .map(|o| vector_move_cost(o, target))
        .sum();
    c.fixed.saturating_add(c.per_unit.saturating_mul(vectors)).saturating_add(memory_side)
}

/// Calibration: 1, 2 and 4 consecutive vectors of every width, loaded from L1 and stored to it.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let mut cases = Vec::new();
    for &w in &s.widths {
        let lanes = w / 4;
        for v in [1u32, 2, 4] {
            let (memory, registers) =
                (format!("f32 {} row-major", s.l1), format!("f32 {} row-major v{lanes}", s.vrf));
            for (direction, from, to) in [("load", &memory, &registers), ("store", &registers, &memory)] {
                cases.push(CalibrationCase::new(
                    format!("{direction}.w{w}.v{v}"),
                    format!("Move({}, {from}, {to}, serial)", v * lanes),
                ));
            }
        }
    }
    cases
}

/// The specs it takes and near misses it must refuse (on `x86-avx2`).
#[test]
fn applies_to_its_specs_only() {
    let takes = [
        "Move(1x8, f32 L1 row-major, f32 VRF row-major v8)",
        "Move(2x8, f32 VRF row-major v8, f32 GL row-major)",
        "Move(4x8, f32 L1 row-major c1, f32 VRF row-major v8)",
        "Move(16, u32 VRF row-major v4, u32 VRF row-major v4)",
        "Move(1x32, i8 L1 row-major, u8 VRF row-major v32)",
        "Move(32, i8 VRF row-major v32, u8 GL row-major)",
    ];
    let refuses = [
        "Move(8x2, f32 L1 row-major c1, f32 VRF row-major v8)",
        "Move(8x8, f32 L1 col-major, f32 VRF row-major v8)",
        "Move(1x8, f32 L1 row-major, f32 L1 row-major)",
        "Move(16, u32 VRF row-major v4, u32 VRF row-major v8)",
        "Move(2x16, i8 VRF row-major v16, u8 GL col-major)",
    ];
    super::tests::check_avx2(super::KernelKind::VectorAssign, &takes, &refuses);
}
