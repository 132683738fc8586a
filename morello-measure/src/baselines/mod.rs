//! Baselines: what a user would call instead of a morello kernel, each a function with the
//! kernel's call shape (see [`Problem`]: `void f(const float *lhs, const float *rhs, float *out)`
//! for a plain matmul; sizes baked in, the output overwritten).
//!
//! | name | what | problems | runs in | install |
//! | --- | --- | --- | --- | --- |
//! | `naive` | plain loops, `-O3 -march=native` | matmul (f32, u32; epilogue), conv, softmax | C | a C compiler |
//! | `openblas` | `cblas_sgemm` (the loaded OpenBLAS's own: `openblas.rs`) | f32 matmul (epilogue as a second pass) | C | `apt-get install libopenblas-dev` |
//! | `blis` | `bli_sgemm` | f32 matmul (epilogue as a second pass) | C | `apt-get install libblis-dev` |
//! | `libxsmm` | JIT kernel from `libxsmm_smmdispatch` | f32 matmul (epilogue as a second pass) | C | `apt-get install libxsmm-dev` |
//! | `mkl` | Intel MKL's `cblas_sgemm` and `cblas_gemm_s8u8s32` (loaded with `dlopen`) | f32 matmul (epilogue as a second pass), u8s8s32 and s8s8s32 matmul | C | PyPI `mkl mkl-devel` ([`mkl`]) |
//! | `onednn` | oneDNN primitives with fused post-ops | f32 matmul (epilogue fused), u8s8s32 and s8s8s32 matmul (also requantized), f32 and int8 conv (also `onednn-any`), softmax | C | `apt-get install libdnnl-dev` ([`onednn`]) |
//! | `xnnpack` | XNNPACK operators (weights packed once) | f32 matmul (bias, relu), NHWC conv, softmax | C | `apt-get install libxnnpack-dev libpthreadpool-dev` |
//! | `gemm` | `matrixmultiply` (through ndarray's `general_mat_mul`), one thread | f32 matmul | Rust | nothing (a dependency) |
//!
//! A C library's availability is decided by compiling, linking and running a 2x2x2 matmul probe
//! with the same source; a missing one is skipped with a one-line reason saying how to install
//! it. Every baseline offered for a problem has first been run once on the benchmark's seeded
//! inputs and compared with the f64 [`reference`](mod@reference) (tolerances there): one that disagrees is
//! skipped with the first mismatch, so a misconfigured library call never produces a figure.

mod blis;
mod check;
mod epilogue;
mod gemm;
mod libxsmm;
pub mod mkl;
mod naive;
pub mod onednn;
mod openblas;
pub mod problem;
pub mod reference;
pub(crate) mod spec;
mod xnnpack;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;

use serde::Serialize;

use crate::bench::{CCandidate, Caches, Candidate, PrepareRustKernel, RustCandidate};
use morello_codegen::CodegenError;
use morello_codegen::compiler::{CProgram, CompileOptions, Compiler, SourceUnit, Warnings};
use morello_codegen::harness::{BenchEntry, CType};
use morello_codegen::run::run_program;

pub use problem::{
    Activation, ActivationLayout, ConvPadding, ConvProblem, Epilogue, FilterLayout, MatmulProblem, Problem,
    SoftmaxProblem,
};
pub use spec::{baseline_problem, conv_problem, matmul_problem};

/// The command that installs every C baseline library available from Debian or Ubuntu.
pub const INSTALL_ALL: &str =
    "apt-get install libopenblas-dev libblis-dev libxsmm-dev libdnnl-dev libxnnpack-dev libpthreadpool-dev";

/// A baseline implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "&'static str")]
pub enum BaselineKind {
    /// Plain loops, `-O3 -march=native`.
    Naive,
    /// OpenBLAS `cblas_sgemm`.
    OpenBlas,
    /// BLIS `bli_sgemm`.
    Blis,
    /// libxsmm's JIT small-GEMM kernels.
    Libxsmm,
    /// Intel MKL's `cblas_sgemm`.
    Mkl,
    /// oneDNN's matmul, convolution and softmax primitives.
    OneDnn,
    /// XNNPACK's fully-connected, convolution and softmax operators.
    Xnnpack,
    /// A pure-Rust GEMM (`matrixmultiply`, through ndarray), single-threaded.
    Gemm,
}

impl BaselineKind {
    /// Every baseline, in reporting order.
    pub const ALL: [BaselineKind; 8] = [
        BaselineKind::Naive,
        BaselineKind::OpenBlas,
        BaselineKind::Blis,
        BaselineKind::Libxsmm,
        BaselineKind::Mkl,
        BaselineKind::OneDnn,
        BaselineKind::Xnnpack,
        BaselineKind::Gemm,
    ];

    /// The name used on command lines and in reports: `naive`, `openblas`, `blis`, `libxsmm`,
    /// `mkl`, `onednn`, `xnnpack`, `gemm`.
    pub fn name(self) -> &'static str {
        match self {
            BaselineKind::Naive => "naive",
            BaselineKind::OpenBlas => "openblas",
            BaselineKind::Blis => "blis",
            BaselineKind::Libxsmm => "libxsmm",
            BaselineKind::Mkl => "mkl",
            BaselineKind::OneDnn => "onednn",
            BaselineKind::Xnnpack => "xnnpack",
            BaselineKind::Gemm => "gemm",
        }
    }

    /// How to install it, if it needs installing: commands in backticks, and what else to do.
    pub fn install_hint(self) -> Option<&'static str> {
        match self {
            BaselineKind::OpenBlas => Some("`apt-get install libopenblas-dev`"),
            BaselineKind::Blis => Some("`apt-get install libblis-dev`"),
            BaselineKind::Libxsmm => Some("`apt-get install libxsmm-dev`"),
            BaselineKind::Mkl => Some(mkl::INSTALL),
            BaselineKind::OneDnn => Some(onednn::INSTALL),
            BaselineKind::Xnnpack => Some("`apt-get install libxnnpack-dev libpthreadpool-dev`"),
            BaselineKind::Naive | BaselineKind::Gemm => None,
        }
    }

    /// Whether it uses every requested thread (libxsmm's JIT kernels, XNNPACK without a thread
    /// pool and the Rust GEMM are single-threaded).
    pub fn is_multithreaded(self) -> bool {
        !matches!(self, BaselineKind::Libxsmm | BaselineKind::Xnnpack | BaselineKind::Gemm)
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
#[error("unknown baseline `{0}` (known: naive, openblas, blis, libxsmm, mkl, onednn, xnnpack, gemm)")]
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

/// The baselines `names` asks for, in the order given, without repeats: baseline names
/// (case-insensitive, surrounding spaces ignored), `all` (every one) and `none` (nothing).
///
/// # Errors
/// The first name that is none of these.
pub fn baselines_named<S: AsRef<str>>(names: &[S]) -> Result<Vec<BaselineKind>, UnknownBaseline> {
    let mut kinds = Vec::new();
    for name in names {
        let name = name.as_ref().trim();
        let named: Vec<BaselineKind> = match name.to_ascii_lowercase().as_str() {
            "all" => BaselineKind::ALL.to_vec(),
            "none" => Vec::new(),
            _ => vec![name.parse()?],
        };
        for kind in named {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    }
    Ok(kinds)
}

/// A baseline as a C unit: one function with the problem's call shape.
#[derive(Debug, Clone)]
struct CBaseline {
    /// The label it is reported under (the baseline's name, or e.g. `onednn-any` for a variant).
    label: String,
    /// The C function.
    function: String,
    source: String,
    flags: Vec<String>,
    link_args: Vec<String>,
    setup: Option<String>,
}

impl CBaseline {
    /// A unit whose function is `baseline_<label>` (dashes as underscores), without setup.
    fn new(label: &str, source: String, flags: Vec<String>, link_args: Vec<String>) -> Self {
        CBaseline {
            label: label.to_string(),
            function: function_name(label),
            source,
            flags,
            link_args,
            setup: None,
        }
    }

    fn into_candidate(self) -> CCandidate {
        CCandidate {
            entry: BenchEntry { label: self.label, function: self.function.clone(), setup: self.setup },
            unit: Some(SourceUnit { name: self.function, source: self.source, flags: self.flags }),
            link_args: self.link_args,
        }
    }
}

/// The C function of the baseline labelled `label`: `baseline_onednn_any` for `onednn-any`.
fn function_name(label: &str) -> String {
    format!("baseline_{}", label.replace('-', "_"))
}

/// `template` (a baseline's C) with each `@NAME@` replaced by its value.
fn fill(template: &str, values: &[(&str, String)]) -> String {
    values.iter().fold(template.to_string(), |text, (name, value)| text.replace(&format!("@{name}@"), value))
}

/// The [`fill`] values of a convolution's batch, input size, strides, dilations and padding:
/// `N`, `H`, `W`, `SH`, `SW`, `DH`, `DW`, `PT`, `PB`, `PL`, `PR`.
fn conv_window_values(p: &ConvProblem) -> Vec<(&'static str, String)> {
    let pad = p.padding;
    [
        ("N", p.batch),
        ("H", p.height),
        ("W", p.width),
        ("SH", p.stride[0]),
        ("SW", p.stride[1]),
        ("DH", p.dilation[0]),
        ("DW", p.dilation[1]),
        ("PT", pad.top),
        ("PB", pad.bottom),
        ("PL", pad.left),
        ("PR", pad.right),
    ]
    .map(|(name, value)| (name, value.to_string()))
    .to_vec()
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
    /// Candidates labelled with the baseline's name (or a variant's, e.g. `onednn-any`), in the
    /// requested order, each checked against the reference.
    pub candidates: Vec<Candidate>,
    /// The skipped ones, in the requested order.
    pub skipped: Vec<SkippedBaseline>,
    /// What the baselines said about themselves while checked, one line each (e.g. the
    /// implementation and layouts oneDNN chose: `onednn: conv brg:avx2, src acdb ...`).
    pub notes: Vec<String>,
}

/// How the baselines will run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaselineOptions {
    /// Threads each may use (single-threaded baselines are skipped above 1).
    pub threads: usize,
    /// The seed of the inputs they are checked on (the benchmark's).
    pub seed: u64,
    /// Warm or cold calls: a cold run skips baselines timed in Rust ([`Caches::Cold`]).
    pub caches: Caches,
}

impl Default for BaselineOptions {
    fn default() -> Self {
        BaselineOptions { threads: 1, seed: 1, caches: Caches::Warm }
    }
}

/// The requested baselines for `problem`: probes each C library (a small compile, link and
/// run), skips what is missing or does not compute this problem, and runs each remaining one
/// once on the seeded inputs against the reference, skipping any that disagrees.
pub fn baselines(
    compiler: &Compiler,
    problem: &Problem,
    kinds: &[BaselineKind],
    options: &BaselineOptions,
) -> BaselineSet {
    let mut set = BaselineSet::default();
    let mut checker = check::Checker::new(compiler, problem, options);
    let mut seen = Vec::new();
    for &kind in kinds {
        if seen.contains(&kind) {
            continue;
        }
        seen.push(kind);
        let offered = match offer(compiler, problem, kind, options) {
            Ok(offered) => offered,
            Err(reason) => {
                set.skipped.push(SkippedBaseline { kind, reason });
                continue;
            }
        };
        for offer in offered {
            let checked = match offer {
                Offered::C(c) => {
                    let candidate = c.into_candidate();
                    checker.check_c(&candidate).map(|notes| (Candidate::C(candidate), notes))
                }
                Offered::Rust { label, prepare } => {
                    let checked = prepare(problem).and_then(|p| checker.check_rust(&label, p));
                    let prepare = prepare(problem);
                    checked
                        .and(prepare)
                        .map(|prepare| (Candidate::Rust(RustCandidate { label, prepare }), Vec::new()))
                }
            };
            match checked {
                Ok((candidate, notes)) => {
                    set.notes.extend(notes);
                    set.candidates.push(candidate);
                }
                Err(reason) => set.skipped.push(SkippedBaseline { kind, reason }),
            }
        }
    }
    set
}

/// A baseline's candidate before it is checked.
enum Offered {
    /// A C unit.
    C(CBaseline),
    /// A Rust kernel: `prepare` is called once to check it and once more for the benchmark.
    Rust { label: String, prepare: fn(&Problem) -> Result<PrepareRustKernel, String> },
}

/// One baseline's candidates for `problem` (unchecked), or the one-line reason it is unavailable.
///
/// # Errors
/// The reason, e.g. "openblas: not installed (fatal error: cblas.h: No such file or
/// directory); install it with `apt-get install libopenblas-dev`", or "openblas: no
/// convolution".
fn offer(
    compiler: &Compiler,
    problem: &Problem,
    kind: BaselineKind,
    options: &BaselineOptions,
) -> Result<Vec<Offered>, String> {
    problem.validate().map_err(|e| format!("{kind}: {e}"))?;
    let threads = options.threads;
    if threads > 1 && !kind.is_multithreaded() {
        return Err(format!("{kind}: single-threaded only, and {threads} threads were requested"));
    }
    if kind == BaselineKind::Gemm {
        if options.caches == Caches::Cold {
            return Err(format!("{kind}: timed in Rust, which cannot evict its buffers for cold calls"));
        }
        if let Err(why) = gemm::prepare(problem) {
            return Err(format!("{kind}: {why}"));
        }
        return Ok(vec![Offered::Rust { label: kind.name().into(), prepare: gemm::prepare }]);
    }
    // What the library cannot compute is said before whether it is installed.
    let units = c_baselines(kind, problem, threads).map_err(|e| e.reason(kind))?;
    if kind != BaselineKind::Naive {
        probe(compiler, kind)?;
    }
    Ok(units.into_iter().map(Offered::C).collect())
}

/// Why a C baseline has no unit for a problem.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Unavailable {
    /// It does not compute this problem (e.g. "no convolution").
    Unsupported(String),
    /// Its library was not found where it is looked for (what was looked for).
    NotFound(String),
}

impl Unavailable {
    /// The one-line reason for `kind`, with the install command when it is not found.
    fn reason(&self, kind: BaselineKind) -> String {
        match self {
            Unavailable::Unsupported(why) => format!("{kind}: {why}"),
            Unavailable::NotFound(what) => {
                let install = kind.install_hint().map_or(String::new(), |h| format!("; install it with {h}"));
                format!("{kind}: not installed ({what}){install}")
            }
        }
    }
}

impl From<String> for Unavailable {
    fn from(why: String) -> Self {
        Unavailable::Unsupported(why)
    }
}

impl From<&str> for Unavailable {
    fn from(why: &str) -> Self {
        Unavailable::Unsupported(why.to_string())
    }
}

/// A C baseline's units for `problem` (one per variant), or why it does not compute it.
/// `Gemm` is not a C baseline (never called with it).
fn c_baselines(kind: BaselineKind, problem: &Problem, threads: usize) -> Result<Vec<CBaseline>, Unavailable> {
    match kind {
        BaselineKind::Naive | BaselineKind::Gemm => naive::c_baselines(problem, threads),
        BaselineKind::OpenBlas => epilogue::library_baselines(problem, openblas::library),
        BaselineKind::Blis => epilogue::library_baselines(problem, blis::library),
        BaselineKind::Libxsmm => epilogue::library_baselines(problem, libxsmm::library),
        BaselineKind::Mkl => mkl::c_baselines(problem, threads),
        BaselineKind::OneDnn => onednn::c_baselines(problem),
        BaselineKind::Xnnpack => xnnpack::c_baselines(problem),
    }
}

/// The f32 matmul a BLAS-style baseline computes, or why it does not compute `problem`.
fn f32_matmul(problem: &Problem) -> Result<&MatmulProblem, Unavailable> {
    match problem {
        Problem::Matmul(p) if p.dtype == CType::F32 => Ok(p),
        Problem::Matmul(p) => Err(format!("no {} matmul", p.types_name()).into()),
        Problem::Conv(_) => Err("no convolution".into()),
        Problem::Softmax(_) => Err("no softmax".into()),
    }
}

/// Probe results for this process, by compiler command and baseline (libraries do not appear
/// or vanish during a run, and a bench suite asks for the same baselines at every size).
static PROBES: Mutex<BTreeMap<(String, BaselineKind), Result<(), String>>> = Mutex::new(BTreeMap::new());

/// Checks that a C baseline library is installed: compiles, links and runs its 2x2x2 matmul
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
    let install = kind.install_hint().map_or(String::new(), |hint| format!("; install it with {hint}"));
    let problem = Problem::Matmul(MatmulProblem::f32(2, 2, 2));
    let c = c_baselines(kind, &problem, 1)
        .map_err(|e| e.reason(kind))?
        .into_iter()
        .next()
        .ok_or_else(|| format!("{kind}: no matmul to probe with"))?;
    let function = &c.function;
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
            SourceUnit { name: c.function.clone(), source: c.source, flags: c.flags },
        ],
        link_args: c.link_args,
    };
    let options = CompileOptions { warnings: Warnings::Report, ..CompileOptions::default() };
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

/// Creates the empty file `relative` under `prefix`, and its folders: a stand-in for a file of a
/// library's installation in tests of how a prefix is searched.
#[cfg(test)]
fn touch(prefix: &std::path::Path, relative: &str) {
    let path = prefix.join(relative);
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).expect("mkdir");
    }
    std::fs::write(&path, "").expect("write");
}

#[cfg(test)]
mod tests;
