//! `MemsetZero`: sets a contiguous buffer in memory or a cache to zero.
//!
//! ```text
//! applies:  FillZero of a tensor in memory or a cache that is one contiguous run
//! cost:     fixed + move_cost(out)
//! ```

use super::in_memory;
use crate::cost::{Cost, move_cost};
use crate::dtype::Dtype;
use crate::spec::{FillValue, LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{IsaFeature, KernelCost, Target};

pub(super) const REQUIRED_ISA: &[IsaFeature] = &[];
pub(super) const DEFAULT_COST: KernelCost = KernelCost { fixed: 1, per_unit: 0 };

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
pub(super) fn could_apply(
    kind: PrimitiveKind,
    levels: &[LevelKind],
    _dtypes: &[Dtype],
    _target: &Target,
) -> bool {
    kind == (PrimitiveKind::Fill { value: FillValue::Zero })
        && matches!(levels[0], LevelKind::Cache | LevelKind::Memory)
}

pub(super) fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let out = spec.output();
    spec.kind == (PrimitiveKind::Fill { value: FillValue::Zero })
        && in_memory(out, target)
        && out.is_fully_contiguous()
}

pub(super) fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    c.fixed.saturating_add(move_cost(spec.output(), target))
}
