//! What `bench` and `bench-suite` share: the measurement options, the peak probe, and one
//! side-by-side run of verified morello kernels and the baselines that compute the same thing.
//!
//! ```text
//! kernels ──emit, compile, run once, compare with the reference──► verified (else: an error, no timing)
//! spec ──row-major matmul of one dtype?──► baselines (each probed; a missing one is skipped with a reason)
//! kernels + baselines ──one program, same inputs, alternating, pinned──► BenchReport (morello_measure::run_bench)
//! ```

use anyhow::{Result, anyhow};
use indicatif::ProgressBar;
use morello_codegen::{
    BuildDir, CodegenError, CompileOptions, Compiler, KernelSignature, OpenMp, Verification, VerifyOptions,
    Warnings, verify_impls,
};
use morello_core::dtype::Dtype;
use morello_core::imp::Impl;
use morello_core::layout::{Layout, LayoutDim};
use morello_core::spec::{LogicalSpec, PrimitiveKind};
use morello_core::target::Target;
use morello_measure::baselines::{ActivationLayout, ConvPadding, FilterLayout, SoftmaxProblem};
use morello_measure::bench::{DEFAULT_MIN_SAMPLE_SECONDS, DEFAULT_SAMPLES};
use morello_measure::{
    BaselineKind, BaselineOptions, BenchConfig, BenchReport, BenchRequest, CCandidate, Caches, Candidate,
    CandidateResult, ConvProblem, Epilogue, MatmulProblem, PeakConfig, PeakProbe, PeakReport, Pinning,
    Problem, Work, baselines, measure_peak,
};
use serde_json::{Value, json};

use crate::commands::run::serial_note;
use crate::failure::bad_input;

/// How to measure: options shared by `bench` and `bench-suite`.
#[derive(Debug, Clone, clap::Args)]
pub struct MeasureArgs {
    /// Baselines to time beside morello, comma-separated: naive, openblas, blis, libxsmm, mkl,
    /// onednn, xnnpack, gemm, all or none (default: all; with --top-k, none).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub baseline: Vec<String>,
    /// Samples per candidate; figures worth reporting need at least the default (fewer is for
    /// quick checks and tests, and is flagged as noisy).
    #[arg(long, default_value_t = DEFAULT_SAMPLES, value_name = "N", value_parser = crate::numbers::parse_count)]
    pub samples: usize,
    /// Minimum seconds per sample (repetitions are calibrated to reach it); as with --samples,
    /// less than the default is for quick checks and tests only.
    #[arg(
        long,
        default_value_t = DEFAULT_MIN_SAMPLE_SECONDS,
        value_name = "SECONDS",
        value_parser = crate::numbers::parse_seconds_f64
    )]
    pub min_sample_seconds: f64,
    /// Seed of the inputs, for verification and timing.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Threads for the kernel (its parallel loops, through OpenMP) and the libraries; more than
    /// one runs unpinned, and single-threaded baselines are skipped.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = crate::numbers::parse_count)]
    pub threads: usize,
    /// Pin to this CPU (default with one thread: the highest-numbered CPU this process may use).
    #[arg(long, value_name = "CPU", conflicts_with = "no_pin")]
    pub cpu: Option<usize>,
    /// Do not pin anything to a CPU.
    #[arg(long)]
    pub no_pin: bool,
    /// Where each call's operands start. `warm`: calls run back to back, so the operands stay in
    /// the caches that hold them (how libraries are usually timed). `cold`: each call is timed
    /// alone after its operands were evicted from every cache, so they start in main memory, where
    /// the cost model's specs place them. Cold runs skip the Rust baseline (gemm).
    #[arg(long, value_enum, value_name = "STATE", default_value = "warm")]
    pub caches: CacheState,
}

/// `--caches`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CacheState {
    /// Back-to-back calls.
    Warm,
    /// Each call after its operands were evicted.
    Cold,
}

impl MeasureArgs {
    /// The benchmark configuration (the peak is measured separately, once per command).
    ///
    /// # Errors
    /// Bad input for zero samples or threads, or a sample time outside (0, 3600] seconds.
    pub fn config(&self) -> Result<BenchConfig> {
        if self.samples == 0 {
            return Err(bad_input("--samples must be at least 1"));
        }
        if self.threads == 0 {
            return Err(bad_input("--threads must be at least 1"));
        }
        let seconds = self.min_sample_seconds;
        if !(seconds > 0.0 && seconds <= 3600.0) {
            return Err(bad_input(format!("--min-sample-seconds must be in (0, 3600], got {seconds}")));
        }
        let pinning = match (self.cpu, self.no_pin) {
            (Some(cpu), _) => Pinning::Cpu(cpu),
            (None, true) => Pinning::Unpinned,
            (None, false) => Pinning::Auto,
        };
        Ok(BenchConfig {
            min_sample_seconds: seconds,
            samples: self.samples,
            seed: self.seed,
            threads: self.threads,
            pinning,
            peak: PeakProbe::Skip,
            caches: match self.caches {
                CacheState::Warm => Caches::Warm,
                CacheState::Cold => Caches::Cold,
            },
        })
    }

    /// The requested baselines, in the order given, without repeats; `default` when none is named.
    ///
    /// # Errors
    /// Bad input for an unknown name.
    pub fn baselines(&self, default: &[BaselineKind]) -> Result<Vec<BaselineKind>> {
        if self.baseline.is_empty() {
            return Ok(default.to_vec());
        }
        let mut kinds = Vec::new();
        for name in &self.baseline {
            let name = name.trim();
            let named: Vec<BaselineKind> = match name.to_ascii_lowercase().as_str() {
                "all" => BaselineKind::ALL.to_vec(),
                "none" => Vec::new(),
                _ => vec![name.parse().map_err(|e| bad_input(format!("--baseline: {e} (or all, none)")))?],
            };
            for kind in named {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
        }
        Ok(kinds)
    }

    /// A warning when the sampling is below the defaults that reported figures use.
    pub fn noise_note(&self) -> Option<String> {
        (self.samples < DEFAULT_SAMPLES || self.min_sample_seconds < DEFAULT_MIN_SAMPLE_SECONDS).then(|| {
            format!(
                "{} samples of >= {} s is below the defaults ({DEFAULT_SAMPLES} of >= {DEFAULT_MIN_SAMPLE_SECONDS} s): \
                 figures are noisy; do not report them",
                self.samples, self.min_sample_seconds
            )
        })
    }
}

/// Measures the machine's single-core f32 FMA peak once, on the CPU the benchmark will use;
/// `Err` is a one-line reason it could not be.
pub fn measure_peak_once(compiler: &Compiler, config: &BenchConfig) -> Result<PeakReport, String> {
    let peak_config = PeakConfig { min_seconds: config.min_sample_seconds, samples: 3, cpu: config.cpu() };
    measure_peak(compiler, &peak_config).map_err(|e| e.to_string())
}

/// One line describing the peak.
pub fn peak_line(peak: &Result<PeakReport, String>) -> String {
    match peak {
        Ok(p) => format!(
            "{:.1} GFLOP/s f32 on one core ({} FMA probe, best of {})",
            p.gflops,
            match p.variant {
                morello_measure::peak::PeakVariant::Avx512 => "AVX-512",
                morello_measure::peak::PeakVariant::Avx2 => "AVX2",
            },
            p.samples_gflops.len()
        ),
        Err(reason) => format!("not measured ({reason})"),
    }
}

/// One line describing threads, pinning (OpenMP's threads bound to `bound`, if any) and sampling.
pub fn protocol_line(config: &BenchConfig, bound: &[usize]) -> String {
    let threads = match (config.threads, config.cpu()) {
        (1, Some(cpu)) => format!("1 thread pinned to CPU {cpu}"),
        (1, None) => "1 thread, unpinned".to_string(),
        (n, Some(cpu)) => format!("{n} threads on CPU {cpu}"),
        (n, None) if bound.is_empty() => format!("{n} threads, unpinned"),
        (n, None) => {
            let cpus: Vec<String> = bound.iter().map(ToString::to_string).collect();
            format!("{n} threads, OpenMP's bound to CPUs {} in thread order", cpus.join(", "))
        }
    };
    let calls = match config.caches {
        Caches::Warm => "",
        Caches::Cold => "; cold: each call timed alone, its operands evicted from the caches first",
    };
    format!(
        "{threads}; {} samples of >= {} s per candidate, candidates alternating; inputs from seed {}{calls}",
        config.samples, config.min_sample_seconds, config.seed
    )
}

/// The work one call of `spec` does: `2 x (iteration space)` operations for matmuls and
/// convolutions (one multiply-add per point), and each operand's bytes once.
pub fn spec_work(spec: &LogicalSpec) -> Work {
    let bytes: f64 =
        spec.operands.iter().map(|o| o.shape.volume() as f64 * f64::from(o.dtype.size_bytes())).sum();
    let flops = match spec.kind {
        PrimitiveKind::Matmul { .. } | PrimitiveKind::Conv { .. } | PrimitiveKind::MatmulBias { .. } => {
            Some(2.0 * spec.shape.volume() as f64)
        }
        _ => None,
    };
    Work { flops, bytes: Some(bytes) }
}

/// Whether the spec is memory-bound by shape: a vector-matrix or matrix-vector product (`M = 1` or
/// `N = 1`), or a move or fill (no arithmetic). Its GB/s is reported beside GFLOP/s.
pub fn is_memory_bound(spec: &LogicalSpec) -> bool {
    match spec.kind {
        PrimitiveKind::Matmul { .. } | PrimitiveKind::MatmulBias { .. } => {
            matches!(spec.shape.dims(), [_, 1, _, _] | [_, _, _, 1])
        }
        PrimitiveKind::Conv { .. } => false,
        _ => true,
    }
}

/// Whether percent of the f32 FMA peak means something for the spec: every operand is f32 and it
/// does arithmetic.
pub fn peak_applies(spec: &LogicalSpec) -> bool {
    spec_work(spec).flops.is_some() && spec.operands.iter().all(|o| o.dtype == Dtype::F32)
}

/// The problem the baselines would compute for `spec` (see `morello_measure::Problem`), or why
/// they cannot.
///
/// # Errors
/// A sentence saying what about the spec the baselines do not do.
pub fn baseline_problem(spec: &LogicalSpec) -> Result<Problem, String> {
    match spec.kind {
        PrimitiveKind::Matmul { accum: false } | PrimitiveKind::MatmulBias { .. } => {
            matmul_problem(spec).map(Problem::Matmul)
        }
        PrimitiveKind::Softmax => {
            let [rows, cols] = *spec.shape.dims() else { return Err("the softmax is not 2-D".into()) };
            plain_operands(spec)?;
            Ok(Problem::Softmax(SoftmaxProblem { rows: size(rows)?, cols: size(cols)? }))
        }
        PrimitiveKind::AddBias { .. }
        | PrimitiveKind::Max { .. }
        | PrimitiveKind::SoftmaxExp { .. }
        | PrimitiveKind::SoftmaxScale => {
            Err("the spec is a part of a larger operator; the baselines compute whole operators".into())
        }
        PrimitiveKind::Conv { accum: false, .. } => conv_problem(spec).map(Problem::Conv),
        PrimitiveKind::Matmul { accum: true } => {
            Err("the spec is an accumulating matmul (out += lhs * rhs); the baselines overwrite out".into())
        }
        PrimitiveKind::Conv { accum: true, .. } => {
            Err("the spec is an accumulating convolution (out += ...); the baselines overwrite out".into())
        }
        PrimitiveKind::Move => {
            Err("the spec is a move; the baselines compute matmuls, convolutions and softmax".into())
        }
        PrimitiveKind::Fill { .. } => {
            Err("the spec is a fill; the baselines compute matmuls, convolutions and softmax".into())
        }
    }
}

/// Checks that every operand has one element type and is row-major (the layout the baselines'
/// problems name), and returns that type.
fn plain_operands(spec: &LogicalSpec) -> Result<Dtype, String> {
    let dtype = spec.operands[0].dtype;
    if spec.operands.iter().any(|o| o.dtype != dtype) {
        let names: Vec<&str> = spec.operands.iter().map(|o| o.dtype.name()).collect();
        return Err(format!("the operands are {}; the baselines need one element type", names.join(", ")));
    }
    for (index, operand) in spec.operands.iter().enumerate() {
        let rank =
            u8::try_from(operand.shape.rank()).map_err(|_| format!("operand {index} has too many dims"))?;
        let row_major = Layout::row_major(rank).canonicalize(&operand.shape).ok();
        if row_major.as_ref() != Some(&operand.layout) {
            return Err(format!("operand {index} is not row-major; the baselines are"));
        }
    }
    Ok(dtype)
}

fn size(d: u32) -> Result<usize, String> {
    usize::try_from(d).map_err(|_| "a dimension is too large".to_string())
}

/// The row-major matmul the baselines would compute for a matmul spec, or why they cannot.
///
/// # Errors
/// A sentence saying what about the spec the baselines do not do.
pub fn matmul_problem(spec: &LogicalSpec) -> Result<MatmulProblem, String> {
    let epilogue = match spec.kind {
        PrimitiveKind::Matmul { accum: false } => Epilogue::NONE,
        PrimitiveKind::MatmulBias { activation } => Epilogue { bias: true, activation },
        _ => return baseline_problem(spec).and_then(|_| Err("the spec is not a matmul".to_string())),
    };
    let &[batch, m, k, n] = spec.shape.dims() else {
        return Err("the matmul is not of rank 3".into());
    };
    if batch != 1 {
        return Err(format!("the matmul is batched ({batch}); the baselines are not"));
    }
    let dtype = plain_operands(spec)?;
    Ok(MatmulProblem {
        m: size(m)?,
        k: size(k)?,
        n: size(n)?,
        dtype: morello_codegen::emit::c_type(dtype),
        epilogue,
    })
}

/// The convolution the baselines would compute for a conv spec (iteration shape `N, K, C, OH, OW,
/// R, S`; NCHW or NHWC image and output, OIHW, HWIO or OHWI filters; strides, padding and
/// dilations from its geometry), or why they cannot.
///
/// # Errors
/// A sentence saying what about the spec the baselines do not do.
pub fn conv_problem(spec: &LogicalSpec) -> Result<ConvProblem, String> {
    let PrimitiveKind::Conv { geometry, .. } = spec.kind else {
        return Err("the spec is not a convolution".into());
    };
    let &[_, k, _, _, _, r, s] = spec.shape.dims() else {
        return Err("the convolution is not of rank 7".into());
    };
    if spec.operands.iter().any(|o| o.dtype != Dtype::F32) {
        return Err("the convolution is not f32; the baselines are".into());
    }
    let order = |operand: usize, dims: [u8; 4]| {
        let o = &spec.operands[operand];
        let layout = Layout::new(dims.iter().map(|&d| LayoutDim::dynamic(d)).collect()).ok()?;
        (layout.canonicalize(&o.shape).ok()? == o.layout).then_some(())
    };
    let layout = if order(0, [0, 1, 2, 3]).is_some() && order(2, [0, 1, 2, 3]).is_some() {
        ActivationLayout::Nchw
    } else if order(0, [0, 2, 3, 1]).is_some() && order(2, [0, 2, 3, 1]).is_some() {
        ActivationLayout::Nhwc
    } else {
        return Err(
            "the image and output are not both NCHW or both NHWC; the baselines need one of those".into()
        );
    };
    let filter_layout = if order(1, [0, 1, 2, 3]).is_some() {
        FilterLayout::Oihw
    } else if order(1, [2, 3, 1, 0]).is_some() {
        FilterLayout::Hwio
    } else if order(1, [0, 2, 3, 1]).is_some() {
        FilterLayout::Ohwi
    } else {
        return Err("the filters are not OIHW, HWIO or OHWI; the baselines need one of those".into());
    };
    let [n, c, h, w] = *spec.operands[0].shape.dims() else {
        return Err("the image is not of rank 4".into());
    };
    let [t, b, l, rt] = geometry.padding.map(usize::from);
    let mut problem = ConvProblem::new(
        [size(n)?, size(c)?, size(h)?, size(w)?],
        [size(k)?, size(r)?, size(s)?],
        layout,
        filter_layout,
    );
    problem.stride = geometry.stride.map(usize::from);
    problem.dilation = geometry.dilation.map(usize::from);
    problem.padding = ConvPadding { top: t, bottom: b, left: l, right: rt };
    let [oh, ow] = [spec.shape.dim(3), spec.shape.dim(4)].map(|d| d as usize);
    if problem.out_dims() != Some([oh, ow]) {
        return Err(format!("the baselines would compute a {:?} output, not {oh}x{ow}", problem.out_dims()));
    }
    Ok(problem)
}

/// Whether two call shapes agree parameter by parameter (element type, count and role; names
/// may differ).
fn same_call_shape(a: &KernelSignature, b: &KernelSignature) -> bool {
    a.params.len() == b.params.len()
        && a.params
            .iter()
            .zip(&b.params)
            .all(|(x, y)| (x.c_type, x.elements, x.role) == (y.c_type, y.elements, y.role))
}

/// A morello kernel to time.
pub struct KernelCandidate<'a> {
    /// Its label (`morello`, or `morello-3` for the third of several).
    pub label: String,
    /// Its implementation.
    pub imp: &'a Impl,
}

/// A baseline that was not timed, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// The baseline's name.
    pub name: String,
    /// One line: why, and how to install it if that is the reason.
    pub reason: String,
}

/// The outcome of one side-by-side run.
pub struct Measurement {
    /// The timings, kernels first, then the baselines.
    pub report: BenchReport,
    /// Each kernel's verification, in order.
    pub verifications: Vec<Verification>,
    /// Whether any kernel has parallel loops.
    pub parallel_loops: bool,
    /// Whether they run in parallel (compiled with OpenMP: the compiler has it).
    pub openmp: bool,
    /// Baselines requested but not timed.
    pub skipped: Vec<Skipped>,
    /// Why no baseline applies to this spec at all, if so.
    pub not_comparable: Option<String>,
    /// The work per call.
    pub work: Work,
}

/// Verifies the kernels, then times them and the baselines that apply in one run.
///
/// # Errors
/// A kernel that does not verify (nothing is timed), a host that cannot run the kernels,
/// compile and run failures.
pub fn measure(
    compiler: &Compiler,
    target: &Target,
    spec: &LogicalSpec,
    kernels: &[KernelCandidate<'_>],
    kinds: &[BaselineKind],
    config: &BenchConfig,
) -> Result<Measurement> {
    let imps: Vec<&Impl> = kernels.iter().map(|k| k.imp).collect();
    let options =
        VerifyOptions { seed: config.seed, build_dir: BuildDir::Temporary, warnings: Warnings::Report };
    let verified = verify_impls(&imps, target, compiler, &options).map_err(|e| match e {
        e @ CodegenError::MissingHostFeatures { .. } => anyhow!(
            "the kernel for {} compiled, but this machine cannot run it: {e}; \
             choose a target it supports (e.g. --target x86)",
            target.name()
        ),
        e => anyhow::Error::new(e),
    })?;
    for (kernel, v) in kernels.iter().zip(&verified) {
        if let Some(mismatch) = &v.verification.mismatch {
            return Err(anyhow!("{} failed verification, so it is not timed: {mismatch}", kernel.label));
        }
    }
    let mut features = Vec::new();
    for f in verified.iter().flat_map(|v| &v.kernel.features) {
        if !features.contains(f) {
            features.push(*f);
        }
    }
    features.sort();
    let parallel_loops = verified.iter().any(|v| v.kernel.openmp == OpenMp::Enabled);
    let serial_note = if parallel_loops { serial_note(compiler) } else { None };
    let openmp = parallel_loops && serial_note.is_none();
    let signature =
        verified.first().map(|v| v.kernel.signature.clone()).ok_or_else(|| anyhow!("no kernel to time"))?;
    let mut candidates: Vec<Candidate> = kernels
        .iter()
        .zip(&verified)
        .map(|(kernel, v)| {
            Candidate::C(CCandidate {
                entry: morello_codegen::BenchEntry::new(
                    kernel.label.clone(),
                    v.kernel.signature.name.clone(),
                ),
                unit: None,
                link_args: Vec::new(),
            })
        })
        .collect();

    let mut skipped = Vec::new();
    let mut not_comparable = None;
    let mut baseline_notes = Vec::new();
    if !kinds.is_empty() {
        match baseline_problem(spec) {
            Ok(problem) if same_call_shape(&problem.signature("f"), &signature) => {
                let options =
                    BaselineOptions { threads: config.threads, seed: config.seed, caches: config.caches };
                let set = baselines(compiler, &problem, kinds, &options);
                candidates.extend(set.candidates);
                baseline_notes = set.notes;
                skipped.extend(
                    set.skipped
                        .into_iter()
                        .map(|s| Skipped { name: s.kind.name().to_string(), reason: s.reason }),
                );
            }
            Ok(_) => not_comparable = Some("the kernel's parameters differ from the baselines'".to_string()),
            Err(reason) => not_comparable = Some(reason),
        }
    }

    let work = spec_work(spec);
    let request = BenchRequest {
        signature,
        kernel_source: verified.iter().map(|v| v.kernel.source.as_str()).collect::<Vec<_>>().join("\n"),
        options: CompileOptions {
            features,
            openmp: if openmp { OpenMp::Enabled } else { OpenMp::Disabled },
            warnings: Warnings::Report,
        },
        candidates,
        work,
    };
    let mut report = morello_measure::run_bench(compiler, request, config)?;
    report.notes.extend(serial_note);
    report.notes.extend(baseline_notes);
    Ok(Measurement {
        report,
        verifications: verified.into_iter().map(|v| v.verification).collect(),
        parallel_loops,
        openmp,
        skipped,
        not_comparable,
        work,
    })
}

/// GFLOP/s as a percentage of `peak` (single-core GFLOP/s) times the thread count.
pub fn percent_of_peak(gflops: Option<f64>, peak: Option<f64>, threads: usize) -> Option<f64> {
    let peak = peak.filter(|p| *p > 0.0)? * threads as f64;
    gflops.map(|g| 100.0 * g / peak)
}

/// How many times faster `reference` is than `result` (`result`'s median / `reference`'s).
pub fn speedup(reference: &CandidateResult, result: &CandidateResult) -> Option<f64> {
    (reference.stats.median > 0.0).then(|| result.stats.median / reference.stats.median)
}

/// One candidate's result as JSON: `name`, `gflops`, `seconds_per_call` (the median), the
/// spread, every sample, GB/s, percent of peak.
pub fn result_json(result: &CandidateResult, percent: Option<f64>) -> Value {
    let s = &result.stats;
    json!({
        "name": result.label,
        "runtime": match result.runtime {
            morello_measure::bench::Runtime::C => "c",
            morello_measure::bench::Runtime::Rust => "rust",
        },
        "gflops": result.gflops,
        "gbytes_per_second": result.gbytes_per_second,
        "seconds_per_call": s.median,
        "spread": {"min": s.min, "q1": s.q1, "median": s.median, "q3": s.q3, "max": s.max},
        "relative_iqr": s.relative_iqr(),
        "samples_seconds_per_call": result.seconds_per_call,
        "reps_per_sample": result.reps_per_sample,
        "percent_of_peak": percent,
    })
}

/// A spinner on standard error while timing, shown only when asked or when stderr is a terminal.
pub fn spinner(progress: bool, quiet: bool, message: String) -> ProgressBar {
    let bar =
        crate::progress::bar(crate::progress::shown(progress, quiet), None, "{spinner} {msg} ({elapsed})");
    bar.set_message(message);
    bar
}

/// A rough duration of timing `candidates` candidates: calibration (about two samples' worth) and
/// the samples, plus the peak probe.
pub fn expected_seconds(candidates: usize, config: &BenchConfig) -> f64 {
    (candidates as f64 * (config.samples as f64 + 2.0) + 5.0) * config.min_sample_seconds
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use morello_core::target::Target;

    use super::*;

    fn spec(text: &str) -> LogicalSpec {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        LogicalSpec::parse(text, &target).unwrap().canonicalize(&target).unwrap().logical().clone()
    }

    #[test]
    fn only_row_major_single_dtype_plain_matmuls_have_baselines() {
        let ok = spec("Matmul(1x1x8x4, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
        assert_eq!(matmul_problem(&ok), Ok(MatmulProblem::f32(1, 8, 4)));
        let u32 = spec("Matmul(1x2x3x4, u32 GL row-major, u32 GL row-major, u32 GL row-major)");
        assert_eq!(matmul_problem(&u32).map(|p| p.dtype), Ok(morello_codegen::CType::U32));
        for (text, why) in [
            (
                "Matmul(1x2x3x4, f32 GL row-major, f32 GL col-major, f32 GL row-major)",
                "operand 1 is not row-major",
            ),
            ("MatmulAccum(1x2x3x4, f32 GL row-major, f32 GL row-major, f32 GL row-major)", "accumulating"),
            ("Matmul(2x2x3x4, f32 GL row-major, f32 GL row-major, f32 GL row-major)", "batched"),
            ("Matmul(1x2x4x4, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)", "bf16, bf16, f32"),
            ("Move(8x8, f32 GL row-major, f32 GL col-major)", "a move"),
        ] {
            let reason = matmul_problem(&spec(text)).unwrap_err();
            assert!(reason.contains(why), "{text}: {reason}");
        }
    }

    #[test]
    fn a_fused_epilogue_maps_to_its_problem_and_keeps_its_json_name() {
        let gelu = spec(
            "MatmulBiasGelu(1x2x3x4, f32 GL row-major, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
        );
        let epilogue = matmul_problem(&gelu).unwrap().epilogue;
        assert_eq!(epilogue.to_string(), "bias,gelu");
        let json = serde_json::to_value(epilogue).unwrap();
        assert_eq!(json, serde_json::json!({ "bias": true, "activation": "GeluTanh" }));
    }

    #[test]
    fn a_valid_nchw_conv_maps_to_its_problem() {
        let conv = spec("Conv(2x8x4x6x5x3x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
        let problem = conv_problem(&conv).unwrap();
        assert_eq!((problem.batch, problem.in_channels, problem.height, problem.width), (2, 4, 8, 6));
        assert_eq!((problem.out_channels, problem.kernel_h, problem.kernel_w), (8, 3, 2));
        assert_eq!(problem.out_dims(), Some([6, 5]));
        assert_eq!(problem.layout, ActivationLayout::Nchw);
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let canonical = LogicalSpec::parse(
            "Conv(2x8x4x6x5x3x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
            &target,
        )
        .unwrap()
        .canonicalize(&target)
        .unwrap();
        let kernel = morello_codegen::emit::kernel_signature(canonical.logical(), "kernel").unwrap();
        assert!(same_call_shape(&Problem::Conv(problem).signature("f"), &kernel));
        let int = spec("Conv(1x2x2x3x3x2x2, i32 GL row-major, i32 GL row-major, i32 GL row-major)");
        assert!(baseline_problem(&int).unwrap_err().contains("not f32"));
        // NHWC, HWIO, stride 2 and padding 0,1 (same on 8 rows): an 8x8 input.
        let nhwc = spec(
            "Conv:s2x2:p0x1x0x1(1x4x3x4x4x3x3, f32 GL [0, 2, 3, 1], f32 GL [2, 3, 1, 0], f32 GL [0, 2, 3, 1])",
        );
        let problem = conv_problem(&nhwc).unwrap();
        assert_eq!((problem.layout, problem.filter_layout), (ActivationLayout::Nhwc, FilterLayout::Hwio));
        assert_eq!((problem.height, problem.width, problem.stride), (8, 8, [2, 2]));
        assert_eq!(problem.padding, ConvPadding { top: 0, bottom: 1, left: 0, right: 1 });
    }

    #[test]
    fn work_counts_multiply_adds_twice_and_each_operand_once() {
        let mm = spec_work(&spec("Matmul(1x2x3x4, f32 GL row-major, f32 GL row-major, f32 GL row-major)"));
        assert_eq!(mm.flops, Some(48.0));
        assert_eq!(mm.bytes, Some(4.0 * (6.0 + 12.0 + 8.0)));
        let bf16 = spec("Matmul(1x1x4x4, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)");
        assert_eq!(spec_work(&bf16).bytes, Some(2.0 * (4.0 + 16.0) + 4.0 * 4.0));
        assert!(is_memory_bound(&bf16) && !peak_applies(&bf16));
        let mv = spec("Move(8x8, f32 GL row-major, f32 GL col-major)");
        assert_eq!(spec_work(&mv).flops, None);
        assert!(is_memory_bound(&mv) && !peak_applies(&mv));
        assert_eq!(percent_of_peak(Some(50.0), Some(100.0), 2), Some(25.0));
        assert_eq!(percent_of_peak(Some(50.0), None, 1), None);
    }
}
