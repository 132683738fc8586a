//! Which action a step names among a leaf's actions, or why none does: each step kind's search
//! of the list, and the diagnosis of a miss, from the most specific reason to the least (a bad
//! argument, a rewrite that does not apply, a sub-spec the feasibility filter rules out, a size
//! or destination the search does not try).

use morello_core::cost::memory_units;
use morello_core::imp::AllocKind;
use morello_core::kernels::KernelKind;
use morello_core::layout::{Layout, LayoutView};
use morello_core::spec::{CanonicalSpec, TensorSpec};

use super::step::Copy;
use super::{Refusal, Schedule};
use crate::actions::{Action, Plan};

impl Schedule<'_> {
    pub(super) fn tile_index(
        &self,
        spec: &CanonicalSpec,
        dim: usize,
        size: u32,
        all: &[(Action, Plan)],
    ) -> Result<usize, Refusal> {
        let extent = spec.shape.dim(dim);
        let name = spec.kind.dim_names(spec.shape.rank()).swap_remove(dim);
        if size == 0 || size > extent {
            return Err(Refusal::SizeOutOfRange { dim: name, size, extent });
        }
        if size == extent {
            return Err(Refusal::NothingToTile);
        }
        if spec.kind.reduction_dims().contains(&dim) && !spec.kind.accumulates() {
            return Err(Refusal::NotAccumulating);
        }
        let wanted = |a: &Action| *a == Action::Tile { dim, size };
        if let Some(index) = all.iter().position(|(a, _)| wanted(a)) {
            return Ok(index);
        }
        if let Some(refusal) = self.pruned(spec, wanted) {
            return Err(refusal);
        }
        if !crate::actions::tile_fits(spec, dim, size, self.target) {
            return Err(Refusal::TileDoesNotFit { dim: name, size });
        }
        let tried: Vec<String> = self
            .unpruned(spec)
            .iter()
            .filter_map(|(a, _)| match a {
                Action::Tile { dim: d, size } if *d == dim => Some(size.to_string()),
                _ => None,
            })
            .collect();
        let tried = if tried.is_empty() { "none".to_string() } else { tried.join(", ") };
        Err(Refusal::SizeNotTried { dim: name, size, tried })
    }

    pub(super) fn parallel_index(
        &self,
        spec: &CanonicalSpec,
        shape: &[u32],
        all: &[(Action, Plan)],
    ) -> Result<usize, Refusal> {
        let tiles = output_tiles(spec, shape)?;
        let mut sizes = spec.shape.dims().to_vec();
        for (dim, size) in tiles {
            sizes[dim] = size;
        }
        let wanted = |a: &Action| *a == Action::ParallelTile { sizes: sizes.clone() };
        if let Some(index) = all.iter().position(|(a, _)| wanted(a)) {
            return Ok(index);
        }
        if let Some(refusal) = self.pruned(spec, wanted) {
            return Err(refusal);
        }
        let reason = if spec.serial_only {
            "the spec is already inside a parallel loop".to_string()
        } else if self.target.processors() < 2 {
            format!("target {} has one processor", self.target.name())
        } else if let Some(o) = spec.operands.iter().find(|o| !self.target.level(o.level).parallel) {
            format!("an operand is in {}, which one thread owns", self.target.level(o.level).name)
        } else {
            "the search tries parallel tiles of powers of two or each processor's even share, on at most two \
             output dims, with at least two tiles"
                .to_string()
        };
        Err(Refusal::NotParallel { reason })
    }

    pub(super) fn move_index(
        &self,
        spec: &CanonicalSpec,
        wanted: &MoveWanted<'_>,
        all: &[(Action, Plan)],
    ) -> Result<usize, Refusal> {
        let names = spec.kind.operand_names();
        let operand = wanted
            .operand
            .parse::<usize>()
            .ok()
            .filter(|&i| i < names.len())
            .or_else(|| names.iter().position(|n| *n == wanted.operand))
            .ok_or_else(|| Refusal::NoSuchOperand {
                operand: wanted.operand.to_string(),
                operands: names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| format!("{i} {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let level = self.level(wanted.level)?;
        let source = &spec.operands[operand];
        let from = self.target.level(source.level);
        if !from.moves_to.contains(&level) {
            let reachable =
                from.moves_to.iter().map(|&l| self.target.level(l).name.as_str()).collect::<Vec<_>>();
            return Err(Refusal::UnreachableLevel {
                operand: names[operand].to_string(),
                from: from.name.clone(),
                reachable: if reachable.is_empty() { "no level".to_string() } else { reachable.join(", ") },
            });
        }
        let layout = match wanted.layout {
            None => None,
            Some(text) => Some(canonical_layout(text, source).map_err(|message| Refusal::BadLayout {
                layout: text.to_string(),
                shape: source.shape.to_string(),
                message,
            })?),
        };
        let at_level = |a: &Action| matches!(a, Action::Move { operand: o, destination, .. } if *o == operand && destination.level == level);
        let matches = |a: &Action| match a {
            Action::Move { destination, kind, .. } => {
                at_level(a)
                    && layout.as_ref().is_none_or(|l| same_layout(l, destination))
                    && wanted.vector_size.is_none_or(|v| destination.vector_size == Some(v))
                    && (wanted.copy == Copy::ViewOrBuffer || *kind == AllocKind::Buffer)
            }
            _ => false,
        };
        let view = all
            .iter()
            .position(|(a, _)| matches(a) && matches!(a, Action::Move { kind: AllocKind::CacheView, .. }));
        if let Some(index) = view.or_else(|| all.iter().position(|(a, _)| matches(a))) {
            return Ok(index);
        }
        if let Some(refusal) = self.pruned(spec, matches) {
            return Err(refusal);
        }
        let offered: Vec<String> = all
            .iter()
            .filter_map(|(a, _)| match a {
                Action::Move { destination, kind, .. } if at_level(a) => {
                    Some(destination_text(destination, *kind))
                }
                _ => None,
            })
            .collect();
        if offered.is_empty() && layout.as_ref().is_none_or(|l| same_layout(l, source)) {
            let there = TensorSpec { level, vector_size: wanted.vector_size, ..source.clone() };
            let needs = memory_units(&there, self.target);
            let capacity = self.target.level(level).capacity;
            if needs > capacity {
                return Err(Refusal::DoesNotFit {
                    level: wanted.level.to_string(),
                    needs,
                    available: capacity,
                });
            }
        }
        let offered = if offered.is_empty() { "none".to_string() } else { offered.join("; ") };
        if wanted.copy == Copy::Buffer {
            Err(Refusal::NoPacking { offered })
        } else {
            Err(Refusal::NoSuchMove { offered })
        }
    }

    pub(super) fn kernel_index(&self, name: &str, all: &[(Action, Plan)]) -> Result<usize, Refusal> {
        let kernel: KernelKind =
            name.parse().map_err(|_| Refusal::NoSuchKernel { kernel: name.to_string() })?;
        if !self.target.kernels().contains(&kernel) {
            return Err(Refusal::KernelNotOnTarget {
                kernel: name.to_string(),
                target: self.target.name().to_string(),
            });
        }
        if let Some(index) = all.iter().position(|(a, _)| *a == Action::Kernel(kernel)) {
            return Ok(index);
        }
        let applicable: Vec<&str> = all
            .iter()
            .filter_map(|(a, _)| match a {
                Action::Kernel(k) => Some(k.name()),
                _ => None,
            })
            .collect();
        let applicable = if applicable.is_empty() { "none".to_string() } else { applicable.join(", ") };
        Err(Refusal::KernelDoesNotApply { kernel: name.to_string(), applicable })
    }

    pub(super) fn rewrite_index(
        &self,
        spec: &CanonicalSpec,
        all: &[(Action, Plan)],
        wanted: impl Fn(&Action) -> bool,
    ) -> Result<usize, Refusal> {
        if let Some(index) = all.iter().position(|(a, _)| wanted(a)) {
            return Ok(index);
        }
        if let Some(refusal) = self.pruned(spec, &wanted) {
            return Err(refusal);
        }
        let mut offered: Vec<&str> = Vec::new();
        for (action, _) in all {
            let name = step_name(action);
            if !offered.contains(&name) {
                offered.push(name);
            }
        }
        Err(Refusal::NotApplicable { offered: offered.join(", ") })
    }
}

/// What a `move_to` or `pack` step asks for.
pub(super) struct MoveWanted<'a> {
    pub operand: &'a str,
    pub level: &'a str,
    pub layout: Option<&'a str>,
    pub vector_size: Option<u32>,
    pub copy: Copy,
}

/// The iteration dims and sizes that tiling `spec`'s output to `shape` changes, in output order.
pub(super) fn output_tiles(spec: &CanonicalSpec, shape: &[u32]) -> Result<Vec<(usize, u32)>, Refusal> {
    let output = spec.output();
    if shape.len() != output.shape.rank() {
        return Err(Refusal::RankMismatch { given: shape.len(), expected: output.shape.rank() });
    }
    let dims = spec.kind.operand_dims(spec.shape.rank());
    let output_dims = &dims[spec.output_index()];
    let names = spec.kind.dim_names(spec.shape.rank());
    let mut out = Vec::new();
    for (j, &size) in shape.iter().enumerate() {
        let extent = output.shape.dim(j);
        let dim = output_dims[j].first;
        if size == 0 || size > extent {
            return Err(Refusal::SizeOutOfRange { dim: names[dim].clone(), size, extent });
        }
        if size != extent {
            out.push((dim, size));
        }
    }
    if out.is_empty() {
        return Err(Refusal::NothingToTile);
    }
    Ok(out)
}

/// `text` as a layout of `operand`'s shape, in canonical form.
fn canonical_layout(text: &str, operand: &TensorSpec) -> Result<Layout, String> {
    let layout = Layout::parse_for_rank(text, operand.shape.rank()).map_err(|e| e.to_string())?;
    LayoutView::dense(&layout, &operand.shape).map(|view| view.layout).map_err(|e| e.to_string())
}

/// Whether `layout` (canonical for the operand's shape) is `destination`'s, as written or in
/// canonical form (register destinations keep the layout as the move wrote it).
fn same_layout(layout: &Layout, destination: &TensorSpec) -> bool {
    *layout == destination.layout
        || LayoutView::dense(&destination.layout, &destination.shape).is_ok_and(|v| v.layout == *layout)
}

/// `row-major`, `col-major` or the bracketed form of `destination`'s layout (`None` for none).
pub(super) fn layout_text(destination: &TensorSpec) -> Option<String> {
    if destination.layout.is_empty() {
        return None;
    }
    let rank = u8::try_from(destination.shape.rank()).ok()?;
    for (name, layout) in [("row-major", Layout::row_major(rank)), ("col-major", Layout::col_major(rank))] {
        if LayoutView::dense(&layout, &destination.shape).is_ok_and(|v| v.layout == destination.layout) {
            return Some(name.to_string());
        }
    }
    Some(destination.layout.to_string())
}

/// A destination as a refusal lists it: `row-major v8 (new buffer)`.
fn destination_text(destination: &TensorSpec, kind: AllocKind) -> String {
    let mut text = layout_text(destination).unwrap_or_else(|| "no layout".to_string());
    if let Some(v) = destination.vector_size {
        text += &format!(" v{v}");
    }
    text += match kind {
        AllocKind::CacheView => " (cache view)",
        AllocKind::Buffer => " (new buffer)",
    };
    text
}

/// The name of the step that takes `action` (for listing what applies).
fn step_name(action: &Action) -> &'static str {
    match action {
        Action::Move { kind: AllocKind::CacheView, .. } => "move_to",
        Action::Move { .. } => "move_to/pack",
        Action::Tile { .. } => "tile_out/split/tile",
        Action::ParallelTile { .. } => "parallel",
        Action::ToAccum => "to_accum",
        Action::PeelReduction { .. } => "peel",
        Action::PaddingRegions => "padding_regions",
        Action::AsMatmul => "as_matmul",
        Action::SplitEpilogue => "split_epilogue",
        Action::SoftmaxParts { .. } => "softmax_parts",
        Action::Pad { .. } => "pad",
        Action::RequantParts { .. } => "requant_parts",
        Action::ShiftS8 { .. } => "shift_s8",
        Action::Kernel(_) => "select",
    }
}
