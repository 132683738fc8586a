//! Parallel tiling of one or two non-reduction iteration dims.
//!
//! Only for specs that are not serial-only and whose operands all live at levels parallel loops
//! may split. The body (one full tile) becomes serial-only. With remainders, one boundary region
//! per non-empty subset `B` of the dims that have one: remainder extent at the end for dims in
//! `B`, the span of the full tiles for the other remainder dims, the whole extent elsewhere.
//! Loops with fewer than two full tiles are not worth a parallel region and are not listed.
//!
//! Besides the configured tile sizes, each dim is offered its even share, `n / processors`
//! (rounded down): a dim that is no multiple of a power of two (1,000 rows on two processors) is
//! otherwise split into power-of-two tiles whose count the processors do not divide (3 full tiles
//! of 256 and a boundary of 232), and a processor idles while another runs the last tile.

use morello_core::cost::register_block::SharedLoads;
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
    if spec.serial_only
        || target.processors() < 2
        || !spec.operands.iter().all(|o| target.level(o.level).parallel)
    {
        return;
    }
    let reductions = spec.kind.reduction_dims();
    let dims: Vec<usize> = (0..spec.shape.rank())
        .filter(|&d| !reductions.contains(&d) && super::conv::parallel_dim(spec, d))
        .collect();
    let sizes_of =
        |d: usize| with_even_share(config.tile_sizes.for_dim(spec.shape.dim(d)), spec.shape.dim(d), target);
    let mut tilings: Vec<Vec<(usize, u32)>> = Vec::new();
    for (i, &a) in dims.iter().enumerate() {
        for ta in sizes_of(a) {
            tilings.push(vec![(a, ta)]);
        }
        for &b in &dims[i + 1..] {
            for ta in sizes_of(a) {
                for tb in sizes_of(b) {
                    tilings.push(vec![(a, ta), (b, tb)]);
                }
            }
        }
    }
    for tiling in tilings {
        let mut sizes = spec.shape.dims().to_vec();
        for &(d, t) in &tiling {
            sizes[d] = t;
        }
        if let Some(plan) = plan(spec, &sizes, target) {
            out.push((Action::ParallelTile { sizes }, plan));
        }
    }
}

/// `sizes` (ascending) with `n / processors` inserted where it is a proper tile size not among them.
fn with_even_share(mut sizes: Vec<u32>, n: u32, target: &Target) -> Vec<u32> {
    let share = n / target.processors();
    if (1..n).contains(&share) {
        if let Err(at) = sizes.binary_search(&share) {
            sizes.insert(at, share);
        }
    }
    sizes
}

fn plan(spec: &CanonicalSpec, tile: &[u32], target: &Target) -> Option<Plan> {
    let full = spec.shape.dims();
    let iterations: u64 = full.iter().zip(tile).map(|(&n, &t)| u64::from(n / t)).product();
    if iterations < 2 {
        return None;
    }
    let mut children = vec![spec.tile(tile, true, target).ok()?];
    let mut boundary_origins = Vec::new();
    for (region, origin) in Boundary::regions(full, tile) {
        children.push(spec.tile_at(&region, &origin, false, target).ok()?);
        boundary_origins.push(origin);
    }
    Some(Plan {
        children,
        combine: Combine::Loop {
            iterations,
            parallelism: Parallelism::Parallel,
            stalls: 0,
            shared: SharedLoads::default(),
        },
        shape: PlanShape::Loop { tile: tile.to_vec(), parallelism: Parallelism::Parallel, boundary_origins },
    })
}
