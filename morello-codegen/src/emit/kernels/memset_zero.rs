//! `MemsetZero`: zeroes a tensor that is one contiguous run of its buffer with `memset` (zero
//! bits are zero in every dtype).
//!
//! ```text
//! memset(&buf[start], 0, volume * element bytes);
//! ```

use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;

use super::{unsupported, zeros};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let out = spec.output();
    if !out.is_fully_contiguous() {
        return Err(unsupported(KernelKind::MemsetZero, spec, e, "the tensor is not one contiguous run"));
    }
    let start = e.offset_at(&views[0], &zeros(spec, 0))?;
    let address = e.address(&views[0], &start)?;
    let bytes = out.shape.volume() * u64::from(out.dtype.size_bytes());
    e.out.line(format!("memset({address}, 0, {bytes});"));
    Ok(())
}
