//! Exit codes: bad input (2), work that ran and failed (1), a stop by a signal (128 + its number).

use std::fmt;
use std::process::ExitCode;

/// An error caused by what the user typed or supplied; exits with status 2.
#[derive(Debug)]
pub struct BadInput(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Wraps a message as a [`BadInput`] error.
pub fn bad_input(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadInput(message.into()))
}

/// Extension for results whose error is the user's fault.
pub trait Failure<T> {
    /// Turns the error into [`BadInput`], prefixed with `what`.
    fn bad_input(self, what: impl FnOnce() -> String) -> anyhow::Result<T>;
}

impl<T, E: fmt::Display> Failure<T> for Result<T, E> {
    fn bad_input(self, what: impl FnOnce() -> String) -> anyhow::Result<T> {
        self.map_err(|e| bad_input(format!("{}: {e}", what())))
    }
}

/// Prints the error on one line and picks the exit status.
#[allow(clippy::print_stderr)]
pub fn report(err: &anyhow::Error) -> ExitCode {
    if let Some(stop) = err.chain().find_map(|cause| cause.downcast_ref::<crate::signals::Interrupted>()) {
        eprintln!("{stop}");
        return ExitCode::from(stop.signal.exit_status());
    }
    eprintln!("error: {err:#}");
    if err.chain().any(|cause| cause.is::<BadInput>()) { ExitCode::from(2) } else { ExitCode::from(1) }
}
