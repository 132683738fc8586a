//! An s8s8s32 matmul on u8 x i8 kernels: `Matmul(lhs, rhs, out)` with an i8 `lhs` (one batch)
//! becomes a block that allocates `u [1, m, k]` (u8, row-major) and `c [n]` (i32) at `level`
//! and runs
//!
//! ```text
//! Move(lhs, u)                          u = lhs + 128 (the bits lhs ^ 0x80)
//! ShiftCorrection(rhs, c)               c[n] = -128 Σ_k rhs[k, n]
//! MatmulCorrected(u, rhs, c, out)       out = u * rhs + c, c added to each row
//! ```
//!
//! since `Σ_k lhs rhs = Σ_k (u - 128) rhs = Σ_k u rhs - 128 Σ_k rhs`, exact in i32 (the bound is
//! in `MatmulCorrected`'s doc). `vpdpbusd` multiplies u8 by i8, so this is how an s8s8s32 matmul
//! reaches `BroadcastQuadDot` and `BroadcastQuadDotAvx`: it is offered only on targets with one of
//! them, on a non-accumulating matmul of one batch whose operands are in memory or a cache and
//! whose `rhs` is in the VNNI layout those kernels read (`[k / 4][n][4]`: elsewhere the matmul
//! would have no kernel but the scalar one, and offering it would only grow the space), and the
//! search weighs it against the widening pair kernel (`BroadcastPairDot`) by cost; a batched
//! matmul takes it one batch at a time, after tiling `b`. The correction is computed once per
//! column (`O(K N)`) and `MatmulCorrected` adds it to each register block of the output before
//! the block is stored (`actions/epilogue.rs`), so beside the matmul's `O(M K N)` the shift and
//! the correction add `O(M K + K N)` work and `O(M K + N)` memory; a row-major `rhs` is packed
//! into the VNNI layout by the matmul first (an i8 `lhs` is offered the quads of the shifted
//! `lhs` as well as the pairs, `moves::vnni_layouts`), and the correction reads the packed copy.
//! Past the u8s8s32 reduction bound (`K > 65793`) `MatmulCorrected` is refused and the action is
//! not offered.
//!
//! A split is offered only where every stage keeps the levels the matmul's frontier keeps apart
//! and the temporaries' (`crate::projection`).

use morello_core::cost::memory_units;
use morello_core::dtype::Dtype;
use morello_core::imp::temporaries_memory;
use morello_core::kernels::{ColumnRun, KernelKind, column_run};
use morello_core::layout::Layout;
use morello_core::operators::SHIFT_STAGES;
use morello_core::shape::Shape;
use morello_core::spec::{CanonicalSpec, LogicalSpec, PrimitiveKind, TensorSpec};
use morello_core::target::{LevelId, LevelKind, Target};

use super::{Action, Combine, Plan, PlanShape};
use crate::projection::Projection;

/// The kernels that multiply a u8 `lhs` by an i8 `rhs` four values of `k` at a time on x86.
const QUAD_KERNELS: [KernelKind; 2] = [KernelKind::BroadcastQuadDot, KernelKind::BroadcastQuadDotAvx];

pub(super) fn enumerate(spec: &CanonicalSpec, target: &Target, out: &mut Vec<(Action, Plan)>) {
    let o = &spec.operands;
    let in_memory =
        |t: &TensorSpec| matches!(target.level(t.level).kind, LevelKind::Cache | LevelKind::Memory);
    if spec.kind != (PrimitiveKind::Matmul { accum: false })
        || [o[0].dtype, o[1].dtype, o[2].dtype] != [Dtype::I8, Dtype::I8, Dtype::I32]
        || spec.shape.dim(0) != 1
        || !o.iter().all(in_memory)
        || !QUAD_KERNELS.iter().any(|k| target.kernels().contains(k))
        || column_run(&o[1]) != Some(ColumnRun::Strips(4))
    {
        return;
    }
    // The correction is read once per register block of the output: it goes to the smallest
    // cache that holds it (or with `u` where none does).
    let Ok(columns) = Shape::new(vec![spec.shape.dim(3)]) else { return };
    let mut correction = temporary(columns, 1, Dtype::I32, target.home_level());
    let fits = |level: LevelId| {
        let info = target.level(level);
        info.allocates
            && info.kind == LevelKind::Cache
            && memory_units(&TensorSpec { level, ..correction.clone() }, target) <= info.capacity
    };
    let smallest = target.level_ids().filter(|&l| fits(l)).min_by_key(|&l| target.level(l).capacity);
    for level in target.level_ids() {
        let info = target.level(level);
        correction.level = smallest.unwrap_or(level);
        if !info.allocates || !matches!(info.kind, LevelKind::Cache | LevelKind::Memory) {
            continue;
        }
        let shifted = temporary(o[0].shape.clone(), 3, Dtype::U8, level);
        if memory_units(&shifted, target) > info.capacity {
            continue;
        }
        if let Some(plan) = plan(spec, [shifted, correction.clone()], target) {
            out.push((Action::ShiftS8 { level }, plan));
        }
    }
}

/// A row-major temporary.
fn temporary(shape: Shape, rank: u8, dtype: Dtype, level: LevelId) -> TensorSpec {
    TensorSpec {
        shape,
        dtype,
        level,
        layout: Layout::row_major(rank),
        contiguous_dims: rank,
        vector_size: None,
        pitch: None,
    }
}

fn plan(spec: &CanonicalSpec, temporaries: [TensorSpec; 2], target: &Target) -> Option<Plan> {
    let own = temporaries_memory(&temporaries, target);
    let [shifted, correction] = temporaries;
    let o = &spec.operands;
    let child = |kind: PrimitiveKind, shape: &Shape, operands: Vec<TensorSpec>| {
        LogicalSpec { kind, shape: shape.clone(), operands, serial_only: spec.serial_only }
            .canonicalize(target)
            .ok()
    };
    let shift = child(PrimitiveKind::Move, &o[0].shape, vec![o[0].clone(), shifted.clone()])?;
    let u = shift.operands[1].clone();
    let [b, _, k, n] = *spec.shape.dims() else { return None };
    let columns = Shape::new(vec![b, k, n]).ok()?;
    let correction = child(PrimitiveKind::ShiftCorrection, &columns, vec![o[1].clone(), correction])?;
    let c = correction.operands[1].clone();
    let matmul = child(
        PrimitiveKind::MatmulCorrected,
        &spec.shape,
        vec![u.clone(), o[1].clone(), c.clone(), o[2].clone()],
    )?;
    let projection = Projection::new(target);
    if ![&shift, &correction, &matmul].iter().all(|child| projection.keeps(spec, &own, child)) {
        return None;
    }
    Some(Plan {
        children: vec![shift, correction, matmul],
        combine: Combine::Alloc { own, cost: 0 },
        shape: PlanShape::Block {
            // Parent operands: lhs 0, rhs 1, out 2; the temporaries u 3 and c 4.
            stage_operands: SHIFT_STAGES.iter().map(|o| o.to_vec()).collect(),
            stage_origins: vec![None, None, None],
            temporaries: vec![u, c],
        },
    })
}
