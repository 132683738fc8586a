//! morello-codegen: from implementation trees to C, and from C text to a verified, measured run.
//!
//! - [`emit`]: an implementation tree ([`morello_core::imp::Impl`]) to a C translation unit with
//!   x86 intrinsics ([`emit_c`], [`emit_kernel`]);
//! - [`verify`]: seeded inputs, one run, and every output compared with a reference of the spec
//!   ([`verify_impl`], [`verify_impls`], [`check_outputs`]);
//! - [`compiler`]: find the C compiler (`$CC`, `cc`, `gcc`, `clang`) and build C units with the
//!   target's `-m` flags ([`isa`] holds the one feature-to-flag table);
//! - [`host`]: which instruction-set features the host can run, so a binary that would die with
//!   SIGILL is refused with a reason; [`run`] names the signal when a program dies anyway;
//! - [`harness`]: a C `main` around a kernel, for verification (files or a seed in, outputs out)
//!   or benchmarking (calibrated, alternating samples);
//! - [`bench`](mod@bench): the side-by-side protocol (kernel and baselines in one run, same inputs,
//!   alternating, pinned), with [`stats`] for medians and spreads;
//! - [`baselines`]: OpenBLAS, BLIS, libxsmm, a naive loop and a Rust GEMM with the matmul
//!   kernel's call shape;
//! - [`peak`]: the FMA-throughput probe for the machine's single-core peak;
//! - [`correlation`]: Spearman's rank correlation, to compare a cost model's ranking with timings;
//! - [`calibrate`](mod@calibrate): measure a target's kernels and memory levels on this machine
//!   and fit its cost constants ([`calibrate()`](calibrate::calibrate)).
//!
//! Nothing here prints: every function returns values or a [`CodegenError`].
//!
//! ```no_run
//! use morello_codegen::{CType, Compiler, KernelSignature, VerifyInputs};
//! use morello_codegen::{CProgram, CompileOptions, SourceUnit, run_verify, verify_program_source};
//!
//! let kernel = "void add(const float *lhs, const float *rhs, float *out) {\n\
//!               for (int i = 0; i < 4; i++) out[i] = lhs[i] + rhs[i];\n}\n";
//! let signature = KernelSignature::new("add", vec![
//!     morello_codegen::KernelParam::new("lhs", CType::F32, 4, morello_codegen::ParamRole::Input),
//!     morello_codegen::KernelParam::new("rhs", CType::F32, 4, morello_codegen::ParamRole::Input),
//!     morello_codegen::KernelParam::new("out", CType::F32, 4, morello_codegen::ParamRole::Output),
//! ]);
//! let compiler = Compiler::find()?;
//! let source = verify_program_source(&signature, kernel)?;
//! let program = CProgram { units: vec![SourceUnit::new("main", source)], link_args: vec![] };
//! let build = compiler.build(&program, &CompileOptions::default())?;
//! let run = run_verify(&build, &signature, &VerifyInputs::Seed(7))?;
//! assert_eq!(run.params.len(), 3);
//! # Ok::<(), morello_codegen::CodegenError>(())
//! ```

pub mod baselines;
pub mod bench;
pub mod calibrate;
pub mod compiler;
pub mod correlation;
pub mod emit;
mod error;
pub mod harness;
pub mod host;
pub mod isa;
pub mod peak;
pub mod run;
pub mod stats;
#[cfg(test)]
mod test_support;
pub mod verify;

pub use baselines::{BaselineKind, BaselineSet, MatmulProblem, SkippedBaseline, matmul_baselines};
pub use bench::{
    BenchConfig, BenchReport, BenchRequest, CCandidate, Candidate, CandidateResult, PeakProbe, Pinning,
    RustCandidate, RustKernel, Work, run_bench,
};
pub use compiler::{BuildDir, CProgram, CompileOptions, Compiler, OpenMp, SourceUnit, Warnings};
pub use emit::{EmitConfig, EmittedKernel, ImplComment, emit_c, emit_kernel, kernel_signature};
pub use error::CodegenError;
pub use harness::{
    BenchEntry, Buffer, CType, KernelParam, KernelSignature, ParamRole, VerifyInputs, VerifyRun,
    bench_program_source, run_verify, run_verify_selected, verify_many_program_source, verify_program_source,
};
pub use host::{host_features, require_features};
pub use isa::IsaFeature;
pub use peak::{PeakConfig, PeakReport, measure_peak};
pub use run::Termination;
pub use stats::SampleStats;
pub use verify::{
    Mismatch, Verification, VerifiedKernel, VerifyOptions, check_outputs, verify_impl, verify_impls,
};
