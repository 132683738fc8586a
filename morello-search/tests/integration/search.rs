//! Properties of whole searches: determinism, memo reuse, pinned search-space sizes, and that the
//! implementations found compute their specs (checked by the reference interpreter).

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use morello_core::imp::Node;
use morello_core::kernels::KernelKind;
use morello_core::spec::{CanonicalSpec, LogicalSpec};
use morello_core::target::Target;
use morello_search::actions::{actions, register_block_heights};
use morello_search::{
    Action, ActionConfig, DividingTiles, Feasibility, Memo, PeakCodec, Rebuild, Remainders, Search,
    TileSizes, VariantCosts,
};
use proptest::prelude::*;

use crate::common::check_with_interpreter;

fn target(name: &str) -> Target {
    Target::builtin(name, 2).unwrap()
}

fn spec(text: &str, t: &Target) -> CanonicalSpec {
    LogicalSpec::parse(text, t).unwrap().canonicalize(t).unwrap()
}

fn matmul(n: u32, dtype: &str, t: &Target) -> CanonicalSpec {
    spec(
        &format!("Matmul(1x{n}x{n}x{n}, {dtype} GL row-major, {dtype} GL row-major, {dtype} GL row-major)"),
        t,
    )
}

#[test]
fn the_epilogue_is_fused_into_register_blocks_and_beats_the_separate_pass() {
    let t = Target::builtin("x86-avx2", 1).unwrap();
    let s = spec(
        "MatmulBiasRelu(1x16x16x16, f32 GL row-major, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
        &t,
    );
    let memo = Arc::new(Memo::new());
    let best = Search::new(&t).memo(Arc::clone(&memo)).solve(&s).unwrap();
    assert!(best.imp.kernels().contains(&KernelKind::VectorAddBias), "{}", best.imp.render(&t));
    let vrf = t.level_id("VRF").unwrap();
    let mut on_registers = false;
    best.imp.visit(&mut |node| {
        if matches!(node.spec.kind, morello_core::spec::PrimitiveKind::AddBias { .. }) {
            on_registers |= node.spec.operands[1].level == vrf;
        }
    });
    assert!(on_registers, "the epilogue runs on the output in memory:\n{}", best.imp.render(&t));
    let (matmul, epilogue) = s.split_epilogue(&t).unwrap().unwrap();
    let unfused = Search::new(&t).memo(Arc::clone(&memo)).solve(&matmul).unwrap().cost
        + Search::new(&t).memo(memo).solve(&epilogue).unwrap().cost;
    assert!(best.cost < unfused, "fused {} against unfused {unfused}", best.cost);
}

#[test]
fn implementations_compute_their_specs() {
    for name in ["x86-avx2", "x86-avx512"] {
        let t = target(name);
        for (n, dtype) in [(8, "f32"), (8, "u32"), (16, "f32"), (16, "u32")] {
            let s = matmul(n, dtype, &t);
            let solution = Search::new(&t).solve(&s).unwrap();
            check_with_interpreter(&solution.imp, &t);
        }
        for text in [
            "Move(8x8, f32 GL row-major, f32 GL col-major)",
            "Move(6x5, u32 GL row-major, u32 GL row-major)",
            "FillZero(16x16, f32 GL row-major)",
            "Matmul(1x5x7x3, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
            "MatmulAccum(2x3x4x5, u32 GL row-major, u32 GL col-major, u32 GL row-major)",
            "Conv(1x2x2x3x3x2x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
        ] {
            let solution = Search::new(&t).solve(&spec(text, &t)).unwrap();
            check_with_interpreter(&solution.imp, &t);
        }
    }
}

#[test]
fn thread_count_does_not_change_the_answer() {
    let t = target("x86-avx2");
    let s = matmul(16, "f32", &t);
    let one = Search::new(&t).threads(1).solve(&s).unwrap();
    let two = Search::new(&t).threads(2).solve(&s).unwrap();
    assert_eq!(one.imp, two.imp);
    assert_eq!(one.report.specs_solved, two.report.specs_solved);
}

#[test]
fn a_memo_hit_answers_like_a_fresh_search() {
    let t = target("x86-avx2");
    let table = Arc::new(Memo::new());
    let big = matmul(16, "f32", &t);
    let first = Search::new(&t).memo(Arc::clone(&table)).solve(&big).unwrap();
    let again = Search::new(&t).memo(Arc::clone(&table)).solve(&big).unwrap();
    assert_eq!(first.imp, again.imp);
    assert_eq!(again.report.specs_solved, 0);
    assert_eq!(again.report.memo_hits, 1);
    // A sub-problem answered from the table equals a fresh search of it.
    let small = matmul(8, "f32", &t);
    let from_table = Search::new(&t).memo(Arc::clone(&table)).solve(&small).unwrap();
    let fresh = Search::new(&t).solve(&small).unwrap();
    assert_eq!(from_table.imp, fresh.imp);
    // A bigger search reuses what the smaller one solved.
    let bigger = Search::new(&t).memo(Arc::clone(&table)).solve(&matmul(32, "f32", &t)).unwrap();
    assert!(bigger.report.memo_hits > 0);
}

/// Pins how much the search explores for fixed inputs, so that a change that shrinks (or grows)
/// the search space is noticed and updated on purpose.
#[test]
fn search_space_sizes_are_pinned() {
    let cases = [
        ("x86-avx2", "Matmul(1x4x4x4, u32 GL row-major, u32 GL row-major, u32 GL row-major)", 2758, 12795),
        ("x86-avx2", "Matmul(1x8x8x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)", 8161, 44425),
        ("x86-avx512", "Move(8x8, f32 GL row-major, f32 GL col-major)", 228, 818),
        // Rows of 5 AVX-512 vectors: 5-row tiles are tried besides the target's heights.
        (
            "x86-avx512",
            "Matmul(1x10x4x80, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
            32193,
            214586,
        ),
        // Uneven shapes: every remainder of every tiling is a sub-spec of its own (and one tile
        // whose pitch differs from a same-shaped tile's, 12 lines 10 and 6 elements apart); the
        // parallel tiles include each dim's even share (6 rows, 3 columns).
        ("x86-avx2", "Matmul(1x12x10x6, f32 GL row-major, f32 GL row-major, f32 GL row-major)", 9722, 57687),
        // k = 128: its first 64 may be peeled off (`actions/peel.rs`).
        (
            "x86-avx512",
            "Matmul(1x6x128x32, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
            24902,
            161924,
        ),
        // Serial, so its 6 columns may be padded to 8 (`actions/pad.rs`).
        (
            "x86-avx2",
            "Matmul(1x12x10x6, f32 GL row-major, f32 GL row-major, f32 GL row-major, serial)",
            11773,
            66779,
        ),
    ];
    // Every case is solved before comparing, so a change that moves several counts shows them all.
    let (mut expected, mut found) = (Vec::new(), Vec::new());
    for (name, text, specs, actions) in cases {
        let t = target(name);
        let r = Search::new(&t).threads(1).solve(&spec(text, &t)).unwrap().report;
        expected.push(format!("{name} {text}: {specs} specs, {actions} actions"));
        found.push(format!("{name} {text}: {} specs, {} actions", r.specs_solved, r.actions));
    }
    assert_eq!(found, expected);
}

#[test]
fn top_k_lists_distinct_first_actions_cheapest_first() {
    let t = target("x86-avx2");
    let s = matmul(8, "f32", &t);
    let best = Search::new(&t).solve(&s).unwrap();
    let top = Search::new(&t).solve_top_k(&s, 5).unwrap();
    assert_eq!(top.len(), 5);
    assert_eq!(top[0].cost, best.cost);
    assert!(top.windows(2).all(|w| w[0].cost <= w[1].cost));
    let roots: Vec<String> = top.iter().map(|s| s.imp.describe(&t)).collect();
    let mut distinct = roots.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), roots.len(), "{roots:?}");
    for solution in &top {
        check_with_interpreter(&solution.imp, &t);
    }
}

#[test]
fn limits_that_fit_nothing_are_reported() {
    let t = target("x86-avx2");
    // With operands already in vector registers, the broadcast FMA needs one more register.
    let s = spec("MatmulAccum(1x1x1x8, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v8)", &t);
    assert!(Search::new(&t).solve(&s).is_ok());
    let mut limits = t.capacities();
    limits.set(t.level_id("VRF").unwrap(), 0);
    let err = Search::new(&t).limits(limits).solve(&s).unwrap_err();
    assert!(err.to_string().starts_with("no implementation of MatmulAccum(1x1x1x8"), "{err}");
    assert!(err.to_string().contains("VRF=0"), "{err}");
}

/// The 64x64x64 f32 matmul is register-tiled: a block of the output lives in vector registers and
/// is updated by broadcast FMAs (checked here at 32^3 to keep the test quick).
#[test]
fn matmul_uses_a_register_tiled_broadcast_fma_microkernel() {
    let t = target("x86-avx2");
    let solution = Search::new(&t).solve(&matmul(32, "f32", &t)).unwrap();
    assert!(solution.imp.kernels().contains(&KernelKind::BroadcastVecMultAdd), "{}", solution.imp.render(&t));
    let vrf = t.level_id("VRF").unwrap();
    let mut output_in_registers = false;
    solution.imp.visit(&mut |node| {
        if let Node::Alloc { operand: 2, destination, .. } = &node.node {
            output_in_registers |= destination.level == vrf && destination.shape.volume() >= 16;
        }
    });
    assert!(output_in_registers, "{}", solution.imp.render(&t));
}

#[test]
fn variants_compute_their_specs() {
    let t = target("x86-avx2");
    for costs in [VariantCosts::Distinct, VariantCosts::All] {
        let variants = Search::new(&t).solve_variants(&matmul(8, "f32", &t), 10, costs).unwrap();
        assert_eq!(variants.len(), 10);
        for solution in &variants {
            check_with_interpreter(&solution.imp, &t);
        }
    }
}

/// The variants of the step `text` on `x86-avx512`: checks that the whole row (its `rhs` row moved
/// into registers) is the best and that each variant whose first rewrite is one of `splits` costs
/// the same and computes its spec; returns the whole row's and the splits' peak vector registers.
fn splits_cost_the_whole_row(text: &str, splits: &[&str]) -> (u64, Vec<u64>) {
    let t = target("x86-avx512");
    let variants = Search::new(&t).solve_variants(&spec(text, &t), 50, VariantCosts::All).unwrap();
    let vrf = t.level_id("VRF").unwrap().index();
    let best = &variants[0];
    assert_eq!(best.imp.describe(&t), "move operand 1 to f32 VRF row-major v16", "{}", best.imp.render(&t));
    let split_peaks = splits
        .iter()
        .map(|&split| {
            let found = variants
                .iter()
                .find(|v| v.imp.describe(&t) == split)
                .unwrap_or_else(|| panic!("no {split} among {} variants", variants.len()));
            assert_eq!(found.cost, best.cost, "{}", found.imp.render(&t));
            check_with_interpreter(&found.imp, &t);
            found.imp.peaks.0[vrf]
        })
        .collect();
    (best.imp.peaks.0[vrf], split_peaks)
}

/// A step of a register block split into 16-wide columns emits the same machine code as the whole
/// row once the compiler shares the broadcasts (docs/cost-model.md, "Shared loads"), and the
/// model prices it so: the same cost, in the registers that keep the broadcasts. The variant
/// computes its spec, and the whole row stays the best (fewer registers at the same cost).
#[test]
fn a_step_split_into_columns_costs_what_the_whole_row_does() {
    let text = "MatmulAccum(1x6x1x64, f32 L1 row-major, f32 L1 row-major, f32 VRF row-major v16)";
    let (whole_row, columns) = splits_cost_the_whole_row(text, &["tile 1x6x1x16"]);
    assert!(columns[0] > whole_row);
}

/// A step of a register block split into rows loads the same `rhs` vectors in every part, and the
/// compiler, which unrolls code over vector registers, loads them once (docs/cost-model.md,
/// "Shared loads"): the model prices the split at what the whole row costs, in the registers that
/// keep the row (counted per part, a 6 x 64 step in rows of 2 would cost 1.47x the whole row,
/// which runs as fast). The variants compute their spec, and the whole row stays the best.
#[test]
fn a_step_split_into_rows_costs_what_the_whole_row_does() {
    let text = "MatmulAccum(1x6x1x64, f32 L1 row-major, f32 L2 row-major, f32 VRF row-major v16)";
    splits_cost_the_whole_row(text, &["tile 1x2x1x64", "tile 1x4x1x64"]);
}

/// Every entry of every frontier rebuilds, under its own peaks as the limits, as itself: the same
/// cost, peaks that fit. (Rebuilding children with more room than the entry was computed with
/// once picked cheaper children whose snapped peaks did not fit, so `db verify` failed.)
#[test]
fn every_frontier_entry_rebuilds_under_its_own_peaks() {
    for (name, n, dtype) in [("x86-avx2", 8, "u32"), ("x86-avx512", 8, "f32")] {
        let t = target(name);
        let table = Arc::new(Memo::new());
        Search::new(&t).memo(Arc::clone(&table)).solve(&matmul(n, dtype, &t)).unwrap();
        let codec = PeakCodec::new(&t);
        let config = ActionConfig::default();
        let feasibility = Feasibility::new(&t);
        let mut rebuilt = 0;
        for (spec, frontier) in table.entries().iter().step_by(7) {
            for entry in frontier.entries() {
                let limits = codec.decode(entry.peaks);
                let (imp, found) = Rebuild::new(&table, &t, &config, &feasibility)
                    .best(spec, &limits)
                    .unwrap_or_else(|e| panic!("{}: {e}", spec.display(&t)));
                assert_eq!(found, *entry, "{}", spec.display(&t));
                assert_eq!(imp.cost, entry.cost, "{}", spec.display(&t));
                assert!(imp.peaks.fits(&limits), "{}", spec.display(&t));
                rebuilt += 1;
            }
        }
        assert!(rebuilt > 1000, "{name}: only {rebuilt} entries");
    }
}

#[test]
fn register_block_heights_fill_the_vector_registers() {
    assert_eq!(register_block_heights(&target("x86-avx512")), vec![6, 14]);
    assert_eq!(register_block_heights(&target("x86-avx2")), vec![6]);
}

/// The serial tile sizes the default configuration tries for a spec, as `(dim, size)`.
fn serial_tiles(text: &str, t: &Target, config: ActionConfig) -> Vec<(usize, u32)> {
    let s = spec(text, t);
    let feasibility = Feasibility::new(t);
    actions(&s, t, &config, &feasibility)
        .into_iter()
        .filter_map(|(action, _)| match action {
            Action::Tile { dim, size } => Some((dim, size)),
            _ => None,
        })
        .collect()
}

/// The parallel tile sizes the default configuration tries for a spec, as tile shapes.
fn parallel_tiles(text: &str, t: &Target) -> Vec<Vec<u32>> {
    let s = spec(text, t);
    actions(&s, t, &ActionConfig::default(), &Feasibility::new(t))
        .into_iter()
        .filter_map(|(action, _)| match action {
            Action::ParallelTile { sizes } => Some(sizes),
            _ => None,
        })
        .collect()
}

/// A parallel loop is offered each dim's even share besides the powers of two: 1,000 rows on two
/// processors in two tiles of 500 (powers of two give 3 tiles of 256, which two threads cannot
/// share evenly, and a boundary of 232), 1,000 on three in three of 333 and a 1-row boundary;
/// with one processor there are no parallel loops at all.
#[test]
fn parallel_loops_are_offered_each_dims_even_share() {
    let text = "Matmul(1x1000x64x64, f32 GL row-major, f32 GL row-major, f32 GL row-major)";
    let rows = |processors: u32| {
        let t = Target::builtin("x86-avx512", processors).unwrap();
        let tiles = parallel_tiles(text, &t);
        tiles.iter().filter(|s| s[2..] == [64, 64]).map(|s| s[1]).collect::<Vec<_>>()
    };
    assert_eq!(rows(2), vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 500]);
    assert!(rows(3).contains(&333), "{:?}", rows(3));
    assert!(rows(1).is_empty());
    // A power of two's share is among the powers already.
    let t = target("x86-avx512");
    let even =
        parallel_tiles("Matmul(1x512x64x64, f32 GL row-major, f32 GL row-major, f32 GL row-major)", &t);
    assert_eq!(even.iter().filter(|s| s[1] == 256 && s[2..] == [64, 64]).count(), 1);
}

#[test]
fn register_block_tiles_split_rows_whose_output_fits_the_registers() {
    let t = target("x86-avx512");
    let config = ActionConfig::default();
    // 6 rows of 64 f32 are 24 AVX-512 registers; 14 rows are 56, more than the 32 there are.
    let wide = serial_tiles(
        "MatmulAccum(1x64x8x64, f32 L1 row-major, f32 L1 row-major, f32 L1 row-major)",
        &t,
        config,
    );
    assert!(wide.contains(&(1, 6)), "{wide:?}");
    assert!(!wide.contains(&(1, 14)), "{wide:?}");
    // `k` and `n` are innermost in an operand: only powers of two there.
    assert!(wide.iter().all(|&(dim, size)| dim == 1 || size.is_power_of_two()), "{wide:?}");
    let narrow = serial_tiles(
        "MatmulAccum(1x64x8x32, f32 L1 row-major, f32 L1 row-major, f32 L1 row-major)",
        &t,
        config,
    );
    assert!(narrow.contains(&(1, 6)) && narrow.contains(&(1, 14)), "{narrow:?}");
    // Column-major operands make `m` the innermost dim of the left one and of the output.
    let col = serial_tiles(
        "MatmulAccum(1x64x8x32, f32 L1 col-major, f32 L1 row-major, f32 L1 col-major)",
        &t,
        config,
    );
    assert!(col.iter().all(|&(_, size)| size.is_power_of_two()), "{col:?}");
    let powers = serial_tiles(
        "MatmulAccum(1x64x8x32, f32 L1 row-major, f32 L1 row-major, f32 L1 row-major)",
        &t,
        ActionConfig { tile_sizes: TileSizes::PowersOfTwo, ..config },
    );
    assert!(powers.iter().all(|&(_, size)| size.is_power_of_two()), "{powers:?}");
}

#[test]
fn rows_of_an_odd_vector_width_get_the_tallest_block_that_fits() {
    let t = target("x86-avx512");
    let config = ActionConfig::default();
    // 80 f32 columns are 5 AVX-512 vectors: 5 rows (25 accumulators, a row of 5, a broadcast) fill
    // the 32 registers, and 6 rows would not leave room for the row.
    let five = serial_tiles(
        "MatmulAccum(1x100x8x80, f32 L1 row-major, f32 L1 row-major, f32 L1 row-major)",
        &t,
        config,
    );
    assert!(five.contains(&(1, 5)), "{five:?}");
    // 48 columns are 3 vectors: 9 rows.
    let three = serial_tiles(
        "MatmulAccum(1x100x8x48, f32 L1 row-major, f32 L1 row-major, f32 L1 row-major)",
        &t,
        config,
    );
    assert!(three.contains(&(1, 9)) && !three.contains(&(1, 5)), "{three:?}");
    // Power-of-two widths keep the target's heights only.
    let four = serial_tiles(
        "MatmulAccum(1x100x8x64, f32 L1 row-major, f32 L1 row-major, f32 L1 row-major)",
        &t,
        config,
    );
    let odd: Vec<u32> =
        four.iter().filter(|&&(dim, s)| dim == 1 && !s.is_power_of_two()).map(|&(_, s)| s).collect();
    assert_eq!(odd, vec![6], "{four:?}");
    // Not with powers of two only.
    let powers = serial_tiles(
        "MatmulAccum(1x100x8x80, f32 L1 row-major, f32 L1 row-major, f32 L1 row-major)",
        &t,
        ActionConfig { tile_sizes: TileSizes::PowersOfTwo, ..config },
    );
    assert!(powers.iter().all(|&(dim, size)| dim != 1 || size.is_power_of_two()), "{powers:?}");
}

/// The frontier of `text` (every cost and peak vector, cheapest first) under `config`.
fn frontier_of(text: &str, t: &Target, config: ActionConfig) -> Vec<(u64, u64)> {
    let s = spec(text, t);
    let search = Search::new(t).threads(2).configure_actions(config);
    search.fill(&s).unwrap();
    search.memo_table().get(&s).unwrap().entries().iter().map(|e| (e.cost, e.peaks.0)).collect()
}

/// Asserts that the default actions find the same non-empty frontier for each spec of `texts` as
/// the actions of `wider` (which try more tiles), on both x86 targets.
fn assert_default_finds_the_frontier_of(wider: ActionConfig, texts: &[&str]) {
    for name in ["x86-avx2", "x86-avx512"] {
        let t = target(name);
        for text in texts {
            let default = frontier_of(text, &t, ActionConfig::default());
            assert!(!default.is_empty(), "{name} {text}");
            assert_eq!(default, frontier_of(text, &t, wider), "{name} {text}");
        }
    }
}

/// Trying power-of-two tiles that leave a remainder only as splits loses nothing: for uneven
/// shapes the goal's whole frontier (every cost and peak vector) is the one every remainder tile
/// finds, while the search solves fewer specs' products.
#[test]
fn splits_find_the_frontier_of_every_remainder_tile() {
    assert_default_finds_the_frontier_of(
        ActionConfig { remainders: Remainders::EveryTile, ..ActionConfig::default() },
        &[
            "Matmul(1x12x10x6, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
            "Matmul(1x5x7x3, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
            "Matmul(1x20x3x24, u32 GL row-major, u32 GL col-major, u32 GL row-major)",
            "MatmulAccum(2x3x4x5, u32 GL row-major, u32 GL col-major, u32 GL row-major)",
            "Move(6x5, u32 GL row-major, u32 GL row-major)",
            "Move(12x20, f32 GL row-major, f32 GL col-major)",
            "FillZero(10x12, f32 GL row-major)",
        ],
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]

    /// As above, for random uneven matmuls.
    #[test]
    fn splits_lose_nothing_on_random_matmuls(m in 1u32..=14, k in 1u32..=14, n in 1u32..=14) {
        let t = target("x86-avx2");
        let text = whole(m, k, n);
        let every = ActionConfig { remainders: Remainders::EveryTile, ..ActionConfig::default() };
        prop_assert_eq!(frontier_of(&text, &t, ActionConfig::default()), frontier_of(&text, &t, every));
    }
}

/// Tiling a dim directly only by the largest power of two that divides it loses nothing: the
/// goal's whole frontier (every cost and peak vector) is the one every dividing tile finds, the
/// smaller tiles being loops over the largest one's tiles.
#[test]
fn the_largest_dividing_tile_finds_the_frontier_of_every_dividing_tile() {
    assert_default_finds_the_frontier_of(
        ActionConfig { dividing_tiles: DividingTiles::Every, ..ActionConfig::default() },
        &[
            "Matmul(1x16x16x16, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
            "Matmul(1x24x8x12, f32 GL row-major, f32 GL col-major, f32 GL row-major)",
            "MatmulAccum(1x4x32x16, f32 L2 row-major, f32 GL row-major, f32 GL row-major)",
            "Matmul(1x8x8x16, u32 GL row-major, u32 GL row-major, u32 GL row-major, serial)",
            "Move(16x32, f32 GL row-major, f32 GL col-major)",
            "FillZero(32x8, f32 GL row-major)",
            "Softmax(4x16, f32 GL row-major, f32 GL row-major)",
            "Conv(1x4x2x4x4x3x3, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
        ],
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]

    /// As above, for random matmuls whose dims have powers of two in them.
    #[test]
    fn the_largest_dividing_tile_loses_nothing_on_random_matmuls(
        m in 1u32..=6, k in 1u32..=6, n in 1u32..=6, twos in [0u32..=2, 0u32..=2, 0u32..=2],
    ) {
        let t = target("x86-avx2");
        let text = whole(m << twos[0], k << twos[1], n << twos[2]);
        let every = ActionConfig { dividing_tiles: DividingTiles::Every, ..ActionConfig::default() };
        prop_assert_eq!(frontier_of(&text, &t, ActionConfig::default()), frontier_of(&text, &t, every));
    }
}

/// The layouts of the buffers that actions pack `spec`'s `rhs` into at L2.
fn packed_rhs(text: &str, t: &Target) -> Vec<String> {
    let s = spec(text, t);
    let l2 = t.level_id("L2").unwrap();
    actions(&s, t, &ActionConfig::default(), &Feasibility::new(t))
        .into_iter()
        .filter_map(|(action, _)| match action {
            Action::Move { operand: 1, destination, kind: morello_core::imp::AllocKind::Buffer }
                if destination.level == l2 =>
            {
                Some(destination.layout.to_string())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn rhs_is_packed_only_where_a_view_would_crowd_a_set_or_stride_across_pages() {
    // The built-in targets pack into L2; a copy that does not is the control.
    let packing = target("x86-avx2");
    assert!(packing.levels()[1].packs, "L2 of the built-in targets packs");
    let mut desc = packing.description_value();
    desc.levels[1].packs = false;
    let plain = Target::new(desc).unwrap();
    // 512 rows of `rhs` 4 KiB apart in a 1 MiB, 16-way L2 of 1024 sets: 16 start sets, 32 lines in
    // each of 256 sets. A view cannot stay in L2, so the panel is packed (16 = two AVX2 vectors).
    let crowded = "MatmulAccum(1x64x512x256, f32 GL row-major c1 s1024, f32 GL row-major c1 s1024, f32 GL row-major c1 s1024, serial)";
    assert_eq!(packed_rhs(crowded, &packing), ["[2, 1, 2 p(16)]"]);
    assert!(packed_rhs(crowded, &plain).is_empty(), "only levels that pack");
    // The same panel of a 1000-wide matrix spreads over the sets and its view fits, but its rows are
    // 4,000 bytes apart, each on a page of its own: register blocks would read a strided stream,
    // which the panel copy avoids. It is offered on the matmul before `k` is split, not on the
    // accumulating slices a split makes.
    let spread = crowded.replace("s1024", "s1000");
    assert!(packed_rhs(&spread, &packing).is_empty());
    let whole_k = spread.replace("MatmulAccum", "Matmul");
    assert_eq!(packed_rhs(&whole_k, &packing), ["[2, 1, 2 p(16)]"]);
    // On AVX-512 in the narrowest panels only (32 wide; a 64-wide block reads two), where a crowded
    // view is offered both widths.
    let avx512 = target("x86-avx512");
    assert_eq!(packed_rhs(&whole_k, &avx512), ["[2, 1, 2 p(32)]"]);
    assert_eq!(packed_rhs(crowded, &avx512), ["[2, 1, 2 p(32)]", "[2, 1, 2 p(64)]"]);
    // Rows half a page apart or closer (2,000 bytes): a view, nothing packed.
    let near = whole_k.replace("s1000", "s500");
    assert!(packed_rhs(&near, &packing).is_empty());
    // Nor is an `rhs` whose rows are not along n, or one too large for L2 by size.
    assert!(
        packed_rhs(
            &crowded.replace(
                "f32 GL row-major c1 s1024, f32 GL row-major c1 s1024, f32",
                "f32 GL row-major c1 s1024, f32 GL col-major c1 s1024, f32"
            ),
            &packing
        )
        .is_empty()
    );
    let large = "MatmulAccum(1x64x2048x256, f32 GL row-major c1 s1024, f32 GL row-major c1 s1024, f32 GL row-major c1 s1024, serial)";
    assert!(packed_rhs(large, &packing).is_empty());
}

/// The spec text of an `m x k x n` f32 matmul with every operand row-major in `GL`.
fn whole(m: u32, k: u32, n: u32) -> String {
    format!("Matmul(1x{m}x{k}x{n}, f32 GL row-major, f32 GL row-major, f32 GL row-major)")
}

/// What `pick` takes from each action of a spec that it matches.
fn picked<T>(text: &str, t: &Target, pick: impl Fn(Action) -> Option<T>) -> Vec<T> {
    actions(&spec(text, t), t, &ActionConfig::default(), &Feasibility::new(t))
        .into_iter()
        .filter_map(|(action, _)| pick(action))
        .collect()
}

/// The `Pad` actions of a spec, as `(level name, padded columns)`.
fn pads(text: &str, t: &Target) -> Vec<(String, u32)> {
    picked(text, t, |action| match action {
        Action::Pad { level, columns } => Some((t.level(level).name.clone(), columns)),
        _ => None,
    })
}

#[test]
fn columns_that_leave_a_scalar_edge_are_padded_to_whole_vectors() {
    let t = Target::builtin("x86-avx512", 1).unwrap();
    // 21 columns: 16 + 4 + 1 as edge code; padded to 32 (two AVX-512 vectors) in L2.
    assert_eq!(pads(&whole(16, 16, 21), &t), [("L2".to_string(), 32)]);
    assert_eq!(pads(&whole(16, 16, 21).replace("Matmul(", "MatmulAccum("), &t), [("L2".to_string(), 32)]);
    // Whole 4-lane vectors need no padding; nor does a kernel too small to spread the copies over.
    assert!(pads(&whole(16, 16, 20), &t).is_empty());
    assert!(pads(&whole(8, 8, 13), &t).is_empty());
    // Only whole buffers pad (a column tile is left to its parent), and only into a level that
    // holds buffers (L2 moves only to L1 views and registers).
    let tile =
        "MatmulAccum(1x16x16x21, f32 GL row-major, f32 GL row-major c1 s64, f32 GL row-major c1 s64, serial)";
    assert!(pads(tile, &t).is_empty());
    assert!(pads(&whole(16, 16, 21).replace("GL", "L2"), &t).is_empty());
    // With two processors, only where no parallel loop can follow (inside one).
    let two = target("x86-avx512");
    assert!(pads(&whole(16, 16, 21), &two).is_empty());
    let serial = format!("{}, serial)", whole(16, 16, 21).trim_end_matches(')'));
    assert_eq!(pads(&serial, &two), [("L2".to_string(), 32)]);

    // The search pads these (the accumulating one also copies its output in and zeroes its
    // padding), and the padded kernels compute their specs.
    for text in [whole(16, 16, 21), whole(32, 32, 21).replace("Matmul(", "MatmulAccum(")] {
        let best = Search::new(&t).threads(1).solve(&spec(&text, &t)).unwrap();
        assert!(
            matches!(&best.imp.node, Node::Block { temporaries, .. } if temporaries.len() == 2),
            "{}",
            best.imp.render(&t)
        );
        check_with_interpreter(&best.imp, &t);
    }
}

/// An int8 matmul pads too: its i8 `rhs` into an i8 buffer and its i32 output into an i32 one,
/// `n` rounded up to whole vectors of the output (16 i32 lanes), so `BroadcastQuadDot` blocks
/// cover the last columns (`x86-avx512`, one processor).
#[test]
fn int8_columns_are_padded_to_whole_output_vectors() {
    let t = Target::builtin("x86-avx512", 1).unwrap();
    let int8 = |m: u32, k: u32, n: u32| {
        format!("Matmul(1x{m}x{k}x{n}, u8 GL row-major, i8 GL row-major, i32 GL row-major)")
    };
    assert_eq!(pads(&int8(16, 16, 21), &t), [("L2".to_string(), 32)]);
    assert!(pads(&int8(16, 16, 20), &t).is_empty());
    let Some((action, plan)) =
        actions(&spec(&int8(16, 16, 21), &t), &t, &ActionConfig::default(), &Feasibility::new(&t))
            .into_iter()
            .find(|(action, _)| matches!(action, Action::Pad { .. }))
    else {
        panic!("no pad action")
    };
    let body = plan.children.iter().find(|c| c.shape.dims() == [1, 16, 16, 32]).expect("the padded matmul");
    let dtypes: Vec<_> = body.operands.iter().map(|o| o.dtype.to_string()).collect();
    assert_eq!(dtypes, ["u8", "i8", "i32"], "{action:?}");
}

/// A requantizing matmul pads as an int8 matmul does, to whole vectors of its i32 sums: its
/// per-column bias, scale and zero point are padded too (`x86-avx512`, one processor). The
/// searched programs that pad are verified by the end-to-end requantization tests (a search here
/// would take 20 s).
#[test]
fn requantizing_matmuls_are_padded_with_their_columns() {
    let t = Target::builtin("x86-avx512", 1).unwrap();
    let requant = |m: u32, k: u32, n: u32| {
        format!(
            "MatmulBiasReluRequant(1x{m}x{k}x{n}, u8 GL row-major, i8 GL row-major, i32 GL row-major, \
             f32 GL row-major, u8 GL row-major, u8 GL row-major)"
        )
    };
    assert_eq!(pads(&requant(16, 16, 21), &t), [("L2".to_string(), 32)]);
    assert!(pads(&requant(16, 16, 32), &t).is_empty());
    let plain = requant(16, 16, 21).replace("MatmulBiasReluRequant", "MatmulRequant").replacen(
        " i32 GL row-major,",
        "",
        1,
    );
    assert_eq!(pads(&plain, &t), [("L2".to_string(), 32)]);
    let Some((_, plan)) =
        actions(&spec(&requant(16, 16, 21), &t), &t, &ActionConfig::default(), &Feasibility::new(&t))
            .into_iter()
            .find(|(action, _)| matches!(action, Action::Pad { .. }))
    else {
        panic!("no pad action")
    };
    let body = plan.children.iter().find(|c| c.shape.dims() == [1, 16, 16, 32]).expect("the padded matmul");
    let shapes: Vec<_> = body.operands.iter().map(|o| format!("{} {}", o.dtype, o.shape)).collect();
    assert_eq!(shapes, ["u8 1x16x16", "i8 1x16x32", "i32 32", "f32 32", "u8 32", "u8 1x16x32"]);
}

/// The chunks of the `PeelReduction` actions of a spec.
fn peels(text: &str, t: &Target) -> Vec<u32> {
    picked(text, t, |action| match action {
        Action::PeelReduction { size } => Some(size),
        _ => None,
    })
}

#[test]
fn a_matmul_peels_its_first_reduction_chunk_and_the_block_computes_its_spec() {
    let t = Target::builtin("x86-avx512", 1).unwrap();
    // Chunks of 64 to 256 rows, at most half of k, that tile the rest evenly.
    assert_eq!(peels(&whole(8, 256, 64), &t), [64, 128]);
    assert_eq!(peels(&whole(8, 1024, 64), &t), [64, 128, 256]);
    assert_eq!(peels(&whole(8, 192, 64), &t), [64]);
    assert!(peels(&whole(8, 96, 64), &t).is_empty());
    // Not an accumulating matmul (it has no zeroing to save), nor one whose `rhs` is in L1 already.
    assert!(peels(&whole(8, 256, 64).replace("Matmul(", "MatmulAccum("), &t).is_empty());
    assert!(peels(&whole(8, 256, 64).replacen("GL", "L1", 2), &t).is_empty());

    // The block computes its spec: each stage solved by the search, the whole checked by the
    // interpreter.
    let s = spec(&whole(8, 256, 32), &t);
    let (_, plan) = actions(&s, &t, &ActionConfig::default(), &Feasibility::new(&t))
        .into_iter()
        .find(|(action, _)| *action == Action::PeelReduction { size: 128 })
        .expect("a peel of 128");
    let search = Search::new(&t).threads(1);
    let children = plan.children.iter().map(|c| search.solve(c).unwrap().imp).collect();
    let imp = plan.build(s, children, &t);
    let text = imp.render(&t);
    assert!(text.contains("MatmulAccum(1x8x128x32"), "{text}");
    check_with_interpreter(&imp, &t);
}
