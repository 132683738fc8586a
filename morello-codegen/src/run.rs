//! Running a compiled program and turning how it ended ([`Termination`]) into a result.
//!
//! This module does not interpret a program's output; the harnesses do.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::compiler::Runner;
use crate::error::CodegenError;
pub use crate::termination::Termination;

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
    run_program_with(&Runner::Native, program, args, env)
}

/// [`run_program`], started by `runner` (under an emulator for a program of another
/// architecture).
///
/// # Errors
/// As [`run_program`].
pub fn run_program_with(
    runner: &Runner,
    program: &Path,
    args: &[String],
    env: &[(String, String)],
) -> Result<ProgramOutput, CodegenError> {
    let output = runner
        .command(program)
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
