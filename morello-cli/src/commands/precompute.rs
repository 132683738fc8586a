//! `morello precompute matmul --up-to N`: fill a table with every power-of-two matmul up to N.
//!
//! ```text
//! goals    every M x K x N with M, K, N in {1, 2, 4, ..., N}, batch 1, row-major in the home level
//! order    stages by log2(M) + log2(K) + log2(N): a stage's sub-problems are mostly solved by the
//!          stages before it; the goals of one stage run in parallel, sharing one memo table
//! saving   after every stage that solved something, every --checkpoint seconds within a stage,
//!          and when stopped (SIGINT, SIGTERM, SIGHUP, --time-limit); a rerun loads the table,
//!          finds the finished goals solved and goes on from there
//! ```

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use anyhow::Result;
use morello_core::dtype::Dtype;
use morello_core::spec::{CanonicalSpec, SpecBuilder};
use morello_core::target::Target;
use morello_search::{ActionConfig, Search, SearchError, StopReason};
use rayon::prelude::*;

use crate::commands::search::positive_seconds;
use crate::database::{self, DbArgs, eprint_line};
use crate::failure::{Failure, bad_input};
use crate::spec_args::load_target;
use crate::{output, progress, signals};

/// Examples shown after `morello precompute --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello precompute matmul --up-to 64                       f32, this machine's x86 target
  morello precompute matmul --up-to 32 --dtype u32 --target x86-avx2 --db shard.mdb";

/// What to precompute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Family {
    /// Matrix multiplications `M x K x N`.
    Matmul,
}

/// Arguments of `morello precompute`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The family of specs.
    #[arg(value_enum)]
    family: Family,
    /// The largest size of each dimension (a power of two).
    #[arg(long, value_name = "N")]
    up_to: u32,
    /// Element type of the operands (bf16 matmuls accumulate into f32).
    #[arg(long, default_value = "f32", value_name = "DTYPE")]
    dtype: String,
    /// Target: x86, x86-avx2, x86-avx512, or a TOML/JSON target file.
    #[arg(long, default_value = "x86", value_name = "TARGET")]
    target: String,
    /// The table to fill (default: the default table of the target, as `morello search` uses).
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Threads (default: all cores).
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Stop after this many seconds (what was solved is saved; rerun to go on).
    #[arg(long, value_name = "SECONDS")]
    time_limit: Option<f64>,
    /// Also save every this many seconds within a stage, so a killed process loses at most that.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    checkpoint: f64,
    /// Show a progress bar even when standard error is not a terminal.
    #[arg(long)]
    progress: bool,
    /// Print neither the progress bar nor the per-stage lines.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// Runs `morello precompute`.
pub fn run(args: &Args) -> Result<()> {
    let Family::Matmul = args.family;
    if !args.up_to.is_power_of_two() {
        return Err(bad_input(format!("--up-to must be a power of two, got {}", args.up_to)));
    }
    let (target, note) = load_target(&args.target)?;
    let dtype: Dtype = args.dtype.parse().bad_input(|| "invalid --dtype".to_string())?;
    let stages = matmul_stages(args.up_to, dtype, &target)?;
    let total: u64 = stages.iter().map(|s| s.len() as u64).sum();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start the thread pool: {e}"))?;

    let db = DbArgs { db: args.db.clone(), no_db: false };
    let table = database::open(&db, &target, ActionConfig::default())?;
    if !args.quiet {
        if let Some(note) = &note {
            eprint_line(note);
        }
        if let Some(line) = database::summary(&table, None) {
            eprint_line(&line);
        }
    }
    let interval = positive_seconds("--checkpoint", args.checkpoint)?;
    let memo = table.memo();
    let table = Mutex::new(table);
    // A checkpoint that fails is not fatal here: the save after the stage reports the error.
    let mut search =
        Search::new(&target).memo(memo).cancel(signals::cancel_token()).checkpoint(interval, |_| {
            if let Ok(mut table) = table.try_lock() {
                let _ = database::save(&mut table, true);
            }
        });
    if let Some(seconds) = args.time_limit {
        search = search.deadline(Instant::now() + positive_seconds("--time-limit", seconds)?);
    }
    let bar = progress::bar(
        progress::shown(args.progress, args.quiet),
        Some(total),
        "{spinner} {msg} [{bar:30}] {pos}/{len} goals, {elapsed}",
    );
    let start = Instant::now();
    let done = AtomicU64::new(0);
    let mut stopped = None;
    for (index, stage) in stages.iter().enumerate() {
        bar.set_message(format!("stage {}/{}", index + 1, stages.len()));
        let failures: Vec<SearchError> = pool.install(|| {
            stage
                .par_iter()
                .filter_map(|goal| {
                    let result = search.fill(goal);
                    bar.set_position(done.fetch_add(1, Ordering::Relaxed) + 1);
                    result.err()
                })
                .collect()
        });
        let saved = database::save(&mut table.lock().unwrap_or_else(PoisonError::into_inner), true)?;
        if let (false, Some(s)) = (args.quiet, saved.filter(|s| s.written)) {
            bar.suspend(|| {
                eprint_line(&format!(
                    "stage {}/{} done in {:.1} s: {} specs saved ({} bytes)",
                    index + 1,
                    stages.len(),
                    start.elapsed().as_secs_f64(),
                    s.entries,
                    s.bytes
                ));
            });
        }
        if let Some(e) = failures.into_iter().next() {
            stopped = Some(e);
            break;
        }
    }
    bar.finish_and_clear();
    drop(search);
    let table = table.into_inner().unwrap_or_else(PoisonError::into_inner);
    let path = table.path().map(|p| p.display().to_string()).unwrap_or_default();
    match (stopped, signals::received()) {
        (None, _) => output::print(&format!(
            "{total} matmuls up to {n}x{n}x{n} ({dtype}, {target}) solved in {:.1} s; table {path} holds {} specs\n",
            start.elapsed().as_secs_f64(),
            table.memo().len(),
            n = args.up_to,
            target = target.name(),
        )),
        (Some(SearchError::Stopped { reason: StopReason::Cancelled, .. }), Some(signal)) => {
            Err(anyhow::Error::new(signals::Interrupted {
                signal,
                saved_in: table.path().map(PathBuf::from),
            }))
        }
        (Some(SearchError::Stopped { reason, .. }), _) => Err(anyhow::anyhow!(
            "precompute stopped ({reason}) after {} of {total} goals; what was solved is saved in {path}: run the same command again to go on",
            done.load(Ordering::Relaxed)
        )),
        (Some(e), _) => Err(anyhow::Error::new(e)),
    }
}

/// Every power-of-two matmul up to `up_to`, grouped by `log2(M) + log2(K) + log2(N)`.
fn matmul_stages(up_to: u32, dtype: Dtype, target: &Target) -> Result<Vec<Vec<CanonicalSpec>>> {
    let logs = up_to.trailing_zeros();
    let mut stages = vec![Vec::new(); 3 * logs as usize + 1];
    for m in 0..=logs {
        for k in 0..=logs {
            for n in 0..=logs {
                let spec = SpecBuilder::matmul(1 << m, 1 << k, 1 << n)
                    .dtype(dtype)
                    .build(target)
                    .map_err(|e| bad_input(e.to_string()))?;
                stages[(m + k + n) as usize].push(spec);
            }
        }
    }
    Ok(stages)
}
