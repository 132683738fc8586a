//! `VectorAddBias`: `out[v] = act(out[v] + bias[v])` on whole f32 vector registers (i32 ones
//! with the identity: `_mm512_add_epi32`).
//!
//! ```text
//! v5_0 = _mm256_add_ps(v5_0, _mm256_loadu_ps(&bias[8 * n_2]));       (identity)
//! v5_0 = _mm256_max_ps(_mm256_add_ps(v5_0, ...), _mm256_setzero_ps()); (relu)
//! v5_0 = morello_gelu_m256(_mm256_add_ps(v5_0, ...));                 (gelu, a helper)
//! ```
//!
//! The bias elements of a register's lanes must be consecutive in memory (checked).

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::{Activation, LogicalSpec};

use super::{consecutive, unsupported, whole_registers};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let Some(activation) = spec.kind.activation() else {
        return Err(unsupported(KernelKind::VectorAddBias, spec, e, "not an epilogue"));
    };
    let (bias, out) = (&views[0], &views[1]);
    let vector = e.vector_type(out)?;
    let out_dtype = spec.operands[1].dtype;
    let last = spec.shape.rank() - 1;
    for register in whole_registers(e, out, &spec.shape)? {
        let points: Vec<Vec<u32>> = register.points.iter().map(|p| vec![p[last]]).collect();
        let offset = consecutive(e, bias, &points)?;
        let address = e.address(bias, &offset)?;
        let name = e.register_name(out, register.index);
        let loaded = vector.load(&address);
        let value = match activation {
            Activation::Identity if out_dtype == Dtype::I32 => vector.add_i32(&name, &loaded),
            _ if out_dtype != Dtype::F32 => {
                return Err(unsupported(KernelKind::VectorAddBias, spec, e, "an activation on integers"));
            }
            Activation::Identity => vector.add_f32(&name, &loaded),
            Activation::Relu => vector.max_f32(&vector.add_f32(&name, &loaded), &vector.zero()),
            Activation::Gelu => {
                e.require_fused_multiply_add("the gelu epilogue")?;
                let (call, helper) = vector.gelu(&vector.add_f32(&name, &loaded));
                e.helpers.insert(helper);
                call
            }
        };
        e.out.line(format!("{name} = {value};"));
    }
    Ok(())
}
