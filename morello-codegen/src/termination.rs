//! How a process ended: an exit status, or a signal such as SIGILL (instructions the CPU lacks) or
//! SIGSEGV (an out-of-bounds access), named and explained. [`crate::run`] runs programs and
//! [`crate::CodegenError`] reports their endings with it.

use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use serde::Serialize;

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
