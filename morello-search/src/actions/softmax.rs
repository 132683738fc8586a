//! Softmax as three passes over its rows: `Softmax(x, y)` becomes a block that allocates the row
//! maxima and sums (`max [m]`, `sum [m]`) and runs
//!
//! ```text
//! Max(x, max)                      the row maxima (a reduction: tiles, accumulates from -inf)
//! SoftmaxExp(x, max, y, sum)       y = exp(x - max), sum = Σ_row y (tiles; accumulates the sum)
//! SoftmaxScale(sum, y)             y = y / sum (elementwise)
//! ```
//!
//! The temporaries may live at every level that allocates and holds them, except vector
//! registers: scalar registers for a few rows (a row at a time after tiling), memory otherwise.
//! Subtracting the maximum keeps every `exp` argument at most 0, so nothing overflows.

use morello_core::cost::memory_units;
use morello_core::layout::Layout;
use morello_core::shape::Shape;
use morello_core::spec::{CanonicalSpec, LogicalSpec, PrimitiveKind, TensorSpec};
use morello_core::target::{LevelKind, MemVec, Target};

use super::{Action, Combine, Plan, PlanShape};

pub(super) fn enumerate(spec: &CanonicalSpec, target: &Target, out: &mut Vec<(Action, Plan)>) {
    if spec.kind != PrimitiveKind::Softmax {
        return;
    }
    let rows = spec.shape.dim(0);
    let Ok(shape) = Shape::new(vec![rows]) else { return };
    for level in target.level_ids() {
        let info = target.level(level);
        if !info.allocates || info.kind == LevelKind::VectorRegisters {
            continue;
        }
        let temporary = TensorSpec {
            shape: shape.clone(),
            dtype: spec.operands[0].dtype,
            level,
            layout: Layout::row_major(1),
            contiguous_dims: 1,
            vector_size: None,
            pitch: None,
        };
        let units = memory_units(&temporary, target);
        if units.saturating_mul(2) > info.capacity {
            continue;
        }
        let Some(plan) = plan(spec, &temporary, units, target) else { continue };
        out.push((Action::SoftmaxParts { level }, plan));
    }
}

fn plan(spec: &CanonicalSpec, temporary: &TensorSpec, units: u64, target: &Target) -> Option<Plan> {
    let (x, y) = (&spec.operands[0], &spec.operands[1]);
    let part = |kind: PrimitiveKind, operands: Vec<TensorSpec>| {
        LogicalSpec { kind, shape: spec.shape.clone(), operands, serial_only: spec.serial_only }
            .canonicalize(target)
            .ok()
    };
    let t = temporary.clone();
    let children = vec![
        part(PrimitiveKind::Max { accum: false }, vec![x.clone(), t.clone()])?,
        part(PrimitiveKind::SoftmaxExp { accum: false }, vec![x.clone(), t.clone(), y.clone(), t.clone()])?,
        part(PrimitiveKind::SoftmaxScale, vec![t.clone(), y.clone()])?,
    ];
    let temporaries = vec![children[0].operands[1].clone(), children[1].operands[3].clone()];
    Some(Plan {
        children,
        combine: Combine::Alloc { own: MemVec::single(temporary.level, units.saturating_mul(2)), cost: 0 },
        shape: PlanShape::Block {
            // Parent operands: x 0, y 1; temporaries: max 2, sum 3.
            stage_operands: vec![vec![0, 2], vec![0, 2, 1, 3], vec![3, 1]],
            stage_origins: vec![None, None, None],
            temporaries,
        },
    })
}
