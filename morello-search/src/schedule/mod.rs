//! Schedules by hand, completed by the search: take the first rewrites of a spec yourself (tile,
//! split, move an operand, pick a kernel), then [`Schedule::synthesize`] every sub-spec left open
//! from the memo table, searching what is missing.
//!
//! A [`Schedule`] is a partial implementation: a tree of applied rewrites whose leaves are open
//! sub-specs. Every step is one of the search's own actions ([`crate::actions::actions`]), found
//! by what it does among the actions the search enumerates for the leaf it is applied to, so a
//! hand step is legal exactly when the search could take it, and builds the same node through the
//! same [`Plan`]. A step is refused with a [`ScheduleError::Illegal`] that names the step, the
//! spec and the [`Refusal`], and the schedule is then unchanged.
//!
//! Steps go to the *default leaf*: from the root, each node's default child, until an open leaf.
//!
//! ```text
//! loop          its body (not the boundary regions)
//! move          the body (not the copy in or out)
//! to_accum      the accumulating stage (not the zeroing)     peel   the accumulating rest
//! one child     that child             other blocks   none: name a child with subschedule
//! ```
//!
//! [`Schedule::subschedule`] schedules another node by its path of child indices (in the order of
//! `Impl::children`: a loop's body then its boundaries; a move's copy in, body, copy out; a
//! block's stages). The hand steps see the search's actions with every tile remainder and every
//! dividing tile ([`Remainders::EveryTile`], [`DividingTiles::Every`]): the search leaves those
//! out only because they tie with what it keeps, so they never beat its optimum.
//!
//! The text form (one step per line, `#` comments, `sub PATH { ... }` blocks) is read by
//! [`Schedule::apply_text`] and written by [`schedule_text`]; `docs/schedules.md` has its grammar.
//!
//! ```
//! use morello_core::spec::SpecBuilder;
//! use morello_core::target::Target;
//! use morello_search::schedule::Schedule;
//!
//! let target = Target::builtin("x86-avx2", 1).unwrap();
//! let spec = SpecBuilder::matmul(8, 8, 8).build(&target).unwrap();
//! let mut schedule = Schedule::new(&spec, &target);
//! schedule.tile_out(&[1, 4, 8]).unwrap().move_to(0, "L2", None, None).unwrap();
//! let imp = schedule.synthesize().unwrap();
//! assert!(imp.is_complete());
//! ```

mod emit;
mod error;
mod resolve;
mod step;
#[cfg(test)]
mod tests;
mod text;

use morello_core::imp::Impl;
use morello_core::spec::CanonicalSpec;
use morello_core::target::{LevelId, LevelKind, MemVec, Target};

use resolve::{MoveWanted, output_tiles};

use crate::actions::{Action, ActionConfig, DividingTiles, Plan, PlanShape, Remainders, actions};
use crate::error::SearchError;
use crate::feasible::Feasibility;
use crate::reconstruct::Rebuild;
use crate::report::{SearchReport, StopReason};
use crate::search::Search;

pub use emit::{schedule_text, step_of};
pub use error::{Refusal, ScheduleError};
pub use step::{Copy, Step};

/// A partial implementation of a spec, built step by step and completed by the search (see the
/// module docs).
#[derive(Debug, Clone)]
pub struct Schedule<'t> {
    target: &'t Target,
    search: Search<'t>,
    root: Node,
    /// What the searches that completed open leaves did, summed.
    report: SearchReport,
}

/// A node of a partial implementation.
#[derive(Debug, Clone)]
enum Node {
    /// A sub-spec no step has touched, with the memory its implementation may use.
    Open { spec: CanonicalSpec, limits: MemVec },
    /// A rewrite applied by hand, over its children.
    Applied { spec: CanonicalSpec, action: Action, plan: Plan, children: Vec<Node> },
    /// A sub-spec completed by the search.
    Solved(Impl),
}

impl Node {
    fn spec(&self) -> &CanonicalSpec {
        match self {
            Node::Open { spec, .. } | Node::Applied { spec, .. } => spec,
            Node::Solved(imp) => &imp.spec,
        }
    }

    fn children(&self) -> &[Node] {
        match self {
            Node::Applied { children, .. } => children,
            Node::Open { .. } | Node::Solved(_) => &[],
        }
    }

    fn child_mut(&mut self, index: usize) -> Option<&mut Node> {
        match self {
            Node::Applied { children, .. } => children.get_mut(index),
            Node::Open { .. } | Node::Solved(_) => None,
        }
    }

    /// The tree so far: open leaves as unsolved leaves (cost 0).
    fn build(&self, target: &Target) -> Impl {
        match self {
            Node::Open { spec, limits } => Impl::spec_app(spec.clone(), *limits),
            Node::Applied { spec, plan, children, .. } => {
                plan.build(spec.clone(), children.iter().map(|c| c.build(target)).collect(), target)
            }
            Node::Solved(imp) => imp.clone(),
        }
    }

    fn open_leaves<'a>(&'a self, out: &mut Vec<&'a CanonicalSpec>) {
        match self {
            Node::Open { spec, .. } => out.push(spec),
            Node::Applied { children, .. } => children.iter().for_each(|c| c.open_leaves(out)),
            Node::Solved(_) => {}
        }
    }
}

/// Which child of a node with `action` and `plan` the steps go to: `Ok(None)` for a leaf,
/// `Err(children)` when the node has several children and none is the default (see the module
/// docs).
fn default_child(action: &Action, plan: &Plan) -> Result<Option<usize>, usize> {
    let children = plan.children.len();
    match (&plan.shape, action) {
        (PlanShape::Kernel(_), _) => Ok(None),
        (PlanShape::Loop { .. } | PlanShape::AsMatmul, _) => Ok(Some(0)),
        (PlanShape::Alloc { prologue, .. }, _) => Ok(Some(usize::from(*prologue))),
        (PlanShape::Block { .. }, Action::ToAccum | Action::PeelReduction { .. }) => {
            Ok(children.checked_sub(1))
        }
        (PlanShape::Block { .. }, _) if children == 1 => Ok(Some(0)),
        (PlanShape::Block { .. }, _) => Err(children),
    }
}

impl<'t> Schedule<'t> {
    /// A schedule of `spec` with nothing applied yet, completed by a default [`Search`] of
    /// `target` (a fresh memo table; see [`Schedule::with_search`]) within the target's
    /// capacities.
    pub fn new(spec: &CanonicalSpec, target: &'t Target) -> Self {
        Schedule::with_search(spec, Search::new(target))
    }

    /// A schedule of `spec` completed by `search` (its memo table, action configuration, threads,
    /// cancel token and time limit), within the search's limits.
    pub fn with_search(spec: &CanonicalSpec, search: Search<'t>) -> Self {
        let root = Node::Open { spec: spec.clone(), limits: search.effective_limits() };
        let report = SearchReport {
            specs_solved: 0,
            memo_hits: 0,
            actions: 0,
            wall_time: std::time::Duration::ZERO,
            estimated_memory: 0,
            stop: StopReason::Solved,
        };
        Schedule { target: search.target(), search, root, report }
    }

    /// What the searches that completed open leaves did, summed (the largest memory estimate).
    pub fn report(&self) -> &SearchReport {
        &self.report
    }

    /// The scheduled spec.
    pub fn spec(&self) -> &CanonicalSpec {
        self.root.spec()
    }

    /// The target.
    pub fn target(&self) -> &'t Target {
        self.target
    }

    /// The sub-specs no step has implemented yet, in execution order.
    pub fn open_leaves(&self) -> Vec<&CanonicalSpec> {
        let mut out = Vec::new();
        self.root.open_leaves(&mut out);
        out
    }

    /// The open leaf the next step goes to (see the module docs), or `None` when the default path
    /// ends at a kernel or at a node with no default child.
    pub fn current(&self) -> Option<&CanonicalSpec> {
        let path = self.default_path(&self.root).ok()?;
        let mut at = &self.root;
        for index in path {
            at = &at.children()[index];
        }
        Some(at.spec())
    }

    /// The tree so far, open leaves as unsolved leaves (`Impl::spec_app`, cost 0).
    pub fn partial_impl(&self) -> Impl {
        self.root.build(self.target)
    }

    /// The action configuration hand steps are found in: the search's, with every remainder and
    /// every dividing tile (which only tie with what the search keeps).
    fn hand_config(&self) -> ActionConfig {
        ActionConfig {
            remainders: Remainders::EveryTile,
            dividing_tiles: DividingTiles::Every,
            ..*self.search.action_config()
        }
    }

    /// Applies `step` to the default leaf.
    ///
    /// # Errors
    /// [`ScheduleError::Illegal`] when the search could not take it there; the schedule is then
    /// unchanged.
    pub fn step(&mut self, step: &Step) -> Result<&mut Self, ScheduleError> {
        let mut root = self.root.clone();
        match step {
            Step::TileOut { shape } => {
                let leaf = self.default_leaf(&root, step)?;
                let tiles = output_tiles(leaf, shape).map_err(|why| self.illegal(step, leaf, why))?;
                for (dim, size) in tiles {
                    self.apply_at_default(&mut root, step, |s, spec, all| {
                        s.tile_index(spec, dim, size, all)
                    })?;
                }
            }
            Step::Split { size } => {
                self.apply_at_default(&mut root, step, |s, spec, all| match spec.kind.reduction_dims() {
                    [dim] => s.tile_index(spec, *dim, *size, all),
                    reductions => Err(Refusal::NoSingleReduction { count: reductions.len() }),
                })?;
            }
            Step::Tile { dim, size } => {
                self.apply_at_default(&mut root, step, |s, spec, all| {
                    let names = spec.kind.dim_names(spec.shape.rank());
                    let index = names
                        .iter()
                        .position(|n| n == dim)
                        .ok_or_else(|| Refusal::NoSuchDim { dim: dim.clone(), dims: names.join(", ") })?;
                    s.tile_index(spec, index, *size, all)
                })?;
            }
            Step::Parallel { shape } => {
                self.apply_at_default(&mut root, step, |s, spec, all| s.parallel_index(spec, shape, all))?;
            }
            Step::MoveTo { operand, level, layout, vector_size, copy } => {
                let wanted = MoveWanted {
                    operand,
                    level,
                    layout: layout.as_deref(),
                    vector_size: *vector_size,
                    copy: *copy,
                };
                self.apply_at_default(&mut root, step, |s, spec, all| s.move_index(spec, &wanted, all))?;
            }
            Step::Select { kernel } => {
                self.apply_at_default(&mut root, step, |s, _, all| s.kernel_index(kernel, all))?;
            }
            Step::ToAccum => self.apply_at_default(&mut root, step, |s, spec, all| {
                s.rewrite_index(spec, all, |a| *a == Action::ToAccum)
            })?,
            Step::Peel { size } => self.apply_at_default(&mut root, step, |s, spec, all| {
                s.rewrite_index(spec, all, |a| *a == Action::PeelReduction { size: *size })
            })?,
            Step::SplitEpilogue => self.apply_at_default(&mut root, step, |s, spec, all| {
                s.rewrite_index(spec, all, |a| *a == Action::SplitEpilogue)
            })?,
            Step::AsMatmul => self.apply_at_default(&mut root, step, |s, spec, all| {
                s.rewrite_index(spec, all, |a| *a == Action::AsMatmul)
            })?,
            Step::PaddingRegions => self.apply_at_default(&mut root, step, |s, spec, all| {
                s.rewrite_index(spec, all, |a| *a == Action::PaddingRegions)
            })?,
            Step::SoftmaxParts { level } => self.apply_at_default(&mut root, step, |s, spec, all| {
                let level = s.level(level)?;
                s.rewrite_index(spec, all, |a| *a == Action::SoftmaxParts { level })
            })?,
            Step::Pad { level, columns } => self.apply_at_default(&mut root, step, |s, spec, all| {
                let level = s.level(level)?;
                s.rewrite_index(spec, all, |a| *a == Action::Pad { level, columns: *columns })
            })?,
            Step::RequantParts { level, vector_size } => {
                self.apply_at_default(&mut root, step, |s, spec, all| {
                    let level = s.level(level)?;
                    let vector_size = *vector_size;
                    s.rewrite_index(spec, all, |a| *a == Action::RequantParts { level, vector_size })
                })?
            }
            Step::ShiftS8 { level } => self.apply_at_default(&mut root, step, |s, spec, all| {
                let level = s.level(level)?;
                s.rewrite_index(spec, all, |a| *a == Action::ShiftS8 { level })
            })?,
        }
        self.root = root;
        Ok(self)
    }

    /// Tiles the output to `shape` (one serial loop per dim that changes, outermost first).
    ///
    /// # Errors
    /// As [`Schedule::step`].
    pub fn tile_out(&mut self, shape: &[u32]) -> Result<&mut Self, ScheduleError> {
        self.step(&Step::TileOut { shape: shape.to_vec() })
    }

    /// Tiles the one reduction dim to `size` (the spec must accumulate: see
    /// [`Schedule::to_accum`]).
    ///
    /// # Errors
    /// As [`Schedule::step`].
    pub fn split(&mut self, size: u32) -> Result<&mut Self, ScheduleError> {
        self.step(&Step::Split { size })
    }

    /// Tiles the iteration dim named `dim` (`b`, `m`, `k`, `n` for a matmul) to `size`.
    ///
    /// # Errors
    /// As [`Schedule::step`].
    pub fn tile(&mut self, dim: &str, size: u32) -> Result<&mut Self, ScheduleError> {
        self.step(&Step::Tile { dim: dim.to_string(), size })
    }

    /// One parallel loop over tiles of the output of `shape`.
    ///
    /// # Errors
    /// As [`Schedule::step`].
    pub fn parallel(&mut self, shape: &[u32]) -> Result<&mut Self, ScheduleError> {
        self.step(&Step::Parallel { shape: shape.to_vec() })
    }

    /// Moves operand `operand` to the level named `level`, in `layout` (`row-major`, `col-major`
    /// or the bracketed form; any the search offers when `None`) with vectors of `vector_size`
    /// elements (any when `None`); a cache view when the search offers one, else a new buffer.
    ///
    /// # Errors
    /// As [`Schedule::step`].
    pub fn move_to(
        &mut self,
        operand: usize,
        level: &str,
        layout: Option<&str>,
        vector_size: Option<u32>,
    ) -> Result<&mut Self, ScheduleError> {
        self.step(&Step::MoveTo {
            operand: operand.to_string(),
            level: level.to_string(),
            layout: layout.map(str::to_string),
            vector_size,
            copy: Copy::ViewOrBuffer,
        })
    }

    /// Copies operand `operand` into a new buffer at `level` in `layout` (a packed panel, for
    /// example): as [`Schedule::move_to`], never a cache view.
    ///
    /// # Errors
    /// As [`Schedule::step`].
    pub fn pack(&mut self, operand: usize, level: &str, layout: &str) -> Result<&mut Self, ScheduleError> {
        self.step(&Step::MoveTo {
            operand: operand.to_string(),
            level: level.to_string(),
            layout: Some(layout.to_string()),
            vector_size: None,
            copy: Copy::Buffer,
        })
    }

    /// Zeroes the output, then accumulates into it (the steps go on to the accumulating stage).
    ///
    /// # Errors
    /// As [`Schedule::step`].
    pub fn to_accum(&mut self) -> Result<&mut Self, ScheduleError> {
        self.step(&Step::ToAccum)
    }

    /// Implements the default leaf with the kernel named `kernel`.
    ///
    /// # Errors
    /// As [`Schedule::step`].
    pub fn select(&mut self, kernel: &str) -> Result<&mut Self, ScheduleError> {
        self.step(&Step::Select { kernel: kernel.to_string() })
    }

    /// Schedules the node at `path` (child indices from this schedule's root, see the module docs)
    /// with `f`, which sees it as a schedule of its own.
    ///
    /// # Errors
    /// [`ScheduleError::Illegal`] with [`Refusal::NoSuchChild`] for a path that names no node, and
    /// what `f` returns; the schedule is then unchanged.
    pub fn subschedule(
        &mut self,
        path: &[usize],
        f: impl FnOnce(&mut Schedule<'t>) -> Result<(), ScheduleError>,
    ) -> Result<&mut Self, ScheduleError> {
        let node = self.node_at(path)?.clone();
        let mut sub = Schedule {
            target: self.target,
            search: self.search.clone(),
            root: node,
            report: self.report.clone(),
        };
        f(&mut sub)?;
        self.report = sub.report;
        let mut root = self.root.clone();
        let mut at = &mut root;
        for &index in path {
            at = at.child_mut(index).expect("the path was checked against this tree");
        }
        *at = sub.root;
        self.root = root;
        Ok(self)
    }

    /// The node at `path`.
    fn node_at(&self, path: &[usize]) -> Result<&Node, ScheduleError> {
        let mut at = &self.root;
        for (depth, &index) in path.iter().enumerate() {
            let children = at.children();
            at = children.get(index).ok_or_else(|| {
                let text = path_text(path);
                self.illegal_text(
                    format!("sub {text}"),
                    &self.root,
                    Refusal::NoSuchChild {
                        path: text.clone(),
                        depth: depth + 1,
                        index,
                        children: children.len(),
                    },
                )
            })?;
        }
        Ok(at)
    }

    /// Completes every open leaf with the best implementation within its limits from the memo
    /// table (searching what is missing); the schedule is then complete.
    ///
    /// # Errors
    /// [`ScheduleError::Synthesis`] when the search stops or nothing fits a leaf's limits.
    pub fn complete(&mut self) -> Result<&mut Self, ScheduleError> {
        let mut root = self.root.clone();
        let mut report = self.report.clone();
        self.complete_node(&mut root, &mut report)?;
        self.root = root;
        self.report = report;
        Ok(self)
    }

    fn complete_node(&self, node: &mut Node, report: &mut SearchReport) -> Result<(), ScheduleError> {
        match node {
            Node::Open { spec, limits } => {
                let synthesis = |source: SearchError| ScheduleError::Synthesis {
                    spec: spec.display(self.target).to_string(),
                    source: Box::new(source),
                };
                let filled = self.search.fill(spec).map_err(synthesis)?;
                report.specs_solved += filled.specs_solved;
                report.memo_hits += filled.memo_hits;
                report.actions += filled.actions;
                report.wall_time += filled.wall_time;
                report.estimated_memory = report.estimated_memory.max(filled.estimated_memory);
                let memo = self.search.limits_memo_table();
                let feasibility = Feasibility::new(self.target);
                let rebuild = Rebuild::new(&memo, self.target, self.search.action_config(), &feasibility);
                let (imp, _) = rebuild.best(spec, limits).map_err(synthesis)?;
                *node = Node::Solved(imp);
                Ok(())
            }
            Node::Applied { children, .. } => {
                children.iter_mut().try_for_each(|c| self.complete_node(c, report))
            }
            Node::Solved(_) => Ok(()),
        }
    }

    /// Completes every open leaf ([`Schedule::complete`]) and returns the implementation: an
    /// ordinary tree whose cost, C and run are those of any searched one.
    ///
    /// # Errors
    /// As [`Schedule::complete`], and [`ScheduleError::TooLarge`] when the whole does not fit
    /// the schedule's limits (each leaf fits what its ancestors leave, but peaks round up to
    /// the sizes a level allocates in).
    pub fn synthesize(&mut self) -> Result<Impl, ScheduleError> {
        self.complete()?;
        let imp = self.partial_impl();
        let limits = self.root_limits();
        if !imp.peaks.fits(&limits) {
            return Err(ScheduleError::TooLarge {
                spec: imp.spec.display(self.target).to_string(),
                peaks: imp.peaks.display(self.target).to_string(),
                limits: limits.display(self.target).to_string(),
            });
        }
        Ok(imp)
    }

    /// The limits of the schedule's root: the search's.
    fn root_limits(&self) -> MemVec {
        match &self.root {
            Node::Open { limits, .. } => *limits,
            Node::Applied { .. } | Node::Solved(_) => self.search.effective_limits(),
        }
    }

    /// The open leaf the steps go to (see the module docs).
    fn default_leaf<'n>(&self, root: &'n Node, step: &Step) -> Result<&'n CanonicalSpec, ScheduleError> {
        let path = self.step_path(root, step)?;
        let mut at = root;
        for index in path {
            at = &at.children()[index];
        }
        Ok(at.spec())
    }

    /// The path to the default leaf of `root` (see the module docs), or why there is none and the
    /// spec it is about.
    fn default_path<'n>(&self, root: &'n Node) -> Result<Vec<usize>, (&'n CanonicalSpec, Refusal)> {
        let mut path = Vec::new();
        let mut at = root;
        loop {
            match at {
                Node::Open { .. } => return Ok(path),
                Node::Solved(_) => return Err((root.spec(), Refusal::NoOpenLeaf)),
                Node::Applied { action, plan, children, spec } => match default_child(action, plan) {
                    Ok(Some(index)) => {
                        path.push(index);
                        at = &children[index];
                    }
                    Ok(None) => return Err((root.spec(), Refusal::NoOpenLeaf)),
                    Err(children) => {
                        let node = step_of(spec, action, self.target)
                            .map_or_else(|_| format!("{action:?}"), |s| s.to_string());
                        return Err((spec, Refusal::AmbiguousLeaf { node, children }));
                    }
                },
            }
        }
    }

    /// [`Schedule::default_path`], its refusal as `step`'s.
    fn step_path(&self, root: &Node, step: &Step) -> Result<Vec<usize>, ScheduleError> {
        self.default_path(root).map_err(|(spec, why)| self.illegal(step, spec, why))
    }

    /// Applies to the default leaf of `root` the action `choose` picks among its spec's actions.
    fn apply_at_default(
        &self,
        root: &mut Node,
        step: &Step,
        choose: impl FnOnce(&Self, &CanonicalSpec, &[(Action, Plan)]) -> Result<usize, Refusal>,
    ) -> Result<(), ScheduleError> {
        let path = self.step_path(root, step)?;
        let mut leaf = &mut *root;
        for index in path {
            leaf = leaf.child_mut(index).expect("the default path is in the tree");
        }
        let Node::Open { spec, limits } = &*leaf else { unreachable!("a default path ends at an open leaf") };
        let feasibility = Feasibility::new(self.target);
        let all = actions(spec, self.target, &self.hand_config(), &feasibility);
        let index = choose(self, spec, &all).map_err(|why| self.illegal(step, spec, why))?;
        let (action, plan) = all.into_iter().nth(index).expect("choose picks an action of the list");
        let own = plan.combine.linear(plan.children.len(), self.target).own;
        let child_limits = limits.checked_sub(&own).ok_or_else(|| {
            let level = self
                .target
                .level_ids()
                .find(|&l| own.get(l) > limits.get(l))
                .expect("a subtraction that fails exceeds some level");
            self.illegal(
                step,
                spec,
                Refusal::DoesNotFit {
                    level: self.target.level(level).name.clone(),
                    needs: own.get(level),
                    available: limits.get(level),
                },
            )
        })?;
        let children =
            plan.children.iter().map(|c| Node::Open { spec: c.clone(), limits: child_limits }).collect();
        *leaf = Node::Applied { spec: spec.clone(), action, plan, children };
        Ok(())
    }

    fn illegal(&self, step: &Step, spec: &CanonicalSpec, why: Refusal) -> ScheduleError {
        ScheduleError::Illegal {
            step: step.to_string(),
            spec: spec.display(self.target).to_string(),
            why: Box::new(why),
        }
    }

    fn illegal_text(&self, step: String, node: &Node, why: Refusal) -> ScheduleError {
        ScheduleError::Illegal {
            step,
            spec: node.spec().display(self.target).to_string(),
            why: Box::new(why),
        }
    }

    /// The level named `name`.
    fn level(&self, name: &str) -> Result<LevelId, Refusal> {
        self.target.level_id(name).ok_or_else(|| Refusal::NoSuchLevel {
            level: name.to_string(),
            levels: self.target.level_names().join(", "),
        })
    }

    /// The search's actions of `spec` without pruning, for telling "infeasible" from "absent".
    fn unpruned(&self, spec: &CanonicalSpec) -> Vec<(Action, Plan)> {
        let config = ActionConfig { prune_infeasible: false, ..self.hand_config() };
        actions(spec, self.target, &config, &Feasibility::new(self.target))
    }

    /// `Refusal::Infeasible` when an action `wanted` accepts exists but was pruned.
    fn pruned(&self, spec: &CanonicalSpec, wanted: impl Fn(&Action) -> bool) -> Option<Refusal> {
        let feasibility = Feasibility::new(self.target);
        self.unpruned(spec).into_iter().find(|(a, _)| wanted(a)).map(|(_, plan)| {
            let child = plan.children.iter().find(|c| !feasibility.spec(c)).unwrap_or(spec);
            Refusal::Infeasible { child: child.display(self.target).to_string() }
        })
    }
}

/// Whether a level is a cache (where `move_to` takes a view and `pack` a copy).
fn is_cache(target: &Target, level: LevelId) -> bool {
    target.level(level).kind == LevelKind::Cache
}

fn path_text(path: &[usize]) -> String {
    path.iter().map(usize::to_string).collect::<Vec<_>>().join(".")
}
