//! `ValueAssign`: copies one element, widening bf16 to f32 when the dtypes differ.
//!
//! ```text
//! same dtype:   dst = src;
//! bf16 -> f32:  dst = morello_bf16_to_f32(src);
//! i8 -> u8:     dst = (uint8_t)(src ^ 0x80);        (the shift + 128, `Move`'s doc)
//! ```

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;

use super::{unsupported, zeros};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::helpers::Helper;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let src = e.element(&views[0], &zeros(spec, 0))?;
    let dst = e.element(&views[1], &zeros(spec, 1))?;
    let line = match (spec.operands[0].dtype, spec.operands[1].dtype) {
        (a, b) if a == b => format!("{dst} = {src};"),
        (Dtype::Bf16, Dtype::F32) => {
            e.helpers.insert(Helper::Bf16ToF32);
            format!("{dst} = morello_bf16_to_f32({src});")
        }
        (Dtype::I8, Dtype::U8) => format!("{dst} = (uint8_t)({src} ^ 0x80);"),
        _ => return Err(unsupported(KernelKind::ValueAssign, spec, e, "a conversion between these dtypes")),
    };
    e.out.line(line);
    Ok(())
}
