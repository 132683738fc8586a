//! What `bench` and `bench-suite` share: the measurement options, the peak probe, the lines and
//! JSON that report them, and one side-by-side run of verified morello kernels and the baselines
//! that compute the same thing (`morello_measure::measure` does the work; [`measure_error`] reports
//! its errors as the CLI does).

use anyhow::{Result, anyhow};
use indicatif::ProgressBar;
use morello_codegen::CodegenError;
use morello_core::target::Target;
use morello_measure::bench::{DEFAULT_MIN_SAMPLE_SECONDS, DEFAULT_SAMPLES};
use morello_measure::{
    BaselineKind, BenchConfig, Caches, MeasureError, PeakProbe, PeakReport, Pinning, baselines_named,
};

use crate::failure::bad_input;
use crate::sampling::SamplingArgs;

/// How to measure: options shared by `bench` and `bench-suite`.
#[derive(Debug, Clone, clap::Args)]
pub struct MeasureArgs {
    /// Baselines to time beside morello, comma-separated: naive, openblas, blis, libxsmm, mkl,
    /// onednn, xnnpack, gemm, all or none (default: all; with --top-k, none).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub baseline: Vec<String>,
    #[command(flatten)]
    pub sampling: SamplingArgs,
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
        self.sampling.check()?;
        if self.threads == 0 {
            return Err(bad_input("--threads must be at least 1"));
        }
        let pinning = match (self.cpu, self.no_pin) {
            (Some(cpu), _) => Pinning::Cpu(cpu),
            (None, true) => Pinning::Unpinned,
            (None, false) => Pinning::Auto,
        };
        Ok(BenchConfig {
            min_sample_seconds: self.sampling.min_sample_seconds,
            samples: self.sampling.samples,
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
        baselines_named(&self.baseline).map_err(|e| bad_input(format!("--baseline: {e} (or all, none)")))
    }

    /// A warning when the sampling is below the defaults that reported figures use.
    pub fn noise_note(&self) -> Option<String> {
        self.sampling.below_defaults().then(|| {
            format!(
                "{} samples of >= {} s is below the defaults ({DEFAULT_SAMPLES} of >= {DEFAULT_MIN_SAMPLE_SECONDS} s): \
                 figures are noisy; do not report them",
                self.sampling.samples, self.sampling.min_sample_seconds
            )
        })
    }
}

/// One line describing the peak.
pub fn peak_line(peak: &Result<PeakReport, String>) -> String {
    match peak {
        Ok(p) => format!(
            "{:.1} {} on one core ({} probe, best of {})",
            p.gflops,
            if p.variant.is_int8() { "GOPS int8" } else { "GFLOP/s f32" },
            p.variant.name(),
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

/// The CLI's error for a failed [`morello_measure::measure`] of kernels for `target`: a host
/// that cannot run them says which target to choose; other errors are kept as they are.
pub fn measure_error(target: &Target) -> impl FnOnce(MeasureError) -> anyhow::Error + '_ {
    move |e| match e {
        MeasureError::Codegen(e @ CodegenError::MissingHostFeatures { .. }) => anyhow!(
            "the kernel for {} compiled, but this machine cannot run it: {e}; \
             choose a target it supports (e.g. --target x86)",
            target.name()
        ),
        e => anyhow::Error::new(e),
    }
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
