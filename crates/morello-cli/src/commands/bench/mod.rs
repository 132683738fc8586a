//! `morello bench SPEC` and `morello bench-suite`: search, emit, verify, then time morello's kernels
//! beside the libraries people would call instead (see `docs/benchmarking.md`).
//!
//! - `kernel.rs`: `morello bench SPEC`, one kernel (or with `--top-k`, several of the model's best)
//!   against the baselines;
//! - `suite.rs`: `morello bench-suite`, the kernel suite, written into `docs/PERFORMANCE.md` and
//!   `docs/perf.svg`;
//! - `measure.rs`: what both share: the measurement options, verification, baselines and one
//!   side-by-side run;
//! - `text.rs`: number formatting and aligned text tables;
//! - `markdown.rs` and `svg.rs`: the suite's table, the section between markers, and the plot.

mod kernel;
mod markdown;
mod measure;
mod suite;
mod svg;
mod text;

use anyhow::Result;

use crate::spec_args::SPEC_FORMS;

/// The benchmarking subcommands (flattened into the top-level command list).
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Search, emit, compile and verify a kernel, then time it beside OpenBLAS, BLIS, libxsmm, a
    /// naive loop and a Rust GEMM on the same inputs (GFLOP/s, percent of the measured peak, ratios).
    #[command(after_help = format!("{}\n\n{}", kernel::EXAMPLES, SPEC_FORMS))]
    Bench(kernel::Args),
    /// Run the kernel suite (f32 matmul cubes 8 to 1024, vector-matrix products, bf16, u32) against
    /// the baselines and write the table into docs/PERFORMANCE.md and the plot into docs/perf.svg.
    #[command(after_help = suite::EXAMPLES)]
    BenchSuite(suite::Args),
}

/// Runs a benchmarking subcommand.
pub fn run(command: &Command) -> Result<()> {
    match command {
        Command::Bench(args) => kernel::run(args),
        Command::BenchSuite(args) => suite::run(args),
    }
}
