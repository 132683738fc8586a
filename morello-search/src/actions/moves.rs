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
//! Packing: a matmul's `rhs` (`[b, k, n]`, rows along `n`) at a level that moves to a cache that
//! `packs` may also be copied into a new buffer there in a *panel* layout `[b, n / w, k, w]`
//! ([`panel_layouts`]): `w` is the width of a register block (whole vectors of the target's widest
//! vector registers), so each `k x w` panel that a microkernel streams is one contiguous run, free
//! of the set conflicts and the strided refills of a long pitch. Only these layouts, and only
//! where a cache view of the operand there cannot stay resident because its lines crowd a few
//! sets although it fits by size (`morello_core::cost::memory_units`), or where register blocks
//! would read the view as a strided stream with rows more than half a page apart
//! (`morello_core::cost::rows_on_their_own_pages`) from a level that refills those more slowly
//! (`MemoryLevel::fill_cost`), so the space stays small.
//!
//! A matmul's i8 `rhs` (accumulating or not: a convolution's filter taps reach the kernels as
//! accumulating matmuls) may also be packed at such a level into strips of
//! `k` inside `n` ([`vnni_layouts`]): the VNNI layout `[b, k / 4, n, 4]` that `BroadcastQuadDot`,
//! `BroadcastQuadDotAvx` and AArch64's `BroadcastSdot` and `BroadcastSdotU8` read, or pairs
//! `[b, k / 2, n, 2]` for `BroadcastPairDot` (an i8 `lhs` is offered the quads too where the
//! target's u8 x i8 kernels read them, for its shift into u8, `super::shift`), and on a target
//! with `BroadcastQuadDot` the *strip panel* `[b, n / 64, k / 4, 64, 4]`, the quads of one 6 x 4
//! block's 64 columns one run over the whole `k`; weights already in it are read in place. Panels and strips are offered
//! through one helper ([`offer_packed`]).
//!
//! A new buffer is copied in by a `Move` prologue when the operand is read and copied back by a
//! `Move` epilogue when it is written. Inside a `Move`, an operand only moves into a new buffer at
//! a level faster than the other operand's, so that those copies are smaller than the move itself
//! (otherwise `Move(a -> b)` could need itself). Destinations that cannot fit `D`'s capacity are skipped:
//! no implementation under them could fit the target.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use morello_core::cost::{memory_units, rows_on_their_own_pages};
use morello_core::dtype::Dtype;
use morello_core::imp::AllocKind;
use morello_core::kernels::{KernelKind, QUAD, QUAD_LANES};
use morello_core::layout::{Layout, LayoutDim, LayoutView};
use morello_core::shape::Shape;
use morello_core::spec::{CanonicalSpec, PrimitiveKind, TensorSpec};
use morello_core::target::{LevelId, LevelKind, Target};

use rustc_hash::FxBuildHasher;
use smallvec::SmallVec;

use super::{Action, Plan, PlanShape, alloc_combine};

/// The layouts a move may choose for a tensor of `shape` and `dtype`, canonical and distinct:
/// row-major, column-major, and each of those with one logical dim packed by a vector's lanes.
pub fn candidate_layouts(shape: &Shape, dtype: Dtype, target: &Target) -> Vec<Layout> {
    layouts_with_lanes(shape, &vector_lanes(dtype, target))
}

/// The lanes of `dtype` in each of the target's vector widths (at least 2), ascending, distinct.
fn vector_lanes(dtype: Dtype, target: &Target) -> SmallVec<[u32; 4]> {
    let mut lanes: SmallVec<[u32; 4]> = target
        .levels()
        .iter()
        .flat_map(|l| l.vector_bytes.iter().map(|w| w / dtype.size_bytes()))
        .filter(|&p| p >= 2)
        .collect();
    lanes.sort_unstable();
    lanes.dedup();
    lanes
}

/// Bound on the entries of the per-thread memo of [`cached_layouts`].
const LAYOUT_MEMO_ENTRIES: usize = 1 << 14;

type LayoutKey = (Shape, Dtype, SmallVec<[u32; 4]>);

thread_local! {
    static LAYOUTS: RefCell<HashMap<LayoutKey, Rc<[Layout]>, FxBuildHasher>> =
        RefCell::new(HashMap::default());
}

/// [`candidate_layouts`], memoised per thread: a search asks for the layouts of the same few
/// tile shapes again and again (they depend only on the shape, the dtype and its lanes).
fn cached_layouts(shape: &Shape, dtype: Dtype, target: &Target) -> Rc<[Layout]> {
    let key = (shape.clone(), dtype, vector_lanes(dtype, target));
    LAYOUTS.with(|memo| {
        if let Some(known) = memo.borrow().get(&key) {
            return Rc::clone(known);
        }
        let layouts: Rc<[Layout]> = layouts_with_lanes(shape, &key.2).into();
        let mut memo = memo.borrow_mut();
        if memo.len() >= LAYOUT_MEMO_ENTRIES {
            memo.clear();
        }
        memo.insert(key, Rc::clone(&layouts));
        layouts
    })
}

/// [`candidate_layouts`] for vectors of `lanes` elements.
fn layouts_with_lanes(shape: &Shape, lanes: &[u32]) -> Vec<Layout> {
    let rank = shape.rank() as u8;
    let mut bases = vec![Layout::row_major(rank)];
    if rank >= 2 {
        bases.push(Layout::col_major(rank));
    }
    let mut raw: Vec<Layout> = bases.clone();
    for base in &bases {
        let innermost = base.dims().last().map(|d| d.logical);
        for d in 0..rank {
            if Some(d) == innermost {
                continue;
            }
            for &p in lanes {
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
        if moves_to.is_empty() || !spec.kind.moves_operand(i) {
            continue;
        }
        let layouts = cached_layouts(&source.shape, source.dtype, target);
        let panels = panel_layouts(spec, i, target);
        let strips = vnni_layouts(spec, i, target);
        for &level_id in moves_to {
            let mut all = destinations(source, level_id, &layouts, target);
            let level = target.level(level_id);
            // Pack only where a cache view cannot stay resident because its lines crowd a few sets
            // (it would fit by size), or where register blocks would read the view as a strided
            // stream with rows more than half a page apart from a level that refills strided
            // streams more slowly: packing is the escape from both, and offering it anywhere else
            // more than doubles the space for nothing the model can see.
            let view = TensorSpec { level: level_id, ..source.clone() };
            let view_conflicts = source.pitch.is_some()
                && memory_units(&view, target) > level.capacity
                && view.cache_lines(target.cache_line_bytes()) * u64::from(target.cache_line_bytes())
                    <= level.capacity;
            // A strided column is offered its copy on the matmul before any split of `k` (not on
            // the accumulating slices a split makes), in the narrowest panels (which every wider
            // block reads, two or more side by side): each column is offered one copy, so the
            // space stays small (docs/search.md, "Packing").
            let strided_view = spec.kind == (PrimitiveKind::Matmul { accum: false })
                && rows_on_their_own_pages(source, target)
                && level.fill_cost(true) > level.fill_cost(false);
            if level.packs && (view_conflicts || strided_view) {
                let offered = if view_conflicts { panels.len() } else { 1 };
                for layout in panels.iter().take(offered) {
                    offer_packed(&mut all, source, level_id, layout, target);
                }
            }
            if level.packs {
                for layout in &strips {
                    offer_packed(&mut all, source, level_id, layout, target);
                }
            }
            for (destination, kind) in all {
                let strip = strips.contains(&destination.layout);
                if !shrinks(spec, i, level_id, kind)
                    || !super::conv::moves(spec, i, target.level(level_id).kind, kind, strip)
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

/// The panel layouts a microkernel consumes that operand `operand` of `spec` may be packed into:
/// for a matmul's `rhs` `[b, k, n]` stored with rows along `n` (outside registers, of a dtype the
/// broadcast multiply-add kernel takes), `[b, n / w, k, w]` for each register-block width `w`
/// that divides `n` and is smaller than it (`n = w` is row-major already). Register-block widths
/// are `v` whole vectors of the widest vector registers, for `v >= 2` vectors (a one-vector-wide
/// block is bound by its broadcasts) such that a block at least 3 rows tall fits the registers
/// (`(registers - v - 1) / v >= 3`, as for [`super::register_block_heights`]): 16 for AVX2 f32,
/// 32 and 64 for AVX-512.
pub fn panel_layouts(spec: &CanonicalSpec, operand: usize, target: &Target) -> Vec<Layout> {
    if !matches!(spec.kind, PrimitiveKind::Matmul { .. }) || operand != 1 {
        return Vec::new();
    }
    let rhs = &spec.operands[1];
    let dims = rhs.shape.dims();
    let (k, n) = (dims[1], dims[2]);
    let rows_along_n = rhs.layout.dims().last().is_some_and(|d| d.logical == 2);
    if !matches!(rhs.dtype, Dtype::F32 | Dtype::U32 | Dtype::I32)
        || target.level(rhs.level).kind.counts_registers()
        || !rows_along_n
        || k < 2
    {
        return Vec::new();
    }
    let mut widths: Vec<u32> = Vec::new();
    for level in target.levels().iter().filter(|l| l.kind == LevelKind::VectorRegisters) {
        let Some(&widest) = level.vector_bytes.iter().max() else { continue };
        let lanes = widest / rhs.dtype.size_bytes();
        let registers = u32::try_from(level.capacity).unwrap_or(u32::MAX);
        for v in (1..8).map(|p| 1u32 << p) {
            if registers > v && (registers - v - 1) / v >= 3 {
                widths.push(lanes * v);
            }
        }
    }
    widths.sort_unstable();
    widths.dedup();
    widths
        .into_iter()
        .filter(|&w| w < n && n % w == 0)
        .filter_map(|w| {
            let layout = Layout::new(vec![
                LayoutDim::dynamic(0),
                LayoutDim::dynamic(2),
                LayoutDim::dynamic(1),
                LayoutDim::packed(2, w),
            ])
            .ok()?;
            LayoutView::dense(&layout, &rhs.shape).ok().map(|v| v.layout)
        })
        .collect()
}

/// Adds to `all` a new buffer of `source` at `level_id` in the packed `layout` (dense, no vector
/// size or pitch), unless it is there already or cannot fit the level.
fn offer_packed(
    all: &mut Vec<(TensorSpec, AllocKind)>,
    source: &TensorSpec,
    level_id: LevelId,
    layout: &Layout,
    target: &Target,
) {
    let packed = TensorSpec {
        shape: source.shape.clone(),
        dtype: source.dtype,
        level: level_id,
        contiguous_dims: layout.len() as u8,
        layout: layout.clone(),
        vector_size: None,
        pitch: None,
    };
    if memory_units(&packed, target) <= target.level(level_id).capacity
        && !all.iter().any(|(d, _)| *d == packed)
    {
        all.push((packed, AllocKind::Buffer));
    }
}

/// The int8 register-block steps that read `rhs` in strips of `k` inside `n`: the kernel, the
/// `lhs` dtypes it takes and its strip, the widest first (the first the target offers for an
/// `lhs` dtype is the one whose layout the search packs into).
const STRIP_KERNELS: [(KernelKind, &[Dtype], u32); 5] = [
    (KernelKind::BroadcastQuadDot, &[Dtype::U8], 4),
    (KernelKind::BroadcastQuadDotAvx, &[Dtype::U8], 4),
    (KernelKind::BroadcastSdot, &[Dtype::I8], 4),
    (KernelKind::BroadcastSdotU8, &[Dtype::U8], 4),
    (KernelKind::BroadcastPairDot, &[Dtype::U8, Dtype::I8], 2),
];

/// The strip of `k` the int8 kernels `target` offers read for an `lhs` of `dtype`, if any.
fn int8_strip(lhs: Dtype, target: &Target) -> Option<u32> {
    STRIP_KERNELS
        .iter()
        .find(|(kernel, dtypes, _)| dtypes.contains(&lhs) && target.kernels().contains(kernel))
        .map(|&(_, _, strip)| strip)
}

/// The strips an `rhs` beside an `lhs` of `dtype` may be packed into: [`int8_strip`] of the
/// dtype and, for an i8 `lhs` on a target whose u8 x i8 kernels read quads, also the quads those
/// read after the search shifts the `lhs` into u8 (`super::shift`).
fn int8_strips(lhs: Dtype, target: &Target) -> Vec<u32> {
    let mut strips: Vec<u32> = int8_strip(lhs, target).into_iter().collect();
    let shifted = [KernelKind::BroadcastQuadDot, KernelKind::BroadcastQuadDotAvx];
    if lhs == Dtype::I8 && shifted.iter().any(|k| target.kernels().contains(k)) && !strips.contains(&4) {
        strips.push(4);
    }
    strips
}

/// The layout of strips of `k` operand `operand` of `spec` may be packed into: for a matmul's
/// i8 `rhs` `[b, k, n]` not yet in it, on the matmul (or the requantizing matmul, so that one
/// copy serves every block its epilogue is fused into), accumulating or not (a convolution
/// reaches the microkernels only as accumulating matmuls, one per filter tap: `AsMatmul`),
/// `[b, k / s, n, s]` for the strip `s` of the int8 kernel the target offers for the `lhs` dtype
/// ([`STRIP_KERNELS`]): `s = 4` (the VNNI layout, `morello_core::spec::VNNI_LAYOUT`) for
/// `BroadcastQuadDot` (u8 `lhs`, AVX-512 VNNI), `BroadcastQuadDotAvx` (u8 `lhs`, AVX-VNNI) and
/// AArch64's `BroadcastSdot` and `BroadcastSdotU8`, `s = 2` for the widening AVX2 kernel
/// `BroadcastPairDot`; `k` a multiple of `s` above it. An i8 `lhs` on a target with
/// `BroadcastQuadDot` or `BroadcastQuadDotAvx` is offered the quads too, after its pairs: those
/// kernels read it once the search shifts the `lhs` into u8 (`super::shift`). None on a target
/// without such a kernel.
///
/// A convolution's i8 filters `[f, c, fh, fw]` are offered the same strips for every tap at once
/// ([`filter_strip_layout`]), on the convolution before it is cut into rows or cached
/// ([`filters_pack_here`]), so that one copy serves every tap's matmul, which then reads its
/// slice in place.
pub fn vnni_layouts(spec: &CanonicalSpec, operand: usize, target: &Target) -> Vec<Layout> {
    let rhs = &spec.operands[operand];
    let k = rhs.shape.dims().get(1).copied().unwrap_or(0);
    let matmul = matches!(spec.kind, PrimitiveKind::Matmul { .. } | PrimitiveKind::MatmulRequant { .. });
    let conv = matches!(spec.kind, PrimitiveKind::Conv { .. });
    if !(matmul || conv) || operand != 1 || rhs.dtype != Dtype::I8 {
        return Vec::new();
    }
    if conv && !filters_pack_here(spec, target) {
        return Vec::new();
    }
    let n = rhs.shape.dims().get(2).copied().unwrap_or(0);
    let dense = |layout: Option<Layout>| match layout.and_then(|l| LayoutView::dense(&l, &rhs.shape).ok()) {
        Some(view) if view.layout != rhs.layout => Some(view.layout),
        _ => None,
    };
    let mut out: Vec<Layout> = Vec::new();
    let mut push = |layout: Option<Layout>| {
        if let Some(layout) = layout.filter(|l| !out.contains(l)) {
            out.push(layout);
        }
    };
    for strip in int8_strips(spec.operands[0].dtype, target) {
        if k <= strip || k % strip != 0 {
            continue;
        }
        // A convolution's filters take the strips of every tap at once.
        if conv {
            push(dense(Some(filter_strip_layout(strip))));
            continue;
        }
        // The strip panel first: where the model prices both alike (rows at most half a page
        // apart), the earlier action wins the tie (`crate::frontier`).
        let panel = strip_panel_width(strip, target).filter(|&w| w < n && n % w == 0).and_then(|width| {
            dense(
                Layout::new(vec![
                    LayoutDim::dynamic(0),
                    LayoutDim::dynamic(2),
                    LayoutDim::dynamic(1),
                    LayoutDim::packed(2, width),
                    LayoutDim::packed(1, strip),
                ])
                .ok(),
            )
        });
        let strips = dense(
            Layout::new(vec![
                LayoutDim::dynamic(0),
                LayoutDim::dynamic(1),
                LayoutDim::dynamic(2),
                LayoutDim::packed(1, strip),
            ])
            .ok(),
        );
        push(panel);
        push(strips);
    }
    out
}

/// The columns of a strip panel: the widest register block of `BroadcastQuadDot` (four output
/// vectors of 16 i32, 64 columns) for the quads on a target with that kernel, none otherwise.
///
/// In the strip layout `[k / s, n, s]` the `s` rows of `k` of one block's columns are a run of
/// `s w` bytes, and consecutive runs are `s n` bytes apart (2 KiB at `n = 512`): each step of a
/// block starts a new stream a page or half a page away. The strip panel `[n / w, k / s, w, s]`
/// keeps a block's columns one run over the whole `k`, as the f32 panels do.
fn strip_panel_width(strip: u32, target: &Target) -> Option<u32> {
    (strip == QUAD && target.kernels().contains(&KernelKind::BroadcastQuadDot)).then_some(4 * QUAD_LANES)
}

/// Whether a convolution's filters are offered their strips on `spec`: before it is cut into rows
/// or cached, so that one copy serves every tap. That is a padded convolution (before its
/// regions), or an unpadded one of more than one output row and column whose operands are each one
/// run in main memory (a whole convolution, not a region of a padded one, a row, or a block of
/// columns). Offered on those parts too, the copy would solve each of them twice for nothing the
/// model can see: the parts of a convolution whose filters were copied are the same specs.
fn filters_pack_here(spec: &CanonicalSpec, target: &Target) -> bool {
    let Some(geometry) = spec.kind.conv_geometry() else { return false };
    let in_memory = |o: &TensorSpec| target.level(o.level).kind == LevelKind::Memory;
    if !in_memory(&spec.operands[1]) {
        return false;
    }
    if geometry.is_padded() {
        return true;
    }
    let [.., h, w, _, _] = *spec.shape.dims() else { return false };
    h > 1 && w > 1 && spec.operands.iter().all(|o| in_memory(o) && o.is_fully_contiguous())
}

/// A convolution's filters `[f, c, fh, fw]` in strips of `strip` input channels inside the output
/// channels, one block per tap (`[fh][fw][c / s][f][s]`: HWIO with `c` split by the strip `s`):
///
/// ```text
/// [2, 3, 1, 0, 1 p(s)]    filters[f, c, i, j] at (((i FW + j) (C / s) + c / s) F + f) s + c % s
/// ```
///
/// A tap's slice `[f, c, 1, 1]` of it is one contiguous run, and read as the matmul's `rhs`
/// `[k, n] = [c, f]` (`CanonicalSpec::as_matmul`) it is the strip layout `[k / s, n, s]` of
/// [`vnni_layouts`].
pub fn filter_strip_layout(strip: u32) -> Layout {
    Layout::new(vec![
        LayoutDim::dynamic(2),
        LayoutDim::dynamic(3),
        LayoutDim::dynamic(1),
        LayoutDim::dynamic(0),
        LayoutDim::packed(1, strip),
    ])
    .expect("every dim of a rank-4 layout once, then a packed strip of one of them")
}

/// Whether the move's copy-in and copy-out are smaller than `spec`, so the sub-spec graph stays
/// acyclic. Only moves into new buffers need the check, and only a `Move`'s operands can fail it
/// (`PrimitiveKind::moved_operand_shrinks`, the move operator's rule): the copy of
/// `Move(a -> b)`'s source into a buffer at level `d` is `Move(a -> d)`, smaller only when `d` is
/// faster than `b` (and symmetrically for the destination).
fn shrinks(spec: &CanonicalSpec, operand: usize, level: LevelId, kind: AllocKind) -> bool {
    if kind == AllocKind::CacheView {
        return true;
    }
    let levels: Vec<LevelId> = spec.operands.iter().map(|o| o.level).collect();
    spec.kind.moved_operand_shrinks(&levels, operand, level)
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
        pitch: None,
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
        combine: alloc_combine(source, &destination, direction.reads() && direction.writes(), target),
        shape: PlanShape::Alloc { operand, kind, destination, prologue, epilogue },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use morello_core::spec::SpecBuilder;

    /// The strip an i8 `rhs` is packed into: the strip of the int8 kernel the target offers for
    /// the `lhs` dtype, none without one.
    #[test]
    fn int8_rhs_is_packed_into_the_strips_the_target_kernels_read() {
        let strip_of = |target: &Target, dtypes: &str, k: u32| -> Option<String> {
            let spec = SpecBuilder::matmul(8, k, 16)
                .dtypes(dtypes.parse().expect("dtypes"))
                .build(target)
                .expect("a valid spec");
            let layouts = vnni_layouts(&spec, 1, target);
            layouts.first().map(Layout::to_string)
        };
        // The canonical forms (the batch dim of 1 dropped) of `[0, 1, 2, 1 p(s)]`.
        let quads = Some("[1, 2, 1 p(4)]".to_string());
        let pairs = Some("[1, 2, 1 p(2)]".to_string());
        let avx512 = Target::builtin("x86-avx512", 1).expect("built-in");
        let avx2 = Target::builtin("x86-avx2", 1).expect("built-in");
        let neon = Target::builtin("arm-neon", 1).expect("built-in");
        assert_eq!(strip_of(&avx512, "u8s8s32", 32), quads);
        assert_eq!(strip_of(&avx512, "s8s8s32", 32), pairs);
        // And the quads of its lhs shifted into u8 (`super::shift`), after the pairs.
        let both = vnni_layouts(
            &SpecBuilder::matmul(8, 32, 16)
                .dtypes("s8s8s32".parse().expect("dtypes"))
                .build(&avx512)
                .expect("a spec"),
            1,
            &avx512,
        );
        assert_eq!(
            both.iter().map(Layout::to_string).collect::<Vec<_>>(),
            ["[1, 2, 1 p(2)]", "[1, 2, 1 p(4)]"]
        );
        // With `BroadcastQuadDot`, an `n` of several 64-column blocks is offered the strip panel
        // `[0, 2, 1, 2 p(64), 1 p(4)]` first; AVX-VNNI's 8-lane kernel reads the strips alone.
        let layouts_of = |target: &Target, n: u32| -> Vec<String> {
            let spec = SpecBuilder::matmul(8, 32, n)
                .dtypes("u8s8s32".parse().expect("dtypes"))
                .build(target)
                .expect("a valid spec");
            vnni_layouts(&spec, 1, target).iter().map(Layout::to_string).collect()
        };
        assert_eq!(layouts_of(&avx512, 128), ["[2, 1, 2 p(64), 1 p(4)]", "[1, 2, 1 p(4)]"]);
        assert_eq!(
            layouts_of(&avx512, 64),
            ["[1, 2, 1 p(4)]"],
            "one block's columns: the strips are the panel"
        );
        assert_eq!(layouts_of(&avx512, 96), ["[1, 2, 1 p(4)]"], "n not whole blocks");
        let avx_vnni = Target::builtin("x86-avx2-vnni", 1).expect("built-in");
        assert_eq!(layouts_of(&avx_vnni, 128), ["[1, 2, 1 p(4)]"]);
        assert_eq!(strip_of(&avx2, "s8s8s32", 32), pairs);
        assert_eq!(strip_of(&avx2, "u8s8s32", 32), pairs);
        assert_eq!(strip_of(&neon, "u8s8s32", 32), quads);
        assert_eq!(strip_of(&neon, "s8s8s32", 32), quads);
        assert_eq!(strip_of(&neon, "u8s8s32", 30), None, "k not a multiple of 4");
        // An accumulating matmul (a convolution's filter tap after `AsMatmul`) is offered the same.
        let tap = SpecBuilder::matmul(8, 64, 16)
            .dtypes("u8s8s32".parse().expect("dtypes"))
            .accumulate()
            .build(&avx512)
            .expect("a valid spec");
        assert_eq!(vnni_layouts(&tap, 1, &avx512).first().map(Layout::to_string), quads);
        // A NEON target without the dot-product kernels: nothing reads strips, nothing is packed.
        let mut description = neon.description_value();
        description.isa.retain(|f| f != "dotprod");
        description.kernels.retain(|k| !matches!(k, KernelKind::BroadcastSdot | KernelKind::BroadcastSdotU8));
        let plain_neon = Target::new(description).expect("a valid target");
        assert_eq!(strip_of(&plain_neon, "u8s8s32", 32), None);
        assert_eq!(strip_of(&plain_neon, "s8s8s32", 32), None);
    }

    /// A convolution's i8 filters in main memory are offered the strips of every tap at once, on
    /// the padded convolution too (before its regions), and not on its parts.
    #[test]
    fn conv_filters_are_offered_their_strips_once() {
        use morello_core::spec::{ConvLayout, ConvOptions, Padding};
        let avx512 = Target::builtin("x86-avx512", 1).expect("built-in");
        let conv = |words: &str, padding: Padding| {
            let options = ConvOptions { layout: ConvLayout::Nhwc, padding, ..ConvOptions::default() };
            SpecBuilder::parse(words)
                .expect("a shorthand")
                .dtypes("u8s8s32".parse().expect("dtypes"))
                .conv(options)
                .build(&avx512)
                .expect("a valid spec")
        };
        let strips = |spec: &CanonicalSpec| -> Vec<String> {
            let mut out = Vec::new();
            enumerate(spec, &avx512, &mut out);
            out.iter()
                .filter_map(|(action, _)| match action {
                    Action::Move { operand: 1, destination, kind: AllocKind::Buffer } => {
                        Some(destination.layout.to_string())
                    }
                    _ => None,
                })
                .collect()
        };
        let padded = conv("conv 1x8x8x8 3x3x8x16", Padding::Same);
        assert_eq!(strips(&padded), ["[2, 3, 1, 0, 1 p(4)]"]);
        let valid = conv("conv 1x8x8x8 3x3x8x16", Padding::Explicit([0; 4]));
        assert_eq!(strips(&valid), ["[2, 3, 1, 0, 1 p(4)]"]);
        // Channels that are not whole quads, and filters already in their strips.
        assert!(strips(&conv("conv 1x8x8x6 3x3x6x16", Padding::Same)).is_empty());
        let packed = valid.with_operand(
            1,
            TensorSpec { layout: filter_strip_layout(4), contiguous_dims: 5, ..valid.operands[1].clone() },
            &avx512,
        );
        assert!(strips(&packed.expect("a valid spec")).is_empty());
        // A region of the padded convolution (a view of its output).
        let mut regions = Vec::new();
        super::super::conv::enumerate(&padded, &avx512, &mut regions);
        let (_, plan) = regions.first().expect("the regions");
        assert!(plan.children.iter().all(|region| strips(region).is_empty()));
    }
}
