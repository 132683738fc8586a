//! Tests of specs: text, validation, canonical forms, and properties.

use proptest::prelude::*;

use super::*;
use crate::layout::LayoutDim;
use crate::target::{LevelId, Target};

fn avx2() -> Target {
    Target::builtin("x86-avx2", 2).unwrap()
}

fn parse(text: &str) -> CanonicalSpec {
    let t = avx2();
    LogicalSpec::parse(text, &t).unwrap_or_else(|e| panic!("{text}: {e}")).canonicalize(&t).unwrap()
}

#[test]
fn matmul_text_round_trips() {
    let t = avx2();
    let text = "Matmul(1x64x64x64, f32 GL row-major, f32 GL row-major, f32 GL row-major)";
    let spec = parse(text);
    assert_eq!(spec.display(&t).to_string(), text);
    assert_eq!(spec.operands[0].shape.to_string(), "1x64x64");
    assert_eq!(spec.operands[1].shape.to_string(), "1x64x64");
    assert_eq!(spec.kind.flops(&spec.shape), 2 * 64 * 64 * 64);
    // Canonical layouts drop the size-1 batch dim.
    assert_eq!(spec.operands[0].layout.to_string(), "[1, 2]");
    for text in [
        "MatmulAccum(1x4x1x16, f32 L1 row-major c0, f32 VRF row-major v8, f32 VRF row-major v8, serial)",
        "Move(8x8, f32 GL row-major, f32 L1 col-major)",
        "Move(8x16, u32 GL row-major, u32 L2 [0, 1, 0 p(4)])",
        "FillZero(4x16, f32 VRF row-major v8, serial)",
        "ConvAccum(1x8x4x6x6x3x3, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
        "Move(32, bf16 L1 row-major, f32 L1 row-major)",
        "FillNegInf(2x2, i32 RF row-major, serial)",
        "MatmulAccum(1x16x64x16, f32 L1 row-major c1 s512, f32 L2 row-major c1 s4100, f32 GL row-major c1 s1024)",
    ] {
        assert_eq!(parse(text).display(&t).to_string(), text);
    }
    // Pitches are classes: modulo the largest cache way (64 KiB, 16384 f32), and dropped where
    // they cannot matter (one contiguous run, registers, or too few lines to crowd a set).
    for (text, canonical) in [
        (
            "Move(64x64, f32 L1 row-major c1 s20000, f32 GL row-major)",
            "Move(64x64, f32 L1 row-major c1 s3616, f32 GL row-major)",
        ),
        (
            "Move(64x64, f32 L1 row-major s512, f32 GL row-major)",
            "Move(64x64, f32 L1 row-major, f32 GL row-major)",
        ),
        (
            "Move(4x16, f32 L1 row-major c1 s512, f32 GL row-major)",
            "Move(4x16, f32 L1 row-major c1, f32 GL row-major)",
        ),
    ] {
        assert_eq!(parse(text).display(&t).to_string(), canonical);
    }
}

#[test]
fn invalid_specs_have_clear_errors() {
    let t = avx2();
    let cases = [
        (
            "Matmul(64x64x64, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
            "Matmul needs an iteration shape of rank 4, found rank 3",
        ),
        (
            "Matmul(1x8x8x8, f32 GL row-major, u32 GL row-major, f32 GL row-major)",
            "Matmul inputs must have one dtype, found f32 and u32",
        ),
        ("Matmul(1x8x8x8, f32 GL row-major, f32 GL row-major)", "Matmul takes 3 operands, found 2"),
        ("Move(8x8, f32 GL row-major, u8 GL row-major)", "it cannot convert f32 to u8"),
        ("Move(8x8, f32 GL row-major, f32 VRF row-major)", "needs a vector size (such as v8)"),
        (
            "Move(8x8, f32 GL row-major, f32 VRF row-major v5)",
            "v5 of f32 is 20 bytes, not a vector width of VRF (use v4, v8)",
        ),
        (
            "Move(3x3, f32 GL row-major, f32 VRF row-major v4)",
            "shape 3x3 (9 elements) is not a whole number of v4 vectors",
        ),
        (
            "Move(8x8, f32 GL row-major v8, f32 GL row-major)",
            "v8 is a vector size, but GL does not hold vector registers",
        ),
        ("Move(6x8, f32 GL [0, 1, 1 p(3)], f32 GL row-major)", "does not divide the remaining size 8"),
        (
            "Move(8x8, f32 SRAM row-major, f32 GL row-major)",
            "unknown level `SRAM`; x86-avx2 has GL, L2, L1, VRF, RF",
        ),
        ("Transpose(8x8, f32 GL row-major, f32 GL row-major)", "unknown spec kind `Transpose`"),
        ("Move(8x0, f32 GL row-major, f32 GL row-major)", "dimension 1 is zero"),
        ("Move(8x8, f64 GL row-major, f32 GL row-major)", "unknown dtype `f64`"),
        ("Move(8x8, f32 GL row-major, f32 GL row-major", "expected `,` or `)`"),
        (
            "Move(8x8, f32 GL row-major, f32 GL row-major, serial) extra",
            "unexpected text after the closing `)`",
        ),
    ];
    for (text, message) in cases {
        let result = LogicalSpec::parse(text, &t)
            .map_err(|e| e.to_string())
            .and_then(|s| s.canonicalize(&t).map_err(|e| e.to_string()));
        let err = result.unwrap_err();
        assert!(err.contains(message), "{text}: expected {message:?} in {err:?}");
    }
}

#[test]
fn canonical_forms_normalise() {
    let t = avx2();
    // Registers carry no layout; specs with nothing in a parallel level are serial.
    let spec = parse("FillZero(2x2, f32 RF col-major)");
    assert_eq!(spec.display(&t).to_string(), "FillZero(2x2, f32 RF row-major, serial)");
    // A packed layout whose strip covers the dim is that dim's plain order.
    let spec = parse("Move(8x4, f32 GL [1, 0, 1 p(4)], f32 GL row-major)");
    assert_eq!(spec.operands[0].layout.to_string(), "[0, 1]");
    // Contiguity is clamped to the layout.
    let spec = parse("Move(8x4, f32 GL row-major c9, f32 GL row-major)");
    assert!(spec.operands[0].is_fully_contiguous());
}

#[test]
fn a_pitch_that_cannot_change_a_cost_is_left_out_and_so_is_its_tiles() {
    let t = avx2();
    // 32 rows of 2 f32, 400 bytes apart: distinct sets of every cache, within a line each.
    let spread = parse("Move(32x2, f32 L1 row-major c1 s100, f32 L1 row-major)");
    assert_eq!(spread.operands[0].pitch, None);
    assert_eq!(spread.tile(&[16, 2], false, &t).unwrap().operands[0].pitch, None);
    // 64 rows 2 KiB apart crowd two sets of L1: the pitch stays, and its tiles keep it.
    let crowded = parse("Move(64x2, f32 L1 row-major c1 s512, f32 L1 row-major)");
    assert_eq!(crowded.operands[0].pitch, Some(512));
    assert_eq!(crowded.tile(&[32, 2], false, &t).unwrap().operands[0].pitch, Some(512));
}

#[test]
fn limits_parse_over_capacities() {
    let t = avx2();
    let limits = parse_limits("L1=16KiB, VRF=8", &t).unwrap();
    assert_eq!(limits.get(t.level_id("L1").unwrap()), 16384);
    assert_eq!(limits.get(t.level_id("VRF").unwrap()), 8);
    assert_eq!(limits.get(t.level_id("GL").unwrap()), 1 << 40);
    assert!(parse_limits("L3=1MiB", &t).unwrap_err().to_string().contains("unknown level `L3`"));
    assert!(parse_limits("L1", &t).unwrap_err().to_string().contains("is not LEVEL=SIZE"));
}

// ---------------------------------------------------------------------------------------------
// Properties: random valid specs print and parse back, and canonicalisation is idempotent.

fn operand_strategy(shape: Shape, t: &Target) -> impl Strategy<Value = TensorSpec> + use<> {
    let rank = shape.rank();
    let levels: Vec<u8> = (0..t.levels().len() as u8).collect();
    (
        prop::sample::select(vec![Dtype::F32, Dtype::U32]),
        prop::sample::select(levels),
        0usize..4,
        0u8..4,
        any::<bool>(),
        prop::sample::select(vec![None, Some(3u32), Some(512), Some(70_000)]),
    )
        .prop_map(move |(dtype, level, layout_choice, contiguity, vector, pitch)| {
            let r = rank as u8;
            let layout = match layout_choice {
                0 => Layout::row_major(r),
                1 => Layout::col_major(r),
                _ => {
                    // Pack the last dim by 2 or 4 when that divides it.
                    let p = if layout_choice == 2 { 2 } else { 4 };
                    let last = r - 1;
                    if shape.dim(usize::from(last)) % p == 0 {
                        let dims =
                            (0..r).map(LayoutDim::dynamic).chain(std::iter::once(LayoutDim::packed(last, p)));
                        Layout::new(dims.collect()).unwrap_or_else(|_| Layout::row_major(r))
                    } else {
                        Layout::row_major(r)
                    }
                }
            };
            let vector_size = if vector { Some(4) } else { None };
            TensorSpec {
                shape: shape.clone(),
                dtype,
                level: LevelId(level),
                layout,
                contiguous_dims: contiguity,
                vector_size,
                pitch,
            }
        })
}

fn spec_strategy() -> impl Strategy<Value = LogicalSpec> {
    let t = avx2();
    let kinds = prop::sample::select(PrimitiveKind::ALL.to_vec());
    (kinds, proptest::collection::vec(prop::sample::select(vec![1u32, 2, 4, 8, 32]), 7), any::<bool>())
        .prop_flat_map(move |(kind, sizes, serial_only)| {
            let rank = kind.required_rank().unwrap_or(2);
            let shape = Shape::new(sizes[..rank].to_vec()).unwrap();
            let shapes = kind.operand_shapes(&shape).unwrap();
            let operands: Vec<_> = shapes.into_iter().map(|s| operand_strategy(s, &t)).collect();
            (Just(kind), Just(shape), operands, Just(serial_only)).prop_map(
                |(kind, shape, mut operands, serial_only)| {
                    // Keep dtypes consistent so most generated specs are valid.
                    let d = operands[0].dtype;
                    for o in &mut operands {
                        o.dtype = d;
                    }
                    LogicalSpec { kind, shape, operands, serial_only }
                },
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn specs_print_parse_and_canonicalise_idempotently(spec in spec_strategy()) {
        let t = avx2();
        let Ok(canonical) = spec.canonicalize(&t) else { return Ok(()) };
        prop_assert_eq!(&canonical.logical().canonicalize(&t).unwrap(), &canonical);
        let text = canonical.display(&t).to_string();
        let parsed = LogicalSpec::parse(&text, &t).unwrap().canonicalize(&t).unwrap();
        prop_assert_eq!(parsed, canonical, "{}", text);
    }

    /// A tile of an operand's whole shape, at multiples of it or at the origin, is the operand
    /// wherever `whole_tile_is_operand` says so: the fast path of `CanonicalSpec::tile` for the
    /// operands a tile leaves alone.
    #[test]
    fn a_whole_tile_of_an_operand_is_the_operand(spec in spec_strategy()) {
        let t = avx2();
        let Ok(canonical) = spec.canonicalize(&t) else { return Ok(()) };
        let dims = canonical.kind.operand_dims(canonical.shape.rank());
        let origin = vec![0; canonical.shape.rank()];
        for (i, operand) in canonical.operands.iter().enumerate() {
            if !derived::whole_tile_is_operand(operand, &t) {
                continue;
            }
            for at in [None, Some(&origin[..])] {
                let tile = derived::tile_operand(i, operand, &dims[i], operand.shape.clone(), at, &t);
                prop_assert_eq!(tile.as_ref(), Ok(operand), "operand {} of {}", i, canonical.display(&t));
            }
        }
    }

    #[test]
    fn spec_parser_never_panics(text in "[A-Za-z]{0,12}\\([0-9x]{0,8}(, [a-z0-9]{0,4} [A-Z0-9]{0,3} [a-z\\-\\[\\]0-9, ]{0,12}){0,3}\\)?") {
        let t = avx2();
        if let Ok(spec) = LogicalSpec::parse(&text, &t) {
            let _ = spec.canonicalize(&t);
        }
    }
}
