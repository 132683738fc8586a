//! Measures the baselines side by side on this machine and prints a Markdown table, without any
//! morello kernel (to compare libraries, or check one is installed and agrees with the
//! reference); `morello bench` and `morello bench-suite` time the baselines beside the kernels.
//!
//! ```text
//! cargo run --release -p morello-measure --example baselines -- [--samples N] [--min-seconds S]
//!     [--threads T] [--only LIST] PROBLEM...
//! ```
//!
//! Problems, all f32:
//!
//! - `MxKxN` (`out[M][N] = lhs[M][K] * rhs[K][N]`, row-major), optionally `+bias,relu`, `+bias,gelu`, ...;
//! - `softmax:RxC` (along rows of C);
//! - `conv:NxHxWxC:RxSxCxK[:sS][:pP|:same][:dD][+EPILOGUE]`: NHWC input, HWIO filter, stride,
//!   padding on every side (or TensorFlow's "same"), dilation; `conv-nchw:NxCxHxW:KxCxRxS...` for
//!   NCHW and OIHW.
//!
//! Each problem is one benchmark run with every available baseline (or those of `--only`)
//! alternating, each checked against the reference first; the FMA peak is measured once. Cells
//! are the median GFLOP/s with the slowest and fastest sample (GB/s for softmax and for
//! vector-matrix products).

#![allow(clippy::print_stdout, reason = "a command-line example prints its table")]

use std::error::Error;

use morello_codegen::{CompileOptions, Compiler};
use morello_measure::baselines::{Activation, ActivationLayout, ConvPadding, FilterLayout};
use morello_measure::{
    BaselineKind, BaselineOptions, BenchConfig, BenchRequest, ConvProblem, Epilogue, MatmulProblem,
    PeakConfig, PeakProbe, Problem, SoftmaxProblem, baselines, measure_peak, run_bench,
};

fn main() -> Result<(), Box<dyn Error>> {
    let mut config = BenchConfig { peak: PeakProbe::Skip, ..BenchConfig::default() };
    let mut problems = Vec::new();
    let mut kinds = BaselineKind::ALL.to_vec();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--samples" => config.samples = args.next().ok_or("--samples needs a value")?.parse()?,
            "--min-seconds" => {
                config.min_sample_seconds = args.next().ok_or("--min-seconds needs a value")?.parse()?
            }
            "--threads" => config.threads = args.next().ok_or("--threads needs a value")?.parse()?,
            "--only" => {
                let list = args.next().ok_or("--only needs a list")?;
                kinds = list.split(',').map(str::parse).collect::<Result<_, _>>()?;
            }
            text => problems.push(parse_problem(text)?),
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
    let mut rows = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    let mut remarks: Vec<String> = Vec::new();
    for problem in problems {
        let options = BaselineOptions { threads: config.threads, seed: config.seed, caches: config.caches };
        let set = baselines(&compiler, &problem, &kinds, &options);
        for skipped in &set.skipped {
            remarks.push(format!("skipped ({}): {}", problem.describe(), skipped.reason));
        }
        for note in set.notes {
            if !remarks.contains(&note) {
                remarks.push(note);
            }
        }
        let work = problem.work();
        let request = BenchRequest {
            signature: problem.signature("no_kernel"),
            kernel_source: String::new(),
            options: CompileOptions::default(),
            candidates: set.candidates,
            work,
        };
        let report = run_bench(&compiler, request, &config)?;
        let memory_bound = match problem {
            Problem::Matmul(p) => p.m == 1 || p.n == 1,
            Problem::Softmax(_) => true,
            Problem::Conv(_) => false,
        };
        let mut cells = Vec::new();
        for result in &report.results {
            if !labels.contains(&result.label) {
                labels.push(result.label.clone());
            }
            let cell = match (work.flops, work.bytes) {
                (Some(flops), _) => {
                    let (fast, slow) = (flops / result.stats.min / 1e9, flops / result.stats.max / 1e9);
                    let mut cell = format!("{:.1} ({slow:.1}-{fast:.1})", result.gflops.unwrap_or(0.0));
                    if memory_bound {
                        cell.push_str(&format!(", {:.1} GB/s", result.gbytes_per_second.unwrap_or(0.0)));
                    }
                    cell
                }
                (None, Some(bytes)) => {
                    let (fast, slow) = (bytes / result.stats.min / 1e9, bytes / result.stats.max / 1e9);
                    format!(
                        "{:.1} GB/s ({slow:.1}-{fast:.1}), {:.2} us",
                        bytes / result.stats.median / 1e9,
                        result.stats.median * 1e6
                    )
                }
                (None, None) => format!("{:.2} us", result.stats.median * 1e6),
            };
            cells.push((result.label.clone(), cell));
        }
        rows.push((problem.describe(), cells));
    }
    println!("| problem | {} |", labels.join(" | "));
    println!("| --- |{}", " ---: |".repeat(labels.len()));
    for (name, cells) in rows {
        let row: Vec<String> = labels
            .iter()
            .map(|l| cells.iter().find(|(label, _)| label == l).map_or("n/a".to_string(), |(_, c)| c.clone()))
            .collect();
        println!("| {name} | {} |", row.join(" | "));
    }
    for remark in remarks {
        println!("\n{remark}");
    }
    Ok(())
}

/// `AxBxC...` as numbers.
fn dims(text: &str) -> Result<Vec<usize>, Box<dyn Error>> {
    Ok(text.split('x').map(str::parse).collect::<Result<_, _>>()?)
}

/// `bias,relu` and the like.
fn parse_epilogue(text: &str) -> Result<Epilogue, Box<dyn Error>> {
    let mut epilogue = Epilogue::NONE;
    for part in text.split(',') {
        match part {
            "bias" => epilogue.bias = true,
            "relu" => epilogue.activation = Activation::Relu,
            "gelu" => epilogue.activation = Activation::Gelu,
            other => return Err(format!("unknown epilogue part `{other}` (bias, relu, gelu)").into()),
        }
    }
    Ok(epilogue)
}

fn parse_problem(text: &str) -> Result<Problem, Box<dyn Error>> {
    let (body, epilogue) = match text.split_once('+') {
        Some((body, epilogue)) => (body, parse_epilogue(epilogue)?),
        None => (text, Epilogue::NONE),
    };
    let mut fields = body.split(':');
    let head = fields.next().unwrap_or_default();
    let problem = match head {
        "softmax" => {
            let [rows, cols] = dims(fields.next().ok_or("softmax:RxC")?)?[..] else {
                return Err(format!("`{text}` is not softmax:RxC").into());
            };
            Problem::Softmax(SoftmaxProblem { rows, cols })
        }
        "conv" | "conv-nchw" => {
            let nhwc = head == "conv";
            let input = dims(fields.next().ok_or("conv needs an input shape")?)?;
            let filter = dims(fields.next().ok_or("conv needs a filter shape")?)?;
            let (&[n, a, b, c], &[f0, f1, f2, f3]) = (&input[..], &filter[..]) else {
                return Err(format!("`{text}`: the input and filter shapes have four dims each").into());
            };
            let problem = if nhwc {
                ConvProblem::new([n, c, a, b], [f3, f0, f1], ActivationLayout::Nhwc, FilterLayout::Hwio)
            } else {
                ConvProblem::new([n, a, b, c], [f0, f2, f3], ActivationLayout::Nchw, FilterLayout::Oihw)
            };
            let (r, s) = (problem.kernel_h, problem.kernel_w);
            let mut problem = ConvProblem { epilogue, ..problem };
            let mut same = false;
            for option in fields {
                if option == "same" {
                    same = true;
                } else if let Some(v) = option.strip_prefix('s') {
                    problem.stride = [v.parse()?; 2];
                } else if let Some(v) = option.strip_prefix('p') {
                    problem.padding = ConvPadding::uniform(v.parse()?);
                } else if let Some(v) = option.strip_prefix('d') {
                    problem.dilation = [v.parse()?; 2];
                } else {
                    return Err(format!("unknown conv option `{option}` (sS, pP, same, dD)").into());
                }
            }
            if same {
                // TensorFlow's "same": the output is ceil(input / stride), the padding split with
                // the extra row or column at the bottom or right.
                let pad = |size: usize, kernel: usize, stride: usize, dilation: usize| {
                    let out = size.div_ceil(stride);
                    let total = ((out - 1) * stride + (kernel - 1) * dilation + 1).saturating_sub(size);
                    (total / 2, total - total / 2)
                };
                let (top, bottom) = pad(problem.height, r, problem.stride[0], problem.dilation[0]);
                let (left, right) = pad(problem.width, s, problem.stride[1], problem.dilation[1]);
                problem.padding = ConvPadding { top, bottom, left, right };
            }
            Problem::Conv(problem)
        }
        _ => {
            let [m, k, n] = dims(head)?[..] else { return Err(format!("`{text}` is not MxKxN").into()) };
            Problem::Matmul(MatmulProblem::f32(m, k, n).with_epilogue(epilogue))
        }
    };
    problem.validate()?;
    Ok(problem)
}
