//! The register-block cost model: what a matmul microkernel's multiply-adds wait for, which the
//! kernels' additive costs do not count.
//!
//! A *register block* is a `MatmulAccum [1, m, k, n]` with its output in vector registers and both
//! inputs outside them ([`is_register_block`]): `k` steps of `BroadcastVecMultAdd`s over an
//! `m x n` block (for int8, `k / 4` steps of `BroadcastQuadDot`s or `BroadcastQuadDotAvx`s or `k / 2` of
//! `BroadcastPairDot`s, each summing that many values of `k` per lane). Three effects are priced here (`docs/cost-model.md`, "Register blocks",
//! "Accumulation chains", "Shared loads"):
//!
//! - the load side: a block's loads and broadcasts issue at the target's `load_issue` and each line
//!   they bring from below the fastest cache costs its level's fill, so a block whose loads exceed
//!   its multiply-adds waits for the difference ([`register_step_stall`]; a vector side crowded
//!   out of its cache by the scalar side pays the refilling level's fill); a node over a register
//!   block adds it ([`step_stall`], [`block_stalls`]), once per run of the block;
//! - accumulation chains: any `MatmulAccum` over more than one step waits for its multiply-adds'
//!   latency when it has fewer accumulators than the target's `fma_chains` (less when its
//!   multiply-adds fit the target's `fma_window`); a serial loop over its `k` pays that wait less
//!   its pieces' ([`loop_stalls`]), so a chain pays it once;
//! - shared loads: a serial loop over one step of a register block subtracts the loads its bodies
//!   repeat (the broadcasts, when it tiles the vectors; the row of vectors, when it tiles the
//!   scalars) and holds the registers that keep them ([`shared_loads`]).
//!
//! Codegen asks [`is_register_block`] before unrolling a block's steps; `Impl`'s constructors
//! (`crate::imp`) and the search's plans (`morello-search`'s `actions`) add the stalls and credits.
//!
//! # Invariants
//! A register block's stall depends on the block's spec alone, not on the node above it. A
//! shared-loads credit is at most what the bodies pay for those loads, whatever their
//! implementations (a row's load is priced from the cheapest level a body could load it from).

use super::{
    Cost, alloc_cost, element_move_cost, fullest_set, lines_touched, rows_on_their_own_pages,
    vector_move_cost,
};
use crate::dtype::Dtype;
use crate::kernels::{
    KernelKind, PAIR, QUAD, QUAD_AVX_LANES, QUAD_LANES, in_vector_registers, output_vectors, vectors_along,
    widest_vector_level,
};
use crate::spec::{LogicalSpec, PrimitiveKind, TensorSpec};
use crate::target::{LevelId, LevelKind, MemVec, MemoryLevel, Target};

/// The cycles a register block's multiply-adds wait for its loads, in cost units: the load-port
/// bound of a microkernel of this shape (`docs/cost-model.md`, "Register blocks").
///
/// A *register block* is a `MatmulAccum [1, m, k, n]` with its output in vector registers and
/// both inputs outside them: `k` steps of an `m x n` block, each loading a row of the vector side
/// (`rhs` when the output's vectors run along `n`, `lhs` when along `m`) into registers and
/// broadcasting each element of the other side into a `BroadcastVecMultAdd` (an int8 block's
/// steps cover the four or two values of `k` its dot-product kernel sums per lane, and broadcast
/// one word of them per row: `k` below counts steps). Its multiply-adds issue at the kernel's
/// `per_unit` per output vector and step; its loads at the target's
/// `load_issue` each (a load per vector, a broadcast per scalar), and each line they bring from a
/// level below the fastest cache costs that level's `fill_cost_per_line` (the scalar side's lines
/// amortised over the `k` steps a line serves). The two sides overlap, so the block takes the
/// larger; the kernels' additive costs already count the multiply-adds, so the block adds what
/// its load side exceeds them by:
///
/// ```text
/// fma_side  = per_unit * k * m * n / lanes
/// load_side = load_issue * (k * vector-side vectors per row + k * scalar-side elements)
///           + fill(vector side) * lines(vector side) + ceil(fill(scalar side) * bytes(scalar side) / line)
/// stall     = max(0, load_side - fma_side)
/// ```
///
/// A 2-row, 4-vector block streaming `rhs` rows from L2 (x86: `per_unit` 2, `load_issue` 2, L2
/// `fill_cost_per_line` 7) loads 6 times and brings 2 lines per 8 multiply-adds: 26 against 16,
/// a stall of 10 per step; a 6-row, 2-vector block loads 8 times and brings 1 line per 12: 23
/// against 24, none.
///
/// The vector side is a strided stream (its level's `strided_fill_cost_per_line`) only where its
/// every row is a run of its own (a column of a wider matrix) and those rows are more than half a
/// page apart ([`crate::cost::rows_on_their_own_pages`]); at shorter pitches the prefetchers keep a
/// column's stream as fast as a contiguous one. `lines(vector side)` counts every line its rows
/// touch ([`crate::cost::lines_touched`]): a column of a matrix whose pitch is off the line grid
/// straddles a line more in some rows. The stall is the register block's own: the same under a
/// loop, a move or a block.
///
/// 0 for any spec that is not a register block (an input already in registers loads nothing).
pub fn register_step_stall(spec: &LogicalSpec, target: &Target) -> Cost {
    step_sides(spec, target).map_or(0, |(fma_side, load_side)| load_side.saturating_sub(fma_side))
}

/// What a block over `stages` adds for register blocks among them: each one's
/// [`register_step_stall`] when `parent` is not itself a register block. A block's register block
/// runs the whole reduction from registers it zeroed or loaded, and waits for its loads as a loop
/// of its steps would: streaming `rhs` rows from L2 rather than from a panel resident in L1 costs
/// the cycles that L1-resident panels save (`docs/cost-model.md`, "Register blocks").
pub fn block_stalls<'a>(
    parent: &LogicalSpec,
    stages: impl IntoIterator<Item = &'a LogicalSpec>,
    target: &Target,
) -> Cost {
    if is_register_block(parent, target) {
        return 0;
    }
    stages.into_iter().fold(0, |acc: Cost, s| acc.saturating_add(register_step_stall(s, target)))
}

/// The level whose fill a register block's vector side pays: its own, unless that is a cache
/// where the vector side's and the scalar side's lines together crowd some set beyond its ways
/// (the scalar side's rows pass through that cache as they are broadcast). Then the vector side
/// cannot stay resident and is refilled, line by line, from the fastest level that moves into
/// its own. The sum of each side's fullest set bounds the fullest set of both.
fn refill_level<'a>(
    vector_side: &TensorSpec,
    scalar_side: &TensorSpec,
    target: &'a Target,
) -> &'a MemoryLevel {
    let level = target.level(vector_side.level);
    let crowded = level.kind == LevelKind::Cache
        && target.level(scalar_side.level).kind != LevelKind::ScalarRegisters
        && level.geometry.is_some_and(|g| {
            fullest_set(vector_side, g).saturating_add(fullest_set(scalar_side, g)) > u64::from(g.ways)
        });
    if !crowded {
        return level;
    }
    target
        .level_ids()
        .filter(|&id| target.level(id).moves_to.contains(&vector_side.level))
        .map(|id| target.level(id))
        .filter(|l| matches!(l.kind, LevelKind::Cache | LevelKind::Memory))
        .last()
        .unwrap_or(level)
}

/// Whether `spec` is a register block ([`register_step_stall`]): a `MatmulAccum [1, m, k, n]`
/// accumulating into vector registers, its vectors along `m` or `n`, with neither input in them.
pub fn is_register_block(spec: &LogicalSpec, target: &Target) -> bool {
    step_sides(spec, target).is_some()
}

/// What a node over `child` adds for it: the child's [`register_step_stall`] when the child is a
/// register block and `parent` is not (a block's own sub-blocks are part of its count).
pub fn step_stall(parent: &LogicalSpec, child: &LogicalSpec, target: &Target) -> Cost {
    if is_register_block(parent, target) { 0 } else { register_step_stall(child, target) }
}

/// What a loop over `spec` adds for register-block steps among its bodies
/// ([`step_stall`]): each full tile's stall as often as the body runs on one
/// thread, each boundary body's once. A serial loop over the reduction (its bodies have fewer
/// steps `k` than `spec`) also adds the wait of the accumulation chain it runs in pieces, less what
/// the pieces add for theirs (`chain_wait`), so that a chain split again and again pays its wait
/// once, at the loop that splits its whole `k`.
pub fn loop_stalls<'a>(
    spec: &LogicalSpec,
    body: &LogicalSpec,
    boundaries: impl IntoIterator<Item = &'a LogicalSpec>,
    iterations: u64,
    parallel: bool,
    target: &Target,
) -> Cost {
    let runs = if parallel { iterations.div_ceil(u64::from(target.processors())) } else { iterations };
    // A serial loop over the reduction runs one chain in pieces: it pays the whole chain's wait,
    // less what its pieces pay for theirs.
    let chain = !parallel && reduction_steps(body) < reduction_steps(spec);
    let wait = |piece: &LogicalSpec| if chain { chain_wait(piece, target) } else { 0 };
    let first = (step_stall(spec, body, target).saturating_mul(runs), wait(body).saturating_mul(runs));
    let (stalls, pieces) = boundaries.into_iter().fold(first, |(stalls, pieces), b| {
        (stalls.saturating_add(step_stall(spec, b, target)), pieces.saturating_add(wait(b)))
    });
    if !chain {
        return stalls;
    }
    stalls.saturating_add(chain_wait(spec, target).saturating_sub(pieces))
}

/// The steps `k` of a matmul `[1, m, k, n]`; 0 for anything else.
fn reduction_steps(spec: &LogicalSpec) -> u32 {
    match (spec.kind, spec.shape.dims()) {
        (PrimitiveKind::Matmul { .. }, [1, _, k, _]) => *k,
        _ => 0,
    }
}

/// What an accumulation chain waits for its multiply-adds' latency beyond what its multiply-adds
/// and, for a register block, its loads take ([`chain_sides`], [`register_step_stall`]): 0 where
/// those are the longer, or for a spec that is no chain.
fn chain_wait(spec: &LogicalSpec, target: &Target) -> Cost {
    let Some((fma_side, latency)) = chain_sides(spec, target) else { return 0 };
    let busy = step_sides(spec, target).map_or(fma_side, |(_, load_side)| load_side.max(fma_side));
    latency.saturating_sub(busy)
}

/// The largest credit [`shared_loads`] gives (the search keeps credits in 32 bits); only a
/// target file with enormous constants reaches it, and then the loop is priced dearer, never
/// below its bodies.
pub const MAX_CREDIT: Cost = u32::MAX as Cost;

/// What a loop's bodies share: loads into registers counted in every body and made once, and the
/// registers that keep them ([`shared_loads`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SharedLoads {
    /// What the bodies' costs count more than once: subtracted from the loop's.
    pub credit: Cost,
    /// The registers the loop holds while its bodies run: the shared values beside the one each
    /// body holds.
    pub held: MemVec,
}

/// What a serial loop over one step of a register block saves by loading what every body loads
/// once: the bodies count a load of the same values into registers each, and the compiler, which
/// unrolls code over vector registers, keeps them in registers for all of them
/// (`docs/cost-model.md`, "Shared loads").
///
/// A *step* is a `MatmulAccum [1, m, 1, n]` with its output in vector registers: in row form
/// (vectors along `n`) its `m` elements of `lhs` are broadcast and its `n / lanes` vectors of
/// `rhs` loaded, in column form (along `m`) its `n` elements of `rhs` and its `m / lanes` vectors
/// of `lhs`. A loop over it that tiles only one of the two dimensions leaves the other side the
/// same in every body, and where that side is outside the registers, its loads are shared:
///
/// - tiling the vectors, the bodies' [`BroadcastVecMultAdd`](KernelKind::BroadcastVecMultAdd)s
///   broadcast the same scalars;
/// - tiling the scalars, the bodies move the same row of vectors into registers.
///
/// ```text
/// broadcasts: credit = (bodies - 1) * scalars * (fixed + move_cost(one scalar))
///             held   = scalars - 1
/// vectors:    credit = (bodies - 1) * (alloc_cost(row into registers) + VectorAssign's cost of it)
///             held   = vectors - 1
/// ```
///
/// (`held` in registers at the output's level, `credit` at most [`MAX_CREDIT`]), with `fixed` the
/// kernel's constant for the output's dtype (f32, u32 or i32, as its inputs'); only where the
/// shared values fit in the registers beside the accumulators and one more (`output vectors +
/// shared + 1 <= the level's registers`), and otherwise nothing, as for every other loop. A 6 x 64
/// f32 step split into four 16-wide columns (x86: `fixed` 0, an L1 line 2) shares 3 * 6 * 2 = 36
/// and holds 5 registers; split into rows of 4 and 2, it shares one load of its 4 `rhs` vectors
/// from L2 (a move at 8 and a `VectorAssign` at 12) and holds 3: either costs what the whole row
/// does, in more registers.
pub fn shared_loads(
    spec: &LogicalSpec,
    body: &LogicalSpec,
    boundaries: usize,
    iterations: u64,
    parallel: bool,
    target: &Target,
) -> SharedLoads {
    let none = SharedLoads::default();
    if parallel || spec.kind != (PrimitiveKind::Matmul { accum: true }) {
        return none;
    }
    let ([1, m, 1, n], [1, body_m, 1, body_n]) = (spec.shape.dims(), body.shape.dims()) else { return none };
    let (lhs, rhs, out) = (&spec.operands[0], &spec.operands[1], &spec.operands[2]);
    // Only this kernel's dtypes: bf16 steps have a kernel of their own, with its own costs.
    let dtypes = matches!(out.dtype, Dtype::F32 | Dtype::U32 | Dtype::I32)
        && lhs.dtype == out.dtype
        && rhs.dtype == out.dtype;
    let Some(lanes) = out.vector_size else { return none };
    if !dtypes || !in_vector_registers(out, target) {
        return none;
    }
    let (row, column) = (vectors_along(out, 2), vectors_along(out, 1));
    let keeps_m = body_m == m && body_n < n;
    let keeps_n = body_n == n && body_m < m;
    // The side the bodies share, `shared` values of it (scalars or vectors), and what each body
    // pays to bring them into registers.
    let (side, shared, per_body) = if (row && keeps_m) || (column && keeps_n) {
        // The scalar side is the same in every body: its broadcasts.
        let (scalar_side, scalars) = if row { (lhs, u64::from(*m)) } else { (rhs, u64::from(*n)) };
        let fixed = target.costs().kernel_for(KernelKind::BroadcastVecMultAdd, out.dtype).fixed;
        let element = element_move_cost(target.level(scalar_side.level));
        (scalar_side, scalars, scalars.saturating_mul(fixed.saturating_add(element)))
    } else if (row && keeps_n) || (column && keeps_m) {
        // The vector side is the same in every body: its row of vectors.
        let (vector_side, length) = if row { (rhs, *n) } else { (lhs, *m) };
        let vectors = u64::from(length / lanes);
        (vector_side, vectors, vector_load_cost(vector_side, out, vectors, target))
    } else {
        return none;
    };
    let registers = target.level(out.level).capacity;
    if in_vector_registers(side, target) || shared == 0 || output_vectors(spec) + shared + 1 > registers {
        return none;
    }
    let bodies = iterations.saturating_add(u64::try_from(boundaries).unwrap_or(u64::MAX));
    SharedLoads {
        credit: bodies.saturating_sub(1).saturating_mul(per_body).min(MAX_CREDIT),
        held: MemVec::single(out.level, shared - 1),
    }
}

/// The least a body can pay to bring `side`, `vectors` whole vectors, into registers like `out`'s:
/// a move's [`alloc_cost`] and its `VectorAssign`, from `side`'s level or from any faster level
/// it could be moved to first, whichever is cheapest (a move there costs nothing less than
/// nothing), so that a credit of this much never exceeds what a body pays.
fn vector_load_cost(side: &TensorSpec, out: &TensorSpec, vectors: u64, target: &Target) -> Cost {
    let assign = target.costs().kernel_for(KernelKind::VectorAssign, side.dtype);
    let from = |level: LevelId| {
        let source = TensorSpec { level, ..side.clone() };
        let destination = TensorSpec { level: out.level, vector_size: out.vector_size, ..side.clone() };
        alloc_cost(&source, &destination, false, target)
            .saturating_add(assign.fixed)
            .saturating_add(assign.per_unit.saturating_mul(vectors))
            .saturating_add(vector_move_cost(&source, target))
    };
    let mut levels = vec![side.level];
    let mut cheapest = Cost::MAX;
    while let Some(level) = levels.pop() {
        let moves_to = &target.level(level).moves_to;
        if moves_to.contains(&out.level) {
            cheapest = cheapest.min(from(level));
        }
        levels.extend(
            moves_to
                .iter()
                .filter(|&&d| matches!(target.level(d).kind, LevelKind::Cache | LevelKind::Memory)),
        );
    }
    if cheapest == Cost::MAX { 0 } else { cheapest }
}

/// An accumulation chain's multiply-add side and latency side, or `None` if `spec` is not one: a
/// `MatmulAccum [1, m, k, n]` over `k > 1` steps, whatever its operands' levels
/// (`docs/cost-model.md`, "Accumulation chains"). Its accumulators are its output's vectors: in
/// vector registers, their own; elsewhere, as many as the widest vectors of its dtype cover (a
/// loop over its `k` moves them into registers and back for each piece, and the chain runs on
/// through memory).
///
/// Each accumulator waits for its previous multiply-add, so a step of fewer than the target's
/// `fma_chains` accumulators takes that many multiply-adds' time; but the core also runs ahead
/// into the next chains (the next rows of a loop), and a chain whose `fmas = accumulators * k`
/// are fewer than the target's `fma_window` shares the wait with the `fma_window / k` chains'
/// accumulators in flight:
///
/// ```text
/// fma_side = per_unit * accumulators * k
/// latency  = per_unit * fma_chains * k                     (fmas >= fma_window)
///          = per_unit * fma_chains * k * fmas / fma_window   (fewer)
/// ```
fn chain_sides(spec: &LogicalSpec, target: &Target) -> Option<(Cost, Cost)> {
    if spec.kind != (PrimitiveKind::Matmul { accum: true }) {
        return None;
    }
    let [1, _, k, _] = spec.shape.dims() else { return None };
    let out = spec.output();
    if *k < 2 {
        return None;
    }
    let accumulators = match out.vector_size {
        Some(_) if in_vector_registers(out, target) => output_vectors(spec),
        _ => {
            let bytes = widest_vector_level(target).map_or(0, |(_, bytes)| bytes);
            let lanes = u64::from(bytes / out.dtype.size_bytes()).max(1);
            out.shape.volume().div_ceil(lanes)
        }
    };
    let costs = target.costs();
    let step = StepKernel::of(spec, target);
    let (k, per_unit) = (u64::from(k.div_ceil(step.strip)), step.per_unit(target));
    let fmas = accumulators.saturating_mul(k);
    let latency = per_unit.saturating_mul(costs.fma_chains).saturating_mul(k);
    let latency =
        if fmas >= costs.fma_window { latency } else { latency.saturating_mul(fmas) / costs.fma_window };
    Some((per_unit.saturating_mul(fmas), latency))
}

/// A register block's multiply-add side and load side, or `None` if `spec` is not one.
fn step_sides(spec: &LogicalSpec, target: &Target) -> Option<(Cost, Cost)> {
    if spec.kind != (PrimitiveKind::Matmul { accum: true }) {
        return None;
    }
    let [1, m, k, n] = spec.shape.dims() else { return None };
    let (lhs, rhs, out) = (&spec.operands[0], &spec.operands[1], &spec.operands[2]);
    let lanes = out.vector_size?;
    if !in_vector_registers(out, target)
        || in_vector_registers(lhs, target)
        || in_vector_registers(rhs, target)
    {
        return None;
    }
    let step = StepKernel::of(spec, target);
    // Steps of the block: an int8 kernel sums `strip` values of `k` in each.
    let k = u64::from(k.div_ceil(step.strip));
    // Row form: vectors along n (rhs rows loaded, lhs broadcast); column form: along m.
    let (vector_side, scalar_side, vectors, scalars) = if vectors_along(out, 2) {
        (rhs, lhs, k * u64::from(*n / lanes), k * u64::from(*m))
    } else if vectors_along(out, 1) {
        (lhs, rhs, k * u64::from(*m / lanes), k * u64::from(*n))
    } else {
        return None;
    };
    let costs = target.costs();
    let fma_side = step.per_unit(target).saturating_mul(output_vectors(spec)).saturating_mul(k);
    // A vector side whose every row is a run of its own (a column of a wider matrix), those rows
    // on pages of their own, is a strided stream; a packed panel or a whole matrix is read as a few
    // long runs.
    let (runs, _) = vector_side.runs();
    let strided = runs > 1 && runs >= k && rows_on_their_own_pages(vector_side, target);
    // Refilled from a slower level, a line costs at least what its own level's fill does (main
    // memory's fill is 0: its misses are priced where data moves, not here).
    let vector_fill = refill_level(vector_side, scalar_side, target)
        .fill_cost(strided)
        .max(target.level(vector_side.level).fill_cost(strided));
    let lines = lines_touched(vector_side, target.cache_line_bytes());
    let mut load_side =
        costs.load_issue.saturating_mul(vectors).saturating_add(vector_fill.saturating_mul(lines));
    if target.level(scalar_side.level).kind != LevelKind::ScalarRegisters {
        let fill = target.level(scalar_side.level).fill_cost_per_line;
        let bytes = scalar_side.shape.volume() * u64::from(scalar_side.dtype.size_bytes());
        load_side = load_side
            .saturating_add(costs.load_issue.saturating_mul(scalars))
            .saturating_add(fill.saturating_mul(bytes).div_ceil(u64::from(target.cache_line_bytes())));
    }
    Some((fma_side, load_side))
}

/// The kernel a register block's steps run, by the block's dtypes and the target: the x86 int8
/// dot products (where the lhs is u8, `BroadcastQuadDot` where the target has AVX-512 VNNI and
/// the output's vectors are its 16 i32 lanes, `BroadcastQuadDotAvx` where it has AVX-VNNI and
/// they are 8; else `BroadcastPairDot` where it has AVX2), which sum
/// `strip` values of `k` per lane in one step, or `BroadcastVecMultAdd`, one value of `k` per
/// step.
#[derive(Debug, Clone, Copy)]
struct StepKernel {
    kernel: KernelKind,
    /// The dtype whose constants the step pays (`KernelKind::cost`'s: the int8 kernels' lhs;
    /// the output's for `BroadcastVecMultAdd`, whose bf16 blocks pay f32 multiply-adds).
    dtype: Dtype,
    /// Values of `k` per step.
    strip: u32,
}

impl StepKernel {
    fn of(spec: &LogicalSpec, target: &Target) -> StepKernel {
        let (lhs, rhs, out) = (&spec.operands[0], &spec.operands[1], &spec.operands[2]);
        let int8 =
            matches!(lhs.dtype, Dtype::U8 | Dtype::I8) && rhs.dtype == Dtype::I8 && out.dtype == Dtype::I32;
        if !int8 {
            return StepKernel { kernel: KernelKind::BroadcastVecMultAdd, dtype: out.dtype, strip: 1 };
        }
        let offers = |kernel: KernelKind| kernel.required_isa().iter().all(|f| target.has_isa(*f));
        let pair = KernelKind::BroadcastPairDot;
        let quad =
            [(KernelKind::BroadcastQuadDot, QUAD_LANES), (KernelKind::BroadcastQuadDotAvx, QUAD_AVX_LANES)]
                .into_iter()
                .find(|&(kernel, lanes)| offers(kernel) && out.vector_size.is_none_or(|l| l == lanes));
        if let (Dtype::U8, Some((kernel, _))) = (lhs.dtype, quad) {
            StepKernel { kernel, dtype: lhs.dtype, strip: QUAD }
        } else if offers(pair) {
            StepKernel { kernel: pair, dtype: lhs.dtype, strip: PAIR }
        } else {
            // A target with neither (no x86 int8 kernel): priced as one value of `k` per step.
            StepKernel { kernel: KernelKind::BroadcastVecMultAdd, dtype: out.dtype, strip: 1 }
        }
    }

    /// The kernel's cost per output vector and step.
    fn per_unit(self, target: &Target) -> Cost {
        target.costs().kernel_for(self.kernel, self.dtype).per_unit
    }
}

#[cfg(test)]
mod tests;
