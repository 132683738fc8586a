//! Benches of XLA shapes: reading the text, listing every element's offset, and the bridge to
//! morello layouts. Run with `cargo bench -p morello-benches --bench xla`.

use criterion::{Criterion, criterion_group, criterion_main};
use morello_xla::xla::{ArrayShape, XlaShape};
use std::hint::black_box;

const HLO_EXAMPLE: &str = "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}";

fn parse(c: &mut Criterion) {
    c.bench_function("xla_parse/hlo_example", |b| b.iter(|| black_box(HLO_EXAMPLE).parse::<XlaShape>()));
    let tuple =
        "(f32[16,256]{1,0:T(8,128)}, s8[64,512]{1,0:T(8,128)(4,1)}, pred[], (u4[7]{0:pad(9)T(4)L(8)}))";
    c.bench_function("xla_parse/tuple_of_4", |b| b.iter(|| black_box(tuple).parse::<XlaShape>()));
}

fn offsets(c: &mut Criterion) {
    // One million elements, as many as `morello xla --json` lists.
    let shape: ArrayShape = "bf16[8,125,1000]{2,1,0:T(8,128)(2,1)}".parse().expect("bench shape parses");
    c.bench_function("xla_offsets/1m_elements_two_tilings", |b| {
        b.iter(|| black_box(&shape).indexer().offsets_row_major().fold(0u64, u64::wrapping_add))
    });
    let shape: ArrayShape = HLO_EXAMPLE.parse().expect("bench shape parses");
    c.bench_function("xla_multi_index/hlo_example", |b| {
        b.iter(|| black_box(&shape).multi_index(black_box(1_234_567)))
    });
}

fn bridge(c: &mut Criterion) {
    let shape: ArrayShape = HLO_EXAMPLE.parse().expect("bench shape parses");
    c.bench_function("xla_bridge/to_morello", |b| b.iter(|| black_box(&shape).to_morello()));
    let morello = shape.to_morello().expect("the example has a morello layout");
    c.bench_function("xla_bridge/from_morello", |b| {
        b.iter(|| {
            ArrayShape::from_morello(
                shape.element_type(),
                black_box(&morello.shape),
                black_box(&morello.layout),
                shape.layout().memory_space(),
            )
        })
    });
}

criterion_group!(benches, parse, offsets, bridge);
criterion_main!(benches);
