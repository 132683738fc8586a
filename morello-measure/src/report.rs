//! The report of one `morello bench` run as JSON (`morello bench --json`), shared by the CLI and
//! the Python package's `Impl.bench()`, so that both give the same figures under the same names.
//!
//! ```text
//! KernelReport   what was timed (the kernels with their labels and predicted costs, the
//!                baselines), the measurement and the peak; `json()` the whole object
//! result_json    one candidate's figures: median, spread, samples, GFLOP/s, GB/s, % of peak
//! ```
//!
//! The text report is the CLI's (it aligns tables); it reads the same [`KernelReport`].

use morello_codegen::Compiler;
use morello_core::target::Target;
use serde_json::{Value, json};

use crate::compare::{Measurement, percent_of_peak, rate_unit, speedup};
use crate::peak::{PeakVariant, measure_peak_of};
use crate::ranking::{Ranked, Ranking, Regret, first_difference};
use crate::{BenchConfig, CandidateResult, PeakConfig, PeakReport, measure_peak};

/// The label of `morello bench --scaling`'s one-thread kernel.
pub const ONE_THREAD_LABEL: &str = "morello-1-thread";

/// The kernels of a run, the model's pick first, and with `--top-k` what was left out.
#[derive(Debug, Clone, Default)]
pub struct TimedKernels<'a> {
    /// The kernels timed (with their predicted costs), in the order of their labels.
    pub kernels: Vec<Ranked<'a>>,
    /// Variants whose C equals a cheaper one's.
    pub duplicates: usize,
    /// Variants the emitter cannot express.
    pub unemittable: usize,
    /// Variants predicted within `--min-gap` of the one chosen before them.
    pub within_gap: usize,
}

/// Everything a `morello bench` report says.
#[derive(Debug)]
pub struct KernelReport<'a> {
    /// The spec, as spec text.
    pub spec_text: String,
    /// The target.
    pub target: &'a Target,
    /// The compiler.
    pub compiler: &'a Compiler,
    /// How it was measured.
    pub config: &'a BenchConfig,
    /// The machine's FMA peak, or why it was not measured.
    pub peak: &'a Result<PeakReport, String>,
    /// The measurement.
    pub measured: &'a Measurement,
    /// The kernels timed.
    pub kernels: &'a TimedKernels<'a>,
    /// Their labels, in order.
    pub labels: &'a [String],
    /// Whether the kernels are the model's top-k (ranked, with regret and correlation).
    pub top_k: bool,
    /// Whether the spec is memory-bound by shape (GB/s is reported).
    pub memory_bound: bool,
    /// Whether percent of the measured peak (f32 FMA, or int8 for an int8 spec) means something
    /// for the spec.
    pub peak_applies: bool,
    /// Why the figures may not be the machine's: too few samples, other work while timing.
    pub warnings: Vec<String>,
    /// What the report adds to the measurement's notes.
    pub notes: Vec<String>,
}

impl KernelReport<'_> {
    /// The unit of the spec's throughput ([`rate_unit`]): `GOPS` for int8, else `GFLOP/s`.
    pub fn rate_unit(&self) -> &'static str {
        self.kernels.kernels.first().map_or("GFLOP/s", |k| rate_unit(&k.imp.spec))
    }

    /// The measured single-core peak in GFLOP/s (GOPS for an int8 spec).
    pub fn peak_gflops(&self) -> Option<f64> {
        self.peak.as_ref().ok().map(|p| p.gflops)
    }

    /// A result's GFLOP/s as a percentage of the peak (of all threads), where it applies.
    pub fn percent(&self, result: &CandidateResult) -> Option<f64> {
        let peak = self.peak_gflops().filter(|_| self.peak_applies);
        percent_of_peak(result.gflops, peak, self.config.threads)
    }

    /// The result of the first kernel (the best by the model), which ratios are taken against.
    pub fn reference(&self) -> Option<&CandidateResult> {
        self.measured.report.result(self.labels.first()?)
    }

    /// The kernels' rank (from 1), predicted cost and implementation, and result, in rank order.
    pub fn kernel_rows(&self) -> impl Iterator<Item = (usize, &Ranked<'_>, Option<&CandidateResult>)> {
        self.kernels
            .kernels
            .iter()
            .zip(self.labels)
            .enumerate()
            .map(|(i, (k, label))| (i + 1, k, self.measured.report.result(label)))
    }

    /// The kernels that were timed, in rank order: label, predicted cost and result.
    pub fn timed(&self) -> Vec<(&str, u64, &CandidateResult)> {
        self.kernels
            .kernels
            .iter()
            .zip(self.labels)
            .filter_map(|(k, label)| Some((label.as_str(), k.cost, self.measured.report.result(label)?)))
            .collect()
    }

    /// How the timings agree with the model's ranking of the timed kernels, with the timed kernels
    /// (label, predicted cost, median time) the pairs' indices refer to.
    pub fn ranking(&self) -> (Ranking, Vec<(&str, u64, f64)>) {
        let timed = self.timed();
        let costs: Vec<(u64, &CandidateResult)> = timed.iter().map(|&(_, cost, r)| (cost, r)).collect();
        let kernels = timed.iter().map(|&(label, cost, r)| (label, cost, r.stats.median)).collect();
        (Ranking::of(&costs, self.config.seed), kernels)
    }

    /// Whether `label` is one of the kernels (not a baseline).
    pub fn is_kernel(&self, label: &str) -> bool {
        self.labels.iter().any(|l| l == label)
    }

    /// Whether the result of kernel `rank` (`None`: a baseline) gets a speedup of the first kernel
    /// over it: every baseline, and besides the first kernel, `--unfused`'s and `--versus-target`'s.
    pub fn is_compared(&self, rank: Option<usize>) -> bool {
        rank.is_none_or(|i| i > 0 && !self.top_k)
    }

    /// With `--scaling`: how many times faster the kernel runs than the one-thread kernel.
    pub fn scaling(&self) -> Option<f64> {
        self.measured.report.speedup(&self.labels[0], ONE_THREAD_LABEL)
    }

    /// The regret of `ranking` when the model's pick was timed (`kernels` are the timed kernels the
    /// ranking's indices refer to): its ratio and the label of the fastest.
    pub fn regret<'k>(
        &self,
        ranking: &Ranking,
        kernels: &[(&'k str, u64, f64)],
    ) -> Option<(Regret, &'k str)> {
        let pick = kernels.first()?.0;
        let regret = ranking.regret.filter(|_| self.labels.first().is_some_and(|l| l == pick))?;
        Some((regret, kernels[regret.fastest].0))
    }

    fn regret_json(&self, ranking: &Ranking, kernels: &[(&str, u64, f64)]) -> Value {
        match self.regret(ranking, kernels) {
            Some((regret, fastest)) => json!({
                "ratio": regret.ratio,
                "low": regret.interval.map(|(low, _)| low),
                "high": regret.interval.map(|(_, high)| high),
                "fastest": fastest,
            }),
            None => Value::Null,
        }
    }

    /// The report as one JSON object (`morello bench --json`): `{"peak_gflops": x, "results":
    /// [{"name": ..., "gflops": x, "seconds_per_call": x, ...}, ...], ...}`.
    pub fn json(&self) -> Value {
        let reference = self.reference();
        let mut results = Vec::new();
        for result in &self.measured.report.results {
            let mut object = result_json(result, self.percent(result));
            let extra = match self.labels.iter().position(|l| *l == result.label) {
                Some(i) => {
                    let kernel = &self.kernels.kernels[i];
                    let compared =
                        reference.filter(|_| self.is_compared(Some(i))).and_then(|r| speedup(r, result));
                    let verification = &self.measured.verifications[i];
                    let best = self.kernels.kernels[0].imp;
                    json!({
                        "rank": i + 1,
                        "predicted_cost": kernel.cost,
                        "max_abs_error": verification.max_abs_error,
                        "differs": (i > 0).then(|| first_difference(best, kernel.imp, self.target)).flatten(),
                        "impl": kernel.imp.render(self.target),
                        "morello_speedup": compared,
                    })
                }
                None => json!({ "morello_speedup": reference.and_then(|r| speedup(r, result)) }),
            };
            if let (Some(object), Value::Object(extra)) = (object.as_object_mut(), extra) {
                object.extend(extra);
            }
            results.push(object);
        }
        let skipped: Vec<Value> =
            self.measured.skipped.iter().map(|s| json!({"name": s.name, "reason": s.reason})).collect();
        let mut value = json!({
            "spec": self.spec_text,
            "target": self.target.name(),
            "compiler": self.compiler.to_string(),
            "threads": self.config.threads,
            "cpu": self.config.cpu(),
            "bound_cpus": self.measured.report.bound_cpus,
            // What decides the cost of a parallel region (docs/benchmarking.md, "Threads").
            "omp_wait_policy": std::env::var("OMP_WAIT_POLICY").ok(),
            "samples": self.config.samples,
            "min_sample_seconds": self.config.min_sample_seconds,
            "seed": self.config.seed,
            "caches": self.config.caches,
            "peak_gflops": self.peak_gflops(),
            "rate_unit": self.rate_unit(),
            "peak": match self.peak {
                Ok(p) => json!({"variant": format!("{:?}", p.variant), "samples_gflops": p.samples_gflops}),
                Err(reason) => json!({"error": reason}),
            },
            "work": {"flops": self.measured.work.flops, "bytes": self.measured.work.bytes},
            "memory_bound": self.memory_bound,
            "openmp": self.measured.openmp,
            "results": results,
            "skipped": skipped,
            "baselines_not_comparable": self.measured.not_comparable,
            "notes": self.measured.report.notes.iter().chain(&self.notes).collect::<Vec<_>>(),
            "warnings": self.warnings,
        });
        if let (Some(object), true) =
            (value.as_object_mut(), self.labels.iter().any(|l| l == ONE_THREAD_LABEL))
        {
            object.insert("scaling".into(), json!(self.scaling()));
        }
        if self.top_k {
            if let Some(object) = value.as_object_mut() {
                let (ranking, kernels) = self.ranking();
                object.insert("regret".into(), self.regret_json(&ranking, &kernels));
                object.insert("spearman".into(), json!(ranking.spearman));
                object.insert("spearman_interval".into(), json!(ranking.interval.map(|(l, h)| [l, h])));
                let apart = ranking.apart;
                let misordered: Vec<[&str; 2]> =
                    apart.misordered.iter().map(|&(f, s)| [kernels[f].0, kernels[s].0]).collect();
                object.insert(
                    "pairs_apart".into(),
                    json!({"pairs": apart.pairs, "apart": apart.apart, "ordered": apart.ordered,
                           "misordered": misordered}),
                );
                object.insert("duplicates_dropped".into(), json!(self.kernels.duplicates));
                object.insert("unemittable_dropped".into(), json!(self.kernels.unemittable));
                object.insert("within_gap_dropped".into(), json!(self.kernels.within_gap));
            }
        }
        value
    }
}

/// One candidate's result as JSON: `name`, `gflops`, `seconds_per_call` (the median), the
/// spread, every sample, GB/s, percent of peak.
pub fn result_json(result: &CandidateResult, percent: Option<f64>) -> Value {
    let s = &result.stats;
    json!({
        "name": result.label,
        "runtime": match result.runtime {
            crate::bench::Runtime::C => "c",
            crate::bench::Runtime::Rust => "rust",
            crate::bench::Runtime::Process => "process",
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

/// Measures the machine's single-core peak once, on the CPU the benchmark will use: of `variant`
/// (a spec's, [`PeakVariant::for_spec`]) if given, else the f32 FMA peak; `Err` is a one-line
/// reason it could not be.
pub fn measure_peak_once(
    compiler: &Compiler,
    config: &BenchConfig,
    variant: Option<PeakVariant>,
) -> Result<PeakReport, String> {
    let peak_config = PeakConfig { min_seconds: config.min_sample_seconds, samples: 3, cpu: config.cpu() };
    match variant {
        Some(variant) => measure_peak_of(compiler, &peak_config, variant),
        None => measure_peak(compiler, &peak_config),
    }
    .map_err(|e| e.to_string())
}
