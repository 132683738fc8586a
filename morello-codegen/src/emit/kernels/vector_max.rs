//! `VectorMax`: the maximum of one row, four vector maxima in a loop, then the lanes and the tail.
//!
//! ```text
//! {
//!   const float *x9 = &x[...];
//!   __m256 m9_0 = _mm256_set1_ps(-INFINITY), m9_1 = m9_0, m9_2 = m9_0, m9_3 = m9_0;
//!   int64_t i9 = 0;
//!   for (; i9 + 32 <= n; i9 += 32) { m9_0 = _mm256_max_ps(m9_0, _mm256_loadu_ps(x9 + i9)); ... }
//!   for (; i9 + 8 <= n; i9 += 8) m9_0 = _mm256_max_ps(m9_0, _mm256_loadu_ps(x9 + i9));
//!   (m9_0 = the maximum of the four; its lanes stored, folded; then the tail elements)
//!   out = r9;                                                 (MaxAccum: the larger of both)
//! }
//! ```
//!
//! The row must be one contiguous run (checked).

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::{LogicalSpec, PrimitiveKind};

use super::{run_start, unsupported};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::vector::{VectorIsa, VectorType};
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::VectorMax, spec, e, why);
    let PrimitiveKind::Max { accum } = spec.kind else { return Err(fail(e, "not a row maximum")) };
    let &[1, n] = spec.shape.dims() else { return Err(fail(e, "not one row")) };
    let vector = row_vector(e)?;
    let lanes = vector.lanes;
    let start = run_start(e, &views[0], 2, 1, n)?;
    let address = e.address(&views[0], &start)?;
    let out = e.element(&views[1], &[0])?;
    e.needs_math = true;
    let id = e.fresh();
    let (x, m, i, r) = (format!("x{id}"), format!("m{id}"), format!("i{id}"), format!("r{id}"));
    let ty = vector.c_type();
    e.out.open("{");
    e.out.line(format!("const float *{x} = {address};"));
    e.out.line(format!(
        "{ty} {m}_0 = {}, {m}_1 = {m}_0, {m}_2 = {m}_0, {m}_3 = {m}_0;",
        vector.splat("-INFINITY")
    ));
    e.out.line(format!("int64_t {i} = 0;"));
    e.out.open(format!("for (; {i} + {} <= {n}; {i} += {}) {{", 4 * lanes, 4 * lanes));
    for j in 0..4 {
        let load = vector.load(&format!("{x} + {i} + {}", j * lanes));
        e.out.line(format!("{m}_{j} = {};", vector.max_f32(&format!("{m}_{j}"), &load)));
    }
    e.out.close();
    let load = vector.load(&format!("{x} + {i}"));
    e.out.line(format!(
        "for (; {i} + {lanes} <= {n}; {i} += {lanes}) {m}_0 = {};",
        vector.max_f32(&format!("{m}_0"), &load)
    ));
    let pairs = vector.max_f32(
        &vector.max_f32(&format!("{m}_0"), &format!("{m}_1")),
        &vector.max_f32(&format!("{m}_2"), &format!("{m}_3")),
    );
    e.out.line(format!("{m}_0 = {pairs};"));
    e.out.line(format!("float {r}_lanes[{lanes}];"));
    e.out.line(format!("{};", vector.store(&format!("{r}_lanes"), &format!("{m}_0"))));
    e.out.line(format!("float {r} = {r}_lanes[0];"));
    e.out.line(format!(
        "for (int {r}_j = 1; {r}_j < {lanes}; {r}_j++) {r} = {r}_lanes[{r}_j] > {r} ? {r}_lanes[{r}_j] : {r};"
    ));
    e.out.line(format!("for (; {i} < {n}; {i}++) {r} = {x}[{i}] > {r} ? {x}[{i}] : {r};"));
    if accum {
        e.out.line(format!("{out} = {r} > {out} ? {r} : {out};"));
    } else {
        e.out.line(format!("{out} = {r};"));
    }
    e.out.close();
    Ok(())
}

/// The f32 vector of the target's widest registers, whose instruction set the code needs.
pub(super) fn row_vector(e: &mut Emitter<'_>) -> Result<VectorType, CodegenError> {
    let vector = VectorType::new(VectorIsa::of(e.target), Dtype::F32, e.target.max_vector_bytes() / 4)?;
    if let Some(feature) = vector.feature() {
        e.require(feature, "the row's vectors")?;
    }
    Ok(vector)
}
