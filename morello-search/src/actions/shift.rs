//! An s8s8s32 matmul on u8 x i8 kernels: `Matmul(lhs, rhs, out)` with an i8 `lhs` becomes a block
//! that allocates `u [b, m, k]` (u8, row-major) at `level` and runs
//!
//! ```text
//! Move(lhs, u)                    u = lhs + 128 (the bits lhs ^ 0x80)
//! ShiftCorrection(rhs, out)       out[b, m, n] = -128 Σ_k rhs[b, k, n], on every row
//! MatmulAccum(u, rhs, out)        out += u * rhs
//! ```
//!
//! since `Σ_k lhs rhs = Σ_k (u - 128) rhs = Σ_k u rhs - 128 Σ_k rhs`, exact in i32 (the bound is
//! in `ShiftCorrection`'s doc). `vpdpbusd` multiplies u8 by i8, so this is how an s8s8s32 matmul
//! reaches `BroadcastQuadDot` and `BroadcastQuadDotAvx`: it is offered only on targets with one of
//! them, on a non-accumulating matmul whose operands are in memory or a cache and whose `rhs` is
//! in the VNNI layout those kernels read (`[k / 4][n][4]`: elsewhere the accumulating matmul
//! would have no kernel but the scalar one, and offering it would only grow the space), and the
//! search weighs it against the widening pair kernel (`BroadcastPairDot`) by cost. The shift and
//! the correction add `O(M K + K N + M N)` work beside the matmul's `O(M K N)`; a row-major `rhs`
//! is packed into the VNNI layout by the matmul first (an i8 `lhs` is offered the quads of the
//! shifted `lhs` as well as the pairs, `moves::vnni_layouts`), and the correction reads the packed
//! copy.
//! Past the u8s8s32 reduction bound (`K > 65793`) the accumulating matmul is refused and the
//! action is not offered.
//!
//! A split is offered only where every stage keeps the levels the matmul's frontier keeps apart
//! and the temporary's (`crate::projection`).

use morello_core::cost::memory_units;
use morello_core::dtype::Dtype;
use morello_core::kernels::{ColumnRun, KernelKind, column_run};
use morello_core::layout::Layout;
use morello_core::operators::SHIFT_STAGES;
use morello_core::shape::Shape;
use morello_core::spec::{CanonicalSpec, LogicalSpec, PrimitiveKind, TensorSpec};
use morello_core::target::{LevelKind, MemVec, Target};

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
        || !o.iter().all(in_memory)
        || !QUAD_KERNELS.iter().any(|k| target.kernels().contains(k))
        || column_run(&o[1]) != Some(ColumnRun::Strips(4))
    {
        return;
    }
    for level in target.level_ids() {
        let info = target.level(level);
        if !info.allocates || !matches!(info.kind, LevelKind::Cache | LevelKind::Memory) {
            continue;
        }
        let shifted = TensorSpec {
            shape: o[0].shape.clone(),
            dtype: Dtype::U8,
            level,
            layout: Layout::row_major(3),
            contiguous_dims: 3,
            vector_size: None,
            pitch: None,
        };
        let units = memory_units(&shifted, target);
        if units > info.capacity {
            continue;
        }
        if let Some(plan) = plan(spec, shifted, units, target) {
            out.push((Action::ShiftS8 { level }, plan));
        }
    }
}

fn plan(spec: &CanonicalSpec, shifted: TensorSpec, units: u64, target: &Target) -> Option<Plan> {
    let o = &spec.operands;
    let child = |kind: PrimitiveKind, shape: &Shape, operands: Vec<TensorSpec>| {
        LogicalSpec { kind, shape: shape.clone(), operands, serial_only: spec.serial_only }
            .canonicalize(target)
            .ok()
    };
    let shift = child(PrimitiveKind::Move, &o[0].shape, vec![o[0].clone(), shifted.clone()])?;
    let u = shift.operands[1].clone();
    let correction = child(PrimitiveKind::ShiftCorrection, &spec.shape, vec![o[1].clone(), o[2].clone()])?;
    let matmul = child(
        PrimitiveKind::Matmul { accum: true },
        &spec.shape,
        vec![u.clone(), o[1].clone(), o[2].clone()],
    )?;
    let own = MemVec::single(shifted.level, units);
    let projection = Projection::new(target);
    if ![&shift, &correction, &matmul].iter().all(|child| projection.keeps(spec, &own, child)) {
        return None;
    }
    Some(Plan {
        children: vec![shift, correction, matmul],
        combine: Combine::Alloc { own, cost: 0 },
        shape: PlanShape::Block {
            // Parent operands: lhs 0, rhs 1, out 2; the temporary u 3.
            stage_operands: SHIFT_STAGES.iter().map(|o| o.to_vec()).collect(),
            stage_origins: vec![None, None, None],
            temporaries: vec![u],
        },
    })
}
