//! How a caller steers a running search: a cancellation token it polls, and periodic checkpoints.
//!
//! ```text
//! CancelToken   a shared flag: cancel() from any thread (a signal handler, a UI, a timer); the
//!               search polls it between waves, height buckets and specs and stops with
//!               StopReason::Cancelled, keeping what it solved in the memo. Cancelled while
//!               exploring, it first solves the part explored to its leaves (for at most
//!               FINAL_SOLVE_LIMIT), so the work of exploring is kept too; abort() (a second
//!               Ctrl-C) stops that final solve as well
//! Checkpoint    a callback the search calls with the memo, at most once per interval, between
//!               height buckets (every spec in the memo then is solved): save it, and a killed
//!               process loses at most one interval of work
//! ```
//!
//! Neither does I/O: the caller decides what cancels and what a checkpoint writes.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::memo::Memo;

/// A flag that stops every search holding a clone of it.
///
/// ```
/// use morello_search::CancelToken;
///
/// let token = CancelToken::new();
/// let for_handler = token.clone();
/// std::thread::spawn(move || for_handler.cancel()).join().unwrap();
/// assert!(token.is_cancelled());
/// ```
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    flag: Arc<AtomicBool>,
    /// Set by [`CancelToken::abort`]: do not finish solving what was explored either.
    aborted: Arc<AtomicBool>,
}

/// How long a search cancelled while exploring may go on solving the part of its graph explored
/// to the leaves (so that it is kept), unless [`CancelToken::abort`] stops it sooner. Checked
/// between specs: a spec being solved is finished.
pub const FINAL_SOLVE_LIMIT: Duration = Duration::from_secs(3);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        CancelToken::default()
    }

    /// Stops the searches that poll this token (and every later poll says cancelled). A search
    /// still exploring its graph first solves the part explored to the leaves, for at most
    /// [`FINAL_SOLVE_LIMIT`], so that it is kept in the memo.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::SeqCst);
    }

    /// Cancels, and stops the final solve of what was explored as well (for example on a second
    /// Ctrl-C): the searches return as soon as the specs being solved are done, keeping those.
    pub fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        self.flag.store(true, Ordering::SeqCst);
    }

    /// Whether [`CancelToken::abort`] was called.
    pub fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
    }

    /// Whether [`CancelToken::cancel`] was called (or the flag set).
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// The flag itself, for code that can only store to an atomic (a signal handler registered
    /// with `signal_hook::flag::register`): setting it to `true` cancels.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.flag)
    }
}

/// What a search calls with its memo every `interval` (see [`crate::Search::checkpoint`]).
pub(crate) type CheckpointFn<'t> = dyn Fn(&Memo) + Send + Sync + 't;

/// A checkpoint callback and when it last ran.
#[derive(Clone)]
pub(crate) struct Checkpoint<'t> {
    interval: Duration,
    callback: Arc<CheckpointFn<'t>>,
    last: Arc<Mutex<Instant>>,
}

impl fmt::Debug for Checkpoint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checkpoint").field("interval", &self.interval).finish_non_exhaustive()
    }
}

impl<'t> Checkpoint<'t> {
    /// A checkpoint every `interval`, the first one `interval` from now.
    pub(crate) fn new(interval: Duration, callback: Arc<CheckpointFn<'t>>) -> Self {
        Checkpoint { interval, callback, last: Arc::new(Mutex::new(Instant::now())) }
    }

    /// Calls the callback if `interval` has passed since the last call. Concurrent searches sharing
    /// this checkpoint (parallel goals) do not queue up: one calls, the others go on.
    pub(crate) fn maybe_run(&self, memo: &Memo) {
        let Ok(mut last) = self.last.try_lock() else { return };
        if last.elapsed() >= self.interval {
            (self.callback)(memo);
            *last = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[test]
    fn a_checkpoint_runs_once_per_interval() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let checkpoint = Checkpoint::new(
            Duration::from_millis(30),
            Arc::new(move |_: &Memo| {
                counted.fetch_add(1, Ordering::SeqCst);
            }),
        );
        let memo = Memo::new();
        checkpoint.maybe_run(&memo);
        assert_eq!(calls.load(Ordering::SeqCst), 0, "not before the interval");
        std::thread::sleep(Duration::from_millis(40));
        checkpoint.maybe_run(&memo);
        checkpoint.maybe_run(&memo);
        assert_eq!(calls.load(Ordering::SeqCst), 1, "once per interval");
    }

    #[test]
    fn the_flag_cancels_the_token() {
        let token = CancelToken::new();
        assert!(!token.is_cancelled());
        token.flag().store(true, Ordering::SeqCst);
        assert!(token.clone().is_cancelled());
        assert!(!token.is_aborted(), "cancelling is not aborting");
        token.abort();
        assert!(token.is_aborted() && token.is_cancelled());
    }
}
