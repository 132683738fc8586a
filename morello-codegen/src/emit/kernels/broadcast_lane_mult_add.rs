//! `BroadcastLaneMultAdd`: each lane of one `lhs` vector times a row of `rhs`, accumulated into
//! the output's registers by NEON's by-element multiply-add.
//!
//! ```text
//! v3_0 = vfmaq_laneq_f32(v3_0, v5_0, v4_0, 0);    (out += rhs row 0 * lane 0 of lhs)
//! v3_0 = vfmaq_laneq_f32(v3_0, v5_1, v4_0, 1);    (out += rhs row 1 * lane 1 of lhs)
//! ...
//! ```
//!
//! Step `l` of `k` reads lane `l` of `lhs` (a constant: registers are indexed by constants), and
//! lane `j` of each output register must meet lane `j` of one register of `rhs` row `l` (checked).

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;
use morello_core::target::IsaFeature;

use super::{Register, unsupported, whole_registers};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::vector::VectorIsa;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::BroadcastLaneMultAdd, spec, e, why);
    let &[1, 1, k, _] = spec.shape.dims() else { return Err(fail(e, "not a row [1, 1, k, n]")) };
    let lhs_vector = e.vector_type(&views[0])?;
    let vector = e.vector_type(&views[2])?;
    let neon_f32 = |v: crate::emit::vector::VectorType| v.isa == VectorIsa::Neon && v.dtype == Dtype::F32;
    if !neon_f32(lhs_vector) || !neon_f32(vector) || e.vector_type(&views[1])? != vector {
        return Err(fail(e, "not NEON f32 vectors of one type"));
    }
    e.require(IsaFeature::Neon, "by-element multiply-adds")?;
    // The register and lane of lhs that step `l` of k reads.
    let mut steps = Vec::new();
    for l in 0..k {
        let lane = e.lane(&views[0], &[0, 0, l])?;
        steps.push((e.register_name(&views[0], lane.register), lane.lane));
    }
    let mut updates = Vec::new();
    for Register { index, points } in whole_registers(e, &views[2], &spec.output().shape)? {
        let out = e.register_name(&views[2], index);
        for (l, (lhs, lhs_lane)) in (0..k).zip(&steps) {
            let mut source = None;
            for (j, point) in points.iter().enumerate() {
                // Output [b, m, n] meets rhs [b, l, n] at step l.
                let lane = e.lane(&views[1], &[point[0], l, point[2]])?;
                if lane.lane != j as u64 || source.is_some_and(|s| s != lane.register) {
                    return Err(fail(e, "lanes of the output and the rhs row do not line up"));
                }
                source = Some(lane.register);
            }
            if let Some(source) = source {
                let rhs = e.register_name(&views[1], source);
                updates.push((l, format!("{out} = vfmaq_laneq_f32({out}, {rhs}, {lhs}, {lhs_lane});")));
            }
        }
    }
    // Step by step, so that consecutive multiply-adds go to different accumulators.
    updates.sort_by_key(|(l, _)| *l);
    for (_, update) in updates {
        e.out.line(update);
    }
    Ok(())
}
