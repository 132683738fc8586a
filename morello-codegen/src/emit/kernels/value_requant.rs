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
//! With a bias the sum is `(int32_t)((uint32_t)acc + (uint32_t)bias)` (wrapping, without C's
//! undefined signed overflow); with ReLU the lower bound is `0.0f`. The operations of
//! `requantize` in `morello-core`'s operators, in its order: `(float)` and `nearbyintf` round to
//! nearest even in the default rounding mode, and the comparisons send NaN to the lower bound.

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::{LogicalSpec, PrimitiveKind, RequantEpilogue};

use super::{unsupported, zeros};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::ValueRequant, spec, e, why);
    let PrimitiveKind::Requant { epilogue } = spec.kind else { return Err(fail(e, "not a requantization")) };
    let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).collect();
    let (lo, hi, c_type) = match (epilogue.has_bias(), dtypes.as_slice()) {
        (false, [Dtype::I32, Dtype::F32, Dtype::U8, Dtype::U8])
        | (true, [Dtype::I32, Dtype::I32, Dtype::F32, Dtype::U8, Dtype::U8]) => (0, 255, "uint8_t"),
        (false, [Dtype::I32, Dtype::F32, Dtype::I8, Dtype::I8])
        | (true, [Dtype::I32, Dtype::I32, Dtype::F32, Dtype::I8, Dtype::I8]) => (-128, 127, "int8_t"),
        _ => return Err(fail(e, "not i32 (and an i32 bias) with f32 scales into u8 or i8")),
    };
    if views.len() != dtypes.len() {
        return Err(fail(e, "not a view per operand"));
    }
    let elements =
        (0..views.len()).map(|i| e.element(&views[i], &zeros(spec, i))).collect::<Result<Vec<_>, _>>()?;
    let (acc, bias, [scale, zero_point, out]) = match elements.as_slice() {
        [acc, scale, zero_point, out] => (acc.clone(), None, [scale, zero_point, out]),
        [acc, bias, scale, zero_point, out] => (acc.clone(), Some(bias), [scale, zero_point, out]),
        _ => return Err(fail(e, "not the operands of its form")),
    };
    let sum = match bias {
        Some(bias) => format!("(int32_t)((uint32_t){acc} + (uint32_t){bias})"),
        None => acc,
    };
    let lower = if epilogue == RequantEpilogue::BiasRelu {
        "0.0f".to_string()
    } else {
        format!("(float)({lo} - (int32_t){zero_point})")
    };
    e.needs_math = true;
    e.out.open("{");
    e.out.line(format!("float rq_y = (float){sum} * {scale};"));
    e.out.line(format!("const float rq_lo = {lower}, rq_hi = (float)({hi} - (int32_t){zero_point});"));
    e.out.line("rq_y = rq_y > rq_lo ? rq_y : rq_lo;");
    e.out.line("rq_y = rq_y < rq_hi ? rq_y : rq_hi;");
    e.out.line(format!("{out} = ({c_type})((int32_t)nearbyintf(rq_y) + (int32_t){zero_point});"));
    e.out.close();
    Ok(())
}
