//! Measures the matmul baselines side by side on this machine and prints a Markdown table (the
//! "Baselines" table of `docs/PERFORMANCE.md`), without any morello kernel; `morello bench` and
//! `morello bench-suite` time the baselines beside the kernels.
//!
//! ```text
//! cargo run --release -p morello-measure --example baselines -- [--samples N] [--min-seconds S]
//!     [--threads T] MxKxN...
//! ```
//!
//! Sizes are `M x K x N` for `out[M][N] = lhs[M][K] * rhs[K][N]`, f32, row-major. Each size is
//! one benchmark run with every available baseline alternating; the FMA peak is measured once.

#![allow(clippy::print_stdout, reason = "a command-line example prints its table")]

use std::error::Error;

use morello_codegen::{CompileOptions, Compiler};
use morello_measure::{
    BaselineKind, BenchConfig, BenchRequest, MatmulProblem, PeakConfig, PeakProbe, matmul_baselines,
    measure_peak, run_bench,
};

fn main() -> Result<(), Box<dyn Error>> {
    let mut config = BenchConfig { peak: PeakProbe::Skip, ..BenchConfig::default() };
    let mut problems = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--samples" => config.samples = args.next().ok_or("--samples needs a value")?.parse()?,
            "--min-seconds" => {
                config.min_sample_seconds = args.next().ok_or("--min-seconds needs a value")?.parse()?
            }
            "--threads" => config.threads = args.next().ok_or("--threads needs a value")?.parse()?,
            size => {
                let dims: Vec<usize> = size.split('x').map(str::parse).collect::<Result<_, _>>()?;
                let [m, k, n] = dims[..] else { return Err(format!("size `{size}` is not MxKxN").into()) };
                problems.push(MatmulProblem::f32(m, k, n));
            }
        }
    }
    let compiler = Compiler::find()?;
    let peak = measure_peak(&compiler, &PeakConfig { min_seconds: 0.2, samples: 5, cpu: config.cpu() })?;
    println!("compiler: {compiler}");
    println!("peak: {:.1} GFLOP/s f32 on one core ({:?} FMA probe, best of 5)", peak.gflops, peak.variant);
    println!(
        "threads: {}, pinned to CPU {:?}, {} samples of >= {} s\n",
        config.threads,
        config.cpu(),
        config.samples,
        config.min_sample_seconds
    );
    let names: Vec<&str> = BaselineKind::ALL.iter().map(|k| k.name()).collect();
    println!("| M x K x N | {} |", names.join(" | "));
    println!("| --- |{}", " ---: |".repeat(names.len()));
    let mut skipped_lines = Vec::new();
    for problem in problems {
        let set = matmul_baselines(&compiler, &problem, &BaselineKind::ALL, config.threads);
        for skipped in &set.skipped {
            skipped_lines.push(format!("{}x{}x{}: {}", problem.m, problem.k, problem.n, skipped.reason));
        }
        let request = BenchRequest {
            signature: problem.signature("no_kernel"),
            kernel_source: String::new(),
            options: CompileOptions::default(),
            candidates: set.candidates,
            work: problem.work(),
        };
        let report = run_bench(&compiler, request, &config)?;
        let memory_bound = problem.m == 1 || problem.n == 1;
        let cells: Vec<String> = BaselineKind::ALL
            .iter()
            .map(|kind| match report.result(kind.name()) {
                None => "n/a".to_string(),
                Some(result) => {
                    let flops = problem.work().flops.unwrap_or(0.0);
                    let (fast, slow) = (flops / result.stats.min / 1e9, flops / result.stats.max / 1e9);
                    let mut cell = format!("{:.1} ({:.1}-{:.1})", result.gflops.unwrap_or(0.0), slow, fast);
                    if memory_bound {
                        cell.push_str(&format!(", {:.1} GB/s", result.gbytes_per_second.unwrap_or(0.0)));
                    }
                    cell
                }
            })
            .collect();
        println!("| {}x{}x{} | {} |", problem.m, problem.k, problem.n, cells.join(" | "));
    }
    for line in skipped_lines {
        println!("\nskipped {line}");
    }
    Ok(())
}
