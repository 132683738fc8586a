//! [`SearchError`]: why a search could not return an implementation.

use crate::report::{SearchReport, StopReason};

/// Why a search could not return an implementation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// No implementation fits the memory limits (the user's limits are too small for the spec).
    #[error("no implementation of {spec} fits in these limits ({limits})")]
    NoImplementation {
        /// The spec.
        spec: String,
        /// The limits.
        limits: String,
    },
    /// The search stopped before solving the goal; what it solved is in the memo.
    #[error("the search stopped before finishing ({reason}); {report}")]
    Stopped {
        /// Why.
        reason: StopReason,
        /// What it did.
        report: SearchReport,
    },
    /// The memo table disagrees with the actions (a stale or corrupt table, or a bug).
    #[error("the memo table is inconsistent at {spec}: {message}")]
    Inconsistent {
        /// The spec.
        spec: String,
        /// What disagrees.
        message: String,
    },
    /// The memo's table could not be read (a damaged block of a table file); nothing is saved to
    /// it.
    #[error("{message}")]
    Table {
        /// What is damaged, naming the file and the part of it.
        message: String,
    },
    /// The thread pool could not start (the machine).
    #[error("cannot start {threads} search threads: {message}")]
    ThreadPool {
        /// Threads asked for.
        threads: usize,
        /// The system's message.
        message: String,
    },
}
