//! `VectorAssign`: copies whole vector registers to or from memory, or between registers.
//!
//! ```text
//! load:   v3_0 = _mm256_loadu_ps(&lhs[64 * m_1 + 8]);
//! store:  _mm256_storeu_ps(&out[...], v3_0);
//! copy:   v7_0 = v3_0;
//! ```
//!
//! For each register of the register side, the memory side's elements at its lanes must be
//! consecutive (checked, see [`super::consecutive`]); for a copy, lane `j` of each destination
//! register must come from lane `j` of one source register.

use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;

use super::{Register, consecutive, unsupported, whole_registers};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let (src, dst) = (&views[0], &views[1]);
    if spec.operands[0].dtype != spec.operands[1].dtype {
        return Err(unsupported(KernelKind::VectorAssign, spec, e, "the dtypes differ"));
    }
    match (e.in_vector_registers(src), e.in_vector_registers(dst)) {
        (true, true) => copy(e, spec, src, dst),
        (false, true) => {
            let vector = e.vector_type(dst)?;
            for Register { index: register, points } in whole_registers(e, dst, &spec.shape)? {
                let start = consecutive(e, src, &points)?;
                let address = e.address(src, &start)?;
                let name = e.register_name(dst, register);
                e.out.line(format!("{name} = {};", vector.load(&address)));
            }
            Ok(())
        }
        (true, false) => {
            let vector = e.vector_type(src)?;
            for Register { index: register, points } in whole_registers(e, src, &spec.shape)? {
                let start = consecutive(e, dst, &points)?;
                let address = e.address(dst, &start)?;
                let name = e.register_name(src, register);
                e.out.line(format!("{};", vector.store(&address, &name)));
            }
            Ok(())
        }
        (false, false) => {
            Err(unsupported(KernelKind::VectorAssign, spec, e, "neither side is in vector registers"))
        }
    }
}

fn copy(e: &mut Emitter<'_>, spec: &LogicalSpec, src: &View, dst: &View) -> Result<(), CodegenError> {
    if e.vector_type(src)? != e.vector_type(dst)? {
        return Err(unsupported(KernelKind::VectorAssign, spec, e, "the two sides' vectors differ"));
    }
    for Register { index: register, points } in whole_registers(e, dst, &spec.shape)? {
        let first = e.lane(src, &points[0])?;
        for (j, point) in points.iter().enumerate() {
            let lane = e.lane(src, point)?;
            if lane.register != first.register || lane.lane != j as u64 {
                return Err(unsupported(
                    KernelKind::VectorAssign,
                    spec,
                    e,
                    "lanes would move between registers",
                ));
            }
        }
        let (to, from) = (e.register_name(dst, register), e.register_name(src, first.register));
        e.out.line(format!("{to} = {from};"));
    }
    Ok(())
}
