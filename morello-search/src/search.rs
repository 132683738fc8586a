//! The embedding API: configure a [`Search`], call [`Search::solve`].
//!
//! ```
//! use morello_core::spec::LogicalSpec;
//! use morello_core::target::Target;
//! use morello_search::Search;
//!
//! let target = Target::builtin("x86-avx2", 1).unwrap();
//! let spec = LogicalSpec::parse("Matmul(1x2x2x2, u32 GL row-major, u32 GL row-major, u32 GL row-major)", &target)
//!     .unwrap()
//!     .canonicalize(&target)
//!     .unwrap();
//! let solution = Search::new(&target).threads(1).solve(&spec).unwrap();
//! assert!(solution.imp.is_complete());
//! println!("cost {}: {}", solution.cost, solution.report);
//! ```

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use morello_core::cost::Cost;
use morello_core::imp::Impl;
use morello_core::spec::CanonicalSpec;
use morello_core::target::{MemVec, Target};

use crate::actions::{ActionConfig, TileSizes, actions};
use crate::control::{CancelToken, Checkpoint};
use crate::feasible::Feasibility;
use crate::memo::Memo;
use crate::peaks::PeakCodec;
use crate::reconstruct::{best_impl, impl_for_entry};
use crate::report::{Progress, SearchReport, StopReason};
use crate::solve::{Counters, Solver};
use crate::variants::{VariantCosts, VariantRequest, best_and_variants};

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
    /// The thread pool could not start (the machine).
    #[error("cannot start {threads} search threads: {message}")]
    ThreadPool {
        /// Threads asked for.
        threads: usize,
        /// The system's message.
        message: String,
    },
}

/// A solved spec: the best implementation, its cost and what the search did.
#[derive(Debug, Clone)]
pub struct Solution {
    /// The implementation.
    pub imp: Impl,
    /// Its cost under the target's cost model.
    pub cost: Cost,
    /// The search's summary.
    pub report: SearchReport,
}

type ProgressFn<'t> = Arc<dyn Fn(Progress) + Send + Sync + 't>;

/// A configured search over one target.
#[derive(Clone)]
pub struct Search<'t> {
    target: &'t Target,
    actions: ActionConfig,
    threads: Option<usize>,
    time_limit: Option<Duration>,
    deadline: Option<Instant>,
    max_specs: Option<u64>,
    limits: Option<MemVec>,
    top_k: usize,
    memo: Arc<Memo>,
    cancel: Option<CancelToken>,
    progress: Option<ProgressFn<'t>>,
    checkpoint: Option<Checkpoint<'t>>,
}

impl std::fmt::Debug for Search<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Search")
            .field("target", &self.target.name())
            .field("actions", &self.actions)
            .field("threads", &self.threads)
            .field("time_limit", &self.time_limit)
            .field("deadline", &self.deadline)
            .field("max_specs", &self.max_specs)
            .field("top_k", &self.top_k)
            .field("memo_entries", &self.memo.len())
            .field("checkpoint", &self.checkpoint)
            .finish_non_exhaustive()
    }
}

impl<'t> Search<'t> {
    /// A search with defaults: all cores, no time limit, the target's full capacities, a fresh
    /// memo table, powers-of-two tile sizes, top-1.
    pub fn new(target: &'t Target) -> Self {
        Search {
            target,
            actions: ActionConfig::default(),
            threads: None,
            time_limit: None,
            deadline: None,
            max_specs: None,
            limits: None,
            top_k: 1,
            memo: Arc::new(Memo::new()),
            cancel: None,
            progress: None,
            checkpoint: None,
        }
    }

    /// Worker threads (default: all cores). The result does not depend on it.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// Stop each call after this long (solved sub-specs stay in the memo).
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = Some(limit);
        self
    }

    /// Stop at this instant, however many calls it spans (a budget for many goals); with
    /// [`Search::time_limit`] too, whichever comes first. Stops with [`StopReason::TimeLimit`].
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Stop when exploring more than this many new specs (a bound on the search's memory).
    pub fn max_specs(mut self, max: u64) -> Self {
        self.max_specs = Some(max);
        self
    }

    /// Memory limits per level for the goal (default: the target's capacities).
    pub fn limits(mut self, limits: MemVec) -> Self {
        self.limits = Some(limits);
        self
    }

    /// Which tile sizes tiling actions try.
    pub fn tile_sizes(mut self, sizes: TileSizes) -> Self {
        self.actions.tile_sizes = sizes;
        self
    }

    /// The whole action configuration (tile sizes and pruning).
    pub fn configure_actions(mut self, config: ActionConfig) -> Self {
        self.actions = config;
        self
    }

    /// How many implementations [`Search::solve_top_k`] returns by default.
    pub fn top_k(mut self, k: usize) -> Self {
        self.top_k = k.max(1);
        self
    }

    /// Reuse a memo table (shared with other searches or loaded from a database).
    pub fn memo(mut self, memo: Arc<Memo>) -> Self {
        self.memo = memo;
        self
    }

    /// A token that stops the search when cancelled (for example from a signal handler); the
    /// search then returns [`SearchError::Stopped`] with [`StopReason::Cancelled`], and what it
    /// solved is in the memo.
    pub fn cancel(mut self, token: CancelToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// A callback for progress updates (called from search threads): the phase, specs done and
    /// specs known. It should return quickly.
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 't) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Calls `f` with the memo table every `interval` while solving (between height buckets, so
    /// every spec in it is solved; the first call one interval after this one), for example to
    /// save it so that a killed process loses at most one interval of work. Clones of this search
    /// share the schedule: of parallel calls, only one checkpoints at a time.
    pub fn checkpoint(mut self, interval: Duration, f: impl Fn(&Memo) + Send + Sync + 't) -> Self {
        self.checkpoint = Some(Checkpoint::new(interval, Arc::new(f)));
        self
    }

    /// The memo table this search fills.
    pub fn memo_table(&self) -> &Arc<Memo> {
        &self.memo
    }

    /// The action configuration.
    pub fn action_config(&self) -> &ActionConfig {
        &self.actions
    }

    /// The limits the goal is solved under.
    pub fn effective_limits(&self) -> MemVec {
        self.limits.unwrap_or_else(|| self.target.capacities())
    }

    /// Solves every sub-spec `spec` needs into the memo table, without building an implementation.
    ///
    /// # Errors
    /// [`SearchError::Stopped`] if a limit or the cancel flag stopped it.
    pub fn fill(&self, spec: &CanonicalSpec) -> Result<SearchReport, SearchError> {
        let start = Instant::now();
        let counters = Counters::default();
        let outcome = self.run_solver(spec, &counters, start)?;
        let report = self.report(&counters, start, outcome.err().unwrap_or(StopReason::Solved));
        match report.stop {
            StopReason::Solved => Ok(report),
            reason => Err(SearchError::Stopped { reason, report }),
        }
    }

    /// The best implementation of `spec` within the limits.
    ///
    /// # Errors
    /// [`SearchError::NoImplementation`] if nothing fits; [`SearchError::Stopped`] if stopped early.
    pub fn solve(&self, spec: &CanonicalSpec) -> Result<Solution, SearchError> {
        let start = Instant::now();
        let counters = Counters::default();
        if let Err(reason) = self.run_solver(spec, &counters, start)? {
            return Err(SearchError::Stopped { reason, report: self.report(&counters, start, reason) });
        }
        let feasibility = Feasibility::new(self.target);
        let (imp, entry) =
            best_impl(spec, &self.effective_limits(), &self.memo, self.target, &self.actions, &feasibility)?;
        let report = self.report(&counters, start, StopReason::Solved);
        Ok(Solution { cost: entry.cost, imp, report })
    }

    /// The `k` best implementations of `spec` within the limits that differ in their root action,
    /// cheapest first (fewer if fewer actions lead to an implementation).
    ///
    /// # Errors
    /// As [`Search::solve`].
    pub fn solve_top_k(&self, spec: &CanonicalSpec, k: usize) -> Result<Vec<Solution>, SearchError> {
        let start = Instant::now();
        let counters = Counters::default();
        if let Err(reason) = self.run_solver(spec, &counters, start)? {
            return Err(SearchError::Stopped { reason, report: self.report(&counters, start, reason) });
        }
        let limits = self.effective_limits();
        let feasibility = Feasibility::new(self.target);
        let frontier = self.memo.get(spec).unwrap_or_default();
        let mut per_action: Vec<crate::frontier::Entry> = Vec::new();
        for index in 0..actions(spec, self.target, &self.actions, &feasibility).len() {
            if let Some(e) =
                frontier.best_for_action(index as u16, PeakCodec::new(self.target).encode_limits(&limits))
            {
                per_action.push(*e);
            }
        }
        if per_action.is_empty() {
            return Err(SearchError::NoImplementation {
                spec: spec.display(self.target).to_string(),
                limits: limits.display(self.target).to_string(),
            });
        }
        let mut solutions = Vec::new();
        for entry in per_action {
            let imp =
                impl_for_entry(spec, &entry, &limits, &self.memo, self.target, &self.actions, &feasibility)?;
            solutions.push(imp);
        }
        solutions.sort_by_key(|imp| (imp.cost, imp.peaks, imp.depth()));
        solutions.truncate(k.max(1));
        let report = self.report(&counters, start, StopReason::Solved);
        Ok(solutions
            .into_iter()
            .map(|imp| Solution { cost: imp.cost, imp, report: report.clone() })
            .collect())
    }

    /// The best implementation of `spec` within the limits, then its cheapest variants that
    /// differ from it in the action taken at one node (see [`crate::variants`]), up to `k` in all,
    /// cheapest first; `costs` says whether variants that tie in cost are kept. Unlike
    /// [`Search::solve_top_k`] a variant may differ anywhere in the tree.
    ///
    /// # Errors
    /// As [`Search::solve`].
    pub fn solve_variants(
        &self,
        spec: &CanonicalSpec,
        k: usize,
        costs: VariantCosts,
    ) -> Result<Vec<Solution>, SearchError> {
        let start = Instant::now();
        let counters = Counters::default();
        if let Err(reason) = self.run_solver(spec, &counters, start)? {
            return Err(SearchError::Stopped { reason, report: self.report(&counters, start, reason) });
        }
        let feasibility = Feasibility::new(self.target);
        let limits = self.effective_limits();
        let request = VariantRequest { max: k.max(1) - 1, costs };
        let (best, variants) =
            best_and_variants(spec, &limits, &self.memo, self.target, &self.actions, &feasibility, request)?;
        let report = self.report(&counters, start, StopReason::Solved);
        Ok(std::iter::once(best)
            .chain(variants)
            .map(|imp| Solution { cost: imp.cost, imp, report: report.clone() })
            .collect())
    }

    fn run_solver(
        &self,
        spec: &CanonicalSpec,
        counters: &Counters,
        start: Instant,
    ) -> Result<Result<(), StopReason>, SearchError> {
        let feasibility = Feasibility::new(self.target);
        let solver = Solver {
            target: self.target,
            config: self.actions,
            feasibility: &feasibility,
            memo: &self.memo,
            cancel: self.cancel.as_ref(),
            deadline: match (self.time_limit.map(|d| start + d), self.deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            max_specs: self.max_specs,
            progress: self.progress.as_deref(),
            checkpoint: self.checkpoint.as_ref(),
            counters,
        };
        match self.threads {
            None => Ok(solver.solve(spec)),
            Some(threads) => {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| SearchError::ThreadPool { threads, message: e.to_string() })?;
                Ok(pool.install(|| solver.solve(spec)))
            }
        }
    }

    fn report(&self, counters: &Counters, start: Instant, stop: StopReason) -> SearchReport {
        SearchReport {
            specs_solved: counters.specs_solved.load(Ordering::Relaxed),
            memo_hits: counters.memo_hits.load(Ordering::Relaxed),
            actions: counters.actions.load(Ordering::Relaxed),
            wall_time: start.elapsed(),
            stop,
        }
    }
}
