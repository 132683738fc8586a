//! Property tests of the `xla` module: text round trips, a parser fuzz (random and mutated
//! text never panics), indexing consistency, and the bridge to morello layouts both ways.
//!
//! The tiled-layout formula itself is checked against an independent oracle in the CLI's
//! end-to-end tests (`morello-cli/tests/cli/xla.rs`).

use proptest::prelude::*;
use proptest::sample::select;

use super::*;
use morello_core::layout::{Layout, LayoutDim, PhysDim};
use morello_core::shape::Shape;

/// Random numbers a shape is built from; see [`build_array`].
#[derive(Debug, Clone)]
struct ArraySeed {
    element_type: ElementType,
    dims: Vec<u64>,
    order: Vec<u64>,
    tiles: Vec<Vec<u64>>,
    alignment: u64,
    memory_space: u64,
    padding: Option<Vec<u64>>,
}

fn array_seed(sizes: &'static [u64], tile_sizes: &'static [u64]) -> impl Strategy<Value = ArraySeed> {
    (
        select(ElementType::ALL.into_iter().filter(|t| t.is_array_element()).collect::<Vec<_>>()),
        prop::collection::vec(select(sizes), 0..=4),
        prop::collection::vec(any::<u64>(), 4),
        prop::collection::vec(prop::collection::vec(select(tile_sizes), 1..=4), 0..=3),
        prop_oneof![4 => Just(1u64), 1 => 2u64..9],
        select(vec![0u64, 0, 1, 2, 5, 7]),
        prop::option::weighted(0.2, prop::collection::vec(0u64..3, 4)),
    )
        .prop_map(|(element_type, dims, order, tiles, alignment, memory_space, padding)| ArraySeed {
            element_type,
            dims,
            order,
            tiles,
            alignment,
            memory_space,
            padding,
        })
}

/// A valid array from a seed: the order is a shuffle of the dimensions, each tile is cut to one
/// more than the rank of what it tiles (so some tiles add a leading dimension of size 1), a
/// tile size of 0 becomes `*` (combine) except in last place, and padding adds a little to each
/// dimension.
fn build_array(seed: &ArraySeed) -> ArrayShape {
    let rank = seed.dims.len();
    let mut order: Vec<usize> = (0..rank).collect();
    for i in (1..rank).rev() {
        order.swap(i, (seed.order[i] % (i as u64 + 1)) as usize);
    }
    let mut tiles = Vec::new();
    let mut tiled_rank = rank;
    for sizes in &seed.tiles {
        let sizes: Vec<u64> = sizes.iter().copied().take(tiled_rank + 1).collect();
        let last = sizes.len() - 1;
        let entries: Vec<TileDim> = sizes
            .iter()
            .enumerate()
            .map(|(j, &size)| match size {
                0 if j < last => TileDim::Combine,
                0 => TileDim::Size(1),
                size => TileDim::Size(size),
            })
            .collect();
        let stars = entries.iter().filter(|&&e| e == TileDim::Combine).count();
        tiled_rank = tiled_rank.max(sizes.len()) + sizes.len() - 2 * stars;
        tiles.push(Tile::with_entries(entries).unwrap());
    }
    let padding =
        seed.padding.as_ref().map(|extra| seed.dims.iter().zip(extra).map(|(&d, &e)| d + e).collect());
    let layout = XlaLayout::new(order)
        .with_tiles(tiles)
        .with_tail_padding_alignment(seed.alignment)
        .unwrap()
        .with_memory_space(MemorySpace::new(seed.memory_space).unwrap())
        .with_padded_dimensions(padding);
    ArrayShape::new(seed.element_type, seed.dims.clone(), layout).unwrap()
}

fn any_array() -> impl Strategy<Value = ArrayShape> {
    array_seed(&[0, 1, 2, 3, 4, 5, 7], &[0, 1, 2, 3, 4]).prop_map(|seed| build_array(&seed))
}

/// Arrays without padding fields whose sizes are powers of two, so many tilings divide.
fn divisible_array() -> impl Strategy<Value = ArrayShape> {
    array_seed(&[1, 2, 4, 8, 16], &[1, 2, 2, 4, 4]).prop_map(|mut seed| {
        seed.alignment = 1;
        seed.padding = None;
        build_array(&seed)
    })
}

/// A sparse (or all-dense) array as text: a `D(..)` entry per dimension, maybe a `P(..)`.
fn sparse_text() -> impl Strategy<Value = String> {
    let level = (select(vec!['D', 'C', 'S', 'H']), any::<bool>(), any::<bool>());
    (prop::collection::vec(level, 1..4), any::<bool>()).prop_map(|(levels, physical)| {
        let rank = levels.len();
        let dims = vec!["3"; rank].join(",");
        let minor_to_major: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
        let levels: Vec<String> = levels
            .iter()
            .map(|&(l, unique, ordered)| {
                format!("{l}{}{}", if unique { "" } else { "+" }, if ordered { "" } else { "~" })
            })
            .collect();
        let physical = if physical { format!("P(s32[{}]{{0}})", rank * 9) } else { String::new() };
        format!("f32[{dims}]{{{}:D({}){physical}}}", minor_to_major.join(","), levels.join(","))
    })
}

fn any_shape() -> impl Strategy<Value = XlaShape> {
    (any_array(), any::<bool>())
        .prop_map(|(array, bounded)| {
            let dynamic = vec![bounded; array.num_dims()];
            XlaShape::Array(array.with_dynamic_dimensions(dynamic).unwrap())
        })
        .prop_recursive(3, 12, 4, |inner| prop::collection::vec(inner, 0..4).prop_map(XlaShape::Tuple))
}

/// Every index of an array in row-major order.
fn indices(shape: &ArrayShape) -> Vec<Vec<u64>> {
    let count = shape.element_count();
    (0..count)
        .map(|mut linear| {
            let mut index = vec![0u64; shape.num_dims()];
            for (slot, &size) in index.iter_mut().zip(shape.dims()).rev() {
                *slot = linear % size;
                linear /= size;
            }
            index
        })
        .collect()
}

/// A valid morello shape and layout without odd-even strips (except `oe(2)`): per dimension a
/// `Dynamic` (possibly left out) and up to two strips, interleaved at random.
fn morello_layout() -> impl Strategy<Value = (Shape, Layout)> {
    let dimension = (
        1u32..4,
        prop::collection::vec(select(vec![2u32, 3, 4]), 0..=2),
        any::<bool>(),
        prop::bool::weighted(0.1),
    );
    (prop::collection::vec(dimension, 1..=3), prop::collection::vec(any::<u8>(), 12)).prop_map(
        |(dims, picks)| {
            let mut queues: Vec<Vec<LayoutDim>> = Vec::new();
            let mut sizes = Vec::new();
            for (logical, (rest, strips, keep_dynamic, odd_even)) in dims.iter().enumerate() {
                let logical = logical as u8;
                let mut queue = Vec::new();
                let rest = if *keep_dynamic || strips.is_empty() {
                    queue.push(LayoutDim::dynamic(logical));
                    *rest
                } else {
                    1
                };
                for (i, &n) in strips.iter().enumerate() {
                    let kind = if *odd_even && i == 0 { PhysDim::OddEven(2) } else { PhysDim::Packed(n) };
                    queue.push(LayoutDim { logical, kind });
                }
                let strip_volume: u32 = queue
                    .iter()
                    .map(|d| match d.kind {
                        PhysDim::Packed(n) | PhysDim::OddEven(n) => n,
                        PhysDim::Dynamic => 1,
                    })
                    .product();
                sizes.push(rest * strip_volume);
                queues.push(queue);
            }
            let mut layout = Vec::new();
            let mut pick = picks.iter().cycle();
            while queues.iter().any(|q| !q.is_empty()) {
                let nonempty: Vec<usize> = (0..queues.len()).filter(|&i| !queues[i].is_empty()).collect();
                let chosen = nonempty[usize::from(*pick.next().unwrap()) % nonempty.len()];
                layout.push(queues[chosen].remove(0));
            }
            (Shape::new(sizes).unwrap(), Layout::new(layout).unwrap())
        },
    )
}

/// Valid shape text, then broken by a few random edits.
fn mutated_text() -> impl Strategy<Value = String> {
    let edit = (
        any::<prop::sample::Index>(),
        0u8..3,
        select("0123456789,:[](){}TLS*-padf32bf16DCHP+~ ".chars().collect::<Vec<_>>()),
    );
    (any_shape(), prop::collection::vec(edit, 1..4)).prop_map(|(shape, edits)| {
        let mut chars: Vec<char> = shape.to_string().chars().collect();
        for (at, kind, c) in edits {
            let i = at.index(chars.len() + 1);
            match kind {
                0 => chars.insert(i, c),
                1 if i < chars.len() => {
                    chars.remove(i);
                }
                _ if i < chars.len() => chars[i] = c,
                _ => chars.push(c),
            }
        }
        chars.into_iter().collect()
    })
}

/// Everything a caller might do with a parsed shape must not panic either.
fn exercise(shape: &XlaShape) {
    assert_eq!(shape.to_string().parse::<XlaShape>().as_ref(), Ok(shape));
    for (_, array) in shape.arrays() {
        let _ = (array.buffer_elements(), array.buffer_bytes(), array.true_num_dims(), array.tiled_dims());
        let _ = array.to_morello();
        let _ = array.dimension_size(-1);
        if array.element_count() > 0 {
            let zeros = vec![0; array.num_dims()];
            let linear = array.linear_index(&zeros).unwrap();
            assert_eq!(array.multi_index(linear), Ok(BufferPosition::Element(zeros)));
        }
        if array.buffer_elements() > 0 {
            array.multi_index(array.buffer_elements() - 1).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn sparse_text_round_trips(text in sparse_text()) {
        let shape: XlaShape = text.parse().unwrap();
        prop_assert_eq!(shape.to_string(), text.clone());
        let sparse = text.contains(['C', 'S', 'H']);
        prop_assert_eq!(matches!(shape, XlaShape::Bufferless(_)), sparse);
        exercise(&shape);
    }

    #[test]
    fn text_round_trips(shape in any_shape()) {
        let text = shape.to_string();
        prop_assert_eq!(text.parse::<XlaShape>(), Ok(shape.clone()), "{}", text);
    }

    #[test]
    fn offsets_are_distinct_and_invert(shape in any_array()) {
        let indexer = shape.indexer();
        let listed: Vec<u64> = indexer.offsets_row_major().collect();
        let all = indices(&shape);
        prop_assert_eq!(listed.len(), all.len());
        let mut seen = vec![false; shape.buffer_elements() as usize];
        for (index, &offset) in all.iter().zip(&listed) {
            prop_assert_eq!(shape.linear_index(index), Ok(offset));
            prop_assert!(offset < shape.buffer_elements(), "{} {:?}", shape, index);
            prop_assert!(!std::mem::replace(&mut seen[offset as usize], true), "{} {:?} collides", shape, index);
            prop_assert_eq!(shape.multi_index(offset), Ok(BufferPosition::Element(index.clone())));
        }
        for (linear, used) in seen.iter().enumerate() {
            if !used {
                let is_padding = matches!(shape.multi_index(linear as u64), Ok(BufferPosition::Padding(_)));
                prop_assert!(is_padding, "{} position {}", shape, linear);
            }
        }
        let bytes = u128::from(shape.buffer_elements()) * u128::from(shape.element_type().byte_width());
        prop_assert_eq!(u128::from(shape.buffer_bytes()), bytes);
    }

    #[test]
    fn xla_to_morello_to_xla(shape in divisible_array()) {
        let Ok(morello) = shape.to_morello() else { return Ok(()) };
        // The morello layout has the same offsets.
        let morello_indexer = morello.layout.indexer(&morello.shape).unwrap();
        let indexer = shape.indexer();
        for point in morello.shape.points() {
            let index: Vec<u64> = point.iter().map(|&c| u64::from(c)).collect();
            prop_assert_eq!(indexer.offset(&index), morello_indexer.offset(&point), "{} {}", shape, morello.layout);
        }
        // Back to XLA: the same order, memory space and offsets, and the same morello layout again.
        let back = ArrayShape::from_morello(shape.element_type(), &morello.shape, &morello.layout, shape.layout().memory_space()).unwrap();
        prop_assert_eq!(back.layout().minor_to_major(), shape.layout().minor_to_major());
        prop_assert_eq!(back.layout().memory_space(), shape.layout().memory_space());
        prop_assert_eq!(back.dims(), shape.dims());
        prop_assert_eq!(&back.to_morello().unwrap(), &morello, "{} -> {} -> {}", shape, morello.layout, back);
        let back_offsets: Vec<u64> = back.indexer().offsets_row_major().collect();
        prop_assert_eq!(back_offsets, indexer.offsets_row_major().collect::<Vec<_>>());
        // What the bridge produces round-trips exactly.
        let again = back.to_morello().unwrap();
        let twice = ArrayShape::from_morello(back.element_type(), &again.shape, &again.layout, back.layout().memory_space()).unwrap();
        prop_assert_eq!(twice, back);
    }

    #[test]
    fn morello_to_xla_keeps_offsets((shape, layout) in morello_layout()) {
        let xla = ArrayShape::from_morello(ElementType::S8, &shape, &layout, MemorySpace::HOST);
        let xla = match xla {
            Ok(xla) => xla,
            Err(e) => return Err(TestCaseError::fail(format!("{shape} {layout}: {e}"))),
        };
        let indexer = xla.indexer();
        let morello = layout.indexer(&shape).unwrap();
        for point in shape.points() {
            let index: Vec<u64> = point.iter().map(|&c| u64::from(c)).collect();
            prop_assert_eq!(indexer.offset(&index), morello.offset(&point), "{} {} -> {}", shape, layout, xla);
        }
        prop_assert_eq!(xla.buffer_elements(), shape.volume());
    }
}

proptest! {
    // The fuzz: cheap cases, so many of them.
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn parser_never_panics_on_random_text(text in "[ -~]{0,40}|[0-9,:\\[\\](){}TLS*pad fbsuDCHP+~-]{0,40}|\\PC{0,20}") {
        if let Ok(shape) = text.parse::<XlaShape>() {
            exercise(&shape);
        }
    }

    #[test]
    fn parser_never_panics_on_mutated_text(text in mutated_text()) {
        if let Ok(shape) = text.parse::<XlaShape>() {
            exercise(&shape);
        }
    }
}
