//! The search: rewrites, the dynamic program, and the memo table.
//!
//! - [`actions`]: the rewrites of a spec (moves, tilings, parallel tilings, zero-then-accumulate,
//!   kernels) and the plans that say what sub-specs they need;
//! - [`frontier`]: Pareto frontiers of (cost, peak memory) per spec, so one solve answers every
//!   memory limit;
//! - `solve`: the parallel two-phase dynamic program (explore, then solve by height);
//! - [`memo`]: the concurrent memo table;
//! - [`variants`]: the cheapest implementations that differ from the best at one node;
//! - `decisions`: a tree as the action indices that build it, and back ([`decisions_of`],
//!   [`rebuild_decisions`]), how measured winners are kept as wisdom in a table;
//! - [`Search`]: the embedding API ([`Search::solve`], [`Search::solve_top_k`],
//!   [`Search::solve_variants`]) with a [`SearchReport`], steered by a [`CancelToken`], a progress
//!   callback ([`Search::on_progress`]), periodic checkpoints ([`Search::checkpoint`]) and a memory
//!   budget ([`Search::max_memory`], against the estimates of `memory`);
//! - [`schedule`]: schedules by hand ([`schedule::Schedule`]: tile, split, move, select, ...),
//!   completed by the search, and their text form;
//! - [`db`]: memo tables on disk ([`db::OpenTable`] opens the default table of a target or a
//!   file, and saves it).
//!
//! The search is exhaustive over the action set: it returns an implementation that is optimal
//! for the cost model, the same for every thread count.

pub mod actions;
mod control;
pub mod db;
mod decisions;
mod edge;
mod entry;
mod error;
mod feasible;
pub mod frontier;
mod grid;
pub mod memo;
mod memory;
pub mod peaks;
mod projection;
mod reconstruct;
mod report;
pub mod schedule;
mod search;
mod solve;
pub mod variants;

pub use actions::{Action, ActionConfig, DividingTiles, Remainders, TileSizes};
pub use control::{CancelToken, FINAL_SOLVE_LIMIT};
pub use decisions::{decisions_of, rebuild_decisions};
pub use error::SearchError;
pub use feasible::Feasibility;
pub use frontier::{Entry, Frontier};
pub use memo::{Memo, MemoSource};
pub use peaks::{PeakCodec, Peaks};
pub use reconstruct::Rebuild;
pub use report::{Phase, Progress, SearchReport, StopReason};
pub use search::{Search, Solution};
#[doc(hidden)]
pub use solve::{Explored, explore_only};
pub use variants::VariantCosts;
