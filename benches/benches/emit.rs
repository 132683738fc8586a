//! Benches of the code generator: emitting the C of the search's best implementations.
//! Run with `cargo bench -p morello-benches --bench emit`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use morello_benches::square_matmul;
use morello_codegen::emit_c;
use morello_core::target::Target;
use morello_search::Search;

fn emit(c: &mut Criterion) {
    let mut group = c.benchmark_group("emit");
    for (target_name, n) in [("x86-avx2", 16), ("x86-avx512", 64)] {
        let target = Target::builtin(target_name, 2).expect("built-in target");
        let spec = square_matmul(n, "f32", &target);
        let imp = Search::new(&target).solve(&spec).expect("solves").imp;
        group.bench_function(format!("matmul_{n}_f32_{target_name}"), |b| {
            b.iter(|| emit_c(black_box(&imp), &target).expect("emits"))
        });
    }
    group.finish();
}

criterion_group!(benches, emit);
criterion_main!(benches);
