//! `VectorScale`: `y = y * (1 / sum)` on one row.
//!
//! ```text
//! {
//!   float *y9 = &y[...];  const float r9 = 1.0f / sum;  __m256 rv9 = _mm256_set1_ps(r9);
//!   int64_t i9 = 0;
//!   for (; i9 + 8 <= n; i9 += 8) _mm256_storeu_ps(y9 + i9, _mm256_mul_ps(_mm256_loadu_ps(y9 + i9), rv9));
//!   for (; i9 < n; i9++) y9[i9] *= r9;   (when n is not a multiple of the lanes)
//! }
//! ```
//!
//! The row must be one contiguous run (checked).

use morello_core::kernels::KernelKind;
use morello_core::spec::{LogicalSpec, PrimitiveKind};

use super::vector_max::row_vector;
use super::{run_start, unsupported};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::VectorScale, spec, e, why);
    if spec.kind != PrimitiveKind::SoftmaxScale {
        return Err(fail(e, "not softmax's scale pass"));
    }
    let &[1, n] = spec.shape.dims() else { return Err(fail(e, "not one row")) };
    let vector = row_vector(e)?;
    let lanes = vector.lanes;
    let start = run_start(e, &views[1], 2, 1, n)?;
    let address = e.address(&views[1], &start)?;
    let sum = e.element(&views[0], &[0])?;
    let id = e.fresh();
    let (y, r, i) = (format!("y{id}"), format!("r{id}"), format!("i{id}"));
    e.out.open("{");
    e.out.line(format!("float *{y} = {address};"));
    e.out.line(format!("const float {r} = 1.0f / {sum};"));
    e.out.line(format!("{} {r}_v = {};", vector.c_type(), vector.splat(&r)));
    e.out.line(format!("int64_t {i} = 0;"));
    let product = vector.mul_f32(&vector.load(&format!("{y} + {i}")), &format!("{r}_v"));
    e.out.line(format!(
        "for (; {i} + {lanes} <= {n}; {i} += {lanes}) {};",
        vector.store(&format!("{y} + {i}"), &product)
    ));
    // No scalar tail when the vectors cover the row: gcc (12, -O2) warns that the dead loop's
    // index would overflow, and warnings are errors in the tests.
    if n % lanes != 0 {
        e.out.line(format!("for (; {i} < {n}; {i}++) {y}[{i}] *= {r};"));
    }
    e.out.close();
    Ok(())
}
