//! The `mkl` baseline: Intel MKL's `cblas_sgemm` (row-major, `beta = 0`), and an epilogue (if
//! any) as a second pass.
//!
//! # Where MKL is found
//!
//! MKL is not in Debian's main archive; its PyPI wheels carry the headers (`mkl-include`, pulled
//! in by `mkl-devel`) and the shared libraries (`mkl`):
//!
//! ```text
//! python3 -m venv /opt/mklvenv && /opt/mklvenv/bin/pip install mkl mkl-devel
//! ```
//!
//! A prefix is usable when it holds `mkl.h` (in `include/` or `include/mkl/`) and
//! `libmkl_rt.so` or `libmkl_rt.so.N` (in `lib/`, `lib/intel64/` or `lib/x86_64-linux-gnu/`;
//! the wheels ship only the versioned name). The prefix is `$MORELLO_MKL_DIR` when set (and only
//! that one), else the first usable of `/opt/mklvenv`, `/opt/intel/oneapi/mkl/latest` and `/usr`
//! (Debian's non-free `libmkl-dev`). The probe's reason says what was missing where.
//!
//! # Why `dlopen`
//!
//! Every C baseline is linked into one benchmark program, and MKL exports the same
//! `cblas_sgemm` as OpenBLAS (and BLIS's CBLAS layer): linked normally, one library's symbol
//! would silently serve both. So the unit includes `mkl.h` for the types, loads `libmkl_rt`
//! with `dlopen(RTLD_LOCAL)` in its setup, and calls the `cblas_sgemm` that `dlsym` finds in
//! it. Setup also selects MKL's threading layer (`MKL_Set_Threading_Layer`): sequential for one
//! thread, GNU OpenMP (honouring `OMP_NUM_THREADS`) for more.
//!
//! # On AMD processors
//!
//! MKL picks its kernels by CPU: setup runs one small product and reports, as a note, which of
//! MKL's kernel libraries it loaded (`libmkl_def` the generic one, `libmkl_avx2`,
//! `libmkl_avx512` the Intel ones). On AMD Zen processors MKL loads `libmkl_def`, whose sgemm
//! there is an AVX2/FMA kernel for Zen (`mkl_blas_def_sgemm_kernel_0_zen`), not a slow generic
//! path; `docs/benchmarking.md` ("Baselines") says what it measures and what the environment
//! variables that might change the dispatch do.

use std::path::{Path, PathBuf};

use super::epilogue::{LibraryMatmul, cblas_sgemm_pointer, library_baseline};
use super::{CBaseline, Problem, Unavailable, f32_matmul};

/// The environment variable naming an MKL prefix.
pub const ENV: &str = "MORELLO_MKL_DIR";

/// The prefixes searched when [`ENV`] is not set.
pub const DEFAULT_PREFIXES: [&str; 3] = ["/opt/mklvenv", "/opt/intel/oneapi/mkl/latest", "/usr"];

/// How to install it (commands in backticks).
pub const INSTALL: &str = "`python3 -m venv /opt/mklvenv && /opt/mklvenv/bin/pip install mkl mkl-devel`, \
                           or set MORELLO_MKL_DIR to a prefix with include/mkl.h and lib/libmkl_rt.so*";

/// An MKL installation: the directory holding `mkl.h` and the `libmkl_rt` shared library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MklInstall {
    /// The directory of `mkl.h`.
    pub include: PathBuf,
    /// `libmkl_rt.so` or `libmkl_rt.so.N`.
    pub library: PathBuf,
}

/// Finds MKL: in `$MORELLO_MKL_DIR` if set, else in the first usable default prefix.
///
/// # Errors
/// What was missing where, e.g. "no mkl.h and no libmkl_rt.so* under /opt/mklvenv,
/// /opt/intel/oneapi/mkl/latest or /usr".
pub fn locate() -> Result<MklInstall, String> {
    match std::env::var_os(ENV).filter(|v| !v.is_empty()) {
        Some(dir) => {
            let prefix = PathBuf::from(dir);
            locate_in(&prefix).map_err(|missing| format!("{ENV}={} has {missing}", prefix.display()))
        }
        None => {
            let mut reasons = Vec::new();
            for prefix in DEFAULT_PREFIXES {
                match locate_in(Path::new(prefix)) {
                    Ok(install) => return Ok(install),
                    Err(missing) => reasons.push(format!("{prefix} has {missing}")),
                }
            }
            Err(format!("{}; {ENV} is not set", reasons.join(", ")))
        }
    }
}

/// MKL under one prefix, or what is missing there ("no mkl.h", "no libmkl_rt.so*", both).
fn locate_in(prefix: &Path) -> Result<MklInstall, String> {
    let include =
        ["include", "include/mkl"].iter().map(|d| prefix.join(d)).find(|d| d.join("mkl.h").is_file());
    let library =
        ["lib", "lib/intel64", "lib/x86_64-linux-gnu"].iter().find_map(|d| runtime_library(&prefix.join(d)));
    match (include, library) {
        (Some(include), Some(library)) => Ok(MklInstall { include, library }),
        (None, Some(_)) => Err("no include/mkl.h".into()),
        (Some(_), None) => Err("no lib/libmkl_rt.so*".into()),
        (None, None) => Err("no include/mkl.h and no lib/libmkl_rt.so*".into()),
    }
}

/// `libmkl_rt.so` in `dir`, else its highest-versioned `libmkl_rt.so.N`.
fn runtime_library(dir: &Path) -> Option<PathBuf> {
    let plain = dir.join("libmkl_rt.so");
    if plain.is_file() {
        return Some(plain);
    }
    let entries = std::fs::read_dir(dir).ok()?;
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let version: u32 = name.strip_prefix("libmkl_rt.so.")?.split('.').next()?.parse().ok()?;
            Some((version, e.path()))
        })
        .max()
        .map(|(_, path)| path)
}

/// `text` as the inside of a C string literal.
fn c_string(text: &str) -> String {
    text.chars().flat_map(|c| if matches!(c, '"' | '\\') { vec!['\\', c] } else { vec![c] }).collect()
}

/// The setup function's name.
const SETUP: &str = "baseline_mkl_setup";

pub(super) fn c_baselines(problem: &Problem, threads: usize) -> Result<Vec<CBaseline>, Unavailable> {
    let problem = f32_matmul(problem)?;
    let install = locate().map_err(Unavailable::NotFound)?;
    let library = c_string(&install.library.to_string_lossy());
    let (layer, layer_name) = if threads > 1 {
        ("MKL_THREADING_GNU", "GNU OpenMP")
    } else {
        ("MKL_THREADING_SEQUENTIAL", "sequential")
    };
    let note = super::check::NOTE_PREFIX;
    let (declaration, body) = cblas_sgemm_pointer("baseline_mkl_sgemm", SETUP, problem);
    let state = format!(
        r#"{declaration}typedef __typeof__(MKL_Set_Threading_Layer) baseline_mkl_layer_fn;
typedef __typeof__(MKL_Get_Version_String) baseline_mkl_version_fn;

/* The kernel libraries MKL loaded (libmkl_def, libmkl_avx2, ...), from /proc/self/maps. */
static void baseline_mkl_kernels(char *text, size_t size) {{
  static const char *const kinds[] = {{"libmkl_def", "libmkl_mc3", "libmkl_avx2", "libmkl_avx512", "libmkl_avx10"}};
  char line[1024];
  text[0] = '\0';
  FILE *maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return;
  while (fgets(line, sizeof line, maps) != NULL) {{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {{
      if (strstr(line, kinds[i]) != NULL && strstr(text, kinds[i]) == NULL && strlen(text) + strlen(kinds[i]) + 2 < size) {{
        if (text[0] != '\0') strcat(text, " ");
        strcat(text, kinds[i]);
      }}
    }}
  }}
  fclose(maps);
}}

int {SETUP}(void) {{
  if (baseline_mkl_sgemm != NULL) return 0;
  void *library = dlopen("{library}", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {{
    fprintf(stderr, "mkl: %s\n", dlerror());
    return 1;
  }}
  baseline_mkl_layer_fn *layer = (baseline_mkl_layer_fn *)dlsym(library, "MKL_Set_Threading_Layer");
  baseline_mkl_version_fn *version = (baseline_mkl_version_fn *)dlsym(library, "MKL_Get_Version_String");
  baseline_mkl_sgemm_fn *sgemm = (baseline_mkl_sgemm_fn *)dlsym(library, "cblas_sgemm");
  if (layer == NULL || version == NULL || sgemm == NULL) {{
    fprintf(stderr, "mkl: {library} lacks MKL_Set_Threading_Layer, MKL_Get_Version_String or cblas_sgemm\n");
    return 2;
  }}
  if (layer({layer}) < 0) {{
    fprintf(stderr, "mkl: the {layer_name} threading layer is not available\n");
    return 3;
  }}
  float a[4] = {{1, 2, 3, 4}}, c[4];
  sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c, 2);
  char name[256], kernels[256];
  version(name, (int)sizeof name);
  baseline_mkl_kernels(kernels, sizeof kernels);
  fprintf(stderr, "{note}mkl: %s, {layer_name} threading, kernels from %s\n", name, kernels[0] ? kernels : "(none found)");
  baseline_mkl_sgemm = sgemm;
  return 0;
}}

"#
    );
    let mkl = LibraryMatmul {
        label: "mkl",
        what: "Intel MKL cblas_sgemm loaded with dlopen",
        headers: &["dlfcn.h", "stdio.h", "stdlib.h", "string.h", "mkl.h"],
        state,
        setup: Some(SETUP),
        body,
        flags: vec![format!("-I{}", install.include.display())],
        libraries: &["-ldl"],
    };
    Ok(vec![library_baseline(problem, mkl)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::touch;

    #[test]
    fn a_prefix_needs_the_header_and_the_runtime_library() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(locate_in(dir.path()), Err("no include/mkl.h and no lib/libmkl_rt.so*".into()));
        touch(dir.path(), "include/mkl.h");
        assert_eq!(locate_in(dir.path()), Err("no lib/libmkl_rt.so*".into()));
        for name in ["libmkl_rt.so.2", "libmkl_rt.so.3", "libmkl_core.so.4"] {
            touch(dir.path(), &format!("lib/{name}"));
        }
        let install = locate_in(dir.path()).expect("usable");
        assert_eq!(install.library, dir.path().join("lib/libmkl_rt.so.3"));
        assert_eq!(install.include, dir.path().join("include"));
        assert_eq!(c_string(r#"/a "b"\c"#), r#"/a \"b\"\\c"#);
    }
}
