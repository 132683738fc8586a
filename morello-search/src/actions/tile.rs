//! Serial tiling of one iteration dim.
//!
//! For each iteration dim (reduction dims only when the spec accumulates) and each tile size `t`
//! below its size `n`: a loop over `floor(n / t)` full tiles and, when `t` does not divide `n`, one
//! boundary region of `n mod t` at origin `floor(n / t) * t`. Tiles that do not fit an operand's
//! layout are skipped. Tiles are serial-only: parallel loops are the outermost loops.
//!
//! A power-of-two tile that leaves a remainder is only tried as a split (the largest power of two
//! below the dim) unless the configuration asks for every remainder ([`Remainders`]): any other
//! is a sequence of splits at the same cost. Of the powers of two that divide the dim, only the
//! largest is tried where no operand is in vector registers ([`DividingTiles`]): a loop over a
//! smaller one is, at the same cost, a loop over the largest one's tiles, each a loop over its own.
//!
//! The sizes are the configuration's [`TileSizes`]; by default that adds register-block heights
//! (six rows of four vectors and fourteen of two for 32 registers) on dims that no operand stores
//! innermost (a matmul's rows), and only where the tile's output fits in a vector register file,
//! so they shape register blocks without multiplying the specs of every cache level; and, where a
//! row of the output is a width the target's heights miss (3, 5 or 7 vectors: odd or padded
//! columns), the tallest block of that width (five rows of five vectors for 32 registers).

use morello_core::cost::register_block::SharedLoads;
use morello_core::imp::{Boundary, Parallelism};
use morello_core::spec::CanonicalSpec;
use morello_core::target::{LevelKind, Target};

#[cfg(doc)]
use super::Remainders;
use super::conv::{self, ConvTiles};
use super::{
    Action, ActionConfig, Combine, DividingTiles, Plan, PlanShape, TileSizes, block_rows,
    register_block_heights,
};

pub(super) fn enumerate(
    spec: &CanonicalSpec,
    target: &Target,
    config: &ActionConfig,
    out: &mut Vec<(Action, Plan)>,
) {
    let reductions = spec.kind.reduction_dims();
    let register_blocks = match config.tile_sizes {
        TileSizes::RegisterBlocks => true,
        TileSizes::PowersOfTwo | TileSizes::All | TileSizes::Coarse => false,
    };
    let heights = if register_blocks { register_block_heights(target) } else { Vec::new() };
    let innermost = if register_blocks { innermost_dims(spec) } else { Vec::new() };
    for dim in 0..spec.shape.rank() {
        if reductions.contains(&dim) && !spec.kind.accumulates() {
            continue;
        }
        let n = spec.shape.dim(dim);
        let (mut sizes, usual) = match conv::serial_tiles(spec, dim) {
            ConvTiles::Usual => (config.tile_sizes.for_dim(n), true),
            ConvTiles::One if n > 1 => (vec![1], false),
            ConvTiles::One | ConvTiles::Never => continue,
        };
        if register_blocks && !innermost.contains(&dim) {
            let before = sizes.len();
            sizes.extend(
                heights.iter().copied().filter(|&h| h < n && output_fits_registers(spec, dim, h, target)),
            );
            let tallest = tallest_block(spec, dim, target).filter(|h| *h < n && !sizes.contains(h));
            sizes.extend(tallest);
            if sizes.len() > before {
                sizes.sort_unstable();
            }
        }
        // Of the powers of two that divide `n`, only the largest, when its loop applies (then
        // every smaller one is a loop over its tiles).
        let largest = largest_dividing_tile(spec, n, config, target)
            .filter(|_| usual)
            .and_then(|size| plan(spec, dim, size, target).map(|plan| (size, plan)));
        for size in sizes.into_iter().filter(|&size| config.remainders.allows(n, size)) {
            let dividing = size.is_power_of_two() && n % size == 0;
            let found = match &largest {
                Some((largest, plan)) if dividing => (size == *largest).then(|| plan.clone()),
                _ => plan(spec, dim, size, target),
            };
            if let Some(plan) = found {
                out.push((Action::Tile { dim, size }, plan));
            }
        }
    }
}

/// The one power of two dividing a dim of `n` that [`DividingTiles::Largest`] tiles it by directly
/// (the others are tiles of its tiles), or `None` where every such size is tried: with
/// [`DividingTiles::Every`], for the coarse tile sizes (powers of four), and where an operand is in
/// vector registers.
fn largest_dividing_tile(
    spec: &CanonicalSpec,
    n: u32,
    config: &ActionConfig,
    target: &Target,
) -> Option<u32> {
    let nested = match config.tile_sizes {
        TileSizes::RegisterBlocks | TileSizes::PowersOfTwo => true,
        TileSizes::All | TileSizes::Coarse => false,
    };
    let in_vectors = spec.operands.iter().any(|o| target.level(o.level).kind == LevelKind::VectorRegisters);
    if config.dividing_tiles == DividingTiles::Every || !nested || in_vectors || n < 2 {
        return None;
    }
    // The largest power of two below `n` that divides it.
    let largest = 1u32 << n.trailing_zeros();
    Some(if largest == n { n / 2 } else { largest })
}

/// Whether a serial tile of `size` along `dim` cuts every operand into tiles its layout and vector
/// registers hold (whether this module can plan it, whatever sizes the configuration tries).
pub(crate) fn fits(spec: &CanonicalSpec, dim: usize, size: u32, target: &Target) -> bool {
    plan(spec, dim, size, target).is_some()
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
        combine: Combine::Loop {
            iterations: u64::from(n / size),
            parallelism: Parallelism::Serial,
            stalls: 0,
            shared: SharedLoads::default(),
        },
        shape: PlanShape::Loop { tile, parallelism: Parallelism::Serial, boundary_origins },
    })
}

/// The iteration dims that some operand stores innermost (the dims vectors run along), found from
/// each operand's layout; a window dim counts both of its iteration dims.
fn innermost_dims(spec: &CanonicalSpec) -> Vec<usize> {
    let operand_dims = spec.kind.operand_dims(spec.shape.rank());
    let mut dims = Vec::new();
    for (operand, geometry) in spec.operands.iter().zip(&operand_dims) {
        let Some(last) = operand.layout.dims().last() else { continue };
        if let Some(dim) = geometry.get(usize::from(last.logical)) {
            dims.push(dim.first);
            dims.extend(dim.second);
        }
    }
    dims
}

/// The rows of the tallest register block over the output of this spec's tile one row tall along
/// `dim`, where that row is a whole number `w` of a vector register file's widest vectors other
/// than a power of two (77 columns padded to 80: 5 vectors of 16 lanes), so the
/// [`register_block_heights`] of power-of-two widths miss it ([`block_rows`]).
fn tallest_block(spec: &CanonicalSpec, dim: usize, target: &Target) -> Option<u32> {
    let row_bytes = output_tile_bytes(spec, dim, 1)?;
    vector_register_files(target)
        .filter_map(|(registers, widest)| {
            // A register block's rows are whole vectors (`BroadcastVecMultAdd`).
            let width = (widest > 0 && row_bytes % widest == 0).then_some(row_bytes / widest)?;
            if width < 3 || width.is_power_of_two() { None } else { block_rows(registers, width) }
        })
        .max()
}

/// Whether the output of the tile with `size` along `dim` fits in some vector register file.
fn output_fits_registers(spec: &CanonicalSpec, dim: usize, size: u32, target: &Target) -> bool {
    let Some(bytes) = output_tile_bytes(spec, dim, size) else { return false };
    vector_register_files(target).any(|(registers, widest)| bytes <= registers.saturating_mul(widest))
}

/// The bytes of the output of this spec's tile `size` long along `dim`.
fn output_tile_bytes(spec: &CanonicalSpec, dim: usize, size: u32) -> Option<u64> {
    let mut tile = spec.shape.dims().to_vec();
    tile[dim] = size;
    let shapes = spec.kind.operand_tile_shapes(&tile).ok()?;
    let output = shapes.get(spec.output_index())?;
    Some(output.volume().saturating_mul(u64::from(spec.output().dtype.size_bytes())))
}

/// Each vector register file's registers and widest vector in bytes.
fn vector_register_files(target: &Target) -> impl Iterator<Item = (u64, u64)> + '_ {
    target
        .levels()
        .iter()
        .filter(|level| level.kind == LevelKind::VectorRegisters)
        .map(|level| (level.capacity, u64::from(level.vector_bytes.iter().copied().max().unwrap_or(0))))
}
