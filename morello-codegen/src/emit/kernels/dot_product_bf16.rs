//! `DotProductBf16`: `out += Σ_k lhs[k] * rhs[k]` with bf16 inputs and an f32 output, 32 pairs
//! per AVX-512 BF16 `vdpbf16ps`, four 16-lane f32 accumulators.
//!
//! ```text
//! {
//!   const uint16_t *a4 = &lhs[...];  const uint16_t *b4 = &rhs[...];
//!   __m512 acc4_0 = _mm512_setzero_ps(), ...;
//!   acc4_0 = _mm512_dpbf16_ps(acc4_0, (__m512bh)_mm512_loadu_si512((const void *)(a4 + 0)),
//!                                     (__m512bh)_mm512_loadu_si512((const void *)(b4 + 0)));
//!   ...
//!   out[...] += _mm512_reduce_add_ps(acc4_0);
//! }
//! ```
//!
//! Lane `i` of an accumulator gains `a[2i] b[2i] + a[2i+1] b[2i+1]`: pairs of the same `k`, so
//! the total is the dot product. Both inputs must be contiguous runs in `k` order (checked).

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;

use super::dot_product_loop::{DotProduct, accumulate_over_k, open, sum_accumulators};
use super::unsupported;
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::vector::{VectorIsa, VectorType};
use crate::error::CodegenError;

/// bf16 pairs per instruction.
const STEP: u32 = 32;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::DotProductBf16, spec, e, why);
    let &[1, 1, k, 1] = spec.shape.dims() else { return Err(fail(e, "not a [1, 1, K, 1] dot product")) };
    let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).collect();
    if dtypes != [Dtype::Bf16, Dtype::Bf16, Dtype::F32] || k % STEP != 0 {
        return Err(fail(e, "not bf16 x bf16 -> f32 with K a multiple of 32"));
    }
    let vector = VectorType::new(VectorIsa::X86, Dtype::F32, 16)?;
    let DotProduct { a, b, acc, kv, out, registers } = open(e, spec, views, STEP, "uint16_t", vector)?;
    let update = |j: u32, offset: &str| {
        let load = |p: &str| format!("(__m512bh)_mm512_loadu_si512((const void *)({p} + {offset}))");
        format!("{acc}_{j} = _mm512_dpbf16_ps({acc}_{j}, {}, {});", load(&a), load(&b))
    };
    accumulate_over_k(e, k, STEP, registers, &kv, |j, offset| Ok(update(j, offset)))?;
    sum_accumulators(e, vector, &acc, registers);
    e.out.line(format!("{out} += _mm512_reduce_add_ps({acc}_0);"));
    e.out.close();
    Ok(())
}
