//! `BroadcastVecMultAddBf16`: `out[v] += f32(s) * f32(x[v])`, one bf16 scalar widened and
//! broadcast, times rows of bf16 elements loaded from memory and widened to f32, accumulated into
//! the output's f32 registers.
//!
//! ```text
//! {
//!   const __m512 b7 = _mm512_set1_ps(morello_bf16_to_f32(lhs[k_2]));
//!   v3_0 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(
//!              _mm256_loadu_si256((const __m256i *)(&rhs[16384 * k_2 + 64 * n_1]))), 16)), b7, v3_0);
//! }
//! ```
//!
//! Lane `j` of each output register must meet element `j` of one contiguous run of `rhs`
//! (checked), so one load widens the row that register needs.

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;

use super::{Register, consecutive, project, unsupported, whole_registers, zeros};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::helpers::Helper;
use crate::error::CodegenError;
use morello_core::target::IsaFeature;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::BroadcastVecMultAddBf16, spec, e, why);
    if !matches!(spec.shape.dims(), [1, 1, 1, _]) {
        return Err(fail(e, "not a row [1, 1, 1, n]"));
    }
    let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).collect();
    if dtypes != [Dtype::Bf16, Dtype::Bf16, Dtype::F32] {
        return Err(fail(e, "not bf16 x bf16 -> f32"));
    }
    let vector = e.vector_type(&views[2])?;
    if let Some(feature) = vector.feature() {
        e.require(feature, "widening bf16 vectors")?;
    }
    let fma = e.has(IsaFeature::Fma);
    if fma {
        e.require(IsaFeature::Fma, "fused multiply-add")?;
    }
    // The run of `rhs` each output register meets, lane for lane.
    let mut rows = Vec::new();
    for Register { index, points } in whole_registers(e, &views[2], &spec.output().shape)? {
        // Output [b, m, n] is iteration [b, m, 0, n] (k has size 1).
        let sources: Vec<Vec<u32>> =
            points.iter().map(|p| project(spec, 1, &[p[0], p[1], 0, p[2]])).collect();
        let start = consecutive(e, &views[1], &sources)?;
        rows.push((index, e.address(&views[1], &start)?));
    }
    e.helpers.insert(Helper::Bf16ToF32);
    let value = e.element(&views[0], &zeros(spec, 0))?;
    let broadcast = format!("b{}", e.fresh());
    e.out.open("{");
    let splat = vector.splat(&format!("morello_bf16_to_f32({value})"));
    e.out.line(format!("const {} {broadcast} = {splat};", vector.c_type()));
    for (register, address) in rows {
        let out = e.register_name(&views[2], register);
        let update = vector.mul_add(&vector.load_bf16_as_f32(&address)?, &broadcast, &out, fma)?;
        e.out.line(format!("{out} = {update};"));
    }
    e.out.close();
    Ok(())
}
