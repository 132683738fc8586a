//! Rewrites: the ways a spec can be implemented one step at a time.
//!
//! [`actions`] lists, for a canonical spec, every action that applies, in a fixed order that
//! depends only on the logical spec (never on memory limits): stored decisions are indices into
//! this list. Each action's [`Plan`] names the sub-specs it needs and how their costs and peaks
//! combine; [`Plan::build`] turns solved sub-implementations into an [`Impl`] node. Order:
//!
//! 1. moves of each operand (to each faster level, layout and vector size);
//! 2. serial tilings of one iteration dim (reduction dims only when accumulating; power-of-two
//!    tiles that leave a remainder only as splits, see [`Remainders`]; of those that divide the
//!    dim, only the largest where no operand is in vector registers, see [`DividingTiles`]);
//! 3. parallel tilings (when the spec is not serial-only);
//! 4. zero-then-accumulate (non-accumulating matmul and convolution), and a matmul's first
//!    reduction chunk peeled off as a matmul before accumulating the rest;
//! 5. convolutions: a padded one split into unpadded regions (its only action, unless its i8
//!    filters can be copied into the int8 kernels' strips: then that copy, among the moves, is),
//!    a one-row 1x1 one computed as a matmul;
//! 6. a matmul's epilogue split into a pass of its own (fused when the output is in registers);
//! 7. softmax as its three passes (row maxima, exp and sums, scale), per level of its temporaries;
//! 8. a matmul (or a requantizing matmul, with its per-column operands) whose columns are not
//!    whole vectors padded to whole vectors, per level of the padded buffers; a requantizing
//!    matmul as its matmul and its requantization, per level (and vector size) of its i32
//!    accumulator; an s8s8s32 matmul as its `lhs` shifted into u8, a column-sum correction and a
//!    u8s8s32 matmul, per level of the shifted `lhs`;
//! 9. kernels, in the target's order.
//!
//! Every action strictly shrinks the spec (a smaller iteration space, an operand on a faster
//! level, or an accumulating kind), so the sub-spec graph is acyclic. Padding alone grows the
//! iteration space, but it moves two operands to a faster level, and no matmul below it has them
//! slower again.

mod conv;
mod epilogue;
mod moves;
mod pad;
mod parallel_tile;
mod peel;
mod requant;
mod shift;
mod softmax;
mod tile;
mod to_accum;

use std::fmt;

use morello_core::cost::register_block::{SharedLoads, block_stalls, loop_stalls, shared_loads, step_stall};
use morello_core::cost::{Cost, alloc_cost, memory_units};
use morello_core::imp::{AllocKind, AllocParts, Boundary, Impl, Parallelism, Stage};
use morello_core::kernels::KernelKind;
use morello_core::spec::{CanonicalSpec, TensorSpec};
use morello_core::target::{LevelKind, MemVec, Target};
use serde::{Deserialize, Serialize};

use crate::feasible::Feasibility;

pub use moves::{candidate_layouts, panel_layouts};
pub(crate) use tile::fits as tile_fits;

/// Which tile sizes the tiling actions try.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum TileSizes {
    /// Powers of two below the dim's size and, for serial tiles, the target's
    /// [`register_block_heights`] on dims that no operand stores innermost, where the tile's output
    /// fits in the vector registers (the default).
    #[default]
    RegisterBlocks,
    /// Powers of two below the dim's size (a smaller, faster search).
    PowersOfTwo,
    /// Every size from 1 to the dim's size minus 1.
    All,
    /// Powers of four below the dim's size: a small space whose search is quick for any shape,
    /// which a search stopped by its time limit solves to return an implementation anyway (see
    /// [`crate::Search::time_limit`]).
    Coarse,
}

impl TileSizes {
    /// The tile sizes to try for a dim of size `n` without regard to the spec, ascending: powers of
    /// two, or every size (register-block heights depend on the spec: see [`TileSizes::RegisterBlocks`]).
    pub fn for_dim(self, n: u32) -> Vec<u32> {
        match self {
            TileSizes::RegisterBlocks | TileSizes::PowersOfTwo => {
                (0..32).map(|p| 1u32 << p).take_while(|&t| t < n).collect()
            }
            TileSizes::All => (1..n).collect(),
            TileSizes::Coarse => (0..16).map(|p| 1u32 << (2 * p)).take_while(|&t| t < n).collect(),
        }
    }
}

/// Register-block heights that powers of two miss, for the target's vector register files.
///
/// A register block of `r` rows and `w` vectors keeps `r * w` accumulators, one row of `w`
/// vectors of the other operand and one broadcast register live, so the tallest block of width
/// `w` in a file of `R` registers has `r = (R - w - 1) / w` rows. For each power-of-two width from
/// two vectors up (a one-vector-wide block issues a broadcast per multiply-add, so loads bound it
/// whatever its height) this keeps `r` when it is at least 3 and not a power of two (those are
/// tried anyway): 14 and 6 for 32 registers, 6 for 16. Ascending, without repeats.
pub fn register_block_heights(target: &Target) -> Vec<u32> {
    let mut heights: Vec<u32> = target
        .levels()
        .iter()
        .filter(|level| level.kind == LevelKind::VectorRegisters)
        .flat_map(|level| {
            let registers = u32::try_from(level.capacity).unwrap_or(u32::MAX);
            (1..32)
                .map(|p| 1u32 << p)
                .take_while(move |&width| width.saturating_mul(4).saturating_add(1) <= registers)
                .filter_map(move |width| block_rows(registers.into(), width.into()))
        })
        .collect();
    heights.sort_unstable();
    heights.dedup();
    heights
}

/// The rows of the tallest register block `width` vectors wide in a file of `registers`:
/// `(registers - width - 1) / width` (the accumulators, one row of the other operand and a
/// broadcast register), when that is at least 3 and not a power of two (powers of two are tried
/// anyway).
pub(super) fn block_rows(registers: u64, width: u64) -> Option<u32> {
    let rows = registers.checked_sub(width + 1)?.checked_div(width)?;
    let rows = u32::try_from(rows).ok()?;
    (rows >= 3 && !rows.is_power_of_two()).then_some(rows)
}

/// Which serial tiles that leave a remainder are tried.
///
/// A serial loop costs the sum of its iterations, so tiling a dim of `n` by a power of two `t` that
/// does not divide it (`q` full tiles and a remainder `r`) is, cost for cost and peak for peak, a
/// sequence of *splits*: the largest power of two `p < n` (one full tile, divisible by `t`) and the
/// rest `n - p`, split again until what is left is below `t`. The full tiles of every split are
/// tiles of `t`, and the last rest is the same remainder `r` at the same place:
///
/// ```text
/// 100 by 16 = 6 x 16 + 4        split: 100 = 64 + 36, 64 = 4 x 16, 36 = 32 + 4, 32 = 2 x 16
/// ```
///
/// So [`Remainders::Split`] keeps, of the power-of-two tiles that leave a remainder, only the split
/// (plus every tile that divides the dim, and register-block heights as before), and finds the same
/// frontier with far fewer products of a body's and a boundary's frontiers (tested against
/// [`Remainders::EveryTile`]). Parallel loops are not sums (their boundaries are not divided among
/// threads), so they keep every tile size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Remainders {
    /// Power-of-two serial tiles that leave a remainder only as splits (the default).
    #[default]
    Split,
    /// Every serial tile size, whatever its remainder (the larger space, for tests).
    EveryTile,
}

impl Remainders {
    /// Whether a serial tile of `size` along a dim of `n` is tried.
    pub fn allows(self, n: u32, size: u32) -> bool {
        match self {
            Remainders::EveryTile => true,
            Remainders::Split => !size.is_power_of_two() || n % size == 0 || size > n / 2,
        }
    }
}

/// Which serial tiles that divide their dim by a power of two are tried.
///
/// A serial loop over tiles that divide their dim costs its body's cost times its iterations, and
/// holds nothing of its own, so a loop over tiles of `t` is, cost for cost and peak for peak, a
/// loop over tiles of any `T` that `t` divides, each running a loop over its tiles of `t`:
///
/// ```text
/// n / t * cost(tile t)  =  n / T * (T / t * cost(tile t))        t divides T, T divides n
/// ```
///
/// The tiles of `T` are specs the search explores anyway (they are the bodies of the loop over
/// `T`), so with [`DividingTiles::Largest`] a dim is tiled directly only by the largest power of
/// two that divides it, and by every other size only through its tiles: the same frontiers (in
/// cost and peaks; a tree may be deeper where a direct loop tied), with far fewer actions per spec
/// (tested against [`DividingTiles::Every`]). Where an operand is in vector registers a loop may
/// also share loads among its bodies or wait on an accumulation chain of a register block
/// (`morello_core::kernels::shared_loads`, `loop_stalls`), which do not add up that way, so such
/// specs keep every size; so do parallel loops (their cost is not a sum of their bodies').
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum DividingTiles {
    /// Of the powers of two that divide a dim, only the largest, where no operand is in vector
    /// registers (the default).
    #[default]
    Largest,
    /// Every power of two that divides a dim (the larger space, for tests).
    Every,
}

/// Options that shape the action set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ActionConfig {
    /// Tile sizes tried by tiling actions.
    pub tile_sizes: TileSizes,
    /// Which serial tiles that leave a remainder are tried.
    pub remainders: Remainders,
    /// Which serial tiles that divide their dim by a power of two are tried.
    #[serde(default)]
    pub dividing_tiles: DividingTiles,
    /// Leave out actions with a sub-spec that [`Feasibility`] proves has no implementation (sound:
    /// it never changes an answer; tests turn it off to check exactly that).
    pub prune_infeasible: bool,
}

/// The configuration in words (`powers-of-two and register-block tiles`), as table errors print it.
impl fmt::Display for ActionConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.tile_sizes {
            TileSizes::RegisterBlocks => "powers-of-two and register-block tiles",
            TileSizes::PowersOfTwo => "powers-of-two tiles",
            TileSizes::All => "all tile sizes",
            TileSizes::Coarse => "powers-of-four tiles",
        })?;
        if self.remainders == Remainders::EveryTile {
            f.write_str(", every remainder")?;
        }
        if self.dividing_tiles == DividingTiles::Every {
            f.write_str(", every dividing tile")?;
        }
        if self.prune_infeasible { Ok(()) } else { f.write_str(", no pruning") }
    }
}

impl Default for ActionConfig {
    fn default() -> Self {
        ActionConfig {
            tile_sizes: TileSizes::default(),
            remainders: Remainders::default(),
            dividing_tiles: DividingTiles::default(),
            prune_infeasible: true,
        }
    }
}

/// One rewrite of a spec.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Action {
    /// Move an operand to a faster level: a new buffer (with a layout and, in vector registers, a
    /// vector size) or a cache view of the same buffer.
    Move {
        /// Which operand.
        operand: usize,
        /// The operand as the body sees it.
        destination: TensorSpec,
        /// New buffer or cache view.
        kind: AllocKind,
    },
    /// A serial loop over tiles of one iteration dim.
    Tile {
        /// The iteration dim.
        dim: usize,
        /// The tile size.
        size: u32,
    },
    /// A parallel loop over tiles of up to two iteration dims.
    ParallelTile {
        /// Tile sizes of every iteration dim.
        sizes: Vec<u32>,
    },
    /// Zero the output, then accumulate into it.
    ToAccum,
    /// Compute a matmul's first `size` of the reduction as a matmul, then accumulate the rest.
    PeelReduction {
        /// The peeled chunk of the reduction dim.
        size: u32,
    },
    /// Split a padded convolution into unpadded regions.
    PaddingRegions,
    /// Compute a one-row convolution with a 1x1 window as a matmul.
    AsMatmul,
    /// Split a matmul's epilogue into a pass of its own (on the output where it is).
    SplitEpilogue,
    /// Softmax as its three passes, the row maxima and sums allocated at `level`.
    SoftmaxParts {
        /// Where the temporaries live.
        level: morello_core::target::LevelId,
    },
    /// Pad a matmul's columns to whole vectors in buffers allocated at `level`.
    Pad {
        /// Where the padded `rhs` and output live.
        level: morello_core::target::LevelId,
        /// The padded column count.
        columns: u32,
    },
    /// Select a kernel.
    Kernel(KernelKind),
    /// A requantizing matmul as its matmul into an i32 accumulator allocated at `level` (with
    /// `vector_size` lanes in vector registers), then the requantization of the accumulator.
    RequantParts {
        /// Where the accumulator lives.
        level: morello_core::target::LevelId,
        /// Its lanes, in vector registers.
        vector_size: Option<u32>,
    },
    /// An s8s8s32 matmul as its `lhs` shifted into u8 (a buffer at `level`), the column-sum
    /// correction into the output, and the u8s8s32 matmul accumulated into it.
    ShiftS8 {
        /// Where the shifted `lhs` lives.
        level: morello_core::target::LevelId,
    },
}

/// How an action's sub-results combine into its cost and peaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Combine {
    /// A kernel leaf.
    Leaf {
        /// The kernel's cost.
        cost: Cost,
        /// Its temporary registers.
        peaks: MemVec,
    },
    /// A loop: child 0 is the full tile, run `iterations` times; the others run once.
    Loop {
        /// Full tiles.
        iterations: u64,
        /// Serial or parallel.
        parallelism: Parallelism,
        /// What register-block steps among the bodies add ([`loop_stalls`]); set by [`actions`].
        stalls: Cost,
        /// What the bodies share ([`shared_loads`]); set by [`actions`].
        shared: SharedLoads,
    },
    /// A move: the children run one after another inside the allocation.
    Alloc {
        /// The new tensor's units at its level.
        own: MemVec,
        /// The cost of touching the source and the destination.
        cost: Cost,
    },
    /// Stages run one after another.
    Block {
        /// What register blocks among the stages stall ([`block_stalls`]); set by [`actions`].
        stalls: Cost,
    },
}

/// A combination in linear form: `cost = base + Σ weight_i * cost_i - credit`,
/// `peaks = own + max_i(peaks_i)`. Every [`Combine`] has one. The credit is what the children's
/// costs count more than once and the node runs once (a loop's shared loads); it never
/// exceeds what they count, so the cost still grows with each child's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Linear {
    /// The constant part of the cost.
    pub base: Cost,
    /// Each child's multiplier.
    pub weights: Vec<u64>,
    /// Memory the node itself holds while its children run.
    pub own: MemVec,
    /// What the sum counts that the node does not pay.
    pub credit: Cost,
}

impl Linear {
    /// The node's cost when its weighted children cost `children` in all.
    pub fn cost(&self, children: Cost) -> Cost {
        self.base.saturating_add(children).saturating_sub(self.credit)
    }
}

impl Combine {
    /// The linear form for `children` children.
    pub fn linear(&self, children: usize, target: &Target) -> Linear {
        match self {
            Combine::Leaf { cost, peaks } => {
                Linear { base: *cost, weights: Vec::new(), own: *peaks, credit: 0 }
            }
            Combine::Loop { iterations, parallelism: Parallelism::Serial, stalls, shared } => {
                let mut weights = vec![1; children];
                if let Some(w) = weights.first_mut() {
                    *w = *iterations;
                }
                Linear { base: *stalls, weights, own: shared.held, credit: shared.credit }
            }
            Combine::Loop { iterations, parallelism: Parallelism::Parallel, stalls, shared } => {
                let per_thread = iterations.div_ceil(u64::from(target.processors()));
                let costs = target.costs();
                let mut weights = vec![1; children];
                if let Some(w) = weights.first_mut() {
                    *w = per_thread;
                }
                let base = costs
                    .parallel_setup
                    .saturating_add(costs.parallel_per_iteration.saturating_mul(per_thread))
                    .saturating_add(*stalls);
                Linear { base, weights, own: shared.held, credit: shared.credit }
            }
            Combine::Alloc { own, cost } => {
                Linear { base: *cost, weights: vec![1; children], own: *own, credit: 0 }
            }
            Combine::Block { stalls } => {
                Linear { base: *stalls, weights: vec![1; children], own: MemVec::ZERO, credit: 0 }
            }
        }
    }
}

/// What an action needs: its sub-specs, in order, and how their results combine.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The sub-specs.
    pub children: Vec<CanonicalSpec>,
    /// How their costs and peaks combine.
    pub combine: Combine,
    /// What the children are, to build the [`Impl`] node.
    pub shape: PlanShape,
}

/// The structure of a plan's node, for building its [`Impl`].
#[derive(Debug, Clone)]
pub enum PlanShape {
    /// A kernel leaf.
    Kernel(KernelKind),
    /// A loop; child 0 is the body, then one child per boundary origin.
    Loop {
        /// The full tile.
        tile: Vec<u32>,
        /// Serial or parallel.
        parallelism: Parallelism,
        /// Origins of the boundary regions.
        boundary_origins: Vec<Vec<u32>>,
    },
    /// A move; children are the prologue (if any), the body, then the epilogue (if any).
    Alloc {
        /// Which operand.
        operand: usize,
        /// Buffer or cache view.
        kind: AllocKind,
        /// The moved operand.
        destination: TensorSpec,
        /// Whether there is a prologue.
        prologue: bool,
        /// Whether there is an epilogue.
        epilogue: bool,
    },
    /// A block; one child per stage, each over these parent operands.
    Block {
        /// The parent operands of each stage.
        stage_operands: Vec<Vec<usize>>,
        /// Where each stage's operands start in the parent's (`None`: whole operands).
        stage_origins: Vec<Option<Vec<Vec<u32>>>>,
        /// Tensors the block allocates (stage operand `operands + j` is temporary `j`).
        temporaries: Vec<TensorSpec>,
    },
    /// A convolution computed as a matmul; the one child is the matmul.
    AsMatmul,
}

impl Plan {
    /// Builds the action's node from implementations of its children (in plan order).
    pub fn build(&self, spec: CanonicalSpec, mut children: Vec<Impl>, target: &Target) -> Impl {
        match &self.shape {
            PlanShape::Kernel(k) => Impl::kernel(spec, *k, target),
            PlanShape::Loop { tile, parallelism, boundary_origins } => {
                let rest = children.split_off(1);
                let body = children.pop().expect("a loop plan has a body");
                let boundaries = boundary_origins
                    .iter()
                    .cloned()
                    .zip(rest)
                    .map(|(origin, body)| Boundary { origin, body })
                    .collect();
                Impl::looped(spec, tile.clone(), *parallelism, body, boundaries, target)
            }
            PlanShape::Alloc { operand, kind, destination, prologue, epilogue } => {
                let mut it = children.into_iter();
                let pro = if *prologue { it.next() } else { None };
                let body = it.next().expect("an alloc plan has a body");
                let epi = if *epilogue { it.next() } else { None };
                let parts = AllocParts {
                    operand: *operand,
                    kind: *kind,
                    destination: destination.clone(),
                    prologue: pro,
                    body,
                    epilogue: epi,
                };
                Impl::alloc(spec, parts, target)
            }
            PlanShape::Block { stage_operands, stage_origins, temporaries } => {
                let stages = stage_operands
                    .iter()
                    .cloned()
                    .zip(stage_origins.iter().cloned())
                    .zip(children)
                    .map(|((operands, origins), body)| Stage { operands, origins, body })
                    .collect();
                if temporaries.is_empty() {
                    Impl::block(spec, stages, target)
                } else {
                    Impl::block_with(spec, temporaries.clone(), stages, target)
                }
            }
            PlanShape::AsMatmul => {
                let body = children.pop().expect("an as-matmul plan has one child");
                Impl::as_matmul(spec, body)
            }
        }
    }
}

/// Every action that applies to `spec`, each with its plan, in the fixed order. Actions with a
/// sub-spec that [`Feasibility`] proves has no implementation are left out.
pub fn actions(
    spec: &CanonicalSpec,
    target: &Target,
    config: &ActionConfig,
    feasibility: &Feasibility<'_>,
) -> Vec<(Action, Plan)> {
    // Room for most specs' actions (a dozen or so), so that pushing them rarely moves them.
    let mut out = Vec::with_capacity(24);
    if spec.kind.conv_geometry().is_some_and(|g| g.is_padded()) {
        // A padded convolution is only ever split into regions (its tiles would not be uniform).
        // Where its i8 filters can be copied into the int8 kernels' strips, that copy is its only
        // action (the regions follow it): every tap's kernel reads strips, so without it each
        // tap is copied at least once anyway, and more often for every block of output rows, and
        // exploring both would solve every region twice.
        moves::enumerate(spec, target, &mut out);
        if out.is_empty() {
            conv::enumerate(spec, target, &mut out);
        }
    } else {
        moves::enumerate(spec, target, &mut out);
        tile::enumerate(spec, target, config, &mut out);
        parallel_tile::enumerate(spec, target, config, &mut out);
        to_accum::enumerate(spec, target, &mut out);
        peel::enumerate(spec, target, &mut out);
        conv::enumerate(spec, target, &mut out);
        epilogue::enumerate(spec, target, &mut out);
        softmax::enumerate(spec, target, &mut out);
        pad::enumerate(spec, target, &mut out);
        requant::enumerate(spec, target, &mut out);
        shift::enumerate(spec, target, &mut out);
        kernels(spec, target, &mut out);
    }
    if config.prune_infeasible {
        out.retain(|(_, plan)| plan.children.iter().all(|c| feasibility.spec(c)));
    }
    for (_, plan) in &mut out {
        add_step_stalls(spec, plan, target);
    }
    out
}

/// Adds to a loop, a move or a block what the register-block steps among its children cost beyond
/// their kernels ([`step_stall`], [`block_stalls`], `docs/cost-model.md`, "Register blocks"), as
/// `Impl::looped`, `Impl::alloc`, `Impl::block` and `Impl::block_with` do.
fn add_step_stalls(spec: &CanonicalSpec, plan: &mut Plan, target: &Target) {
    match (&mut plan.combine, &plan.shape) {
        (Combine::Loop { iterations, parallelism, stalls, shared }, _) => {
            if let Some((body, boundaries)) = plan.children.split_first() {
                let parallel = *parallelism == Parallelism::Parallel;
                *stalls =
                    loop_stalls(spec, body, boundaries.iter().map(|b| &**b), *iterations, parallel, target);
                *shared = shared_loads(spec, body, boundaries.len(), *iterations, parallel, target);
            }
        }
        (Combine::Alloc { cost, .. }, PlanShape::Alloc { prologue, .. }) => {
            if let Some(body) = plan.children.get(usize::from(*prologue)) {
                *cost = cost.saturating_add(step_stall(spec, body, target));
            }
        }
        // A block with temporaries combines as an allocation (`Impl::block_with`).
        (Combine::Alloc { cost, .. }, PlanShape::Block { .. }) => {
            *cost = cost.saturating_add(block_stalls(spec, plan.children.iter().map(|c| &**c), target));
        }
        // (`AsMatmul` also combines as a block, but `Impl::as_matmul` adds nothing to its one child.)
        (Combine::Block { stalls }, PlanShape::Block { .. }) => {
            *stalls = block_stalls(spec, plan.children.iter().map(|c| &**c), target);
        }
        _ => {}
    }
}

fn kernels(spec: &CanonicalSpec, target: &Target, out: &mut Vec<(Action, Plan)>) {
    for &kernel in target.kernels() {
        if kernel.applies(spec, target) {
            let combine =
                Combine::Leaf { cost: kernel.cost(spec, target), peaks: kernel.memory(spec, target) };
            out.push((
                Action::Kernel(kernel),
                Plan { children: Vec::new(), combine, shape: PlanShape::Kernel(kernel) },
            ));
        }
    }
}

/// The combination for moving `source` into `destination`.
fn alloc_combine(
    source: &TensorSpec,
    destination: &TensorSpec,
    round_trip: bool,
    target: &Target,
) -> Combine {
    Combine::Alloc {
        own: MemVec::single(destination.level, memory_units(destination, target)),
        cost: alloc_cost(source, destination, round_trip, target),
    }
}
