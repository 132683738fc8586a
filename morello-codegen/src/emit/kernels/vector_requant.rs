//! `VectorRequant`: `out[v] = requant(acc[v])` from whole i32 vector registers into 8-bit values.
//!
//! ```text
//! {                                                          (8 lanes, AVX2; u8 out)
//!   __m256 rq_y = _mm256_mul_ps(_mm256_cvtepi32_ps(v5_0), _mm256_loadu_ps(&scale[n_1]));
//!   const __m256i rq_z = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(&zero_point[n_1])));
//!   const __m256 rq_f = _mm256_cvtepi32_ps(rq_z);
//!   rq_y = _mm256_max_ps(rq_y, _mm256_sub_ps(_mm256_set1_ps(0.0f), rq_f));
//!   rq_y = _mm256_min_ps(rq_y, _mm256_sub_ps(_mm256_set1_ps(255.0f), rq_f));
//!   const __m256i rq_r = _mm256_add_epi32(_mm256_cvtps_epi32(rq_y), rq_z);
//!   const __m128i rq_w = _mm_packs_epi32(_mm256_castsi256_si128(rq_r), _mm256_extracti128_si256(rq_r, 1));
//!   _mm_storel_epi64((__m128i *)(&out[n_1]), _mm_packus_epi16(rq_w, rq_w));
//! }
//! ```
//!
//! 16 lanes (AVX-512F) narrow with `_mm512_cvtepi32_epi8`. With a bias the register is first
//! `_mm256_add_epi32(v5_0, _mm256_loadu_si256(&bias[n_1]))` (wrapping, as the reference's i32 sum);
//! with ReLU the lower bound is `_mm256_setzero_ps()`. The operations and their order are those
//! of `requantize` in `morello-core`'s operators (`maxps` returns its second operand for NaN, as
//! the reference's comparison does), and the clamped values are in range, so narrowing is exact.
//! Checked before writing: each register's lanes meet consecutive biases, scales, zero points and
//! outputs.

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::{LogicalSpec, PrimitiveKind, RequantEpilogue};
use morello_core::target::IsaFeature;

use super::{Register, consecutive, unsupported, whole_registers};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::vector::VectorIsa;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::VectorRequant, spec, e, why);
    let PrimitiveKind::Requant { epilogue } = spec.kind else { return Err(fail(e, "not a requantization")) };
    let (acc, bias, scale, zero_point, out) = match (epilogue.has_bias(), views) {
        (false, [acc, scale, zero_point, out]) => (acc, None, scale, zero_point, out),
        (true, [acc, bias, scale, zero_point, out]) => (acc, Some(bias), scale, zero_point, out),
        _ => return Err(fail(e, "not the operands of its form")),
    };
    let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).filter(|&d| d != Dtype::I32).collect();
    let (lo, hi, signed) = match dtypes.as_slice() {
        [Dtype::F32, Dtype::U8, Dtype::U8] => (0, 255, false),
        [Dtype::F32, Dtype::I8, Dtype::I8] => (-128, 127, true),
        _ => return Err(fail(e, "not i32 with f32 scales into u8 or i8")),
    };
    if spec.operands.iter().filter(|o| o.dtype == Dtype::I32).count() != 1 + usize::from(bias.is_some()) {
        return Err(fail(e, "not an i32 accumulator (and bias)"));
    }
    if VectorIsa::of(e.target) != VectorIsa::X86 {
        return Err(fail(e, "x86 vectors only"));
    }
    let lanes = e.vector_type(acc)?.lanes;
    let (w, zero_load, widen) = match lanes {
        8 => {
            e.require(IsaFeature::Avx2, "256-bit integer vectors")?;
            (
                "_mm256",
                "_mm_loadl_epi64",
                if signed { "_mm256_cvtepi8_epi32" } else { "_mm256_cvtepu8_epi32" },
            )
        }
        16 => {
            e.require(IsaFeature::Avx512f, "512-bit vectors")?;
            (
                "_mm512",
                "_mm_loadu_si128",
                if signed { "_mm512_cvtepi8_epi32" } else { "_mm512_cvtepu8_epi32" },
            )
        }
        _ => return Err(fail(e, "the accumulator's registers are not 8 or 16 i32 lanes")),
    };
    let (float, int) = if lanes == 8 { ("__m256", "__m256i") } else { ("__m512", "__m512i") };
    let last = spec.shape.rank() - 1;
    for Register { index, points } in whole_registers(e, acc, &spec.shape)? {
        let columns: Vec<Vec<u32>> = points.iter().map(|p| vec![p[last]]).collect();
        let scale_at = consecutive(e, scale, &columns)?;
        let zero_at = consecutive(e, zero_point, &columns)?;
        let out_at = consecutive(e, out, &points)?;
        let (scale_at, zero_at, out_at) =
            (e.address(scale, &scale_at)?, e.address(zero_point, &zero_at)?, e.address(out, &out_at)?);
        let mut sum = e.register_name(acc, index);
        if let Some(bias) = bias {
            let bias_at = consecutive(e, bias, &columns)?;
            let bias_at = e.address(bias, &bias_at)?;
            sum = format!(
                "{w}_add_epi32({sum}, {w}_loadu_si{bits}((const void *)({bias_at})))",
                bits = lanes * 32
            );
        }
        e.out.open("{");
        e.out.line(format!("{float} rq_y = {w}_mul_ps({w}_cvtepi32_ps({sum}), {w}_loadu_ps({scale_at}));"));
        e.out.line(format!("const {int} rq_z = {widen}({zero_load}((const __m128i *)({zero_at})));"));
        e.out.line(format!("const {float} rq_f = {w}_cvtepi32_ps(rq_z);"));
        if epilogue == RequantEpilogue::BiasRelu {
            // max(lo - zp, 0) = 0: the zero point is in [lo, hi].
            e.out.line(format!("rq_y = {w}_max_ps(rq_y, {w}_setzero_ps());"));
        } else {
            e.out.line(format!("rq_y = {w}_max_ps(rq_y, {w}_sub_ps({w}_set1_ps({lo}.0f), rq_f));"));
        }
        e.out.line(format!("rq_y = {w}_min_ps(rq_y, {w}_sub_ps({w}_set1_ps({hi}.0f), rq_f));"));
        e.out.line(format!("const {int} rq_r = {w}_add_epi32({w}_cvtps_epi32(rq_y), rq_z);"));
        if lanes == 8 {
            let pack = if signed { "_mm_packs_epi16" } else { "_mm_packus_epi16" };
            e.out.line(
                "const __m128i rq_w = _mm_packs_epi32(_mm256_castsi256_si128(rq_r), _mm256_extracti128_si256(rq_r, 1));",
            );
            e.out.line(format!("_mm_storel_epi64((__m128i *)({out_at}), {pack}(rq_w, rq_w));"));
        } else {
            e.out.line(format!("_mm_storeu_si128((__m128i *)({out_at}), _mm512_cvtepi32_epi8(rq_r));"));
        }
        e.out.close();
    }
    Ok(())
}
