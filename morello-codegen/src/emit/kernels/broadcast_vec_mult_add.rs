//! `BroadcastVecMultAdd`: `out[v] += s * x[v]`, one scalar broadcast to a register and multiplied
//! with whole vector registers, accumulated into the output's registers.
//!
//! ```text
//! {
//!   const __m256 b7 = _mm256_set1_ps(lhs[16 * m_1 + k_2]);
//!   v3_0 = _mm256_fmadd_ps(v5_0, b7, v3_0);               (f32 with FMA)
//!   v3_1 = _mm256_add_epi32(v3_1, _mm256_mullo_epi32(v5_1, b7));   (u32, i32)
//! }
//! ```
//!
//! Row form `[1, 1, 1, n]`: the scalar is `lhs`, the vectors `rhs`; column form `[1, m, 1, 1]`:
//! the scalar is `rhs`, the vectors `lhs`. Lane `j` of each output register must meet lane `j`
//! of one register of the vector operand (checked).

use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;

use super::{Register, project, unsupported, whole_registers, zeros};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;
use morello_core::target::IsaFeature;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::BroadcastVecMultAdd, spec, e, why);
    let (scalar, vectors) = match spec.shape.dims() {
        [1, 1, 1, _] => (0, 1),
        [1, _, 1, 1] => (1, 0),
        _ => return Err(fail(e, "neither a row [1, 1, 1, n] nor a column [1, m, 1, 1]")),
    };
    let vector = e.vector_type(&views[2])?;
    if e.vector_type(&views[vectors])? != vector {
        return Err(fail(e, "the vector operand and the output have different vectors"));
    }
    // Which register of the vector operand meets each output register, lane for lane.
    let mut pairs = Vec::new();
    for Register { index: register, points: lanes } in whole_registers(e, &views[2], &spec.output().shape)? {
        let mut source = None;
        for (j, out_point) in lanes.iter().enumerate() {
            // Output [b, m, n] is iteration [b, m, 0, n] (k has size 1).
            let full = [out_point[0], out_point[1], 0, out_point[2]];
            let lane = e.lane(&views[vectors], &project(spec, vectors, &full))?;
            if lane.lane != j as u64 || source.is_some_and(|s| s != lane.register) {
                return Err(fail(e, "lanes of the output and the vector operand do not line up"));
            }
            source = Some(lane.register);
        }
        if let Some(source) = source {
            pairs.push((register, source));
        }
    }
    let fma = e.has(IsaFeature::Fma) && vector.dtype == morello_core::dtype::Dtype::F32;
    if fma {
        e.require(IsaFeature::Fma, "fused multiply-add")?;
    }
    if vector.feature().is_none() && !vector.dtype.is_float() {
        // 16-byte 32-bit multiplies (`pmulld`) are SSE4.1, which AVX2 targets have.
        e.require(IsaFeature::Avx2, "16-byte integer multiplies")?;
    }
    let value = e.element(&views[scalar], &zeros(spec, scalar))?;
    let broadcast = format!("b{}", e.fresh());
    e.out.open("{");
    e.out.line(format!("const {} {broadcast} = {};", vector.c_type(), vector.splat(&value)));
    for (register, source) in pairs {
        let out = e.register_name(&views[2], register);
        let x = e.register_name(&views[vectors], source);
        let update = vector.mul_add(&x, &broadcast, &out, fma)?;
        e.out.line(format!("{out} = {update};"));
    }
    e.out.close();
    Ok(())
}
