//! morello-codegen: from implementation trees to C, and from C text to a verified run.
//!
//! - [`emit`]: an implementation tree ([`morello_core::imp::Impl`]) to a C translation unit with
//!   x86 or NEON intrinsics ([`emit_c`], [`emit_kernel`]);
//! - [`verify`]: seeded inputs, one run, and every output compared with a reference of the spec
//!   ([`verify_impl`], [`verify_impls`], [`verify_kernels`], [`check_outputs`]);
//! - [`compiler`]: find the C compiler (`$CC`, `cc`, `gcc`, `clang`) and build C units with the
//!   target's `-m` flags, or a cross compiler whose programs run under `qemu-aarch64` for an
//!   AArch64 target on another host ([`Compiler::for_target`]; [`isa`] holds the one feature-to-flag table; the features themselves are
//!   [`morello_core::target::IsaFeature`]);
//! - [`host`]: which instruction-set features the host can run, so a binary that would die with
//!   SIGILL is refused with a reason; [`run`] names the signal when a program dies anyway;
//! - [`harness`]: a C `main` around a kernel, for verification (files or a seed in, outputs out)
//!   or benchmarking (calibrated, alternating samples; timed by `morello-measure`).
//!
//! Measurement (the side-by-side benchmark protocol, baselines, the peak probe, statistics and
//! calibration) is the `morello-measure` crate, built on this one.
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

pub mod compiler;
pub mod emit;
mod error;
pub mod harness;
pub mod host;
pub mod isa;
pub mod run;
mod termination;
pub mod test_support;
pub mod verify;

pub use compiler::{
    BuildDir, CProgram, CompileOptions, Compiler, OpenMp, OpenMpUnavailable, Runner, SourceUnit, Warnings,
};
pub use emit::{EmitConfig, EmittedKernel, ImplComment, emit_c, emit_kernel, kernel_signature};
pub use error::CodegenError;
pub use harness::{
    BenchEntry, Buffer, CType, KernelParam, KernelSignature, ParamRole, VerifyInputs, VerifyRun,
    bench_program_source, run_verify, run_verify_selected, verify_many_program_source, verify_program_source,
};
pub use host::{host_features, require_features};
pub use termination::Termination;
pub use verify::{
    Mismatch, Verification, VerifiedKernel, VerifyOptions, check_outputs, verification_bytes, verify_impl,
    verify_impls, verify_kernels,
};
