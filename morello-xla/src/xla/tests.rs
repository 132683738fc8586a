//! Tests of the `xla` module: every example of seeds 000 and 001 and of the tiled-layout
//! reference, the text form, bad input, indexing and the bridge to morello layouts.

use super::*;
use morello_core::layout::Layout;
use morello_core::shape::Shape;

fn array(text: &str) -> ArrayShape {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn error(text: &str) -> String {
    match text.parse::<XlaShape>() {
        Ok(shape) => panic!("{text} parsed as {shape}"),
        Err(e) => e.to_string(),
    }
}

/// The buffer as the seeds draw it: each position shows the element's name (`names` in
/// row-major order of a 2-D index) or `0` for padding.
fn buffer_map(shape: &ArrayShape, names: &[&str]) -> String {
    let cols = shape.dims()[1];
    (0..shape.buffer_elements())
        .map(|linear| match shape.multi_index(linear).unwrap() {
            BufferPosition::Element(index) => names[(index[0] * cols + index[1]) as usize],
            BufferPosition::Padding(_) => "0",
        })
        .collect::<Vec<_>>()
        .join(" ")
}

const ABCDEF: [&str; 6] = ["a", "b", "c", "d", "e", "f"];

#[test]
fn seed_000_minor_to_major_2x3() {
    // "If the minor_to_major field in the layout is [0, 1] ... a d b e c f".
    assert_eq!(buffer_map(&array("f32[2,3]{0,1}"), &ABCDEF), "a d b e c f");
    // "if the minor_to_major field in the layout is [1, 0] then ... a b c d e f".
    assert_eq!(buffer_map(&array("f32[2,3]{1,0}"), &ABCDEF), "a b c d e f");
    // "The default layout for newly created Shapes is ... [N-1, ..., 0]".
    assert_eq!(array("f32[2,3]"), array("f32[2,3]{1,0}"));
    assert_eq!(array("f32[2,3]").to_string(), "f32[2,3]{1,0}");
    assert_eq!(array("f32[4,5,6]").layout().minor_to_major(), &[2, 1, 0]);
}

#[test]
fn seed_001_padded_dimensions() {
    // "[2 x 3] ... padded_dimensions is [3, 5] ... column-major ... a d 0 b e 0 c f 0 0 0 0 0 0 0".
    let padded = array("f32[2,3]{0,1:pad(3,5)}");
    assert_eq!(buffer_map(&padded, &ABCDEF), "a d 0 b e 0 c f 0 0 0 0 0 0 0");
    assert_eq!(padded.buffer_elements(), 15);
    assert_eq!(padded.multi_index(2).unwrap(), BufferPosition::Padding(PaddingKind::PaddedDimensions));
    assert_eq!(padded.to_string(), "f32[2,3]{0,1:pad(3,5)}");
    // The same through the API.
    let layout = XlaLayout::new(vec![0, 1]).with_padded_dimensions(Some(vec![3, 5]));
    assert_eq!(ArrayShape::new(ElementType::F32, vec![2, 3], layout).unwrap(), padded);
    // "equivalent to the layout of the following array with the same minor-to-major order":
    // a b c 0 0 / d e f 0 0 / 0 0 0 0 0, row-major.
    assert_eq!(buffer_map(&array("f32[2,3]{1,0:pad(3,5)}"), &ABCDEF), "a b c 0 0 d e f 0 0 0 0 0 0 0");
}

#[test]
fn seed_000_hlo_example_shapes() {
    for text in ["bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}", "bf16[32,32,8192]{2,1,0:T(8,128)(2,1)S(1)}"] {
        let shape = array(text);
        assert_eq!(shape.to_string(), text);
        assert_eq!(shape.element_type(), ElementType::Bf16);
        assert_eq!(shape.element_type().bits(), 16);
        assert_eq!(shape.layout().minor_to_major(), &[2, 1, 0]);
        assert_eq!(
            shape.layout().tiles(),
            &[Tile::new(vec![8, 128]).unwrap(), Tile::new(vec![2, 1]).unwrap()]
        );
        assert_eq!(shape.layout().memory_space(), MemorySpace::VMEM);
        assert_eq!(shape.layout().memory_space().name(), "VMEM");
        assert_eq!(shape.buffer_elements(), shape.element_count());
        assert_eq!(shape.buffer_bytes(), 2 * shape.element_count());
    }
    let shape = array("bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}");
    assert_eq!(shape.tiled_dims(), &[32, 4, 32, 4, 128, 2, 1]);
}

#[test]
fn seed_000_memory_spaces() {
    let name = |text: &str| array(text).layout().memory_space().name();
    for (text, expected) in [
        ("f32[2]", "device HBM"),
        ("f32[2]{0:S(0)}", "device HBM"),
        ("f32[2]{0:S(1)}", "VMEM"),
        ("f32[2]{0:S(2)}", "device specific"),
        ("f32[2]{0:S(3)}", "device specific"),
        ("f32[2]{0:S(5)}", "host"),
    ] {
        assert_eq!(name(text), expected, "{text}");
    }
    // S(0) is the default and is not printed.
    assert_eq!(array("f32[2]{0:S(0)}").to_string(), "f32[2]{0}");
}

#[test]
fn seed_000_dimension_helpers() {
    let shape = array("f32[7,1,5]");
    assert_eq!(shape.num_dims(), 3);
    assert_eq!(shape.true_num_dims(), 2);
    assert_eq!(shape.dimension_size(-1).unwrap(), 5);
    assert_eq!(shape.dimension_size(-2).unwrap(), 1);
    assert_eq!(shape.dimension_size(-3).unwrap(), 7);
    assert_eq!(shape.dimension_index(-1).unwrap(), 2);
    assert_eq!(shape.dimension_size(0).unwrap(), 7);
    assert_eq!(shape.dimension_index(3), Err(XlaError::DimensionOutOfRange { dimension: 3, rank: 3 }));
    assert_eq!(shape.dimension_index(-4), Err(XlaError::DimensionOutOfRange { dimension: -4, rank: 3 }));
    assert!(shape.dimension_index(i64::MIN).is_err());
    // Size 0 is valid.
    let empty = array("f32[0,5]{1,0:T(2,2)}");
    assert_eq!(empty.element_count(), 0);
    assert_eq!(empty.buffer_elements(), 0);
    assert_eq!(empty.tiled_dims(), &[0, 3, 2, 2]);
    assert_eq!(empty.indexer().offsets_row_major().count(), 0);
    assert_eq!(array("f32[0]").true_num_dims(), 0);
}

#[test]
fn reference_tiled_f32_3x5() {
    // "F32[3,5]{1,0:T(2,2)} occupies ceil(3/2)*ceil(5/2)*4 = 24 elements".
    let shape = array("F32[3,5]{1,0:T(2,2)}");
    assert_eq!(shape.to_string(), "f32[3,5]{1,0:T(2,2)}");
    assert_eq!(shape.buffer_elements(), 24);
    assert_eq!(shape.buffer_bytes(), 96);
    assert_eq!(shape.tiled_dims(), &[2, 3, 2, 2]);
    // The worked example: element (2,3) has tile (1,1), in-tile (0,1): linear index 17.
    assert_eq!(shape.linear_index(&[2, 3]).unwrap(), 17);
    let names: Vec<String> = (0..15).map(|i| format!("{i:x}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    // Tiles row-major, elements row-major inside each 2x2 tile, partial tiles padded.
    assert_eq!(buffer_map(&shape, &names), "0 1 5 6 2 3 7 8 4 0 9 0 a b 0 0 c d 0 0 e 0 0 0");
    assert_eq!(shape.multi_index(9).unwrap(), BufferPosition::Padding(PaddingKind::Tiling { tile: 0 }));
}

#[test]
fn reference_repeated_tiling_4x8() {
    // Figure 2 of the tiled-layout page: 4x8 tiled by (2,4) then (2,1). Tiles of 2x4 in row-major
    // order; inside each, columns of two rows are pairs.
    let shape = array("bf16[4,8]{1,0:T(2,4)(2,1)}");
    for i in 0..4u64 {
        for j in 0..8u64 {
            let expected = ((i / 2) * 2 + j / 4) * 8 + (j % 4) * 2 + i % 2;
            assert_eq!(shape.linear_index(&[i, j]).unwrap(), expected, "({i},{j})");
        }
    }
}

#[test]
fn tail_padding_alignment() {
    let shape = array("f32[3,5]{1,0:T(2,2)L(16)}");
    assert_eq!(shape.to_string(), "f32[3,5]{1,0:T(2,2)L(16)}");
    assert_eq!(shape.buffer_elements(), 32);
    assert_eq!(shape.multi_index(24).unwrap(), BufferPosition::Padding(PaddingKind::TailAlignment));
    assert_eq!(shape.multi_index(31).unwrap(), BufferPosition::Padding(PaddingKind::TailAlignment));
    assert!(shape.multi_index(32).is_err());
    // Already a multiple: no padding.
    assert_eq!(array("f32[4,4]{1,0:L(8)}").buffer_elements(), 16);
    assert_eq!(array("f32[3]{0:L(1)}").to_string(), "f32[3]{0}");
}

#[test]
fn byte_sizes_pack_sub_byte_types() {
    // XLA's ShapeUtil::ByteSizeOf: a whole byte per sub-byte element unless E(n) packs them.
    assert_eq!(array("s4[3]").buffer_bytes(), 3);
    assert_eq!(array("u4[4]").buffer_bytes(), 4);
    assert_eq!(array("s4[3]{0:E(4)}").buffer_bytes(), 2);
    assert_eq!(array("u4[4]{0:E(4)}").buffer_bytes(), 2);
    assert_eq!(array("s2[5]{0:E(2)}").buffer_bytes(), 2);
    assert_eq!(array("u1[9]{0:E(1)}").buffer_bytes(), 2);
    assert_eq!(array("s1[9]").buffer_bytes(), 9);
    assert_eq!(array("f4e2m1fn[3]{0:E(4)}").buffer_bytes(), 2);
    assert_eq!(array("f4e2m1fn[3]").buffer_bytes(), 3);
    assert_eq!(array("pred[3]").buffer_bytes(), 3);
    assert_eq!(array("f64[2,2]").buffer_bytes(), 32);
    assert_eq!(array("c64[3]").buffer_bytes(), 24);
    assert_eq!(array("c128[3]").buffer_bytes(), 48);
    assert_eq!(array("s4[3]{0:T(4)}").buffer_bytes(), 4);
    assert_eq!(array("u4[5]{0:T(4)E(4)}").buffer_bytes(), 4);
    // A wider element size than the type pads each element (E(8) for s4 is one byte each).
    assert_eq!(array("s4[3]{0:E(8)}").buffer_bytes(), 3);
    assert_eq!(array("token[]").buffer_bytes(), 0);
    assert_eq!(array("opaque[]").buffer_bytes(), 8);
    for name in
        ["f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e3m4", "f8e4m3", "f8e8m0fnu"]
    {
        let shape = array(&format!("{name}[2,3]"));
        assert_eq!(shape.buffer_bytes(), 6, "{name}");
        assert_eq!(shape.to_string(), format!("{name}[2,3]{{1,0}}"));
    }
    for t in ElementType::ALL {
        assert_eq!(ElementType::from_name(&t.name().to_uppercase()), Some(t));
        assert_eq!(t.name().parse::<ElementType>(), Ok(t));
    }
}

#[test]
fn scalars_and_tuples() {
    let scalar = array("f32[]");
    assert_eq!(scalar.to_string(), "f32[]");
    assert_eq!(scalar.buffer_elements(), 1);
    assert_eq!(scalar.linear_index(&[]).unwrap(), 0);
    assert_eq!(scalar.multi_index(0).unwrap(), BufferPosition::Element(vec![]));
    assert_eq!(array("f32[]{}"), scalar);
    assert_eq!(array("f32[]{:S(1)}").to_string(), "f32[]{:S(1)}");
    assert_eq!(array("f32[]{:L(4)}").buffer_elements(), 4);

    let tuple: XlaShape = "(f32[2], s32[])".parse().unwrap();
    assert_eq!(tuple.to_string(), "(f32[2]{0}, s32[])");
    let arrays = tuple.arrays();
    assert_eq!(arrays.len(), 2);
    assert_eq!(arrays[1].0, vec![1]);
    let nested: XlaShape = " ( (f32[2,2]{0,1}) ,( ), pred[1] ) ".parse().unwrap();
    assert_eq!(nested.to_string(), "((f32[2,2]{0,1}), (), pred[1]{0})");
    assert_eq!(
        nested.arrays().iter().map(|(path, _)| path.clone()).collect::<Vec<_>>(),
        vec![vec![0, 0], vec![2]]
    );
    assert_eq!("()".parse::<XlaShape>().unwrap(), XlaShape::Tuple(vec![]));
    assert!(matches!("(f32[2])".parse::<ArrayShape>(), Err(XlaError::NotAnArray { .. })));
}

#[test]
fn text_is_canonical() {
    let cases = [
        ("f32[2, 3] { 0 , 1 : T(2,2) (1,1) S(2) L(4) }", "f32[2,3]{0,1:T(2,2)(1,1)L(4)S(2)}"),
        ("BF16[8]{0:S(1)T(8)}", "bf16[8]{0:T(8)S(1)}"),
        ("u8[2,3]{1,0:}", "u8[2,3]{1,0}"),
        ("s8[2,3]{1,0:L(2)pad(4,4)}", "s8[2,3]{1,0:pad(4,4)L(2)}"),
        ("f32[]{:pad()}", "f32[]{:pad()}"),
    ];
    for (text, canonical) in cases {
        let shape: XlaShape = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(shape.to_string(), canonical);
        assert_eq!(canonical.parse::<XlaShape>().unwrap(), shape);
    }
}

#[test]
fn linear_and_multi_index_are_inverse() {
    for text in [
        "f32[3,5]{1,0:T(2,2)}",
        "f32[3,5]{0,1:T(2,2)}",
        "bf16[5,3,7]{0,2,1:T(2,4)(2,1)L(7)}",
        "s8[4,9]{1,0:pad(5,10)T(4)(2,1)}",
        "f32[6]{0:T(4)(3)}",
        "u4[3,3,3]{2,0,1:T(2,2,2)(2)}",
    ] {
        let shape = array(text);
        let mut seen = vec![false; shape.buffer_elements() as usize];
        let indexer = shape.indexer();
        let mut listed = indexer.offsets_row_major();
        for i in 0..shape.element_count() {
            let mut index = vec![0u64; shape.num_dims()];
            let mut rest = i;
            for (slot, &size) in index.iter_mut().zip(shape.dims()).rev() {
                *slot = rest % size;
                rest /= size;
            }
            let linear = shape.linear_index(&index).unwrap();
            assert_eq!(listed.next(), Some(linear));
            assert!(!std::mem::replace(&mut seen[linear as usize], true), "{text}: {index:?} collides");
            assert_eq!(shape.multi_index(linear).unwrap(), BufferPosition::Element(index));
        }
        for (linear, used) in seen.iter().enumerate() {
            if !used {
                assert!(matches!(shape.multi_index(linear as u64).unwrap(), BufferPosition::Padding(_)));
            }
        }
    }
    let shape = array("f32[3,5]");
    assert_eq!(
        shape.linear_index(&[3, 0]),
        Err(XlaError::IndexOutOfBounds { dimension: 0, coordinate: 3, size: 3 })
    );
    assert_eq!(shape.linear_index(&[0]), Err(XlaError::IndexRank { len: 1, rank: 2 }));
}

#[test]
fn bad_input_is_located() {
    let cases = [
        // Unknown element types.
        ("f33[2]", "`f33` at column 1: unknown element type `f33`; supported: pred, s1, s2, s4,"),
        ("c32[2]", "unknown element type `c32`"),
        ("f8e2m5[2]", "unknown element type"),
        ("", "the end of the text at column 1: expected an element type"),
        ("[2]", "`[` at column 1: expected an element type"),
        // Unbalanced brackets.
        ("f32[2,3", "the end of the text at column 8: expected `,` or `]` in the dimensions"),
        ("f32[2,3]{1,0", "the end of the text at column 13: expected `,`, `:` or `}`"),
        ("f32[2,3]{1,0:T(2,2}", "`}` at column 19: expected `,` or `)` in the tile"),
        ("(f32[2], s32[]", "the end of the text at column 15: expected `,` or `)` in the tuple"),
        ("f32[2]}", "`}` at column 7: unexpected text after the shape"),
        ("f32 2]", "`2` at column 5: expected `[` after the element type"),
        // minor_to_major not a permutation.
        (
            "f32[2,3]{0,0}",
            "`0,0` at column 10: minor_to_major [0, 0] is not a permutation of the shape's dims 0..1",
        ),
        ("f32[2,3]{0}", "`0` at column 10: minor_to_major [0] is not a permutation"),
        ("f32[2,3]{2,0}", "minor_to_major [2, 0] is not a permutation"),
        ("f32[2,3]{-1,0}", "`-1,0` at column 10: minor_to_major [-1, 0] is not a permutation"),
        ("f32[2]{}", "`{}` at column 7: minor_to_major [] is not a permutation"),
        // Tiles with zero or negative sizes, empty or combining.
        (
            "f32[2,3]{1,0:T(8,0)}",
            "`(8,0)` at column 15: tile (8,0) has size 0 in its dimension 1; tile sizes must be at least 1",
        ),
        ("f32[2,3]{1,0:T(-8,1)}", "tile (-8,1) has size -8 in its dimension 0"),
        ("f32[2,3]{1,0:T()}", "`()` at column 15: a tile needs at least one dimension"),
        ("f32[2,3]{1,0:T(2,*)}", "`(2,*)` at column 15: tile (2,*) ends with `*`"),
        ("f32[2,3]{1,0:T}", "expected `(` starting a tile after `T`"),
        (
            "f32[8]{0:T(2)(2,*)}",
            "`(2,*)` at column 14: tile (2,*) ends with `*`, but `*` combines a dimension with the next more minor one",
        ),
        // Sizes that overflow once padded or tiled.
        ("f32[9223372036854775807]{0:T(2)}", "padded to a multiple of 2 by tile (2) exceeds 2^63 - 1"),
        (
            "f32[4294967296,4294967296]",
            "at column 1: the number of elements of the tiled buffer exceeds 2^63 - 1",
        ),
        ("f32[3037000499,3037000499]", "the size of the buffer in bytes exceeds 2^63 - 1"),
        ("f32[9223372036854775807]{0:L(2)}", "padded to a multiple of 2 exceeds 2^63 - 1"),
        (
            "f32[9223372036854775808]",
            "`9223372036854775808` at column 5: a dimension size is above the limit of 2^63 - 1",
        ),
        ("f32[99999999999999999999999999999999999999999]", "a dimension size is above the limit"),
        ("f32[2]{0:T(9223372036854775808)}", "above the limit of 2^63 - 1"),
        // Other rules.
        ("f32[-2]", "`-2` at column 5: a dimension size must not be negative"),
        ("f32[-0]", "`-0` at column 5: a dimension size must not be negative"),
        ("f32[<=-4]", "`-4` at column 7: a dimension bound must not be negative"),
        ("f32[<4]", "`<` at column 5: expected a dimension size"),
        ("f32[?]{1,0}", "minor_to_major [1, 0] is not a permutation of the shape's dim 0"),
        ("f32[2,3]{0}", "minor_to_major [0] is not a permutation of the shape's dims 0..1"),
        ("token[2]", "token is not an array element type; it is written `token[]` alone"),
        ("f32[2]{0:SC(1:4)}", "SC(1:...) splits dimension 1, but the shape has dim 0"),
        ("f32[2]{0:#(q7)}", "unknown element type `q7`"),
        ("f32[2,2]{1,0:D(C)}", "D(..) has 1 dimension level types, but the shape has 2 dimensions"),
        ("f32[2]{0:D(X)}", "`X` at column 12: expected a dimension level type"),
        ("f32[2]{0:D()}", "`)` at column 12: expected a dimension level type"),
        ("f32[2]{0:D(C)D(C)}", "`D` at column 14: dimension level types `D(...)` given twice"),
        ("f32[2]{0:P(f32[2]{0:P(f32[3]{1})})}", "minor_to_major [1] is not a permutation"),
        ("f32[2]{0:P(f32[2]}", "expected `)` closing `P(`"),
        ("f32[2]{0:L(0)}", "`0` at column 12: tail_padding_alignment_in_elements must be at least 1"),
        ("f32[2]{0:E(4)}", "`f32[2]{0:E(4)}` at column 1: E(4) is narrower than f32, which needs 32 bits"),
        ("f32[2]{0:Q(4)}", "`Q` at column 10: expected a layout item"),
        ("f32[2]{0:S(1)S(2)}", "`S` at column 14: `S(...)` given twice in one layout"),
        ("f32[2]{0:T(2)L(2)T(2)}", "tiles `T(...)` given twice"),
        (
            "f32[2,3]{1,0:pad(2)}",
            "`pad(2)` at column 14: padded_dimensions has 1 entries, but the shape has 2 dimensions",
        ),
        ("f32[2,3]{1,0:pad(1,3)}", "padded_dimensions gives dimension 0 (size 2) the smaller width 1"),
        ("f32[2]{0:S(-1)}", "a memory space identifier must not be negative"),
        ("f32[2]\n{0}x", "`x` at column 11: unexpected text"),
        ("f32[2]{0:T(2)\u{7}}", "`\\u{7}` at column 14"),
        ("é[2]", "`é` at column 1: expected an element type"),
    ];
    for (text, message) in cases {
        let got = error(text);
        assert!(got.contains(message), "{text:?}: got {got:?}, expected it to contain {message:?}");
        assert!(!got.contains('\n'), "{text:?}: {got:?}");
    }
    // Deep nesting is an error, not a stack overflow.
    let deep = format!("{}f32[]{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(error(&deep).contains("tuples nest deeper than 64 levels"));
}

#[test]
fn api_values_are_checked() {
    assert_eq!(Tile::new(vec![]), Err(XlaError::EmptyTile));
    assert!(matches!(Tile::new(vec![2, 0]), Err(XlaError::TileSizeNotPositive { dimension: 1, .. })));
    assert!(XlaLayout::new(vec![0]).with_tail_padding_alignment(0).is_err());
    assert!(MemorySpace::new(u64::MAX).is_err());
    assert!(matches!(
        ArrayShape::with_default_layout(ElementType::F32, vec![u64::MAX]),
        Err(XlaError::DimTooLarge { dimension: 0, .. })
    ));
    assert!(matches!(
        ArrayShape::new(ElementType::F32, vec![2, 3], XlaLayout::new(vec![1, 1])),
        Err(XlaError::NotAPermutation { rank: 2, .. })
    ));
}

fn morello(text: &str) -> String {
    let m = array(text).to_morello().unwrap_or_else(|e| panic!("{text}: {e}"));
    format!("{} {}", m.shape, m.layout)
}

#[test]
fn bridge_to_morello() {
    for (text, expected) in [
        ("f32[16,256]{1,0:T(8,128)}", "16x256 [0, 1, 0 p(8), 1 p(128)]"),
        ("bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}", "32x32x4096 [0, 1, 2, 1 p(4), 2 p(128), 1 p(2)]"),
        ("f32[8,128]{1,0:T(8,128)}", "8x128 [0, 1, 0 p(8), 1 p(128)]"),
        ("f32[2,3]{0,1}", "2x3 [1, 0]"),
        ("f32[6,8]{0,1:T(4,1)}", "6x8 [1, 0, 1 p(4)]"),
        ("f32[512]{0:T(256)(128)}", "512 [0, 0 p(2), 0 p(128)]"),
        ("f32[]", " []"),
        ("s8[16,256]{1,0:T(8,128)(4,1)}", "16x256 [0, 1, 0 p(2), 1 p(128), 0 p(4)]"),
    ] {
        assert_eq!(morello(text), expected, "{text}");
    }
}

#[test]
fn bridge_says_why_not() {
    let why = |text: &str| array(text).to_morello().unwrap_err().to_string();
    assert!(why("f32[3,5]{1,0:T(2,2)}").contains("does not divide physical dimension 0 of size 3"));
    assert!(why("f32[1,256]{1,0:T(2,128)}").contains("the last tile needs padding"));
    assert!(why("f32[4,4]{1,0:L(8)}").contains("L(8) pads the end of the buffer"));
    assert!(why("f32[2,3]{0,1:pad(2,3)}").contains("padded_dimensions pads the array"));
    assert!(why("f32[0,4]").contains("dimension 0 has size 0"));
    assert!(why("f32[4294967296]").contains("above morello's limit of 2^31"));
    assert!(why("f32[64]{0:T(8)(2,4)}").contains("finer part of dimension 0 before a coarser one"));
    let tuple: XlaShape = "(f32[2])".parse().unwrap();
    assert!(tuple.as_array().is_none());
}

fn from_morello(shape: &str, layout: &str) -> Result<String, BridgeError> {
    let shape: Shape = shape.parse().unwrap();
    let layout = Layout::parse_for_rank(layout, shape.rank()).unwrap();
    let xla = ArrayShape::from_morello(ElementType::F32, &shape, &layout, MemorySpace::DEVICE_HBM)?;
    // Offsets agree element by element.
    let morello = layout.indexer(&shape).unwrap();
    let indexer = xla.indexer();
    for point in shape.points() {
        let index: Vec<u64> = point.iter().map(|&c| u64::from(c)).collect();
        assert_eq!(indexer.offset(&index), morello.offset(&point), "{layout} at {point:?}");
    }
    Ok(xla.to_string())
}

#[test]
fn bridge_from_morello() {
    assert_eq!(from_morello("16x256", "[0, 1, 0 p(8), 1 p(128)]").unwrap(), "f32[16,256]{1,0:T(8,128)}");
    assert_eq!(
        from_morello("32x32x64", "[0, 1, 2, 1 p(4), 2 p(16), 1 p(2)]").unwrap(),
        "f32[32,32,64]{2,1,0:T(8,16)(2,1)}"
    );
    assert_eq!(from_morello("6x8", "row-major").unwrap(), "f32[6,8]{1,0}");
    assert_eq!(from_morello("6x8", "col-major").unwrap(), "f32[6,8]{0,1}");
    assert_eq!(from_morello("6x8", "[1, 0, 1 p(4)]").unwrap(), "f32[6,8]{0,1:T(4,1)}");
    // Not of the bridge's form, rewritten with the same offsets.
    assert_eq!(from_morello("12x5", "[0, 0 p(4), 1]").unwrap(), "f32[12,5]{1,0}");
    assert_eq!(from_morello("1x8", "[1]").unwrap(), "f32[1,8]{1,0}");
    assert_eq!(from_morello("2x3", "[0 p(2), 1]").unwrap(), "f32[2,3]{1,0}");
    assert_eq!(from_morello("4x3x5", "[0, 1, 0 p(2), 2, 1 p(3)]").unwrap(), "f32[4,3,5]{1,2,0}");
    assert_eq!(
        from_morello("4x4x5", "[0, 1, 0 p(2), 2, 1 p(2)]").unwrap(),
        "f32[4,4,5]{2,1,0:T(2,2,5)(2,1)}"
    );
    assert_eq!(from_morello("8x4", "[0, 1, 1 oe(2)]").unwrap(), "f32[8,4]{1,0}");
    // OddEven strips have no XLA equivalent.
    let err = from_morello("8x32", "[0, 1, 1 oe(16)]").unwrap_err();
    assert_eq!(
        err.to_string(),
        "physical dim 2 is an odd-even strip of 16, which XLA tilings cannot express"
    );
    assert!(matches!(from_morello("6x8", "[0, 1, 1 p(3)]"), Err(BridgeError::Layout(_))));
}

#[test]
fn bridge_round_trips_common_tilings() {
    for text in [
        "f32[16,256]{1,0:T(8,128)}",
        "f32[8,128]{1,0:T(8,128)}",
        "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}",
        "bf16[16,256]{1,0:T(8,128)(2,1)}",
        "s8[64,512]{1,0:T(8,128)(4,1)}",
        "pred[64,256]{1,0:T(32,128)(32,1)}",
        "bf16[2,4,256]{2,1,0:T(4,128)(2,1)}",
        "f32[1024]{0:T(256)(128)}",
        "f32[1024]{0:T(1024)}",
        "f32[4,128,8]{1,2,0:T(8,128)}",
        "f32[3,5,7]{0,1,2}",
        "f32[16,256]{0,1:T(128,8)S(5)}",
        "f32[8,256]{1,0:T(8,128)(2,128)}",
    ] {
        let xla = array(text);
        let m = xla.to_morello().unwrap_or_else(|e| panic!("{text}: {e}"));
        let back =
            ArrayShape::from_morello(xla.element_type(), &m.shape, &m.layout, xla.layout().memory_space())
                .unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(back, xla, "{text} -> {} -> {back}", m.layout);
    }
    // Equivalent, not identical: a leading size-1 tile entry adds nothing.
    let xla = array("f32[4,256]{1,0:T(1,128)}");
    let m = xla.to_morello().unwrap();
    let back =
        ArrayShape::from_morello(ElementType::F32, &m.shape, &m.layout, MemorySpace::DEVICE_HBM).unwrap();
    assert_eq!(back.to_string(), "f32[4,256]{1,0:T(128)}");
}

#[test]
fn combine_dimensions_follow_the_tiled_layout_page() {
    // XLA's tiled-layout page: F32[2,7,8,11,10]{4,3,2,1,0} with tile (*,*,2,*,3) is
    // F32[112,110] tiled by (2,3).
    let combined = array("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}");
    let plain = array("f32[112,110]{1,0:T(2,3)}");
    assert_eq!(combined.tiled_dims(), plain.tiled_dims());
    assert_eq!(combined.tiled_dims(), &[56, 37, 2, 3]);
    assert_eq!(combined.buffer_elements(), plain.buffer_elements());
    for index in [[0, 0, 0, 0, 0], [1, 6, 7, 10, 9], [1, 2, 3, 4, 5], [0, 5, 1, 7, 2]] {
        let row = (index[0] * 7 + index[1]) * 8 + index[2];
        let column = index[3] * 10 + index[4];
        assert_eq!(
            combined.linear_index(&index).unwrap(),
            plain.linear_index(&[row, column]).unwrap(),
            "{index:?}"
        );
    }
    assert_eq!(combined.to_string(), "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}");
    assert!(combined.to_morello().unwrap_err().to_string().contains("combines dimensions"));
}

#[test]
fn tiles_longer_than_the_shape_add_leading_ones() {
    // TPU dumps tile scalars and vectors by one 2-D tile.
    let scalar = array("f32[]{:T(256)}");
    assert_eq!(scalar.to_string(), "f32[]{:T(256)}");
    assert_eq!(scalar.tiled_dims(), &[1, 256]);
    assert_eq!(scalar.buffer_bytes(), 1024);
    assert_eq!(scalar.linear_index(&[]).unwrap(), 0);
    let vector = array("s32[3]{0:T(2,128)}");
    assert_eq!(vector.tiled_dims(), &[1, 1, 2, 128]);
    assert_eq!(vector.linear_index(&[2]).unwrap(), 2);
    assert_eq!(vector.multi_index(3).unwrap(), BufferPosition::Padding(PaddingKind::Tiling { tile: 0 }));
    assert!(vector.to_morello().unwrap_err().to_string().contains("longer than the 1 dimensions"));
}

#[test]
fn dynamic_dimensions_read_and_print() {
    let bounded = array("f32[<=10,3]{1,0}");
    assert_eq!(bounded.to_string(), "f32[<=10,3]{1,0}");
    assert!(bounded.is_dynamic_dimension(0) && !bounded.is_dynamic_dimension(1));
    // XLA allocates a bounded dimension at its bound.
    assert_eq!(bounded.buffer_bytes(), 120);
    let unbounded: XlaShape = "f32[?,<=3, 4] {2,1,0}".parse().unwrap();
    assert_eq!(unbounded.to_string(), "f32[?,<=3,4]{2,1,0}");
    assert!(unbounded.arrays().is_empty());
    assert_eq!("f32[?]".parse::<ArrayShape>().unwrap_err(), XlaError::Unbounded { dimension: 0 });
}

#[test]
fn sparse_layouts_read_and_print_without_a_buffer() {
    let sparse: XlaShape = "f32[4,8]{1,0:D(D,C+~)#(s32)*(u16)}".parse().unwrap();
    assert_eq!(sparse.to_string(), "f32[4,8]{1,0:D(D,C+~)#(s32)*(u16)}");
    let XlaShape::Bufferless(array) = &sparse else { panic!("a sparse array has no buffer: {sparse:?}") };
    assert!(array.layout().is_sparse());
    let levels: Vec<DimLevel> = array.layout().dim_level_types().iter().map(|t| t.level).collect();
    assert_eq!(levels, [DimLevel::Dense, DimLevel::Compressed]);
    assert!(!array.layout().dim_level_types()[1].unique && !array.layout().dim_level_types()[1].ordered);
    assert!(sparse.arrays().is_empty());
    assert_eq!("f32[4]{0:D(S)}".parse::<ArrayShape>().unwrap_err(), XlaError::Sparse);
    // All dense is a dense array with a buffer, as XLA's `IsDenseArray`.
    let dense: ArrayShape = "f32[2,3]{1,0:D(D,D)}".parse().unwrap();
    assert_eq!((dense.buffer_bytes(), dense.to_string().as_str()), (24, "f32[2,3]{1,0:D(D,D)}"));
    // `P(..)` is kept as printed and changes no offsets; items print in XLA's order.
    let physical: ArrayShape = "s32[10,20]{0,1:M(8)P( s32[10,20] )D(D,D)}".parse().unwrap();
    assert_eq!(physical.to_string(), "s32[10,20]{0,1:D(D,D)P(s32[10,20]{1,0})M(8)}");
    assert_eq!(physical.layout().physical_shape(), Some("s32[10,20]{1,0}"));
    assert_eq!((physical.buffer_bytes(), physical.linear_index(&[1, 0]).unwrap()), (800, 1));
    // Nesting physical shapes is bounded like nesting tuples.
    let deep = format!("{}f32[1]{}", "f32[1]{0:P(".repeat(100), ")}".repeat(100));
    assert!(deep.parse::<XlaShape>().unwrap_err().to_string().contains("nest deeper than 64"));
}

#[test]
fn every_layout_item_xla_prints_reads_back() {
    for text in [
        "f32[2,3]{1,0:T(2,128)L(4)#(s16)*(s32)E(32)S(1)SC(0:1)(1:1,2)M(8)}",
        "s4[16]{0:T(1024)(128)(2,1)E(4)}",
        "u8[4,4]{0,1:E(8)}",
        "bf16[8,128]{1,0:T(8,128)(2,1)}",
        "pred[]",
        "token[]",
        "opaque[]",
        "(f32[2]{0}, (s32[], token[]), c128[1]{0})",
        "f32[]{:T(256)}",
    ] {
        let shape: XlaShape = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(shape.to_string(), text);
    }
    // XLA prints every split configuration after one `SC`; a repeated `SC` item reads too.
    let repeated: XlaShape = "f32[2,3]{1,0:SC(0:1)SC(1:1,2)}".parse().unwrap();
    assert_eq!(repeated.to_string(), "f32[2,3]{1,0:SC(0:1)(1:1,2)}");
    // Whitespace between the shape and its layout, and inside, as some dumps write it.
    assert_eq!(array("f32[2, 3] {1, 0 : T(2,2) E(32)}").to_string(), "f32[2,3]{1,0:T(2,2)E(32)}");
    let layout = array("f32[2,3]{1,0:#(s16)*(s32)SC(0:1)M(8)}").layout().clone();
    assert_eq!(layout.index_primitive_type(), Some(ElementType::S16));
    assert_eq!(layout.pointer_primitive_type(), Some(ElementType::S32));
    assert_eq!(layout.split_configs(), &[SplitConfig { dimension: 0, split_indices: vec![1] }]);
    assert_eq!(layout.dynamic_shape_metadata_prefix_bytes(), 8);
    // None of these change the buffer.
    assert_eq!(array("f32[2,3]{1,0:#(s16)*(s32)SC(0:1)M(8)}").buffer_bytes(), 24);
}

#[test]
fn shapes_from_xla_tests_and_dumps() {
    // Shape strings from XLA's parser and shape tests and from TPU dumps in its tests.
    for (text, bytes) in [
        ("f32[123,456]", 123 * 456 * 4),
        ("(f32[1572864],s8[5120,1024])", 0),
        ("bf16[1,8,1,8,320]{4,0,3,2,1:T(2,128)(2,1)S(3)}", 2 * 8 * 2 * 8 * 384 * 2 / 2),
        ("(f32[]{:T(128)}, f32[128]{0:T(128)S(3)})", 0),
        ("bf16[2,8192]{1,0:T(2,128)(2,1)}", 2 * 8192 * 2),
        ("f32[1,6144]{1,0:T(1,128)}", 6144 * 4),
    ] {
        let shape: XlaShape = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        if let XlaShape::Array(array) = &shape {
            assert_eq!(array.buffer_bytes(), bytes, "{text}");
        }
    }
    // The bf16 shape above: physical order [1,3,2,0,4] tiled by (2,128) pads dim 0 (size 1)
    // to 2 and dim 4 (320) to 384.
    assert_eq!(
        array("bf16[1,8,1,8,320]{4,0,3,2,1:T(2,128)(2,1)S(3)}").tiled_dims(),
        &[8, 1, 8, 1, 3, 1, 128, 2, 1]
    );
    // IndexUtil: the row-major linear index of (5,7,9) in [10,20,30] is 5*600 + 7*30 + 9.
    assert_eq!(array("f32[10,20,30]{2,1,0}").linear_index(&[5, 7, 9]).unwrap(), 3219);
    // And with dimension 0 most minor: 5 + 7*10 + 9*200.
    assert_eq!(array("f32[10,20,30]{0,1,2}").linear_index(&[5, 7, 9]).unwrap(), 1875);
}
