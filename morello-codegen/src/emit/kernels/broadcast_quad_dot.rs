//! `BroadcastQuadDot`: `out[v] += Σ_{j<4} lhs[j] * rhs[j][v]`, four u8 values of `lhs` loaded as
//! one 32-bit word and broadcast, each output register's 16 lanes updated by `vpdpbusd` with the
//! 64 i8 values of `rhs` it meets (four per lane, the VNNI layout).
//!
//! ```text
//! {
//!   const __m512i q7 = _mm512_broadcastd_epi32(_mm_loadu_si32((const void *)(&lhs[k_2])));
//!   v3_0 = _mm512_dpbusd_epi32(v3_0, q7, _mm512_loadu_si512((const void *)(&rhs[4 * n_1 + ...])));
//! }
//! ```
//!
//! Checked before writing: `lhs`'s four values are consecutive in `k` order, and lane `j` of each
//! output register meets the four values of `k` of its column at offsets `4 j .. 4 j + 3` of one
//! run of `rhs`, so one load gives `vpdpbusd` the bytes of every lane. `_mm_loadu_si32` reads the
//! word without an aliasing or alignment assumption.

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;
use morello_core::target::IsaFeature;

use super::{Register, consecutive, project, unsupported, whole_registers};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

/// i32 lanes of an output register (the kernel's definition takes only 512-bit vectors).
const LANES: u32 = 16;

/// Values of `k` one `vpdpbusd` sums per lane.
const QUAD: u32 = 4;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::BroadcastQuadDot, spec, e, why);
    if spec.shape.dims() != [1, 1, QUAD, spec.shape.dim(3)] {
        return Err(fail(e, "not four values of k of a row [1, 1, 4, n]"));
    }
    let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).collect();
    if dtypes != [Dtype::U8, Dtype::I8, Dtype::I32] {
        return Err(fail(e, "not u8 x i8 -> i32"));
    }
    let vector = e.vector_type(&views[2])?;
    if vector.lanes != LANES {
        return Err(fail(e, "the output's registers are not 16 i32 lanes"));
    }
    e.require(IsaFeature::Avx512f, "512-bit vectors")?;
    e.require(IsaFeature::Avx512vnni, "vpdpbusd")?;
    let quad: Vec<Vec<u32>> = (0..QUAD).map(|k| vec![0, 0, k]).collect();
    let quad_start = consecutive(e, &views[0], &quad)?;
    let quad_address = e.address(&views[0], &quad_start)?;
    // The run of `rhs` each output register meets: lane j's four values of k at 4 j .. 4 j + 3.
    let mut rows = Vec::new();
    for Register { index, points } in whole_registers(e, &views[2], &spec.output().shape)? {
        // Output [b, m, n] is iteration [b, m, k, n].
        let sources: Vec<Vec<u32>> = points
            .iter()
            .flat_map(|p| (0..QUAD).map(move |k| project(spec, 1, &[p[0], p[1], k, p[2]])))
            .collect();
        let start = consecutive(e, &views[1], &sources)?;
        rows.push((index, e.address(&views[1], &start)?));
    }
    let broadcast = format!("q{}", e.fresh());
    e.out.open("{");
    e.out.line(format!(
        "const __m512i {broadcast} = _mm512_broadcastd_epi32(_mm_loadu_si32((const void *)({quad_address})));"
    ));
    for (register, address) in rows {
        let out = e.register_name(&views[2], register);
        let row = vector.load(&address);
        e.out.line(format!("{out} = _mm512_dpbusd_epi32({out}, {broadcast}, {row});"));
    }
    e.out.close();
    Ok(())
}
