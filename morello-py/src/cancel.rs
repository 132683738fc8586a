//! Long work (a search, a compile, a benchmark) with the GIL released and Ctrl-C honoured.
//!
//! Python's SIGINT handler only sets a flag that the main thread reads when it runs Python code,
//! so the work runs on a worker thread while the calling thread waits for it, and every
//! [`POLL`] asks Python whether a signal arrived (`PyErr_CheckSignals`, through
//! [`Python::check_signals`]). The first `KeyboardInterrupt` cancels the work's [`CancelToken`]
//! (a search still exploring first solves what it explored, as the CLI's first signal does); a
//! second aborts that too. The call then returns the `KeyboardInterrupt` once the worker has
//! stopped, so nothing runs on behind the caller's back.

use std::sync::mpsc;
use std::time::Duration;

use morello_search::CancelToken;
use pyo3::prelude::*;

use crate::error::bad_input;

/// How often the waiting thread asks Python for signals.
const POLL: Duration = Duration::from_millis(50);

/// Runs `work` on a worker thread with the GIL released, cancelling `token` on Ctrl-C (see the
/// module's doc). Returns the work's value, and the `KeyboardInterrupt` if one arrived (the caller
/// raises it after saving what the work did).
///
/// # Errors
/// A worker that panicked (an internal error, reported with its message).
pub fn run_cancellable<T: Send>(
    py: Python<'_>,
    token: &CancelToken,
    work: impl FnOnce() -> T + Send,
) -> PyResult<(T, Option<PyErr>)> {
    py.detach(|| {
        std::thread::scope(|scope| {
            let (done, finished) = mpsc::channel();
            let worker = scope.spawn(move || {
                let value = work();
                // The receiver lives until the worker is joined below.
                let _ = done.send(());
                value
            });
            let mut interrupted: Option<PyErr> = None;
            while let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(POLL) {
                if let Err(signal) = Python::attach(|py| py.check_signals()) {
                    if interrupted.is_none() {
                        token.cancel();
                        interrupted = Some(signal);
                    } else {
                        token.abort();
                    }
                }
            }
            match worker.join() {
                Ok(value) => Ok((value, interrupted)),
                Err(panic) => {
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                        .unwrap_or_default();
                    Err(bad_input(format!("internal error in morello (please report it): {message}")))
                }
            }
        })
    })
}
