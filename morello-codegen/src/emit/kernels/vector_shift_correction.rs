//! `VectorShiftCorrection`: one vector of columns of `out = -128 Σ_k rhs`.
//!
//! ```text
//! rows (AVX-512):
//! {
//!   const int8_t *r9 = &rhs[...];
//!   __m512i s9_0 = _mm512_setzero_si512(), ...;        (up to 4 sums)
//!   for (int64_t k9 = 0; k9 < 64; k9 += 4) {
//!     s9_0 = _mm512_add_epi32(s9_0, _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(r9 + (k9) * 256))));
//!     ...
//!   }
//!   s9_0 = _mm512_add_epi32(s9_0, s9_1); ...
//!   s9_0 = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(s9_0, 7));
//!   _mm512_storeu_si512((void *)(&out[...]), s9_0);
//! }
//! quads: s9_j = morello_dpbusd_m512(s9_j, c9, _mm512_loadu_si512((const void *)(r9 + (k9) / 4 * 1024)));
//!        with c9 every byte 0x80 (u8 128), so the sum is 128 Σ rhs, then negated.
//! ```
//!
//! Checked: the lanes of each step are one run (each value of `k`'s columns for rows, the four
//! values of `k` inside each column for quads) at the first and the last step, and every step's
//! run a constant stride from the previous one; the lanes of `out` one run.

use morello_core::kernels::{ColumnRun, KernelKind, column_run, quad_isa, row_isa};
use morello_core::spec::LogicalSpec;
use morello_core::target::IsaFeature;

use super::dot_product_loop::accumulate_over_k;
use super::value_shift_correction::Walk;
use super::{consecutive, unsupported};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::helpers::Helper;
use crate::error::CodegenError;

/// Sums kept apart along `k` (`vpdpbusd` has a latency of several cycles).
const SUMS: u32 = 4;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::VectorShiftCorrection, spec, e, why);
    let &[1, depth, lanes] = spec.shape.dims() else { return Err(fail(e, "not one batch")) };
    let (rhs, out) = (&views[0], &views[1]);
    let (p, c_type) = match lanes {
        16 => ("_mm512", "__m512i"),
        8 => ("_mm256", "__m256i"),
        _ => return Err(fail(e, "not 8 or 16 columns")),
    };
    let run = column_run(&spec.operands[0]);
    let (strip, isa) = match run {
        Some(ColumnRun::Rows) => (1, row_isa(lanes)),
        Some(ColumnRun::Strips(4)) => (4, quad_isa(lanes)),
        _ => return Err(fail(e, "rhs is neither rows nor VNNI quads")),
    };
    let isa = isa.ok_or_else(|| fail(e, "no instruction for these lanes"))?;
    let width = if lanes == 16 { IsaFeature::Avx512f } else { IsaFeature::Avx2 };
    e.require(width, "the correction's vectors")?;
    e.require(isa, if strip == 4 { "vpdpbusd" } else { "sign extension" })?;
    // The lanes of one step: (k, n) for n in columns and, for quads, the four k inside each.
    let step = |first: u32| -> Vec<Vec<u32>> {
        (0..lanes).flat_map(|n| (0..strip).map(move |r| vec![0, first + r, n])).collect()
    };
    let last = depth - strip;
    let mut points = step(0);
    if strip == 1 {
        points.sort_by_key(|p| p[2]);
    }
    consecutive(e, rhs, &points)?;
    consecutive(e, rhs, &step(last))?;
    let walk = Walk::find(e, rhs, depth / strip, 1, |q| vec![0, q * strip, 0])?
        .ok_or_else(|| fail(e, "the steps along k are not a constant stride apart"))?;
    let stored = consecutive(e, out, &(0..lanes).map(|n| vec![n]).collect::<Vec<_>>())?;

    let id = e.fresh();
    let (r, s, kv, c) = (format!("r{id}"), format!("s{id}"), format!("k{id}"), format!("c{id}"));
    let start = e.offset_at(rhs, &[0, 0, 0])?;
    let address = e.address(rhs, &start)?;
    let sums = (depth / strip).min(SUMS);
    e.out.open("{");
    e.out.line(format!("const int8_t *{r} = {address};"));
    let zero = format!("{p}_setzero_si{}", lanes * 32);
    let inits: Vec<String> = (0..sums).map(|j| format!("{s}_{j} = {zero}()")).collect();
    e.out.line(format!("{c_type} {};", inits.join(", ")));
    let stride = walk.stride;
    if strip == 4 {
        let (helper, name) = if lanes == 16 {
            (Helper::DpbusdM512, "morello_dpbusd_m512")
        } else {
            (Helper::DpbusdM256, "morello_dpbusd_m256")
        };
        e.helpers.insert(helper);
        e.out.line(format!("const {c_type} {c} = {p}_set1_epi8((char)-128);"));
        let load = |offset: &str| {
            if lanes == 16 {
                format!("_mm512_loadu_si512((const void *)({r} + ({offset}) / 4 * {stride}))")
            } else {
                format!("_mm256_loadu_si256((const __m256i *)({r} + ({offset}) / 4 * {stride}))")
            }
        };
        accumulate_over_k(e, depth, 4, sums, &kv, |j, offset| {
            Ok(format!("{s}_{j} = {name}({s}_{j}, {c}, {});", load(offset)))
        })?;
    } else {
        let widen = |offset: &str| {
            if lanes == 16 {
                format!(
                    "_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)({r} + ({offset}) * {stride})))"
                )
            } else {
                format!(
                    "_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)({r} + ({offset}) * {stride})))"
                )
            }
        };
        accumulate_over_k(e, depth, 1, sums, &kv, |j, offset| {
            Ok(format!("{s}_{j} = {p}_add_epi32({s}_{j}, {});", widen(offset)))
        })?;
    }
    let mut width = 1;
    while width < sums {
        for j in (0..sums).step_by(2 * width as usize) {
            if j + width < sums {
                e.out.line(format!("{s}_{j} = {p}_add_epi32({s}_{j}, {s}_{});", j + width));
            }
        }
        width *= 2;
    }
    let times_128 = if strip == 4 { format!("{s}_0") } else { format!("{p}_slli_epi32({s}_0, 7)") };
    e.out.line(format!("{s}_0 = {p}_sub_epi32({zero}(), {times_128});"));
    let address = e.address(out, &stored)?;
    e.out.line(if lanes == 16 {
        format!("_mm512_storeu_si512((void *)({address}), {s}_0);")
    } else {
        format!("_mm256_storeu_si256((__m256i *)({address}), {s}_0);")
    });
    e.out.close();
    Ok(())
}
