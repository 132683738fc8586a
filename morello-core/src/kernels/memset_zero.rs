//! `MemsetZero`: sets a contiguous buffer in memory or a cache to zero.
//!
//! ```text
//! applies:  FillZero of a tensor in memory or a cache that is one contiguous run
//! cost:     fixed + move_cost(out)
//! ```

use super::in_memory;
use super::{KernelDefinition, KernelFacts};
use crate::cost::{Cost, move_cost};
use crate::dtype::Dtype;
use crate::spec::{FillValue, LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition = KernelFacts::new(
    "MemsetZero",
    KernelCost { fixed: 1, per_unit: 0 },
    "none",
)
.rules(applies, could_apply, cost);

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], _dtypes: &[Dtype], _target: &Target) -> bool {
    kind == (PrimitiveKind::Fill { value: FillValue::Zero })
        && matches!(levels[0], LevelKind::Cache | LevelKind::Memory)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let out = spec.output();
    spec.kind == (PrimitiveKind::Fill { value: FillValue::Zero })
        && in_memory(out, target)
        && out.is_fully_contiguous()
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    c.fixed.saturating_add(move_cost(spec.output(), target))
}
