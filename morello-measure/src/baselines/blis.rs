//! The `blis` baseline: BLIS's native `bli_sgemm` with row strides (row-major, `beta = 0`).
//!
//! The native API is used rather than BLIS's CBLAS layer because OpenBLAS exports the same
//! `cblas_sgemm` symbol and both are linked into one benchmark program; `bli_*` names are
//! BLIS's alone. The thread count comes from `BLIS_NUM_THREADS` / `OMP_NUM_THREADS`. Install
//! with `apt-get install libblis-dev`.

use super::{CBaseline, MatmulProblem};

/// The C function's name.
pub(super) const FUNCTION: &str = "baseline_blis";

pub(super) fn c_baseline(problem: &MatmulProblem) -> CBaseline {
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let source = format!(
        r#"/* morello baseline: BLIS bli_sgemm, row-major {m}x{k} * {k}x{n}. */
#include <blis.h>

void {FUNCTION}(const float *lhs, const float *rhs, float *out) {{
  float one = 1.0f;
  float zero = 0.0f;
  bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, {m}, {n}, {k}, &one, (float *)lhs, {k}, 1,
            (float *)rhs, {n}, 1, &zero, out, {n}, 1);
}}
"#
    );
    CBaseline { source, flags: Vec::new(), link_args: vec!["-lblis".into()], setup: None }
}
