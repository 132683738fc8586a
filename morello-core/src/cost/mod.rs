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
//!                   (+ each body's register-step stall the same number of times: register_block::step_stall)
//!                   (- the loads its bodies share: register_block::shared_loads)
//! parallel loop   = body * ceil(iterations / processors) + Σ boundary bodies
//!                   + parallel_setup + parallel_per_iteration * ceil(iterations / processors)
//! alloc (move)    = move_cost(source) + move_cost(destination) + prologue + body + epilogue
//!                   (vector_move_cost(source) when the destination is in vector registers)
//! alloc peaks     = snap(units(destination) + max(children)), snap rounding cache and memory
//!                   amounts up to a power of two or three quarters of one
//! block           = Σ stages
//! kernel          = its own formula (see each kernel's file)
//! ```
//!
//! [`register_block`] is the model of register-blocked microkernels (load-side stalls,
//! accumulation chains, shared loads) that loops, moves and blocks add to these sums.

pub mod register_block;

use crate::spec::TensorSpec;
use crate::target::{CacheGeometry, LevelKind, MemVec, MemoryLevel, Target};

/// A cost: unitless, roughly cycles.
pub type Cost = u64;

/// The contiguous runs of the tensor's elements and the cache lines they touch.
fn runs_and_lines(t: &TensorSpec, target: &Target) -> (u64, u64) {
    let (runs, run_bytes) = t.runs();
    (runs, runs * run_bytes.div_ceil(u64::from(target.cache_line_bytes())))
}

/// The cost of touching every element of `t` once at its level.
pub fn move_cost(t: &TensorSpec, target: &Target) -> Cost {
    lines_cost(t, target, target.level(t.level).cost_per_line)
}

/// [`move_cost`] of a single element at `level`: one contiguous run in one line.
pub fn element_move_cost(level: &MemoryLevel) -> Cost {
    level.cost_per_line.saturating_mul(level.run_overhead_lines.saturating_add(1))
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

/// Whether `t` is read as runs (rows) more than half a page apart (`CostConstants::page_bytes`),
/// so that a stream along its rows starts a new page, and the prefetchers start over, at nearly
/// every row. Judged on the canonical pitch ([`TensorSpec::pitch`], the stride modulo the caches'
/// set period); `false` for one run, or where the pitch cannot matter.
pub fn rows_on_their_own_pages(t: &TensorSpec, target: &Target) -> bool {
    t.runs().0 > 1
        && t.pitch.is_some_and(|p| {
            u64::from(p).saturating_mul(u64::from(t.dtype.size_bytes())) > target.costs().page_bytes / 2
        })
}

/// How much of its level `t` occupies: registers for register levels, bytes (whole cache lines)
/// otherwise. In a cache with a geometry, a strided tensor (one with a pitch) with two or more
/// lines in some set occupies at least what it would take for every set to be that full
/// (`fullest set * sets * line bytes`). So one that crowds a set beyond the cache's ways cannot
/// stay resident however much else is free (no implementation keeps it there, and its uses are
/// priced at the level it streams from), and tensors that fit together by these units leave
/// each other room in every set, but for the one line a set of a tensor that has no more and
/// the rounding of a contiguous one, whose lines spread evenly (it counts its bytes).
pub fn memory_units(t: &TensorSpec, target: &Target) -> u64 {
    let level = target.level(t.level);
    match level.kind {
        LevelKind::ScalarRegisters => t.shape.volume(),
        LevelKind::VectorRegisters => t.shape.volume() / u64::from(t.vector_size.unwrap_or(1)),
        LevelKind::Cache | LevelKind::Memory => {
            let bytes = t.cache_lines(target.cache_line_bytes()) * u64::from(target.cache_line_bytes());
            match level.geometry {
                Some(g) if bytes <= level.capacity => {
                    let fullest = fullest_set(t, g);
                    if t.pitch.is_some() && fullest > 1 { bytes.max(fullest * g.way_bytes()) } else { bytes }
                }
                _ => bytes,
            }
        }
    }
}

/// Whether `t`, a strided tensor of two dims (a tile of a matrix: runs along one dim, spaced
/// along the other) whose pitch class is `pitch`, and every tile of it, are priced exactly as if
/// it had no pitch: in every cache with a geometry its lines fall into distinct sets
/// ([`fullest_set`] at most 1, so [`memory_units`] counts its bytes), none of its runs straddles a
/// line more than its bytes fill ([`lines_touched`] is [`TensorSpec::cache_lines`]), and its runs
/// are at most half a page apart ([`rows_on_their_own_pages`] is false).
///
/// Each of these holds for every tile of such a tensor when it holds for the tensor: a tile of a
/// two-dim strided tensor is one run, or has the same pitch with no more runs and no longer ones,
/// so its lines are among the tensor's (as the model places them, the first run starting a line).
/// Tensors of more strided dims (packed layouts) are not judged: a tile of one may take the
/// stride of an inner dim as its pitch.
pub fn pitch_cannot_matter(t: &TensorSpec, pitch: u32, target: &Target) -> bool {
    if !two_dim_strided(t) {
        return false;
    }
    let pitch_bytes = u64::from(pitch).saturating_mul(u64::from(t.dtype.size_bytes()));
    if pitch_bytes > target.costs().page_bytes / 2 {
        return false;
    }
    let (runs, run_bytes) = t.runs();
    let line = u64::from(target.cache_line_bytes());
    if line == 0 {
        return false;
    }
    let step = pitch_bytes % line;
    if step != 0 {
        let period = line / gcd(step, line);
        let furthest = (0..runs.min(period)).map(|i| (i * step) % line).max().unwrap_or(0);
        if furthest + run_bytes > line {
            return false;
        }
    }
    let with_pitch = TensorSpec { pitch: Some(pitch), ..t.clone() };
    target.levels().iter().filter_map(|l| l.geometry).all(|g| fullest_set(&with_pitch, g) <= 1)
}

/// Whether `t` has one strided physical dim outside its run and at most one inside it (extents of
/// 1 aside): a tile of a matrix, whose every tile is one run or has the same pitch.
pub fn two_dim_strided(t: &TensorSpec) -> bool {
    let Ok(sizes) = t.layout.physical_sizes_inline(&t.shape) else { return false };
    let split = sizes.len() - usize::from(t.contiguous_dims).min(sizes.len());
    let strided = |dims: &[u64]| dims.iter().filter(|&&n| n > 1).count();
    strided(&sizes[..split]) == 1 && strided(&sizes[split..]) <= 1
}

/// The cache lines of `line_bytes` that `t`'s runs touch, each from the line its first byte falls
/// in to the one its last byte does: at a pitch off the line grid, some runs straddle one line
/// more than their bytes fill (a 128-byte column tile of a 1000-column f32 matrix touches 2 lines
/// in one row and 3 in the next). Runs are spaced by the canonical pitch, the first starting a
/// line, as in [`fullest_set`]; without a pitch, [`TensorSpec::cache_lines`].
pub fn lines_touched(t: &TensorSpec, line_bytes: u32) -> u64 {
    let (runs, run_bytes) = t.runs();
    let line = u64::from(line_bytes);
    let Some(pitch) = t.pitch.filter(|_| runs > 1 && line > 0) else { return t.cache_lines(line_bytes) };
    // The canonical pitch is the stride modulo a multiple of the line, so its offset within a
    // line is the stride's; offsets repeat every `period` runs.
    let step = (u64::from(pitch) * u64::from(t.dtype.size_bytes())) % line;
    let period = if step == 0 { 1 } else { line / gcd(step, line) };
    let lines_at = |i: u64| run_lines(i * step, run_bytes, line);
    let per_period: u64 = (0..period).map(lines_at).sum();
    (runs / period).saturating_mul(per_period).saturating_add((0..runs % period).map(lines_at).sum())
}

/// The lines of `line` bytes a run of `run_bytes` touches when it starts `offset` bytes after a
/// line boundary (any multiple of the line apart): from its first byte's line to its last byte's.
fn run_lines(offset: u64, run_bytes: u64, line: u64) -> u64 {
    (offset % line + run_bytes).div_ceil(line)
}

/// The most lines of `t` that fall into one set of a cache of geometry `g`.
///
/// Run `i` of the tensor starts `i * pitch` elements after the first (runs are modelled as
/// equally spaced by the pitch, exact for matrices and their tiles, with the first starting a
/// line) and covers every line from the one its first byte falls in to the one its last byte
/// does: a run whose pitch leaves it off the line grid touches one line more than its bytes
/// fill (a 256-byte row of a 1000-column f32 matrix: 4 lines or 5); line `a` lives in set `a mod
/// sets`.
/// A tensor without a pitch is one run (or has too few lines to crowd any set), so its lines
/// spread evenly. Memoised per thread: the search asks for few distinct patterns.
pub fn fullest_set(t: &TensorSpec, g: CacheGeometry) -> u64 {
    let (runs, run_bytes) = t.runs();
    let line = u64::from(g.line_bytes);
    let sets = u64::from(g.sets);
    let per_run = run_bytes.div_ceil(line);
    let Some(pitch) = t.pitch.filter(|_| runs > 1) else {
        return (runs * per_run).div_ceil(sets);
    };
    let pitch_bytes = (u64::from(pitch) * u64::from(t.dtype.size_bytes())) % g.way_bytes();
    let key = (g, pitch_bytes, runs, run_bytes);
    FULLEST.with(|memo| {
        if let Some(&v) = memo.borrow().get(&key) {
            return v;
        }
        let v = simulate_fullest(g, pitch_bytes, runs, run_bytes);
        let mut memo = memo.borrow_mut();
        if memo.len() > 1 << 16 {
            memo.clear();
        }
        memo.insert(key, v);
        v
    })
}

type FullestKey = (CacheGeometry, u64, u64, u64);

thread_local! {
    static FULLEST: std::cell::RefCell<std::collections::HashMap<FullestKey, u64>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Counts the lines per set of `runs` runs of `run_bytes` bytes, `pitch_bytes` apart (modulo a way),
/// the first starting a line.
fn simulate_fullest(g: CacheGeometry, pitch_bytes: u64, runs: u64, run_bytes: u64) -> u64 {
    let sets = u64::from(g.sets);
    let line = u64::from(g.line_bytes);
    let way = g.way_bytes();
    // Runs repeat their set pattern after `way / gcd(pitch, way)` runs: fold the repeats.
    let period = if pitch_bytes == 0 { 1 } else { way / gcd(pitch_bytes, way) };
    let distinct = runs.min(period);
    let mut diff = vec![0i64; g.sets as usize + 1];
    let mut laps = 0u64;
    let mut offset = 0u64;
    for i in 0..distinct {
        // Runs i, i + period, i + 2 period, ... start at the same offset, and cover the lines
        // from the one their first byte falls in to the one their last byte does.
        let repeats = (runs - i).div_ceil(period);
        let lines = run_lines(offset, run_bytes, line);
        // Whole laps of the sets add the same to every set; the rest is a range.
        laps += repeats * (lines / sets);
        let rest = lines % sets;
        let repeats = repeats as i64;
        let start = (offset / line) % sets;
        let end = start + rest;
        if end <= sets {
            diff[start as usize] += repeats;
            diff[end as usize] -= repeats;
        } else {
            diff[start as usize] += repeats;
            diff[sets as usize] -= repeats;
            diff[0] += repeats;
            diff[(end - sets) as usize] -= repeats;
        }
        offset = (offset + pitch_bytes) % way;
    }
    let mut fullest = 0i64;
    let mut running = 0i64;
    for d in &diff[..g.sets as usize] {
        running += d;
        fullest = fullest.max(running);
    }
    fullest as u64 + laps
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Peaks as the model counts them: amounts at caches and memory are rounded up to a power of two
/// or three quarters of one (`2^k` or `3 * 2^(k-2)`: 32, 48, 64, 96 KiB...), so a 48 KiB L1 or a
/// 1.5 MiB L2 is budgeted whole while frontiers stay small; registers are exact.
pub fn snap_peaks(peaks: MemVec, target: &Target) -> MemVec {
    let mut out = peaks;
    for (i, level) in target.levels().iter().enumerate() {
        if matches!(level.kind, LevelKind::Cache | LevelKind::Memory) {
            out.0[i] = snap_bytes(out.0[i]);
        }
    }
    out
}

/// `v` rounded up to the next power of two or three quarters of one ([`snap_peaks`]); 0 stays 0.
pub fn snap_bytes(v: u64) -> u64 {
    if v == 0 {
        return 0;
    }
    let Some(p) = v.checked_next_power_of_two() else { return u64::MAX };
    if p >= 4 && v <= p / 4 * 3 { p / 4 * 3 } else { p }
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
/// into vector registers reads its source at the source level's vector cost per line. A
/// `round_trip` (an output read and written back: an accumulator reloaded between two parts of
/// a reduction, into registers or a faster cache's view) also waits for its lines to come from
/// the source level: its `fill_cost_per_line` each, which no multiply-adds overlap
/// (`docs/cost-model.md`, "Register blocks").
pub fn alloc_cost(source: &TensorSpec, destination: &TensorSpec, round_trip: bool, target: &Target) -> Cost {
    let into_registers = target.level(destination.level).kind == LevelKind::VectorRegisters;
    let read = if into_registers { vector_move_cost(source, target) } else { move_cost(source, target) };
    let reload = if round_trip {
        let level = target.level(source.level);
        level.fill_cost(false).saturating_mul(source.cache_lines(target.cache_line_bytes()))
    } else {
        0
    };
    read.saturating_add(reload).saturating_add(move_cost(destination, target))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{CanonicalSpec, SpecBuilder};

    fn matmul(n: u32, target: &Target) -> CanonicalSpec {
        SpecBuilder::parse(&format!("matmul {n}x{n}x{n}")).unwrap().build(target).unwrap()
    }

    /// The `lhs` tile of `tile` (iteration sizes) of an `n`-cube, moved to level `level` as a view.
    fn lhs_tile(n: u32, tile: [u32; 4], level: &str, target: &Target) -> TensorSpec {
        let t = matmul(n, target).tile(&tile, false, target).unwrap();
        TensorSpec { level: target.level_id(level).unwrap(), ..t.operands[0].clone() }
    }

    #[test]
    fn one_element_costs_what_a_one_element_tile_does() {
        for name in ["x86-avx2", "x86-avx512"] {
            let t = Target::builtin(name, 1).unwrap();
            for level in ["GL", "L2", "L1"] {
                let element = lhs_tile(64, [1, 1, 1, 1], level, &t);
                assert_eq!(element.shape.volume(), 1);
                let at = t.level(t.level_id(level).unwrap());
                assert_eq!(move_cost(&element, &t), element_move_cost(at), "{name} {level}");
            }
        }
    }

    #[test]
    fn the_512_cube_lhs_block_crowds_16_of_64_l1_sets() {
        // docs/cost-model.md: a 64 x 128 block of a 512-wide f32 matrix has a 2 KiB pitch, so its
        // rows start in sets 0 and 32 only: 512 lines in 16 sets, 32 per set against 8 ways.
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let block = lhs_tile(512, [1, 64, 128, 512], "L1", &target);
        assert_eq!(block.pitch, Some(512));
        let g = target.level(block.level).geometry.unwrap();
        assert_eq!(block.cache_lines(target.cache_line_bytes()), 512);
        assert_eq!(fullest_set(&block, g), 32);
        assert_eq!(memory_units(&block, &target), 32 * 64 * 64, "it cannot stay in a 32 KiB L1");
        // Half that block of a 500-wide matrix (pitch 2000 bytes, 31.25 lines) spreads its 256
        // lines over every set, 6 at most, and fits; of the 512-wide matrix it crowds 16 sets 16 deep.
        let odd = lhs_tile(500, [1, 32, 128, 500], "L1", &target);
        assert_eq!(odd.pitch, Some(500));
        assert_eq!(fullest_set(&odd, g), 6);
        assert_eq!(memory_units(&odd, &target), 6 * 64 * 64, "as if every set held 6 of its lines");
        assert_eq!(fullest_set(&lhs_tile(512, [1, 32, 128, 512], "L1", &target), g), 16);
        let panel = lhs_tile(512, [1, 6, 128, 512], "L1", &target);
        assert_eq!(fullest_set(&panel, g), 3);
        assert_eq!(memory_units(&panel, &target), 3 * 64 * 64);
        // A tensor with at most a line in each set counts its own lines.
        let row = lhs_tile(512, [1, 1, 128, 512], "L1", &target);
        assert_eq!((fullest_set(&row, g), memory_units(&row, &target)), (1, 8 * 64));
    }

    #[test]
    fn contiguous_tensors_spread_evenly_and_small_ones_have_no_pitch() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        // Whole rows of a row-major matrix are one run: no pitch, lines spread over the sets.
        let rows = lhs_tile(512, [1, 8, 512, 512], "L1", &target);
        assert_eq!((rows.pitch, rows.is_fully_contiguous()), (None, true));
        let g = target.level(rows.level).geometry.unwrap();
        assert_eq!(fullest_set(&rows, g), 4);
        assert_eq!(memory_units(&rows, &target), 16 << 10);
        // Whole rows of a 500-wide matrix are one run too: 250 lines, 4 in some sets and 3 in
        // others, counted as they are.
        let odd_rows = lhs_tile(500, [1, 8, 500, 500], "L1", &target);
        assert_eq!((fullest_set(&odd_rows, g), memory_units(&odd_rows, &target)), (4, 250 * 64));
        // Four lines fit any 8-way cache wherever they fall: the pitch cannot matter.
        let small = lhs_tile(512, [1, 4, 16, 512], "L1", &target);
        assert_eq!((small.pitch, small.cache_lines(target.cache_line_bytes())), (None, 4));
        // Pitches are kept modulo the largest way (64 KiB of f32: 16384 elements).
        let wide = matmul(2, &target);
        let text = wide.display(&target).to_string();
        assert!(!text.contains(" s"), "{text}");
    }

    #[test]
    fn fullest_set_folds_repeating_runs() {
        let g = CacheGeometry { line_bytes: 64, ways: 8, sets: 64 };
        // 64 runs of 8 lines, 4 KiB apart: every run in sets 0..8.
        assert_eq!(simulate_fullest(g, 4096, 64, 512), 64);
        // 1 KiB apart: 4 start sets.
        assert_eq!(simulate_fullest(g, 1024, 64, 512), 16);
        // 512 bytes apart with 8 lines each is dense: 8 a set.
        assert_eq!(simulate_fullest(g, 512, 64, 512), 8);
        // Runs longer than the sets lap them: 130 lines are two laps and two more.
        assert_eq!(simulate_fullest(g, 0, 2, 130 * 64), 2 * 3);
    }

    #[test]
    fn runs_off_the_line_grid_count_every_line_they_touch() {
        let g = CacheGeometry { line_bytes: 64, ways: 12, sets: 64 };
        // 128 rows of 64 f32 in a 1000-column matrix (4,000-byte pitch): every other row starts
        // half a line in and touches 5 lines, so 576 lines over 64 sets, 9 in each (8 if each row
        // touched only 4).
        assert_eq!(simulate_fullest(g, 4000, 128, 256), 9);
        // On the line grid (a 1024-column matrix has a 4,096-byte pitch) runs touch 4 lines.
        assert_eq!(simulate_fullest(g, 4096 % g.way_bytes(), 128, 256), 128 * 4 / 4);
        // A run of one line's bytes that starts mid-line touches two lines.
        assert_eq!(simulate_fullest(g, 96, 2, 64), 1);
        assert_eq!(simulate_fullest(g, 32, 2, 64), 2);
    }

    #[test]
    fn lines_touched_counts_the_lines_rows_straddle() {
        let target = Target::builtin("x86-avx512", 1).unwrap();
        // A 128 x 32 column of a 1000-column f32 matrix: rows of 128 bytes at a 4,000-byte
        // pitch start at offsets 0 and 32 of a line in turn, touching 2 lines and 3.
        let column = lhs_tile(1000, [1, 128, 32, 1000], "L2", &target);
        assert_eq!(column.pitch, Some(1000));
        assert_eq!(column.cache_lines(64), 256);
        assert_eq!(lines_touched(&column, 64), 64 * 2 + 64 * 3);
        // On the line grid (a 1024-column matrix) every row touches 2.
        let aligned = lhs_tile(1024, [1, 128, 32, 1024], "L2", &target);
        assert_eq!(aligned.pitch, Some(1024));
        assert_eq!(lines_touched(&aligned, 64), aligned.cache_lines(64));
        // An odd number of rows ends on a row of 2 lines.
        let odd = lhs_tile(1000, [1, 17, 32, 1000], "L2", &target);
        assert_eq!(odd.pitch, Some(1000));
        assert_eq!(lines_touched(&odd, 64), 9 * 2 + 8 * 3);
        // One run: its bytes' lines.
        let rows = lhs_tile(1000, [1, 4, 1000, 1000], "L2", &target);
        assert_eq!(lines_touched(&rows, 64), rows.cache_lines(64));
    }

    /// A row-major `rows x cols` tile at `level` of a matrix `pitch` elements wide (one run a row).
    fn strided(rows: u32, cols: u32, pitch: Option<u32>, level: &str, target: &Target) -> TensorSpec {
        use crate::layout::Layout;
        use crate::shape::Shape;
        TensorSpec {
            shape: Shape::new(vec![rows, cols]).unwrap(),
            dtype: crate::dtype::Dtype::F32,
            level: target.level_id(level).unwrap(),
            layout: Layout::row_major(2),
            contiguous_dims: 1,
            vector_size: None,
            pitch,
        }
    }

    #[test]
    fn a_pitch_that_spreads_a_tile_over_distinct_sets_cannot_matter() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        // 32 rows of 2 f32, 400 bytes apart: each row in a set of its own, within one line.
        assert!(pitch_cannot_matter(&strided(32, 2, None, "L1", &target), 100, &target));
        // 64 rows 2 KiB apart fall into two sets of a 4 KiB L1 way.
        assert!(!pitch_cannot_matter(&strided(64, 2, None, "L1", &target), 512, &target));
        // 16-byte rows starting 56 bytes into a line straddle two lines.
        assert!(!pitch_cannot_matter(&strided(8, 4, None, "L1", &target), 14, &target));
        // Rows more than half a page apart start a new stream each (`rows_on_their_own_pages`).
        assert!(!pitch_cannot_matter(&strided(4, 2, None, "L1", &target), 1000, &target));
    }

    use proptest::prelude::*;

    proptest! {
        // About one drawn tile in five has a pitch that cannot matter: room for the others.
        #![proptest_config(ProptestConfig { cases: 256, max_global_rejects: 16_384, ..ProptestConfig::default() })]

        /// Where `pitch_cannot_matter` holds for a strided tile, it and every tile of it are priced
        /// at every level as without a pitch (checked against the pitched formulas tile by tile).
        #[test]
        fn a_pitch_that_cannot_matter_changes_no_price_of_any_tile(
            rows in 2u32..40, cols in 1u32..12, extra in 1u32..300, level in 0usize..3,
        ) {
            let target = Target::builtin("x86-avx2", 1).unwrap();
            let level = ["GL", "L2", "L1"][level];
            let pitch = cols + extra;
            let tensor = strided(rows, cols, None, level, &target);
            prop_assume!(pitch_cannot_matter(&tensor, pitch, &target));
            for r in 1..=rows {
                for c in 1..=cols {
                    for at in ["GL", "L2", "L1"] {
                        let plain = strided(r, c, None, at, &target);
                        let pitched = strided(r, c, Some(pitch), at, &target);
                        prop_assert_eq!(memory_units(&pitched, &target), memory_units(&plain, &target));
                        prop_assert_eq!(lines_touched(&pitched, 64), lines_touched(&plain, 64));
                        prop_assert!(!rows_on_their_own_pages(&pitched, &target));
                        for g in target.levels().iter().filter_map(|l| l.geometry) {
                            prop_assert_eq!(fullest_set(&pitched, g), fullest_set(&plain, g));
                        }
                    }
                }
            }
        }
    }
}
