//! Convolution rewrites: a padded convolution split into unpadded regions, and a convolution with
//! a one-row output and a 1x1 window computed as the matmul it is.
//!
//! ```text
//! Conv:p..  [b, f, c, h, w, fh, fw]  ->  Block of unpadded Conv over each region of rows and
//!                                        columns whose windows read the same taps (FillZero where
//!                                        they read only padding)   (CanonicalSpec::padding_regions)
//! Conv(Accum) [1, f, c, 1, w, 1, 1]  ->  Matmul(Accum) [1, w, c, f] on the same buffers
//!                                        (lhs rows step by the stride)   (CanonicalSpec::as_matmul)
//! ```
//!
//! The second is how a convolution reaches the matmul microkernels: tiling a convolution's
//! output rows and filter taps down to one (the taps are reductions, so after zero-then-accumulate)
//! leaves a sum of such matmuls, each searched (and memoised) like any other matmul.
//!
//! Since the matmuls do the blocking of `c` and the cache and register work, a convolution's own
//! actions are few, which keeps its search small ([`ConvTiles`]): serial tiles of `b`, `h`, `fh`
//! and `fw` by 1 only, of `f` and `w` by the usual sizes (the register block an output keeps
//! across the taps), none of `c`; parallel tiles of `h` only; moves that are cache views, or the
//! output into registers, or i8 filters in main memory copied once into the int8 kernels' strips
//! (`super::moves::filter_strip_layout`: every tap's matmul then reads its slice in place instead
//! of packing it again for every block of output rows). On a padded convolution that copy, where
//! it is offered, is its only action (its split into regions follows), so one copy serves every
//! region.

use morello_core::imp::AllocKind;
use morello_core::spec::{CanonicalSpec, PrimitiveKind};
use morello_core::target::{LevelKind, Target};

use super::{Action, Combine, Plan, PlanShape};

pub(super) fn enumerate(spec: &CanonicalSpec, target: &Target, out: &mut Vec<(Action, Plan)>) {
    if let Some(Ok(regions)) = spec.padding_regions(target) {
        let stage_operands = regions.iter().map(|r| r.operands.clone()).collect();
        let stage_origins = regions.iter().map(|r| Some(r.origins.clone())).collect();
        let plan = Plan {
            children: regions.into_iter().map(|r| r.spec).collect(),
            combine: Combine::Block { stalls: 0 },
            shape: PlanShape::Block { stage_operands, stage_origins, temporaries: Vec::new() },
        };
        out.push((Action::PaddingRegions, plan));
    }
    if let Some(Ok(matmul)) = spec.as_matmul(target) {
        let plan = Plan {
            children: vec![matmul],
            combine: Combine::Block { stalls: 0 },
            shape: PlanShape::AsMatmul,
        };
        out.push((Action::AsMatmul, plan));
    }
}

/// Which tiles of a convolution's iteration dim the tiling actions try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ConvTiles {
    /// The usual sizes (and not a convolution).
    Usual,
    /// Only tiles of extent 1.
    One,
    /// No tile.
    Never,
}

/// The serial tiles tried along `dim` of `spec`.
pub(super) fn serial_tiles(spec: &CanonicalSpec, dim: usize) -> ConvTiles {
    if !matches!(spec.kind, PrimitiveKind::Conv { .. }) {
        return ConvTiles::Usual;
    }
    match dim {
        1 | 4 => ConvTiles::Usual,
        2 => ConvTiles::Never,
        _ => ConvTiles::One,
    }
}

/// Whether a parallel loop may tile `dim` of `spec`.
pub(super) fn parallel_dim(spec: &CanonicalSpec, dim: usize) -> bool {
    !matches!(spec.kind, PrimitiveKind::Conv { .. }) || dim == 3
}

/// Whether a move of operand `operand` of `spec` into `level` as `kind` is tried (`strip`: the
/// destination is the filters' strip layout, `super::moves::filter_strip_layout`).
pub(super) fn moves(
    spec: &CanonicalSpec,
    operand: usize,
    level: LevelKind,
    kind: AllocKind,
    strip: bool,
) -> bool {
    let Some(geometry) = spec.kind.conv_geometry() else { return true };
    let filters = operand == 1 && kind == AllocKind::Buffer && strip;
    if geometry.is_padded() {
        return filters;
    }
    filters || kind == AllocKind::CacheView || (operand == spec.output_index() && level.counts_registers())
}
