//! The `blis` baseline: BLIS's native `bli_sgemm` with row strides (row-major, `beta = 0`), and
//! an epilogue (if any) as a second pass.
//!
//! The native API is used rather than BLIS's CBLAS layer because OpenBLAS exports the same
//! `cblas_sgemm` symbol and both are linked into one benchmark program; `bli_*` names are
//! BLIS's alone. The thread count comes from `BLIS_NUM_THREADS` / `OMP_NUM_THREADS`. Install
//! with `apt-get install libblis-dev`.
//!
//! The setup reports BLIS's version and the configuration its run-time dispatch chose for this
//! CPU as a note (`bli_arch_query_id`): a build that has no kernels for the CPU runs its
//! `generic` reference code (Debian's BLIS 0.9.0 on an AMD Zen 5, at a sixth of the FMA peak), and
//! a comparison against it says little.

use super::epilogue::LibraryMatmul;
use super::problem::MatmulProblem;

/// The BLIS call computing `problem`.
pub(super) fn library(problem: &MatmulProblem) -> LibraryMatmul<'static> {
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let body = format!(
        r#"  if (!baseline_blis_ready) {SETUP}();
  float one = 1.0f;
  float zero = 0.0f;
  bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, {m}, {n}, {k}, &one, (float *)lhs, {k}, 1,
            (float *)rhs, {n}, 1, &zero, out, {n}, 1);
"#
    );
    let note = super::check::NOTE_PREFIX;
    let state = format!(
        r#"static int baseline_blis_ready = 0;

int {SETUP}(void) {{
  if (baseline_blis_ready) return 0;
  baseline_blis_ready = 1;
  arch_t arch = bli_arch_query_id();
  const char *name = bli_arch_string(arch);
  fprintf(stderr, "{note}blis: BLIS %s, configuration %s%s\n", bli_info_get_version_str(), name,
          strcmp(name, "generic") == 0 ? " (reference kernels: this build has none for this CPU)" : "");
  return 0;
}}

"#
    );
    LibraryMatmul {
        state,
        setup: Some(SETUP),
        ..LibraryMatmul::call("blis", "BLIS bli_sgemm", &["blis.h", "stdio.h", "string.h"], &["-lblis"], body)
    }
}

/// The setup function's name.
const SETUP: &str = "baseline_blis_setup";
