//! A BLIS-like hand schedule of a 512^3 f32 matmul, completed by the search, timed beside the
//! searched kernel.
//!
//! ```text
//! cargo run --release -p morello-cli --example blis_schedule -- [--samples N] [--db PATH]
//! ```
//!
//! The schedule is written twice: here with the Rust API (`Schedule::new` and its steps), and in
//! `examples/blis-512.schedule` as text for `morello run --schedule`; the program checks that both
//! build the same tree. It then searches the spec's optimum, emits, verifies (against the
//! reference, so a wrong kernel is never timed) and times both on one pinned core, alternating,
//! and prints their medians and ratio. It needs a host with AVX-512 (the target is x86-avx512
//! with one processor); without `--db` the search's table is in memory only.

#![allow(clippy::print_stdout, reason = "a command-line example prints its report")]

use std::error::Error;

use morello_codegen::{Compiler, host_features};
use morello_core::spec::SpecBuilder;
use morello_core::target::Target;
use morello_measure::{BenchConfig, KernelCandidate, PeakProbe, measure};
use morello_search::db::{OpenTable, TableLocation};
use morello_search::schedule::Schedule;
use morello_search::{ActionConfig, Search};

/// The schedule file this program's API calls must agree with.
const SCHEDULE_FILE: &str = include_str!("../../examples/blis-512.schedule");

fn main() -> Result<(), Box<dyn Error>> {
    let mut samples = 15;
    let mut table = TableLocation::Memory;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--samples" => samples = args.next().ok_or("--samples needs a count")?.parse()?,
            "--db" => table = TableLocation::File(args.next().ok_or("--db needs a path")?.into()),
            other => return Err(format!("unknown argument `{other}` (try --samples N, --db PATH)").into()),
        }
    }
    let target = Target::builtin("x86-avx512", 1)?;
    let host = host_features();
    let missing: Vec<_> = target.isa().iter().filter(|f| !host.contains(f)).collect();
    if !missing.is_empty() {
        println!("skipped: this host cannot run x86-avx512 kernels (it lacks {missing:?})");
        return Ok(());
    }
    let spec = SpecBuilder::matmul(512, 512, 512).build(&target)?;
    let mut table = OpenTable::open(&table, &target, ActionConfig::default())?;
    let search = Search::new(&target).memo(table.memo());

    // The five loops of BLIS (pc, ic, jr, ir around a k loop of rank-1 updates), each block held
    // in the cache it is sized for; the search completes the rest.
    let mut schedule = Schedule::with_search(&spec, search.clone());
    schedule
        .to_accum()?
        .split(64)?
        .move_to(1, "L2", Some("row-major"), None)?
        .tile_out(&[1, 128, 512])?
        .move_to(0, "L2", Some("row-major"), None)?
        .move_to(2, "L2", Some("row-major"), None)?
        .tile_out(&[1, 128, 64])?
        .pack(1, "L1", "[2, 1, 2 p(32)]")?
        .tile_out(&[1, 6, 64])?
        .move_to(0, "L1", Some("row-major"), None)?
        .move_to(2, "VRF", Some("row-major"), Some(16))?
        .split(1)?
        .move_to(1, "VRF", Some("row-major"), Some(16))?
        .tile_out(&[1, 1, 64])?
        .select("BroadcastVecMultAdd")?;
    let hand = schedule.synthesize()?;
    let mut from_file = Schedule::with_search(&spec, search.clone());
    from_file.apply_text(SCHEDULE_FILE)?;
    if from_file.synthesize()? != hand {
        return Err("examples/blis-512.schedule builds another tree than this program's steps".into());
    }
    let searched = search.solve(&spec)?;
    table.save(&mut |lock| println!("waiting for {}", lock.display()))?;
    println!("spec:     {}", spec.display(&target));
    println!("target:   {} (one processor)", target.name());
    println!(
        "model:    hand {} (searched leaves: {}), searched {}",
        hand.cost,
        schedule.report(),
        searched.cost
    );

    let compiler = Compiler::find()?;
    let kernels = [
        KernelCandidate { label: "blis-hand".into(), imp: &hand },
        KernelCandidate { label: "searched".into(), imp: &searched.imp },
    ];
    let config =
        BenchConfig { samples, min_sample_seconds: 0.05, peak: PeakProbe::Skip, ..BenchConfig::default() };
    let report = measure(&compiler, &target, &spec, &kernels, &[], &config)?.report;
    let median =
        |label: &str| report.result(label).map(|r| r.stats.median).ok_or(format!("no result for {label}"));
    let (hand_s, searched_s) = (median("blis-hand")?, median("searched")?);
    let gflops = |s: f64| 2.0 * 512f64.powi(3) / s / 1e9;
    println!("verified: both, against the reference");
    println!("blis-hand median {:>9.1} us  {:>6.1} GFLOP/s", hand_s * 1e6, gflops(hand_s));
    println!("searched  median {:>9.1} us  {:>6.1} GFLOP/s", searched_s * 1e6, gflops(searched_s));
    println!("hand / searched time: {:.3}", hand_s / searched_s);
    Ok(())
}
