//! `morello precompute matmul --up-to N`: fill a table with every power-of-two matmul up to N.
//!
//! ```text
//! goals    every M x K x N with M, K, N in {1, 2, 4, ..., N}, batch 1, row-major in the home level
//! order    stages by log2(M) + log2(K) + log2(N): a stage's sub-problems are mostly solved by the
//!          stages before it; the goals of one stage run in parallel, sharing one memo table
//! saving   after every stage that solved something, and when stopped (Ctrl-C, --time-limit);
//!          a rerun loads the table, finds the finished goals solved and goes on from there
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use morello_core::dtype::Dtype;
use morello_core::layout::Layout;
use morello_core::shape::Shape;
use morello_core::spec::{CanonicalSpec, LogicalSpec, PrimitiveKind, TensorSpec};
use morello_core::target::Target;
use morello_search::{ActionConfig, Search, SearchError, StopReason};
use rayon::prelude::*;

use crate::database::{DbArgs, OpenTable, eprint_line};
use crate::failure::{Failure, bad_input};
use crate::output;
use crate::spec_args::load_target;

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
    let mut table = OpenTable::open(&db, &target, ActionConfig::default())?;
    if !args.quiet {
        if let Some(note) = &note {
            eprint_line(note);
        }
        if let Some(line) = table.summary(None) {
            eprint_line(&line);
        }
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    let timed_out = Arc::new(AtomicBool::new(false));
    if let Some(seconds) = args.time_limit {
        if !(seconds.is_finite() && seconds > 0.0) {
            return Err(bad_input(format!(
                "--time-limit must be a positive number of seconds, got {seconds}"
            )));
        }
        let (flag, timed) = (Arc::clone(&cancel), Arc::clone(&timed_out));
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs_f64(seconds));
            timed.store(true, Ordering::SeqCst);
            flag.store(true, Ordering::SeqCst);
        });
    }
    let search = Search::new(&target).memo(table.memo()).cancel_flag(Arc::clone(&cancel));
    let bar = progress_bar(args.progress, args.quiet, total);
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
        let saved = table.save(true)?;
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
    let path = table.path().map(|p| p.display().to_string()).unwrap_or_default();
    match stopped {
        None => output::print(&format!(
            "{total} matmuls up to {n}x{n}x{n} ({dtype}, {target}) solved in {:.1} s; table {path} holds {} specs\n",
            start.elapsed().as_secs_f64(),
            table.memo().len(),
            n = args.up_to,
            target = target.name(),
        )),
        Some(SearchError::Stopped { reason, .. }) => {
            let why = if timed_out.load(Ordering::SeqCst) { StopReason::TimeLimit } else { reason };
            Err(anyhow::anyhow!(
                "precompute stopped ({why}) after {} of {total} goals; what was solved is saved in {path}: run the same command again to go on",
                done.load(Ordering::Relaxed)
            ))
        }
        Some(e) => Err(anyhow::Error::new(e)),
    }
}

fn progress_bar(progress: bool, quiet: bool, total: u64) -> ProgressBar {
    use std::io::IsTerminal;
    let show = !quiet && (progress || std::io::stderr().is_terminal());
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} goals, {elapsed}")
            .expect("the progress template is valid")
            .progress_chars("=> "),
    );
    bar
}

/// Every power-of-two matmul up to `up_to`, grouped by `log2(M) + log2(K) + log2(N)`.
fn matmul_stages(up_to: u32, dtype: Dtype, target: &Target) -> Result<Vec<Vec<CanonicalSpec>>> {
    let logs = up_to.trailing_zeros();
    let mut stages = vec![Vec::new(); 3 * logs as usize + 1];
    for m in 0..=logs {
        for k in 0..=logs {
            for n in 0..=logs {
                let spec = matmul(1 << m, 1 << k, 1 << n, dtype, target)?;
                stages[(m + k + n) as usize].push(spec);
            }
        }
    }
    Ok(stages)
}

fn matmul(m: u32, k: u32, n: u32, dtype: Dtype, target: &Target) -> Result<CanonicalSpec> {
    let out_dtype = if dtype == Dtype::Bf16 { Dtype::F32 } else { dtype };
    let operand = |dims: [u32; 3], dtype: Dtype| -> Result<TensorSpec> {
        Ok(TensorSpec {
            shape: Shape::new(dims.to_vec()).bad_input(|| format!("matmul {m}x{k}x{n}"))?,
            dtype,
            level: target.home_level(),
            layout: Layout::row_major(3),
            contiguous_dims: 3,
            vector_size: None,
        })
    };
    let logical = LogicalSpec {
        kind: PrimitiveKind::Matmul { accum: false },
        shape: Shape::new(vec![1, m, k, n]).bad_input(|| format!("matmul {m}x{k}x{n}"))?,
        operands: vec![
            operand([1, m, k], dtype)?,
            operand([1, k, n], dtype)?,
            operand([1, m, n], out_dtype)?,
        ],
        serial_only: false,
    };
    logical.canonicalize(target).bad_input(|| format!("matmul {m}x{k}x{n} on {}", target.name()))
}
