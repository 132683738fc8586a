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

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use morello_core::cost::Cost;
use morello_core::imp::Impl;
use morello_core::spec::CanonicalSpec;
use morello_core::target::{MemVec, Target};

use crate::actions::{ActionConfig, TileSizes};
use crate::control::{CancelToken, Checkpoint, FINAL_SOLVE_LIMIT};
use crate::error::SearchError;
use crate::feasible::Feasibility;
use crate::memo::Memo;
use crate::peaks::{PeakCodec, Peaks};
use crate::reconstruct::Rebuild;
use crate::report::{Progress, SearchReport, StopReason};
use crate::solve::{Counters, Solver};
use crate::variants::{VariantCosts, VariantRequest, best_and_variants};

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

/// Entries per frontier in the quick fallback of a search stopped by its time limit: the
/// cheapest, the smallest and two between (enough to fit inside the moves of a parent).
const FALLBACK_ENTRIES: usize = 4;

/// The quick fallback of a search stopped by its time limit runs for at most the time the search
/// ran divided by this, so a call with a time limit ends within 1.25 times it (and one spec's
/// work)...
const FALLBACK_SHARE: u32 = 4;

/// ...or within this after its limit, so a call whose deadline was already near (a budget shared
/// by many goals, a limit of a fraction of a second) still has time to find an implementation.
const FALLBACK_MIN: Duration = Duration::from_secs(1);

type ProgressFn<'t> = Arc<dyn Fn(Progress) + Send + Sync + 't>;

/// A configured search over one target.
#[derive(Clone)]
pub struct Search<'t> {
    target: &'t Target,
    actions: ActionConfig,
    threads: Option<usize>,
    time_limit: Option<Duration>,
    fallback_time: Option<Duration>,
    deadline: Option<Instant>,
    max_specs: Option<u64>,
    max_memory: Option<u64>,
    limits: Option<MemVec>,
    top_k: usize,
    memo: Arc<Memo>,
    /// Memos of calls under limits tighter than the target's capacities, by encoded limits
    /// (frontiers answer the limits they were solved for: see [`crate::projection`]).
    limited: Arc<Mutex<HashMap<Peaks, Arc<Memo>>>>,
    cancel: Option<CancelToken>,
    progress: Option<ProgressFn<'t>>,
    checkpoint: Option<Checkpoint<'t>>,
    /// The estimated bytes of the graphs of this search's calls in flight (shared by clones, so
    /// parallel goals share the memory budget).
    graphs: Arc<AtomicU64>,
}

impl std::fmt::Debug for Search<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Search")
            .field("target", &self.target.name())
            .field("actions", &self.actions)
            .field("threads", &self.threads)
            .field("time_limit", &self.time_limit)
            .field("fallback_time", &self.fallback_time)
            .field("deadline", &self.deadline)
            .field("max_specs", &self.max_specs)
            .field("max_memory", &self.max_memory)
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
            fallback_time: None,
            deadline: None,
            max_specs: None,
            max_memory: None,
            limits: None,
            top_k: 1,
            memo: Arc::new(Memo::new()),
            limited: Arc::default(),
            cancel: None,
            progress: None,
            checkpoint: None,
            graphs: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The target it searches for.
    pub fn target(&self) -> &'t Target {
        self.target
    }

    /// Worker threads (default: all cores). The result does not depend on it.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// Stop each call after this long (solved sub-specs stay in the memo). A call that returns
    /// implementations ([`Search::solve`], [`Search::solve_top_k`], [`Search::solve_variants`])
    /// then still returns one: the best of a small space searched quickly with thinned frontiers
    /// ([`TileSizes::Coarse`]), which may not be optimal; its report says
    /// [`StopReason::TimeLimit`] ([`SearchReport::optimal`] is false). That quick search has a
    /// quarter of the time the call ran, or a second if that is longer; if it does not finish
    /// either, the call stops with [`SearchError::Stopped`] and no implementation.
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = Some(limit);
        self
    }

    /// How long the quick search after a time limit (see [`Search::time_limit`]) may take
    /// (default: a quarter of the time the call ran, or a second if that is longer).
    pub fn fallback_time(mut self, limit: Duration) -> Self {
        self.fallback_time = Some(limit);
        self
    }

    /// Stop at this instant, however many calls it spans (a budget for many goals); with
    /// [`Search::time_limit`] too, whichever comes first. Stops with [`StopReason::TimeLimit`],
    /// and returns the quick fallback's implementation as [`Search::time_limit`] says.
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Stop when exploring more than this many new specs (a bound on the search's memory).
    pub fn max_specs(mut self, max: u64) -> Self {
        self.max_specs = Some(max);
        self
    }

    /// A memory budget in bytes for the memo table and the search's graph together (default: none),
    /// as estimated from their sizes ([`Memo::estimated_bytes`] and the graph's; the process's
    /// resident memory is larger: see `docs/search.md`). A call that would exceed it stops with
    /// [`SearchError::Stopped`] and [`StopReason::MemoryLimit`], after solving the part of the
    /// sub-spec graph it explored to the leaves: that is in the memo, so saving it and calling
    /// again (with the table loaded) goes further each time. A memo that alone exceeds the
    /// budget stops every call at once. Calls in flight at once (clones of this search solving
    /// goals in parallel) share the budget.
    pub fn max_memory(mut self, bytes: u64) -> Self {
        self.max_memory = Some(bytes);
        self
    }

    /// Memory limits per level for the goal (default: the target's capacities). The memo table
    /// ([`Search::memo`]) holds frontiers for the capacities; under tighter limits each call
    /// solves into a memo of this search's own for those limits (kept across its calls and
    /// clones), since a frontier answers the limits it was solved for.
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

    /// Reuse a memo table (shared with other searches or loaded from a database): frontiers
    /// solved under the target's capacities.
    pub fn memo(mut self, memo: Arc<Memo>) -> Self {
        self.memo = memo;
        self
    }

    /// A token that stops the search when cancelled (for example from a signal handler); the
    /// search then returns [`SearchError::Stopped`] with [`StopReason::Cancelled`], and what it
    /// solved is in the memo. Cancelled while exploring its graph, it first solves the part
    /// explored to the leaves, for at most [`FINAL_SOLVE_LIMIT`] (or until
    /// [`CancelToken::abort`]), so a caller that saves the memo keeps the exploring's work.
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

    /// The memo table this search fills under the target's capacities.
    pub fn memo_table(&self) -> &Arc<Memo> {
        &self.memo
    }

    /// The memo table for this search's limits: [`Search::memo_table`] under the capacities,
    /// otherwise this search's own table for its limits.
    pub fn limits_memo_table(&self) -> Arc<Memo> {
        let codec = PeakCodec::new(self.target);
        let within = codec.encode_limits(&self.solve_limits());
        if within == codec.encode_limits(&self.target.capacities()) {
            return Arc::clone(&self.memo);
        }
        let mut limited = self.limited.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(limited.entry(within).or_insert_with(|| Arc::new(Memo::new())))
    }

    /// The action configuration.
    pub fn action_config(&self) -> &ActionConfig {
        &self.actions
    }

    /// The limits the goal is solved under.
    pub fn effective_limits(&self) -> MemVec {
        self.limits.unwrap_or_else(|| self.target.capacities())
    }

    /// The limits the frontiers are solved for: [`Search::effective_limits`] within the target's
    /// capacities (nothing larger fits the target).
    fn solve_limits(&self) -> MemVec {
        let (limits, capacities) = (self.effective_limits(), self.target.capacities());
        MemVec::from_fn(self.target.levels().len(), |i| limits.0[i].min(capacities.0[i]))
    }

    /// Solves every sub-spec `spec` needs into the memo table for this search's limits
    /// ([`Search::limits_memo_table`]), without building an implementation.
    ///
    /// # Errors
    /// [`SearchError::Stopped`] if a limit or the cancel flag stopped it.
    pub fn fill(&self, spec: &CanonicalSpec) -> Result<SearchReport, SearchError> {
        let run = self.run_solver(spec)?;
        Ok(self.report(&run, StopReason::Solved))
    }

    /// The best implementation of `spec` within the limits.
    ///
    /// # Errors
    /// [`SearchError::NoImplementation`] if nothing fits; [`SearchError::Stopped`] if cancelled
    /// or stopped by the spec limit or the memory budget (a time limit returns the fallback: see
    /// [`Search::time_limit`]).
    pub fn solve(&self, spec: &CanonicalSpec) -> Result<Solution, SearchError> {
        let run = match self.run_solver(spec) {
            Err(SearchError::Stopped { reason: StopReason::TimeLimit, report }) => {
                return self.best_found(spec, report);
            }
            other => other?,
        };
        let feasibility = Feasibility::new(self.target);
        let (imp, entry) =
            self.after_rebuild(self.rebuild(&run, &feasibility).best(spec, &self.effective_limits()))?;
        Ok(Solution { cost: entry.cost, imp, report: self.report(&run, StopReason::Solved) })
    }

    /// The `k` best implementations of `spec` within the limits that differ in their root action,
    /// cheapest first (fewer if fewer actions lead to an implementation): the best, then for
    /// every other root action its node over the best implementation of each sub-spec within the
    /// limits less what the action holds (the root variants of [`crate::variants`]).
    ///
    /// # Errors
    /// As [`Search::solve`].
    pub fn solve_top_k(&self, spec: &CanonicalSpec, k: usize) -> Result<Vec<Solution>, SearchError> {
        let run = match self.run_solver(spec) {
            Err(SearchError::Stopped { reason: StopReason::TimeLimit, report }) => {
                return self.best_found(spec, report).map(|s| vec![s]);
            }
            other => other?,
        };
        let limits = self.effective_limits();
        let feasibility = Feasibility::new(self.target);
        let rebuild = self.rebuild(&run, &feasibility);
        let (best, entry) = self.after_rebuild(rebuild.best(spec, &limits))?;
        let mut others = Vec::new();
        for (index, (_, plan)) in rebuild.actions(spec).iter().enumerate() {
            if index != usize::from(entry.action) {
                if let Some(imp) = self.after_rebuild(rebuild.best_for_plan(spec, plan, &limits))? {
                    others.push(imp);
                }
            }
        }
        others.sort_by_key(|imp| (imp.cost, imp.peaks, imp.depth()));
        let report = self.report(&run, StopReason::Solved);
        Ok(std::iter::once(best)
            .chain(others)
            .take(k.max(1))
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
        let run = match self.run_solver(spec) {
            Err(SearchError::Stopped { reason: StopReason::TimeLimit, report }) => {
                return self.best_found(spec, report).map(|s| vec![s]);
            }
            other => other?,
        };
        let feasibility = Feasibility::new(self.target);
        let request = VariantRequest { max: k.max(1) - 1, costs };
        let (best, variants) = self.after_rebuild(best_and_variants(
            &self.rebuild(&run, &feasibility),
            spec,
            &self.effective_limits(),
            request,
        ))?;
        let report = self.report(&run, StopReason::Solved);
        Ok(std::iter::once(best)
            .chain(variants)
            .map(|imp| Solution { cost: imp.cost, imp, report: report.clone() })
            .collect())
    }

    /// How this search rebuilds implementations from the memo table a run solved into.
    fn rebuild<'a>(&'a self, run: &'a SolverRun, feasibility: &'a Feasibility<'a>) -> Rebuild<'a> {
        Rebuild::new(&run.memo, self.target, &self.actions, feasibility)
    }

    /// Solves `spec` into the memo table for this search's limits.
    ///
    /// # Errors
    /// [`SearchError::Stopped`] (with the report so far) if a limit or the cancel token stopped
    /// it; [`SearchError::ThreadPool`] if the threads could not start.
    fn run_solver(&self, spec: &CanonicalSpec) -> Result<SolverRun, SearchError> {
        let run = SolverRun {
            start: Instant::now(),
            counters: Counters::default(),
            memo: self.limits_memo_table(),
        };
        let feasibility = Feasibility::new(self.target);
        let solver = Solver {
            target: self.target,
            config: self.actions,
            feasibility: &feasibility,
            memo: &run.memo,
            cancel: self.cancel.as_ref(),
            deadline: match (self.time_limit.map(|d| run.start + d), self.deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            max_specs: self.max_specs,
            progress: self.progress.as_deref(),
            checkpoint: self.checkpoint.as_ref(),
            counters: &run.counters,
            thin_to: None,
            limits: self.solve_limits(),
            max_memory: self.max_memory,
            graphs: &self.graphs,
            final_solve: Some(FINAL_SOLVE_LIMIT),
        };
        let outcome = self.in_pool(|| solver.solve(spec))?;
        self.check_table()?;
        match outcome {
            Ok(()) => Ok(run),
            Err(reason) => Err(SearchError::Stopped { reason, report: self.report(&run, reason) }),
        }
    }

    /// [`SearchError::Table`] if the memo's table failed to answer (a damaged file).
    fn check_table(&self) -> Result<(), SearchError> {
        match self.memo.failure() {
            Some(message) => Err(SearchError::Table { message: message.to_string() }),
            None => Ok(()),
        }
    }

    /// A rebuild's result, unless the memo's table failed while it ran (then the failure: a
    /// missing spec is the table's fault, not an inconsistency).
    fn after_rebuild<T>(&self, result: Result<T, SearchError>) -> Result<T, SearchError> {
        self.check_table()?;
        result
    }

    /// Runs `f` on this search's threads.
    fn in_pool<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R, SearchError> {
        match self.threads {
            None => Ok(f()),
            Some(threads) => {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| SearchError::ThreadPool { threads, message: e.to_string() })?;
                Ok(pool.install(f))
            }
        }
    }

    /// After a stop: for a time limit, the best implementation of the quick fallback (a
    /// [`TileSizes::Coarse`] space with frontiers thinned to [`FALLBACK_ENTRIES`], in a memo of
    /// its own that is never saved), reported with the stop. The fallback has its own time limit
    /// ([`Search::fallback_time`], by default the time the search ran divided by
    /// [`FALLBACK_SHARE`], at least [`FALLBACK_MIN`]) and what is
    /// left of the memory budget; when it does not finish either, the call stops with the
    /// search's report and no implementation.
    fn best_found(&self, spec: &CanonicalSpec, stopped: SearchReport) -> Result<Solution, SearchError> {
        let start = Instant::now();
        let limit =
            self.fallback_time.unwrap_or_else(|| (stopped.wall_time / FALLBACK_SHARE).max(FALLBACK_MIN));
        let config = ActionConfig { tile_sizes: TileSizes::Coarse, ..self.actions };
        let feasibility = Feasibility::new(self.target);
        let memo = Memo::new();
        let counters = Counters::default();
        let graphs = AtomicU64::new(0);
        let solver = Solver {
            target: self.target,
            config,
            feasibility: &feasibility,
            memo: &memo,
            cancel: self.cancel.as_ref(),
            deadline: Some(start + limit),
            max_specs: None,
            progress: None,
            checkpoint: None,
            counters: &counters,
            thin_to: Some(FALLBACK_ENTRIES),
            limits: self.solve_limits(),
            max_memory: self.max_memory.map(|max| max.saturating_sub(self.memo.estimated_bytes())),
            graphs: &graphs,
            // The fallback's memo is never kept.
            final_solve: None,
        };
        if let Err(reason) = self.in_pool(|| solver.solve(spec))? {
            return Err(SearchError::Stopped { reason, report: stopped });
        }
        let (imp, entry) =
            Rebuild::new(&memo, self.target, &config, &feasibility).best(spec, &self.effective_limits())?;
        let report = SearchReport {
            specs_solved: stopped.specs_solved + counters.specs_solved.load(Ordering::Relaxed),
            actions: stopped.actions + counters.actions.load(Ordering::Relaxed),
            wall_time: stopped.wall_time + start.elapsed(),
            ..stopped
        };
        Ok(Solution { cost: entry.cost, imp, report })
    }

    fn report(&self, run: &SolverRun, stop: StopReason) -> SearchReport {
        let counters = &run.counters;
        SearchReport {
            specs_solved: counters.specs_solved.load(Ordering::Relaxed),
            memo_hits: counters.memo_hits.load(Ordering::Relaxed),
            actions: counters.actions.load(Ordering::Relaxed),
            wall_time: run.start.elapsed(),
            estimated_memory: counters.peak_bytes.load(Ordering::Relaxed),
            stop,
        }
    }
}

/// One run of the solver: when it started, what it counted, and the memo it solved into.
struct SolverRun {
    start: Instant,
    counters: Counters,
    memo: Arc<Memo>,
}
