//! The cost model: pure functions from specs, tensors and child costs to a cost.
//!
//! Costs are unitless integers (roughly cycles); `docs/cost-model.md` states every formula. The
//! constants come from the target ([`crate::target::CostConstants`] and each level's
//! `cost_per_line`), so they can be fitted to measurements.
//!
//! ```text
//! lines(t)        = Π(extents of t's non-contiguous physical dims) * ceil(run bytes / line bytes)
//!                   where the run is the innermost contiguous physical dims
//! runs(t)         = Π(extents of t's non-contiguous physical dims)
//! move_cost(t)    = cost_per_line(level(t)) * (lines(t) * (noncontiguous_penalty if t is not one run)
//!                                            + run_overhead_lines(level(t)) * runs(t))
//! vector_move_cost(t) = the same with vector_cost_per_line(level(t)) (load_cost_per_line if the
//!                   target sets one, else cost_per_line): vector loads and stores, and moves
//!                   into vector registers
//! units(t)        = volume (scalar registers) | volume / vector_size (vector registers)
//!                 | lines(t) * line bytes (caches and memory)
//! loop            = body * iterations + Σ boundary bodies
//! parallel loop   = body * ceil(iterations / processors) + Σ boundary bodies
//!                   + parallel_setup + parallel_per_iteration * ceil(iterations / processors)
//! alloc (move)    = move_cost(source) + move_cost(destination) + prologue + body + epilogue
//!                   (vector_move_cost(source) when the destination is in vector registers)
//! alloc peaks     = snap(units(destination) + max(children)), snap rounding cache and memory
//!                   amounts up to a power of two
//! block           = Σ stages
//! kernel          = its own formula (see each kernel's file)
//! ```

use crate::spec::TensorSpec;
use crate::target::{LevelKind, MemVec, Target};

/// A cost: unitless, roughly cycles.
pub type Cost = u64;

/// The contiguous runs of the tensor's elements in their buffer, and the bytes of each.
fn runs(t: &TensorSpec) -> (u64, u64) {
    let sizes = t.layout.physical_sizes(&t.shape).expect("a canonical tensor's layout fits its shape");
    let split = sizes.len() - usize::from(t.contiguous_dims).min(sizes.len());
    let outer: u64 = sizes[..split].iter().product();
    let run_bytes: u64 = sizes[split..].iter().product::<u64>() * u64::from(t.dtype.size_bytes());
    (outer, run_bytes)
}

/// The contiguous runs of the tensor's elements and the cache lines they touch.
fn runs_and_lines(t: &TensorSpec, target: &Target) -> (u64, u64) {
    let (runs, run_bytes) = runs(t);
    (runs, runs * run_bytes.div_ceil(u64::from(target.cache_line_bytes())))
}

/// Cache lines the tensor's elements touch in their buffer.
pub fn cache_lines(t: &TensorSpec, target: &Target) -> u64 {
    runs_and_lines(t, target).1
}

/// The cost of touching every element of `t` once at its level.
pub fn move_cost(t: &TensorSpec, target: &Target) -> Cost {
    lines_cost(t, target, target.level(t.level).cost_per_line)
}

/// The cost of moving every element of `t` once between its level and vector registers with
/// vector loads or stores: [`move_cost`] at the level's vector cost per line.
pub fn vector_move_cost(t: &TensorSpec, target: &Target) -> Cost {
    lines_cost(t, target, target.level(t.level).vector_cost_per_line())
}

fn lines_cost(t: &TensorSpec, target: &Target, per_line: u64) -> Cost {
    if per_line == 0 {
        return 0;
    }
    let (runs, lines) = runs_and_lines(t, target);
    let penalty = if t.is_fully_contiguous() { 1 } else { target.costs().noncontiguous_penalty };
    let level = target.level(t.level);
    let charged = lines.saturating_mul(penalty).saturating_add(level.run_overhead_lines.saturating_mul(runs));
    per_line.saturating_mul(charged)
}

/// How much of its level `t` occupies: registers for register levels, bytes (whole cache lines)
/// otherwise.
pub fn memory_units(t: &TensorSpec, target: &Target) -> u64 {
    match target.level(t.level).kind {
        LevelKind::ScalarRegisters => t.shape.volume(),
        LevelKind::VectorRegisters => t.shape.volume() / u64::from(t.vector_size.unwrap_or(1)),
        LevelKind::Cache | LevelKind::Memory => cache_lines(t, target) * u64::from(target.cache_line_bytes()),
    }
}

/// Peaks as the model counts them: amounts at caches and memory are rounded up to a power of two
/// (memory is budgeted in power-of-two blocks), registers are exact.
pub fn snap_peaks(peaks: MemVec, target: &Target) -> MemVec {
    let mut out = peaks;
    for (i, level) in target.levels().iter().enumerate() {
        if matches!(level.kind, LevelKind::Cache | LevelKind::Memory) && out.0[i] > 0 {
            out.0[i] = out.0[i].checked_next_power_of_two().unwrap_or(u64::MAX);
        }
    }
    out
}

/// The cost of a loop from its body's and boundary bodies' costs.
pub fn loop_cost(body: Cost, iterations: u64, boundaries: Cost, parallel: bool, target: &Target) -> Cost {
    if !parallel {
        return body.saturating_mul(iterations).saturating_add(boundaries);
    }
    let per_thread = iterations.div_ceil(u64::from(target.processors()));
    let costs = target.costs();
    body.saturating_mul(per_thread)
        .saturating_add(boundaries)
        .saturating_add(costs.parallel_setup)
        .saturating_add(costs.parallel_per_iteration.saturating_mul(per_thread))
}

/// The cost of moving a tensor from `source` into `destination`, excluding the sub-specs; a move
/// into vector registers reads its source at the source level's vector cost per line.
pub fn alloc_cost(source: &TensorSpec, destination: &TensorSpec, target: &Target) -> Cost {
    let read = if target.level(destination.level).kind == LevelKind::VectorRegisters {
        vector_move_cost(source, target)
    } else {
        move_cost(source, target)
    };
    read.saturating_add(move_cost(destination, target))
}
