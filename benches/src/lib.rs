//! Criterion benchmarks for morello live in `benches/`; this library is empty so that the
//! benches form their own crate and `cargo test` does not build criterion's harness.
