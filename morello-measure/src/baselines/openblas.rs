//! The `openblas` baseline: OpenBLAS's `cblas_sgemm`, row-major, `beta = 0`, and an epilogue (if
//! any) as a second pass.
//!
//! Linked with `-lopenblas`; the thread count comes from `OPENBLAS_NUM_THREADS`, which the
//! benchmark driver sets. Install with `apt-get install libopenblas-dev`.

use super::epilogue::{matmul_params, pass_flags, second_pass};
use super::{CBaseline, Problem, Unavailable, f32_matmul};

pub(super) fn c_baselines(problem: &Problem) -> Result<Vec<CBaseline>, Unavailable> {
    let problem = f32_matmul(problem)?;
    let function = super::function_name("openblas");
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let (pass, call_pass) = second_pass(&function, problem);
    let params = matmul_params(problem);
    let source = format!(
        r#"/* morello baseline: OpenBLAS cblas_sgemm, row-major {m}x{k} * {k}x{n}. */
#include <math.h>
#include <cblas.h>
{pass}
void {function}({params}) {{
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, {m}, {n}, {k}, 1.0f, lhs, {k}, rhs, {n},
              0.0f, out, {n});
{call_pass}}}
"#
    );
    let (flags, mut link_args) = pass_flags(problem);
    link_args.insert(0, "-lopenblas".into());
    Ok(vec![CBaseline::new("openblas", source, flags, link_args)])
}
