//! `VectorFill`: sets whole vector registers to the fill value.
//!
//! ```text
//! v5_0 = _mm256_setzero_ps();          (zero)
//! v5_1 = _mm256_set1_ps(-INFINITY);    (any other value)
//! ```

use morello_core::interp::{Value, fill_value};
use morello_core::kernels::KernelKind;
use morello_core::spec::{LogicalSpec, PrimitiveKind};

use super::{literal, unsupported, whole_registers};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let PrimitiveKind::Fill { value } = spec.kind else {
        return Err(unsupported(KernelKind::VectorFill, spec, e, "not a fill"));
    };
    let dtype = spec.output().dtype;
    let vector = e.vector_type(&views[0])?;
    let value = fill_value(value, dtype);
    let is_zero = matches!(value, Value::Int(0)) || matches!(value, Value::Float(x) if x.to_bits() == 0);
    let text = if is_zero {
        vector.zero()
    } else {
        let scalar = literal(e, value, dtype);
        vector.splat(&scalar)
    };
    for register in whole_registers(e, &views[0], &spec.shape)? {
        let name = e.register_name(&views[0], register.index);
        e.out.line(format!("{name} = {text};"));
    }
    Ok(())
}
