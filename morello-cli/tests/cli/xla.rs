//! End-to-end tests of `morello xla`: the seeds' examples, an independent oracle of XLA's
//! tiled-layout formula checked on random shapes and tilings, and bad input.
//!
//! The oracle does not index: it materialises the buffer. It lays the labelled elements out in
//! the padded logical array, transposes them to physical order, then for each tiling builds the
//! padded, reshaped and transposed array position by position, as the tiled-layout page
//! describes tiling ("pad-reshape-transpose"). An element's offset is where its label ends up.

use crate::common::{morello, morello_ok};

use proptest::prelude::*;
use proptest::sample::select;

/// `morello xla <shape> --json`, parsed.
fn json(shape: &str) -> serde_json::Value {
    serde_json::from_str(&text(&[shape, "--json"])).expect("valid JSON")
}

/// `morello xla <shape> --json`, parsed, asserting that it reads `shape` as a `kind` and prints
/// it back as `printed`.
fn json_of_kind(shape: &str, kind: &str, printed: &str) -> serde_json::Value {
    let v = json(shape);
    assert_eq!((v["kind"].as_str(), v["shape"].as_str()), (Some(kind), Some(printed)), "{v}");
    v
}

/// The standard output of `morello xla` with `args`, which must succeed.
fn text(args: &[&str]) -> String {
    morello_ok(&[&["xla"], args].concat()).0
}

fn offsets(value: &serde_json::Value) -> Vec<u64> {
    serde_json::from_value(value["offsets"].clone()).expect("offsets are numbers")
}

/// A layout to check, as plain numbers.
#[derive(Debug, Clone)]
struct Case {
    type_name: &'static str,
    bits: u64,
    dims: Vec<u64>,
    minor_to_major: Vec<usize>,
    tiles: Vec<Vec<u64>>,
    padded: Option<Vec<u64>>,
    alignment: u64,
    memory_space: u64,
}

impl Case {
    /// The HLO text, written here rather than by the library.
    fn text(&self) -> String {
        let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let order = self.minor_to_major.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        let mut items = String::new();
        if let Some(padded) = &self.padded {
            items += &format!("pad({})", list(padded));
        }
        if !self.tiles.is_empty() {
            items.push('T');
            for tile in &self.tiles {
                items += &format!("({})", list(tile));
            }
        }
        if self.alignment != 1 {
            items += &format!("L({})", self.alignment);
        }
        if self.memory_space != 0 {
            items += &format!("S({})", self.memory_space);
        }
        let colon = if items.is_empty() { "" } else { ":" };
        format!("{}[{}]{{{order}{colon}{items}}}", self.type_name, list(&self.dims))
    }
}

/// A materialised array: a label (element number) or `None` (padding) per position, row-major.
struct Grid {
    bounds: Vec<u64>,
    cells: Vec<Option<u64>>,
}

/// Coordinates of row-major position `position` in `bounds`.
fn coordinates(mut position: u64, bounds: &[u64]) -> Vec<u64> {
    let mut coords = vec![0; bounds.len()];
    for (c, &b) in coords.iter_mut().zip(bounds).rev() {
        *c = position % b;
        position /= b;
    }
    coords
}

fn position(coords: &[u64], bounds: &[u64]) -> u64 {
    coords.iter().zip(bounds).fold(0, |acc, (&c, &b)| acc * b + c)
}

impl Grid {
    /// A new grid of `bounds`, filling each position from the coordinates `source` gives (or
    /// padding).
    fn build(bounds: Vec<u64>, source: impl Fn(&[u64]) -> Option<u64>) -> Grid {
        let volume: u64 = bounds.iter().product();
        let cells = (0..volume).map(|p| source(&coordinates(p, &bounds))).collect();
        Grid { bounds, cells }
    }

    fn at(&self, coords: &[u64]) -> Option<u64> {
        self.cells[position(coords, &self.bounds) as usize]
    }
}

/// The oracle: (offset of each element in row-major logical order, buffer size in elements).
fn oracle(case: &Case) -> (Vec<u64>, u64) {
    let dims = &case.dims;
    let logical_bounds = case.padded.clone().unwrap_or_else(|| dims.clone());
    // 1. The padded logical array, labels in row-major order of the unpadded one.
    let logical = Grid::build(logical_bounds.clone(), |c| {
        c.iter().zip(dims).all(|(&x, &d)| x < d).then(|| position(c, dims))
    });
    // 2. Transposed to physical order (most major first).
    let physical: Vec<usize> = case.minor_to_major.iter().rev().copied().collect();
    let mut grid = Grid::build(physical.iter().map(|&d| logical_bounds[d]).collect(), |c| {
        let mut logical_coords = vec![0; c.len()];
        for (&d, &x) in physical.iter().zip(c) {
            logical_coords[d] = x;
        }
        logical.at(&logical_coords)
    });
    // 3. Each tiling: pad the last k dims to multiples of the tile, split, move in-tile dims last.
    for tile in &case.tiles {
        let (r, k) = (grid.bounds.len(), tile.len());
        let mut bounds = grid.bounds[..r - k].to_vec();
        bounds.extend(grid.bounds[r - k..].iter().zip(tile).map(|(&b, &t)| b.div_ceil(t)));
        bounds.extend(tile);
        let previous = &grid;
        grid = Grid::build(bounds, |c| {
            let mut source = c[..r - k].to_vec();
            for (j, &t) in tile.iter().enumerate() {
                let x = c[r - k + j] * t + c[r + j];
                if x >= previous.bounds[r - k + j] {
                    return None;
                }
                source.push(x);
            }
            previous.at(&source)
        });
    }
    // 4. Tail padding.
    let buffer = (grid.cells.len() as u64).div_ceil(case.alignment) * case.alignment;
    let count: u64 = dims.iter().product();
    let mut offsets = vec![u64::MAX; count as usize];
    for (p, cell) in grid.cells.iter().enumerate() {
        if let Some(label) = cell {
            offsets[*label as usize] = p as u64;
        }
    }
    (offsets, buffer)
}

fn case() -> impl Strategy<Value = Case> {
    let types = vec![("f32", 32), ("bf16", 16), ("s4", 4), ("u8", 8), ("pred", 8), ("f64", 64), ("u4", 4)];
    (
        select(types),
        prop::collection::vec(0u64..7, 0..=4),
        prop::collection::vec(any::<u64>(), 4),
        prop::collection::vec(prop::collection::vec(1u64..6, 1..=4), 0..=3),
        prop::option::weighted(0.25, prop::collection::vec(0u64..3, 4)),
        prop_oneof![3 => Just(1u64), 1 => 2u64..10],
        select(vec![0u64, 1, 2, 5]),
    )
        .prop_map(|((type_name, bits), dims, shuffle, raw_tiles, extra, alignment, memory_space)| {
            let rank = dims.len();
            let mut minor_to_major: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                minor_to_major.swap(i, (shuffle[i] % (i as u64 + 1)) as usize);
            }
            let mut tiles = Vec::new();
            let mut tiled_rank = rank;
            for tile in raw_tiles {
                if tiled_rank == 0 {
                    break;
                }
                let tile: Vec<u64> = tile.into_iter().take(tiled_rank).collect();
                tiled_rank += tile.len();
                tiles.push(tile);
            }
            let padded = extra.map(|e| dims.iter().zip(e).map(|(&d, x)| d + x).collect());
            Case { type_name, bits, dims, minor_to_major, tiles, padded, alignment, memory_space }
        })
        // Keep the materialised buffers small.
        .prop_filter("buffer small enough for the oracle", |case| oracle_size(case) <= 20_000)
}

/// The buffer size the oracle will build, computed loosely (an upper bound).
fn oracle_size(case: &Case) -> u64 {
    let mut bounds: Vec<u64> = case.padded.clone().unwrap_or_else(|| case.dims.clone());
    for tile in &case.tiles {
        let r = bounds.len();
        let k = tile.len();
        let mut next = bounds[..r - k].to_vec();
        next.extend(bounds[r - k..].iter().zip(tile).map(|(&b, &t)| b.div_ceil(t)));
        next.extend(tile);
        bounds = next;
    }
    bounds.iter().product()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn json_agrees_with_an_independent_oracle(case in case()) {
        let text = case.text();
        let value = json(&text);
        let (expected, buffer) = oracle(&case);
        prop_assert_eq!(&value["buffer_elements"], &serde_json::json!(buffer), "{}", text);
        prop_assert_eq!(offsets(&value), expected, "{}", text);
        // XLA's byte size: a whole byte per sub-byte element (no E(n) here).
        prop_assert_eq!(&value["buffer_bytes"], &serde_json::json!(buffer * case.bits.div_ceil(8)), "{}", text);
        prop_assert_eq!(&value["memory_space"]["id"], &serde_json::json!(case.memory_space));
        prop_assert_eq!(&value["minor_to_major"], &serde_json::json!(case.minor_to_major));
    }
}

#[test]
fn oracle_agrees_on_fixed_tilings() {
    // Shapes and tilings chosen by hand (the random ones rarely pick these exact forms).
    for text in [
        "f32[3,5]{1,0:T(2,2)}",
        "bf16[4,8]{1,0:T(2,4)(2,1)}",
        "bf16[16,256]{1,0:T(8,128)(2,1)}",
        "s8[9,130]{1,0:T(8,128)(4,1)}",
        "pred[33,129]{0,1:T(32,128)(32,1)L(1024)}",
        "f32[3,4,5]{0,2,1:T(2,3)(2,1,2)}",
        "u4[7]{0:pad(9)T(4)(3)(2)L(5)}",
        "f32[2,3]{0,1:pad(3,5)}",
    ] {
        let value = json(text);
        let shape_text = value["shape"].as_str().expect("shape is text").to_string();
        let case = parse_case(&shape_text);
        let (expected, buffer) = oracle(&case);
        assert_eq!(value["buffer_elements"], buffer, "{text}");
        assert_eq!(offsets(&value), expected, "{text}");
    }
}

/// Reads the canonical text of the fixed cases back into a [`Case`] (simple, test-only).
fn parse_case(text: &str) -> Case {
    let (type_name, rest) = text.split_once('[').expect("type");
    let (dims, rest) = rest.split_once(']').expect("dims");
    let numbers = |s: &str| -> Vec<u64> {
        s.split(',').filter(|p| !p.is_empty()).map(|p| p.parse().expect("number")).collect()
    };
    let body = rest.trim_start_matches('{').trim_end_matches('}');
    let (order, items) = body.split_once(':').unwrap_or((body, ""));
    let mut case = Case {
        type_name: "f32",
        bits: match type_name {
            "s4" | "u4" => 4,
            "pred" | "s8" | "u8" => 8,
            "bf16" | "f16" => 16,
            _ => 32,
        },
        dims: numbers(dims),
        minor_to_major: numbers(order).into_iter().map(|d| d as usize).collect(),
        tiles: Vec::new(),
        padded: None,
        alignment: 1,
        memory_space: 0,
    };
    let mut rest = items;
    while !rest.is_empty() {
        let (head, tail) = rest.split_once(')').expect("item closes");
        rest = tail;
        if let Some(widths) = head.strip_prefix("pad(") {
            case.padded = Some(numbers(widths));
        } else if let Some(sizes) = head.strip_prefix("T(").or_else(|| head.strip_prefix('(')) {
            case.tiles.push(numbers(sizes));
        } else if let Some(n) = head.strip_prefix("L(") {
            case.alignment = n.parse().expect("alignment");
        }
    }
    case
}

#[test]
fn seed_examples() {
    // F32[3,5]{1,0:T(2,2)} takes 24 elements; element (2,3) is at 17.
    let v = json("F32[3,5]{1,0:T(2,2)}");
    assert_eq!(v["shape"], "f32[3,5]{1,0:T(2,2)}");
    assert_eq!(v["buffer_elements"], 24);
    assert_eq!(offsets(&v)[2 * 5 + 3], 17);
    // [2x3] with minor_to_major [0,1]: a d b e c f; with [1,0]: a b c d e f.
    assert_eq!(offsets(&json("f32[2,3]{0,1}")), vec![0, 2, 4, 1, 3, 5]);
    assert_eq!(offsets(&json("f32[2,3]{1,0}")), vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(offsets(&json("f32[2,3]")), vec![0, 1, 2, 3, 4, 5]);
    // padded_dimensions [3,5]: a d 0 b e 0 c f 0 0 0 0 0 0 0.
    let v = json("f32[2,3]{0,1:pad(3,5)}");
    assert_eq!(v["buffer_elements"], 15);
    assert_eq!(offsets(&v), vec![0, 3, 6, 1, 4, 7]);
    let stdout = text(&["f32[2,3]{0,1:pad(3,5)}"]);
    assert!(
        stdout.contains("buffer contents: (0,0) (1,0) - (0,1) (1,1) - (0,2) (1,2) - - - - - - -"),
        "{stdout}"
    );
    // The HLO example prints back the same and lives in VMEM.
    let stdout = text(&["bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}"]);
    for needle in [
        "shape:           bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}",
        "element type:    bf16 (16 bits, 2 bytes)",
        "minor-to-major:  [2,1,0]",
        "tiles:           T(8,128)(2,1)",
        "memory space:    S(1) (VMEM)",
        "buffer:          4194304 elements, 8388608 bytes",
        "morello layout:  32x32x4096 [0, 1, 2, 1 p(4), 2 p(128), 1 p(2)]",
    ] {
        assert!(stdout.contains(needle), "{needle} missing from\n{stdout}");
    }
}

#[test]
fn morello_layout_or_the_reason() {
    let v = json("f32[16,256]{1,0:T(8,128)}");
    assert_eq!(v["morello"]["layout"], "[0, 1, 0 p(8), 1 p(128)]");
    assert_eq!(v["morello"]["shape"], "16x256");
    assert!(v["morello_error"].is_null());
    let v = json("f32[3,5]{1,0:T(2,2)}");
    assert!(v["morello"].is_null());
    assert!(v["morello_error"].as_str().expect("a reason").contains("needs padding"));
    let stdout = text(&["f32[4,4]{1,0:L(8)}"]);
    assert!(stdout.contains("morello layout:  none: L(8) pads the end of the buffer"), "{stdout}");
}

#[test]
fn sparse_arrays_are_read_and_have_no_buffer() {
    let v = json_of_kind("f32[4,4]{1,0:D(D,C+)}", "sparse array", "f32[4,4]{1,0:D(D,C+)}");
    assert!(v.get("buffer_bytes").is_none(), "{v}");
    let stdout = text(&["f32[4,4]{1,0:D(D,C+)}"]);
    assert!(stdout.contains("buffer:          none: D(D,C+) makes it a sparse array"), "{stdout}");
}

#[test]
fn tuples_list_their_arrays() {
    let v = json_of_kind("(f32[2]{0}, (s4[3], pred[]))", "tuple", "(f32[2]{0}, (s4[3]{0}, pred[]))");
    assert_eq!(v["elements"][0]["offsets"], serde_json::json!([0, 1]));
    assert_eq!(v["elements"][1]["kind"], "tuple");
    assert_eq!(v["elements"][1]["elements"][0]["buffer_bytes"], 3);
    assert_eq!(v["elements"][1]["elements"][1]["buffer_elements"], 1);
    let stdout = text(&["(f32[2], s32[])"]);
    assert!(stdout.contains("tuple of:        2 arrays, each with its own buffer"), "{stdout}");
    assert!(stdout.contains("array {1}:\n  shape:           s32[]"), "{stdout}");
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let cases = [
        ("f33[2]", "`f33` at column 1: unknown element type `f33`"),
        ("f32[2,3", "the end of the text at column 8: expected `,` or `]`"),
        ("f32[2,3]{1,0:T(2,2)", "the end of the text at column 20: expected `}` closing the layout"),
        ("(f32[2]", "expected `,` or `)` in the tuple"),
        ("f32[2,3]{1,1}", "`1,1` at column 10: minor_to_major [1, 1] is not a permutation"),
        ("f32[2,3]{1,0:T(0,2)}", "`(0,2)` at column 15: tile (0,2) has size 0"),
        ("f32[2,3]{1,0:T(2,-2)}", "tile (2,-2) has size -2 in its dimension 1"),
        ("f32[2,3]{1,0:T(2,*)}", "tile (2,*) ends with `*`"),
        ("f32[9223372036854775807]{0:T(2)}", "exceeds 2^63 - 1"),
        ("f32[9223372036854775808]", "above the limit of 2^63 - 1"),
        ("s4[4294967296,4294967296]", "exceeds 2^63 - 1"),
        ("f32[2]{0:E(4)}", "E(4) is narrower than f32, which needs 32 bits"),
        ("f32[2,2]{1,0:D(C)}", "D(..) has 1 dimension level types, but the shape has 2 dimensions"),
        ("f32[2]\n{0}x", "`x` at column 11: unexpected text after the shape"),
        ("", "expected an element type"),
    ];
    for (shape, message) in cases {
        let (code, stdout, stderr) = morello(&["xla", shape, "--json"]);
        assert_eq!(code, 2, "{shape:?}: {stderr}");
        assert!(stdout.is_empty());
        assert!(stderr.contains(message), "{shape:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!stderr.contains("panicked"));
    }
    let (code, _, stderr) = morello(&["xla", "f32[1001,1000]", "--json"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("has 1001000 elements; --json lists offsets for at most 1000000"), "{stderr}");
    // The limit counts elements, not buffer positions: a big padded buffer is fine.
    let v = json("f32[1000,1000]{1,0:T(3,3)}");
    assert_eq!(v["buffer_elements"], 334 * 334 * 9);
}

#[test]
fn help_explains_the_syntax() {
    let stdout = text(&["--help"]);
    for needle in ["<SHAPE>", "--json", "Examples:", "T(..)", "L(N)", "S(N)", "pad(W,...)", "VMEM"] {
        assert!(stdout.contains(needle), "{needle} missing from help");
    }
    let (_, stdout, _) = morello(&["--help"]);
    assert!(stdout.contains("xla"));
}
