//! The `blis` baseline: BLIS's native `bli_sgemm` with row strides (row-major, `beta = 0`), and
//! an epilogue (if any) as a second pass.
//!
//! The native API is used rather than BLIS's CBLAS layer because OpenBLAS exports the same
//! `cblas_sgemm` symbol and both are linked into one benchmark program; `bli_*` names are
//! BLIS's alone. The thread count comes from `BLIS_NUM_THREADS` / `OMP_NUM_THREADS`. Install
//! with `apt-get install libblis-dev`.

use super::epilogue::LibraryMatmul;
use super::problem::MatmulProblem;

/// The BLIS call computing `problem`.
pub(super) fn library(problem: &MatmulProblem) -> LibraryMatmul<'static> {
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let body = format!(
        r#"  float one = 1.0f;
  float zero = 0.0f;
  bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, {m}, {n}, {k}, &one, (float *)lhs, {k}, 1,
            (float *)rhs, {n}, 1, &zero, out, {n}, 1);
"#
    );
    LibraryMatmul::call("blis", "BLIS bli_sgemm", &["blis.h"], &["-lblis"], body)
}
