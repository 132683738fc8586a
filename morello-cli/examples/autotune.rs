//! An autotuner built on morello's libraries, without the CLI: it opens a memo table, asks the
//! search for the cost model's best candidates of a spec, emits, verifies and times each on this
//! machine, and reports the measured best beside the model's choice.
//!
//! ```text
//! cargo run --release -p morello-cli --example autotune -- [SPEC...] [--k K] [--explore E]
//!     [--seed S] [--target T] [--db PATH] [--samples N]
//! ```
//!
//! The spec is the shorthand `morello search` takes (default `matmul 16x16x16`, which takes a
//! few seconds). The candidates are the model's `--k` best (default 4: the cheapest trees that
//! differ from the best at one node, [`Search::solve_variants`]) and `--explore` more (default 2)
//! drawn at random (seeded by `--seed`, with `rand`) from the next `8 * E` the model ranks lower,
//! so that a model that misranks is caught now and then. `--target` defaults to the best
//! built-in target the host runs; without `--db` the table is in memory only. Every step is a
//! library call:
//!
//! 1. `Target::builtin`, `SpecBuilder::parse(..).build(&target)` (morello-core);
//! 2. `OpenTable::open` and `Search::new(..).memo(..).solve_variants(..)` (morello-search);
//! 3. `OpenTable::save`: keep what the search solved for the next run;
//! 4. `measure` (morello-measure, the library behind `morello bench`): emit each candidate as C,
//!    compile them into one program, run it on seeded inputs and check every output against the
//!    reference (a wrong kernel is never timed), then time them side by side, alternating, on one
//!    pinned core;
//! 5. `Ranking::of` and `first_difference` (morello-measure): how the timings agree with the
//!    model's order, and where each candidate differs from the model's choice.

#![allow(clippy::print_stdout, reason = "a command-line example prints its report")]

use std::error::Error;

use morello_codegen::{Compiler, host_features};
use morello_core::spec::SpecBuilder;
use morello_core::target::{IsaFeature, Target};
use morello_measure::ranking::{Ranking, first_difference};
use morello_measure::{BenchConfig, KernelCandidate, PeakProbe, measure};
use morello_search::db::{OpenTable, TableLocation};
use morello_search::{ActionConfig, Search, Solution, VariantCosts};
use rand::SeedableRng;
use rand::rngs::StdRng;

/// What the command line asks for.
struct Request {
    spec: String,
    k: usize,
    explore: usize,
    seed: u64,
    target: Option<String>,
    table: TableLocation,
    samples: usize,
}

fn parse_args() -> Result<Request, Box<dyn Error>> {
    let mut request = Request {
        spec: String::new(),
        k: 4,
        explore: 2,
        seed: 1,
        target: None,
        table: TableLocation::Memory,
        samples: 5,
    };
    let mut words = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--k" => request.k = value()?.parse()?,
            "--explore" => request.explore = value()?.parse()?,
            "--seed" => request.seed = value()?.parse()?,
            "--target" => request.target = Some(value()?),
            "--db" => request.table = TableLocation::File(value()?.into()),
            "--samples" => request.samples = value()?.parse()?,
            _ => words.push(arg),
        }
    }
    request.spec = if words.is_empty() { "matmul 16x16x16".to_string() } else { words.join(" ") };
    Ok(request)
}

/// The widest built-in x86 target whose instructions this host runs.
fn host_target() -> &'static str {
    let host = host_features();
    let has = |features: &[IsaFeature]| features.iter().all(|f| host.contains(f));
    if has(&[IsaFeature::Avx512f, IsaFeature::Avx512bw, IsaFeature::Avx512dq, IsaFeature::Avx512vl]) {
        "x86-avx512"
    } else if has(&[IsaFeature::Avx2, IsaFeature::Fma]) {
        "x86-avx2"
    } else {
        "x86"
    }
}

/// The model's `k` best of `ranked` (cheapest first), then `explore` of the rest at random,
/// in the model's order.
fn pick(mut ranked: Vec<Solution>, k: usize, explore: usize, seed: u64) -> Vec<Solution> {
    let rest = ranked.split_off(k.min(ranked.len()));
    let mut drawn =
        rand::seq::index::sample(&mut StdRng::seed_from_u64(seed), rest.len(), explore.min(rest.len()))
            .into_vec();
    drawn.sort_unstable();
    ranked.extend(drawn.into_iter().map(|i| rest[i].clone()));
    ranked
}

fn main() -> Result<(), Box<dyn Error>> {
    let request = parse_args()?;
    let target = Target::builtin(request.target.as_deref().unwrap_or_else(|| host_target()), 1)?;
    let spec = SpecBuilder::parse(&request.spec)?.build(&target)?;
    println!("spec:    {}", spec.display(&target));
    println!("target:  {}", target.name());

    // The model's candidates, from a table that later runs reuse.
    let mut table = OpenTable::open(&request.table, &target, ActionConfig::default())?;
    let search = Search::new(&target).memo(table.memo());
    let k = request.k.max(1);
    let ranked = search.solve_variants(&spec, k + 8 * request.explore, VariantCosts::Distinct)?;
    table.save(&mut |lock| println!("waiting for {}", lock.display()))?;
    println!("model:   {} candidates ranked, {}", ranked.len(), ranked[0].report);
    let candidates = pick(ranked, k, request.explore, request.seed);

    // Emit, build and verify every candidate in one program (a wrong kernel is never timed), then
    // time them side by side.
    let compiler = Compiler::find()?;
    let labels: Vec<String> = (0..candidates.len())
        .map(|i| if i < k { format!("model{i}") } else { format!("explore{}", i - k) })
        .collect();
    let kernels: Vec<KernelCandidate<'_>> = labels
        .iter()
        .zip(&candidates)
        .map(|(label, candidate)| KernelCandidate { label: label.clone(), imp: &candidate.imp })
        .collect();
    let config = BenchConfig {
        samples: request.samples,
        min_sample_seconds: 0.01,
        peak: PeakProbe::Skip,
        ..BenchConfig::default()
    };
    let report = measure(&compiler, &target, &spec, &kernels, &[], &config)?.report;

    println!(
        "\n{:<11} {:>10} {:>14}  where it differs from the model's choice",
        "candidate", "model cost", "median (ns)"
    );
    let mut timed = Vec::new();
    let mut measured_best: Option<(usize, f64)> = None;
    for (i, (label, candidate)) in labels.iter().zip(&candidates).enumerate() {
        let result = report.result(label).ok_or_else(|| format!("no result for {label}"))?;
        timed.push((candidate.cost, result));
        let median = result.stats.median;
        if measured_best.is_none_or(|(_, best)| median < best) {
            measured_best = Some((i, median));
        }
        let differs =
            first_difference(&candidates[0].imp, &candidate.imp, &target).unwrap_or_else(|| "-".into());
        println!("{label:<11} {:>10} {:>14.1}  {differs}", candidate.cost, median * 1e9);
    }
    let (best, median) = measured_best.ok_or("no candidate was timed")?;
    let model = report.result(&labels[0]).map_or(f64::NAN, |r| r.stats.median);
    println!("\nmodel's choice:  {} ({:.1} ns)", labels[0], model * 1e9);
    println!(
        "measured best:   {} ({:.1} ns, {:.2}x the model's choice)",
        labels[best],
        median * 1e9,
        model / median
    );
    let ranking = Ranking::of(&timed, config.seed);
    match ranking.spearman {
        Some(rho) => println!("Spearman rank correlation of model cost and time: {rho:.2}"),
        None => println!("Spearman rank correlation of model cost and time: undefined"),
    }
    Ok(())
}
