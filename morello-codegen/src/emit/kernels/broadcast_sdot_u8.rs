//! `BroadcastSdotU8`: `out[v] += Σ_{j<4} lhs[j] * rhs[j][v]` for u8 `lhs`, with AArch64's signed
//! dot product on `lhs - 128` and the correction `-sdot(splat(-128), rhs)`, exact for every u8
//! and i8 (the identity is in the kernel's definition).
//!
//! ```text
//! {
//!   const int8x16_t q7 = vreinterpretq_s8_u32(vdupq_n_u32((... lhs bytes ...) ^ 0x80808080u));
//!   const int8x16_t m7 = vdupq_n_s8(-128);
//!   const int32x4_t z7 = vdupq_n_s32(0);
//!   const int8x16_t w7_0 = vld1q_s8(&rhs[4 * n_1 + ...]);
//!   v3_0 = vsubq_s32(vdotq_s32(v3_0, w7_0, q7), vdotq_s32(z7, w7_0, m7));
//! }
//! ```
//!
//! The checks and the layout are `BroadcastSdot`'s ([`super::broadcast_sdot::emit_quad`]).

use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;

use super::broadcast_sdot::{Activations, emit_quad};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    emit_quad(e, spec, views, KernelKind::BroadcastSdotU8, Activations::UnsignedByOffset)
}
