//! `VectorFill`: sets whole vectors in registers to a fill value.
//!
//! ```text
//! applies:  Fill (any value) of a tensor in vector registers made of whole vectors
//! cost:     fixed + per_unit * vectors
//! ```

use super::{in_vector_registers, whole_vectors};
use crate::cost::Cost;
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{IsaFeature, KernelCost, Target};

pub(super) const REQUIRED_ISA: &[IsaFeature] = &[];
pub(super) const DEFAULT_COST: KernelCost = KernelCost { fixed: 0, per_unit: 1 };

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
pub(super) fn could_apply(
    kind: PrimitiveKind,
    levels: &[LevelKind],
    _dtypes: &[Dtype],
    _target: &Target,
) -> bool {
    matches!(kind, PrimitiveKind::Fill { .. }) && levels[0] == LevelKind::VectorRegisters
}

pub(super) fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let out = spec.output();
    matches!(spec.kind, PrimitiveKind::Fill { .. })
        && in_vector_registers(out, target)
        && out.vector_size.is_some_and(|v| whole_vectors(out, v))
}

pub(super) fn cost(spec: &LogicalSpec, _target: &Target, c: KernelCost) -> Cost {
    let out = spec.output();
    let vectors = out.shape.volume() / u64::from(out.vector_size.unwrap_or(1));
    c.fixed.saturating_add(c.per_unit.saturating_mul(vectors))
}
