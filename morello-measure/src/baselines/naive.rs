//! The `naive` baseline: a plain triple loop compiled `-O3 -march=native`, for f32 and u32.
//!
//! The loop order is i, k, j (the row of `out` is zeroed, then `lhs[i][k] * rhs[k][:]` is added
//! to it), which the compiler vectorises along `j` without reassociating a reduction; it is what
//! a careful C programmer writes without tiling. With more than one thread the `i` loop is an
//! OpenMP parallel loop.

use super::{CBaseline, MatmulProblem};
use morello_codegen::harness::CType;

/// The C function's name.
pub(super) const FUNCTION: &str = "baseline_naive";

pub(super) fn c_baseline(problem: &MatmulProblem, threads: usize) -> CBaseline {
    let t = problem.dtype.c_name();
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let parallel = if threads > 1 { "#pragma omp parallel for schedule(static)\n  " } else { "" };
    let source = format!(
        r#"/* morello baseline: naive {dtype} matmul, out[{m}][{n}] = lhs[{m}][{k}] * rhs[{k}][{n}]. */
#include <stddef.h>
#include <stdint.h>

void {FUNCTION}(const {t} *restrict lhs, const {t} *restrict rhs, {t} *restrict out) {{
  {parallel}for (long i = 0; i < {m}L; i++) {{
    for (long j = 0; j < {n}L; j++) out[i * {n}L + j] = 0;
    for (long p = 0; p < {k}L; p++) {{
      const {t} a = lhs[i * {k}L + p];
      for (long j = 0; j < {n}L; j++) out[i * {n}L + j] += a * rhs[p * {n}L + j];
    }}
  }}
}}
"#,
        dtype = problem.dtype,
    );
    let mut flags = vec!["-march=native".to_string()];
    let mut link_args = Vec::new();
    if threads > 1 {
        flags.push("-fopenmp".into());
        link_args.push("-fopenmp".into());
    }
    CBaseline { source, flags, link_args, setup: None }
}

/// Whether the naive baseline exists for `dtype`.
pub(super) fn supports(dtype: CType) -> bool {
    matches!(dtype, CType::F32 | CType::U32)
}
