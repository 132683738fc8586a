//! `ValueAddBias`: `out = act(out + bias)` on one f32 scalar, or one i32 with the identity.
//!
//! ```text
//! out = out + bias;                                         (identity)
//! out = (int32_t)((uint32_t)out + (uint32_t)bias);          (i32: wrapping, no undefined
//!                                                           signed overflow)
//! out = fmaxf(out + bias, 0.0f)  as  (s > 0.0f ? s : 0.0f)  (relu)
//! out = morello_gelu_f32(out + bias);                       (gelu: the 4-lane helper on one lane;
//!                                                           morello_gelu_f32_neon on NEON)
//! ```

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::{Activation, LogicalSpec};

use super::{unsupported, zeros};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::vector::VectorIsa;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let Some(activation) = spec.kind.activation() else {
        return Err(unsupported(KernelKind::ValueAddBias, spec, e, "not an epilogue"));
    };
    let bias = e.element(&views[0], &zeros(spec, 0))?;
    let out = e.element(&views[1], &zeros(spec, 1))?;
    let integer = spec.operands[1].dtype == Dtype::I32;
    let line = match activation {
        Activation::Identity if integer => format!("{out} = (int32_t)((uint32_t){out} + (uint32_t){bias});"),
        _ if integer => {
            return Err(unsupported(KernelKind::ValueAddBias, spec, e, "an activation on integers"));
        }
        Activation::Identity => format!("{out} = {out} + {bias};"),
        Activation::Relu => format!("{{ float s = {out} + {bias}; {out} = s > 0.0f ? s : 0.0f; }}"),
        Activation::Gelu => {
            e.require_fused_multiply_add("the gelu epilogue")?;
            let (call, helper) = VectorIsa::of(e.target).gelu_of_one(&format!("{out} + {bias}"));
            e.helpers.insert(helper);
            format!("{out} = {call};")
        }
    };
    e.out.line(line);
    Ok(())
}
