//! `VectorSoftmaxExp`: `y = exp(x - max)`, `sum = Σ y` on one row, two vectors per step.
//!
//! ```text
//! {
//!   const float *x9 = &x[...];  float *y9 = &y[...];
//!   __m256 mx9 = _mm256_set1_ps(max), s9_0 = _mm256_setzero_ps(), s9_1 = s9_0;
//!   int64_t i9 = 0;
//!   for (; i9 + 16 <= n; i9 += 16) {
//!     __m256 e0 = morello_exp_m256(_mm256_sub_ps(_mm256_loadu_ps(x9 + i9), mx9)); ...
//!     _mm256_storeu_ps(y9 + i9, e0); s9_0 = _mm256_add_ps(s9_0, e0); ...
//!   }
//!   (one vector at a time, then the tail with the 4-lane exp on one lane)
//!   sum = morello_hsum_m256(_mm256_add_ps(s9_0, s9_1)) + tail;   (accumulating: sum +=)
//! }
//! ```
//!
//! Both rows must be contiguous runs (checked).

use morello_core::kernels::KernelKind;
use morello_core::spec::{LogicalSpec, PrimitiveKind};

use super::vector_max::row_vector;
use super::{run_start, unsupported};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::VectorSoftmaxExp, spec, e, why);
    let PrimitiveKind::SoftmaxExp { accum } = spec.kind else {
        return Err(fail(e, "not softmax's exp pass"));
    };
    let &[1, n] = spec.shape.dims() else { return Err(fail(e, "not one row")) };
    let vector = row_vector(e)?;
    e.require_fused_multiply_add("the polynomial exp")?;
    let lanes = vector.lanes;
    let x_start = run_start(e, &views[0], 2, 1, n)?;
    let y_start = run_start(e, &views[2], 2, 1, n)?;
    let x_address = e.address(&views[0], &x_start)?;
    let y_address = e.address(&views[2], &y_start)?;
    let max = e.element(&views[1], &[0])?;
    let sum = e.element(&views[3], &[0])?;
    let (exp, helper) = vector.exp("ARG");
    e.helpers.insert(helper);
    let id = e.fresh();
    let (x, y, mx, s, i, t) = (
        format!("x{id}"),
        format!("y{id}"),
        format!("mx{id}"),
        format!("s{id}"),
        format!("i{id}"),
        format!("t{id}"),
    );
    let ty = vector.c_type();
    e.out.open("{");
    e.out.line(format!("const float *{x} = {x_address};"));
    e.out.line(format!("float *{y} = {y_address};"));
    e.out.line(format!("const float {mx}_s = {max};"));
    e.out.line(format!(
        "{ty} {mx} = {}, {s}_0 = {}, {s}_1 = {s}_0;",
        vector.splat(&format!("{mx}_s")),
        vector.zero()
    ));
    e.out.line(format!("int64_t {i} = 0;"));
    let step = |e: &mut Emitter<'_>, j: u32| {
        let arg = vector.sub_f32(&vector.load(&format!("{x} + {i} + {}", j * lanes)), &mx);
        e.out.line(format!("{ty} {t}_{j} = {};", exp.replace("ARG", &arg)));
        e.out.line(format!("{};", vector.store(&format!("{y} + {i} + {}", j * lanes), &format!("{t}_{j}"))));
        e.out.line(format!("{s}_{j} = {};", vector.add_f32(&format!("{s}_{j}"), &format!("{t}_{j}"))));
    };
    e.out.open(format!("for (; {i} + {} <= {n}; {i} += {}) {{", 2 * lanes, 2 * lanes));
    step(e, 0);
    step(e, 1);
    e.out.close();
    e.out.open(format!("for (; {i} + {lanes} <= {n}; {i} += {lanes}) {{"));
    step(e, 0);
    e.out.close();
    let (total, hsum) = vector.horizontal_sum(&vector.add_f32(&format!("{s}_0"), &format!("{s}_1")));
    e.helpers.extend(hsum);
    e.out.line(format!("float {t} = {total};"));
    e.out.open(format!("for (; {i} < {n}; {i}++) {{"));
    let (exp_one, one_helper) = vector.isa.exp_of_one(&format!("{x}[{i}] - {mx}_s"));
    e.helpers.insert(one_helper);
    e.out.line(format!("float {t}_e = {exp_one};"));
    e.out.line(format!("{y}[{i}] = {t}_e;"));
    e.out.line(format!("{t} += {t}_e;"));
    e.out.close();
    let op = if accum { "+=" } else { "=" };
    e.out.line(format!("{sum} {op} {t};"));
    e.out.close();
    Ok(())
}
