//! What a search reports: progress while it runs, and a summary when it ends.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The phase a search is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    /// Discovering sub-specs and their actions.
    Explore,
    /// Combining frontiers bottom-up.
    Solve,
}

/// A progress update: `done` of `total` specs in the current phase (`total` may grow while
/// exploring).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The phase.
    pub phase: Phase,
    /// Specs done.
    pub done: u64,
    /// Specs known so far.
    pub total: u64,
}

/// Why a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StopReason {
    /// The goal was solved.
    Solved,
    /// The time limit passed.
    TimeLimit,
    /// The caller cancelled (for example Ctrl-C).
    Cancelled,
    /// More specs than the spec limit would be needed.
    SpecLimit,
    /// The memo's table could not be read (a damaged file: [`crate::Memo::failure`] says where).
    TableError,
    /// The memo table and the search's graph would take more memory than the budget
    /// ([`crate::Search::max_memory`]).
    MemoryLimit,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StopReason::Solved => "solved",
            StopReason::TimeLimit => "time limit reached",
            StopReason::Cancelled => "cancelled",
            StopReason::SpecLimit => "spec limit reached",
            StopReason::TableError => "the table could not be read",
            StopReason::MemoryLimit => "memory budget reached",
        })
    }
}

/// A summary of one search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchReport {
    /// Specs whose frontier this search computed.
    pub specs_solved: u64,
    /// Specs found already solved in the memo table.
    pub memo_hits: u64,
    /// Actions enumerated over all explored specs.
    pub actions: u64,
    /// Wall-clock time.
    pub wall_time: Duration,
    /// The largest estimate of the memory the memo table and the search's graph held, in bytes
    /// (what [`crate::Search::max_memory`] is compared with; see `docs/search.md` for how it
    /// relates to the process's resident memory).
    #[serde(default)]
    pub estimated_memory: u64,
    /// Why the search ended.
    pub stop: StopReason,
}

impl SearchReport {
    /// Whether the search finished, so its implementation is optimal for the cost model (false
    /// after a time limit, when the implementation is the quick fallback's: see
    /// [`crate::Search::time_limit`]).
    pub fn optimal(&self) -> bool {
        self.stop == StopReason::Solved
    }
}

impl fmt::Display for SearchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} specs solved, {} memo hits, {} actions in {:.3} s",
            self.stop,
            self.specs_solved,
            self.memo_hits,
            self.actions,
            self.wall_time.as_secs_f64()
        )
    }
}
