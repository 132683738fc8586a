//! Split an epilogue off its matmul: `MatmulBias{act}(lhs, rhs, bias, out)` becomes a block of
//! `Matmul(lhs, rhs, out)` then `AddBias{act}(bias, out)` (`CanonicalSpec::split_epilogue`).
//!
//! The same action is the fused and the unfused plan, depending on where the search applies it:
//! on the whole output in memory it is a separate pass over the output after the matmul; after
//! tiling the output down to a register block and moving it into vector registers, the epilogue
//! runs on the registers before they are stored (`VectorAddBias`), and costs no memory traffic.
//! The search keeps both and the cost model decides (`morello bench --unfused` times the other).
//!
//! A `MatmulCorrected` (the shifted s8s8s32 matmul, `actions/shift.rs`) is split the same way, its
//! correction the bias, but only once its output is in registers: a separate pass over the output
//! is what it exists to avoid, and not offering it there keeps its sub-specs few.
//!
//! The split is offered only when the levels the bias came through are among those of `lhs`, `rhs`
//! and `out` (always so when they are all in memory, or once `out` is in registers): the matmul
//! alone keeps its frontier apart on those levels only (`crate::projection`, fact 1).

use morello_core::operators::EPILOGUE_STAGES;
use morello_core::spec::{CanonicalSpec, PrimitiveKind};
use morello_core::target::Target;

use super::{Action, Combine, Plan, PlanShape};
use crate::projection::Projection;

pub(super) fn enumerate(spec: &CanonicalSpec, target: &Target, out: &mut Vec<(Action, Plan)>) {
    let o = &spec.operands;
    if spec.kind == PrimitiveKind::MatmulCorrected && !target.level(o[3].level).kind.counts_registers() {
        return;
    }
    let Some(Ok((matmul, epilogue))) = spec.split_epilogue(target) else { return };
    let projection = Projection::new(target);
    let kept = projection.operand_levels([o[0].level, o[1].level, o[3].level]);
    if projection.operand_levels([o[2].level]) & !kept != 0 {
        return;
    }
    let plan = Plan {
        children: vec![matmul, epilogue],
        combine: Combine::Block { stalls: 0 },
        shape: PlanShape::Block {
            stage_operands: EPILOGUE_STAGES.iter().map(|o| o.to_vec()).collect(),
            stage_origins: vec![None, None],
            temporaries: Vec::new(),
        },
    };
    out.push((Action::SplitEpilogue, plan));
}
