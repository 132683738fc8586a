//! morello-measure: timing C kernels against each other and against libraries, and fitting a
//! target's cost constants to what this machine measures.
//!
//! Code generation (`morello-codegen`) writes, compiles, runs and verifies C; this crate times it:
//!
//! - [`bench`](mod@bench): the side-by-side protocol (kernel and baselines in one run, same
//!   inputs, alternating, pinned) behind [`run_bench`], with [`stats`] for medians and spreads;
//! - [`compare`]: morello's kernels for one spec verified and timed beside each other and the
//!   baselines that compute the same thing ([`measure`]), what the spec's
//!   figures mean, and the other kernels `morello bench` times beside the best; the callers
//!   search for the implementations (this crate never depends on the search);
//! - [`ranking`]: the model's ranked candidates chosen for timing and their timings' agreement
//!   with the ranking;
//! - [`baselines`](mod@baselines): OpenBLAS, BLIS, libxsmm, MKL, oneDNN, XNNPACK, naive loops and a Rust
//!   GEMM with the kernel's call shape, each checked against a reference before it is timed
//!   ([`baselines()`]), and the problem a spec is for them ([`baseline_problem`]);
//! - [`plan`]: planning by measurement: the model's near-best candidates timed on this host and
//!   the fastest picked ([`measure_plan`]), which the caller keeps as wisdom, keyed by the host's
//!   fingerprint ([`host`], [`host_fingerprint`]);
//! - [`peak`]: the FMA-throughput probe for the machine's single-core peak ([`measure_peak`]);
//! - [`correlation`]: Spearman's rank correlation, to compare a cost model's ranking with timings;
//! - [`calibrate`](mod@calibrate): measure a target's kernels and memory levels on this machine
//!   and fit its cost constants ([`calibrate()`](calibrate::calibrate)).
//!
//! Nothing here prints: every function returns values or a [`MeasureError`] (calibration its own
//! [`CalibrationError`](calibrate::CalibrationError)).
//!
//! ```no_run
//! use morello_codegen::{BenchEntry, CType, CompileOptions, Compiler, KernelParam, KernelSignature, ParamRole};
//! use morello_measure::{BenchConfig, BenchRequest, CCandidate, Candidate, Work, run_bench};
//!
//! let kernel = "void scale(const float *x, float *y) {\n\
//!               for (int i = 0; i < 64; i++) y[i] = 2.0f * x[i];\n}\n";
//! let signature = KernelSignature::new("scale", vec![
//!     KernelParam::new("x", CType::F32, 64, ParamRole::Input),
//!     KernelParam::new("y", CType::F32, 64, ParamRole::Output),
//! ]);
//! let request = BenchRequest {
//!     signature,
//!     kernel_source: kernel.into(),
//!     options: CompileOptions::default(),
//!     candidates: vec![Candidate::C(CCandidate {
//!         entry: BenchEntry::new("scale", "scale"),
//!         unit: None,
//!         link_args: vec![],
//!     })],
//!     work: Work { flops: Some(64.0), bytes: None },
//! };
//! let report = run_bench(&Compiler::find()?, request, &BenchConfig::default())?;
//! assert_eq!(report.results.len(), 1);
//! # Ok::<(), morello_measure::MeasureError>(())
//! ```

pub mod baselines;
pub mod bench;
pub mod calibrate;
pub mod compare;
pub mod correlation;
mod error;
pub mod host;
pub mod peak;
pub mod plan;
pub mod ranking;
pub mod report;
pub mod stats;

pub use baselines::{
    BaselineKind, BaselineOptions, BaselineSet, ConvProblem, Epilogue, MatmulProblem, Problem,
    SkippedBaseline, SoftmaxProblem, baseline_problem, baselines, baselines_named,
};
pub use bench::{
    BenchConfig, BenchReport, BenchRequest, CCandidate, Caches, Candidate, CandidateResult, PeakProbe,
    Pinning, ProcessCandidate, RustCandidate, RustKernel, Work, run_bench,
};
pub use compare::{KernelCandidate, Measurement, Skipped, measure};
pub use error::MeasureError;
pub use host::{HostFingerprint, host_fingerprint};
pub use peak::{PeakConfig, PeakReport, measure_peak};
pub use plan::{
    BenchTimer, CandidateTimer, PlanMeasurement, TimedCandidate, default_candidates, measure_plan,
};
pub use stats::SampleStats;
