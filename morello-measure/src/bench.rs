//! The side-by-side measurement protocol: several candidates (the morello kernel and baselines)
//! timed in one run, on the same inputs, alternating sample by sample, on one pinned core.
//!
//! # Protocol
//!
//! 1. All C candidates go into **one program**: the kernel's unit carries the benchmark `main`
//!    ([`morello_codegen::harness::bench_program_source`]), each C baseline is its own unit with its own
//!    flags, and the libraries are linked together (their symbols are distinct: OpenBLAS through
//!    `cblas_sgemm`, BLIS through `bli_sgemm`, libxsmm through its JIT dispatch).
//! 2. The peak probe ([`crate::peak`]) runs once, on the same core, before anything else.
//! 3. The program starts in serve mode, pinned with `sched_setaffinity` to the chosen CPU, and
//!    fills its inputs from the seed. Candidates written in Rust get the identical inputs from
//!    [`Buffer::from_seed`] and run on a driver thread pinned to the same CPU; the driver waits
//!    on the program while it times, so the two never compete for the core. A candidate that is a
//!    program of its own ([`ProcessCandidate`], e.g. another compiler's code driven from Python)
//!    is started beside it, fills the same inputs from the seed, pins itself to the same CPU and
//!    answers the same serve protocol, timing its calls itself.
//! 4. Each candidate gets one warm-up call, then its repetitions are calibrated (growing at most
//!    100x per step) until one sample takes at least `min_sample_seconds`. The calls of a sample
//!    run back to back ([`Caches::Warm`]), or each alone after the program evicted every parameter's
//!    buffer from the caches ([`Caches::Cold`]; C candidates only).
//! 5. `samples` rounds follow; round `s` times every candidate once, starting at candidate
//!    `s mod n`, so slow drifts of the machine (clock, neighbours) hit every candidate alike.
//! 6. Each candidate's seconds per call are summarised by median, quartiles and range; GFLOP/s
//!    and GB/s use the median.
//!
//! With more than one thread nothing is pinned and `OMP_NUM_THREADS`, `OPENBLAS_NUM_THREADS` and
//! `BLIS_NUM_THREADS` are set to the thread count (they are set to 1 for a one-thread run, so no
//! library spawns helpers).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Instant;

use serde::Serialize;

use crate::error::MeasureError;
use crate::peak::{PeakConfig, PeakReport, measure_peak};
use crate::stats::SampleStats;
use morello_codegen::compiler::{CProgram, CompileOptions, Compiler, OpenMp, SourceUnit};
use morello_codegen::harness::{
    BenchEntry, Buffer, KernelSignature, SERVE_READY_PREFIX, bench_program_source, parse_sample_line,
};
use morello_codegen::host::require_features;
use morello_codegen::run::{Termination, check_termination};

/// The default minimum duration of one sample, in seconds.
pub const DEFAULT_MIN_SAMPLE_SECONDS: f64 = 0.2;

/// The default number of samples per candidate.
pub const DEFAULT_SAMPLES: usize = 5;

/// Which CPUs a benchmark runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pinning {
    /// One thread: pinned to the highest-numbered CPU this process may use (CPU 0 tends to take
    /// more interrupts; read from `/proc/self/status`). Several threads: OpenMP's are bound one to
    /// a CPU, the highest-numbered first, when the process may use that many (threads libraries
    /// start themselves are left to the OS).
    #[default]
    Auto,
    /// Everything on this CPU.
    Cpu(usize),
    /// Let the OS schedule.
    Unpinned,
}

/// Whether a benchmark run measures the machine's peak first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PeakProbe {
    /// Run the FMA-throughput probe once, before the candidates.
    #[default]
    Measure,
    /// Do not (e.g. in tests).
    Skip,
}

/// Where a call's operands are when it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Caches {
    /// Calls run back to back, so operands stay in whatever caches hold them: a kernel called
    /// again and again on the same data, as libraries are usually timed.
    #[default]
    Warm,
    /// Each call is timed alone, after the program evicted every parameter's buffer from the
    /// caches (`clflush`: x86-64 hosts only): the operands start in main memory, where the cost
    /// model's specs place them. Only C candidates can be timed so (Rust ones cannot evict their
    /// buffers without `unsafe`), and a baseline's own buffers (packed weights a setup prepared)
    /// are not evicted.
    Cold,
}

/// How to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchConfig {
    /// The minimum duration of one sample (repetitions are calibrated to reach it).
    pub min_sample_seconds: f64,
    /// Samples per candidate, at least 1.
    pub samples: usize,
    /// The seed of the inputs.
    pub seed: u64,
    /// Threads each candidate may use, at least 1.
    pub threads: usize,
    /// Where to run.
    pub pinning: Pinning,
    /// Whether to measure the peak first.
    pub peak: PeakProbe,
    /// Warm (back-to-back) or cold (evicted) calls.
    pub caches: Caches,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            min_sample_seconds: DEFAULT_MIN_SAMPLE_SECONDS,
            samples: DEFAULT_SAMPLES,
            seed: 0,
            threads: 1,
            pinning: Pinning::Auto,
            peak: PeakProbe::Measure,
            caches: Caches::Warm,
        }
    }
}

impl BenchConfig {
    /// The CPU to pin to, if any.
    pub fn cpu(&self) -> Option<usize> {
        match self.pinning {
            Pinning::Cpu(cpu) => Some(cpu),
            Pinning::Unpinned => None,
            Pinning::Auto if self.threads == 1 => Some(highest_allowed_cpu()),
            Pinning::Auto => None,
        }
    }

    /// The CPUs OpenMP's threads are bound to, thread `i` to the `i`-th (see [`Pinning::Auto`]);
    /// empty when nothing is bound.
    pub fn bound_cpus(&self) -> Vec<usize> {
        let allowed = allowed_cpus();
        match self.pinning {
            Pinning::Auto if self.threads > 1 && allowed.len() >= self.threads => {
                allowed[allowed.len() - self.threads..].iter().rev().copied().collect()
            }
            _ => Vec::new(),
        }
    }

    fn check(&self) -> Result<(), MeasureError> {
        let invalid = |reason: &str| Err(MeasureError::InvalidBench { reason: reason.to_string() });
        if self.samples == 0 {
            return invalid("at least one sample is needed");
        }
        if self.threads == 0 {
            return invalid("at least one thread is needed");
        }
        if !(self.min_sample_seconds >= 0.0 && self.min_sample_seconds <= 3600.0) {
            return invalid("the minimum sample time must be between 0 and 3600 seconds");
        }
        Ok(())
    }
}

/// The highest-numbered CPU this process may run on.
fn highest_allowed_cpu() -> usize {
    allowed_cpus().last().copied().unwrap_or(0)
}

/// The CPUs this process may run on, in increasing order: `Cpus_allowed_list` in
/// `/proc/self/status` (e.g. `0-3,8`), else `0..available_parallelism`.
fn allowed_cpus() -> Vec<usize> {
    let from_status = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            Some(parse_cpu_list(status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?))
        })
        .filter(|cpus| !cpus.is_empty());
    from_status.unwrap_or_else(|| (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect())
}

/// The CPUs of a Linux CPU list (`0-3,8`), in increasing order; malformed ranges are left out.
fn parse_cpu_list(list: &str) -> Vec<usize> {
    let mut cpus: Vec<usize> = list
        .trim()
        .split(',')
        .filter_map(|range| {
            let (first, last) = range.split_once('-').unwrap_or((range, range));
            let (first, last) = (first.trim().parse::<usize>().ok()?, last.trim().parse::<usize>().ok()?);
            // A CPU set holds at most a few thousand.
            (first <= last && last < 1 << 16).then_some(first..=last)
        })
        .flatten()
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// A candidate written in C: an entry of the benchmark program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CCandidate {
    /// Its label, function and optional setup.
    pub entry: BenchEntry,
    /// The unit defining the function, or `None` when it is in the request's kernel source.
    pub unit: Option<SourceUnit>,
    /// What the program must be linked with for it, e.g. `-lopenblas`.
    pub link_args: Vec<String>,
}

/// A kernel implemented in Rust, prepared on the benchmark's inputs.
pub trait RustKernel: Send {
    /// Runs the kernel once on its buffers.
    fn run(&mut self);

    /// The written parameters' contents, in signature order (for checking results).
    fn written(&self) -> Vec<Buffer>;
}

/// Builds a [`RustKernel`] from every parameter's initial contents, in signature order (read
/// parameters seeded, outputs zeroed).
pub type PrepareRustKernel = Box<dyn FnOnce(&[Buffer]) -> Result<Box<dyn RustKernel>, MeasureError> + Send>;

/// A candidate timed in Rust, in the same process as the driver.
pub struct RustCandidate {
    /// Its label.
    pub label: String,
    /// How to prepare it on the inputs.
    pub prepare: PrepareRustKernel,
}

impl std::fmt::Debug for RustCandidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RustCandidate").field("label", &self.label).finish_non_exhaustive()
    }
}

/// A candidate timed by a program of its own that speaks the benchmark program's serve protocol
/// (e.g. a Python script calling another compiler's code).
///
/// The driver starts `program args... --seed S [--cpu K]`, reads one line starting with
/// [`SERVE_READY_PREFIX`], then for each sample writes `run 0 REPS` and reads
/// `sample\t0\tLABEL\tREPS\tSECONDS_PER_CALL` (the program times its `REPS` calls itself),
/// and finally writes `quit`, after which the program must exit with status 0. The program fills
/// its inputs from the seed as [`Buffer::from_seed`] does and pins itself to CPU `K`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessCandidate {
    /// Its label.
    pub label: String,
    /// The program to start.
    pub program: PathBuf,
    /// Its arguments before `--seed`.
    pub args: Vec<String>,
}

/// Something to time.
#[derive(Debug)]
pub enum Candidate {
    /// A C function in the benchmark program.
    C(CCandidate),
    /// A Rust kernel timed in the driver.
    Rust(RustCandidate),
    /// A program of its own, timing its calls itself.
    Process(ProcessCandidate),
}

impl Candidate {
    /// The candidate's label.
    pub fn label(&self) -> &str {
        match self {
            Candidate::C(c) => &c.entry.label,
            Candidate::Rust(r) => &r.label,
            Candidate::Process(p) => &p.label,
        }
    }
}

/// The work one call does, for throughput figures.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Work {
    /// Floating-point (or integer multiply-add) operations per call, e.g. `2 M K N` for a matmul.
    pub flops: Option<f64>,
    /// Bytes that must cross from memory per call (for memory-bound kernels).
    pub bytes: Option<f64>,
}

/// A benchmark: the shared signature, the kernel's translation unit, and the candidates.
#[derive(Debug)]
pub struct BenchRequest {
    /// The call shape every candidate shares.
    pub signature: KernelSignature,
    /// The morello kernel's translation unit (may be empty if no candidate needs it).
    pub kernel_source: String,
    /// Options for every unit (target features, OpenMP, warnings); baselines add their own flags.
    pub options: CompileOptions,
    /// The candidates, in reporting order (put the morello kernel first).
    pub candidates: Vec<Candidate>,
    /// The work per call.
    pub work: Work,
}

/// Where a candidate ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Runtime {
    /// In the benchmark program.
    C,
    /// In the driver process.
    Rust,
    /// In a program of its own.
    Process,
}

/// One candidate's measurements.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateResult {
    /// The candidate's label.
    pub label: String,
    /// Where it ran.
    pub runtime: Runtime,
    /// Calls per sample (from calibration).
    pub reps_per_sample: u64,
    /// Seconds per call, one per sample, in the order taken.
    pub seconds_per_call: Vec<f64>,
    /// Their summary.
    pub stats: SampleStats,
    /// `work.flops / median`, in GFLOP/s.
    pub gflops: Option<f64>,
    /// `work.bytes / median`, in GB/s.
    pub gbytes_per_second: Option<f64>,
    /// GFLOP/s as a percentage of the peak times the thread count.
    pub percent_of_peak: Option<f64>,
}

/// The outcome of a benchmark run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchReport {
    /// The compiler, e.g. `cc: cc (Debian 12.2.0-14) 12.2.0`.
    pub compiler: String,
    /// Threads per candidate.
    pub threads: usize,
    /// The CPU everything was pinned to, if any.
    pub cpu: Option<usize>,
    /// The CPUs OpenMP's threads were bound to, thread `i` to the `i`-th; empty if none.
    pub bound_cpus: Vec<usize>,
    /// The minimum sample time used.
    pub min_sample_seconds: f64,
    /// Warm or cold calls.
    pub caches: Caches,
    /// The single-core peak, if measured.
    pub peak: Option<PeakReport>,
    /// One result per candidate, in request order.
    pub results: Vec<CandidateResult>,
    /// Remarks about the run (e.g. the driver thread could not be pinned).
    pub notes: Vec<String>,
}

impl BenchReport {
    /// The result labelled `label`.
    pub fn result(&self, label: &str) -> Option<&CandidateResult> {
        self.results.iter().find(|r| r.label == label)
    }

    /// How many times faster `label` is than `baseline`, by median time per call
    /// (`baseline median / label median`).
    pub fn speedup(&self, label: &str, baseline: &str) -> Option<f64> {
        let ours = self.result(label)?.stats.median;
        let theirs = self.result(baseline)?.stats.median;
        (ours > 0.0).then(|| theirs / ours)
    }

    /// `label`'s speedup over every other candidate, in request order.
    pub fn speedups(&self, label: &str) -> Vec<(String, f64)> {
        self.results
            .iter()
            .filter(|r| r.label != label)
            .filter_map(|r| self.speedup(label, &r.label).map(|s| (r.label.clone(), s)))
            .collect()
    }
}

/// The environment for a run with `threads` threads.
pub fn thread_environment(threads: usize) -> Vec<(String, String)> {
    ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS"]
        .iter()
        .map(|name| ((*name).to_string(), threads.to_string()))
        .collect()
}

/// Builds the benchmark program for `request` (without running it): the kernel unit with the
/// harness, every C candidate's unit, and the link arguments in candidate order.
///
/// # Errors
/// As [`bench_program_source`] and [`Compiler::build`].
pub fn build_bench_program(
    compiler: &Compiler,
    request: &BenchRequest,
) -> Result<morello_codegen::compiler::Build, MeasureError> {
    let entries: Vec<BenchEntry> = request
        .candidates
        .iter()
        .filter_map(|c| match c {
            Candidate::C(c) => Some(c.entry.clone()),
            Candidate::Rust(_) | Candidate::Process(_) => None,
        })
        .collect();
    let main = bench_program_source(&request.signature, &request.kernel_source, &entries)?;
    let mut program = CProgram { units: vec![SourceUnit::new("bench_main", main)], link_args: Vec::new() };
    for candidate in &request.candidates {
        if let Candidate::C(c) = candidate {
            program.units.extend(c.unit.iter().cloned());
            program.link_args.extend(c.link_args.iter().cloned());
        }
    }
    Ok(compiler.build(&program, &request.options)?)
}

/// Runs the benchmark described by `request` under `config` (see the module docs for the
/// protocol).
///
/// # Errors
/// [`MeasureError::InvalidBench`] for a bad configuration or no candidate;
/// [`CodegenError::MissingHostFeatures`](morello_codegen::CodegenError::MissingHostFeatures) if the host cannot run the program; compile errors;
/// [`CodegenError::Signalled`](morello_codegen::CodegenError::Signalled) or `ExitFailure` if the program dies; errors from
/// preparing a Rust candidate.
pub fn run_bench(
    compiler: &Compiler,
    request: BenchRequest,
    config: &BenchConfig,
) -> Result<BenchReport, MeasureError> {
    config.check()?;
    if request.candidates.is_empty() {
        return Err(MeasureError::InvalidBench { reason: "no candidate to time".into() });
    }
    if config.caches == Caches::Cold && !cfg!(target_arch = "x86_64") {
        return Err(MeasureError::InvalidBench {
            reason: "cold calls evict buffers with clflush, which needs an x86-64 host".into(),
        });
    }
    if config.caches == Caches::Cold
        && let Some(other) = request.candidates.iter().find(|c| !matches!(c, Candidate::C(_)))
    {
        return Err(MeasureError::InvalidBench {
            reason: format!(
                "{} is not timed in the benchmark program, which cannot evict its buffers from the caches: \
                 time it warm, or leave it out of a cold run",
                other.label()
            ),
        });
    }
    request.signature.validate()?;
    require_features(&request.options.features)?;
    let cpu = config.cpu();
    // Binding needs the program's OpenMP runtime (a program without parallel loops has none).
    let bound_cpus = if request.options.openmp == OpenMp::Enabled { config.bound_cpus() } else { Vec::new() };
    let peak = match config.peak {
        PeakProbe::Measure => {
            let peak_config = PeakConfig { min_seconds: config.min_sample_seconds, samples: 3, cpu };
            Some(measure_peak(compiler, &peak_config)?)
        }
        PeakProbe::Skip => None,
    };
    let has_c = request.candidates.iter().any(|c| matches!(c, Candidate::C(_)));
    let build = if has_c { Some(build_bench_program(compiler, &request)?) } else { None };

    let initial: Vec<Buffer> = request
        .signature
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if p.role.is_read() {
                Buffer::from_seed(p.c_type, p.elements, config.seed, i)
            } else {
                Buffer::zeros(p.c_type, p.elements)
            }
        })
        .collect();
    let env = thread_environment(config.threads);
    let mut timed = Vec::new();
    let mut c_index = 0;
    for candidate in request.candidates {
        match candidate {
            Candidate::C(c) => {
                timed.push((c.entry.label, Timed::C(c_index)));
                c_index += 1;
            }
            Candidate::Rust(r) => timed.push((r.label, Timed::Rust((r.prepare)(&initial)?))),
            Candidate::Process(p) => {
                let mut args = p.args.clone();
                args.extend(["--seed".to_string(), config.seed.to_string()]);
                if let Some(cpu) = cpu {
                    args.extend(["--cpu".to_string(), cpu.to_string()]);
                }
                timed.push((p.label, Timed::Process(ServeClient::start(p.program, &args, &env)?)));
            }
        }
    }

    let mut args = vec!["--serve".to_string(), "--seed".into(), config.seed.to_string()];
    if config.caches == Caches::Cold {
        args.push("--cold".into());
    }
    if let Some(cpu) = cpu {
        args.extend(["--cpu".to_string(), cpu.to_string()]);
    }
    if !bound_cpus.is_empty() {
        let list: Vec<String> = bound_cpus.iter().map(ToString::to_string).collect();
        args.extend(["--bind".to_string(), list.join(",")]);
    }
    let program = build.as_ref().map(|b| b.binary().to_path_buf());
    let min_seconds = config.min_sample_seconds;
    let samples = config.samples;
    let (measured, notes) = std::thread::scope(|scope| {
        scope
            .spawn(move || -> Result<_, MeasureError> {
                let mut notes = Vec::new();
                if let Some(cpu) =
                    cpu.filter(|&id| !core_affinity::set_for_current(core_affinity::CoreId { id }))
                {
                    notes.push(format!("the Rust driver thread could not be pinned to CPU {cpu}"));
                }
                let mut client = match program {
                    Some(program) => Some(ServeClient::start(program, &args, &env)?),
                    None => None,
                };
                let measured = measure_all(&mut timed, client.as_mut(), min_seconds, samples);
                let finished = client.map_or(Ok(()), ServeClient::finish);
                let measured = measured?;
                finished?;
                for (_, candidate) in timed {
                    if let Timed::Process(process) = candidate {
                        process.finish()?;
                    }
                }
                Ok((measured, notes))
            })
            .join()
            .unwrap_or_else(|_| {
                Err(MeasureError::InvalidBench { reason: "the benchmark driver thread panicked".into() })
            })
    })?;

    let peak_gflops = peak.as_ref().map(|p| p.gflops * config.threads as f64);
    let results = measured
        .into_iter()
        .map(|(label, runtime, reps, seconds)| {
            let stats = SampleStats::of(&seconds).ok_or_else(|| MeasureError::InvalidBench {
                reason: format!("{label} produced no finite sample"),
            })?;
            let per_second =
                |amount: Option<f64>| amount.filter(|_| stats.median > 0.0).map(|a| a / stats.median / 1e9);
            let gflops = per_second(request.work.flops);
            let percent_of_peak = gflops.zip(peak_gflops).map(|(g, p)| 100.0 * g / p);
            Ok(CandidateResult {
                label,
                runtime,
                reps_per_sample: reps,
                seconds_per_call: seconds,
                stats,
                gflops,
                gbytes_per_second: per_second(request.work.bytes),
                percent_of_peak,
            })
        })
        .collect::<Result<Vec<_>, MeasureError>>()?;
    Ok(BenchReport {
        compiler: compiler.to_string(),
        threads: config.threads,
        cpu,
        bound_cpus,
        min_sample_seconds: config.min_sample_seconds,
        caches: config.caches,
        peak,
        results,
        notes,
    })
}

/// A candidate as the driver times it.
enum Timed {
    /// Entry number `n` of the C program.
    C(usize),
    /// A prepared Rust kernel.
    Rust(Box<dyn RustKernel>),
    /// A program of its own in serve mode (its one entry is number 0).
    Process(ServeClient),
}

/// (label, runtime, reps per sample, seconds per call per sample) for each candidate.
type Measured = Vec<(String, Runtime, u64, Vec<f64>)>;

fn measure_all(
    timed: &mut [(String, Timed)],
    mut client: Option<&mut ServeClient>,
    min_seconds: f64,
    samples: usize,
) -> Result<Measured, MeasureError> {
    let mut reps = Vec::with_capacity(timed.len());
    for (_, candidate) in timed.iter_mut() {
        reps.push(calibrate(candidate, client.as_deref_mut(), min_seconds)?);
    }
    let mut seconds: Vec<Vec<f64>> = vec![Vec::with_capacity(samples); timed.len()];
    for round in 0..samples {
        for offset in 0..timed.len() {
            let which = (round + offset) % timed.len();
            let per_call = time_calls(&mut timed[which].1, client.as_deref_mut(), reps[which])?;
            seconds[which].push(per_call);
        }
    }
    Ok(timed
        .iter()
        .zip(reps)
        .zip(seconds)
        .map(|(((label, candidate), reps), seconds)| {
            let runtime = match candidate {
                Timed::C(_) => Runtime::C,
                Timed::Rust(_) => Runtime::Rust,
                Timed::Process(_) => Runtime::Process,
            };
            (label.clone(), runtime, reps, seconds)
        })
        .collect())
}

/// One warm-up call, then repetitions grown until one sample takes at least `min_seconds`. A
/// sample that reaches it is timed again and the shorter counts, so one preempted timing cannot
/// fix a count of repetitions far too small for the samples that follow.
fn calibrate(
    candidate: &mut Timed,
    mut client: Option<&mut ServeClient>,
    min_seconds: f64,
) -> Result<u64, MeasureError> {
    time_calls(candidate, client.as_deref_mut(), 1)?;
    let mut reps: u64 = 1;
    loop {
        let mut total = time_calls(candidate, client.as_deref_mut(), reps)? * reps as f64;
        if total >= min_seconds {
            total = total.min(time_calls(candidate, client.as_deref_mut(), reps)? * reps as f64);
        }
        if total >= min_seconds || reps >= 1 << 40 {
            return Ok(reps);
        }
        let scale = if total > 0.0 { (1.2 * min_seconds / total).clamp(2.0, 100.0) } else { 100.0 };
        reps = (reps as f64 * scale).ceil() as u64;
    }
}

/// Seconds per call over `reps` back-to-back calls.
fn time_calls(
    candidate: &mut Timed,
    client: Option<&mut ServeClient>,
    reps: u64,
) -> Result<f64, MeasureError> {
    match candidate {
        Timed::C(index) => {
            let client = client.ok_or_else(|| MeasureError::InvalidBench {
                reason: "a C candidate without a benchmark program".into(),
            })?;
            client.sample(*index, reps)
        }
        Timed::Rust(kernel) => {
            let start = Instant::now();
            for _ in 0..reps {
                kernel.run();
            }
            Ok(start.elapsed().as_secs_f64() / reps as f64)
        }
        Timed::Process(process) => process.sample(0, reps),
    }
}

/// A benchmark program in serve mode.
struct ServeClient {
    program: PathBuf,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Option<JoinHandle<String>>,
}

impl ServeClient {
    fn start(program: PathBuf, args: &[String], env: &[(String, String)]) -> Result<Self, MeasureError> {
        let mut child = Command::new(&program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| MeasureError::io(format!("starting {}", program.display()), e))?;
        let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(mut stderr)) = pipes else {
            return Err(MeasureError::InvalidBench {
                reason: "the benchmark program's pipes are missing".into(),
            });
        };
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            text
        });
        let mut client =
            ServeClient { program, child, stdin, stdout: BufReader::new(stdout), stderr: Some(stderr) };
        let line = client.read_line()?;
        if !line.starts_with(SERVE_READY_PREFIX) {
            return Err(
                client.bad_output(format!("expected `{SERVE_READY_PREFIX}`, got `{}`", line.trim_end()))
            );
        }
        Ok(client)
    }

    /// Seconds per call of `reps` calls of entry `index`.
    fn sample(&mut self, index: usize, reps: u64) -> Result<f64, MeasureError> {
        if writeln!(self.stdin, "run {index} {reps}").and_then(|()| self.stdin.flush()).is_err() {
            return Err(self.died());
        }
        let line = self.read_line()?;
        match parse_sample_line(&line) {
            Some(sample) if sample.candidate == index && sample.reps == reps => Ok(sample.seconds_per_call),
            _ => {
                Err(self.bad_output(format!("expected a sample of entry {index}, got `{}`", line.trim_end())))
            }
        }
    }

    /// The next line; the program's death (with its signal or status) if there is none.
    fn read_line(&mut self) -> Result<String, MeasureError> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) | Err(_) => Err(self.died()),
            Ok(_) => Ok(line),
        }
    }

    fn stderr_text(&mut self) -> String {
        self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default()
    }

    /// The error for a program that stopped answering.
    fn died(&mut self) -> MeasureError {
        let termination = match self.child.wait() {
            Ok(status) => Termination::from_status(status),
            Err(e) => return MeasureError::io(format!("waiting for {}", self.program.display()), e),
        };
        let stderr = self.stderr_text();
        match check_termination(&self.program, termination, stderr) {
            Err(error) => error.into(),
            Ok(()) => MeasureError::BadOutput {
                program: self.program.clone(),
                detail: "the program exited before answering".into(),
            },
        }
    }

    fn bad_output(&mut self, detail: String) -> MeasureError {
        let _ = self.child.kill();
        let _ = self.child.wait();
        MeasureError::BadOutput { program: self.program.clone(), detail }
    }

    /// Asks the program to quit and checks that it exited cleanly.
    fn finish(mut self) -> Result<(), MeasureError> {
        let _ = writeln!(self.stdin, "quit").and_then(|()| self.stdin.flush());
        let status = self
            .child
            .wait()
            .map_err(|e| MeasureError::io(format!("waiting for {}", self.program.display()), e))?;
        let stderr = self.stderr_text();
        Ok(check_termination(&self.program, Termination::from_status(status), stderr)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use morello_codegen::CodegenError;
    use morello_codegen::harness::{CType, KernelParam, ParamRole};
    use morello_codegen::test_support::{compiler, strict};

    const SCALE: &str =
        "void scale(const float *x, float *y) {\n  for (int i = 0; i < 64; i++) y[i] = 2.0f * x[i];\n}\n";

    /// A request to time [`SCALE`] (strict warnings, no work counts) with these candidates.
    fn scale_request(candidates: Vec<Candidate>) -> BenchRequest {
        BenchRequest {
            signature: KernelSignature::new(
                "scale",
                vec![
                    KernelParam::new("x", CType::F32, 64, ParamRole::Input),
                    KernelParam::new("y", CType::F32, 64, ParamRole::Output),
                ],
            ),
            kernel_source: SCALE.into(),
            options: strict(),
            candidates,
            work: Work::default(),
        }
    }

    /// The same kernel in Rust, checking it got the C program's seeded inputs.
    struct RustScale {
        x: Vec<f32>,
        y: Vec<f32>,
    }

    impl RustKernel for RustScale {
        fn run(&mut self) {
            for (y, x) in self.y.iter_mut().zip(&self.x) {
                *y = std::hint::black_box(2.0 * x);
            }
        }

        fn written(&self) -> Vec<Buffer> {
            vec![Buffer::F32(self.y.clone())]
        }
    }

    fn quick() -> BenchConfig {
        BenchConfig {
            min_sample_seconds: 0.002,
            samples: 3,
            seed: 5,
            peak: PeakProbe::Skip,
            ..BenchConfig::default()
        }
    }

    fn c_candidate(label: &str) -> Candidate {
        Candidate::C(CCandidate { entry: BenchEntry::new(label, "scale"), unit: None, link_args: vec![] })
    }

    #[test]
    fn c_and_rust_candidates_alternate_in_one_run() {
        let Some(compiler) = compiler() else { return };
        let prepare: PrepareRustKernel = Box::new(|buffers: &[Buffer]| {
            assert_eq!(buffers[0], Buffer::from_seed(CType::F32, 64, 5, 0));
            let x = buffers[0].as_f32().expect("f32").to_vec();
            Ok(Box::new(RustScale { x, y: vec![0.0; 64] }) as Box<dyn RustKernel>)
        });
        let request = BenchRequest {
            work: Work { flops: Some(64.0), bytes: Some(512.0) },
            ..scale_request(vec![
                c_candidate("morello"),
                Candidate::Rust(RustCandidate { label: "rust".into(), prepare }),
                c_candidate("again"),
            ])
        };
        let report = run_bench(&compiler, request, &quick()).expect("runs");
        assert_eq!(report.results.len(), 3);
        assert_eq!(report.threads, 1);
        assert!(report.cpu.is_some());
        for result in &report.results {
            assert_eq!(result.seconds_per_call.len(), 3);
            assert!(result.stats.min > 0.0 && result.stats.max < 1e-3, "{result:?}");
            assert!(result.stats.min <= result.stats.median && result.stats.median <= result.stats.max);
            let gflops = result.gflops.expect("flops given");
            assert!((gflops - 64.0 / result.stats.median / 1e9).abs() < 1e-9);
            assert!(result.gbytes_per_second.is_some() && result.percent_of_peak.is_none());
            assert!(result.reps_per_sample as f64 * result.stats.max >= 0.001, "{result:?}");
        }
        assert_eq!(report.result("rust").map(|r| r.runtime), Some(Runtime::Rust));
        let speedup = report.speedup("morello", "again").expect("both present");
        assert!(speedup > 0.0 && speedup.is_finite());
        assert_eq!(report.speedups("morello").len(), 2);
    }

    /// A program of its own answering the serve protocol is timed alternately with the C
    /// candidate, gets the seed and the CPU, and is told to quit.
    #[test]
    fn a_process_candidate_is_timed_through_the_serve_protocol() {
        let Some(compiler) = compiler() else { return };
        let dir = tempfile::tempdir().expect("a temporary directory");
        let log = dir.path().join("args");
        let script = format!(
            "echo \"$@\" > {log}\necho ready\nwhile read -r word index reps; do\n  \
             [ \"$word\" = quit ] && exit 0\n  printf 'sample\\t0\\tsh\\t%s\\t0.00025\\n' \"$reps\"\ndone\nexit 3\n",
            log = log.display()
        );
        let request = scale_request(vec![
            c_candidate("morello"),
            Candidate::Process(ProcessCandidate {
                label: "sh".into(),
                program: "sh".into(),
                args: vec!["-c".into(), script, "serve".into()],
            }),
        ]);
        let report = run_bench(&compiler, request, &quick()).expect("runs");
        let sh = report.result("sh").expect("the process's result");
        assert_eq!(sh.runtime, Runtime::Process);
        assert_eq!(sh.seconds_per_call, [0.00025; 3]);
        assert!(sh.reps_per_sample >= 8, "0.002 s of 0.25 ms calls: {sh:?}");
        let args = std::fs::read_to_string(&log).expect("the script ran");
        let cpu = report.cpu.expect("one pinned thread");
        assert_eq!(args.trim(), format!("--seed 5 --cpu {cpu}"));
    }

    /// A cold run times C candidates after evicting their buffers, and says so in its report; a
    /// Rust candidate, which cannot evict its buffers, is refused by name before anything runs.
    #[test]
    fn cold_runs_time_c_candidates_and_refuse_rust_ones() {
        let cold = BenchConfig { caches: Caches::Cold, ..quick() };
        let prepare: PrepareRustKernel =
            Box::new(|_: &[Buffer]| Ok(Box::new(RustScale { x: vec![0.0; 64], y: vec![0.0; 64] }) as _));
        let rust = Candidate::Rust(RustCandidate { label: "rust-scale".into(), prepare });
        let Some(compiler) = compiler() else { return };
        match run_bench(&compiler, scale_request(vec![c_candidate("morello"), rust]), &cold) {
            Err(MeasureError::InvalidBench { reason }) => {
                assert!(reason.contains("rust-scale") && reason.contains("evict"), "{reason}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        let report = run_bench(&compiler, scale_request(vec![c_candidate("morello")]), &cold).expect("runs");
        assert_eq!(report.caches, Caches::Cold);
        assert_eq!(report.results[0].seconds_per_call.len(), 3);
        assert!(report.results[0].stats.min > 0.0);
    }

    #[test]
    fn several_threads_are_bound_one_to_a_cpu_in_thread_order() {
        let Some(compiler) = compiler() else { return };
        if let Err(reason) = compiler.openmp() {
            println!("skipped: {reason}");
            return;
        }
        let config = BenchConfig { threads: 2, ..quick() };
        let cpus = config.bound_cpus();
        if cpus.len() != 2 {
            println!("skipped: this process may use fewer than 2 CPUs");
            return;
        }
        // The kernel aborts unless each OpenMP thread may run on its CPU of the list alone.
        let kernel = format!(
            "#include <omp.h>\nstatic const int morello_expected[2] = {{{}, {}}};\n\
             void scale(const float *x, float *y) {{\n  int wrong = 0;\n\
             #pragma omp parallel reduction(+ : wrong)\n  {{\n    cpu_set_t set;\n\
             wrong += omp_get_num_threads() != 2 || sched_getaffinity(0, sizeof set, &set) != 0 ||\n\
             CPU_COUNT(&set) != 1 || !CPU_ISSET(morello_expected[omp_get_thread_num()], &set);\n  }}\n\
             if (wrong != 0) abort();\n  for (int i = 0; i < 64; i++) y[i] = 2.0f * x[i];\n}}\n",
            cpus[0], cpus[1]
        );
        let request = || BenchRequest {
            kernel_source: kernel.clone(),
            options: CompileOptions { openmp: OpenMp::Enabled, ..strict() },
            ..scale_request(vec![c_candidate("morello")])
        };
        let report = run_bench(&compiler, request(), &config).expect("each thread on its CPU");
        assert_eq!((report.cpu, report.bound_cpus), (None, cpus));
        // Unpinned, nothing is bound, and the same kernel aborts.
        let unpinned = BenchConfig { pinning: Pinning::Unpinned, ..config };
        match run_bench(&compiler, request(), &unpinned) {
            Err(MeasureError::Codegen(CodegenError::Signalled { termination, .. })) => {
                assert_eq!(termination.signal_name(), Some("SIGABRT"));
            }
            other => panic!("expected the unbound threads to abort, got {other:?}"),
        }
    }

    #[test]
    fn cpu_lists_parse_as_linux_prints_them() {
        assert_eq!(parse_cpu_list(" 0-3,8\n"), [0, 1, 2, 3, 8]);
        assert_eq!(parse_cpu_list("5,1-2,2"), [1, 2, 5]);
        assert_eq!(parse_cpu_list("3-1,x,7"), [7]);
        assert!(parse_cpu_list("").is_empty());
    }

    #[test]
    fn a_crashing_candidate_is_reported_with_its_signal() {
        let Some(compiler) = compiler() else { return };
        let kernel = "#include <signal.h>\nvoid scale(const float *x, float *y) {\n  (void)x; (void)y;\n  raise(SIGSEGV);\n}\n";
        let request =
            BenchRequest { kernel_source: kernel.into(), ..scale_request(vec![c_candidate("morello")]) };
        match run_bench(&compiler, request, &quick()) {
            Err(MeasureError::Codegen(CodegenError::Signalled { termination, .. })) => {
                assert_eq!(termination.signal_name(), Some("SIGSEGV"));
            }
            other => panic!("expected Signalled, got {other:?}"),
        }
    }

    #[test]
    fn bad_configurations_are_refused() {
        let Some(compiler) = compiler() else { return };
        let request = || scale_request(vec![c_candidate("morello")]);
        let zero_samples = BenchConfig { samples: 0, ..quick() };
        assert!(matches!(
            run_bench(&compiler, request(), &zero_samples),
            Err(MeasureError::InvalidBench { .. })
        ));
        let no_candidates = BenchRequest { candidates: vec![], ..request() };
        assert!(matches!(
            run_bench(&compiler, no_candidates, &quick()),
            Err(MeasureError::InvalidBench { .. })
        ));
    }

    #[test]
    fn pinning_defaults_to_one_cpu_for_one_thread_only() {
        assert!(BenchConfig::default().cpu().is_some());
        assert_eq!(BenchConfig { threads: 2, ..BenchConfig::default() }.cpu(), None);
        assert_eq!(
            BenchConfig { pinning: Pinning::Cpu(0), threads: 2, ..BenchConfig::default() }.cpu(),
            Some(0)
        );
        assert_eq!(thread_environment(2)[0], ("OMP_NUM_THREADS".to_string(), "2".to_string()));
        let one = BenchConfig::default();
        let others = [Pinning::Cpu(0), Pinning::Unpinned].map(|pinning| BenchConfig {
            pinning,
            threads: 2,
            ..one.clone()
        });
        assert!(one.bound_cpus().is_empty() && others.iter().all(|c| c.bound_cpus().is_empty()));
        let too_many = BenchConfig { threads: allowed_cpus().len() + 1, ..one };
        assert!(too_many.bound_cpus().is_empty());
    }
}
