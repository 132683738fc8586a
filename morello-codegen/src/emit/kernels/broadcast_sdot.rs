//! `BroadcastSdot`: `out[v] += Σ_{j<4} lhs[j] * rhs[j][v]`, four i8 values of `lhs` packed into
//! one 32-bit word and broadcast, each output register's 4 lanes updated by `vdotq_s32` (AArch64
//! `sdot`) with the 16 i8 values of `rhs` it meets (four per lane, the `[K/4][N][4]` layout).
//!
//! ```text
//! {
//!   const int8x16_t q7 = vreinterpretq_s8_u32(vdupq_n_u32(
//!       (uint32_t)(uint8_t)lhs[k_2] | ((uint32_t)(uint8_t)lhs[k_2 + 1] << 8) | ...));
//!   v3_0 = vdotq_s32(v3_0, vld1q_s8(&rhs[4 * n_1 + ...]), q7);
//! }
//! ```
//!
//! Checked before writing: `lhs`'s four values are consecutive in `k` order, and lane `j` of each
//! output register meets the four values of `k` of its column at offsets `4 j .. 4 j + 3` of one
//! run of `rhs`, so one load gives `sdot` the bytes of every lane. The word is built from the four
//! bytes (byte `j` of each 32-bit lane is value `j` of `k` on little-endian AArch64, as it is in
//! memory), which reads `lhs` without an aliasing or alignment assumption.
//!
//! `BroadcastSdotU8` (u8 `lhs`) writes the same step through [`emit_quad`] with the offset
//! correction: the word XOR `0x80808080` (each byte `x - 128` as i8) and, per register, the
//! `sdot` of its `rhs` with a splat of -128 subtracted.

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;
use morello_core::target::IsaFeature;

use super::{Register, consecutive, project, unsupported, whole_registers};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::vector::VectorIsa;
use crate::error::CodegenError;

/// i32 lanes of an output register (128-bit NEON vectors).
const LANES: u32 = 4;

/// Values of `k` one `sdot` sums per lane.
const QUAD: u32 = 4;

/// How `lhs`'s bytes enter the signed dot product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Activations {
    /// i8 `lhs`: as they are.
    Signed,
    /// u8 `lhs`: shifted by -128 into i8, with `128 * Σ rhs` added back per lane.
    UnsignedByOffset,
}

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    emit_quad(e, spec, views, KernelKind::BroadcastSdot, Activations::Signed)
}

/// The AArch64 int8 register-block step over four values of `k` for `kernel`, its `lhs` bytes
/// entering `sdot` as `activations` says.
pub(super) fn emit_quad(
    e: &mut Emitter<'_>,
    spec: &LogicalSpec,
    views: &[View],
    kernel: KernelKind,
    activations: Activations,
) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(kernel, spec, e, why);
    if spec.shape.dims() != [1, 1, QUAD, spec.shape.dim(3)] {
        return Err(fail(e, "not four values of k of a row [1, 1, 4, n]"));
    }
    let lhs_dtype = match activations {
        Activations::Signed => Dtype::I8,
        Activations::UnsignedByOffset => Dtype::U8,
    };
    let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).collect();
    if dtypes != [lhs_dtype, Dtype::I8, Dtype::I32] {
        return Err(fail(e, &format!("not {lhs_dtype} x i8 -> i32")));
    }
    let vector = e.vector_type(&views[2])?;
    if vector.isa != VectorIsa::Neon || vector.lanes != LANES {
        return Err(fail(e, "the output's registers are not NEON vectors of 4 i32 lanes"));
    }
    e.require(IsaFeature::Neon, "128-bit integer vectors")?;
    e.require(IsaFeature::Dotprod, "vdotq_s32 (sdot)")?;
    let quad: Vec<Vec<u32>> = (0..QUAD).map(|k| vec![0, 0, k]).collect();
    consecutive(e, &views[0], &quad)?;
    let mut bytes = Vec::new();
    for (j, point) in quad.iter().enumerate() {
        let byte = format!("(uint32_t)(uint8_t){}", e.element(&views[0], point)?);
        bytes.push(if j == 0 { byte } else { format!("({byte} << {})", 8 * j) });
    }
    let mut word = bytes.join(" | ");
    if activations == Activations::UnsignedByOffset {
        word = format!("({word}) ^ 0x80808080u");
    }
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
    let id = e.fresh();
    let broadcast = format!("q{id}");
    e.out.open("{");
    e.out.line(format!("const int8x16_t {broadcast} = vreinterpretq_s8_u32(vdupq_n_u32({word}));"));
    match activations {
        Activations::Signed => {
            for (register, address) in rows {
                let out = e.register_name(&views[2], register);
                e.out.line(format!("{out} = vdotq_s32({out}, vld1q_s8({address}), {broadcast});"));
            }
        }
        Activations::UnsignedByOffset => {
            let (minus128, zero) = (format!("m{id}"), format!("z{id}"));
            e.out.line(format!("const int8x16_t {minus128} = vdupq_n_s8(-128);"));
            e.out.line(format!("const int32x4_t {zero} = vdupq_n_s32(0);"));
            for (i, (register, address)) in rows.into_iter().enumerate() {
                let out = e.register_name(&views[2], register);
                let row = format!("w{id}_{i}");
                e.out.line(format!("const int8x16_t {row} = vld1q_s8({address});"));
                // x w = (x - 128) w - (-128) w, each sdot exact in i32.
                e.out.line(format!(
                    "{out} = vsubq_s32(vdotq_s32({out}, {row}, {broadcast}), vdotq_s32({zero}, {row}, {minus128}));"
                ));
            }
        }
    }
    e.out.close();
    Ok(())
}
