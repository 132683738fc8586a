//! `MultAdd`: `out += lhs * rhs` on one element of each operand (a matmul or convolution of
//! volume 1).
//!
//! ```text
//! f32:          out += lhs * rhs;
//! bf16 -> f32:  out += morello_bf16_to_f32(lhs) * morello_bf16_to_f32(rhs);
//! bf16:         out = morello_f32_to_bf16(morello_bf16_to_f32(out) + ...);
//! u32:          out += lhs * rhs;                        (unsigned: wraps)
//! integers:     out = (T)((uint32_t)out + (uint32_t)lhs * (uint32_t)rhs);   (wraps; no signed
//!               overflow, no promotion to int)
//! u8/i8 x i8 -> i32:
//!               out = (int32_t)((uint32_t)out + (uint32_t)((int32_t)lhs * (int32_t)rhs));
//!               (the product is exact in int32, |lhs rhs| <= 32640; the sum wraps as the
//!               interpreter's does, which a valid spec's reduction length never reaches)
//! ```

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;

use super::{unsupported, zeros};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::c_type;
use crate::emit::helpers::Helper;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let lhs = e.element(&views[0], &zeros(spec, 0))?;
    let rhs = e.element(&views[1], &zeros(spec, 1))?;
    let out = e.element(&views[2], &zeros(spec, 2))?;
    let (input, output) = (spec.operands[0].dtype, spec.output().dtype);
    let line = match (input, output) {
        (Dtype::F32, Dtype::F32) => format!("{out} += {lhs} * {rhs};"),
        (Dtype::Bf16, Dtype::F32) => {
            e.helpers.insert(Helper::Bf16ToF32);
            format!("{out} += morello_bf16_to_f32({lhs}) * morello_bf16_to_f32({rhs});")
        }
        (Dtype::Bf16, Dtype::Bf16) => {
            e.helpers.extend([Helper::Bf16ToF32, Helper::F32ToBf16]);
            format!(
                "{out} = morello_f32_to_bf16(morello_bf16_to_f32({out}) + morello_bf16_to_f32({lhs}) * morello_bf16_to_f32({rhs}));"
            )
        }
        (Dtype::U32, Dtype::U32) => format!("{out} += {lhs} * {rhs};"),
        (Dtype::U8 | Dtype::I8, Dtype::I32) if spec.operands[1].dtype == Dtype::I8 => {
            format!("{out} = (int32_t)((uint32_t){out} + (uint32_t)((int32_t){lhs} * (int32_t){rhs}));")
        }
        (a, b) if a == b && !a.is_float() => {
            let t = c_type(b).c_name();
            format!("{out} = ({t})((uint32_t){out} + (uint32_t){lhs} * (uint32_t){rhs});")
        }
        _ => return Err(unsupported(KernelKind::MultAdd, spec, e, "these dtypes")),
    };
    e.out.line(line);
    Ok(())
}
