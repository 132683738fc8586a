//! Calibration: measure a target's kernels and memory levels on this machine and fit the cost
//! model's constants to the measurements (`docs/calibration.md`).
//!
//! ```text
//! 1. measure   microbenchmarks (suite.rs), timed by the side-by-side protocol of crate::bench in
//!              one program pinned to one core: every kernel the target lists, on the operand
//!              levels its kernels use (several sizes each), and one cache line streamed into
//!              vector registers from each cache and memory level (and strided, from memory);
//!              then, with several processors, OpenMP loops against the same loops run serially
//! 2. model     for each measurement, how often the model charges each constant (model.rs),
//!              read off the cost model itself
//! 3. fit       the constants (seconds) minimising the squared relative error, all >= 0 (fit.rs);
//!              the non-contiguity penalty from strided / contiguous streams; the parallel
//!              constants from a line through the parallel loops' overheads
//! 4. units     one scale turns seconds into integer cost units: the reference constant (the
//!              per-vector cost of BroadcastVecMultAdd) becomes `resolution` units; constants
//!              nothing measured keep their value times the same ratio as the reference's
//! ```
//!
//! Nothing here prints or writes files: [`calibrate`] returns a [`Calibration`] holding the fitted
//! [`Target`] and every measurement, and the CLI writes the target file.

mod fit;
mod model;
mod suite;

use morello_core::imp::Parallelism;
use morello_core::kernels::KernelKind;
use morello_core::target::Target;
use serde::Serialize;

use crate::bench::{
    BenchConfig, BenchReport, BenchRequest, CCandidate, Caches, Candidate, PeakProbe, Pinning, Work,
    run_bench,
};
use morello_codegen::CodegenError;
use morello_codegen::compiler::{CompileOptions, Compiler, OpenMp, Warnings};
use morello_codegen::harness::BenchEntry;
use morello_core::target::IsaFeature;

use crate::error::MeasureError;

pub use fit::{Fit, FitError, Problem, fit_relative, nnls, nonnegative_line, to_units, units_per_second};
pub use model::{Parameter, parameters, with_constants};

use suite::{Measures, Suite, SuiteSize};

/// Why calibration failed.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    /// Compiling, running or timing a microbenchmark failed (the machine, or the generated C).
    #[error(transparent)]
    Measure(#[from] MeasureError),
    /// The target has no levels or kernels calibration knows how to measure (the user's target).
    #[error("cannot calibrate target {target}: {reason}")]
    Unsupported {
        /// The target's name.
        target: String,
        /// What is missing.
        reason: String,
    },
    /// The microbenchmarks and the cost model disagree (a bug: a kernel's applicability or cost
    /// changed without the calibration suite).
    #[error("calibration and the cost model disagree: {0}")]
    Model(String),
    /// The fit failed (a measurement was not a positive time).
    #[error(transparent)]
    Fit(#[from] FitError),
    /// The configuration is invalid (the caller's fault).
    #[error("invalid calibration settings: {0}")]
    Invalid(String),
}

impl From<CodegenError> for CalibrationError {
    fn from(error: CodegenError) -> Self {
        CalibrationError::Measure(MeasureError::Codegen(error))
    }
}

/// How to calibrate.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationConfig {
    /// Samples per microbenchmark (the median is used), at least 1.
    pub samples: usize,
    /// The minimum duration of one sample, in seconds.
    pub min_sample_seconds: f64,
    /// Cost units of the reference constant (BroadcastVecMultAdd's per-vector cost), at least 1:
    /// the resolution of the integer constants.
    pub resolution: u64,
    /// Bytes streamed to measure the memory level (beyond every cache).
    pub memory_bytes: u64,
    /// Where the single-threaded measurements run.
    pub pinning: Pinning,
}

/// The default number of samples.
pub const DEFAULT_SAMPLES: usize = 5;
/// The default minimum sample duration, in seconds.
pub const DEFAULT_MIN_SAMPLE_SECONDS: f64 = 0.02;
/// The default resolution.
pub const DEFAULT_RESOLUTION: u64 = 8;
/// The default bytes streamed from memory: 64 MiB.
pub const DEFAULT_MEMORY_BYTES: u64 = 64 << 20;

impl Default for CalibrationConfig {
    fn default() -> Self {
        CalibrationConfig {
            samples: DEFAULT_SAMPLES,
            min_sample_seconds: DEFAULT_MIN_SAMPLE_SECONDS,
            resolution: DEFAULT_RESOLUTION,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            pinning: Pinning::Auto,
        }
    }
}

impl CalibrationConfig {
    fn check(&self) -> Result<(), CalibrationError> {
        let invalid = |why: &str| Err(CalibrationError::Invalid(why.to_string()));
        if self.samples == 0 {
            return invalid("at least one sample is needed");
        }
        if !(self.min_sample_seconds >= 0.0 && self.min_sample_seconds <= 60.0) {
            return invalid("the minimum sample time must be between 0 and 60 seconds");
        }
        if self.resolution == 0 || self.resolution > 1 << 20 {
            return invalid("the resolution must be between 1 and 2^20 units");
        }
        if !(1 << 20..=1 << 34).contains(&self.memory_bytes) {
            return invalid("the memory working set must be between 1 MiB and 16 GiB");
        }
        Ok(())
    }
}

/// Where calibration is, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CalibrationStep {
    /// Compiling and timing the kernel and memory microbenchmarks.
    Kernels {
        /// How many.
        benchmarks: usize,
    },
    /// Compiling and timing the parallel loops.
    ParallelLoops {
        /// How many.
        benchmarks: usize,
    },
    /// Fitting.
    Fitting,
}

/// What one microbenchmark measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    /// Its label, e.g. `BroadcastVecMultAdd.v4` or `stream.L2`.
    pub label: String,
    /// What one invocation is, e.g. `4 vectors of 16 f32, the scalar from L1`.
    pub description: String,
    /// The kernel measured, if it measures one.
    pub kernel: Option<KernelKind>,
    /// Invocations per timed call.
    pub invocations_per_call: u64,
    /// Median seconds per invocation.
    pub seconds: f64,
    /// The fastest and slowest sample, in seconds per invocation.
    pub range: (f64, f64),
    /// The fitted model's cost of one invocation, if the model has one for it.
    pub model_units: Option<u64>,
}

/// Where a constant's new value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ConstantSource {
    /// Fitted to measurements.
    Measured,
    /// Nothing measured it: the target's value times the scale of the reference.
    ScaledDefault,
}

/// One constant of the calibrated target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Constant {
    /// Its name, e.g. `L2.cost_per_line`, `parallel_setup`.
    pub name: String,
    /// Its fitted value in seconds, when measured.
    pub seconds: Option<f64>,
    /// Its value in the calibrated target.
    pub units: u64,
    /// Its value in the target calibration started from.
    pub before: u64,
    /// Where the value came from.
    pub source: ConstantSource,
}

/// The outcome of [`calibrate`].
#[derive(Debug, Clone)]
pub struct Calibration {
    /// The target with fitted constants (same name and description as the one calibrated).
    pub target: Target,
    /// Every measurement, in the suite's order.
    pub measurements: Vec<Measurement>,
    /// Every constant, fitted or scaled.
    pub constants: Vec<Constant>,
    /// The scale: cost units per second.
    pub units_per_second: f64,
    /// The constant that sets the scale, e.g. `BroadcastVecMultAdd.per_unit`.
    pub reference: String,
    /// The root-mean-square relative error of the linear fit over the measurements it used.
    pub rms_relative_error: f64,
    /// Remarks (what was skipped and why).
    pub notes: Vec<String>,
    /// The compiler used.
    pub compiler: String,
    /// The CPU the single-threaded measurements were pinned to.
    pub cpu: Option<usize>,
}

/// Measures `target`'s kernels and levels on this machine and fits its cost constants.
///
/// `progress` is called when a step starts.
///
/// # Errors
/// [`CalibrationError::Invalid`] for a bad configuration; [`CalibrationError::Unsupported`] for a
/// target without vector registers or a cache level feeding them;
/// [`CalibrationError::Measure`] if the host cannot run the target's instructions
/// ([`CodegenError::MissingHostFeatures`]) or a microbenchmark fails to compile or run.
pub fn calibrate(
    compiler: &Compiler,
    target: &Target,
    config: &CalibrationConfig,
    progress: &mut dyn FnMut(CalibrationStep),
) -> Result<Calibration, CalibrationError> {
    config.check()?;
    let mut features = morello_codegen::emit::compile_features(target, &Default::default());
    morello_codegen::host::require_features(&features)?;
    // What the target's kernels need beyond that, where the host has it; the suite leaves the
    // kernels that need the rest unmeasured.
    let host_lacks = morello_codegen::host::missing_features(&IsaFeature::ALL);
    for kind in target.kernels() {
        for feature in kind.required_isa() {
            if !host_lacks.contains(feature) && !features.contains(feature) {
                features.push(*feature);
            }
        }
    }
    let mut notes = Vec::new();
    let kernels = suite::kernel_suite(target, SuiteSize { memory_bytes: config.memory_bytes, host_lacks })?;
    for (kind, why) in &kernels.unmeasured {
        notes.push(format!("{kind} not measured ({why}): its constants are scaled from the target's"));
    }
    progress(CalibrationStep::Kernels { benchmarks: kernels.benches.len() });
    let bench_config = BenchConfig {
        min_sample_seconds: config.min_sample_seconds,
        samples: config.samples,
        seed: 1,
        threads: 1,
        pinning: config.pinning,
        peak: PeakProbe::Skip,
        caches: Caches::Warm,
    };
    let options =
        CompileOptions { features: features.clone(), openmp: OpenMp::Disabled, warnings: Warnings::Report };
    let report = run_bench(compiler, request(&kernels, options), &bench_config)?;
    let mut timed = timings(&kernels, &report)?;

    let host_cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if target.processors() as usize > host_cpus {
        notes.push(format!(
            "the target has {} processors but this machine runs {host_cpus} threads at once: \
             the parallel loops are oversubscribed",
            target.processors()
        ));
    }
    if let (true, Err(e)) = (target.processors() > 1, compiler.openmp()) {
        // Built serially, the parallel suite would time one thread as if it were several.
        notes
            .push(format!("parallel loops not measured ({e}); their constants are scaled from the target's"));
    } else if target.processors() > 1 {
        let parallel = suite::parallel_suite(target);
        progress(CalibrationStep::ParallelLoops { benchmarks: parallel.benches.len() });
        let threads = target.processors() as usize;
        // OpenMP's threads bound one to a CPU, as `morello bench --threads` runs parallel kernels.
        let parallel_config = BenchConfig { threads, pinning: Pinning::Auto, ..bench_config };
        let options = CompileOptions { features, openmp: OpenMp::Enabled, warnings: Warnings::Report };
        match run_bench(compiler, request(&parallel, options), &parallel_config) {
            Ok(report) => timed.extend(timings(&parallel, &report)?),
            Err(e @ MeasureError::Codegen(CodegenError::CompileFailed { .. })) => {
                notes.push(format!(
                    "parallel loops not measured (OpenMP does not build: {e}); their constants are scaled"
                ));
            }
            Err(e) => return Err(e.into()),
        }
    } else {
        notes.push("one processor: the parallel-loop constants are scaled from the target's".into());
    }
    progress(CalibrationStep::Fitting);
    let mut calibration = fit_target(target, &timed, config.resolution)?;
    calibration.notes.splice(0..0, notes);
    calibration.compiler = report.compiler;
    calibration.cpu = report.cpu;
    Ok(calibration)
}

fn request(suite: &Suite, options: CompileOptions) -> BenchRequest {
    let candidates = suite
        .benches
        .iter()
        .map(|b| {
            Candidate::C(CCandidate {
                entry: BenchEntry::new(b.label.clone(), b.function.clone()),
                unit: None,
                link_args: Vec::new(),
            })
        })
        .collect();
    BenchRequest {
        signature: suite::signature(suite),
        kernel_source: suite.source.clone(),
        options,
        candidates,
        work: Work::default(),
    }
}

/// One benchmark and its measured seconds per invocation (median, min, max).
#[derive(Debug, Clone)]
struct Timed {
    bench: suite::Microbenchmark,
    median: f64,
    range: (f64, f64),
}

fn timings(suite: &Suite, report: &BenchReport) -> Result<Vec<Timed>, CalibrationError> {
    suite
        .benches
        .iter()
        .map(|b| {
            let result = report.result(&b.label).ok_or_else(|| {
                CalibrationError::Model(format!("no result for microbenchmark {}", b.label))
            })?;
            let per = b.invocations as f64;
            Ok(Timed {
                bench: b.clone(),
                median: result.stats.median / per,
                range: (result.stats.min / per, result.stats.max / per),
            })
        })
        .collect()
}

/// The smallest positive time the fit takes seriously (below it a measurement is timer noise).
const MIN_SECONDS: f64 = 1e-13;

/// Fits the constants of `target` to measured invocations (step 3 and 4 of the module docs).
fn fit_target(target: &Target, timed: &[Timed], resolution: u64) -> Result<Calibration, CalibrationError> {
    let params = parameters(target);
    let mut problem = Problem::default();
    let mut rows = Vec::new();
    for t in timed {
        let row = model::coefficients(&t.bench.measures, target, &params)?;
        let linear =
            matches!(t.bench.measures, Measures::Kernel { .. } | Measures::Stream { strided: false, .. });
        if let (Some(row), true) = (&row, linear) {
            problem.push(row.clone(), t.median.max(MIN_SECONDS));
        }
        rows.push(row);
    }
    let fit = fit_relative(&problem)?;
    let errors = fit.relative_errors(&problem.observed);
    let rms_relative_error = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len().max(1) as f64).sqrt();

    // The scale: the reference constant becomes `resolution` units.
    let reference = params
        .iter()
        .position(|p| *p == Parameter::PerUnit(KernelKind::BroadcastVecMultAdd))
        .filter(|&j| fit.fitted[j] && fit.values[j] > MIN_SECONDS)
        .or_else(|| {
            (0..params.len())
                .filter(|&j| fit.fitted[j] && fit.values[j] > MIN_SECONDS)
                .min_by(|&i, &j| fit.values[i].total_cmp(&fit.values[j]))
        })
        .ok_or_else(|| CalibrationError::Model("every fitted constant is zero".into()))?;
    let scale = units_per_second(fit.values[reference], resolution)
        .ok_or_else(|| CalibrationError::Model("the reference constant is not a positive time".into()))?;
    let before_reference = params[reference].value(target).max(1);
    let ratio = resolution as f64 / before_reference as f64;
    let scaled = |before: u64| (before as f64 * ratio).round() as u64;

    let mut constants = Vec::new();
    let mut values = Vec::new();
    for (j, p) in params.iter().enumerate() {
        let before = p.value(target);
        let (units, seconds, source) = if fit.fitted[j] {
            (to_units(fit.values[j], scale), Some(fit.values[j]), ConstantSource::Measured)
        } else {
            (scaled(before), None, ConstantSource::ScaledDefault)
        };
        values.push(units);
        constants.push(Constant { name: p.name(target), seconds, units, before, source });
    }

    let costs = target.costs();
    let penalty = noncontiguous_penalty(timed, &rows, &params, &fit.values);
    let (penalty_units, penalty_source) = match penalty {
        Some(p) => (p, ConstantSource::Measured),
        None => (costs.noncontiguous_penalty, ConstantSource::ScaledDefault),
    };
    constants.push(Constant {
        name: "noncontiguous_penalty".into(),
        seconds: None,
        units: penalty_units,
        before: costs.noncontiguous_penalty,
        source: penalty_source,
    });
    let parallel = parallel_constants(timed, target.processors())?;
    let mut parallel_units = [0u64; 2];
    let befores = [costs.parallel_setup, costs.parallel_per_iteration];
    for (k, name) in ["parallel_setup", "parallel_per_iteration"].into_iter().enumerate() {
        let (units, seconds, source) = match parallel {
            Some(fitted) => (to_units(fitted[k], scale), Some(fitted[k]), ConstantSource::Measured),
            None => (scaled(befores[k]), None, ConstantSource::ScaledDefault),
        };
        parallel_units[k] = units;
        constants.push(Constant { name: name.into(), seconds, units, before: befores[k], source });
    }
    let fitted =
        with_constants(target, &params, &values, penalty_units, (parallel_units[0], parallel_units[1]))?;
    let measurements = timed
        .iter()
        .map(|t| Measurement {
            label: t.bench.label.clone(),
            description: t.bench.description.clone(),
            kernel: match &t.bench.measures {
                Measures::Kernel { kind, .. } => Some(*kind),
                _ => None,
            },
            invocations_per_call: t.bench.invocations,
            seconds: t.median,
            range: t.range,
            model_units: model::invocation_cost(&t.bench.measures, &fitted),
        })
        .collect();
    Ok(Calibration {
        target: fitted,
        measurements,
        constants,
        units_per_second: scale,
        reference: params[reference].name(target),
        rms_relative_error,
        notes: Vec::new(),
        compiler: String::new(),
        cpu: None,
    })
}

/// The penalty from the strided and contiguous streams of the same level:
///
/// ```text
/// contiguous  t_c = moves + kernel       strided  t_s = P moves + kernel
/// P = round((t_s - kernel) / (t_c - kernel)), at least 1
/// ```
///
/// with `moves` and `kernel` the fitted parts of the contiguous stream's cost.
fn noncontiguous_penalty(
    timed: &[Timed],
    rows: &[Option<Vec<f64>>],
    params: &[Parameter],
    seconds: &[f64],
) -> Option<u64> {
    let s = timed.iter().position(|t| matches!(t.bench.measures, Measures::Stream { strided: true, .. }))?;
    let Measures::Stream { level, .. } = timed[s].bench.measures else { return None };
    let c = timed.iter().position(
        |t| matches!(t.bench.measures, Measures::Stream { strided: false, level: l, .. } if l == level),
    )?;
    let (_, kernel) = model::stream_parts(rows[c].as_ref()?, params, seconds);
    let contiguous = timed[c].median - kernel;
    let strided = timed[s].median - kernel;
    if !(contiguous > MIN_SECONDS && strided.is_finite()) {
        return None;
    }
    Some(((strided / contiguous).round() as u64).clamp(1, 64))
}

/// `[setup, per_iteration]` in seconds from the parallel and serial loops, or `None` without them:
///
/// ```text
/// overhead(N) = t_parallel(N) - t_serial(N) / N * ceil(N / p)  =  setup + per_iteration * ceil(N / p)
/// ```
fn parallel_constants(timed: &[Timed], processors: u32) -> Result<Option<[f64; 2]>, CalibrationError> {
    let p = u64::from(processors.max(1));
    let mut x = Vec::new();
    let mut y = Vec::new();
    for t in timed {
        let Measures::Loop { iterations, parallelism: Parallelism::Parallel } = t.bench.measures else {
            continue;
        };
        let Some(serial) = timed.iter().find(|s| {
            matches!(s.bench.measures, Measures::Loop { iterations: n, parallelism: Parallelism::Serial } if n == iterations)
        }) else {
            continue;
        };
        let share = iterations.div_ceil(p) as f64;
        x.push(share);
        y.push(t.median - serial.median / iterations as f64 * share);
    }
    if x.len() < 2 {
        return Ok(None);
    }
    let (setup, per_iteration) = nonnegative_line(&x, &y)?;
    Ok(Some([setup, per_iteration]))
}

#[cfg(test)]
mod tests;
