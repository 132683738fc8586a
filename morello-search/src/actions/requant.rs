//! Split a requantizing epilogue off its matmul: `MatmulRequant(lhs, rhs, scale, zero_point, out)`
//! (or `MatmulBiasRequant` / `MatmulBiasReluRequant` with a `bias` after `rhs`) becomes a block
//! that allocates an i32 accumulator `acc [b, m, n]` at `level` and runs
//!
//! ```text
//! Matmul(lhs, rhs, acc)                      the exact i32 sums
//! Requant(acc, scale, zero_point, out)       scaled, rounded, offset, saturated to 8 bits
//!   (BiasRequant / BiasReluRequant(acc, bias, scale, zero_point, out) with the bias)
//! ```
//!
//! As with the f32 epilogues, where the search applies it decides what it is: on the whole output
//! with `acc` in memory it is a separate pass after the matmul; after tiling the output down to a
//! register block, `acc` in vector registers is the fused epilogue: the block's sums are
//! requantized from the registers (`VectorRequant`) and only the 8-bit results are stored.
//!
//! To keep the space small, the accumulator goes only to (per level that allocates): vector
//! registers in the widest vectors that divide the columns; scalar registers where no vector
//! does (the last columns of an odd shape); a cache or memory where the output is one contiguous
//! run (the whole output or tiles of whole rows: the separate pass).
//!
//! A split is offered only where both parts keep the levels the requantizing matmul's frontier
//! keeps apart and the accumulator's (`crate::projection`, facts 1 and 2): the matmul alone keeps
//! only the levels of `lhs`, `rhs` and the accumulator, so `scale`, `zero_point` and `out` must
//! not have come through a level those did not.

use morello_core::cost::memory_units;
use morello_core::dtype::Dtype;
use morello_core::layout::Layout;
use morello_core::operators::requant_stages;
use morello_core::shape::Shape;
use morello_core::spec::{CanonicalSpec, LogicalSpec, PrimitiveKind, TensorSpec};
use morello_core::target::{LevelId, LevelKind, MemVec, Target};

use super::{Action, Combine, Plan, PlanShape};
use crate::projection::Projection;

pub(super) fn enumerate(spec: &CanonicalSpec, target: &Target, out: &mut Vec<(Action, Plan)>) {
    let PrimitiveKind::MatmulRequant { .. } = spec.kind else { return };
    let output = spec.operands.last().expect("a requantizing matmul has operands");
    let [b, m, _, n] = *spec.shape.dims() else { return };
    let Ok(shape) = Shape::new(vec![b, m, n]) else { return };
    // The widest vectors of i32 lanes that divide the columns, if any.
    let element_bytes = Dtype::I32.size_bytes();
    let widest = |level: LevelId| {
        target
            .level(level)
            .vector_bytes
            .iter()
            .map(|w| w / element_bytes)
            .filter(|&l| l >= 2 && n % l == 0)
            .max()
    };
    let vectors = target.level_ids().any(|l| {
        target.level(l).allocates && target.level(l).kind == LevelKind::VectorRegisters && widest(l).is_some()
    });
    for level in target.level_ids() {
        let info = target.level(level);
        if !info.allocates {
            continue;
        }
        let vector_size = match info.kind {
            LevelKind::VectorRegisters => match widest(level) {
                Some(lanes) => Some(lanes),
                None => continue,
            },
            // Scalar registers only for columns no vector covers.
            LevelKind::ScalarRegisters if vectors => continue,
            // A pass over memory only for whole rows of the output.
            LevelKind::Cache | LevelKind::Memory if !output.is_fully_contiguous() => continue,
            _ => None,
        };
        {
            let accumulator = TensorSpec {
                shape: shape.clone(),
                dtype: Dtype::I32,
                level,
                layout: Layout::row_major(3),
                contiguous_dims: 3,
                vector_size,
                pitch: None,
            };
            let units = memory_units(&accumulator, target);
            if units > info.capacity {
                continue;
            }
            if let Some(plan) = plan(spec, accumulator, units, target) {
                out.push((Action::RequantParts { level, vector_size }, plan));
            }
        }
    }
}

fn plan(spec: &CanonicalSpec, accumulator: TensorSpec, units: u64, target: &Target) -> Option<Plan> {
    let o = &spec.operands;
    let PrimitiveKind::MatmulRequant { epilogue } = spec.kind else { return None };
    let [b, m, _, n] = *spec.shape.dims() else { return None };
    let matmul = LogicalSpec {
        kind: PrimitiveKind::Matmul { accum: false },
        shape: spec.shape.clone(),
        operands: vec![o[0].clone(), o[1].clone(), accumulator.clone()],
        serial_only: spec.serial_only,
    }
    .canonicalize(target)
    .ok()?;
    let requant = LogicalSpec {
        kind: PrimitiveKind::Requant { epilogue },
        shape: Shape::new(vec![b, m, n]).ok()?,
        operands: std::iter::once(matmul.operands[2].clone()).chain(o[2..].iter().cloned()).collect(),
        serial_only: spec.serial_only,
    }
    .canonicalize(target)
    .ok()?;
    let temporaries = vec![matmul.operands[2].clone()];
    let own = MemVec::single(accumulator.level, units);
    let projection = Projection::new(target);
    if ![&matmul, &requant].iter().all(|child| projection.keeps(spec, &own, child)) {
        return None;
    }
    Some(Plan {
        children: vec![matmul, requant],
        combine: Combine::Alloc { own, cost: 0 },
        shape: PlanShape::Block {
            // Parent operands: lhs 0, rhs 1, (bias,) scale, zero_point, out; the temporary acc last.
            stage_operands: requant_stages(o.len()).to_vec(),
            stage_origins: vec![None, None],
            temporaries,
        },
    })
}
