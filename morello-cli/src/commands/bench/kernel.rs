//! `morello bench SPEC`: the best kernel for a spec (or, with `--top-k K`, the model's K best
//! candidates) emitted, verified and timed beside the baselines in one run.
//!
//! With `--top-k`, the candidates are the best implementation and its cheapest variants that take
//! another action at one node (`Search::solve_variants`): by default one per predicted cost (the K
//! lowest costs), else (`--candidates all-costs`) ties included; of variants with the same C text
//! only the cheapest is kept, and each is predicted at least `--min-gap` percent (default 2)
//! costlier than the one ranked before it, so the ranking spans what a timer can tell apart. The
//! report adds each one's predicted cost, the regret (the model's pick's median time over the
//! fastest candidate's), the Spearman rank correlation between predicted cost and measured median
//! time, each with a bootstrap interval over the run's rounds, and how many of the
//! pairs the timer tells apart (samples that do not overlap) the model orders as measured. With
//! `--caches cold` the calls start from main memory, where the model's specs place the operands;
//! warm, a note says when the operands fit in a cache together (`warm_residency_note`).
//!
//! With `--versus-target T` (repeatable), the best kernel for the same spec on target `T` is timed
//! in the same run, labelled `morello-vs-T` (`T`'s file stem): a side-by-side test of a change to
//! a target's constants, geometry or packing. `T` must have `--target`'s levels (names, kinds,
//! vector widths) and ISA, so that its kernel runs on the same buffers and emits under the same
//! target. With `--schedule FILE`, the implementation a schedule file gives (completed by the
//! search) is timed beside the searched one, labelled `morello-schedule`.

use anyhow::{Result, anyhow};
use morello_core::spec::LogicalSpec;
use morello_core::target::{LevelKind, Target};
use morello_measure::compare::{
    is_memory_bound, peak_applies, same_c, same_levels_and_isa, speedup, unfused_epilogue,
};
use morello_measure::peak::PeakVariant;
use morello_measure::ranking::{Ranked, Ranking, first_difference};
use morello_measure::report::{KernelReport, ONE_THREAD_LABEL, TimedKernels, measure_peak_once};
use morello_measure::{BaselineKind, Caches, KernelCandidate};
use morello_search::{Solution, VariantCosts};

use super::busy::{CpuTimes, busy_since};
use super::measure::{MeasureArgs, expected_seconds, measure_error, peak_line, protocol_line, spinner};
use super::text::{Align, TextTable, duration, rate, ratio};
use crate::commands::search::{ScheduleArgs, SearchOptions, Session};
use crate::database::DbArgs;
use crate::failure::bad_input;
use crate::memory::Bytes;
use crate::output;
use crate::spec_args::{Resolved, SpecArgs, resolve};

/// The label of `--schedule`'s kernel.
const SCHEDULE_LABEL: &str = "morello-schedule";

/// Examples shown after `morello bench --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello bench matmul 64x64x64 --target x86
  morello bench matmul 256x256x256 --baseline openblas,libxsmm --json
  morello bench matmul 512x512x512 --threads 2
  morello bench matmul 512x512x512 --threads 2 --scaling   (also the one-thread kernel: the speedup of two)
  morello bench --top-k 10 matmul 256x256x256   (the model's 10 best, 2% apart; its pick's regret, Spearman)
  morello bench matmul 256x256x256 --caches cold   (each call timed alone, its operands in main memory)
  morello bench matmul 512x512x512 --versus-target nopack.toml   (also the kernel a target file picks)
  morello bench matmul 1x2048x16384 --samples 9 --min-sample-seconds 0.5
  morello bench matmul 8x8x8 --samples 2 --min-sample-seconds 0.01   (a quick check: noisy figures)
  morello bench matmul 256x256x256 --epilogue bias,relu --unfused --baseline onednn
  morello bench conv 1x56x56x64 3x3x64x64 --layout nhwc --pad same --baseline onednn
  morello bench softmax 32x1024 --baseline onednn,xnnpack

Baselines: naive (an -O3 -march=native loop), openblas, blis, libxsmm (apt-get install libopenblas-dev
libblis-dev libxsmm-dev), mkl (pip install mkl mkl-devel into /opt/mklvenv, or MORELLO_MKL_DIR),
onednn (apt-get install libdnnl-dev, or MORELLO_ONEDNN_DIR), xnnpack (apt-get install libxnnpack-dev
libpthreadpool-dev) and gemm (the matrixmultiply crate). They compute row-major out = lhs * rhs in f32
(naive also in u32); for other specs the morello kernel is timed alone, and the report says why. Each
is run once on the benchmark's inputs and checked against a reference before it is timed; one that is
not installed, or disagrees, is skipped with a one-line reason.";

/// Which implementations `--top-k` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Candidates {
    /// The best implementation at each of the K lowest predicted costs: a ranking the Spearman
    /// correlation can test.
    DistinctCosts,
    /// The K cheapest implementations, ties in predicted cost included: shows what the model
    /// cannot tell apart.
    AllCosts,
}

/// Arguments of `morello bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    spec: SpecArgs,
    #[command(flatten)]
    measure: MeasureArgs,
    /// Time the K best implementations by the cost model (the best and its cheapest variants with
    /// another action at one node, distinct C only) and report the regret (the best's time over
    /// the fastest's), the Spearman rank correlation of predicted cost and measured time, and how
    /// many of the pairs whose samples do not overlap the model orders as measured.
    #[arg(long, value_name = "K", value_parser = crate::numbers::parse_count)]
    top_k: Option<usize>,
    /// With --top-k: which implementations to time.
    #[arg(long, value_enum, default_value = "distinct-costs", requires = "top_k")]
    candidates: Candidates,
    /// With --top-k: time only candidates predicted at least PERCENT costlier than the one ranked
    /// before them. Variants a fraction of a percent apart are common (a loop order, a tile one
    /// size smaller) and their order is lost in a shared machine's noise of a few percent, so by
    /// default the ranking spans differences a timer can see; 0 times the cheapest.
    #[arg(long, value_name = "PERCENT", default_value = "2", requires = "top_k", value_parser = parse_gap)]
    min_gap: f64,
    /// Print one JSON object: `{"peak_gflops": x, "results": [{"name": ..., "gflops": x,
    /// "seconds_per_call": x, ...}, ...], ...}`.
    #[arg(long)]
    json: bool,
    /// Also print each timed kernel's implementation tree.
    #[arg(long)]
    impls: bool,
    /// For a matmul with --epilogue: also time the unfused plan (the best matmul, then the best
    /// separate pass of the epilogue over the output), labelled `morello-unfused`.
    #[arg(long)]
    unfused: bool,
    /// Also time the best kernel for the same spec on this target (a built-in name or a target
    /// file with --target's levels and ISA), labelled `morello-vs-TARGET` (a file's stem);
    /// repeatable. Its table is the default one for that target (none with --no-db).
    #[arg(long, value_name = "TARGET", conflicts_with = "top_k")]
    versus_target: Vec<String>,
    /// With --threads N (N > 1): also time the best one-thread kernel (searched with
    /// --processors 1, in that target's default table) in the same run, labelled
    /// `morello-1-thread`; morello's speedup over it is the kernel's scaling.
    #[arg(long, conflicts_with = "top_k")]
    scaling: bool,
    /// Also time the implementation a schedule file gives (its steps, completed by the search;
    /// docs/schedules.md), labelled `morello-schedule`.
    #[arg(long, value_name = "FILE", conflicts_with = "top_k")]
    schedule: Option<std::path::PathBuf>,
    #[command(flatten)]
    options: SearchOptions,
    #[command(flatten)]
    db: DbArgs,
}

/// Runs `morello bench`.
pub fn run(args: &Args) -> Result<()> {
    let config = args.measure.config()?;
    // The kernel runs on `--threads` threads: model that many processors unless told otherwise.
    let mut spec_args = args.spec.clone();
    spec_args.processors = spec_args.processors.or(u32::try_from(config.threads).ok());
    let resolved = resolve(&spec_args)?;
    let compiler = crate::spec_args::timing_compiler(&resolved.target, "bench")?;
    crate::memory::check_runnable(&resolved, "bench")?;
    if args.top_k == Some(0) {
        return Err(bad_input("--top-k must be at least 1"));
    }
    let default_baselines: &[BaselineKind] = if args.top_k.is_some() { &[] } else { &BaselineKind::ALL };
    let baselines = args.measure.baselines(default_baselines)?;
    let scheduled = match (ScheduleArgs { schedule: args.schedule.clone() }).read()? {
        Some((text, path)) => {
            let session = Session::start(&resolved, &args.options, false)?;
            Some(session.solve_scheduled(&resolved, &args.db, &text, path)?)
        }
        None => None,
    };
    let session = Session::start(&resolved, &args.options, false)?;
    let solutions = match args.top_k {
        // More than K: variants that emit the same C as a cheaper one are dropped.
        Some(k) => {
            let costs = match args.candidates {
                Candidates::DistinctCosts => VariantCosts::Distinct,
                Candidates::AllCosts => VariantCosts::All,
            };
            solve_top_k(session, &resolved, &args.db, k, costs, gap(args))?
        }
        None if args.unfused => {
            let target = &resolved.target;
            if resolved.spec.split_epilogue(target).is_none() {
                return Err(bad_input("--unfused applies only to a matmul with --epilogue"));
            }
            session.solve_with_table_by(&resolved, &args.db, |search, spec| {
                let best = search.solve(spec)?;
                let Some(Ok((matmul, epilogue))) = spec.split_epilogue(target) else { return Ok(vec![best]) };
                let (matmul, epilogue) = (search.solve(&matmul)?, search.solve(&epilogue)?);
                let cost = matmul.cost.saturating_add(epilogue.cost);
                let Some(imp) = unfused_epilogue(spec, matmul.imp, epilogue.imp, target) else {
                    return Ok(vec![best]);
                };
                Ok(vec![best, Solution { imp, cost, report: matmul.report }])
            })?
        }
        None => session.solve_with_table(&resolved, &args.db, None)?,
    };
    crate::signals::check()?;
    let target = &resolved.target;
    let versus = args
        .versus_target
        .iter()
        .map(|name| versus_solution(name, &spec_args, &resolved, args))
        .collect::<Result<Vec<_>>>()?;
    let one_thread = if args.scaling {
        if config.threads < 2 {
            return Err(bad_input(
                "--scaling compares --threads N with one thread: give --threads 2 or more",
            ));
        }
        let mut one = spec_args.clone();
        one.processors = Some(1);
        let one = resolve(&one)?;
        Some(solve_elsewhere(&one, &resolved, args).map_err(|e| e.context("--scaling"))?)
    } else {
        None
    };
    let mut chosen = choose(&solutions, target, args.top_k, gap(args))?;
    let mut labels: Vec<String> = match args.top_k {
        None => vec!["morello".to_string()],
        Some(_) => (1..=chosen.kernels.len()).map(|rank| format!("morello-{rank}")).collect(),
    };
    if args.unfused && args.top_k.is_none() {
        if let Some(unfused) = solutions.get(1) {
            chosen.kernels.push(Ranked { imp: &unfused.imp, cost: unfused.cost });
            labels.push("morello-unfused".to_string());
        }
    }
    let mut notes = Vec::new();
    if args.top_k.is_some() && config.caches == Caches::Warm {
        notes.extend(warm_residency_note(&resolved.spec, target));
    }
    for (name, solution) in &versus {
        let label = format!("morello-vs-{name}");
        if same_c(&solution.imp, chosen.kernels[0].imp, target)? {
            notes.push(format!(
                "{label} emits the same C as morello: the difference between their times is this run's noise"
            ));
        }
        if labels.contains(&label) {
            return Err(bad_input(format!("two --versus-target files are named {name}: rename one")));
        }
        chosen.kernels.push(Ranked { imp: &solution.imp, cost: solution.cost });
        labels.push(label);
    }
    if let Some(solution) = &scheduled {
        if same_c(&solution.imp, chosen.kernels[0].imp, target)? {
            notes.push(format!(
                "{SCHEDULE_LABEL} emits the same C as morello: the difference between their times is this run's noise"
            ));
        }
        chosen.kernels.push(Ranked { imp: &solution.imp, cost: solution.cost });
        labels.push(SCHEDULE_LABEL.to_string());
    }
    if let Some(solution) = &one_thread {
        if same_c(&solution.imp, chosen.kernels[0].imp, target)? {
            notes.push(format!(
                "{ONE_THREAD_LABEL} emits the same C as morello (the spec is too small to split between \
                 threads): the difference between their times is this run's noise"
            ));
        }
        chosen.kernels.push(Ranked { imp: &solution.imp, cost: solution.cost });
        labels.push(ONE_THREAD_LABEL.to_string());
    }
    let kernels: Vec<KernelCandidate<'_>> = chosen
        .kernels
        .iter()
        .zip(&labels)
        .map(|(k, label)| KernelCandidate { label: label.clone(), imp: k.imp })
        .collect();

    let bar = spinner(args.options.progress, args.options.quiet, "measuring the peak".into());
    let before = CpuTimes::now();
    let peak = measure_peak_once(&compiler, &config, PeakVariant::for_spec(resolved.spec.logical(), target));
    let candidates = kernels.len() + baselines.len();
    bar.set_message(format!(
        "verifying and timing {candidates} candidates (about {:.0} s)",
        expected_seconds(candidates, &config)
    ));
    let measured = morello_measure::measure(&compiler, target, &resolved.spec, &kernels, &baselines, &config);
    bar.finish_and_clear();
    let measured = measured.map_err(measure_error(target))?;
    let busy = busy_since(before);

    let report = Report(KernelReport {
        spec_text: resolved.spec.display(target).to_string(),
        target,
        compiler: &compiler,
        config: &config,
        peak: &peak,
        measured: &measured,
        kernels: &chosen,
        labels: &labels,
        top_k: args.top_k.is_some(),
        memory_bound: is_memory_bound(&resolved.spec),
        peak_applies: peak_applies(&resolved.spec, target),
        warnings: args.measure.noise_note().into_iter().chain(busy).collect(),
        notes,
    });
    if args.json { output::print_json(&report.json()) } else { output::print(&report.text(args.impls)) }
}

/// The best implementation and enough of its variants for [`choose`] to find `k` candidates:
/// more than `k`, since variants that emit the same C as a cheaper one are dropped, and with a
/// `gap` many more, since most of the cheapest are then skipped.
pub(super) fn solve_top_k(
    session: Session<'_>,
    resolved: &Resolved,
    db: &DbArgs,
    k: usize,
    costs: VariantCosts,
    gap: f64,
) -> Result<Vec<Solution>> {
    let wanted = if gap > 0.0 {
        k.saturating_mul(40).saturating_add(200)
    } else {
        k.saturating_mul(4).saturating_add(8)
    };
    session.solve_with_table_by(resolved, db, |search, spec| search.solve_variants(spec, wanted, costs))
}

/// For `--top-k` with warm calls: a note when the spec places an operand in main memory but all of
/// them fit in a cache together, the smallest that holds them. Back-to-back calls then find them
/// there, while the model prices every read from main memory that the spec implies, so trees that
/// differ in how often they read it run alike and are priced apart (`docs/benchmarking.md`,
/// "Top-k"). `None` otherwise.
fn warm_residency_note(spec: &LogicalSpec, target: &Target) -> Option<String> {
    let memory = spec.operands.iter().find(|o| target.level(o.level).kind == LevelKind::Memory)?;
    let bytes = spec.operands.iter().map(|o| o.bytes()).fold(0, u64::saturating_add);
    let cache = target
        .levels()
        .iter()
        .filter(|l| l.kind == LevelKind::Cache && l.capacity >= bytes)
        .min_by_key(|l| l.capacity)?;
    let (all, size, cache, memory) =
        (Bytes(bytes), Bytes(cache.capacity), &cache.name, &target.level(memory.level).name);
    Some(format!(
        "the operands ({all} in all) fit in {cache} ({size}): warm calls find them there, while the model \
         prices the reads from {memory} the spec implies; --caches cold times calls that start from \
         {memory}, as the model prices them"
    ))
}

/// The best kernel for `resolved`'s spec on target `name` (`--versus-target`), searched with the
/// default table of that target (or none with `--no-db`), with the name it is labelled by.
fn versus_solution(
    name: &str,
    spec_args: &SpecArgs,
    resolved: &Resolved,
    args: &Args,
) -> Result<(String, Solution)> {
    let mut other_args = spec_args.clone();
    other_args.target = name.to_string();
    let other = resolve(&other_args).map_err(|e| e.context(format!("--versus-target {name}")))?;
    let (mine, theirs) = (&resolved.target, &other.target);
    if !same_levels_and_isa(mine, theirs) {
        return Err(bad_input(format!(
            "--versus-target {name}: its levels ({}) or ISA differ from those of --target {} ({}), so its \
             kernel cannot be timed beside it; compare targets with the same levels, such as an \
             edited copy of `morello kernels --target {} --as-file`",
            theirs.level_names().join(", "),
            mine.name(),
            mine.level_names().join(", "),
            mine.name(),
        )));
    }
    let solution =
        solve_elsewhere(&other, resolved, args).map_err(|e| e.context(format!("--versus-target {name}")))?;
    let stem = std::path::Path::new(name).file_stem().and_then(|s| s.to_str()).unwrap_or(name);
    let label =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || "_.+-".contains(c) { c } else { '_' }).collect();
    Ok((label, solution))
}

/// The best kernel for `other` (`resolved`'s spec on another target, or on the same one with
/// other processors), searched with that target's default table (or none with `--no-db`).
///
/// # Errors
/// Search failures, and a spec that resolves to another one there.
fn solve_elsewhere(other: &Resolved, resolved: &Resolved, args: &Args) -> Result<Solution> {
    let db = DbArgs { db: None, no_db: args.db.no_db };
    let session = Session::start(other, &args.options, false)?;
    let solution = session
        .solve_with_table(other, &db, None)?
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("the search returned no implementation"))?;
    if solution.imp.spec != resolved.spec {
        return Err(bad_input(format!(
            "the spec resolves to {} there, not {}",
            other.spec.display(&other.target),
            resolved.spec.display(&resolved.target)
        )));
    }
    Ok(solution)
}

/// What the report says about OpenMP's wait policy (`OMP_WAIT_POLICY`, if set) for a kernel with
/// parallel loops: what the policy costs, and when the other is better.
fn wait_policy_line(policy: Option<&str>) -> Option<&'static str> {
    match policy.map(str::to_ascii_lowercase).as_deref() {
        None => Some(
            "threads:    OMP_WAIT_POLICY is unset, so waiting OpenMP threads spin: each parallel region starts \
             quickly, but on a busy machine spinning threads can slow parallel kernels many times over \
             (OMP_WAIT_POLICY=passive avoids that, at the cost of a wake-up per region)\n",
        ),
        Some("passive") => Some(
            "threads:    OMP_WAIT_POLICY=passive: every parallel region wakes the waiting threads (about 100 us \
             on a 2-vCPU virtual machine, less on bare metal), so a kernel faster than that runs faster on \
             one thread or with the default policy (see --scaling)\n",
        ),
        Some(_) => None,
    }
}

/// `--min-gap` as a fraction (0 without `--top-k`).
fn gap(args: &Args) -> f64 {
    if args.top_k.is_some() { args.min_gap / 100.0 } else { 0.0 }
}

/// Parses `--min-gap`: a percentage from 0 to 100.
pub(super) fn parse_gap(text: &str) -> std::result::Result<f64, String> {
    let value: f64 = text.trim_end_matches('%').parse().map_err(|_| format!("`{text}` is not a number"))?;
    if (0.0..=100.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is not a percentage from 0 to 100"))
    }
}

/// The best solution, and with `--top-k K` up to K-1 more whose C differs from every cheaper one,
/// each predicted at least `gap` (a fraction) costlier than the one chosen before it
/// ([`morello_measure::ranking::choose`]).
fn choose<'s>(
    solutions: &'s [Solution],
    target: &Target,
    top_k: Option<usize>,
    gap: f64,
) -> Result<TimedKernels<'s>> {
    if solutions.is_empty() {
        return Err(anyhow!("the search returned no implementation"));
    }
    let ranked: Vec<Ranked<'_>> = solutions.iter().map(|s| Ranked { imp: &s.imp, cost: s.cost }).collect();
    let picked = morello_measure::ranking::choose(&ranked, target, top_k, gap)?;
    Ok(TimedKernels {
        kernels: picked.indices.iter().map(|&i| ranked[i]).collect(),
        duplicates: picked.duplicates,
        unemittable: picked.unemittable,
        within_gap: picked.within_gap,
    })
}

/// The pairs the timer told apart and the model did not order so, at most [`MISORDERED_SHOWN`] of
/// them, each kernel's predicted cost and median time over the first kernel's:
/// `  morello-5 (cost 1.18x, time 1.01x) ran faster than morello-4 (cost 1.09x, time 1.12x)`.
fn misordered_text(misordered: &[(usize, usize)], kernels: &[(&str, u64, f64)]) -> String {
    let Some(&(_, best_cost, best_time)) = kernels.first() else { return String::new() };
    if misordered.is_empty() {
        return String::new();
    }
    let describe = |i: usize| {
        let (label, cost, time) = kernels[i];
        format!("{label} (cost {:.2}x, time {:.2}x)", cost as f64 / best_cost as f64, time / best_time)
    };
    let mut text = "where it does not (cost and time over the first's):\n".to_string();
    for &(faster, slower) in misordered.iter().take(MISORDERED_SHOWN) {
        text += &format!("  {} ran faster than {}\n", describe(faster), describe(slower));
    }
    if misordered.len() > MISORDERED_SHOWN {
        text += &format!("  ... and {} more (all in the JSON)\n", misordered.len() - MISORDERED_SHOWN);
    }
    text
}

/// How many misordered pairs the text report lists.
const MISORDERED_SHOWN: usize = 10;

/// Everything the report prints: the library's report, which also writes the JSON, and the text.
struct Report<'a>(KernelReport<'a>);

impl<'a> std::ops::Deref for Report<'a> {
    type Target = KernelReport<'a>;

    fn deref(&self) -> &KernelReport<'a> {
        &self.0
    }
}

impl Report<'_> {
    fn text(&self, impls: bool) -> String {
        let mut text = String::new();
        let best = self.kernels.kernels[0];
        text += &format!("spec:       {}\n", self.spec_text);
        text += &format!("target:     {} (cost {})\n", self.target.name(), best.cost);
        for (label, solution) in self.labels.iter().zip(&self.kernels.kernels) {
            if let Some(name) = label.strip_prefix("morello-vs-") {
                text += &format!("versus:     {name} (cost {}), timed as {label}\n", solution.cost);
            }
            if label == ONE_THREAD_LABEL {
                let speedup =
                    self.scaling().map_or_else(|| "not measured".to_string(), |s| format!("{s:.2}x"));
                text += &format!(
                    "scaling:    the best one-thread kernel (cost {}), timed as {label}; morello on {} threads runs \
                     {speedup} its speed\n",
                    solution.cost, self.config.threads
                );
            }
        }
        text += &format!("compiler:   {}\n", self.compiler);
        text += &self.verification_line();
        text += &format!("peak:       {}\n", peak_line(self.peak));
        text += &format!("timing:     {}\n", protocol_line(self.config, &self.measured.report.bound_cpus));
        for warning in &self.warnings {
            text += &format!("warning:    {warning}\n");
        }
        if self.config.threads > 1 && !self.measured.parallel_loops {
            text += "threads:    the kernel has no parallel loop, so it runs on one thread\n";
        }
        if self.config.threads > 1 && self.measured.openmp {
            if let Some(line) = wait_policy_line(std::env::var("OMP_WAIT_POLICY").ok().as_deref()) {
                text += line;
            }
        }
        if let Some(reason) = &self.measured.not_comparable {
            text += &format!("baselines:  none comparable: {reason}; the morello kernel is timed alone\n");
        }
        for s in &self.measured.skipped {
            text += &format!("skipped:    {}\n", s.reason);
        }
        for note in self.measured.report.notes.iter().chain(&self.notes) {
            text += &format!("note:       {note}\n");
        }
        text.push('\n');
        text += &self.table();
        if self.measured.report.results.iter().any(|r| !self.is_kernel(&r.label))
            || (self.labels.len() > 1 && !self.top_k)
        {
            text += "\nmorello vs: how many times faster morello";
            text += if self.top_k { "-1" } else { "" };
            text += if self.top_k { " is than each baseline" } else { " is than each other candidate" };
            text += " (its median time / morello's)\n";
        }
        if self.top_k {
            text += &self.top_k_text();
        }
        if impls {
            for ((rank, solution, _), label) in self.kernel_rows().zip(self.labels) {
                text += &format!("\n{label} (rank {rank}, cost {}):\n", solution.cost);
                text += &solution.imp.render(self.target);
            }
        }
        text
    }

    fn verification_line(&self) -> String {
        let v = &self.measured.verifications;
        let worst = v.iter().map(|v| v.max_abs_error).fold(0.0, f64::max);
        let error = if worst == 0.0 { "0".to_string() } else { format!("{worst:.2e}") };
        match v.first() {
            Some(first) if v.len() == 1 => format!(
                "verified:   {} elements against {} (seed {}), max abs error {error}\n",
                first.elements, first.reference, first.seed
            ),
            Some(first) => format!(
                "verified:   all {} kernels, {} elements each against {} (seed {}), max abs error {error}\n",
                v.len(),
                first.elements,
                first.reference,
                first.seed
            ),
            None => String::new(),
        }
    }

    fn table(&self) -> String {
        let mut columns: Vec<(&str, Align)> = Vec::new();
        if self.top_k {
            columns.extend([("rank", Align::Right), ("name", Align::Left), ("predicted cost", Align::Right)]);
        } else {
            columns.push(("name", Align::Left));
        }
        columns.extend([
            ("time/call", Align::Right),
            ("min-max", Align::Right),
            ("IQR", Align::Right),
            (self.rate_unit(), Align::Right),
        ]);
        if self.memory_bound {
            columns.push(("GB/s", Align::Right));
        }
        if self.peak_applies {
            columns.push(("% of peak", Align::Right));
        }
        columns.push(("morello vs", Align::Right));
        let mut table = TextTable::new(&columns);
        let reference = self.reference();
        for result in &self.measured.report.results {
            let rank = self.labels.iter().position(|l| *l == result.label);
            let mut cells = Vec::new();
            if self.top_k {
                cells.push(rank.map_or_else(|| "-".to_string(), |i| (i + 1).to_string()));
                cells.push(result.label.clone());
                cells
                    .push(rank.map_or_else(|| "-".to_string(), |i| self.kernels.kernels[i].cost.to_string()));
            } else {
                cells.push(result.label.clone());
            }
            let s = &result.stats;
            cells.push(duration(s.median));
            cells.push(format!("{}-{}", duration(s.min), duration(s.max)));
            cells.push(format!("{:.1}%", 100.0 * s.relative_iqr()));
            cells.push(rate(result.gflops));
            if self.memory_bound {
                cells.push(rate(result.gbytes_per_second));
            }
            if self.peak_applies {
                cells.push(self.percent(result).map_or_else(|| "-".to_string(), |p| format!("{p:.1}%")));
            }
            let versus =
                if self.is_compared(rank) { reference.and_then(|r| speedup(r, result)) } else { None };
            cells.push(ratio(versus));
            table.row(cells);
        }
        table.render()
    }

    fn regret_text(&self, ranking: &Ranking, kernels: &[(&str, u64, f64)]) -> String {
        let Some((regret, fastest)) = self.regret(ranking, kernels) else {
            return "\nregret: undefined (the model's pick was not timed, or a time was not positive)\n"
                .into();
        };
        let percent = |ratio: f64| 100.0 * (ratio - 1.0);
        let interval = regret.interval.map_or_else(
            || "no interval: one round".to_string(),
            |(low, high)| format!("interval {:.1}-{:.1}%", percent(low), percent(high)),
        );
        let rank = self.labels.iter().position(|l| l == fastest).map_or(0, |i| i + 1);
        format!(
            "\nregret: {:.1}% ({interval}): the model's pick vs the fastest of {} candidates, #{rank} \
             ({fastest})\n",
            percent(regret.ratio),
            kernels.len()
        )
    }

    fn top_k_text(&self) -> String {
        let mut text = String::new();
        let n = self.kernels.kernels.len();
        let (ranking, kernels) = self.ranking();
        text += &self.regret_text(&ranking, &kernels);
        text += &match ranking.spearman {
            Some(rho) => format!(
                "Spearman rank correlation of predicted cost and measured time over {n} kernels: {rho:.2}{}\n\
                 (1: the model orders them as measured; 0: unrelated; -1: reversed)\n",
                ranking.interval.map_or(String::new(), |(low, high)| format!(
                    " (90% of resamples of the {} rounds: {low:.2} to {high:.2})",
                    self.config.samples
                ))
            ),
            None => format!(
                "Spearman rank correlation over {n} kernels: undefined (fewer than two kernels, or all \
                 predicted costs or all times equal)\n"
            ),
        };
        let apart = ranking.apart;
        text += &format!(
            "pairs the timer tells apart (no overlap of their min-max): {} of {}; the model orders {} of them \
             as measured\n",
            apart.apart, apart.pairs, apart.ordered
        );
        text += &misordered_text(&apart.misordered, &kernels);
        let best = &self.kernels.kernels[0].imp;
        let differences: Vec<String> = self
            .kernel_rows()
            .skip(1)
            .zip(self.labels.iter().skip(1))
            .filter_map(|((_, s, _), label)| {
                Some(format!("  {label}: {}\n", first_difference(best, s.imp, self.target)?))
            })
            .collect();
        if !differences.is_empty() {
            text += "\nhow each differs from morello-1:\n";
            text += &differences.concat();
        }
        let TimedKernels { duplicates, unemittable, within_gap, .. } = self.kernels;
        if duplicates + unemittable + within_gap > 0 {
            text += &format!(
                "\nleft out: {duplicates} variants whose C equals a cheaper one's, {unemittable} the emitter \
                 cannot express, {within_gap} predicted within --min-gap of the one ranked before them\n"
            );
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::{MISORDERED_SHOWN, misordered_text, wait_policy_line};

    #[test]
    fn misordered_pairs_are_listed_against_the_first_kernel() {
        let kernels = [("morello-1", 100, 2.0), ("morello-2", 110, 2.4), ("morello-3", 150, 2.1)];
        assert_eq!(misordered_text(&[], &kernels), "");
        assert_eq!(
            misordered_text(&[(2, 1)], &kernels),
            "where it does not (cost and time over the first's):\n  morello-3 (cost 1.50x, time 1.05x) ran \
             faster than morello-2 (cost 1.10x, time 1.20x)\n"
        );
        let many = vec![(2, 1); MISORDERED_SHOWN + 2];
        assert!(misordered_text(&many, &kernels).ends_with("  ... and 2 more (all in the JSON)\n"));
    }

    #[test]
    fn the_report_says_what_each_wait_policy_costs() {
        let unset = wait_policy_line(None).unwrap_or_default();
        assert!(
            unset.starts_with("threads:    OMP_WAIT_POLICY is unset, so waiting OpenMP threads spin"),
            "{unset}"
        );
        for passive in ["passive", "PASSIVE"] {
            let line = wait_policy_line(Some(passive)).unwrap_or_default();
            assert!(line.contains("every parallel region wakes the waiting threads"), "{line}");
        }
        assert_eq!(wait_policy_line(Some("active")), None);
    }
}
