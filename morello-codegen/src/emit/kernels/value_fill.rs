//! `ValueFill`: sets one element to the fill value (`out = 0.0f;`, `out = -INFINITY;`,
//! `out = INT32_MIN;`, a bf16 as its bits).

use morello_core::interp::fill_value;
use morello_core::kernels::KernelKind;
use morello_core::spec::{LogicalSpec, PrimitiveKind};

use super::{literal, unsupported, zeros};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let PrimitiveKind::Fill { value } = spec.kind else {
        return Err(unsupported(KernelKind::ValueFill, spec, e, "not a fill"));
    };
    let dtype = spec.output().dtype;
    let out = e.element(&views[0], &zeros(spec, 0))?;
    let value = literal(e, fill_value(value, dtype), dtype);
    e.out.line(format!("{out} = {value};"));
    Ok(())
}
