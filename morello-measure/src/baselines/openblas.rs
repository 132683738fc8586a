//! The `openblas` baseline: OpenBLAS's `cblas_sgemm`, row-major, `beta = 0`, and an epilogue (if
//! any) as a second pass.
//!
//! Linked with `-lopenblas`; the thread count comes from `OPENBLAS_NUM_THREADS`, which the
//! benchmark driver sets. Install with `apt-get install libopenblas-dev`.

use super::epilogue::{LibraryMatmul, library_baseline};
use super::{CBaseline, Problem, Unavailable, f32_matmul};

pub(super) fn c_baselines(problem: &Problem) -> Result<Vec<CBaseline>, Unavailable> {
    let problem = f32_matmul(problem)?;
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let library = LibraryMatmul {
        label: "openblas",
        what: "OpenBLAS cblas_sgemm",
        headers: &["cblas.h"],
        body: format!(
            "  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, {m}, {n}, {k}, 1.0f, lhs, {k}, rhs, {n},
              0.0f, out, {n});\n"
        ),
        libraries: &["-lopenblas"],
        ..LibraryMatmul::default()
    };
    Ok(vec![library_baseline(problem, library)])
}
