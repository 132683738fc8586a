//! `morello bench SPEC` and `morello bench-suite`: search, emit, verify, then time morello's kernels
//! beside the libraries people would call instead (see `docs/benchmarking.md`).
//!
//! - `kernel.rs`: `morello bench SPEC`, one kernel (or with `--top-k`, several of the model's best)
//!   against the baselines;
//! - `suite.rs`: `morello bench-suite`, the kernel suite, written into `docs/PERFORMANCE.md` and
//!   `docs/perf.svg`;
//! - `regret.rs`: `morello bench-suite --regret`, the model's pick against its top-k candidates
//!   over a suite of shapes, written into its own section of `docs/PERFORMANCE.md`;
//! - `measure.rs`: what both share: the measurement options, verification, baselines and one
//!   side-by-side run;
//! - `text.rs`: number formatting and aligned text tables;
//! - `markdown.rs` and `svg.rs`: the suite's table, the section between markers, and the plot.

mod busy;
mod kernel;
mod markdown;
mod measure;
mod regret;
mod suite;
mod svg;
mod text;

use anyhow::Result;

use crate::spec_args::SPEC_FORMS;

/// What `--processors` means for `morello bench` (the spec arguments' help says what it means for
/// `search`, whose default differs).
const BENCH_PROCESSORS: &str = "Processors the cost model gives parallel loops (default: --threads, so the \
    kernel is modelled on as many processors as it runs on; 1 unless --threads is given). The searches use \
    the default table of that processor count (`morello db stats --processors 1` shows it), not the one \
    `morello search` uses with this machine's cores.";

/// The benchmarking subcommands (flattened into the top-level command list).
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Verify a searched kernel, then time it beside OpenBLAS, BLIS, libxsmm and other baselines.
    ///
    /// Searches, emits, compiles and verifies the kernel, measures the machine's FMA peak, then times
    /// the kernel and each baseline on the same inputs in one run (alternating, pinned to one CPU):
    /// median and spread per call, GFLOP/s, GB/s, percent of the peak, and morello's speedup over each.
    #[command(
        after_help = format!("{}\n\n{}", kernel::EXAMPLES, SPEC_FORMS),
        mut_arg("processors", |arg| arg.help(BENCH_PROCESSORS).long_help(BENCH_PROCESSORS))
    )]
    Bench(Box<kernel::Args>),
    /// Run the kernel suite against the baselines; write docs/PERFORMANCE.md and docs/perf.svg.
    ///
    /// The suite: f32 matmul cubes 8 to 1024, the vector-matrix and matrix-vector products
    /// 1x2048x16384 and 16384x2048x1, a bf16-to-f32 vector-matrix product, a u32 64^3, and layers
    /// of real networks (ResNet-50 convolutions, BERT-base's softmax and its matmul with bias and
    /// GELU).
    #[command(after_help = suite::EXAMPLES)]
    BenchSuite(Box<suite::Args>),
}

/// Runs a benchmarking subcommand.
pub fn run(command: &Command) -> Result<()> {
    match command {
        Command::Bench(args) => kernel::run(args),
        Command::BenchSuite(args) if args.regret => regret::run(args),
        Command::BenchSuite(args) => suite::run(args),
    }
}
