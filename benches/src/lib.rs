//! Criterion benchmarks for morello live in `benches/`; this library holds what they share, so
//! that the benches form their own crate and `cargo test` does not build criterion's harness.

use morello_core::spec::{CanonicalSpec, LogicalSpec};
use morello_core::target::Target;

/// The benches' matmul: `n`x`n` times `n`x`n` in `dtype` (e.g. `f32`), every operand row-major in
/// global memory, canonical on `target`.
///
/// # Panics
/// If `dtype` is not a dtype name or the spec does not fit `target` (a bench's own mistake).
pub fn square_matmul(n: u32, dtype: &str, target: &Target) -> CanonicalSpec {
    let text =
        format!("Matmul(1x{n}x{n}x{n}, {dtype} GL row-major, {dtype} GL row-major, {dtype} GL row-major)");
    LogicalSpec::parse(&text, target)
        .expect("bench spec parses")
        .canonicalize(target)
        .expect("bench spec is valid")
}
