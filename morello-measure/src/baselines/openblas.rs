//! The `openblas` baseline: OpenBLAS's `cblas_sgemm`, row-major, `beta = 0`.
//!
//! Linked with `-lopenblas`; the thread count comes from `OPENBLAS_NUM_THREADS`, which the
//! benchmark driver sets. Install with `apt-get install libopenblas-dev`.

use super::{CBaseline, MatmulProblem};

/// The C function's name.
pub(super) const FUNCTION: &str = "baseline_openblas";

pub(super) fn c_baseline(problem: &MatmulProblem) -> CBaseline {
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let source = format!(
        r#"/* morello baseline: OpenBLAS cblas_sgemm, row-major {m}x{k} * {k}x{n}. */
#include <cblas.h>

void {FUNCTION}(const float *lhs, const float *rhs, float *out) {{
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, {m}, {n}, {k}, 1.0f, lhs, {k}, rhs, {n},
              0.0f, out, {n});
}}
"#
    );
    CBaseline { source, flags: Vec::new(), link_args: vec!["-lopenblas".into()], setup: None }
}
