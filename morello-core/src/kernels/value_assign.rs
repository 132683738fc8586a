//! `ValueAssign`: copies one scalar, widening bf16 to f32 if the dtypes differ.
//!
//! ```text
//! applies:  Move of volume 1, neither side in vector registers
//! cost:     fixed + move_cost(source) + move_cost(destination)
//! ```

use super::scalar_accessible;
use super::{KernelDefinition, KernelFacts};
use crate::cost::{Cost, move_cost};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition = KernelFacts::new(
    "ValueAssign",
    KernelCost { fixed: 1, per_unit: 0 },
    "none",
)
.rules(applies, could_apply, cost);

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], _dtypes: &[Dtype], _target: &Target) -> bool {
    kind == PrimitiveKind::Move && !levels.contains(&LevelKind::VectorRegisters)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    spec.kind == PrimitiveKind::Move
        && spec.shape.volume() == 1
        && spec.operands.iter().all(|o| scalar_accessible(o, target))
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    spec.operands.iter().fold(c.fixed, |acc, o| acc.saturating_add(move_cost(o, target)))
}
