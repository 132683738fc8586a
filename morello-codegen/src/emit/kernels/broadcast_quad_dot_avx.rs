//! `BroadcastQuadDotAvx`: `out[v] += Σ_{j<4} lhs[j] * rhs[j][v]`, four u8 values of `lhs` loaded
//! as one 32-bit word and broadcast, each output register's 8 lanes updated by AVX-VNNI's
//! `vpdpbusd` with the 32 i8 values of `rhs` it meets (four per lane, the VNNI layout).
//!
//! ```text
//! {
//!   const __m256i q7 = _mm256_broadcastd_epi32(_mm_loadu_si32((const void *)(&lhs[k_2])));
//!   v3_0 = morello_dpbusd_m256(v3_0, q7, v5_0);
//!   v3_1 = morello_dpbusd_m256(v3_1, q7, v5_1);
//! }
//! ```
//!
//! `morello_dpbusd_m256` is the VEX-encoded `vpdpbusd` in an `asm` statement: gcc's
//! `_mm256_dpbusd_avx_epi32` spills register blocks as its 512-bit form does (`Helper::DpbusdM256`).
//! The checks are `BroadcastQuadDot`'s, at 8 lanes (the kernel's definition takes `rhs` in
//! registers only; the emitter would load it from one run of memory as the 512-bit form does).

use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;
use morello_core::target::IsaFeature;

use super::broadcast_quad_dot::{QuadForm, emit_form};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::helpers::Helper;
use crate::error::CodegenError;

const FORM: QuadForm = QuadForm {
    kernel: KernelKind::BroadcastQuadDotAvx,
    lanes: 8,
    c_type: "__m256i",
    broadcast: "_mm256_broadcastd_epi32",
    helper: Helper::DpbusdM256,
    helper_name: "morello_dpbusd_m256",
    isa: &[(IsaFeature::Avx2, "256-bit integer vectors"), (IsaFeature::Avxvnni, "vpdpbusd (AVX-VNNI)")],
};

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    emit_form(e, spec, views, &FORM)
}
