//! `VectorFill`: sets whole vectors in registers to a fill value.
//!
//! ```text
//! ordinal:  3
//! constants: fixed 0, per_unit 1 per vectors
//! applies:  Fill (any value) of a tensor in vector registers made of whole vectors
//! cost:     fixed + per_unit * vectors
//! ```

use super::{CalibrationCase, CalibrationSites, KernelDefinition, sized};
use super::{in_vector_registers, whole_vectors};
use crate::cost::Cost;
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration).after_tiling(could_apply_after_tiling);

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], _dtypes: &[Dtype], _target: &Target) -> bool {
    matches!(kind, PrimitiveKind::Fill { .. }) && levels[0] == LevelKind::VectorRegisters
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let out = spec.output();
    matches!(spec.kind, PrimitiveKind::Fill { .. })
        && in_vector_registers(out, target)
        && out.vector_size.is_some_and(|v| whole_vectors(out, v))
}

fn cost(spec: &LogicalSpec, _target: &Target, c: KernelCost) -> Cost {
    let out = spec.output();
    let vectors = out.shape.volume() / u64::from(out.vector_size.unwrap_or(1));
    c.fixed.saturating_add(c.per_unit.saturating_mul(vectors))
}

/// Whether some tile of a spec could take this kernel: a fill of vector registers is made of whole
/// vectors at some tile.
fn could_apply_after_tiling(spec: &LogicalSpec, _target: &Target) -> bool {
    matches!(spec.kind, PrimitiveKind::Fill { .. })
}

/// Calibration: 1, 2, 4 and 8 widest f32 vectors set to zero.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let lanes = s.lanes();
    sized("v", [1, 2, 4, 8], |v| format!("FillZero({}, f32 {} row-major v{lanes}, serial)", v * lanes, s.vrf))
}
