//! An implementation as a schedule file: [`schedule_text`], and the step of one action
//! ([`step_of`]).
//!
//! A node's step is the one whose action, among its spec's hand actions, builds the same node
//! (as `decisions_of` finds it). The file lists the default path's steps, then a `sub PATH { ... }`
//! block for every other child, with paths from the node the block is in:
//!
//! ```text
//! print(node) = step(n0) .. step(nk)          n0 = node, n(i+1) = default child of n(i)
//!               sub p(c) { print(c) }         for every other child c of each n(i)
//! ```
//!
//! Read back by `Schedule::apply_text`, it rebuilds the same tree, node for node, so its cost is
//! the same.

use morello_core::imp::{AllocKind, Impl};
use morello_core::spec::CanonicalSpec;
use morello_core::target::Target;

use super::resolve::layout_text;
use super::step::{Copy, Step};
use super::{ScheduleError, default_child, is_cache, path_text};
use crate::actions::{Action, ActionConfig, DividingTiles, Plan, Remainders, actions};
use crate::feasible::Feasibility;

/// The step that takes `action` on `spec` (the inverse of applying a step).
///
/// # Errors
/// [`ScheduleError::NotAnAction`] for a parallel tile of a dim that is not an output dim (no step
/// names it).
pub fn step_of(spec: &CanonicalSpec, action: &Action, target: &Target) -> Result<Step, ScheduleError> {
    let rank = spec.shape.rank();
    let output_dims: Vec<usize> =
        spec.kind.operand_dims(rank)[spec.output_index()].iter().map(|d| d.first).collect();
    let output_shape =
        |sizes: &dyn Fn(usize) -> u32| -> Vec<u32> { output_dims.iter().map(|&d| sizes(d)).collect() };
    let level_name = |level| target.level(level).name.clone();
    Ok(match action {
        Action::Tile { dim, size } => {
            if output_dims.contains(dim) {
                Step::TileOut { shape: output_shape(&|d| if d == *dim { *size } else { spec.shape.dim(d) }) }
            } else if spec.kind.reduction_dims() == [*dim] {
                Step::Split { size: *size }
            } else {
                Step::Tile { dim: spec.kind.dim_names(rank).swap_remove(*dim), size: *size }
            }
        }
        Action::ParallelTile { sizes } => {
            let changed = (0..rank).filter(|&d| sizes[d] != spec.shape.dim(d));
            if changed.clone().any(|d| !output_dims.contains(&d)) {
                return Err(ScheduleError::NotAnAction {
                    node: format!("parallel tile {sizes:?}"),
                    spec: spec.display(target).to_string(),
                });
            }
            Step::Parallel { shape: output_shape(&|d| sizes[d]) }
        }
        Action::Move { operand, destination, kind } => Step::MoveTo {
            operand: spec.kind.operand_names()[*operand].to_string(),
            level: level_name(destination.level),
            layout: layout_text(destination),
            vector_size: destination.vector_size,
            copy: if *kind == AllocKind::Buffer && is_cache(target, destination.level) {
                Copy::Buffer
            } else {
                Copy::ViewOrBuffer
            },
        },
        Action::ToAccum => Step::ToAccum,
        Action::PeelReduction { size } => Step::Peel { size: *size },
        Action::PaddingRegions => Step::PaddingRegions,
        Action::AsMatmul => Step::AsMatmul,
        Action::SplitEpilogue => Step::SplitEpilogue,
        Action::SoftmaxParts { level } => Step::SoftmaxParts { level: level_name(*level) },
        Action::Pad { level, columns } => Step::Pad { level: level_name(*level), columns: *columns },
        Action::Kernel(kernel) => Step::Select { kernel: kernel.name().to_string() },
        Action::RequantParts { level, vector_size } => {
            Step::RequantParts { level: level_name(*level), vector_size: *vector_size }
        }
        Action::ShiftS8 { level } => Step::ShiftS8 { level: level_name(*level) },
    })
}

/// `imp` as a schedule file (see the module docs), its actions found among the hand actions of
/// `config` (a search's configuration). A leaf that is not yet implemented ends its path.
///
/// # Errors
/// [`ScheduleError::NotAnAction`] for a node that no action of its spec builds.
pub fn schedule_text(imp: &Impl, target: &Target, config: &ActionConfig) -> Result<String, ScheduleError> {
    let config =
        ActionConfig { remainders: Remainders::EveryTile, dividing_tiles: DividingTiles::Every, ..*config };
    let feasibility = Feasibility::new(target);
    let mut out = String::new();
    Printer { target, config: &config, feasibility: &feasibility }.print(imp, 0, &mut out)?;
    Ok(out)
}

struct Printer<'a> {
    target: &'a Target,
    config: &'a ActionConfig,
    feasibility: &'a Feasibility<'a>,
}

impl Printer<'_> {
    fn print(&self, imp: &Impl, indent: usize, out: &mut String) -> Result<(), ScheduleError> {
        let pad = "  ".repeat(indent);
        // The default path: (path from `imp`, node, its other children).
        let mut others: Vec<(Vec<usize>, &Impl)> = Vec::new();
        let mut path = Vec::new();
        let mut at = imp;
        while !matches!(at.node, morello_core::imp::Node::SpecApp { .. }) {
            let (action, plan) = self.action_of(at)?;
            out.push_str(&format!("{pad}{}\n", step_of(&at.spec, &action, self.target)?));
            let children = at.children();
            let default = default_child(&action, &plan).unwrap_or(None);
            for (i, child) in children.iter().enumerate() {
                if Some(i) != default {
                    let mut p = path.clone();
                    p.push(i);
                    others.push((p, child));
                }
            }
            match default {
                Some(i) => {
                    path.push(i);
                    at = children[i];
                }
                None => break,
            }
        }
        for (path, child) in others {
            if matches!(child.node, morello_core::imp::Node::SpecApp { .. }) {
                continue;
            }
            out.push_str(&format!("{pad}sub {} {{\n", path_text(&path)));
            self.print(child, indent + 1, out)?;
            out.push_str(&format!("{pad}}}\n"));
        }
        Ok(())
    }

    /// The action (among the hand actions) that builds `imp`'s node.
    fn action_of(&self, imp: &Impl) -> Result<(Action, Plan), ScheduleError> {
        let children = imp.children();
        actions(&imp.spec, self.target, self.config, self.feasibility)
            .into_iter()
            .find(|(_, plan)| {
                plan.children.len() == children.len()
                    && plan.children.iter().zip(&children).all(|(spec, child)| *spec == child.spec)
                    && plan.build(
                        imp.spec.clone(),
                        children.iter().map(|c| (*c).clone()).collect(),
                        self.target,
                    ) == *imp
            })
            .ok_or_else(|| ScheduleError::NotAnAction {
                node: imp.describe(self.target),
                spec: imp.spec.display(self.target).to_string(),
            })
    }
}
