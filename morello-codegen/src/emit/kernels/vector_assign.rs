//! `VectorAssign`: copies whole vector registers to or from memory, or between registers.
//!
//! ```text
//! load:   v3_0 = _mm256_loadu_ps(&lhs[64 * m_1 + 8]);
//! store:  _mm256_storeu_ps(&out[...], v3_0);
//! copy:   v7_0 = v3_0;
//! ```
//!
//! A move from i8 to u8 is the shift `+128`: each vector is xored with `0x80` in every byte on
//! the way (`_mm256_xor_si256(v, _mm256_set1_epi8((char)-128))`).
//!
//! For each register of the register side, the memory side's elements at its lanes must be
//! consecutive (checked, see [`super::consecutive`]); for a copy, lane `j` of each destination
//! register must come from lane `j` of one source register.

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::operators::shifts;
use morello_core::spec::LogicalSpec;

use super::{Register, consecutive, unsupported, whole_registers};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::vector::{VectorIsa, VectorType};
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let (src, dst) = (&views[0], &views[1]);
    let shift = shifts(spec.operands[0].dtype, spec.operands[1].dtype);
    if spec.operands[0].dtype != spec.operands[1].dtype && !shift {
        return Err(unsupported(KernelKind::VectorAssign, spec, e, "the dtypes differ"));
    }
    let shifted =
        |vector: VectorType, value: String| if shift { flip_sign_bits(vector, &value) } else { value };
    match (e.in_vector_registers(src), e.in_vector_registers(dst)) {
        (true, true) => copy(e, spec, src, dst, shift),
        (false, true) => {
            let vector = e.vector_type(dst)?;
            for Register { index: register, points } in whole_registers(e, dst, &spec.shape)? {
                let start = consecutive(e, src, &points)?;
                let address = e.address(src, &start)?;
                let name = e.register_name(dst, register);
                e.out.line(format!("{name} = {};", shifted(vector, vector.load(&address))));
            }
            Ok(())
        }
        (true, false) => {
            let vector = e.vector_type(src)?;
            for Register { index: register, points } in whole_registers(e, src, &spec.shape)? {
                let start = consecutive(e, dst, &points)?;
                let address = e.address(dst, &start)?;
                let name = e.register_name(src, register);
                e.out.line(format!("{};", vector.store(&address, &shifted(vector, name))));
            }
            Ok(())
        }
        (false, false) => {
            Err(unsupported(KernelKind::VectorAssign, spec, e, "neither side is in vector registers"))
        }
    }
}

/// `value` with the top bit of each byte flipped (i8 `x` to u8 `x + 128`), in `vector`'s type.
fn flip_sign_bits(vector: VectorType, value: &str) -> String {
    let bits = vector.splat("-128");
    match (vector.isa, vector.c_type()) {
        (VectorIsa::Neon, _) => {
            let suffix = if vector.dtype == Dtype::U8 { "u8" } else { "s8" };
            format!("veorq_{suffix}({value}, {bits})")
        }
        (_, "__m128i") => format!("_mm_xor_si128({value}, {bits})"),
        (_, "__m256i") => format!("_mm256_xor_si256({value}, {bits})"),
        _ => format!("_mm512_xor_si512({value}, {bits})"),
    }
}

fn copy(
    e: &mut Emitter<'_>,
    spec: &LogicalSpec,
    src: &View,
    dst: &View,
    shift: bool,
) -> Result<(), CodegenError> {
    let same_bytes =
        |a: VectorType, b: VectorType| a.lanes == b.lanes && a.dtype.size_bytes() == b.dtype.size_bytes();
    if !same_bytes(e.vector_type(src)?, e.vector_type(dst)?) {
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
        let source = e.vector_type(src)?;
        let value = match (shift, source.isa) {
            (false, _) => from,
            // NEON's i8 and u8 vectors are distinct C types.
            (true, VectorIsa::Neon) => format!("vreinterpretq_u8_s8({})", flip_sign_bits(source, &from)),
            (true, _) => flip_sign_bits(source, &from),
        };
        e.out.line(format!("{to} = {value};"));
    }
    Ok(())
}
