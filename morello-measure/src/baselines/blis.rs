//! The `blis` baseline: BLIS's native `bli_sgemm` with row strides (row-major, `beta = 0`), and
//! an epilogue (if any) as a second pass.
//!
//! The native API is used rather than BLIS's CBLAS layer because OpenBLAS exports the same
//! `cblas_sgemm` symbol and both are linked into one benchmark program; `bli_*` names are
//! BLIS's alone. The thread count comes from `BLIS_NUM_THREADS` / `OMP_NUM_THREADS`. Install
//! with `apt-get install libblis-dev`.

use super::epilogue::{matmul_params, pass_flags, second_pass};
use super::{CBaseline, Problem, Unavailable, f32_matmul};

pub(super) fn c_baselines(problem: &Problem) -> Result<Vec<CBaseline>, Unavailable> {
    let problem = f32_matmul(problem)?;
    let function = super::function_name("blis");
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let (pass, call_pass) = second_pass(&function, problem);
    let params = matmul_params(problem);
    let source = format!(
        r#"/* morello baseline: BLIS bli_sgemm, row-major {m}x{k} * {k}x{n}. */
#include <math.h>
#include <blis.h>
{pass}
void {function}({params}) {{
  float one = 1.0f;
  float zero = 0.0f;
  bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, {m}, {n}, {k}, &one, (float *)lhs, {k}, 1,
            (float *)rhs, {n}, 1, &zero, out, {n}, 1);
{call_pass}}}
"#
    );
    let (flags, mut link_args) = pass_flags(problem);
    link_args.insert(0, "-lblis".into());
    Ok(vec![CBaseline::new("blis", source, flags, link_args)])
}
