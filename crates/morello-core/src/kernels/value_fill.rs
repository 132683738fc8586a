//! `ValueFill`: sets one scalar to a fill value (0, negative infinity or the minimum).
//!
//! ```text
//! applies:  Fill of volume 1, not in vector registers
//! cost:     fixed + move_cost(out)
//! ```

use super::scalar_accessible;
use crate::cost::{Cost, move_cost};
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::{KernelCost, Target};

pub(super) const REQUIRED_ISA: &[&str] = &[];
pub(super) const DEFAULT_COST: KernelCost = KernelCost { fixed: 1, per_unit: 0 };

pub(super) fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    matches!(spec.kind, PrimitiveKind::Fill { .. })
        && spec.shape.volume() == 1
        && scalar_accessible(spec.output(), target)
}

pub(super) fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    c.fixed.saturating_add(move_cost(spec.output(), target))
}
