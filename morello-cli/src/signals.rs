//! Stopping from outside: SIGINT (Ctrl-C), SIGTERM (what batch systems and `timeout` send) and
//! SIGHUP (a closed terminal) trip one process-wide [`CancelToken`] that every search of the
//! command polls; the search then stops, the command saves what it solved and exits with the
//! conventional status 128 + the signal's number. A second signal ends the process at once with
//! the same status (the table on disk stays valid: writes are atomic).

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use morello_search::CancelToken;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The signals that stop a command cleanly, with their names.
const HANDLED: [(i32, &str); 3] = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")];

/// A signal that stopped the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signal(i32);

impl Signal {
    /// The exit status of a process it stopped: 128 + its number.
    pub fn exit_status(self) -> u8 {
        u8::try_from(128 + self.0).unwrap_or(u8::MAX)
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match HANDLED.iter().find(|(n, _)| *n == self.0) {
            Some((_, name)) => f.write_str(name),
            None => write!(f, "signal {}", self.0),
        }
    }
}

/// The token and the number of the last signal received (0: none).
struct Handlers {
    token: CancelToken,
    received: Arc<AtomicUsize>,
}

static HANDLERS: OnceLock<Handlers> = OnceLock::new();

/// The process's cancellation token, with the signal handlers installed on first use.
pub fn cancel_token() -> CancelToken {
    let handlers = HANDLERS.get_or_init(|| {
        let token = CancelToken::new();
        let received = Arc::new(AtomicUsize::new(0));
        for (signal, _) in HANDLED {
            // The order matters: the shutdown looks at the flag before this signal's handlers
            // set it, so only a second signal ends the process at once. A handler that cannot be
            // installed leaves the signal's default action: the table on disk stays valid, only
            // the unsaved work is lost.
            let _ = signal_hook::flag::register_conditional_shutdown(signal, 128 + signal, token.flag());
            let _ = signal_hook::flag::register_usize(signal, Arc::clone(&received), signal as usize);
            let _ = signal_hook::flag::register(signal, token.flag());
        }
        Handlers { token, received }
    });
    handlers.token.clone()
}

/// The signal that cancelled the process's token, if one did.
pub fn received() -> Option<Signal> {
    let number = HANDLERS.get()?.received.load(Ordering::SeqCst);
    (number != 0).then(|| Signal(i32::try_from(number).unwrap_or(i32::MAX)))
}

/// The command was stopped by a signal: exits with 128 + its number, and says where what was
/// solved is (the error of every command a signal stops).
#[derive(Debug)]
pub struct Interrupted {
    /// The signal.
    pub signal: Signal,
    /// The table that holds what was solved, if it was saved.
    pub saved_in: Option<PathBuf>,
}

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.saved_in {
            Some(path) => write!(
                f,
                "stopped by {}; what was solved is saved in {}: run the same command again to resume",
                self.signal,
                path.display()
            ),
            None => write!(f, "stopped by {}", self.signal),
        }
    }
}

impl std::error::Error for Interrupted {}

/// An [`Interrupted`] error if a signal arrived (for commands between steps: after a search,
/// before compiling).
///
/// # Errors
/// [`Interrupted`], when a signal arrived.
pub fn check() -> anyhow::Result<()> {
    match received() {
        Some(signal) => Err(anyhow::Error::new(Interrupted { signal, saved_in: None })),
        None => Ok(()),
    }
}
