//! The `openblas` baseline: OpenBLAS's `cblas_sgemm`, row-major, `beta = 0`, and an epilogue (if
//! any) as a second pass.
//!
//! Linked with `-lopenblas`; the thread count comes from `OPENBLAS_NUM_THREADS`, which the
//! benchmark driver sets. Install with `apt-get install libopenblas-dev`.
//!
//! # Whose `cblas_sgemm`
//!
//! Every C baseline is linked into one benchmark program, and BLIS's CBLAS layer exports
//! `cblas_sgemm` too: the dynamic linker binds the name to the first library on the link line that
//! defines it, so with BLIS listed first, a plain call timed BLIS twice under two names. The setup
//! therefore finds the loaded OpenBLAS by an export of its own (`openblas_get_config`, with
//! `dladdr`), takes that library's `cblas_sgemm` (`dlopen(RTLD_NOLOAD)` and `dlsym`), and reports
//! OpenBLAS's build configuration as a note. (OpenBLAS is still linked normally, so it starts its
//! threads before `main`, as it would in a user's program.)

use super::epilogue::{LibraryMatmul, cblas_sgemm_pointer};
use super::problem::MatmulProblem;

/// The setup function's name.
const SETUP: &str = "baseline_openblas_setup";

/// The OpenBLAS call computing `problem`.
pub(super) fn library(problem: &MatmulProblem) -> LibraryMatmul<'static> {
    let note = super::check::NOTE_PREFIX;
    let (declaration, body) = cblas_sgemm_pointer("baseline_openblas_sgemm", SETUP, problem);
    let state = format!(
        r#"{declaration}char *openblas_get_config(void);

int {SETUP}(void) {{
  if (baseline_openblas_sgemm != NULL) return 0;
  Dl_info info;
  void *library = NULL;
  if (dladdr((void *)openblas_get_config, &info) != 0 && info.dli_fname != NULL) {{
    library = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  }}
  baseline_openblas_sgemm_fn *sgemm =
      library == NULL ? NULL : (baseline_openblas_sgemm_fn *)dlsym(library, "cblas_sgemm");
  if (sgemm == NULL) {{
    fprintf(stderr, "openblas: cannot find the cblas_sgemm of the loaded OpenBLAS library\n");
    return 1;
  }}
  fprintf(stderr, "{note}openblas: %s (%s)\n", openblas_get_config(), info.dli_fname);
  baseline_openblas_sgemm = sgemm;
  return 0;
}}

"#
    );
    LibraryMatmul {
        label: "openblas",
        what: "OpenBLAS cblas_sgemm, the loaded library's own",
        headers: &["dlfcn.h", "stdio.h", "stdlib.h", "cblas.h"],
        state,
        setup: Some(SETUP),
        body,
        flags: vec!["-D_GNU_SOURCE".into()],
        libraries: &["-lopenblas", "-ldl"],
    }
}
