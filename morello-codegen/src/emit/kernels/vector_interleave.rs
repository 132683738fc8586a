//! `VectorInterleave`: `s` rows of 16 bytes (`s` = 2 or 4) copied into one run, column after
//! column, with 128-bit unpacks.
//!
//! ```text
//! {
//!   const __m128i q5_0 = _mm_loadu_si128((const __m128i *)(&rhs[256 * k_1]));        // row 0
//!   ...                                                                               // rows 1-3
//!   const __m128i q5_4 = _mm_unpacklo_epi8(q5_0, q5_1);   // r0 r1 pairs, columns 0-7
//!   const __m128i q5_5 = _mm_unpackhi_epi8(q5_0, q5_1);   // columns 8-15
//!   const __m128i q5_6 = _mm_unpacklo_epi8(q5_2, q5_3);   // r2 r3 pairs, columns 0-7
//!   const __m128i q5_7 = _mm_unpackhi_epi8(q5_2, q5_3);
//!   _mm_storeu_si128((__m128i *)(&packed[...]), _mm_unpacklo_epi16(q5_4, q5_6));   // columns 0-3
//!   ... unpackhi_epi16(q5_4, q5_6), then the same of q5_5, q5_7                   // columns 4-15
//! }
//! ```
//!
//! Two rows store their byte unpacks directly (columns 0-7, then 8-15). Checked before writing:
//! each row's 16 bytes are one run of the source, and the destination holds element `(r, c)` at
//! `s c + r` of one run, so store `j` covers columns `16 j / s` to `16 (j + 1) / s - 1`.

use morello_core::kernels::KernelKind;
use morello_core::kernels::{StripTile, strip_tile};
use morello_core::spec::LogicalSpec;
use morello_core::target::IsaFeature;

use super::{consecutive, unsupported};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

/// Bytes in a row and in each store.
const ROW: u32 = 16;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::VectorInterleave, spec, e, why);
    let rank = spec.shape.rank();
    let Some(StripTile { rows, k, n }) = strip_tile(spec) else {
        return Err(fail(e, "not 2 or 4 rows of 16 values"));
    };
    if spec.operands.iter().any(|o| o.dtype.size_bytes() != 1 || o.dtype != spec.operands[0].dtype) {
        return Err(fail(e, "not one 8-bit dtype"));
    }
    if views.iter().any(|v| e.in_vector_registers(v)) {
        return Err(fail(e, "a side is in registers"));
    }
    e.require(IsaFeature::Avx, "128-bit byte unpacks")?;
    let point = |r: u32, c: u32| {
        let mut p = vec![0; rank];
        p[k] = r;
        p[n] = c;
        p
    };
    // Each source row one run.
    let mut loads = Vec::new();
    for r in 0..rows {
        let run: Vec<Vec<u32>> = (0..ROW).map(|c| point(r, c)).collect();
        let start = consecutive(e, &views[0], &run)?;
        loads.push(e.address(&views[0], &start)?);
    }
    // The destination one run, column after column.
    let columns: Vec<Vec<u32>> = (0..ROW).flat_map(|c| (0..rows).map(move |r| point(r, c))).collect();
    consecutive(e, &views[1], &columns)?;
    let per_store = ROW / rows;
    let mut stores = Vec::new();
    for j in 0..rows {
        let start = e.offset_at(&views[1], &point(0, j * per_store))?;
        stores.push(e.address(&views[1], &start)?);
    }
    let id = e.fresh();
    let name = |i: usize| format!("q{id}_{i}");
    e.out.open("{");
    for (i, address) in loads.iter().enumerate() {
        e.out.line(format!("const __m128i {} = _mm_loadu_si128((const __m128i *)({address}));", name(i)));
    }
    // Round 1: bytes of rows (0, 1) and (2, 3) side by side, low and high halves of the columns.
    let pairs = usize::try_from(rows / 2).expect("2 or 4 rows");
    for p in 0..pairs {
        for (half, op) in ["lo", "hi"].iter().enumerate() {
            let (a, b) = (name(2 * p), name(2 * p + 1));
            e.out.line(format!("const __m128i {} = _mm_unpack{op}_epi8({a}, {b});", name(4 + 2 * p + half)));
        }
    }
    let store = |address: &str, value: String| format!("_mm_storeu_si128((__m128i *)({address}), {value});");
    if rows == 2 {
        for (j, address) in stores.iter().enumerate() {
            e.out.line(store(address, name(4 + j)));
        }
    } else {
        // Round 2: the 16-bit pairs of rows (0, 1) beside those of (2, 3): four rows per column.
        for (j, address) in stores.iter().enumerate() {
            let (half, op) = (j / 2, if j % 2 == 0 { "lo" } else { "hi" });
            let value = format!("_mm_unpack{op}_epi16({}, {})", name(4 + half), name(6 + half));
            e.out.line(store(address, value));
        }
    }
    e.out.close();
    Ok(())
}
