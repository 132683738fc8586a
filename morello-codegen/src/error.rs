//! `CodegenError`: everything that can go wrong between C text and a verified run.
//!
//! Each variant says whose fault it is: the machine (no compiler, missing instructions, a missing
//! library), the generated program (a compile error, a crash), or the caller (a malformed
//! signature or buffer).

use std::path::PathBuf;

use crate::termination::Termination;
use morello_core::target::{Architecture, IsaFeature};

/// An error from compiling, running or verifying generated C.
#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// No C compiler was found (the machine's fault). `tried` lists what was looked for.
    #[error("no C compiler found (tried {}); install gcc (`apt-get install gcc`) or set $CC", tried.join(", "))]
    NoCompiler {
        /// The commands that were tried, in order.
        tried: Vec<String>,
    },

    /// Code for another architecture cannot be built or run here (the machine's fault): a cross
    /// compiler or the emulator is missing.
    #[error(
        "cannot build and run {architecture} code on this {host} host: {missing}; install the cross tools with `{install}`"
    )]
    NoCrossTools {
        /// The architecture of the target's code.
        architecture: Architecture,
        /// The host's architecture.
        host: String,
        /// What was looked for and not found.
        missing: String,
        /// The command that installs what is missing.
        install: String,
    },

    /// The compiler rejected the program (the generated code's fault); `stderr` is its message.
    #[error("{compiler} failed to compile {unit}:\n{stderr}")]
    CompileFailed {
        /// The compiler command, e.g. `gcc`.
        compiler: String,
        /// The translation unit (or `link`) that failed.
        unit: String,
        /// The full command line, for reproducing by hand.
        command: String,
        /// What the compiler printed on standard error.
        stderr: String,
    },

    /// The host CPU lacks instructions the program needs (the machine's fault); running it would
    /// die with SIGILL.
    #[error("the host cannot run {} instructions", describe_features(missing))]
    MissingHostFeatures {
        /// The features the program needs and the host lacks, in table order.
        missing: Vec<IsaFeature>,
    },

    /// A program was killed by a signal (its fault, or the machine's for SIGILL).
    #[error("{program} was killed by {}{}", termination, stderr_suffix(stderr))]
    Signalled {
        /// The program that was run.
        program: PathBuf,
        /// How it ended (always [`Termination::Signal`]).
        termination: Termination,
        /// What it printed on standard error before dying.
        stderr: String,
    },

    /// A program exited with a non-zero status (its fault or the caller's arguments').
    #[error("{program} failed with {}{}", termination, stderr_suffix(stderr))]
    ExitFailure {
        /// The program that was run.
        program: PathBuf,
        /// How it ended (always [`Termination::Exit`] with a non-zero code).
        termination: Termination,
        /// What it printed on standard error.
        stderr: String,
    },

    /// A harness printed something the driver does not understand (a bug in the harness).
    #[error("unexpected output from {program}: {detail}")]
    BadOutput {
        /// The program that was run.
        program: PathBuf,
        /// What was wrong, with the offending line.
        detail: String,
    },

    /// A kernel signature cannot be turned into a harness (the caller's fault).
    #[error("invalid kernel signature: {reason}")]
    InvalidSignature {
        /// What is wrong with it.
        reason: String,
    },

    /// A C program description is malformed (the caller's fault), e.g. two units with one name.
    #[error("invalid C program: {reason}")]
    InvalidProgram {
        /// What is wrong with it.
        reason: String,
    },

    /// A buffer does not fit the parameter it is given for (the caller's fault).
    #[error("buffer for parameter `{param}`: {reason}")]
    BadBuffer {
        /// The parameter's name.
        param: String,
        /// What is wrong (type or length).
        reason: String,
    },

    /// The implementation still has an unsolved spec (the caller's fault: emit complete trees).
    #[error("the implementation is incomplete: {spec} has no implementation")]
    Unsolved {
        /// The unsolved spec, as text.
        spec: String,
    },

    /// The tree uses a kernel the target does not offer (the tree was built for another target).
    #[error("kernel {kernel} is not available on target {target}")]
    KernelUnavailable {
        /// The kernel's name.
        kernel: String,
        /// The target's name.
        target: String,
    },

    /// The code needs an instruction-set feature the target does not list (the tree or the
    /// target description is at fault).
    #[error("{what} needs the {feature} instruction set, which target {target} does not have")]
    MissingIsa {
        /// The target's name.
        target: String,
        /// The feature's name, e.g. `avx512f`.
        feature: String,
        /// What needs it.
        what: String,
    },

    /// Something the emitter cannot express as C (a spec or tree outside what it supports).
    #[error("cannot emit C: {reason}")]
    Unsupported {
        /// What and why.
        reason: String,
    },

    /// An internal invariant of the emitter or verifier broke (a bug in morello).
    #[error("internal error in the code generator: {reason}")]
    Internal {
        /// What broke.
        reason: String,
    },

    /// A file or process operation failed (the machine's fault).
    #[error("{context}: {source}")]
    Io {
        /// What was being done, e.g. `writing /tmp/x/in0.bin`.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl CodegenError {
    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        CodegenError::Io { context: context.into(), source }
    }
}

/// `AVX-512 BF16 and AVX-512 VL` style list of feature display names.
fn describe_features(features: &[IsaFeature]) -> String {
    let names: Vec<&str> = features.iter().map(|f| f.display_name()).collect();
    match names.as_slice() {
        [] => "the required".to_string(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {}", rest.join(", "), last),
    }
}

/// `: <stderr>` when the program printed something, else nothing.
fn stderr_suffix(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() { String::new() } else { format!(":\n{trimmed}") }
}
