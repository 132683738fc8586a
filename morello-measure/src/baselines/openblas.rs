//! The `openblas` baseline: OpenBLAS's `cblas_sgemm`, row-major, `beta = 0`, and an epilogue (if
//! any) as a second pass.
//!
//! Linked with `-lopenblas`; the thread count comes from `OPENBLAS_NUM_THREADS`, which the
//! benchmark driver sets. Install with `apt-get install libopenblas-dev`.

use super::epilogue::LibraryMatmul;
use super::problem::MatmulProblem;

/// The OpenBLAS call computing `problem`.
pub(super) fn library(problem: &MatmulProblem) -> LibraryMatmul<'static> {
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let body = format!(
        "  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, {m}, {n}, {k}, 1.0f, lhs, {k}, rhs, {n},
              0.0f, out, {n});\n"
    );
    LibraryMatmul::call("openblas", "OpenBLAS cblas_sgemm", &["cblas.h"], &["-lopenblas"], body)
}
