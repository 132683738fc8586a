//! Running a compiled program and explaining how it ended: an exit status, or a signal such as
//! SIGILL (instructions the CPU lacks) or SIGSEGV (an out-of-bounds access), named and explained.
//!
//! This module does not interpret a program's output; the harnesses do.

use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use serde::Serialize;

use crate::error::CodegenError;

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Termination {
    /// It exited with this status code.
    Exit(i32),
    /// It was killed by this signal number (Linux numbering).
    Signal(i32),
}

impl Termination {
    /// Classifies an [`ExitStatus`].
    pub fn from_status(status: ExitStatus) -> Self {
        match (status.code(), status.signal()) {
            (Some(code), _) => Termination::Exit(code),
            (None, Some(signal)) => Termination::Signal(signal),
            (None, None) => Termination::Exit(-1),
        }
    }

    /// Whether the process exited with status 0.
    pub fn is_success(self) -> bool {
        self == Termination::Exit(0)
    }

    /// The signal's conventional name (`SIGILL`), if it was a signal with a known name.
    pub fn signal_name(self) -> Option<&'static str> {
        match self {
            Termination::Signal(number) => signal_info(number).map(|(name, _)| name),
            Termination::Exit(_) => None,
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Termination::Exit(code) => write!(f, "exit status {code}"),
            Termination::Signal(number) => match signal_info(number) {
                Some((name, meaning)) => write!(f, "{name} ({meaning})"),
                None => write!(f, "signal {number}"),
            },
        }
    }
}

/// Name and meaning of the signals a kernel run can plausibly die from (Linux x86 numbering).
fn signal_info(number: i32) -> Option<(&'static str, &'static str)> {
    Some(match number {
        4 => ("SIGILL", "illegal instruction: the binary uses instructions this CPU lacks"),
        5 => ("SIGTRAP", "trace or breakpoint trap"),
        6 => ("SIGABRT", "aborted, e.g. by a failed assertion"),
        7 => ("SIGBUS", "bus error: a misaligned or unmapped memory access"),
        8 => ("SIGFPE", "arithmetic exception, e.g. an integer division by zero"),
        9 => ("SIGKILL", "killed, e.g. by the out-of-memory killer"),
        11 => ("SIGSEGV", "segmentation fault: an out-of-bounds memory access"),
        15 => ("SIGTERM", "terminated"),
        _ => return None,
    })
}

/// What a program printed, after it exited with status 0.
#[derive(Debug, Clone)]
pub struct ProgramOutput {
    /// Standard output, lossily decoded as UTF-8.
    pub stdout: String,
    /// Standard error, lossily decoded as UTF-8 (warnings a successful run printed).
    pub stderr: String,
}

/// Runs `program` with `args` and extra environment variables, waits for it, and returns its
/// output.
///
/// # Errors
/// [`CodegenError::Signalled`] when a signal killed it, [`CodegenError::ExitFailure`] for a
/// non-zero exit, [`CodegenError::Io`] when it could not be started.
pub fn run_program(
    program: &Path,
    args: &[String],
    env: &[(String, String)],
) -> Result<ProgramOutput, CodegenError> {
    let output = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| CodegenError::io(format!("starting {}", program.display()), e))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    check_termination(program, Termination::from_status(output.status), stderr.clone())?;
    Ok(ProgramOutput { stdout, stderr })
}

/// Turns an unsuccessful [`Termination`] into the matching error.
///
/// # Errors
/// [`CodegenError::Signalled`] or [`CodegenError::ExitFailure`] unless it exited with status 0.
pub fn check_termination(
    program: &Path,
    termination: Termination,
    stderr: String,
) -> Result<(), CodegenError> {
    let program = PathBuf::from(program);
    match termination {
        Termination::Exit(0) => Ok(()),
        Termination::Exit(_) => Err(CodegenError::ExitFailure { program, termination, stderr }),
        Termination::Signal(_) => Err(CodegenError::Signalled { program, termination, stderr }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_named_and_explained() {
        assert_eq!(Termination::Signal(4).signal_name(), Some("SIGILL"));
        assert_eq!(
            Termination::Signal(11).to_string(),
            "SIGSEGV (segmentation fault: an out-of-bounds memory access)"
        );
        assert_eq!(Termination::Signal(63).to_string(), "signal 63");
        assert_eq!(Termination::Exit(3).to_string(), "exit status 3");
        assert!(Termination::Exit(0).is_success());
    }

    #[test]
    fn a_shell_killed_by_sigill_is_reported() {
        let error = run_program(Path::new("/bin/sh"), &["-c".into(), "kill -ILL $$".into()], &[])
            .expect_err("the shell kills itself");
        match &error {
            CodegenError::Signalled { termination, .. } => {
                assert_eq!(termination.signal_name(), Some("SIGILL"));
            }
            other => panic!("expected Signalled, got {other:?}"),
        }
        assert!(error.to_string().contains("SIGILL (illegal instruction"), "{error}");
    }
}
