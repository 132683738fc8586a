//! Matmul baselines: what a user would call instead of a morello kernel, each with the morello
//! matmul kernel's call shape `void f(const T *lhs, const T *rhs, T *out)` (row-major
//! `out[M][N] = lhs[M][K] * rhs[K][N]`, sizes baked in, `out` overwritten).
//!
//! | name | what | runs in | install |
//! | --- | --- | --- | --- |
//! | `naive` | triple loop, `-O3 -march=native` (f32 and u32) | C | a C compiler |
//! | `openblas` | `cblas_sgemm` | C | `apt-get install libopenblas-dev` |
//! | `blis` | `bli_sgemm` | C | `apt-get install libblis-dev` |
//! | `libxsmm` | JIT kernel from `libxsmm_smmdispatch` | C | `apt-get install libxsmm-dev` |
//! | `gemm` | `matrixmultiply` (through ndarray's `general_mat_mul`), one thread | Rust | nothing (a dependency) |
//!
//! A C library's availability is decided by compiling, linking and running a 2x2x2 probe with
//! the same source; a missing one is skipped with a one-line reason saying how to install it.
//! The libraries are only for f32; u32 has `naive` alone.

mod blis;
mod gemm;
mod libxsmm;
mod naive;
mod openblas;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;

use serde::Serialize;

use crate::bench::{CCandidate, Candidate, RustCandidate, Work};
use morello_codegen::CodegenError;
use morello_codegen::compiler::{CProgram, CompileOptions, Compiler, SourceUnit, Warnings};
use morello_codegen::harness::{BenchEntry, CType, KernelSignature};
use morello_codegen::run::run_program;

/// The command that installs every C baseline library on Debian or Ubuntu.
pub const INSTALL_ALL: &str = "apt-get install libopenblas-dev libblis-dev libxsmm-dev";

/// A baseline implementation of matmul.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "&'static str")]
pub enum BaselineKind {
    /// A plain triple loop, `-O3 -march=native`.
    Naive,
    /// OpenBLAS `cblas_sgemm`.
    OpenBlas,
    /// BLIS `bli_sgemm`.
    Blis,
    /// libxsmm's JIT small-GEMM kernels.
    Libxsmm,
    /// A pure-Rust GEMM (`matrixmultiply`, through ndarray), single-threaded.
    Gemm,
}

impl BaselineKind {
    /// Every baseline, in reporting order.
    pub const ALL: [BaselineKind; 5] = [
        BaselineKind::Naive,
        BaselineKind::OpenBlas,
        BaselineKind::Blis,
        BaselineKind::Libxsmm,
        BaselineKind::Gemm,
    ];

    /// The name used on command lines and in reports: `naive`, `openblas`, `blis`, `libxsmm`,
    /// `gemm`.
    pub fn name(self) -> &'static str {
        match self {
            BaselineKind::Naive => "naive",
            BaselineKind::OpenBlas => "openblas",
            BaselineKind::Blis => "blis",
            BaselineKind::Libxsmm => "libxsmm",
            BaselineKind::Gemm => "gemm",
        }
    }

    /// How to install it, if it needs installing.
    pub fn install_hint(self) -> Option<&'static str> {
        match self {
            BaselineKind::OpenBlas => Some("apt-get install libopenblas-dev"),
            BaselineKind::Blis => Some("apt-get install libblis-dev"),
            BaselineKind::Libxsmm => Some("apt-get install libxsmm-dev"),
            BaselineKind::Naive | BaselineKind::Gemm => None,
        }
    }

    /// Whether it uses every requested thread (libxsmm's JIT kernels are single-threaded).
    pub fn is_multithreaded(self) -> bool {
        !matches!(self, BaselineKind::Libxsmm | BaselineKind::Gemm)
    }
}

impl fmt::Display for BaselineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<BaselineKind> for &'static str {
    fn from(kind: BaselineKind) -> Self {
        kind.name()
    }
}

/// The error for an unknown baseline name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown baseline `{0}` (known: naive, openblas, blis, libxsmm, gemm)")]
pub struct UnknownBaseline(pub String);

impl FromStr for BaselineKind {
    type Err = UnknownBaseline;

    /// Parses a baseline name (case-insensitive).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        BaselineKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(text))
            .ok_or_else(|| UnknownBaseline(text.to_string()))
    }
}

/// A row-major matmul `out[M][N] = lhs[M][K] * rhs[K][N]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct MatmulProblem {
    /// Rows of `lhs` and `out`.
    pub m: usize,
    /// Columns of `lhs`, rows of `rhs` (the reduction length).
    pub k: usize,
    /// Columns of `rhs` and `out`.
    pub n: usize,
    /// The element type of all three.
    pub dtype: CType,
}

impl MatmulProblem {
    /// An f32 problem.
    pub fn f32(m: usize, k: usize, n: usize) -> Self {
        MatmulProblem { m, k, n, dtype: CType::F32 }
    }

    /// The kernel signature with this shape: `name(lhs, rhs, out)`.
    pub fn signature(&self, name: impl Into<String>) -> KernelSignature {
        KernelSignature::matmul(name, self.dtype, self.m, self.k, self.n)
    }

    /// The work per call: `2 M K N` operations, and every operand's bytes read or written once
    /// (`(M K + K N + M N) * element size`, the floor for a memory-bound shape).
    pub fn work(&self) -> Work {
        let (m, k, n) = (self.m as f64, self.k as f64, self.n as f64);
        let size = self.dtype.size_bytes() as f64;
        Work { flops: Some(2.0 * m * k * n), bytes: Some((m * k + k * n + m * n) * size) }
    }
}

/// A baseline as a C unit.
struct CBaseline {
    source: String,
    flags: Vec<String>,
    link_args: Vec<String>,
    setup: Option<String>,
}

/// A baseline that could not be offered, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedBaseline {
    /// Which baseline.
    pub kind: BaselineKind,
    /// One line: why, and how to install it if that is the reason.
    pub reason: String,
}

/// The baselines that can run, as benchmark candidates, and those skipped.
#[derive(Debug, Default)]
pub struct BaselineSet {
    /// Candidates labelled with the baseline's name, in the requested order.
    pub candidates: Vec<Candidate>,
    /// The skipped ones, in the requested order.
    pub skipped: Vec<SkippedBaseline>,
}

/// The requested baselines for `problem` with `threads` threads: probes each C library (a small
/// compile, link and run) and skips what is missing or does not apply.
pub fn matmul_baselines(
    compiler: &Compiler,
    problem: &MatmulProblem,
    kinds: &[BaselineKind],
    threads: usize,
) -> BaselineSet {
    let mut set = BaselineSet::default();
    for &kind in kinds {
        if set.candidates.iter().any(|c| c.label() == kind.name()) {
            continue;
        }
        match matmul_baseline(compiler, problem, kind, threads) {
            Ok(candidate) => set.candidates.push(candidate),
            Err(reason) => set.skipped.push(SkippedBaseline { kind, reason }),
        }
    }
    set
}

/// One baseline for `problem`, or the one-line reason it is unavailable.
///
/// # Errors
/// The reason, e.g. "openblas: not installed (fatal error: cblas.h: No such file or
/// directory); install it with `apt-get install libopenblas-dev`".
pub fn matmul_baseline(
    compiler: &Compiler,
    problem: &MatmulProblem,
    kind: BaselineKind,
    threads: usize,
) -> Result<Candidate, String> {
    if problem.m == 0 || problem.k == 0 || problem.n == 0 {
        return Err(format!("{kind}: every matmul dimension must be at least 1"));
    }
    let supported = match kind {
        BaselineKind::Naive => naive::supports(problem.dtype),
        _ => problem.dtype == CType::F32,
    };
    if !supported {
        return Err(format!("{kind}: no {} matmul", problem.dtype));
    }
    if threads > 1 && !kind.is_multithreaded() {
        return Err(format!("{kind}: single-threaded only, and {threads} threads were requested"));
    }
    if kind == BaselineKind::Gemm {
        return Ok(Candidate::Rust(RustCandidate {
            label: kind.name().into(),
            prepare: gemm::prepare(problem),
        }));
    }
    if kind != BaselineKind::Naive {
        probe(compiler, kind)?;
    }
    let (function, c) = c_baseline(kind, problem, threads);
    Ok(Candidate::C(CCandidate {
        entry: BenchEntry { label: kind.name().into(), function: function.into(), setup: c.setup },
        unit: Some(SourceUnit { name: format!("baseline_{kind}"), source: c.source, flags: c.flags }),
        link_args: c.link_args,
    }))
}

/// A C baseline's function name and unit. `Gemm` is not a C baseline and maps to naive (never
/// called with it).
fn c_baseline(kind: BaselineKind, problem: &MatmulProblem, threads: usize) -> (&'static str, CBaseline) {
    match kind {
        BaselineKind::OpenBlas => (openblas::FUNCTION, openblas::c_baseline(problem)),
        BaselineKind::Blis => (blis::FUNCTION, blis::c_baseline(problem)),
        BaselineKind::Libxsmm => (libxsmm::FUNCTION, libxsmm::c_baseline(problem)),
        BaselineKind::Naive | BaselineKind::Gemm => (naive::FUNCTION, naive::c_baseline(problem, threads)),
    }
}

/// Probe results for this process, by compiler command and baseline (libraries do not appear
/// or vanish during a run, and a bench suite asks for the same baselines at every size).
static PROBES: Mutex<BTreeMap<(String, BaselineKind), Result<(), String>>> = Mutex::new(BTreeMap::new());

/// Checks that a C baseline library is installed: compiles, links and runs its 2x2x2 instance
/// against a known product. The answer is remembered for the rest of the process.
///
/// # Errors
/// A one-line reason with the install command.
pub fn probe(compiler: &Compiler, kind: BaselineKind) -> Result<(), String> {
    let key = (compiler.command(), kind);
    if let Some(known) = PROBES.lock().ok().and_then(|probes| probes.get(&key).cloned()) {
        return known;
    }
    let result = probe_uncached(compiler, kind);
    if let Ok(mut probes) = PROBES.lock() {
        probes.insert(key, result.clone());
    }
    result
}

fn probe_uncached(compiler: &Compiler, kind: BaselineKind) -> Result<(), String> {
    let problem = MatmulProblem::f32(2, 2, 2);
    let (function, c) = c_baseline(kind, &problem, 1);
    let setup = c
        .setup
        .as_deref()
        .map_or(String::new(), |s| format!("int {s}(void);\n  if ({s}() != 0) return 4;\n"));
    let main = format!(
        "void {function}(const float *lhs, const float *rhs, float *out);\n\
         int main(void) {{\n  {setup}\
         float lhs[4] = {{1, 2, 3, 4}}, rhs[4] = {{5, 6, 7, 8}}, out[4] = {{0, 0, 0, 0}};\n  \
         {function}(lhs, rhs, out);\n  \
         return !(out[0] == 19 && out[1] == 22 && out[2] == 43 && out[3] == 50);\n}}\n"
    );
    let program = CProgram {
        units: vec![
            SourceUnit::new("probe_main", main),
            SourceUnit { name: format!("baseline_{kind}"), source: c.source, flags: c.flags },
        ],
        link_args: c.link_args,
    };
    let options = CompileOptions { warnings: Warnings::Report, ..CompileOptions::default() };
    let install = kind.install_hint().map_or(String::new(), |hint| format!("; install it with `{hint}`"));
    let build = compiler.build(&program, &options).map_err(|error| {
        let detail = match &error {
            CodegenError::CompileFailed { stderr, .. } => first_error_line(stderr),
            other => other.to_string(),
        };
        format!("{kind}: not installed ({detail}){install}")
    })?;
    let env = crate::bench::thread_environment(1);
    run_program(build.binary(), &[], &env).map(|_| ()).map_err(|error| {
        format!("{kind}: its probe failed ({}){install}", first_error_line(&error.to_string()))
    })
}

/// The most informative line of a compiler message: the first mentioning an error.
fn first_error_line(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.contains("error") || l.contains("cannot find"))
        .or_else(|| stderr.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("no message")
        .trim();
    let line = line.rsplit_once(": fatal error: ").map_or(line, |(_, rest)| rest);
    let line = line.rsplit_once(": error: ").map_or(line, |(_, rest)| rest);
    line.chars().take(160).collect()
}

#[cfg(test)]
mod tests;
