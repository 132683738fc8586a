//! Stopping from outside: SIGINT (Ctrl-C), SIGTERM (what batch systems and `timeout` send) and
//! SIGHUP (a closed terminal) trip one process-wide [`CancelToken`] that every search of the
//! command polls; the search then stops (a search still exploring first solves what it explored
//! to the leaves, for at most [`morello_search::FINAL_SOLVE_LIMIT`]), the command saves what it
//! solved and exits with the conventional status 128 + the signal's number. A second signal
//! aborts that final solve (the command still saves what is solved by then); a third ends the
//! process at once with the same status (the table on disk stays valid: writes are atomic).

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

/// Counts the signals (on a thread of its own: a handler can only store to atomics): the second
/// aborts the final solve and arms `exit_now`, so the third ends the process from its handler even
/// if this thread is not scheduled; this thread ends it too if it sees a third first.
fn escalate(token: CancelToken, exit_now: Arc<AtomicBool>) {
    let Ok(mut signals) = signal_hook::iterator::Signals::new(HANDLED.map(|(signal, _)| signal)) else {
        // Without the thread a second signal cannot abort the final solve, which ends anyway
        // within its time limit.
        return;
    };
    let spawned = std::thread::Builder::new().name("signals".into()).spawn(move || {
        let mut count = 0;
        for signal in signals.forever() {
            count += 1;
            match count {
                1 => {}
                2 => {
                    token.abort();
                    exit_now.store(true, Ordering::SeqCst);
                }
                _ => std::process::exit(128 + signal),
            }
        }
    });
    drop(spawned);
}

static HANDLERS: OnceLock<Handlers> = OnceLock::new();

/// The process's cancellation token, with the signal handlers installed on first use.
pub fn cancel_token() -> CancelToken {
    let handlers = HANDLERS.get_or_init(|| {
        let token = CancelToken::new();
        let received = Arc::new(AtomicUsize::new(0));
        let exit_now = Arc::new(AtomicBool::new(false));
        for (signal, _) in HANDLED {
            // The order matters: the shutdown looks at `exit_now` before the counting thread
            // (registered after these) sets it, so only a third signal ends the process from
            // here. A handler that cannot be installed leaves the signal's default action: the
            // table on disk stays valid, only the unsaved work is lost.
            let _ =
                signal_hook::flag::register_conditional_shutdown(signal, 128 + signal, Arc::clone(&exit_now));
            let _ = signal_hook::flag::register_usize(signal, Arc::clone(&received), signal as usize);
            let _ = signal_hook::flag::register(signal, token.flag());
        }
        escalate(token.clone(), exit_now);
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
