//! Search, emit C, compile with gcc (and clang when installed, warnings denied), run on seeded
//! inputs and verify against the reference, for every operator's example, matmuls of many shapes
//! and dtypes, moves, fills, convolutions, epilogues, softmax, a parallel loop, the AVX-512 BF16
//! dot product and the int8 VNNI kernel: the one place the search and code generation meet.
//!
//! All kernels of one suite go into one program per compiler (one compile).

#![allow(clippy::print_stdout, reason = "what was skipped, and how long each search took")]

use std::sync::Arc;

use morello_codegen::test_support::gcc_and_clang;
use morello_codegen::{CodegenError, VerifyOptions, Warnings, verify_impls};
use morello_core::imp::{Boundary, Impl, Parallelism};
use morello_core::kernels::KernelKind;
use morello_core::operators::Operator;
use morello_core::spec::{
    CanonicalSpec, ConvLayout, ConvOptions, FilterLayout, LogicalSpec, Padding, SpecBuilder, parse_epilogue,
    parse_pair, parse_requant,
};
use morello_core::target::{Target, resolve_target_on_host};
use morello_search::{Memo, Search};

/// The canonical spec of a shorthand and the command line's spec flags (`matmul 4x4x4 --accum`,
/// `move 8x8 --from row-major --to col-major`, `conv ... --layout nhwc --pad same`) for a
/// built-in target (`x86` is the best the host runs, with the built-in cache geometry), built as
/// `morello search` builds it: through `SpecBuilder`.
fn spec(words: &str, dtype: &str, target: &str) -> (Target, CanonicalSpec) {
    let target = resolve_target_on_host(target, &[]).expect("a built-in target").target;
    let mut shorthand = Vec::new();
    let mut flags: Vec<(&str, &str)> = Vec::new();
    let mut accumulate = false;
    let mut words = words.split_whitespace();
    while let Some(word) = words.next() {
        match word {
            "--accum" => accumulate = true,
            flag if flag.starts_with("--") => flags.push((flag, words.next().expect("a flag's value"))),
            word => shorthand.push(word),
        }
    }
    let mut builder = SpecBuilder::parse(&shorthand.join(" "))
        .expect("a shorthand")
        .dtypes(dtype.parse().expect("a dtype"));
    if accumulate {
        builder = builder.accumulate();
    }
    let mut conv = ConvOptions::default();
    for (flag, value) in flags {
        match flag {
            "--from" => builder = builder.from_layout(value),
            "--to" => builder = builder.to_layout(value),
            "--rhs-layout" => builder = builder.rhs_layout(value),
            "--epilogue" => {
                builder = match parse_requant(value) {
                    Some(requant) => {
                        let (epilogue, out) = requant.expect("a requantizing epilogue");
                        builder.requant(epilogue, out)
                    }
                    None => builder.epilogue(parse_epilogue(value).expect("an epilogue")),
                }
            }
            "--layout" => conv.layout = value.parse::<ConvLayout>().expect("a layout"),
            "--filter-layout" => conv.filter_layout = Some(value.parse::<FilterLayout>().expect("a layout")),
            "--stride" => conv.stride = parse_pair(value, "stride").expect("a stride"),
            "--dilation" => conv.dilation = parse_pair(value, "dilation").expect("a dilation"),
            "--pad" => conv.padding = value.parse::<Padding>().expect("a padding"),
            other => panic!("`{other}` is not a spec flag"),
        }
    }
    if shorthand.first() == Some(&"conv") {
        builder = builder.conv(conv);
    }
    let spec = builder.build(&target).expect("a valid spec");
    (target, spec)
}

/// Solves each spec (sharing one memo table), then verifies all the kernels in one program per
/// compiler.
fn check(target: &Target, specs: &[CanonicalSpec], extra: Vec<Impl>) {
    let memo = Arc::new(Memo::new());
    let mut imps: Vec<Impl> = specs
        .iter()
        .map(|s| {
            let search = Search::new(target).memo(Arc::clone(&memo));
            search.solve(s).unwrap_or_else(|e| panic!("{}: {e}", s.display(target))).imp
        })
        .collect();
    imps.extend(extra);
    let refs: Vec<&Impl> = imps.iter().collect();
    for compiler in gcc_and_clang() {
        let options = VerifyOptions { seed: 42, warnings: Warnings::Deny, ..VerifyOptions::default() };
        match verify_impls(&refs, target, &compiler, &options) {
            Ok(results) => {
                for (imp, result) in imps.iter().zip(results) {
                    let v = &result.verification;
                    assert!(
                        v.verified,
                        "{} on {} with {compiler}: {}\n{}",
                        imp.spec.display(target),
                        target.name(),
                        v.mismatch.as_ref().map(ToString::to_string).unwrap_or_default(),
                        result.kernel.source
                    );
                }
            }
            Err(CodegenError::MissingHostFeatures { missing }) => {
                println!(
                    "skipped running on {}: the host lacks {missing:?} (the kernels compiled)",
                    target.name()
                );
            }
            Err(e) => panic!("{} with {compiler}: {e}", target.name()),
        }
    }
}

/// [`check`]s the specs of `words` (shorthand and dtype) on x86-avx2.
fn check_avx2(words: &[(&str, &str)]) {
    let target = spec("zero 1", "f32", "x86-avx2").0;
    let specs: Vec<CanonicalSpec> = words.iter().map(|(w, d)| spec(w, d, "x86-avx2").1).collect();
    check(&target, &specs, Vec::new());
}

fn cubes(dtype: &str) {
    let sizes = [1, 2, 3, 4, 8, 16, 17, 32, 64];
    let (target, _) = spec("matmul 1x1x1", dtype, "x86");
    let specs: Vec<CanonicalSpec> =
        sizes.iter().map(|n| spec(&format!("matmul {n}x{n}x{n}"), dtype, "x86").1).collect();
    check(&target, &specs, Vec::new());
}

#[test]
fn f32_matmul_cubes() {
    cubes("f32");
}

#[test]
fn u32_matmul_cubes() {
    cubes("u32");
}

#[test]
fn odd_shapes_moves_and_fills() {
    let words = [
        ("matmul 5x7x3", "f32"),
        ("matmul 1x64x33", "f32"),
        ("matmul 33x1x17", "f32"),
        ("matmul 3x5x2 --accum", "u32"),
        ("move 16x8 --from row-major --to col-major", "f32"),
        ("move 6x10 --from col-major --to row-major", "u32"),
        ("zero 9x7", "f32"),
        ("zero 64", "u32"),
    ];
    check_avx2(&words);
}

#[test]
fn convolutions_in_both_layouts_with_padding_strides_and_dilations() {
    // Small shapes (the search of each is quick); every one reaches matmul kernels through
    // `AsMatmul`, the padded ones through their regions.
    let words = [
        "conv 1x4x8x8 8x4x3x3",
        "conv 1x6x6x4 3x3x4x8 --layout nhwc --pad same",
        "conv 2x5x5x3 4x3x3x3 --layout nhwc --filter-layout ohwi --pad 1 --stride 2",
        "conv 1x7x7x8 1x1x8x8 --layout nhwc --stride 2",
        "conv 1x8x8x2 3x3x2x8 --layout nhwc --dilation 2 --pad 2",
    ];
    check_avx2(&words.map(|w| (w, "f32")));
}

#[test]
fn epilogues_and_softmax() {
    let words = [
        "matmul 5x7x3 --epilogue bias,relu",
        "matmul 4x16x24 --epilogue bias,gelu",
        "matmul 3x4x9 --epilogue bias",
        "softmax 7x33",
        "softmax 1x100",
        "softmax 4x64",
    ];
    check_avx2(&words.map(|w| (w, "f32")));
}

/// Every operator's example (its definition's, operands in main memory): an operator the search
/// cannot implement (no kernel, no action that splits it into operators with kernels) or whose
/// kernels compute something else than its semantics fails here.
#[test]
fn every_operators_example() {
    let target = spec("zero 1", "f32", "x86-avx2").0;
    let memory = target.levels()[0].name.clone();
    let specs: Vec<CanonicalSpec> = Operator::ALL
        .into_iter()
        .map(|op| {
            let text = op.definition().example(&memory);
            LogicalSpec::parse(&text, &target)
                .and_then(|s| Ok(s.canonicalize(&target)?))
                .unwrap_or_else(|e| panic!("{op}'s example {text}: {e}"))
        })
        .collect();
    check(&target, &specs, Vec::new());
}

#[test]
fn a_parallel_loop_over_searched_tiles() {
    // 1x8x4x8 split into two parallel tiles of 1x4x4x8, each the search's best.
    let (target, s) = spec("matmul 8x4x8", "f32", "x86-avx2");
    let tile = [1, 4, 4, 8];
    let inner = s.tile(&tile, true, &target).expect("tile");
    let body = Search::new(&target).solve(&inner).expect("solves").imp;
    let imp = Impl::looped(s, tile.to_vec(), Parallelism::Parallel, body, Vec::new(), &target);
    assert!(imp.has_parallel_loop());
    check(&target, &[], vec![imp]);
}

/// [`check`]s the search's best implementation of the spec of `words` (in `dtype`, on
/// `target_name`), asserting first that it uses `kernel`.
fn check_best_uses(words: &str, dtype: &str, target_name: &str, kernel: KernelKind) -> String {
    let (target, s) = spec(words, dtype, target_name);
    let imp = Search::new(&target).solve(&s).expect("solves").imp;
    let tree = imp.render(&target);
    assert!(imp.kernels().contains(&kernel), "{tree}");
    check(&target, &[], vec![imp]);
    tree
}

#[test]
fn the_avx512_bf16_dot_product() {
    check_best_uses("matmul 1x64x1", "bf16", "x86-avx512", KernelKind::DotProductBf16);
}

#[test]
fn bf16_rows_widened_into_f32_registers() {
    // A row-major rhs: no dot-product kernel applies, the search broadcasts lhs and widens rows.
    for (words, target_name) in [("matmul 3x16x40", "x86-avx512"), ("matmul 2x8x24", "x86-avx2")] {
        check_best_uses(words, "bf16", target_name, KernelKind::BroadcastVecMultAddBf16);
    }
}

/// Quantized matmuls, exact in i32: the scalar multiply-add (u8 x i8 and i8 x i8), the widening
/// AVX2 kernel on pairs of `k`, and on x86-avx512 and x86-avx2-vnni the AVX-512 VNNI and AVX-VNNI
/// kernels (run where the host has them, else compiled and skipped with the reason) in blocks of
/// several rows that share each step's `rhs` registers, with `rhs` packed by the search (by
/// `VectorInterleave`), for a cube and (AVX-512) an odd shape (`n` not a multiple of the 16 lanes:
/// padded to whole output vectors); larger shapes and pre-packed weights are an ignored test.
#[test]
fn int8_matmuls() {
    check_avx2(&[
        ("matmul 8x8x8", "u8s8s32"),
        ("matmul 5x12x3", "s8s8s32"),
        ("matmul 3x8x5 --accum", "u8s8s32"),
    ]);
    for words in ["matmul 64x64x64", "matmul 12x40x29"] {
        let tree = check_best_uses(words, "u8s8s32", "x86-avx512", KernelKind::BroadcastQuadDot);
        // Register blocks of several rows: each step's rhs quads are moved into registers once
        // and every row's kernel reads them there.
        assert!(tree.contains("move operand 1 to i8 VRF"), "{words}: {tree}");
        // The packing copy interleaves four rows of 16 bytes at a time.
        assert!(interleaves(&tree, 4), "{words}: {tree}");
    }
    // AVX-VNNI without AVX-512: the 256-bit vpdpbusd (run where the host has AVX-VNNI, else
    // compiled and skipped).
    check_best_uses("matmul 16x32x32", "u8s8s32", "x86-avx2-vnni", KernelKind::BroadcastQuadDotAvx);
    // Without VNNI (and for i8 activations), the exact widening AVX2 kernel on packed pairs, packed
    // two rows of 16 bytes at a time.
    for (words, dtypes) in [("matmul 16x32x16", "u8s8s32"), ("matmul 10x30x24", "s8s8s32")] {
        let tree = check_best_uses(words, dtypes, "x86-avx2", KernelKind::BroadcastPairDot);
        assert!(interleaves(&tree, 2), "{words}: {tree}");
    }
    // An i8 lhs where a VNNI kernel exists: shifted into u8, the column sums of the packed rhs
    // computed once, then the VNNI kernel with the correction added to each register block of
    // the output (larger shapes: `s8s8s32_shifted_onto_vnni`).
    for (words, target_name, kernel) in [
        ("matmul 4x32x16", "x86-avx512", KernelKind::BroadcastQuadDot),
        ("matmul 6x32x12", "x86-avx2-vnni", KernelKind::BroadcastQuadDotAvx),
    ] {
        let tree = check_best_uses(words, "s8s8s32", target_name, kernel);
        assert!(tree.contains("kernel VectorShiftCorrection"), "{words}: {tree}");
        assert!(tree.contains("Move(") && tree.contains("u8 "), "{words}: {tree}");
        let corrected = |line: &&str| line.contains("kernel VectorAddBias") && line.contains("i32 VRF");
        assert!(tree.lines().any(|line| corrected(&line)), "{words}: {tree}");
    }
}

/// s8s8s32 matmuls on x86-avx512 and x86-avx2-vnni, verified exactly whichever path the search
/// takes (the shift onto the VNNI kernels for the larger ones, the pair kernel where that is
/// cheaper); on x86-avx2 they stay on the pair kernel.
#[test]
#[ignore = "slow (minutes); run with `cargo test -p morello-cli --test e2e -- --ignored s8s8s32`"]
fn s8s8s32_shifted_onto_vnni() {
    for target_name in ["x86-avx512", "x86-avx2-vnni"] {
        let (target, _) = spec("zero 1", "f32", target_name);
        let shapes = ["matmul 8x8x8", "matmul 64x64x64", "matmul 100x300x77"];
        let specs: Vec<CanonicalSpec> = shapes.iter().map(|w| spec(w, "s8s8s32", target_name).1).collect();
        check(&target, &specs, Vec::new());
    }
    for (words, target_name) in [("matmul 64x64x64", "x86-avx512"), ("matmul 100x300x77", "x86-avx2-vnni")] {
        let tree = check_best_uses(words, "s8s8s32", target_name, KernelKind::VectorShiftCorrection);
        assert!(tree.contains("ShiftCorrection"), "{words}: {tree}");
    }
    let tree = check_best_uses("matmul 64x64x64", "s8s8s32", "x86-avx2", KernelKind::BroadcastPairDot);
    assert!(!tree.contains("ShiftCorrection"), "{tree}");
}

/// A quantized NHWC convolution with `same` padding: the HWIO filters are copied once, before the
/// regions, into the VNNI strips of every tap (`VectorInterleave` on each tap's 16 x 4 tiles), and
/// each tap's accumulating matmul reads its `C x F` slice in place with the AVX-512 VNNI kernel
/// (run where the host has it, else compiled and skipped), verified exactly.
#[test]
fn an_int8_convolution_on_the_vnni_kernel() {
    let words = "conv 1x4x4x8 3x3x8x16 --layout nhwc --pad same";
    let tree = check_best_uses(words, "u8s8s32", "x86-avx512", KernelKind::BroadcastQuadDot);
    let first = tree.lines().nth(1).unwrap_or_default();
    assert!(first.contains("move operand 1 to i8 L2 [2, 3, 1, 0, 1 p(4)]"), "{words}: {tree}");
    assert!(
        tree.lines().any(|l| l.contains("kernel VectorInterleave") && l.contains("Move(16x4x1x1,")),
        "{words}: {tree}"
    );
}

/// Filters given in their strips (`--filter-layout vnni`), u8 and i8 images: read in place on
/// the VNNI kernel, or repacked into pairs for the AVX2 one, verified exactly.
#[test]
#[ignore = "slow; run with `cargo test -p morello-cli --test e2e -- --ignored filters_in_strips`"]
fn int8_convolutions_with_filters_in_strips() {
    let words = "conv 1x6x6x8 3x3x8x32 --layout nhwc --pad same --filter-layout vnni";
    let tree = check_best_uses(words, "u8s8s32", "x86-avx512", KernelKind::BroadcastQuadDot);
    assert!(!tree.contains("kernel VectorInterleave"), "{words}: {tree}");
    check_best_uses(words, "s8s8s32", "x86-avx512", KernelKind::BroadcastPairDot);
    check_best_uses(words, "u8s8s32", "x86-avx2", KernelKind::BroadcastPairDot);
}

/// Whether the tree packs with `VectorInterleave` on tiles of `rows` rows of 16 bytes.
fn interleaves(tree: &str, rows: u32) -> bool {
    let tile = format!("Move(1x{rows}x16,");
    tree.lines().any(|line| line.contains("kernel VectorInterleave") && line.contains(&tile))
}

/// Requantizing int8 matmuls, fused: the i32 accumulator block stays in vector registers and is
/// requantized from them (16 lanes on x86-avx512, 8 on x86-avx2), an odd shape's last columns
/// through the scalar kernel; u8 and i8 outputs, without and with an i32 bias (and ReLU), verified
/// exactly. Larger shapes are an ignored test.
#[test]
fn requantized_int8_matmuls() {
    check_requantized(&[
        ("matmul 4x16x32 --epilogue requant", "u8s8s32", "x86-avx512"),
        ("matmul 3x8x13 --epilogue requant-i8", "s8s8s32", "x86-avx2"),
        ("matmul 2x16x8 --epilogue bias,requant", "u8s8s32", "x86-avx512"),
        ("matmul 2x8x8 --epilogue bias,relu,requant-i8", "s8s8s32", "x86-avx2"),
        ("matmul 2x8x16 --epilogue bias,relu,requant", "u8s8s32", "x86-avx512"),
        ("matmul 2x4x8 --epilogue bias,requant-i8", "u8s8s32", "x86-avx2"),
    ]);
}

/// [`requantized_int8_matmuls`] on a cube and odd shapes of many register blocks.
#[test]
#[ignore = "slow; run with `cargo test -p morello-cli --test e2e -- --ignored requantized`"]
fn requantized_int8_matmuls_of_many_blocks() {
    check_requantized(&[
        ("matmul 64x64x64 --epilogue requant", "u8s8s32", "x86-avx512"),
        ("matmul 12x40x29 --epilogue requant-i8", "u8s8s32", "x86-avx512"),
        ("matmul 16x32x24 --epilogue requant", "u8s8s32", "x86-avx2"),
        ("matmul 6x12x13 --epilogue requant-i8", "s8s8s32", "x86-avx2"),
        ("matmul 64x64x64 --epilogue bias,requant", "u8s8s32", "x86-avx512"),
        ("matmul 64x64x64 --epilogue bias,relu,requant-i8", "s8s8s32", "x86-avx512"),
        ("matmul 100x300x77 --epilogue bias,relu,requant", "u8s8s32", "x86-avx512"),
        ("matmul 64x64x64 --epilogue bias,relu,requant", "u8s8s32", "x86-avx2"),
        ("matmul 100x300x77 --epilogue bias,requant-i8", "s8s8s32", "x86-avx2"),
    ]);
}

/// Each spec's best implementation requantizes a register block of its accumulator (the fused
/// plan), and verifies.
fn check_requantized(cases: &[(&str, &str, &str)]) {
    for &(words, dtypes, target) in cases {
        let tree = check_best_uses(words, dtypes, target, KernelKind::VectorRequant);
        assert!(tree.contains("block with") && tree.contains("i32 VRF"), "{words}: {tree}");
    }
}

/// The VNNI kernels over a cube of many register blocks, pre-packed weights and a larger odd shape:
/// a minute of search and emission more than every CI run should pay.
#[test]
#[ignore = "slow; run with `cargo test -p morello-cli --test e2e -- --ignored int8`"]
fn int8_matmul_of_many_register_blocks() {
    for words in ["matmul 256x256x256", "matmul 64x64x64 --rhs-layout vnni", "matmul 100x300x77"] {
        check_best_uses(words, "u8s8s32", "x86-avx512", KernelKind::BroadcastQuadDot);
    }
    for words in ["matmul 64x64x64", "matmul 100x300x77"] {
        check_best_uses(words, "u8s8s32", "x86-avx2-vnni", KernelKind::BroadcastQuadDotAvx);
    }
}

/// A loop over full tiles of `tile` plus the remainder regions (every combination of full and
/// remainder parts of the dims that do not divide), each region's body solved by the search.
/// The regions share one memo table.
fn tiled(target: &Target, s: &CanonicalSpec, tile: &[u32], parallelism: Parallelism) -> Impl {
    let memo = Arc::new(Memo::new());
    let solve = |spec: &CanonicalSpec| {
        let started = std::time::Instant::now();
        let imp = Search::new(target)
            .memo(Arc::clone(&memo))
            .solve(spec)
            .unwrap_or_else(|e| panic!("{}: {e}", spec.display(target)))
            .imp;
        println!("solved {} in {:.1} s", spec.display(target), started.elapsed().as_secs_f64());
        imp
    };
    let parallel = parallelism == Parallelism::Parallel;
    let full = s.shape.dims();
    let body = solve(&s.tile(tile, parallel, target).expect("tile"));
    let mut boundaries = Vec::new();
    for (region, origin) in Boundary::regions(full, tile) {
        let region_spec = s.tile_at(&region, &origin, parallel, target).expect("region");
        boundaries.push(Boundary { origin, body: solve(&region_spec) });
    }
    Impl::looped(s.clone(), tile.to_vec(), parallelism, body, boundaries, target)
}

/// [`check`]s the f32 spec of `words` on x86 implemented as a [`tiled`] loop over `tile`.
fn check_tiled(words: &str, tile: &[u32], parallelism: Parallelism) {
    let (target, s) = spec(words, "f32", "x86");
    let imp = tiled(&target, &s, tile, parallelism);
    check(&target, &[], vec![imp]);
}

#[test]
fn an_odd_matmul_from_searched_tiles() {
    // Tiles of 4 rows by 4 columns and their boundary regions (a row, a column, a corner), each
    // searched: boundaries in a loop the search would not choose.
    check_tiled("matmul 17x17x17", &[1, 4, 17, 4], Parallelism::Serial);
}

#[test]
fn a_64_cube_from_searched_tiles() {
    // A parallel loop over tiles of 8 rows by 16 columns, each searched.
    check_tiled("matmul 64x64x64", &[1, 8, 64, 16], Parallelism::Parallel);
}

/// An AVX2 target with caches so small that a 256-wide `rhs` crowds its L2 sets (8 KiB, 8 ways of
/// 16 sets: rows 1 KiB apart all start in set 0), and an L2 that packs.
const TINY_PACKING: &str = r#"
name = "tiny-packing"
cache_line_bytes = 64
processors = 1
isa = ["avx2", "fma"]
kernels = ["MultAdd", "BroadcastVecMultAdd", "VectorAssign", "VectorFill", "MemsetZero", "ValueAssign", "ValueFill"]

[[levels]]
name = "GL"
kind = "memory"
capacity = "1GiB"
cost_per_line = 40
run_overhead_lines = 2
parallel = true
moves_to = ["L2"]

[[levels]]
name = "L2"
kind = "cache"
capacity = "8KiB"
cost_per_line = 6
load_cost_per_line = 2
allocates = false
packs = true
moves_to = ["L1", "VRF"]
ways = 8

[[levels]]
name = "L1"
kind = "cache"
capacity = "2KiB"
cost_per_line = 2
allocates = false
moves_to = ["VRF", "RF"]
ways = 2

[[levels]]
name = "VRF"
kind = "vector-registers"
capacity = 16
vector_bytes = [32]

[[levels]]
name = "RF"
kind = "scalar-registers"
capacity = 16
"#;

/// Whether some node of `imp` packs an operand into a new buffer at `level` whose layout is not
/// the operand's own order (a panel layout).
fn packs_at(imp: &Impl, level: morello_core::target::LevelId) -> bool {
    let here = matches!(&imp.node, morello_core::imp::Node::Alloc {
        kind: morello_core::imp::AllocKind::Buffer, destination, ..
    } if destination.level == level && destination.layout.dims().iter().any(|d| matches!(d.kind, morello_core::layout::PhysDim::Packed(_))));
    here || imp.children().into_iter().any(|c| packs_at(c, level))
}

#[test]
fn a_searched_kernel_that_packs_rhs_into_panels() {
    let target = Target::from_toml(TINY_PACKING).expect("the target parses");
    let s = SpecBuilder::parse("matmul 64x32x256").unwrap().build(&target).unwrap();
    let best = Search::new(&target).solve(&s).unwrap().imp;
    assert!(
        packs_at(&best, target.level_id("L2").unwrap()),
        "the search packs rhs into L2 panels:\n{}",
        best.render(&target)
    );
    check(&target, &[], vec![best]);
}
