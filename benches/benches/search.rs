//! Benches of the search: cold (a fresh memo table) and warm (the table already solved).
//! Run with `cargo bench -p morello-benches --bench search`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use morello_core::spec::{CanonicalSpec, LogicalSpec};
use morello_core::target::Target;
use morello_search::{Memo, Search};

fn matmul(n: u32, dtype: &str, target: &Target) -> CanonicalSpec {
    let text =
        format!("Matmul(1x{n}x{n}x{n}, {dtype} GL row-major, {dtype} GL row-major, {dtype} GL row-major)");
    LogicalSpec::parse(&text, target)
        .expect("bench spec parses")
        .canonicalize(target)
        .expect("bench spec is valid")
}

fn cold(c: &mut Criterion) {
    let avx2 = Target::builtin("x86-avx2", 2).expect("built-in target");
    let mut group = c.benchmark_group("search_cold");
    group.sample_size(10);
    for (name, n, dtype) in [("matmul_4_u32_avx2", 4, "u32"), ("matmul_16_f32_avx2", 16, "f32")] {
        let spec = matmul(n, dtype, &avx2);
        for threads in [1, 2] {
            group.bench_function(format!("{name}/threads_{threads}"), |b| {
                b.iter(|| Search::new(&avx2).threads(threads).solve(black_box(&spec)).expect("solves"))
            });
        }
    }
    group.finish();
}

fn warm(c: &mut Criterion) {
    let avx2 = Target::builtin("x86-avx2", 2).expect("built-in target");
    let spec = matmul(32, "f32", &avx2);
    let memo = Arc::new(Memo::new());
    Search::new(&avx2).memo(Arc::clone(&memo)).solve(&spec).expect("solves");
    c.bench_function("search_warm/matmul_32_f32_avx2", |b| {
        b.iter(|| Search::new(&avx2).memo(Arc::clone(&memo)).solve(black_box(&spec)).expect("solves"))
    });
}

criterion_group!(benches, cold, warm);
criterion_main!(benches);
