//! Benches of the core algebra: simplifying index expressions and building layout indexing
//! expressions. Run with `cargo bench -p morello-benches --bench algebra`.

use criterion::{Criterion, criterion_group, criterion_main};
use morello_core::expr::{IndexExpr, Interval, RangeEnv};
use morello_core::layout::Layout;
use morello_core::shape::Shape;
use std::hint::black_box;

fn simplify(c: &mut Criterion) {
    let digits = RangeEnv::from_dims(&[Interval::new(0, 9); 3]);
    let cases: [(&str, &str, RangeEnv); 3] = [
        ("seed_example_3", "(16d0 + 4d1 + d2) floordiv 8", digits.clone()),
        (
            "seed_example_4",
            "-(-11d0 - d1 + 109) floordiv 11 + 9",
            RangeEnv::from_dims(&[Interval::new(0, 9), Interval::new(0, 10)]),
        ),
        (
            "chained_reshapes",
            "((20((100d0 + 10d1 + d2) floordiv 20) + (100d0 + 10d1 + d2) mod 20) mod 100) floordiv 10",
            digits,
        ),
    ];
    for (name, text, env) in cases {
        let expr: IndexExpr = text.parse().expect("bench expressions parse");
        c.bench_function(&format!("simplify/{name}"), |b| {
            b.iter(|| black_box(&expr).simplify(black_box(&env)))
        });
    }
}

fn layout_index(c: &mut Criterion) {
    let cases = [
        ("row_major_64x64", "[0, 1]", "64x64"),
        ("packed_6x8", "[1, 0, 1 p(4)]", "6x8"),
        ("blocked_odd_even_128x256", "[0, 1, 0 p(4), 1 p(2), 1 oe(16)]", "128x256"),
        ("nchwc_rank4", "[0, 1, 2, 3, 1 p(8)]", "8x64x56x56"),
    ];
    for (name, layout, shape) in cases {
        let layout: Layout = layout.parse().expect("bench layouts parse");
        let shape: Shape = shape.parse().expect("bench shapes parse");
        c.bench_function(&format!("buffer_index/{name}"), |b| {
            b.iter(|| black_box(&layout).buffer_index(black_box(&shape)))
        });
        c.bench_function(&format!("update_for_tile/{name}"), |b| {
            let tile =
                Shape::new(shape.dims().iter().map(|&d| (d / 2).max(1)).collect()).expect("half shape");
            b.iter(|| black_box(&layout).update_for_tile(black_box(&shape), black_box(&tile)))
        });
    }
}

criterion_group!(benches, simplify, layout_index);
criterion_main!(benches);
