//! `Impl.bench()`: the implementation verified, then timed beside the baselines in one run, with
//! the machine's FMA peak measured first; the result is the JSON of `morello bench --json`
//! ([`KernelReport::json`], the same code), which the Python part parses into a dict. Other
//! implementations of the same spec (`versus=`) are timed in the same run, labelled
//! `morello-NAME`, as `morello bench --versus-target` times another target's kernel.

use morello_codegen::Compiler;
use morello_core::isa::Architecture;
use morello_core::target::Target;
use morello_measure::compare::{is_memory_bound, peak_applies};
use morello_measure::peak::PeakVariant;
use morello_measure::ranking::Ranked;
use morello_measure::report::{KernelReport, TimedKernels, measure_peak_once};
use morello_measure::{BenchConfig, Caches, KernelCandidate, PeakProbe, Pinning, baselines_named, measure};
use morello_search::{CancelToken, Solution};
use pyo3::prelude::*;

use crate::cancel::run_cancellable;
use crate::error::{bad_input, to_py};

/// The label of the implementation in the report (that of `morello bench`'s kernel).
const LABEL: &str = "morello";

/// What `bench()` was asked (its keyword arguments).
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Baseline names (`openblas`, ..., `all`, `none`).
    pub baselines: Vec<String>,
    /// Samples per candidate.
    pub samples: usize,
    /// The minimum duration of a sample.
    pub min_sample_seconds: f64,
    /// Threads (0: the target's processors).
    pub threads: usize,
    /// The seed of the inputs.
    pub seed: u64,
    /// `warm` or `cold`.
    pub caches: String,
    /// The CPU to pin to (one thread only).
    pub cpu: Option<usize>,
}

/// The measurement's configuration, checked as the CLI checks its flags.
fn config(options: &BenchOptions, processors: u32) -> PyResult<BenchConfig> {
    if options.samples == 0 {
        return Err(bad_input("samples must be at least 1"));
    }
    if !(options.min_sample_seconds > 0.0 && options.min_sample_seconds <= 3600.0) {
        return Err(bad_input(format!(
            "min_sample_seconds must be more than 0 and at most 3600, not {}",
            options.min_sample_seconds
        )));
    }
    let threads =
        if options.threads == 0 { usize::try_from(processors).unwrap_or(1) } else { options.threads };
    let caches = match options.caches.as_str() {
        "warm" => Caches::Warm,
        "cold" => Caches::Cold,
        other => return Err(bad_input(format!("caches must be \"warm\" or \"cold\", not {other:?}"))),
    };
    let pinning = options.cpu.map_or(Pinning::Auto, Pinning::Cpu);
    Ok(BenchConfig {
        min_sample_seconds: options.min_sample_seconds,
        samples: options.samples,
        seed: options.seed,
        threads,
        pinning,
        peak: PeakProbe::Skip,
        caches,
    })
}

/// Another implementation of the same spec, timed beside the first (`versus=`).
#[derive(Debug)]
pub struct Other<'a> {
    /// Its label's suffix (`morello-NAME`).
    pub name: String,
    /// The target it was searched for (must be the first's).
    pub target: &'a Target,
    /// The implementation.
    pub solution: &'a Solution,
}

/// Verifies and times `solution` beside the baselines; the report as `morello bench --json` prints it.
///
/// # Errors
/// Bad options, a target this host does not run natively, a kernel that does not verify, or
/// `KeyboardInterrupt` (checked between the peak probe and the timing, which cannot be
/// interrupted halfway).
pub fn bench_json(
    py: Python<'_>,
    target: &Target,
    solution: &Solution,
    others: &[Other<'_>],
    options: &BenchOptions,
) -> PyResult<String> {
    let mut labels = vec![LABEL.to_string()];
    let mut timed = TimedKernels {
        kernels: vec![Ranked { imp: &solution.imp, cost: solution.cost }],
        ..TimedKernels::default()
    };
    for Other { name, target: other_target, solution: other } in others {
        let label = format!("{LABEL}-{name}");
        if labels.contains(&label) || name.is_empty() || name.chars().any(|c| c.is_whitespace()) {
            return Err(bad_input(format!(
                "versus names label the other implementations: `{name}` is empty, has a space or is given twice"
            )));
        }
        if other.imp.spec != solution.imp.spec || *other_target != target {
            return Err(bad_input(format!(
                "versus[{name:?}] implements {} on {}, not {} on {}: only implementations of the same spec and \
                 target are timed side by side",
                other.imp.spec.display(other_target),
                other_target.name(),
                solution.imp.spec.display(target),
                target.name()
            )));
        }
        labels.push(label);
        timed.kernels.push(Ranked { imp: &other.imp, cost: other.cost });
    }
    if let Some(architecture) = target.architecture().filter(|a| Some(*a) != Architecture::host()) {
        return Err(bad_input(format!(
            "bench() times kernels on this machine, but target {} is {architecture} code, which runs here only \
             under emulation, and emulated time means nothing",
            target.name()
        )));
    }
    let kinds = baselines_named(&options.baselines)
        .map_err(|e| bad_input(format!("baselines: {e} (or all, none)")))?;
    let config = config(options, target.processors())?;
    let compiler = Compiler::for_target(target).map_err(to_py)?;
    let token = CancelToken::new();
    let (peak, interrupted) = run_cancellable(py, &token, || {
        measure_peak_once(&compiler, &config, PeakVariant::for_spec(solution.imp.spec.logical(), target))
    })?;
    if let Some(interrupt) = interrupted {
        return Err(interrupt);
    }
    let kernels: Vec<KernelCandidate<'_>> = labels
        .iter()
        .zip(&timed.kernels)
        .map(|(label, kernel)| KernelCandidate { label: label.clone(), imp: kernel.imp })
        .collect();
    let (measured, interrupted) = run_cancellable(py, &token, || {
        measure(&compiler, target, &solution.imp.spec, &kernels, &kinds, &config)
    })?;
    if let Some(interrupt) = interrupted {
        return Err(interrupt);
    }
    let measured = measured.map_err(to_py)?;
    let spec = &solution.imp.spec;
    let report = KernelReport {
        spec_text: spec.display(target).to_string(),
        target,
        compiler: &compiler,
        config: &config,
        peak: &peak,
        measured: &measured,
        kernels: &timed,
        labels: &labels,
        top_k: false,
        memory_bound: is_memory_bound(spec),
        peak_applies: peak_applies(spec, target),
        warnings: Vec::new(),
        notes: Vec::new(),
    };
    serde_json::to_string(&report.json()).map_err(to_py)
}
