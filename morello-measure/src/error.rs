//! `MeasureError`: what can go wrong while timing candidates, beyond building and running them.
//!
//! Compiling a program and running it are code generation's part and keep their
//! [`CodegenError`]; this type adds what only measurement can get wrong: a bad request, a kernel
//! that does not verify, a benchmark program that stops answering the protocol, or a pipe that
//! fails.

use std::path::PathBuf;

use morello_codegen::CodegenError;

/// An error from benchmarking or probing the machine.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// Compiling or running a program failed (see [`CodegenError`] for whose fault each case is).
    #[error(transparent)]
    Codegen(#[from] CodegenError),

    /// A benchmark request is inconsistent (the caller's fault), e.g. zero samples.
    #[error("invalid benchmark request: {reason}")]
    InvalidBench {
        /// What is wrong with it.
        reason: String,
    },

    /// A benchmark program printed something the driver does not understand (a bug in the
    /// harness or the probe).
    #[error("unexpected output from {program}: {detail}")]
    BadOutput {
        /// The program that was run.
        program: PathBuf,
        /// What was wrong, with the offending line.
        detail: String,
    },

    /// A kernel computed something other than its spec, so nothing was timed (a bug in the
    /// search, the emitter or a kernel: a wrong kernel is never timed).
    #[error("{label} failed verification, so it is not timed: {mismatch}")]
    Unverified {
        /// The kernel's label.
        label: String,
        /// Its first wrong element.
        mismatch: String,
    },

    /// Talking to a benchmark program failed (the machine's fault).
    #[error("{context}: {source}")]
    Io {
        /// What was being done, e.g. `starting /tmp/x/bench`.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl MeasureError {
    /// A request error with `reason`.
    pub(crate) fn invalid(reason: impl Into<String>) -> Self {
        MeasureError::InvalidBench { reason: reason.into() }
    }

    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        MeasureError::Io { context: context.into(), source }
    }
}
