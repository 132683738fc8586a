//! Implementation trees: how a spec is computed, as loops, moves, blocks and kernels.
//!
//! Every node records the spec it implements, its cost and its peak memory per level; the
//! constructors compute both from the children with the formulas of [`crate::cost`]:
//!
//! ```text
//! Loop     tiles the iteration space: `body` computes one full tile (run for every tile that
//!          fits), each boundary body one remainder region at a fixed origin.
//!          peaks = max(children)                cost = loop_cost(...)
//! Alloc    moves one operand to another level (and layout): `prologue` copies it in (inputs),
//!          `body` computes the spec on the moved operand, `epilogue` copies it back (outputs).
//!          A cache view (same layout, a cache level) has neither and allocates no buffer.
//!          peaks = units(new tensor) + max(children)   cost = alloc_cost + Σ children
//! Block    runs stages one after another, each on some of the spec's operands (or on boxes of
//!          them at given origins: the regions of a padded convolution).
//!          peaks = max(stages)                  cost = Σ stages
//! AsMatmul a convolution with a one-row output and a 1x1 window computed as the matmul it is,
//!          on the same buffers (`spec::matmul_axes`).
//!          peaks, cost: the body's
//! Kernel   a leaf the code generator emits.     peaks, cost: the kernel's own
//! SpecApp  a leaf still to be solved.            peaks = 0, cost = 0
//! ```
//!
//! Trees serialise (`morello search --emit json`) but do not deserialise: only the constructors,
//! which compute cost and peaks for a target, make an `Impl`, so no tree claims a cost its nodes
//! do not have. (A reader of trees would rebuild them through the constructors.)

mod render;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::cost::register_block::{block_stalls, loop_stalls, shared_loads, step_stall};
use crate::cost::{Cost, alloc_cost, loop_cost, memory_units, snap_peaks};
use crate::kernels::KernelKind;
use crate::spec::{CanonicalSpec, TensorSpec};
use crate::target::{MemVec, Target};

/// What a block's temporaries hold while its stages run: each one's units at its level (what
/// [`Impl::block_with`] adds to its stages' peaks, and a search's plan for the block must too).
pub fn temporaries_memory(temporaries: &[TensorSpec], target: &Target) -> MemVec {
    temporaries
        .iter()
        .fold(MemVec::ZERO, |acc, t| acc.saturating_add(&MemVec::single(t.level, memory_units(t, target))))
}

/// A block's cost: its stages', plus what register blocks among them stall ([`block_stalls`]).
fn stages_cost(spec: &CanonicalSpec, stages: &[Stage], target: &Target) -> Cost {
    let sum = stages.iter().fold(0, |acc: Cost, s| acc.saturating_add(s.body.cost));
    sum.saturating_add(block_stalls(spec, stages.iter().map(|s| &*s.body.spec), target))
}

/// Whether a loop's iterations may run on several threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Parallelism {
    /// One iteration after another on one thread.
    Serial,
    /// Iterations split across the target's processors.
    Parallel,
}

/// How a moved operand is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AllocKind {
    /// A new buffer (or registers) with its own layout; copied in and/or out.
    Buffer,
    /// The same buffer, now assumed resident in a cache: nothing is copied.
    CacheView,
}

/// A remainder region of a loop: its own body at a fixed origin of the iteration space.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Boundary {
    /// Where the region starts, per iteration dim.
    pub origin: Vec<u32>,
    /// The region's implementation; its spec's shape is the region's size.
    pub body: Impl,
}

impl Boundary {
    /// The remainder regions of a loop with `tile` over `full` (same rank, `tile[d] <= full[d]`), as
    /// `(size, origin)`: in each dim that `tile` does not divide, a region either spans the full
    /// tiles or is the remainder past them, and every combination but all-spans (the loop's own
    /// tiles) is a region. Together with the tiles they cover `full` exactly once.
    pub fn regions(full: &[u32], tile: &[u32]) -> Vec<(Vec<u32>, Vec<u32>)> {
        let remainder_dims: Vec<usize> = (0..full.len()).filter(|&d| full[d] % tile[d] != 0).collect();
        (1u32..(1 << remainder_dims.len()))
            .map(|subset| {
                let mut region = full.to_vec();
                let mut origin = vec![0; full.len()];
                for (bit, &d) in remainder_dims.iter().enumerate() {
                    let span = full[d] / tile[d] * tile[d];
                    if subset & (1 << bit) != 0 {
                        region[d] = full[d] - span;
                        origin[d] = span;
                    } else {
                        region[d] = span;
                    }
                }
                (region, origin)
            })
            .collect()
    }
}

/// A stage of a block: an implementation over some of the parent's operands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stage {
    /// For each operand of the stage's spec, the parent operand it is.
    pub operands: Vec<usize>,
    /// For each operand of the stage's spec, where it starts in that parent operand (`None`: the
    /// whole operand, at the origin).
    pub origins: Option<Vec<Vec<u32>>>,
    /// The stage's implementation.
    pub body: Impl,
}

/// The parts of a [`Node::Alloc`], for [`Impl::alloc`].
#[derive(Debug, Clone)]
pub struct AllocParts {
    /// Which operand moves.
    pub operand: usize,
    /// A new buffer or a cache view.
    pub kind: AllocKind,
    /// The operand as the body sees it.
    pub destination: TensorSpec,
    /// The copy-in, for operands that are read.
    pub prologue: Option<Impl>,
    /// The spec on the moved operand.
    pub body: Impl,
    /// The copy-out, for operands that are written.
    pub epilogue: Option<Impl>,
}

/// The kinds of node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Node {
    /// A loop over tiles of the iteration space.
    Loop {
        /// Iteration tile sizes of the full tiles.
        tile: Vec<u32>,
        /// Serial or parallel.
        parallelism: Parallelism,
        /// One full tile.
        body: Box<Impl>,
        /// Remainder regions, each run once.
        boundaries: Vec<Boundary>,
    },
    /// A move of one operand to another level and layout.
    Alloc {
        /// Which operand moves.
        operand: usize,
        /// A new buffer or a cache view.
        kind: AllocKind,
        /// The operand as the body sees it.
        destination: TensorSpec,
        /// Copies the operand in (a `Move` from the old operand to the new one).
        prologue: Option<Box<Impl>>,
        /// The spec on the moved operand.
        body: Box<Impl>,
        /// Copies the operand back (a `Move` from the new operand to the old one).
        epilogue: Option<Box<Impl>>,
    },
    /// Stages run one after another.
    Block {
        /// The stages.
        stages: Vec<Stage>,
        /// Tensors the block allocates for its stages (softmax's row maxima and sums); a stage
        /// operand index `operands.len() + j` is temporary `j`.
        temporaries: Vec<TensorSpec>,
    },
    /// A convolution computed as the matmul it is, on the same buffers.
    AsMatmul {
        /// The matmul.
        body: Box<Impl>,
    },
    /// A kernel.
    Kernel(KernelKind),
    /// A spec not yet implemented, with the memory limits it must fit.
    SpecApp {
        /// Its memory limits.
        limits: MemVec,
    },
}

/// An implementation of a spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Impl {
    /// The spec this node implements.
    pub spec: CanonicalSpec,
    /// Its cost (children included).
    pub cost: Cost,
    /// Its peak memory per level (children included).
    pub peaks: MemVec,
    /// What kind of node it is.
    pub node: Node,
}

impl Impl {
    /// A kernel leaf.
    pub fn kernel(spec: CanonicalSpec, kernel: KernelKind, target: &Target) -> Impl {
        Impl {
            cost: kernel.cost(&spec, target),
            peaks: kernel.memory(&spec, target),
            spec,
            node: Node::Kernel(kernel),
        }
    }

    /// An unsolved leaf.
    pub fn spec_app(spec: CanonicalSpec, limits: MemVec) -> Impl {
        Impl { spec, cost: 0, peaks: MemVec::ZERO, node: Node::SpecApp { limits } }
    }

    /// A loop: as many full tiles of `body` as fit, plus the boundary bodies.
    pub fn looped(
        spec: CanonicalSpec,
        tile: Vec<u32>,
        parallelism: Parallelism,
        body: Impl,
        boundaries: Vec<Boundary>,
        target: &Target,
    ) -> Impl {
        let iterations: u64 = spec.shape.dims().iter().zip(&tile).map(|(&n, &t)| u64::from(n / t)).product();
        let boundary_cost = boundaries.iter().fold(0, |acc: Cost, b| acc.saturating_add(b.body.cost));
        let peaks = boundaries.iter().fold(body.peaks, |acc, b| acc.elementwise_max(&b.body.peaks));
        let parallel = parallelism == Parallelism::Parallel;
        let stalls = loop_stalls(
            &spec,
            &body.spec,
            boundaries.iter().map(|b| &*b.body.spec),
            iterations,
            parallel,
            target,
        );
        let shared = shared_loads(&spec, &body.spec, boundaries.len(), iterations, parallel, target);
        let cost = loop_cost(body.cost, iterations, boundary_cost, parallel, target)
            .saturating_add(stalls)
            .saturating_sub(shared.credit);
        let peaks = if shared.held == MemVec::ZERO {
            peaks
        } else {
            snap_peaks(shared.held.saturating_add(&peaks), target)
        };
        Impl { spec, cost, peaks, node: Node::Loop { tile, parallelism, body: Box::new(body), boundaries } }
    }

    /// A move of one operand, with its copy-in and copy-out.
    pub fn alloc(spec: CanonicalSpec, parts: AllocParts, target: &Target) -> Impl {
        let AllocParts { operand, kind, destination, prologue, body, epilogue } = parts;
        let own = MemVec::single(destination.level, memory_units(&destination, target));
        let children = [prologue.as_ref(), Some(&body), epilogue.as_ref()];
        let child_peaks =
            children.iter().flatten().fold(MemVec::ZERO, |acc, c| acc.elementwise_max(&c.peaks));
        let child_cost = children.iter().flatten().fold(0, |acc: Cost, c| acc.saturating_add(c.cost));
        let direction = spec.kind.directions()[operand];
        let round_trip = direction.reads() && direction.writes();
        let cost = alloc_cost(&spec.operands[operand], &destination, round_trip, target)
            .saturating_add(step_stall(&spec, &body.spec, target))
            .saturating_add(child_cost);
        Impl {
            spec,
            cost,
            peaks: snap_peaks(own.saturating_add(&child_peaks), target),
            node: Node::Alloc {
                operand,
                kind,
                destination,
                prologue: prologue.map(Box::new),
                body: Box::new(body),
                epilogue: epilogue.map(Box::new),
            },
        }
    }

    /// Stages run one after another, plus what register blocks among them stall ([`block_stalls`]).
    pub fn block(spec: CanonicalSpec, stages: Vec<Stage>, target: &Target) -> Impl {
        let cost = stages_cost(&spec, &stages, target);
        let peaks = stages.iter().fold(MemVec::ZERO, |acc, s| acc.elementwise_max(&s.body.peaks));
        Impl { spec, cost, peaks, node: Node::Block { stages, temporaries: Vec::new() } }
    }

    /// Stages run one after another on the spec's operands and `temporaries`, which the block
    /// allocates (their units add to the stages' peaks, as an allocation's do).
    pub fn block_with(
        spec: CanonicalSpec,
        temporaries: Vec<TensorSpec>,
        stages: Vec<Stage>,
        target: &Target,
    ) -> Impl {
        let cost = stages_cost(&spec, &stages, target);
        let child = stages.iter().fold(MemVec::ZERO, |acc, s| acc.elementwise_max(&s.body.peaks));
        let peaks = snap_peaks(temporaries_memory(&temporaries, target).saturating_add(&child), target);
        Impl { spec, cost, peaks, node: Node::Block { stages, temporaries } }
    }

    /// A convolution computed as a matmul (`body` implements `spec.as_matmul()`).
    pub fn as_matmul(spec: CanonicalSpec, body: Impl) -> Impl {
        Impl { spec, cost: body.cost, peaks: body.peaks, node: Node::AsMatmul { body: Box::new(body) } }
    }

    /// The direct children, in execution order.
    pub fn children(&self) -> Vec<&Impl> {
        match &self.node {
            Node::Loop { body, boundaries, .. } => {
                std::iter::once(body.as_ref()).chain(boundaries.iter().map(|b| &b.body)).collect()
            }
            Node::Alloc { prologue, body, epilogue, .. } => {
                [prologue.as_deref(), Some(body.as_ref()), epilogue.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect()
            }
            Node::Block { stages, .. } => stages.iter().map(|s| &s.body).collect(),
            Node::AsMatmul { body } => vec![body.as_ref()],
            Node::Kernel(_) | Node::SpecApp { .. } => Vec::new(),
        }
    }

    /// Depth of the tree (a leaf has depth 1).
    pub fn depth(&self) -> u32 {
        1 + self.children().iter().map(|c| c.depth()).max().unwrap_or(0)
    }

    /// Whether no leaf is a [`Node::SpecApp`].
    pub fn is_complete(&self) -> bool {
        !matches!(self.node, Node::SpecApp { .. }) && self.children().iter().all(|c| c.is_complete())
    }

    /// Calls `f` on every node, parents before children.
    pub fn visit(&self, f: &mut impl FnMut(&Impl)) {
        f(self);
        for child in self.children() {
            child.visit(f);
        }
    }

    /// Every kernel used, in order of first use.
    pub fn kernels(&self) -> Vec<KernelKind> {
        let mut out = Vec::new();
        self.visit(&mut |node| {
            if let Node::Kernel(k) = node.node {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
        });
        out
    }

    /// Whether any loop in the tree is parallel.
    pub fn has_parallel_loop(&self) -> bool {
        let mut found = false;
        self.visit(&mut |node| {
            if let Node::Loop { parallelism: Parallelism::Parallel, .. } = node.node {
                found = true;
            }
        });
        found
    }
}
