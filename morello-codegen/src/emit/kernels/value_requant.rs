//! `ValueRequant`: `out = requant(acc)` on one i32 value.
//!
//! ```text
//! {
//!   float rq_y = (float)acc * scale;
//!   const float rq_lo = (float)(0 - (int32_t)zero_point), rq_hi = (float)(255 - (int32_t)zero_point);
//!   rq_y = rq_y > rq_lo ? rq_y : rq_lo;
//!   rq_y = rq_y < rq_hi ? rq_y : rq_hi;
//!   out = (uint8_t)((int32_t)nearbyintf(rq_y) + (int32_t)zero_point);
//! }
//! ```
//!
//! The operations of `requantize` in `morello-core`'s operators, in its order: `(float)` and
//! `nearbyintf` round to nearest even in the default rounding mode, and the comparisons send NaN
//! to the lower bound.

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;

use super::{unsupported, zeros};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).collect();
    let (lo, hi, c_type) = match dtypes.as_slice() {
        [Dtype::I32, Dtype::F32, Dtype::U8, Dtype::U8] => (0, 255, "uint8_t"),
        [Dtype::I32, Dtype::F32, Dtype::I8, Dtype::I8] => (-128, 127, "int8_t"),
        _ => {
            return Err(unsupported(
                KernelKind::ValueRequant,
                spec,
                e,
                "not i32 with f32 scales into u8 or i8",
            ));
        }
    };
    let [acc, scale, zero_point, out] = [0, 1, 2, 3].map(|i| e.element(&views[i], &zeros(spec, i)));
    let (acc, scale, zero_point, out) = (acc?, scale?, zero_point?, out?);
    e.needs_math = true;
    e.out.open("{");
    e.out.line(format!("float rq_y = (float){acc} * {scale};"));
    e.out.line(format!(
        "const float rq_lo = (float)({lo} - (int32_t){zero_point}), rq_hi = (float)({hi} - (int32_t){zero_point});"
    ));
    e.out.line("rq_y = rq_y > rq_lo ? rq_y : rq_lo;");
    e.out.line("rq_y = rq_y < rq_hi ? rq_y : rq_hi;");
    e.out.line(format!("{out} = ({c_type})((int32_t)nearbyintf(rq_y) + (int32_t){zero_point});"));
    e.out.close();
    Ok(())
}
