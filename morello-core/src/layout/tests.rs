//! Tests of the layout algebra: seed 004's examples, validity errors, the text form, and
//! properties against a brute-force oracle that walks the physical dims.

use proptest::prelude::*;

use super::*;
use crate::expr::Point;

fn shape(text: &str) -> Shape {
    text.parse().unwrap()
}

fn layout(text: &str) -> Layout {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Offsets of every point of `shape` (row-major order of the logical index), from the expression.
fn expr_offsets(l: &Layout, s: &Shape) -> Vec<i64> {
    let expr = l.buffer_index(s).unwrap();
    s.points()
        .map(|p| {
            let dims: Vec<i64> = p.iter().map(|&v| i64::from(v)).collect();
            expr.eval(&Point { dims: &dims, symbols: &[] }).unwrap()
        })
        .collect()
}

/// The oracle: walk the physical coordinates in buffer order, numbering them 0, 1, 2, ..., and
/// rebuild each logical point from its digits. Returns offsets in row-major logical order.
fn oracle_offsets(l: &Layout, s: &Shape) -> Vec<i64> {
    let dims = l.dims();
    // Physical sizes: packings as written, Dynamic the rest of its logical dimension.
    let sizes: Vec<u64> = dims
        .iter()
        .map(|d| match d.kind {
            PhysDim::Packed(n) | PhysDim::OddEven(n) => u64::from(n),
            PhysDim::Dynamic => {
                let packed: u64 = dims
                    .iter()
                    .filter(|o| o.logical == d.logical)
                    .map(|o| match o.kind {
                        PhysDim::Packed(n) | PhysDim::OddEven(n) => u64::from(n),
                        PhysDim::Dynamic => 1,
                    })
                    .product();
                u64::from(s.dim(usize::from(d.logical))) / packed
            }
        })
        .collect();
    let volume = s.volume();
    let mut offsets = vec![-1i64; volume as usize];
    let mut coords = vec![0u64; dims.len()];
    for offset in 0..volume {
        let mut point = vec![0u64; s.rank()];
        for (j, d) in dims.iter().enumerate() {
            let inner: u64 =
                (j + 1..dims.len()).filter(|&k| dims[k].logical == d.logical).map(|k| sizes[k]).product();
            let digit = match d.kind {
                PhysDim::OddEven(n) => {
                    let half = u64::from(n / 2);
                    if coords[j] < half { 2 * coords[j] } else { 2 * (coords[j] - half) + 1 }
                }
                _ => coords[j],
            };
            point[usize::from(d.logical)] += digit * inner;
        }
        let linear = point.iter().zip(s.dims()).fold(0u64, |acc, (&p, &n)| acc * u64::from(n) + p);
        assert_eq!(offsets[linear as usize], -1, "two offsets for one point");
        offsets[linear as usize] = offset as i64;
        for j in (0..dims.len()).rev() {
            coords[j] += 1;
            if coords[j] < sizes[j] {
                break;
            }
            coords[j] = 0;
        }
    }
    offsets
}

#[test]
fn seed_004_row_major() {
    let s = shape("6x8");
    let l = Layout::row_major(2);
    assert_eq!(l.to_string(), "[0, 1]");
    assert_eq!(l.buffer_index(&s).unwrap().to_string(), "d0 * 8 + d1");
    assert_eq!(expr_offsets(&l, &s), (0..48).collect::<Vec<_>>());
    assert_eq!(Layout::col_major(2).buffer_index(&s).unwrap().to_string(), "d0 + d1 * 6");
}

#[test]
fn seed_004_packed() {
    // b = d1 mod 4 + 4 d0 + 24 floor(d1 / 4)
    let s = shape("6x8");
    let l = layout("[1, 0, 1 p(4)]");
    let expr = l.buffer_index(&s).unwrap();
    assert_eq!(expr, "d1 mod 4 + 4d0 + 24(d1 floordiv 4)".parse().unwrap());
    let expected: Vec<i64> = s.points().map(|p| i64::from(p[1] % 4 + 4 * p[0] + 24 * (p[1] / 4))).collect();
    assert_eq!(expr_offsets(&l, &s), expected);
    assert_eq!(expected[..8], [0, 1, 2, 3, 24, 25, 26, 27]);
    assert_eq!(l.buffer_elements(&s).unwrap(), 48);
}

#[test]
fn odd_even_strips_put_evens_first() {
    let s = shape("8");
    let l = layout("[0 oe(8)]");
    assert_eq!(l.buffer_index(&s).unwrap().to_string(), "d0 floordiv 2 + (d0 mod 2) * 4");
    assert_eq!(expr_offsets(&l, &s), vec![0, 4, 1, 5, 2, 6, 3, 7]);
    let l = layout("[0, 1, 0 p(4), 1 oe(16)]");
    let s = shape("8x32");
    assert_eq!(expr_offsets(&l, &s), oracle_offsets(&l, &s));
}

#[test]
fn validity_errors_name_the_rule() {
    let cases = [
        (
            "[0, 0]",
            "logical dimension 0 has two Dynamic physical dims (positions 0 and 1); at most one is allowed",
        ),
        (
            "[0 p(4), 0]",
            "the Dynamic dim of logical dimension 0 (position 1) must come before its packing at position 0",
        ),
        ("[0, 0 p(1)]", "physical dim 1 (`0 p(1)`) has size 1; packings must have size at least 2"),
        (
            "[0, 0 oe(6), 0 oe(3)]",
            "physical dim 2 (`0 oe(3)`) is an odd-even strip of odd size 3; it must be even",
        ),
        ("[0, 1", "expected `,` or `]` at column 6 of `[0, 1`"),
        ("[0 q(4)]", "expected `,` or `]` at column 4 of `[0 q(4)]`"),
        ("[300]", "logical dimension 300 is above the limit of 255 at column 2 of `[300]`"),
        ("0, 1", "expected `[` (or one of the names `row-major`, `col-major`) at column 1 of `0, 1`"),
    ];
    for (text, message) in cases {
        assert_eq!(text.parse::<Layout>().unwrap_err().to_string(), message, "{text}");
    }
    let shape_cases = [
        (
            "[0, 1, 1 p(3)]",
            "6x8",
            "physical dim 2 (`1 p(3)`) does not divide the remaining size 8 of logical dimension 1",
        ),
        ("[0, 2]", "6x8", "physical dim 1 names logical dimension 2, but the shape has rank 2"),
        (
            "[0]",
            "6x8",
            "logical dimension 1 has size 8 but its packings cover only 1; add a Dynamic dim (`1`)",
        ),
        (
            "[0, 1 p(4)]",
            "6x8",
            "logical dimension 1 has size 8 but its packings cover only 4; add a Dynamic dim (`1`)",
        ),
    ];
    for (text, s, message) in shape_cases {
        assert_eq!(layout(text).buffer_index(&shape(s)).unwrap_err().to_string(), message, "{text} {s}");
    }
}

#[test]
fn names_parse_for_a_rank() {
    assert_eq!(Layout::parse_for_rank("row-major", 3).unwrap().to_string(), "[0, 1, 2]");
    assert_eq!(Layout::parse_for_rank("col-major", 3).unwrap().to_string(), "[2, 1, 0]");
    assert_eq!(Layout::parse_for_rank(" [1, 0] ", 2).unwrap(), Layout::col_major(2));
}

#[test]
fn canonical_forms() {
    let cases = [
        ("[0, 0 p(4)]", "8", "[0]"),
        ("[0 p(2), 0 p(4)]", "8", "[0]"),
        ("[0, 1]", "1x8", "[1]"),
        ("[1, 0, 1 p(4)]", "6x8", "[1, 0, 1 p(4)]"),
        ("[1, 0, 1 p(4)]", "6x4", "[0, 1]"),
        ("[0, 0 oe(2)]", "6", "[0]"),
        ("[0, 0 oe(4)]", "8", "[0, 0 oe(4)]"),
        ("[0, 1, 1 p(2), 1 p(2)]", "2x8", "[0, 1]"),
    ];
    for (text, s, expected) in cases {
        let view = LayoutView::dense(&layout(text), &shape(s)).unwrap();
        assert_eq!(view.layout.to_string(), expected, "{text} on {s}");
        assert!(view.is_fully_contiguous());
    }
}

#[test]
fn tiles_of_a_packed_layout() {
    let parent = shape("6x8");
    let l = layout("[1, 0, 1 p(4)]");
    // A 6x4 tile is one contiguous row-major block.
    let v = l.update_for_tile(&parent, &shape("6x4")).unwrap();
    assert_eq!((v.layout.to_string(), v.contiguous_dims), ("[0, 1]".to_string(), 2));
    // A 6x2 tile: rows of 2 with stride 4.
    let v = l.update_for_tile(&parent, &shape("6x2")).unwrap();
    assert_eq!((v.layout.to_string(), v.contiguous_dims), ("[0, 1]".to_string(), 1));
    // A 2x8 tile keeps the packing, and is not contiguous across strips.
    let v = l.update_for_tile(&parent, &shape("2x8")).unwrap();
    assert_eq!((v.layout.to_string(), v.contiguous_dims), ("[1, 0, 1 p(4)]".to_string(), 2));
    // 6x3 cuts a strip of 4 unevenly.
    assert_eq!(
        l.update_for_tile(&parent, &shape("6x3")).unwrap_err().to_string(),
        "a tile of 3 along dimension 1 does not fit the layout's strip `1 p(4)` of 4"
    );
    assert!(l.update_for_tile(&parent, &shape("7x8")).is_err());
    // Row-major: any tile fits.
    let v = Layout::row_major(2).update_for_tile(&parent, &shape("3x8")).unwrap();
    assert_eq!((v.layout.to_string(), v.contiguous_dims), ("[0, 1]".to_string(), 2));
    let v = Layout::row_major(2).update_for_tile(&parent, &shape("3x5")).unwrap();
    assert_eq!(v.contiguous_dims, 1);
    let v = Layout::row_major(2).update_for_tile(&parent, &shape("1x5")).unwrap();
    assert_eq!((v.layout.to_string(), v.contiguous_dims), ("[1]".to_string(), 1));
}

// ---------------------------------------------------------------------------------------------
// Properties.

/// A random valid layout and a shape it applies to.
fn layout_and_shape() -> impl Strategy<Value = (Layout, Shape)> {
    let packing =
        prop_oneof![(2u32..5).prop_map(PhysDim::Packed), (1u32..4).prop_map(|h| PhysDim::OddEven(2 * h))];
    let per_dim = (proptest::collection::vec(packing, 0..3), proptest::option::of(1u32..4));
    proptest::collection::vec(per_dim, 1..4).prop_flat_map(|per_dim| {
        let mut sizes = Vec::new();
        let mut queues: Vec<Vec<LayoutDim>> = Vec::new();
        for (logical, (packings, dynamic)) in per_dim.iter().enumerate() {
            let logical = logical as u8;
            let mut queue = Vec::new();
            let packed: u32 = packings
                .iter()
                .map(|k| match k {
                    PhysDim::Packed(n) | PhysDim::OddEven(n) => *n,
                    PhysDim::Dynamic => 1,
                })
                .product();
            if let Some(rest) = dynamic {
                queue.push(LayoutDim::dynamic(logical));
                sizes.push(packed * rest);
            } else {
                sizes.push(packed);
            }
            queue.extend(packings.iter().map(|&kind| LayoutDim { logical, kind }));
            queues.push(queue);
        }
        // One turn per physical dim naming its queue: shuffled, the turns interleave the
        // per-dimension queues in a random order that keeps each queue in order.
        let turns: Vec<usize> =
            queues.iter().enumerate().flat_map(|(i, queue)| std::iter::repeat_n(i, queue.len())).collect();
        Just(turns).prop_shuffle().prop_map(move |turns| {
            let mut queues = queues.clone();
            let dims = turns.iter().map(|&i| queues[i].remove(0)).collect();
            (Layout::new(dims).unwrap(), Shape::new(sizes.clone()).unwrap())
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn offsets_match_the_oracle((l, s) in layout_and_shape()) {
        let oracle = oracle_offsets(&l, &s);
        prop_assert_eq!(&expr_offsets(&l, &s), &oracle, "layout {} shape {}", l, s);
        let indexer = l.indexer(&s).unwrap();
        let direct: Vec<i64> = s.points().map(|p| indexer.offset(&p) as i64).collect();
        prop_assert_eq!(&direct, &oracle);
        // Distinct and inside the buffer.
        let elements = l.buffer_elements(&s).unwrap() as i64;
        let mut sorted = oracle.clone();
        sorted.sort_unstable();
        prop_assert_eq!(sorted, (0..elements).collect::<Vec<_>>());
    }

    #[test]
    fn canonical_form_is_idempotent_and_keeps_offsets((l, s) in layout_and_shape()) {
        let canon = l.canonicalize(&s).unwrap();
        prop_assert_eq!(canon.canonicalize(&s).unwrap(), canon.clone());
        prop_assert_eq!(expr_offsets(&canon, &s), oracle_offsets(&l, &s));
        let whole = l.update_for_tile(&s, &s).unwrap();
        prop_assert_eq!(&whole.layout, &canon);
        prop_assert!(whole.is_fully_contiguous());
    }

    #[test]
    fn text_round_trips((l, _s) in layout_and_shape()) {
        prop_assert_eq!(l.to_string().parse::<Layout>().unwrap(), l);
    }

    #[test]
    fn tile_contiguity_under_approximates((l, s) in layout_and_shape(), fractions in proptest::collection::vec(0.0f64..1.0, 3)) {
        let tile_dims: Vec<u32> = s.dims().iter().zip(&fractions).map(|(&n, f)| 1 + (f64::from(n - 1) * f) as u32).collect();
        let tile = Shape::new(tile_dims).unwrap();
        let Ok(view) = l.update_for_tile(&s, &tile) else { return Ok(()) };
        // The tile's own dense offsets, and the run length its contiguity claims.
        let tile_indexer = view.layout.indexer(&tile).unwrap();
        let sizes = view.layout.physical_sizes(&tile).unwrap();
        let run: u64 = sizes[sizes.len() - usize::from(view.contiguous_dims)..].iter().product();
        let parent = l.indexer(&s).unwrap();
        // Every tile position whose tile lies fully inside the parent.
        let steps: Vec<u32> = s.dims().iter().zip(tile.dims()).map(|(&n, &t)| n / t).collect();
        for corner in Shape::new(steps).unwrap().points() {
            let mut bases = std::collections::HashMap::new();
            for p in tile.points() {
                let global: Vec<u32> = p.iter().zip(&corner).zip(tile.dims()).map(|((&x, &c), &t)| x + c * t).collect();
                let local = tile_indexer.offset(&p);
                let base = parent.offset(&global) as i64 - (local % run) as i64;
                let previous = bases.insert(local / run, base);
                prop_assert!(previous.is_none() || previous == Some(base),
                    "layout {} shape {} tile {} claims {} contiguous dims", l, s, tile, view.contiguous_dims);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// A tile at an arbitrary origin: when `tile_at` accepts it, its contiguity claim holds.
    #[test]
    fn tile_at_origin_under_approximates(
        (l, s) in layout_and_shape(),
        fractions in proptest::collection::vec((0.0f64..1.0, 0.0f64..1.0), 3),
    ) {
        let tile_dims: Vec<u32> =
            s.dims().iter().zip(&fractions).map(|(&n, (f, _))| 1 + (f64::from(n - 1) * f) as u32).collect();
        let origin: Vec<u32> = s
            .dims()
            .iter()
            .zip(&tile_dims)
            .zip(&fractions)
            .map(|((&n, &t), (_, g))| (f64::from(n - t) * g) as u32)
            .collect();
        let tile = Shape::new(tile_dims).unwrap();
        let dense = LayoutView::dense(&l, &s).unwrap();
        let Ok(view) = dense.tile_at(&s, &tile, &origin) else { return Ok(()) };
        let tile_indexer = view.layout.indexer(&tile).unwrap();
        let sizes = view.layout.physical_sizes(&tile).unwrap();
        let run: u64 = sizes[sizes.len() - usize::from(view.contiguous_dims)..].iter().product();
        let parent = l.indexer(&s).unwrap();
        let mut bases = std::collections::HashMap::new();
        for p in tile.points() {
            let global: Vec<u32> = p.iter().zip(&origin).map(|(&x, &o)| x + o).collect();
            let local = tile_indexer.offset(&p);
            let base = parent.offset(&global) as i64 - (local % run) as i64;
            let previous = bases.insert(local / run, base);
            prop_assert!(previous.is_none() || previous == Some(base),
                "layout {} shape {} tile {} at {:?} claims {} contiguous dims", l, s, tile, origin, view.contiguous_dims);
        }
        // Aligned tiles accepted by `tile` are accepted by `tile_at` with the same view.
        if let Ok(regular) = dense.tile(&s, &tile) {
            let aligned: Vec<u32> = origin.iter().zip(tile.dims()).map(|(&o, &t)| o / t * t).collect();
            prop_assert_eq!(dense.tile_at(&s, &tile, &aligned).ok(), Some(regular));
        }
    }
}
