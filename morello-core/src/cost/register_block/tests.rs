//! Tests of the register-block cost model: load-side stalls, accumulation chains, shared loads.

use super::*;
use crate::target::Target;

fn avx2() -> Target {
    Target::builtin("x86-avx2", 2).unwrap()
}

/// The register-block bound (docs/cost-model.md, "Register blocks"): streaming `rhs` rows from L2,
/// a 2-row, 4-vector block waits on its loads (6 loads and 2 L2 lines per 8 FMAs: 26 against
/// 16), a 6-row, 2-vector block does not (8 loads and 1 line per 12 FMAs: 23 against 24); from
/// L1 neither does; a spec that is not a register block, or whose parent is one, adds nothing.
#[test]
fn register_blocks_pay_for_loads_beyond_their_fmas() {
    let t = avx2();
    let stall = |text: &str| {
        let spec = LogicalSpec::parse(text, &t).unwrap().canonicalize(&t).unwrap();
        register_step_stall(&spec, &t)
    };
    let block = |m: u32, k: u32, n: u32, rhs: &str| {
        format!("MatmulAccum(1x{m}x{k}x{n}, f32 L1 row-major, f32 {rhs} row-major, f32 VRF row-major v8)")
    };
    assert_eq!(stall(&block(2, 1, 32, "L2")), 10);
    assert_eq!(stall(&block(2, 128, 32, "L2")), 10 * 128);
    assert_eq!(stall(&block(6, 1, 16, "L2")), 0);
    assert_eq!(stall(&block(4, 1, 16, "L2")), 3);
    assert_eq!(stall(&block(2, 1, 32, "L1")), 0);
    // The rhs row already in registers: the block loads nothing of it, and is not a register block.
    assert_eq!(
        stall("MatmulAccum(1x2x1x32, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v8)"),
        0
    );
    let parent = LogicalSpec::parse(&block(2, 128, 32, "L2"), &t).unwrap().canonicalize(&t).unwrap();
    let child = LogicalSpec::parse(&block(2, 1, 32, "L2"), &t).unwrap().canonicalize(&t).unwrap();
    assert_eq!(step_stall(&parent, &child, &t), 0);
    let outer = LogicalSpec::parse(
        "MatmulAccum(1x2x128x32, f32 L1 row-major, f32 L2 row-major, f32 L2 row-major)",
        &t,
    )
    .unwrap()
    .canonicalize(&t)
    .unwrap();
    assert_eq!(step_stall(&outer, &parent, &t), 10 * 128);
}

/// A vector side read as a strided stream (each row of `rhs` a run of its own: a column of a wider
/// matrix, its rows more than half a page apart) pays L2's `strided_fill_cost_per_line` (11 on the
/// built-in targets) per line, the same lines as one run pay `fill_cost_per_line` (7): a 6-row,
/// 2-vector block over 128 steps, which keeps up with a contiguous panel, waits 3 per step on a
/// column of a 1024-wide `rhs` (rows 4 KiB apart) and none on one of a 256-wide `rhs` (1 KiB).
#[test]
fn a_strided_vector_side_pays_the_strided_fill() {
    let t = avx2();
    let l2 = t.level(t.level_id("L2").unwrap());
    assert_eq!((l2.fill_cost(false), l2.fill_cost(true)), (7, 11));
    let stall = |rhs: &str| {
        let text = format!("MatmulAccum(1x6x128x16, f32 L1 row-major, f32 {rhs}, f32 VRF row-major v8)");
        let spec = LogicalSpec::parse(&text, &t).unwrap().canonicalize(&t).unwrap();
        register_step_stall(&spec, &t)
    };
    assert_eq!(stall("L2 row-major"), 0);
    assert_eq!(stall("L2 row-major c1 s1024"), 3 * 128);
    assert_eq!(stall("L2 row-major c1 s256"), 0);
    // One row is one run whatever the pitch: no stream to stride.
    let one_row = "MatmulAccum(1x6x1x16, f32 L1 row-major, f32 L2 row-major c1 s1024, f32 VRF row-major v8)";
    let spec = LogicalSpec::parse(one_row, &t).unwrap().canonicalize(&t).unwrap();
    assert_eq!(register_step_stall(&spec, &t), 0);
}

/// A block's register block pays its whole stall (docs/cost-model.md, "Register blocks"), the same
/// stall a loop or a move over it pays: a 2-row, 4-vector block over 128 steps of a column of a
/// 1024-wide `rhs` stalls 18 a step (two lines at 11), of one run or of a column at a 1 KiB pitch
/// 10 (two lines at 7), under a block and a move alike; a 6 x 2 block keeps up with a contiguous
/// stream and with a column at a 1 KiB pitch, and waits 3 a step on one at 4 KiB; a parent that is
/// itself a register block adds nothing, as for loops.
#[test]
fn a_block_pays_its_register_blocks_whole_stall() {
    let t = avx2();
    let parse = |text: &str| LogicalSpec::parse(text, &t).unwrap().canonicalize(&t).unwrap();
    let block = |m: u32, n: u32, rhs: &str| {
        parse(&format!("MatmulAccum(1x{m}x128x{n}, f32 L1 row-major, f32 {rhs}, f32 VRF row-major v8)"))
    };
    let wide = block(2, 32, "L2 row-major c1 s1024");
    assert_eq!(register_step_stall(&wide, &t), 18 * 128);
    assert_eq!(register_step_stall(&block(2, 32, "L2 row-major"), &t), 10 * 128);
    assert_eq!(register_step_stall(&block(6, 16, "L2 row-major"), &t), 0);
    assert_eq!(register_step_stall(&block(6, 16, "L2 row-major c1 s256"), &t), 0);
    assert_eq!(register_step_stall(&block(6, 16, "L2 row-major c1 s1024"), &t), 3 * 128);
    let zero = parse("FillZero(1x2x32, f32 VRF row-major v8)");
    let parent =
        parse("Matmul(1x2x128x32, f32 L1 row-major, f32 L2 row-major c1 s1024, f32 VRF row-major v8)");
    assert_eq!(block_stalls(&parent, [&*zero, &*wide], &t), 18 * 128);
    // The same register block under a move of its output pays the same (docs/cost-model.md).
    let near = block(2, 32, "L2 row-major c1 s256");
    let moved = parse(
        "MatmulAccum(1x2x128x32, f32 L1 row-major, f32 L2 row-major c1 s256, f32 L2 row-major c1 s256)",
    );
    assert_eq!(step_stall(&moved, &near, &t), 10 * 128);
    let blocked =
        parse("Matmul(1x2x128x32, f32 L1 row-major, f32 L2 row-major c1 s256, f32 VRF row-major v8)");
    assert_eq!(block_stalls(&blocked, [&*zero, &*near], &t), 10 * 128);
    let accum =
        parse("MatmulAccum(1x2x256x32, f32 L1 row-major, f32 L2 row-major c1 s1024, f32 VRF row-major v8)");
    assert_eq!(block_stalls(&accum, [&*wide], &t), 0);
}

/// A vector side in L1 stays there only if the scalar side's rows, which pass through L1 as they
/// are broadcast, leave it room: a 64 x 64 panel of `rhs` (4 lines in each of the 64 sets of
/// `x86-avx512`'s 8-way L1) beside 6 rows of `lhs` 1 KiB apart (2 lines in a set at most) streams
/// from L1 and keeps up; beside rows 4 KiB apart (all 6 in the same 4 sets: 10 lines there) it is
/// refilled from L2 at L2's fill per line, 7 (4 lines a step: 20 loads and broadcasts, 28 of
/// fill and about 3 of `lhs` against 48 multiply-adds).
#[test]
fn a_vector_side_crowded_out_of_l1_pays_l2s_fill() {
    let t = Target::builtin("x86-avx512", 1).unwrap();
    let stall = |lhs: &str| {
        let text = format!("MatmulAccum(1x6x64x64, f32 {lhs}, f32 L1 row-major, f32 VRF row-major v16)");
        register_step_stall(&LogicalSpec::parse(&text, &t).unwrap().canonicalize(&t).unwrap(), &t)
    };
    assert_eq!(stall("L2 row-major c1 s256"), 0);
    assert_eq!(stall("L2 row-major c1 s1024"), 20 * 64 + 7 * 256 + 7 * 24 - 48 * 64);
}

/// A vector side crowded out of L2 is refilled from main memory, whose fill is 0; its lines still
/// pay at least L2's own fill (docs/cost-model.md, "A panel crowded out of L1"): a 6-row block over
/// 64 steps of a column of `rhs` whose rows are 64 KiB apart (all 64 lines in one set of
/// `x86-avx512`'s 16-way L2; a pitch of a whole set period, which the canonical pitch does not
/// count as strided) pays L2's fill, 7 a line, not main memory's 0: 64 loads and 384
/// broadcasts at 2, 64 lines at 7 and 24 lines of `lhs` at 7, against 384 multiply-adds at 2.
#[test]
fn a_vector_side_crowded_out_of_l2_pays_at_least_l2s_fill() {
    let t = Target::builtin("x86-avx512", 1).unwrap();
    let text = "MatmulAccum(1x6x64x16, f32 L2 row-major c1 s16384, f32 L2 row-major c1 s16384, f32 VRF row-major v16)";
    let spec = LogicalSpec::parse(text, &t).unwrap().canonicalize(&t).unwrap();
    assert_eq!(register_step_stall(&spec, &t), 2 * (64 + 384) + 7 * 64 + 7 * 24 - 2 * 384);
}

/// Each accumulator waits for its previous multiply-add (docs/cost-model.md, "Accumulation
/// chains"; `fma_chains` 10 and `fma_window` 128 on the built-in x86 targets, `per_unit` 2), and a
/// loop over the reduction pays the whole chain's wait less its pieces': one accumulator over 128
/// steps waits for 10 chains' time a step (2560 against 256); over 16 steps it shares the wait with
/// the chains after it (16 multiply-adds of a window of 128: 40 against 32), so 128 steps in pieces
/// of 16 add 2304 - 8 * 8; a 4 x 2 register block from L1 (8 accumulators) waits 4 a step, one
/// that waits longer on its loads (2 x 4 from L2) and a 6 x 2 one not at all; an output in L1 keeps
/// its chain through memory (2 accumulators of 8 lanes); a loop over rows or a parallel loop adds
/// nothing.
#[test]
fn accumulation_chains_wait_for_their_latency() {
    let t = avx2();
    assert_eq!((t.costs().fma_chains, t.costs().fma_window), (10, 128));
    let parse = |text: &str| LogicalSpec::parse(text, &t).unwrap().canonicalize(&t).unwrap();
    let chain = |m: u32, k: u32| {
        parse(&format!(
            "MatmulAccum(1x{m}x{k}x8, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v8)"
        ))
    };
    let over = |spec: &LogicalSpec, body: &LogicalSpec, iterations: u64| {
        loop_stalls(spec, body, std::iter::empty(), iterations, false, &t)
    };
    assert_eq!(over(&chain(1, 128), &chain(1, 1), 128), 2560 - 256);
    assert_eq!(over(&chain(1, 16), &chain(1, 1), 16), 40 - 32);
    assert_eq!(over(&chain(1, 128), &chain(1, 16), 8), 2304 - 8 * 8);
    assert_eq!(loop_stalls(&chain(1, 128), &chain(1, 1), std::iter::empty(), 128, true, &t), 0);
    assert_eq!(over(&chain(2, 64), &chain(1, 64), 2), 0);
    let block = |m: u32, k: u32, n: u32, rhs: &str| {
        parse(&format!(
            "MatmulAccum(1x{m}x{k}x{n}, f32 L1 row-major, f32 {rhs} row-major, f32 VRF row-major v8)"
        ))
    };
    assert_eq!(over(&block(4, 128, 16, "L1"), &block(4, 1, 16, "L1"), 128), 4 * 128);
    assert_eq!(over(&block(2, 128, 32, "L2"), &block(2, 1, 32, "L2"), 128), 0);
    assert_eq!(over(&block(6, 128, 16, "L1"), &block(6, 1, 16, "L1"), 128), 0);
    let in_l1 = |k: u32| {
        parse(&format!("MatmulAccum(1x2x{k}x8, f32 L1 row-major, f32 L1 row-major, f32 L1 row-major)"))
    };
    assert_eq!(over(&in_l1(64), &in_l1(4), 16), 1280 - 256);
}

/// A loop over one step of a register block that tiles only the vector dimension shares its
/// bodies' broadcasts (docs/cost-model.md, "Shared loads"): a 6 x 64 step on `x86-avx512` in
/// four 16-wide columns shares 3 bodies' six broadcasts at 2 each (`fixed` 0, an L1 line 2) and
/// holds 5 more registers; in
/// column form the `rhs` scalars are shared. Nothing is shared when the loop also tiles the
/// scalars, when the step has more than one `k`, when the broadcasts would not fit beside the
/// accumulators, or when the loop is parallel.
#[test]
fn a_loop_over_a_steps_columns_shares_its_broadcasts() {
    let t = Target::builtin("x86-avx512", 1).unwrap();
    let vrf = t.level_id("VRF").unwrap();
    let parse = |text: &str| LogicalSpec::parse(text, &t).unwrap().canonicalize(&t).unwrap();
    let step = |m: u32, k: u32, n: u32| {
        parse(&format!(
            "MatmulAccum(1x{m}x{k}x{n}, f32 L1 row-major, f32 L1 row-major, f32 VRF row-major v16)"
        ))
    };
    let shared = |spec: &LogicalSpec, body: &LogicalSpec, boundaries: usize, iterations: u64| {
        shared_loads(spec, body, boundaries, iterations, false, &t)
    };
    let row = shared(&step(6, 1, 64), &step(6, 1, 16), 0, 4);
    assert_eq!(row, SharedLoads { credit: 3 * 6 * 2, held: MemVec::single(vrf, 5) });
    // A boundary body shares them too: 48 + 16 columns.
    assert_eq!(shared(&step(6, 1, 64), &step(6, 1, 48), 1, 1).credit, 6 * 2);
    // Tiling the rows changes the scalars; more than one k is a loop the compiler keeps.
    assert_eq!(shared(&step(6, 1, 64), &step(3, 1, 16), 0, 8), SharedLoads::default());
    assert_eq!(shared(&step(6, 4, 64), &step(6, 4, 16), 0, 4), SharedLoads::default());
    // 28 accumulators, 7 broadcasts and a vector of `rhs` are more than 32 registers.
    assert_eq!(shared(&step(7, 1, 64), &step(7, 1, 16), 0, 4), SharedLoads::default());
    assert_eq!(shared_loads(&step(6, 1, 64), &step(6, 1, 16), 0, 4, true, &t), SharedLoads::default());
    // Column form: vectors along m, each of the 4 `rhs` scalars broadcast.
    let column = |m: u32| {
        parse(&format!("MatmulAccum(1x{m}x1x4, f32 L1 col-major, f32 L1 row-major, f32 VRF col-major v16)"))
    };
    assert_eq!(shared(&column(64), &column(32), 0, 2).credit, 4 * 2);
    // bf16 inputs take a kernel of their own.
    let bf16 = parse("MatmulAccum(1x6x1x64, bf16 L1 row-major, bf16 L1 row-major, f32 VRF row-major v16)");
    let bf16_body =
        parse("MatmulAccum(1x6x1x16, bf16 L1 row-major, bf16 L1 row-major, f32 VRF row-major v16)");
    assert_eq!(shared(&bf16, &bf16_body, 0, 4), SharedLoads::default());
}

/// A loop over one step of a register block that tiles only the scalar dimension shares its
/// bodies' loads of the vector side (docs/cost-model.md, "Shared loads"): a 6 x 64 step on
/// `x86-avx512` in rows of 2 loads the same 4 `rhs` vectors in each of its 3 bodies, and from L2
/// each load costs 20 (a move at 2 a line and a `VectorAssign` at 1 a vector and 2 a line), so the
/// loop shares 2 * 20 and holds 3 more registers. From main memory the least a body can pay is
/// the same load from a faster cache, so the credit is no larger. Nothing is shared when the side
/// is already in registers, when the row would not fit beside the accumulators, or when the loop
/// is parallel.
#[test]
fn a_loop_over_a_steps_rows_shares_its_vector_loads() {
    let t = Target::builtin("x86-avx512", 1).unwrap();
    let vrf = t.level_id("VRF").unwrap();
    let parse = |text: &str| LogicalSpec::parse(text, &t).unwrap().canonicalize(&t).unwrap();
    let step = |m: u32, n: u32, rhs: &str| {
        parse(&format!("MatmulAccum(1x{m}x1x{n}, f32 L1 row-major, f32 {rhs}, f32 VRF row-major v16)"))
    };
    let shared = |spec: &LogicalSpec, body: &LogicalSpec, boundaries: usize, iterations: u64| {
        shared_loads(spec, body, boundaries, iterations, false, &t)
    };
    let rows = shared(&step(6, 64, "L2 row-major"), &step(2, 64, "L2 row-major"), 0, 3);
    assert_eq!(rows, SharedLoads { credit: 2 * 20, held: MemVec::single(vrf, 3) });
    // Rows of 4 and a boundary of 2: one body's load is shared.
    assert_eq!(shared(&step(6, 64, "L2 row-major"), &step(4, 64, "L2 row-major"), 1, 1).credit, 20);
    assert_eq!(shared(&step(6, 64, "GL row-major"), &step(2, 64, "GL row-major"), 0, 3).credit, 2 * 20);
    let in_registers = step(6, 64, "VRF row-major v16");
    assert_eq!(shared(&in_registers, &step(2, 64, "VRF row-major v16"), 0, 3), SharedLoads::default());
    // 28 accumulators, a row of 4 vectors and a broadcast are more than 32 registers.
    assert_eq!(
        shared(&step(7, 64, "L2 row-major"), &step(1, 64, "L2 row-major"), 0, 7),
        SharedLoads::default()
    );
    assert_eq!(
        shared_loads(&step(6, 64, "L2 row-major"), &step(2, 64, "L2 row-major"), 0, 3, true, &t),
        SharedLoads::default()
    );
}

/// An int8 register block's steps are its kernel's (docs/cost-model.md, "Register blocks"): a
/// `BroadcastQuadDot` on `x86-avx512` sums four values of `k` per lane, so a block over 256 of
/// `k` runs 64 steps at the kernel's 2 per output vector, each loading one 64-byte `rhs` vector
/// per output vector and broadcasting one 32-bit word of `lhs` per row. One row of 16 vectors
/// streaming a 256 x 256 VNNI `rhs` from L2 (1,024 lines at 7) loads 2 * (1,024 + 64) + 7,168 =
/// 9,344 against 2 * 16 * 64 = 2,048 multiply-adds: it waits 7,296. Six rows of 4 vectors over a
/// 256 x 64 panel in L1 load 2 * (256 + 384) = 1,280 against 3,072: none. Its chains: one
/// accumulator over 64 steps waits as 64 of the 128-wide window would, 2 * 10 * 64 / 2 = 640,
/// less its 128 of multiply-adds.
#[test]
fn int8_register_blocks_count_steps_of_four_values_of_k() {
    let t = Target::builtin("x86-avx512", 1).unwrap();
    let parse = |text: &str| LogicalSpec::parse(text, &t).unwrap().canonicalize(&t).unwrap();
    let block = |m: u32, n: u32, rhs: &str| {
        parse(&format!(
            "MatmulAccum(1x{m}x256x{n}, u8 L1 row-major, i8 {rhs} [0, 1, 2, 1 p(4)], i32 VRF row-major v16)"
        ))
    };
    assert_eq!(register_step_stall(&block(1, 256, "L2"), &t), 9344 - 2048);
    assert_eq!(register_step_stall(&block(6, 64, "L1"), &t), 0);
    let chain = parse("MatmulAccum(1x1x256x16, u8 L1 row-major, i8 L1 [0, 1, 2, 1 p(4)], i32 L1 row-major)");
    let step = parse("MatmulAccum(1x1x4x16, u8 L1 row-major, i8 L1 [0, 2, 1], i32 L1 row-major)");
    assert_eq!(loop_stalls(&chain, &step, std::iter::empty(), 64, false, &t), 640 - 128);
}

/// On `x86-avx2-vnni` a u8 block's steps are `BroadcastQuadDotAvx`'s, four values of `k` into 8
/// i32 lanes: one row of 8 vectors over a 256 x 64 VNNI `rhs` streamed from L2 (256 lines at 7)
/// runs 64 steps, loads 2 * (512 + 64) + 1,792 = 2,944 against 2 * 8 * 64 = 1,024 and waits
/// 1,920. On `x86-avx2` the same block is 128 steps of `BroadcastPairDot` (3 per output vector):
/// 2 * (1,024 + 128) + 1,792 = 4,096 against 3,072, a wait of 1,024 on dearer steps.
#[test]
fn avx_vnni_blocks_count_steps_of_four_values_of_k() {
    for (name, stall) in [("x86-avx2-vnni", 2944 - 1024), ("x86-avx2", 4096 - 3072)] {
        let t = Target::builtin(name, 1).unwrap();
        let text = "MatmulAccum(1x1x256x64, u8 L1 row-major, i8 L2 [0, 1, 2, 1 p(4)], i32 VRF row-major v8)";
        let block = LogicalSpec::parse(text, &t).unwrap().canonicalize(&t).unwrap();
        assert_eq!(register_step_stall(&block, &t), stall, "{name}");
    }
}
