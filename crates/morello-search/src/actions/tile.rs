//! Serial tiling of one iteration dim.
//!
//! For each iteration dim (reduction dims only when the spec accumulates) and each tile size `t`
//! below its size `n`: a loop over `floor(n / t)` full tiles and, when `t` does not divide `n`, one
//! boundary region of `n mod t` at origin `floor(n / t) * t`. Tiles that do not fit an operand's
//! layout are skipped. Tiles are serial-only: parallel loops are the outermost loops.

use morello_core::imp::{Boundary, Parallelism};
use morello_core::spec::CanonicalSpec;
use morello_core::target::Target;

use super::{Action, ActionConfig, Combine, Plan, PlanShape};

pub(super) fn enumerate(
    spec: &CanonicalSpec,
    target: &Target,
    config: &ActionConfig,
    out: &mut Vec<(Action, Plan)>,
) {
    let reductions = spec.kind.reduction_dims();
    for dim in 0..spec.shape.rank() {
        if reductions.contains(&dim) && !spec.kind.accumulates() {
            continue;
        }
        let n = spec.shape.dim(dim);
        for size in config.tile_sizes.for_dim(n) {
            if let Some(plan) = plan(spec, dim, size, target) {
                out.push((Action::Tile { dim, size }, plan));
            }
        }
    }
}

fn plan(spec: &CanonicalSpec, dim: usize, size: u32, target: &Target) -> Option<Plan> {
    let n = spec.shape.dim(dim);
    let mut tile = spec.shape.dims().to_vec();
    tile[dim] = size;
    let mut children = vec![spec.tile(&tile, true, target).ok()?];
    let mut boundary_origins = Vec::new();
    for (region, origin) in Boundary::regions(spec.shape.dims(), &tile) {
        children.push(spec.tile_at(&region, &origin, true, target).ok()?);
        boundary_origins.push(origin);
    }
    Some(Plan {
        children,
        combine: Combine::Loop { iterations: u64::from(n / size), parallel: false },
        shape: PlanShape::Loop { tile, parallelism: Parallelism::Serial, boundary_origins },
    })
}
