//! The dynamic program: explore the sub-spec graph, then solve it bottom-up in parallel.
//!
//! ```text
//! 1. explore   breadth-first from the goal: enumerate each new spec's actions and intern their
//!              sub-specs (specs already in the memo are leaves). Each wave runs in parallel.
//! 2. order     height(spec) = 1 + max height of its unsolved sub-specs (the graph is acyclic).
//! 3. solve     by increasing height, every spec of one height in parallel: for each action,
//!              combine the sub-specs' frontiers (pairwise, pruning dominated partial results),
//!              then keep the Pareto frontier of all actions' results within the target's capacity.
//! ```
//!
//! A memory budget (`max_memory`) is checked between waves and buckets and before each spec is
//! expanded, against the estimate of the memo and the graph (see the `memory` module). When it
//! stops the exploration, the part of the graph already explored to its leaves (every spec whose
//! sub-specs were all expanded) is solved before stopping, once the exploration's id map is
//! freed, so each run under a budget adds to the memo and the next one starts from there.
//!
//! A cancel while exploring does the same: the closed part of the graph is solved into the memo
//! before the search returns (the caller saves it, so the next run starts from there), in a final
//! solve that does not stop on the cancel flag but on [`CancelToken::abort`] and after
//! `final_solve` (checked between specs, so it ends within that plus one spec's solve).
//!
//! A spec's frontier depends only on its sub-specs' frontiers, so the result is the same for
//! every thread count. Frontiers are exact: no pruning can lose an optimum, except dropping
//! results whose peaks exceed a level's capacity, which no memory limit could admit. (The quick
//! fallback of a search stopped by its time limit thins frontiers instead: see `thin_to`.)

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use dashmap::mapref::entry::Entry as MapEntry;
use morello_core::cost::{Cost, snap_peaks};
use morello_core::spec::CanonicalSpec;
use morello_core::target::{MemVec, Target};
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;

use crate::actions::{ActionConfig, actions};
use crate::control::{CancelToken, Checkpoint};
use crate::edge::Edge;
use crate::feasible::Feasibility;
use crate::frontier::{Entry, Frontier};
use crate::grid::{self, Grid, Partial};
use crate::memo::Memo;
use crate::memory::{map_entry_bytes, spec_heap_bytes, vec_slots_bytes};
use crate::peaks::{PeakCodec, Peaks};
use crate::projection::Projection;
use crate::report::{Phase, Progress, StopReason};

/// What expanding one spec found: its id, its actions, and the sub-specs seen for the first time.
type Expansion = (u32, Vec<Edge>, Vec<(u32, Arc<CanonicalSpec>)>);

/// Counters of one solve.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub specs_solved: AtomicU64,
    pub actions: AtomicU64,
    pub memo_hits: AtomicU64,
    /// The estimated bytes of this call's graph being explored or solved (see the `memory`
    /// module).
    pub graph_bytes: AtomicU64,
    /// The largest estimate of the memo and the graph seen at a check.
    pub peak_bytes: AtomicU64,
}

/// Bytes one node of the graph takes in the node tables besides its spec ([`shared_spec_bytes`]):
/// the slots of `specs`, `known` and `edges` (growing vectors) and, while solving, of `frontiers`,
/// heights and buckets.
const NODE_SLOT_BYTES: usize = size_of::<Option<Arc<CanonicalSpec>>>()
    + size_of::<Option<Arc<Frontier>>>()
    + size_of::<Vec<Edge>>()
    + size_of::<bool>();

/// Bytes one node takes while the graph is solved, besides the tables of exploring.
const SOLVE_SLOT_BYTES: usize = size_of::<OnceLock<Arc<Frontier>>>() + 2 * size_of::<u32>();

/// Bytes one spec takes in the id map of exploring: its slot (the spec itself is shared with the
/// node table, [`shared_spec_bytes`]; the map is freed when exploring ends).
fn id_map_bytes() -> u64 {
    map_entry_bytes(size_of::<(Arc<CanonicalSpec>, u32)>())
}

/// Bytes a spec of the graph takes: one allocation, shared by the id map and the node table while
/// exploring (the Arc's counters, the spec and its heap).
fn shared_spec_bytes(spec: &CanonicalSpec) -> u64 {
    (2 * size_of::<usize>() + size_of::<CanonicalSpec>()) as u64 + spec_heap_bytes(spec)
}

/// The spec of a graph node once exploring has ended (the id map, the only other holder of it,
/// is gone), without copying it.
fn unshared(spec: Arc<CanonicalSpec>) -> CanonicalSpec {
    Arc::try_unwrap(spec).unwrap_or_else(|shared| (*shared).clone())
}

/// Bytes a spec's actions take in the graph.
#[allow(clippy::ptr_arg, reason = "the vector's capacity is counted")]
fn edges_bytes(edges: &Vec<Edge>) -> u64 {
    let own = edges.capacity() * size_of::<Edge>();
    let inner: usize = edges.iter().map(Edge::heap_bytes).sum();
    (own + inner) as u64
}

/// Everything a solve needs besides the goal.
pub(crate) struct Solver<'a> {
    pub target: &'a Target,
    pub config: ActionConfig,
    pub feasibility: &'a Feasibility<'a>,
    pub memo: &'a Memo,
    pub cancel: Option<&'a CancelToken>,
    pub deadline: Option<Instant>,
    pub max_specs: Option<u64>,
    pub progress: Option<&'a (dyn Fn(Progress) + Send + Sync + 'a)>,
    pub checkpoint: Option<&'a Checkpoint<'a>>,
    pub counters: &'a Counters,
    /// Keep at most this many entries per frontier ([`Frontier::thinned`]): fast, not exact.
    pub thin_to: Option<usize>,
    /// The limits the frontiers answer (within the target's capacities; see [`crate::projection`]).
    pub limits: MemVec,
    /// Stop when the memo and the graphs are estimated to hold more than this many bytes.
    pub max_memory: Option<u64>,
    /// The estimated bytes of the graphs of every call of the search in flight (parallel goals
    /// share a budget), this call's included.
    pub graphs: &'a AtomicU64,
    /// Cancelled while exploring, solve the part explored to the leaves for at most this long
    /// before returning (`None`: return at once, e.g. for a memo that is never kept).
    pub final_solve: Option<Duration>,
}

impl Solver<'_> {
    fn stop_reason(&self, specs_seen: u64) -> Option<StopReason> {
        if self.memo.failure().is_some() {
            return Some(StopReason::TableError);
        }
        if self.cancel.is_some_and(CancelToken::is_cancelled) {
            return Some(StopReason::Cancelled);
        }
        if self.past_deadline() {
            return Some(StopReason::TimeLimit);
        }
        if self.max_specs.is_some_and(|m| specs_seen > m) {
            return Some(StopReason::SpecLimit);
        }
        if self.over_memory() {
            return Some(StopReason::MemoryLimit);
        }
        None
    }

    /// Whether the search's deadline has passed (checked between waves and buckets and before
    /// each spec is expanded or solved, so a call ends within one spec's work of it).
    fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Why the final solve after a cancel (see [`Solver::final_solve`]) stops, if it must: not
    /// the cancel flag, but an abort, the end of its time `until`, the table or the memory budget.
    fn final_stop_reason(&self, until: Instant) -> Option<StopReason> {
        if self.memo.failure().is_some() {
            return Some(StopReason::TableError);
        }
        if self.final_solve_ends(until) {
            return Some(StopReason::Cancelled);
        }
        if self.over_memory() {
            return Some(StopReason::MemoryLimit);
        }
        None
    }

    /// Whether the final solve (ending at `until`) must stop now: aborted or out of time.
    fn final_solve_ends(&self, until: Instant) -> bool {
        self.cancel.is_some_and(CancelToken::is_aborted) || Instant::now() >= until
    }

    /// Whether the memo and the graph are estimated to hold more than the budget (and records
    /// the estimate's peak).
    fn over_memory(&self) -> bool {
        let bytes = self.memo.estimated_bytes() + self.graphs.load(Ordering::Relaxed);
        self.counters.peak_bytes.fetch_max(bytes, Ordering::Relaxed);
        self.max_memory.is_some_and(|max| bytes > max)
    }

    fn add_graph_bytes(&self, bytes: u64) {
        self.counters.graph_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.graphs.fetch_add(bytes, Ordering::Relaxed);
    }

    fn remove_graph_bytes(&self, bytes: u64) {
        self.counters.graph_bytes.fetch_sub(bytes, Ordering::Relaxed);
        self.graphs.fetch_sub(bytes, Ordering::Relaxed);
    }

    fn report(&self, phase: Phase, done: u64, total: u64) {
        if let Some(f) = self.progress {
            f(Progress { phase, done, total });
        }
    }

    /// Solves `goal` and every sub-spec it needs into the memo.
    ///
    /// # Errors
    /// The reason, if the solve stopped early; frontiers finished before that are in the memo.
    pub fn solve(&self, goal: &CanonicalSpec) -> Result<(), StopReason> {
        let result = self.solve_goal(goal);
        self.release_graph();
        result
    }

    /// Takes the estimate of this call's graph, which is gone, out of the shared total.
    fn release_graph(&self) {
        let left = self.counters.graph_bytes.swap(0, Ordering::Relaxed);
        self.graphs.fetch_sub(left, Ordering::Relaxed);
    }

    /// Solves `goal`; when its graph does not fit the memory budget, solves what was explored to
    /// the leaves, then each unsolved sub-spec of `goal` the same way (smallest first), then
    /// `goal` again, which then needs one level of graph. Sub-specs are strictly smaller, so this
    /// ends; it stops with [`StopReason::MemoryLimit`] when a spec whose sub-specs are all solved
    /// still does not fit (the memo alone is near the budget).
    fn solve_goal(&self, goal: &CanonicalSpec) -> Result<(), StopReason> {
        if self.memo.contains(goal) {
            self.counters.memo_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let (graph, stop) = self.explore(goal);
        match stop {
            None => {
                let subgoals = graph.unsolved_children(0);
                // The graph is gone once solved: what it was counted at no longer holds, and the
                // next sub-goal of a call under a memory budget must not count it.
                let solved = self.solve_graph(graph, None);
                self.release_graph();
                match solved {
                    // The memo outgrew the budget beside the whole graph: what was solved is
                    // kept, and the rest is solved in smaller graphs, as when exploring stops.
                    Err(StopReason::MemoryLimit) => self.solve_subgoals_then(goal, &subgoals),
                    other => other,
                }
            }
            Some(StopReason::Cancelled) => match self.final_solve {
                Some(limit) => {
                    let (closed, freed) = graph.closed();
                    self.remove_graph_bytes(freed);
                    match self.solve_graph(closed, Some(Instant::now() + limit)) {
                        Err(StopReason::TableError) => Err(StopReason::TableError),
                        _ => Err(StopReason::Cancelled),
                    }
                }
                None => Err(StopReason::Cancelled),
            },
            Some(StopReason::MemoryLimit) => {
                let subgoals = graph.unsolved_children(0);
                let (closed, freed) = graph.closed();
                self.remove_graph_bytes(freed);
                match self.solve_graph(closed, None) {
                    Ok(()) | Err(StopReason::MemoryLimit) => {}
                    Err(other) => return Err(other),
                }
                self.release_graph();
                self.solve_subgoals_then(goal, &subgoals)
            }
            Some(reason) => Err(reason),
        }
    }

    /// Solves each of `subgoals` (unsolved sub-specs of `goal`, smallest first) in a graph of its
    /// own, then `goal`, which then needs one level of graph; [`StopReason::MemoryLimit`] when
    /// there are none (`goal` does not fit even so).
    fn solve_subgoals_then(
        &self,
        goal: &CanonicalSpec,
        subgoals: &[CanonicalSpec],
    ) -> Result<(), StopReason> {
        if subgoals.is_empty() {
            return Err(StopReason::MemoryLimit);
        }
        for subgoal in subgoals {
            self.solve_goal(subgoal)?;
        }
        self.solve_goal(goal)
    }

    /// Explores the graph; on a stop, returns what was explored so far and the reason.
    fn explore(&self, goal: &CanonicalSpec) -> (Graph, Option<StopReason>) {
        // Each spec is allocated once, shared by the id map and the node table: specs are most of
        // what a large graph holds (about 400 bytes each, against 64 per edge).
        let ids: DashMap<Arc<CanonicalSpec>, u32, FxBuildHasher> = DashMap::with_hasher(FxBuildHasher);
        let shared_goal = Arc::new(goal.clone());
        ids.insert(Arc::clone(&shared_goal), 0);
        let next = AtomicU32::new(1);
        let mut specs: Vec<Option<Arc<CanonicalSpec>>> = vec![Some(shared_goal)];
        let mut known: Vec<Option<Arc<Frontier>>> = vec![None];
        let mut edges: Vec<Vec<Edge>> = vec![Vec::new()];
        let mut is_expanded: Vec<bool> = vec![false];
        let id_bytes = AtomicU64::new(id_map_bytes());
        self.add_graph_bytes(
            id_bytes.load(Ordering::Relaxed) + shared_spec_bytes(goal) + vec_slots_bytes(1, NODE_SLOT_BYTES),
        );
        let graph_done = |specs, known, edges, expanded, stop| {
            // The id map is freed when exploring returns.
            self.remove_graph_bytes(id_bytes.load(Ordering::Relaxed));
            (Graph { specs, known, edges, expanded }, stop)
        };
        let mut wave: Vec<u32> = vec![0];
        let mut expanded = 0u64;
        let projection = Projection::new(self.target);
        while !wave.is_empty() {
            if let Some(reason) = self.stop_reason(expanded) {
                return graph_done(specs, known, edges, is_expanded, Some(reason));
            }
            self.report(Phase::Explore, expanded, expanded + wave.len() as u64);
            let results: Vec<Expansion> = wave
                .par_iter()
                .filter_map(|&id| {
                    // Over the budget, cancelled or out of time, the rest of the wave stays
                    // unexpanded (a wave of large specs can take seconds).
                    if self.max_memory.is_some() && self.over_memory() {
                        return None;
                    }
                    if self.cancel.is_some_and(CancelToken::is_cancelled) || self.past_deadline() {
                        return None;
                    }
                    let spec = specs[id as usize].as_ref().expect("specs of a wave are recorded");
                    let mut discovered = Vec::new();
                    let mut spec_edges: Vec<Edge> =
                        actions(spec, self.target, &self.config, self.feasibility)
                            .into_iter()
                            .enumerate()
                            .map(|(index, (_, plan))| {
                                let linear = plan.combine.linear(plan.children.len(), self.target);
                                debug_assert!(
                                    plan.children.iter().all(|c| projection.keeps(spec, &linear.own, c)),
                                    "an action of {} breaks the projection's facts (see projection.rs)",
                                    spec.display(self.target)
                                );
                                let children = plan
                                    .children
                                    .into_iter()
                                    .map(|child| {
                                        if let Some(known) = ids.get(&child) {
                                            return *known;
                                        }
                                        match ids.entry(Arc::new(child)) {
                                            MapEntry::Occupied(e) => *e.get(),
                                            MapEntry::Vacant(v) => {
                                                let child_id = next.fetch_add(1, Ordering::Relaxed);
                                                discovered.push((child_id, Arc::clone(v.key())));
                                                v.insert(child_id);
                                                child_id
                                            }
                                        }
                                    })
                                    .collect();
                                Edge::new(
                                    u16::try_from(index).expect("fewer than 65536 actions"),
                                    children,
                                    linear,
                                )
                            })
                            .collect();
                    // Collected in place, the edges would keep the allocation of the actions they
                    // were made from, ten times their size: millions of edges are held at once.
                    spec_edges.shrink_to_fit();
                    let new_ids = id_map_bytes() * discovered.len() as u64;
                    let new_nodes: u64 = discovered
                        .iter()
                        .map(|(_, spec)| shared_spec_bytes(spec) + vec_slots_bytes(1, NODE_SLOT_BYTES))
                        .sum();
                    id_bytes.fetch_add(new_ids, Ordering::Relaxed);
                    self.add_graph_bytes(new_ids + new_nodes + edges_bytes(&spec_edges));
                    Some((id, spec_edges, discovered))
                })
                .collect();
            expanded += results.len() as u64;
            let total = next.load(Ordering::Relaxed) as usize;
            specs.resize(total, None);
            known.resize(total, None);
            edges.resize_with(total, Vec::new);
            is_expanded.resize(total, false);
            let unexpanded = wave.len() > results.len();
            let mut next_wave = Vec::new();
            for (id, spec_edges, discovered) in results {
                self.counters.actions.fetch_add(spec_edges.len() as u64, Ordering::Relaxed);
                edges[id as usize] = spec_edges;
                is_expanded[id as usize] = true;
                for (child_id, child) in discovered {
                    match self.memo.get(&child) {
                        Some(frontier) => {
                            self.counters.memo_hits.fetch_add(1, Ordering::Relaxed);
                            known[child_id as usize] = Some(frontier);
                        }
                        None => next_wave.push(child_id),
                    }
                    specs[child_id as usize] = Some(child);
                }
            }
            next_wave.sort_unstable();
            if unexpanded {
                let reason = self.stop_reason(expanded).unwrap_or(StopReason::MemoryLimit);
                return graph_done(specs, known, edges, is_expanded, Some(reason));
            }
            wave = next_wave;
        }
        graph_done(specs, known, edges, is_expanded, None)
    }

    /// Solves `graph` bucket by bucket into the memo, stopping between buckets for the search's
    /// reasons; with `until` (the final solve after a cancel), for [`Solver::final_stop_reason`]
    /// instead. Either way a stop also skips the specs of the bucket in flight not yet begun.
    fn solve_graph(&self, graph: Graph, until: Option<Instant>) -> Result<(), StopReason> {
        let Graph { mut specs, known, mut edges, expanded } = graph;
        let heights = heights(&edges, &known, &expanded);
        let max_height = heights.iter().copied().filter(|&h| h != OPEN).max().unwrap_or(0);
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); max_height as usize + 1];
        for (id, &h) in heights.iter().enumerate() {
            if known[id].is_none() && h != OPEN {
                buckets[h as usize].push(id as u32);
            }
        }
        let solve_bytes = vec_slots_bytes(1, SOLVE_SLOT_BYTES) * specs.len() as u64;
        self.add_graph_bytes(solve_bytes);
        let frontiers: Vec<OnceLock<Arc<Frontier>>> = known
            .iter()
            .map(|k| {
                let cell = OnceLock::new();
                if let Some(f) = k {
                    let _ = cell.set(Arc::clone(f));
                }
                cell
            })
            .collect();
        let total: u64 = buckets.iter().map(|b| b.len() as u64).sum();
        let codec = PeakCodec::new(self.target);
        let capacities = self.target.capacities();
        let limits = MemVec::from_fn(self.target.levels().len(), |i| self.limits.0[i].min(capacities.0[i]));
        let cx = NodeContext {
            frontiers: &frontiers,
            limits: codec.encode_limits(&limits),
            codec,
            projection: Projection::new(self.target),
            target: self.target,
            thin_to: self.thin_to,
        };
        let mut done = 0u64;
        let mut result = Ok(());
        let must_stop = || match until {
            None => self.cancel.is_some_and(CancelToken::is_cancelled) || self.past_deadline(),
            Some(until) => self.final_solve_ends(until),
        };
        let stop_reason = || match until {
            None => self.stop_reason(0),
            Some(until) => self.final_stop_reason(until),
        };
        for bucket in &buckets {
            if let Some(reason) = stop_reason() {
                result = Err(reason);
                break;
            }
            self.report(Phase::Solve, done, total);
            let skipped = AtomicBool::new(false);
            bucket.par_iter().for_each(|&id| {
                if must_stop() {
                    skipped.store(true, Ordering::Relaxed);
                    return;
                }
                let spec = specs[id as usize].as_ref().expect("explored specs are recorded");
                let frontier = solve_node(&edges[id as usize], cx.projection.mask(spec), &cx);
                let _ = frontiers[id as usize].set(Arc::new(frontier));
            });
            // Everything solved, even when stopping early, is correct and goes to the memo as
            // soon as its bucket is done, so a checkpoint or a stop keeps it. The spec moves
            // there: solving needs only the edges and frontiers. A solved spec's edges are
            // needed no more (its parents read its frontier), so they are freed at once: the
            // memo grows as the graph shrinks.
            for &id in bucket {
                if let (Some(frontier), Some(spec)) =
                    (frontiers[id as usize].get(), specs[id as usize].take())
                {
                    self.counters.specs_solved.fetch_add(1, Ordering::Relaxed);
                    let spent = std::mem::take(&mut edges[id as usize]);
                    self.remove_graph_bytes(shared_spec_bytes(&spec) + edges_bytes(&spent));
                    self.memo.insert(unshared(spec), Arc::clone(frontier));
                }
            }
            done += bucket.len() as u64;
            if let Some(checkpoint) = self.checkpoint {
                checkpoint.maybe_run(self.memo);
            }
            if skipped.load(Ordering::Relaxed) {
                // Even in the last bucket: the goal may be among the specs skipped.
                result = Err(stop_reason().unwrap_or(StopReason::Cancelled));
                break;
            }
        }
        self.report(Phase::Solve, done, total);
        self.over_memory();
        self.remove_graph_bytes(solve_bytes);
        result
    }
}

/// A spec a search explores, with the first edge found to need it (a diagnostic: see
/// [`explore_only`]).
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct Explored {
    /// The spec.
    pub spec: CanonicalSpec,
    /// The first spec (an index into the list) whose action needs it, the action's index in
    /// that spec's `actions()` and the child's place in the action's plan; `None` for the goal.
    pub parent: Option<(usize, u16, usize)>,
}

/// Explores the sub-spec graph of `goal` without solving it, stopping after `max_specs` specs, and
/// returns the specs found with what first needed each (a diagnostic for understanding what a
/// search would explore: `examples/space_census.rs`).
#[doc(hidden)]
pub fn explore_only(
    goal: &CanonicalSpec,
    target: &Target,
    config: ActionConfig,
    max_specs: u64,
) -> Vec<Explored> {
    let memo = Memo::new();
    let counters = Counters::default();
    let graphs = AtomicU64::new(0);
    let feasibility = Feasibility::new(target);
    let solver = Solver {
        target,
        config,
        feasibility: &feasibility,
        memo: &memo,
        cancel: None,
        deadline: None,
        max_specs: Some(max_specs),
        progress: None,
        checkpoint: None,
        counters: &counters,
        thin_to: None,
        limits: target.capacities(),
        max_memory: None,
        graphs: &graphs,
        final_solve: None,
    };
    let (graph, _) = solver.explore(goal);
    let mut parents: Vec<Option<(usize, u16, usize)>> = vec![None; graph.specs.len()];
    for (id, edges) in graph.edges.iter().enumerate() {
        for edge in edges {
            for (place, &child) in edge.children().iter().enumerate() {
                let slot = &mut parents[child as usize];
                if slot.is_none() && child != 0 {
                    *slot = Some((id, edge.action(), place));
                }
            }
        }
    }
    // Specs not recorded (none, unless exploring stopped) are left out; parents are renumbered.
    let mut index = vec![usize::MAX; graph.specs.len()];
    let mut out = Vec::new();
    for (id, spec) in graph.specs.into_iter().enumerate() {
        if let Some(spec) = spec {
            index[id] = out.len();
            out.push(Explored { spec: unshared(spec), parent: parents[id] });
        }
    }
    for explored in &mut out {
        explored.parent =
            explored.parent.and_then(|(p, a, c)| (index[p] != usize::MAX).then(|| (index[p], a, c)));
    }
    out
}

/// The explored graph: specs by id, frontiers already known (from the memo), actions by id, and
/// whether each spec's actions were enumerated (all were, unless exploring stopped early).
struct Graph {
    specs: Vec<Option<Arc<CanonicalSpec>>>,
    known: Vec<Option<Arc<Frontier>>>,
    edges: Vec<Vec<Edge>>,
    expanded: Vec<bool>,
}

impl Graph {
    /// The sub-specs of spec `id` that are neither known nor solved, smallest first (by volume,
    /// then spec order), each once.
    fn unsolved_children(&self, id: usize) -> Vec<CanonicalSpec> {
        let mut children: Vec<u32> =
            self.edges[id].iter().flat_map(|e| e.children().iter().copied()).collect();
        children.sort_unstable();
        children.dedup();
        let mut specs: Vec<CanonicalSpec> = children
            .into_iter()
            .filter(|&c| self.known[c as usize].is_none())
            .filter_map(|c| self.specs[c as usize].as_deref().cloned())
            .collect();
        specs.sort_by(|a, b| a.shape.volume().cmp(&b.shape.volume()).then_with(|| a.cmp(b)));
        specs
    }

    /// The graph without what cannot be solved yet: specs not expanded, and every spec that
    /// needs one (their `heights` are [`OPEN`]; `solve_graph` leaves them out). Their specs and
    /// edges are dropped here, to make room for solving the rest, and they count as not expanded
    /// (so they stay open); returns the bytes freed.
    fn closed(mut self) -> (Graph, u64) {
        let heights = heights(&self.edges, &self.known, &self.expanded);
        let mut freed = 0;
        for (id, &h) in heights.iter().enumerate() {
            if h == OPEN {
                freed += self.specs[id].take().map_or(0, |spec| shared_spec_bytes(&spec));
                freed += edges_bytes(&std::mem::take(&mut self.edges[id]));
                // Without its edges it must stay open, not become a leaf.
                self.expanded[id] = false;
            }
        }
        (self, freed)
    }
}

/// The height of a spec that cannot be solved: it was not expanded, or a sub-spec was not.
const OPEN: u32 = u32::MAX - 2;

/// Height of every node: 0 for known frontiers and specs without unknown children; [`OPEN`] for
/// a spec not expanded (neither known nor `expanded`) and every spec that needs one.
///
/// # Panics
/// If the graph has a cycle: every action shrinks its spec, so that is a bug in an action.
fn heights(edges: &[Vec<Edge>], known: &[Option<Arc<Frontier>>], expanded: &[bool]) -> Vec<u32> {
    const UNSET: u32 = u32::MAX;
    const IN_PROGRESS: u32 = u32::MAX - 1;
    let mut height = vec![UNSET; edges.len()];
    for (id, k) in known.iter().enumerate() {
        if k.is_some() {
            height[id] = 0;
        } else if !expanded[id] {
            height[id] = OPEN;
        }
    }
    // Iterative post-order: a node is finished once all its children are.
    let mut stack: Vec<(u32, bool)> = Vec::new();
    for root in 0..edges.len() as u32 {
        if height[root as usize] != UNSET {
            continue;
        }
        stack.push((root, false));
        while let Some((id, children_done)) = stack.pop() {
            let children = edges[id as usize].iter().flat_map(|e| e.children().iter().copied());
            if children_done {
                let h = children.map(|c| height[c as usize].saturating_add(1)).max().unwrap_or(0);
                height[id as usize] = if h > OPEN { OPEN } else { h };
                continue;
            }
            if height[id as usize] != UNSET {
                assert_ne!(
                    height[id as usize], IN_PROGRESS,
                    "the sub-spec graph has a cycle through spec #{id}"
                );
                continue;
            }
            height[id as usize] = IN_PROGRESS;
            stack.push((id, true));
            for c in children {
                assert_ne!(
                    height[c as usize], IN_PROGRESS,
                    "the sub-spec graph has a cycle through spec #{c}"
                );
                if height[c as usize] == UNSET {
                    stack.push((c, false));
                }
            }
        }
    }
    height
}

/// What solving one node needs besides its edges: the frontiers so far, the limits they answer
/// and which levels each keeps apart.
struct NodeContext<'a> {
    frontiers: &'a [OnceLock<Arc<Frontier>>],
    limits: Peaks,
    codec: PeakCodec,
    projection: Projection,
    target: &'a Target,
    thin_to: Option<usize>,
}

/// Products of two frontiers up to this many pairs are pruned as a list; larger ones are merged by
/// peaks in a hash map as they are made (either way the same partials survive `prune`: of equal
/// peaks, the cheapest then shallowest). Small products dominate the 64^3 search, where the map
/// costs a quarter of the time; large ones dominate searches like `100x3x50`, where it saves 95%.
const MERGE_ABOVE: usize = 256;

/// A product of frontiers is made on the grid of their peak codes ([`grid::product`]) when its
/// cells times the work per cell are at most the pairs of entries over this (the pairs are an
/// upper bound: `combine_pairs` skips many).
const GRID_GAIN: usize = 2;

/// The frontier of one spec from its actions and its children's frontiers, keeping the levels of
/// `relevant` apart (see [`crate::projection`]).
fn solve_node(edges: &[Edge], relevant: Peaks, cx: &NodeContext<'_>) -> Frontier {
    let mut candidates = Vec::new();
    'actions: for edge in edges {
        let mut children: Vec<(&[Entry], u64)> = Vec::with_capacity(edge.children().len());
        for (child, weight) in edge.weighted_children() {
            let frontier = cx.frontiers[child as usize].get().expect("children are solved before parents");
            if frontier.is_empty() {
                continue 'actions;
            }
            children.push((frontier.entries(), weight));
        }
        let own = edge.own();
        for p in combine(&children, cx.limits) {
            let peaks = if own == MemVec::ZERO {
                p.peaks
            } else {
                let total = own.saturating_add(&cx.codec.decode(p.peaks));
                cx.codec.encode_peaks(&snap_peaks(total, cx.target))
            };
            if peaks.fits(cx.limits) {
                candidates.push(Entry {
                    cost: edge.cost(p.cost),
                    peaks,
                    depth: p.depth + 1,
                    action: edge.action(),
                });
            }
        }
    }
    let frontier = Frontier::from_candidates_on(candidates, relevant);
    match cx.thin_to {
        Some(k) => frontier.thinned(k),
        None => frontier,
    }
}

/// The frontier of the weighted product of non-empty `children` (see [`grid::product`] for what
/// is kept), within `capacities`: on the grid of their peak codes when that is much smaller than
/// the pairs, otherwise by pairing entries.
fn combine(children: &[(&[Entry], u64)], capacities: Peaks) -> Vec<Partial> {
    if children.len() >= 2 {
        let pairs = children.iter().fold(1usize, |n, (entries, _)| n.saturating_mul(entries.len()));
        let saturated = || children.iter().any(|(entries, _)| entries.iter().any(|e| e.cost == Cost::MAX));
        // Per cell: a down-minimum pass per axis and child, a sum per child, a check per axis.
        let work_per_cell = 2 * children.len() + 4;
        let limit = pairs / (GRID_GAIN * work_per_cell);
        if limit >= 16 && !saturated() {
            let peaks = children.iter().flat_map(|(entries, _)| entries.iter().map(|e| e.peaks));
            if let Some(grid) = Grid::spanning(peaks, limit) {
                let mut partials = grid::product(&grid, children);
                partials.retain(|p| p.peaks.fits(capacities));
                return partials;
            }
        }
    }
    combine_pairs(children, capacities)
}

/// [`combine`] by pairing entries child by child, pruning partial combinations as it goes.
///
/// Until the last child, a partial is dropped only when another is cheaper with peaks at most its
/// own, or as cheap, with peaks and depth at most its own (`prune`): a partial of equal
/// cost and smaller peaks but a greater depth may still combine into the same final peaks, where
/// the smaller depth wins. So the survivors are exactly [`grid::product`]'s.
///
/// Two cuts skip pairs that `prune` would drop, so the survivors are the same without them:
///
/// - Entries are sorted by cost. Once an entry `e` fits inside a partial's peaks, the pair has
///   exactly the partial's peaks, and pairing with any later entry gives peaks at least as large
///   at a cost at least as high: dominated. Entries of `e`'s cost are still paired (a pair of
///   equal cost and peaks may win on depth). On the 64^3 search this skips most pairs.
/// - Symmetrically, once a partial fits inside an entry's peaks, a later partial's pair with that
///   entry that costs more is dominated by that pair (see [`PairScratch::closed`]).
fn combine_pairs(children: &[(&[Entry], u64)], capacities: Peaks) -> Vec<Partial> {
    PAIR_SCRATCH.with_borrow_mut(|scratch| {
        let partials = scratch.combine(children, capacities);
        scratch.shrink();
        partials
    })
}

thread_local! {
    /// Each solving thread's buffers for [`combine_pairs`], kept between calls.
    static PAIR_SCRATCH: std::cell::RefCell<PairScratch> = std::cell::RefCell::default();
}

/// The buffers [`combine_pairs`] reuses: a solve calls it for most edges of most specs, so
/// allocating them per call would cost more than much of the pairing.
#[derive(Default)]
struct PairScratch {
    /// The pairs of one child with the partials so far.
    combinations: Vec<Partial>,
    /// For each entry of the child being paired, the cost of its cheapest pair with a partial
    /// whose peaks fit inside the entry's (`u64::MAX` if none yet). Such a pair's peaks are the
    /// entry's own, so any later pair of that entry costing more is dominated: its peaks are at
    /// least the entry's.
    closed: Vec<u64>,
    /// Large products merged by peaks: the cheapest, then shallowest, pair of each peak vector.
    by_peaks: HashMap<Peaks, Partial, FxBuildHasher>,
}

/// The pairs [`PairScratch`] keeps room for between calls (a few hundred KiB per thread): the
/// rare larger product gives its memory back, so the memory budget need not count it.
const SCRATCH_KEPT: usize = 1 << 14;

impl PairScratch {
    fn shrink(&mut self) {
        self.combinations.shrink_to(SCRATCH_KEPT);
        self.closed.shrink_to(SCRATCH_KEPT);
        self.by_peaks.shrink_to(SCRATCH_KEPT);
    }

    fn combine(&mut self, children: &[(&[Entry], u64)], capacities: Peaks) -> Vec<Partial> {
        let mut partials = vec![Partial { cost: 0, peaks: Peaks::ZERO, depth: 0 }];
        for (index, &(entries, weight)) in children.iter().enumerate() {
            self.pair(&partials, entries, weight, capacities);
            let last = index + 1 == children.len();
            partials = if index == 0 {
                // One child's frontier, scaled, is already free of dominated entries.
                self.combinations.clone()
            } else if self.combinations.len() <= MERGE_ABOVE {
                prune(&mut self.combinations, last)
            } else {
                // Of the combinations with equal peaks only the cheapest (then shallowest) can
                // survive: the product of two frontiers has far fewer distinct peak vectors
                // than pairs.
                self.by_peaks.clear();
                for candidate in self.combinations.drain(..) {
                    self.by_peaks
                        .entry(candidate.peaks)
                        .and_modify(|kept| {
                            if (candidate.cost, candidate.depth) < (kept.cost, kept.depth) {
                                *kept = candidate;
                            }
                        })
                        .or_insert(candidate);
                }
                // `prune` sorts, so the map's order does not matter.
                self.combinations.extend(self.by_peaks.drain().map(|(_, p)| p));
                prune(&mut self.combinations, last)
            };
            if partials.is_empty() {
                break;
            }
        }
        partials
    }

    /// Fills `combinations` with the pairs of `partials` and `entries` (scaled by `weight`) that
    /// fit `capacities`, less pairs that a cheaper pair among them dominates.
    fn pair(&mut self, partials: &[Partial], entries: &[Entry], weight: u64, capacities: Peaks) {
        self.combinations.clear();
        self.closed.clear();
        self.closed.resize(entries.len(), u64::MAX);
        for p in partials {
            // Up to the first entry that fits inside `p`'s peaks and those of its cost.
            let mut inside: Option<Cost> = None;
            for (e, closed) in entries.iter().zip(&mut self.closed) {
                match inside {
                    Some(c) if e.cost != c => break,
                    Some(_) => {}
                    None => inside = e.peaks.fits(p.peaks).then_some(e.cost),
                }
                let cost = p.cost.saturating_add(weight.saturating_mul(e.cost));
                // A pair of this entry with an earlier partial has the entry's peaks at a lower
                // cost: this pair's peaks are at least those.
                if *closed < cost {
                    continue;
                }
                let peaks = p.peaks.max(e.peaks);
                if !peaks.fits(capacities) {
                    continue;
                }
                if peaks == e.peaks && cost < *closed {
                    *closed = cost;
                }
                self.combinations.push(Partial { cost, peaks, depth: p.depth.max(e.depth) });
            }
        }
    }
}

/// Drops partial combinations that another beats on cost and every peak (ties: smaller depth).
/// Before the `last` child, one of equal cost and smaller peaks beats a partial only if it is also
/// as shallow (see [`combine_pairs`]).
fn prune(partials: &mut [Partial], last: bool) -> Vec<Partial> {
    if partials.len() <= 1 {
        return partials.to_vec();
    }
    partials.sort_unstable_by_key(|p| (p.cost, p.peaks, p.depth));
    let mut kept: Vec<Partial> = Vec::with_capacity(partials.len().min(16));
    // The kept partials' peaks side by side, tested a block at a time without branches: most
    // partials are compared with every kept one.
    let mut kept_peaks: Vec<Peaks> = Vec::with_capacity(partials.len().min(16));
    for &p in partials.iter() {
        let beats = |k: &Partial| last || k.cost < p.cost || k.depth <= p.depth;
        let blocks = kept_peaks.chunks_exact(PRUNE_BLOCK);
        let rest = blocks.remainder();
        let mut beaten = blocks.enumerate().any(|(block, peaks)| {
            let mut inside = 0u32;
            for (j, k) in peaks.iter().enumerate() {
                inside |= u32::from(k.fits(p.peaks)) << j;
            }
            inside != 0 && bits(inside).any(|j| beats(&kept[block * PRUNE_BLOCK + j]))
        });
        if !beaten {
            let start = kept.len() - rest.len();
            beaten = kept[start..].iter().any(|k| k.peaks.fits(p.peaks) && beats(k));
        }
        if !beaten {
            kept.push(p);
            kept_peaks.push(p.peaks);
        }
    }
    kept
}

/// The partials [`prune`] tests at once.
const PRUNE_BLOCK: usize = 8;

/// The positions of the set bits of `mask`, lowest first.
fn bits(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let j = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            j
        })
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::actions::Linear;

    use super::*;

    /// A frontier from random entries over four levels (the first always 0).
    fn frontier() -> impl Strategy<Value = Frontier> {
        prop::collection::vec((0u64..30, [0u64..1, 0u64..5, 0u64..4, 0u64..4], 1u32..4), 1..40).prop_map(
            |v| {
                Frontier::from_candidates(
                    v.into_iter()
                        .map(|(cost, p, depth)| Entry {
                            cost,
                            peaks: Peaks(
                                p.iter().enumerate().fold(0, |acc, (i, c)| acc | (c << (56 - 8 * i))),
                            ),
                            depth,
                            action: 0,
                        })
                        .collect(),
                )
            },
        )
    }

    fn sorted(mut partials: Vec<Partial>) -> Vec<(u64, u64, u32)> {
        let mut out: Vec<_> = partials.drain(..).map(|p| (p.cost, p.peaks.0, p.depth)).collect();
        out.sort_unstable();
        out
    }

    proptest! {
        /// The product on the grid keeps exactly the partials that pairing keeps (cost, peaks and
        /// depth), for two to four children with weights.
        #[test]
        fn grid_product_equals_pairing(
            children in prop::collection::vec((frontier(), 1u64..5), 2..5),
            limit in 0u64..6,
        ) {
            let children: Vec<(&[Entry], u64)> = children.iter().map(|(f, w)| (f.entries(), *w)).collect();
            // The second level limited, the others not (codes stay below 128).
            let limits = Peaks(0x0000_7f7f_7f7f_7f7f | (limit << 48));
            let peaks = children.iter().flat_map(|(entries, _)| entries.iter().map(|e| e.peaks));
            let grid = Grid::spanning(peaks, usize::MAX).unwrap();
            let mut on_grid = grid::product(&grid, &children);
            on_grid.retain(|p| p.peaks.fits(limits));
            prop_assert_eq!(sorted(on_grid), sorted(combine_pairs(&children, limits)));
        }
    }

    /// A graph cut short by the memory budget: 0 -> 1 -> 2, with 2 not expanded, and 0 -> 3, a
    /// leaf. `closed` drops 0 and 1 (they need 2) and they must stay open, not become leaves
    /// because their edges are gone: solving would otherwise reach a node without its spec.
    #[test]
    fn a_closed_graph_keeps_what_needs_an_unexpanded_spec_open() {
        let target = Target::builtin("x86-avx2", 1).expect("a built-in target");
        let spec = morello_core::spec::SpecBuilder::matmul(2, 2, 2).build(&target).expect("a spec");
        let edge = |children: Vec<u32>| {
            let weights = vec![1; children.len()];
            Edge::new(0, children, Linear { base: 1, weights, own: MemVec::ZERO, credit: 0 })
        };
        let graph = Graph {
            specs: vec![Some(Arc::new(spec.clone())); 4],
            known: vec![None; 4],
            edges: vec![
                vec![edge(vec![1]), edge(vec![3])],
                vec![edge(vec![2])],
                Vec::new(),
                vec![edge(vec![])],
            ],
            expanded: vec![true, true, false, true],
        };
        let (closed, freed) = graph.closed();
        assert!(freed > 0);
        let heights = heights(&closed.edges, &closed.known, &closed.expanded);
        assert_eq!(heights, vec![OPEN, OPEN, OPEN, 0]);
        assert!(closed.specs[0].is_none() && closed.specs[1].is_none() && closed.specs[3].is_some());
    }
}
