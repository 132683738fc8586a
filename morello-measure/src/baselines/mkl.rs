//! The `mkl` baseline: Intel MKL's `cblas_sgemm` (row-major, `beta = 0`), and an epilogue (if
//! any) as a second pass; for a quantized matmul without an epilogue, `cblas_gemm_s8u8s32`.
//!
//! # Quantized matmuls
//!
//! `cblas_gemm_s8u8s32` computes `C = alpha (op(A) + ao)(op(B) + bo) + beta C + co` with 8-bit
//! `A` and `B`, `ao` and `bo` added to every element, and `co` (here `CblasFixOffset`: one value
//! for all of `C`) added to the i32 result. Row-major, it reads `A` (the `lhs`) as **unsigned**
//! and `B` (the `rhs`) as **signed** (column-major the other way round, so in either order the
//! unsigned operand is the `lhs`). A u8s8s32 matmul is therefore one call with `alpha = 1`,
//! `beta = 0` and zero offsets. An s8s8s32 matmul has no signed `A`: each call first writes
//! `lhs ^ 0x80` (that is `lhs + 128`) into a u8 buffer and passes `ao = -128`, which is what a
//! user of MKL with signed activations must do; the copy is timed with the call. Both are exact
//! in i32 (the spec's reduction bound keeps every sum in range) and are checked with tolerance 0
//! before timing; an MKL whose kernels saturate intermediate 16-bit sums (the `vpmaddubsw` path
//! on processors without VNNI) fails that check on the seeded inputs and is skipped with the
//! first mismatch. A quantized matmul with an epilogue has no MKL baseline.
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
use super::problem::MatmulProblem;
use super::{CBaseline, Problem, Unavailable, f32_matmul};
use morello_codegen::harness::CType;

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

pub(super) fn c_baselines(problem: &Problem, threads: usize) -> Result<Vec<CBaseline>, Unavailable> {
    let call = MklCall::of(problem)?;
    let install = locate().map_err(Unavailable::NotFound)?;
    let library = c_string(&install.library.to_string_lossy());
    let layer = if threads > 1 { ThreadingLayer::GnuOpenMp } else { ThreadingLayer::Sequential };
    let flags = vec![format!("-I{}", install.include.display())];
    Ok(vec![match call {
        MklCall::Sgemm(problem) => {
            let (declaration, body) = cblas_sgemm_pointer(SGEMM, SETUP, problem);
            let warmup = "  float a[4] = {1, 2, 3, 4}, c[4];\n  \
                          function(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c, 2);\n";
            let state = setup_state(&declaration, SGEMM, "cblas_sgemm", warmup, &library, layer);
            let mkl = LibraryMatmul {
                label: "mkl",
                what: "Intel MKL cblas_sgemm loaded with dlopen",
                headers: &["dlfcn.h", "stdio.h", "stdlib.h", "string.h", "mkl.h"],
                state,
                setup: Some(SETUP),
                body,
                flags,
                libraries: &["-ldl"],
            };
            library_baseline(problem, mkl)
        }
        MklCall::Int8 { problem, lhs } => int8_baseline(problem, lhs, &library, layer, flags),
    }])
}

/// The setup function's name.
const SETUP: &str = "baseline_mkl_setup";

/// The pointer to MKL's `cblas_sgemm`.
const SGEMM: &str = "baseline_mkl_sgemm";

/// The pointer to MKL's `cblas_gemm_s8u8s32`.
const GEMM_S8U8S32: &str = "baseline_mkl_gemm_s8u8s32";

/// What MKL is called with for a problem.
enum MklCall<'a> {
    /// `cblas_sgemm` on an f32 matmul (with the epilogue as a second pass).
    Sgemm(&'a MatmulProblem),
    /// `cblas_gemm_s8u8s32` on a quantized matmul without an epilogue.
    Int8 { problem: &'a MatmulProblem, lhs: Int8Lhs },
}

/// How a quantized matmul's `lhs` reaches `cblas_gemm_s8u8s32`, which reads its row-major `A`
/// (the `lhs`) as unsigned and its `B` (the `rhs`) as signed, and computes
/// `C = alpha (A + ao)(B + bo) + beta C + co`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Int8Lhs {
    /// A u8 `lhs` as it is, `ao = 0`.
    Unsigned,
    /// An s8 `lhs` has no operand of its own (MKL reads `A` as unsigned in row-major order and `B`
    /// as signed in column-major order, so the `lhs` is the unsigned one either way): each call
    /// flips its sign bits into a u8 buffer (`x ^ 0x80 = x + 128`) and passes `ao = -128`, as
    /// a user of MKL with signed activations must.
    Shifted,
}

impl<'a> MklCall<'a> {
    /// The call for `problem`, or why MKL does not compute it.
    fn of(problem: &'a Problem) -> Result<Self, Unavailable> {
        if let Problem::Matmul(p) = problem
            && let Some([lhs, CType::I8]) = p.inputs
        {
            if !p.epilogue.is_none() {
                return Err(format!("no {} matmul with an epilogue", p.types_name()).into());
            }
            let lhs = match (lhs, p.dtype) {
                (CType::U8, CType::I32) => Int8Lhs::Unsigned,
                (CType::I8, CType::I32) => Int8Lhs::Shifted,
                _ => return Err(format!("no {} matmul", p.types_name()).into()),
            };
            return Ok(MklCall::Int8 { problem: p, lhs });
        }
        f32_matmul(problem).map(MklCall::Sgemm)
    }
}

/// MKL's threading layer: sequential for one thread, GNU OpenMP (honouring `OMP_NUM_THREADS`)
/// for more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ThreadingLayer {
    Sequential,
    GnuOpenMp,
}

impl ThreadingLayer {
    /// The `MKL_Set_Threading_Layer` argument and the layer's name in notes.
    fn c_and_name(self) -> (&'static str, &'static str) {
        match self {
            ThreadingLayer::Sequential => ("MKL_THREADING_SEQUENTIAL", "sequential"),
            ThreadingLayer::GnuOpenMp => ("MKL_THREADING_GNU", "GNU OpenMP"),
        }
    }
}

/// The unit's state before its function: `declaration` (of the pointer `pointer`), the note of
/// MKL's kernel libraries, and the setup function, which loads `library`, selects the threading
/// layer, takes `symbol` into `pointer`, runs `warmup` (statements calling it as `function`) and
/// prints the note.
fn setup_state(
    declaration: &str,
    pointer: &str,
    symbol: &str,
    warmup: &str,
    library: &str,
    layer: ThreadingLayer,
) -> String {
    let (layer, layer_name) = layer.c_and_name();
    let note = super::check::NOTE_PREFIX;
    format!(
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
  if ({pointer} != NULL) return 0;
  void *library = dlopen("{library}", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {{
    fprintf(stderr, "mkl: %s\n", dlerror());
    return 1;
  }}
  baseline_mkl_layer_fn *layer = (baseline_mkl_layer_fn *)dlsym(library, "MKL_Set_Threading_Layer");
  baseline_mkl_version_fn *version = (baseline_mkl_version_fn *)dlsym(library, "MKL_Get_Version_String");
  {pointer}_fn *function = ({pointer}_fn *)dlsym(library, "{symbol}");
  if (layer == NULL || version == NULL || function == NULL) {{
    fprintf(stderr, "mkl: {library} lacks MKL_Set_Threading_Layer, MKL_Get_Version_String or {symbol}\n");
    return 2;
  }}
  if (layer({layer}) < 0) {{
    fprintf(stderr, "mkl: the {layer_name} threading layer is not available\n");
    return 3;
  }}
{warmup}  char name[256], kernels[256];
  version(name, (int)sizeof name);
  baseline_mkl_kernels(kernels, sizeof kernels);
  fprintf(stderr, "{note}mkl: %s, {symbol}, {layer_name} threading, kernels from %s\n", name, kernels[0] ? kernels : "(none found)");
  {pointer} = function;
  return 0;
}}

"#
    )
}

/// The unit calling `cblas_gemm_s8u8s32` (row-major, `alpha = 1`, `beta = 0`, `CblasFixOffset`
/// with `co = 0`) for a quantized `problem`.
fn int8_baseline(
    problem: &MatmulProblem,
    lhs: Int8Lhs,
    library: &str,
    layer: ThreadingLayer,
    mut flags: Vec<String>,
) -> CBaseline {
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let [lhs_type, rhs_type] = problem.input_types().map(CType::c_name);
    let declaration = format!(
        "typedef __typeof__(cblas_gemm_s8u8s32) {GEMM_S8U8S32}_fn;\nstatic {GEMM_S8U8S32}_fn *{GEMM_S8U8S32};\n\
         static uint8_t *baseline_mkl_shifted;\n"
    );
    let warmup = "  uint8_t a[4] = {1, 2, 3, 4};\n  int8_t b[4] = {5, -6, 7, -8};\n  MKL_INT32 c[4], co = 0;\n  \
                  function(CblasRowMajor, CblasNoTrans, CblasNoTrans, CblasFixOffset, 2, 2, 2, 1.0f, a, 2, 0, b, 2, 0, \
                  0.0f, c, 2, &co);\n";
    let state = setup_state(&declaration, GEMM_S8U8S32, "cblas_gemm_s8u8s32", warmup, library, layer);
    let (shift, a, ao) = match lhs {
        Int8Lhs::Unsigned => (String::new(), "lhs", 0),
        Int8Lhs::Shifted => {
            flags.push("-march=native".into());
            (
                format!(
                    "  if (baseline_mkl_shifted == NULL && (baseline_mkl_shifted = malloc({m}UL * {k}UL)) == NULL) exit(3);\n  \
                     for (long i = 0; i < {m}L * {k}L; i++) baseline_mkl_shifted[i] = (uint8_t)lhs[i] ^ 0x80u;\n"
                ),
                "baseline_mkl_shifted",
                -128,
            )
        }
    };
    let what = match lhs {
        Int8Lhs::Unsigned => "u8 lhs",
        Int8Lhs::Shifted => "s8 lhs shifted to u8 in each call, ao = -128",
    };
    let function = super::function_name("mkl");
    let source = format!(
        r#"/* morello baseline: Intel MKL cblas_gemm_s8u8s32 loaded with dlopen ({what}), row-major {m}x{k} * {k}x{n}. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mkl.h>
{state}void {function}(const {lhs_type} *lhs, const {rhs_type} *rhs, int32_t *out) {{
  static const MKL_INT32 co = 0;
  if ({GEMM_S8U8S32} == NULL && {SETUP}() != 0) exit(3);
{shift}  {GEMM_S8U8S32}(CblasRowMajor, CblasNoTrans, CblasNoTrans, CblasFixOffset, {m}, {n}, {k}, 1.0f, {a}, {k}, {ao}, rhs, {n}, 0,
                     0.0f, out, {n}, &co);
}}
"#
    );
    let mut baseline = CBaseline::new("mkl", source, flags, vec!["-ldl".into()]);
    baseline.setup = Some(SETUP.to_string());
    baseline
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
