//! Benches of the search: cold (a fresh memo table) with one and two threads, and warm (the table
//! already solved, in memory or read from a saved file).
//! Run with `cargo bench -p morello-benches --bench search`; one group with
//! `cargo bench -p morello-benches --bench search -- search_threads`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};
use morello_benches::square_matmul;
use morello_core::spec::CanonicalSpec;
use morello_core::target::Target;
use morello_search::db::{OpenTable, Schema, Table, TableFile, TableLocation};
use morello_search::{ActionConfig, Memo, Search};

fn cold(c: &mut Criterion) {
    let avx2 = Target::builtin("x86-avx2", 2).expect("built-in target");
    let mut group = c.benchmark_group("search_cold");
    group.sample_size(10);
    for (name, n, dtype) in [("matmul_4_u32_avx2", 4, "u32"), ("matmul_16_f32_avx2", 16, "f32")] {
        one_and_two_threads(&mut group, name, &avx2, &square_matmul(n, dtype, &avx2));
    }
    group.finish();
}

/// How the search scales with its threads: the cold 64^3 f32 search on x86-avx512 (two
/// processors) with one and with two search threads (`docs/PERFORMANCE.md`, "Search"). About 2 s per search: ten samples each.
fn threads(c: &mut Criterion) {
    let avx512 = Target::builtin("x86-avx512", 2).expect("built-in target");
    let spec = square_matmul(64, "f32", &avx512);
    let mut group = c.benchmark_group("search_threads");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(20));
    one_and_two_threads(&mut group, "matmul_64_f32_x86-avx512", &avx512, &spec);
    group.finish();
}

/// Benches `name/threads_1` and `name/threads_2` in `group`: a cold search of `spec` on `target`
/// with one and with two search threads.
fn one_and_two_threads(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    target: &Target,
    spec: &CanonicalSpec,
) {
    for threads in [1, 2] {
        group.bench_function(format!("{name}/threads_{threads}"), |b| {
            b.iter(|| Search::new(target).threads(threads).solve(black_box(spec)).expect("solves"))
        });
    }
}

fn warm(c: &mut Criterion) {
    let avx2 = Target::builtin("x86-avx2", 2).expect("built-in target");
    let spec = square_matmul(32, "f32", &avx2);
    let memo = Arc::new(Memo::new());
    Search::new(&avx2).memo(Arc::clone(&memo)).solve(&spec).expect("solves");
    c.bench_function("search_warm/matmul_32_f32_avx2", |b| {
        b.iter(|| Search::new(&avx2).memo(Arc::clone(&memo)).solve(black_box(&spec)).expect("solves"))
    });
}

/// Warm from a saved table, as a new process does: open the 64^3 table (header, identity, index),
/// answer from it (a memo hit that reads the goal's block, and the reconstruction of the
/// implementation, which reads one block per node); the whole table is never loaded.
fn warm_from_table(c: &mut Criterion) {
    let avx512 = Target::builtin("x86-avx512", 2).expect("built-in target");
    let spec = square_matmul(64, "f32", &avx512);
    let schema = Schema::new(&avx512, ActionConfig::default());
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("matmul-64.mdb");
    let memo = Arc::new(Memo::new());
    Search::new(&avx512).memo(Arc::clone(&memo)).solve(&spec).expect("solves");
    TableFile::new(&path).save(&Table::from_memo(&memo, &schema), &schema, &mut |_| {}).expect("saves");
    let location = TableLocation::File(path.clone());
    let mut group = c.benchmark_group("search_warm");
    group.sample_size(20).measurement_time(Duration::from_secs(10));
    group.bench_function("open_table_and_solve/matmul_64_f32_x86-avx512", |b| {
        b.iter(|| {
            let table = OpenTable::open(&location, &avx512, ActionConfig::default()).expect("opens");
            let solution = Search::new(&avx512).memo(table.memo()).solve(black_box(&spec)).expect("solves");
            assert_eq!(solution.report.specs_solved, 0, "everything comes from the table");
            solution
        })
    });
    group.finish();
}

criterion_group!(benches, cold, threads, warm, warm_from_table);
criterion_main!(benches);
