//! Benches of indexing maps: composing and simplifying maps, and the maps of a whole fusion.
//! Run with `cargo bench -p morello-benches --bench indexing`.

use criterion::{Criterion, criterion_group, criterion_main};
use morello_xla::hlo::{ComputationBuilder, ComputationId, ElementwiseOp, HloModule, HloOp, HloShape};
use morello_xla::indexing::{IndexingMap, compose, computation_output_to_parameters};
use std::hint::black_box;

fn map(text: &str) -> IndexingMap {
    text.parse().expect("bench maps parse")
}

fn maps(c: &mut Criterion) {
    // reshape [10, 10, 10] -> [50, 20] -> [10, 10, 10], output to input: the identity.
    let outer =
        map("(d0, d1, d2) -> ((d0 * 100 + d1 * 10 + d2) floordiv 20, (d0 * 100 + d1 * 10 + d2) mod 20), \
         domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]");
    let inner = map(
        "(d0, d1) -> ((d0 * 20 + d1) floordiv 100, ((d0 * 20 + d1) floordiv 10) mod 10, (d0 * 20 + d1) mod 10), \
         domain: d0 in [0, 49], d1 in [0, 19]",
    );
    c.bench_function("indexing/compose/chained_reshapes", |b| {
        b.iter(|| compose(black_box(&outer), black_box(&inner)))
    });
    // The worked example of docs/indexing-maps.md before simplification.
    let raw = map("(d0, d1) -> ((d0 * 2 + 1) floordiv 2, d1), domain: d0 in [0, 5], d1 in [0, 3], \
         (d0 * 2 + 1) mod 2 in [1, 1], d0 * 2 + 1 in [1, 7], d1 + 4 in [4, 7]");
    c.bench_function("indexing/simplify/pad_slice", |b| b.iter(|| black_box(&raw).simplify()));
}

/// Softmax over the last dimension of a `[2, 65, 125]` tensor, as one computation.
fn softmax() -> HloModule {
    let mut r = ComputationBuilder::new("reducer");
    let a = r.add("a", HloShape::array(&[]), HloOp::Parameter { number: 0 }, &[]);
    let b = r.add("b", HloShape::array(&[]), HloOp::Parameter { number: 1 }, &[]);
    let sum = r.add("sum", HloShape::array(&[]), HloOp::Elementwise(ElementwiseOp::Add), &[a, b]);
    let reducer = r.finish(sum);
    let shape = HloShape::array(&[2, 65, 125]);
    let rows = HloShape::array(&[2, 65]);
    let reduce = HloOp::Reduce { dimensions: vec![2], to_apply: ComputationId(0) };
    let broadcast = HloOp::Broadcast { dimensions: vec![0, 1] };
    let mut f = ComputationBuilder::new("softmax");
    let p0 = f.add("p0", shape.clone(), HloOp::Parameter { number: 0 }, &[]);
    let init = f.add("init", HloShape::array(&[]), HloOp::Constant { scalar: None, literal: None }, &[]);
    let max = f.add("max", rows.clone(), reduce.clone(), &[p0, init]);
    let bmax = f.add("bmax", shape.clone(), broadcast.clone(), &[max]);
    let sub = f.add("sub", shape.clone(), HloOp::Elementwise(ElementwiseOp::Subtract), &[p0, bmax]);
    let exp = f.add("exp", shape.clone(), HloOp::Elementwise(ElementwiseOp::Exponential), &[sub]);
    let total = f.add("total", rows, reduce, &[exp, init]);
    let btotal = f.add("btotal", shape.clone(), broadcast, &[total]);
    let div = f.add("div", shape, HloOp::Elementwise(ElementwiseOp::Divide), &[exp, btotal]);
    HloModule::new("softmax", vec![reducer, f.finish(div)], ComputationId(1))
        .expect("the bench module is valid")
}

fn fusion(c: &mut Criterion) {
    let module = softmax();
    c.bench_function("indexing/fusion/softmax_output_to_parameters", |b| {
        b.iter(|| computation_output_to_parameters(black_box(&module), ComputationId(1), 0))
    });
}

criterion_group!(benches, maps, fusion);
criterion_main!(benches);
