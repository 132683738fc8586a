//! `BroadcastPairDot`: `out[v] += lhs[0] * rhs[0][v] + lhs[1] * rhs[1][v]`, two 8-bit values of
//! `lhs` widened to i16 and broadcast as one 32-bit pair, each output register's 8 lanes updated
//! with `vpmaddwd` on the 16 i8 values of `rhs` it meets (two per lane), sign-extended to i16.
//!
//! ```text
//! {
//!   const __m256i p7 = _mm256_set1_epi32((int)(((uint32_t)(uint16_t)(int16_t)lhs[k_2])
//!                                              | (((uint32_t)(uint16_t)(int16_t)lhs[k_2 + 1]) << 16)));
//!   v3_0 = _mm256_add_epi32(v3_0, _mm256_madd_epi16(p7, _mm256_cvtepi8_epi16(
//!              _mm_loadu_si128((const __m128i *)(&rhs[2 * n_1 + ...])))));
//! }
//! ```
//!
//! Checked before writing: `lhs`'s two values are consecutive in `k` order, and lane `j` of each
//! output register meets the two values of `k` of its column at offsets `2 j` and `2 j + 1` of one
//! run of `rhs`, so one 16-byte load, sign-extended, lines each pair up with the broadcast one.
//! Exact: no saturating instruction; `vpmaddwd`'s sum of two products fits its i32.

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;
use morello_core::target::IsaFeature;

use super::{Register, consecutive, project, unsupported, whole_registers};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

/// i32 lanes of an output register (the kernel's definition takes only 256-bit vectors).
const LANES: u32 = 8;

/// Values of `k` one step sums per lane.
const PAIR: u32 = 2;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::BroadcastPairDot, spec, e, why);
    if spec.shape.dims() != [1, 1, PAIR, spec.shape.dim(3)] {
        return Err(fail(e, "not two values of k of a row [1, 1, 2, n]"));
    }
    let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).collect();
    if !matches!(dtypes.as_slice(), [Dtype::U8 | Dtype::I8, Dtype::I8, Dtype::I32]) {
        return Err(fail(e, "not u8 or i8 x i8 -> i32"));
    }
    let vector = e.vector_type(&views[2])?;
    if vector.lanes != LANES {
        return Err(fail(e, "the output's registers are not 8 i32 lanes"));
    }
    e.require(IsaFeature::Avx2, "256-bit integer vectors")?;
    let pair: Vec<Vec<u32>> = (0..PAIR).map(|k| vec![0, 0, k]).collect();
    consecutive(e, &views[0], &pair)?;
    let [first, second] = [&pair[0], &pair[1]].map(|p| e.element(&views[0], p));
    let (first, second) = (first?, second?);
    // The run of `rhs` each output register meets: lane j's two values of k at 2 j and 2 j + 1.
    let mut rows = Vec::new();
    for Register { index, points } in whole_registers(e, &views[2], &spec.output().shape)? {
        // Output [b, m, n] is iteration [b, m, k, n].
        let sources: Vec<Vec<u32>> = points
            .iter()
            .flat_map(|p| (0..PAIR).map(move |k| project(spec, 1, &[p[0], p[1], k, p[2]])))
            .collect();
        let start = consecutive(e, &views[1], &sources)?;
        rows.push((index, e.address(&views[1], &start)?));
    }
    let broadcast = format!("p{}", e.fresh());
    let widen = |value: &str| format!("((uint32_t)(uint16_t)(int16_t){value})");
    e.out.open("{");
    e.out.line(format!(
        "const __m256i {broadcast} = _mm256_set1_epi32((int)({} | ({} << 16)));",
        widen(&first),
        widen(&second)
    ));
    for (register, address) in rows {
        let out = e.register_name(&views[2], register);
        e.out.line(format!(
            "{out} = _mm256_add_epi32({out}, _mm256_madd_epi16({broadcast}, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)({address})))));"
        ));
    }
    e.out.close();
    Ok(())
}
