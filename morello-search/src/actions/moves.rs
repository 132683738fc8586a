//! Move an operand to a faster level.
//!
//! For operand `i` at level `L` and each level `D` that `L` moves to:
//!
//! ```text
//! D a cache:            a cache view (same buffer, layout and contiguity; nothing copied), and,
//!                       if D allocates, a new buffer in every candidate layout other than the
//!                       operand's own (or in its own, when the operand is not one contiguous run)
//! D memory:             if D allocates, a new buffer in every candidate layout
//! D vector registers:   registers in row- or column-major order, for every vector size of D
//!                       that divides the volume
//! D scalar registers:   registers (no layout)
//! ```
//!
//! A new buffer is copied in by a `Move` prologue when the operand is read and copied back by a
//! `Move` epilogue when it is written. Inside a `Move`, an operand only moves into a new buffer at
//! a level faster than the other operand's, so that those copies are smaller than the move itself
//! (otherwise `Move(a -> b)` could need itself). Destinations that cannot fit `D`'s capacity are skipped:
//! no implementation under them could fit the target.

use morello_core::cost::memory_units;
use morello_core::dtype::Dtype;
use morello_core::imp::AllocKind;
use morello_core::layout::{Layout, LayoutDim, LayoutView};
use morello_core::shape::Shape;
use morello_core::spec::{CanonicalSpec, PrimitiveKind, TensorSpec};
use morello_core::target::{LevelId, LevelKind, Target};

use super::{Action, Plan, PlanShape, alloc_combine};

/// The layouts a move may choose for a tensor of `shape` and `dtype`, canonical and distinct:
/// row-major, column-major, and each of those with one logical dim packed by a vector's lanes.
pub fn candidate_layouts(shape: &Shape, dtype: Dtype, target: &Target) -> Vec<Layout> {
    let rank = shape.rank() as u8;
    let mut bases = vec![Layout::row_major(rank)];
    if rank >= 2 {
        bases.push(Layout::col_major(rank));
    }
    let mut lanes: Vec<u32> = target
        .levels()
        .iter()
        .flat_map(|l| l.vector_bytes.iter().map(|w| w / dtype.size_bytes()))
        .filter(|&p| p >= 2)
        .collect();
    lanes.sort_unstable();
    lanes.dedup();
    let mut raw: Vec<Layout> = bases.clone();
    for base in &bases {
        let innermost = base.dims().last().map(|d| d.logical);
        for d in 0..rank {
            if Some(d) == innermost {
                continue;
            }
            for &p in &lanes {
                let size = shape.dim(usize::from(d));
                if p < size && size % p == 0 {
                    let mut dims = base.dims().to_vec();
                    dims.push(LayoutDim::packed(d, p));
                    if let Ok(layout) = Layout::new(dims) {
                        raw.push(layout);
                    }
                }
            }
        }
    }
    let mut out: Vec<Layout> = Vec::new();
    for layout in raw {
        if let Ok(view) = LayoutView::dense(&layout, shape) {
            if !out.contains(&view.layout) {
                out.push(view.layout);
            }
        }
    }
    out
}

pub(super) fn enumerate(spec: &CanonicalSpec, target: &Target, out: &mut Vec<(Action, Plan)>) {
    let directions = spec.kind.directions();
    for (i, source) in spec.operands.iter().enumerate() {
        let moves_to = &target.level(source.level).moves_to;
        if moves_to.is_empty() {
            continue;
        }
        let layouts = candidate_layouts(&source.shape, source.dtype, target);
        for &level_id in moves_to {
            for (destination, kind) in destinations(source, level_id, &layouts, target) {
                if !shrinks(spec, i, level_id, kind)
                    || !super::conv::moves(spec, i, target.level(level_id).kind, kind)
                {
                    continue;
                }
                if let Some(plan) = plan(spec, i, source, &destination, kind, directions[i], target) {
                    out.push((Action::Move { operand: i, destination, kind }, plan));
                }
            }
        }
    }
}

/// Whether the move's copy-in and copy-out are smaller than `spec`, so the sub-spec graph stays
/// acyclic. Only moves of a `Move`'s operands into new buffers need the check: the copy of
/// `Move(a -> b)`'s source into a buffer at level `d` is `Move(a -> d)`, smaller only when `d` is
/// faster than `b` (and symmetrically for the destination).
fn shrinks(spec: &CanonicalSpec, operand: usize, level: LevelId, kind: AllocKind) -> bool {
    if spec.kind != PrimitiveKind::Move || kind == AllocKind::CacheView {
        return true;
    }
    let other = &spec.operands[1 - operand];
    level > other.level
}

/// Every destination of `source` at `level_id`, with whether it is a buffer or a cache view.
fn destinations(
    source: &TensorSpec,
    level_id: LevelId,
    layouts: &[Layout],
    target: &Target,
) -> Vec<(TensorSpec, AllocKind)> {
    let level = target.level(level_id);
    let dense = |layout: Layout, vector_size: Option<u32>| TensorSpec {
        shape: source.shape.clone(),
        dtype: source.dtype,
        level: level_id,
        contiguous_dims: layout.len() as u8,
        layout,
        vector_size,
    };
    let mut out = Vec::new();
    match level.kind {
        LevelKind::Cache => {
            out.push((TensorSpec { level: level_id, ..source.clone() }, AllocKind::CacheView));
            if !level.allocates {
                out.retain(|(d, _)| memory_units(d, target) <= level.capacity);
                return out;
            }
            for layout in layouts {
                if *layout != source.layout || !source.is_fully_contiguous() {
                    out.push((dense(layout.clone(), None), AllocKind::Buffer));
                }
            }
        }
        LevelKind::Memory if level.allocates => {
            out.extend(layouts.iter().map(|l| (dense(l.clone(), None), AllocKind::Buffer)));
        }
        LevelKind::Memory => {}
        LevelKind::VectorRegisters => {
            // Kernels read registers as whole vectors along one dim: row- or column-major only.
            let rank = source.shape.rank() as u8;
            let mut orders: Vec<Layout> = Vec::new();
            for order in [Layout::row_major(rank), Layout::col_major(rank)] {
                if let Ok(view) = LayoutView::dense(&order, &source.shape) {
                    if !orders.contains(&view.layout) {
                        orders.push(view.layout);
                    }
                }
            }
            for &width in &level.vector_bytes {
                let lanes = width / source.dtype.size_bytes();
                if width % source.dtype.size_bytes() != 0
                    || lanes < 2
                    || source.shape.volume() % u64::from(lanes) != 0
                {
                    continue;
                }
                out.extend(orders.iter().map(|l| (dense(l.clone(), Some(lanes)), AllocKind::Buffer)));
            }
        }
        LevelKind::ScalarRegisters => {
            out.push((dense(Layout::row_major(source.shape.rank() as u8), None), AllocKind::Buffer));
        }
    }
    out.retain(|(d, _)| memory_units(d, target) <= level.capacity);
    out
}

fn plan(
    spec: &CanonicalSpec,
    operand: usize,
    source: &TensorSpec,
    destination: &TensorSpec,
    kind: AllocKind,
    direction: morello_core::spec::Direction,
    target: &Target,
) -> Option<Plan> {
    let body = spec.with_operand(operand, destination.clone(), target).ok()?;
    // The body sees the canonical form of the destination.
    let destination = body.operands[operand].clone();
    let buffer = kind == AllocKind::Buffer;
    let prologue = buffer && direction.reads();
    let epilogue = buffer && direction.writes();
    let mut children = Vec::with_capacity(3);
    if prologue {
        children.push(CanonicalSpec::move_between(source, &destination, spec.serial_only, target).ok()?);
    }
    children.push(body);
    if epilogue {
        children.push(CanonicalSpec::move_between(&destination, source, spec.serial_only, target).ok()?);
    }
    Some(Plan {
        children,
        combine: alloc_combine(source, &destination, target),
        shape: PlanShape::Alloc { operand, kind, destination, prologue, epilogue },
    })
}
