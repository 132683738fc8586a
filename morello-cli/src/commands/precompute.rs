//! `morello precompute`: fill a table with every power-of-two matmul up to N and/or the specs of a
//! file, all of them or one shard's share.
//!
//! ```text
//! goals    `matmul --up-to N`: every M x K x N with M, K, N in {1, 2, 4, ..., N}, batch 1,
//!          row-major in the home level; `--specs FILE`: one spec per line (shorthand or full text)
//! order    stages by log2 of the iteration volume (for matmuls log2 M + log2 K + log2 N): a
//!          stage's sub-problems are mostly solved by the stages before it; the goals of one
//!          stage run in parallel, sharing one memo table
//! shards   `--shard I/N`: goals in stage order, then spec order, dealt round-robin, the i-th to
//!          shard i mod N: every goal in exactly one shard, each stage spread evenly; the same
//!          arguments give the same split on every machine
//! saving   after every stage that solved something, every --checkpoint seconds within a stage,
//!          and when stopped (SIGINT, SIGTERM, SIGHUP, --time-limit); a rerun loads the table,
//!          finds the finished goals solved and goes on from there
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use anyhow::Result;
use morello_core::dtype::Dtype;
use morello_core::spec::{CanonicalSpec, SpecBuilder};
use morello_core::target::Target;
use morello_search::db::{Access, DbError, FillLock};
use morello_search::{ActionConfig, Search, SearchError, StopReason};
use rayon::prelude::*;

use crate::commands::db::compact_file;
use crate::database::{self, DbArgs, TableFlags, eprint_line, table_error_for};
use crate::failure::{Failure, bad_input};
use crate::input::TextKind;
use crate::memory::MemorySize;
use crate::numbers::Seconds;
use crate::spec_args::{load_target, with_processors};
use crate::{output, progress, signals};

/// Examples shown after `morello precompute --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello precompute matmul --up-to 64                       f32, this machine's x86 target
  morello precompute matmul --up-to 32 --dtype u32 --target x86-avx2 --db table.mdb
  morello precompute matmul --up-to 1024 --shard 3/16 --db part-3.mdb   one shard of 16
  morello precompute --specs model.txt --db model.mdb         a model's matmuls and convs

A file of specs has one spec per line, in shorthand or full text; `#` starts a comment:
  matmul 128x768x3072
  conv 1x64x56x56 64x64x3x3
  Matmul(1x8x8x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)";

/// What to precompute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Family {
    /// Matrix multiplications `M x K x N`.
    Matmul,
}

/// One shard of a split: `index` of `count` (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, from 0.
    pub index: u32,
    /// How many shards.
    pub count: u32,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let usage = || format!("`{text}` is not a shard: write I/N with 0 <= I < N, such as 0/4");
        let (i, n) = text.split_once('/').ok_or_else(usage)?;
        let (index, count): (u32, u32) =
            (i.trim().parse().map_err(|_| usage())?, n.trim().parse().map_err(|_| usage())?);
        if index >= count {
            return Err(usage());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Arguments of `morello precompute`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The family of specs (with --up-to).
    #[arg(value_enum)]
    family: Option<Family>,
    /// The largest size of each dimension (a power of two).
    #[arg(long, value_name = "N", value_parser = crate::numbers::parse_count_u32)]
    up_to: Option<u32>,
    /// A file of specs to precompute, one per line (shorthand or full text; `#` starts a comment).
    #[arg(long, value_name = "FILE")]
    specs: Option<PathBuf>,
    /// Only this shard's share of the goals, for a batch system: `I/N` with I from 0 to N-1.
    /// Every goal is in exactly one shard; merge the shards' tables with `morello db merge`.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// Element type of the operands of shorthand specs (bf16 matmuls accumulate into f32).
    #[arg(long, default_value = "f32", value_name = "DTYPE")]
    dtype: String,
    /// Target: x86, x86-avx2, x86-avx2-vnni, x86-avx512, arm-neon, or a TOML/JSON target file.
    #[arg(long, default_value = crate::spec_args::DEFAULT_TARGET, value_name = "TARGET")]
    target: String,
    /// Processors the cost model gives parallel loops (default: the target's; for the built-in
    /// x86 targets, this machine's cores). A table answers searches for exactly this target, so
    /// shards on a cluster name the processor count of the machines that will search with it.
    #[arg(long, value_name = "N", value_parser = crate::numbers::parse_count_u32)]
    processors: Option<u32>,
    /// The table to fill (default: the default table of the target, as `morello search` uses).
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Threads (default: all cores; more than the cores this process may use is reduced to them).
    #[arg(long, short = 'j', value_name = "N", value_parser = crate::numbers::parse_count)]
    jobs: Option<usize>,
    /// Stop after this many seconds (what was solved is saved; rerun to go on).
    #[arg(long, value_name = "SECONDS", value_parser = crate::numbers::parse_seconds)]
    time_limit: Option<Seconds>,
    /// Also save every this many seconds within a stage, so a killed process loses at most that.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = crate::numbers::parse_seconds)]
    checkpoint: Seconds,
    /// Show a progress bar even when standard error is not a terminal.
    #[arg(long)]
    progress: bool,
    /// Print neither the progress bar nor the per-stage lines.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Memory the process may hold: bytes such as 4GiB, or a share of this machine's memory such
    /// as 25% [default: 50%]. The table of solved specs and the graphs the search explores get 35%
    /// of it by their own estimate (the rest is for the allocator and saving the table). When the
    /// table alone fills that, precompute stops and saves (status 1).
    #[arg(long, value_name = "SIZE", value_parser = crate::memory::parse_memory_size)]
    max_memory: Option<MemorySize>,
}

/// The goals of a precompute and how to describe them.
struct Goals {
    stages: Vec<Vec<CanonicalSpec>>,
    /// Goals in this run (this shard's).
    count: u64,
    /// What they are, for the final line.
    description: String,
}

/// The goals `args` ask for (this shard's share), in stages.
fn goals(args: &Args, dtype: Dtype, target: &Target) -> Result<Goals> {
    let mut all: Vec<CanonicalSpec> = Vec::new();
    let mut parts = Vec::new();
    match (args.family, args.up_to) {
        (Some(Family::Matmul), Some(n)) => {
            if !n.is_power_of_two() {
                return Err(bad_input(format!("--up-to must be a power of two, got {n}")));
            }
            let matmuls = matmul_goals(n, dtype, target)?;
            parts.push(format!("{} matmuls up to {n}x{n}x{n}", matmuls.len()));
            all.extend(matmuls);
        }
        (Some(Family::Matmul), None) => return Err(bad_input("precompute matmul needs --up-to N")),
        (None, Some(_)) => return Err(bad_input("--up-to needs a family: precompute matmul --up-to N")),
        (None, None) => {}
    }
    if let Some(file) = &args.specs {
        let listed = specs_file(file, dtype, target)?;
        parts.push(format!("{} specs from {}", listed.len(), file.display()));
        all.extend(listed);
    }
    if all.is_empty() {
        return Err(bad_input(
            "nothing to precompute: give `matmul --up-to N`, `--specs FILE` (with at least one spec), or both",
        ));
    }
    let description = parts.join(" and ");
    let stages = shard_stages(all, args.shard);
    let count = stages.iter().map(|s| s.len() as u64).sum();
    Ok(Goals { stages, count, description })
}

/// Groups goals into stages by log2 of their iteration volume (distinct goals only), keeping
/// one shard's share: goals in stage order, then spec order, dealt round-robin.
fn shard_stages(mut goals: Vec<CanonicalSpec>, shard: Option<Shard>) -> Vec<Vec<CanonicalSpec>> {
    goals.sort();
    goals.dedup();
    let mut by_stage: BTreeMap<u32, Vec<CanonicalSpec>> = BTreeMap::new();
    for goal in goals {
        let volume = goal.shape.volume().max(1);
        by_stage.entry(volume.ilog2()).or_default().push(goal);
    }
    let mut dealt = 0u64;
    by_stage
        .into_values()
        .map(|stage| {
            stage
                .into_iter()
                .filter(|_| {
                    let mine = shard.is_none_or(|s| dealt % u64::from(s.count) == u64::from(s.index));
                    dealt += 1;
                    mine
                })
                .collect::<Vec<_>>()
        })
        .filter(|stage| !stage.is_empty())
        .collect()
}

/// The specs of a file: one per line, shorthand or full text, `#` comments, blank lines skipped.
fn specs_file(path: &Path, dtype: Dtype, target: &Target) -> Result<Vec<CanonicalSpec>> {
    let text = crate::input::read_text(path, TextKind::SpecFile, false)?;
    let mut out = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("{}:{}", path.display(), number + 1);
        let spec = SpecBuilder::parse(line)
            .map_err(|e| bad_input(format!("{}: {e}", at())))?
            .dtype(dtype)
            .build(target)
            .map_err(|e| bad_input(format!("{}: {e}", at())))?;
        out.push(spec);
    }
    Ok(out)
}

/// Runs `morello precompute`.
pub fn run(args: &Args) -> Result<()> {
    let (mut target, note) = load_target(&args.target)?;
    if let Some(processors) = args.processors {
        target = with_processors(target, processors)?;
    }
    let dtype: Dtype = args.dtype.parse().bad_input(|| "invalid --dtype".to_string())?;
    let Goals { stages, count: total, description } = goals(args, dtype, &target)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(crate::numbers::jobs(args.jobs, args.quiet).unwrap_or(0))
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start the thread pool: {e}"))?;

    let db = DbArgs { db: args.db.clone(), no_db: false };
    let table = database::open(&db, &target, ActionConfig::default(), TableFlags::Db)?;
    // Its work is the table: one it may not write is refused before anything is searched.
    if let (Access::ReadOnly(reason), Some(path)) = (table.access(), table.path()) {
        return Err(table_error_for(DbError::ReadOnly { path: path.into(), reason }, TableFlags::Db));
    }
    // While it runs, `db merge` does not read the table (it waits): it is not complete yet.
    let _filling = match table.path() {
        Some(path) => Some(
            FillLock::filling(path, &mut |lock| database::waiting_for_lock(lock))
                .map_err(|e| table_error_for(e, TableFlags::Db))?,
        ),
        None => None,
    };
    if !args.quiet {
        if let Some(note) = &note {
            eprint_line(note);
        }
        if let Some(line) = database::summary(&table, None) {
            eprint_line(&line);
        }
    }
    let interval = args.checkpoint.duration();
    let memo = table.memo();
    let table = Mutex::new(table);
    // A checkpoint that fails is not fatal here: the save after the stage reports the error.
    let mut search =
        Search::new(&target).memo(memo).cancel(signals::cancel_token()).checkpoint(interval, |_| {
            if let Ok(mut table) = table.try_lock() {
                let _ = database::save(&mut table, true, TableFlags::Db);
            }
        });
    if let Some(limit) = args.time_limit {
        search = search.deadline(Instant::now() + limit.duration());
    }
    if let Some(bytes) = crate::memory::budget(args.max_memory) {
        search = search.max_memory(crate::memory::search_budget(bytes, true));
    }
    let bar = progress::bar(
        progress::shown(args.progress, args.quiet),
        Some(total),
        "{spinner} {msg} [{bar:30}] {pos}/{len} goals, {elapsed}",
    );
    let start = Instant::now();
    let done = AtomicU64::new(0);
    let mut stopped = None;
    let mut held = table.lock().unwrap_or_else(PoisonError::into_inner).opened();
    let mut wrote = false;
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
        let saved =
            database::save(&mut table.lock().unwrap_or_else(PoisonError::into_inner), true, TableFlags::Db)?;
        if let Some(s) = &saved {
            held = s.entries;
            wrote |= s.written;
        }
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
    let file = table.path().map(PathBuf::from);
    drop(table);
    let path = file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    let shard = args.shard.map(|s| format!("shard {s}: {total} goals of ")).unwrap_or_default();
    match (stopped, signals::received()) {
        (None, _) => {
            // A finished precompute leaves its table as one run, as `db compact` does, so that a
            // lookup reads one block (the stages' commits made several runs).
            if let (true, Some(file)) = (wrote, &file) {
                let done = compact_file(file, None, true)?;
                if done.rewritten && !args.quiet {
                    eprint_line(&format!(
                        "table {path}: {} runs compacted into one ({} bytes)",
                        done.runs_before, done.bytes_after
                    ));
                }
            }
            output::print(&format!(
                "{shard}{description} ({dtype}, {target}) solved in {:.1} s; table {path} holds {held} specs\n",
                start.elapsed().as_secs_f64(),
                target = target.name(),
            ))
        }
        (Some(SearchError::Stopped { reason: StopReason::Cancelled, .. }), Some(signal)) => {
            Err(anyhow::Error::new(signals::Interrupted { signal, saved_in: file }))
        }
        (Some(SearchError::Stopped { reason, .. }), _) if reason != StopReason::TableError => {
            Err(anyhow::anyhow!(
                "precompute stopped ({reason}) after {} of {total} goals; what was solved is saved in {path}: run the same command again{} to go on",
                done.load(Ordering::Relaxed),
                if reason == StopReason::MemoryLimit { " with a larger --max-memory" } else { "" }
            ))
        }
        (Some(e @ SearchError::Table { .. }), _) => {
            Err(database::explain_table(&e, TableFlags::Db).unwrap_or_else(|| anyhow::Error::new(e)))
        }
        (Some(e), _) => Err(anyhow::Error::new(e)),
    }
}

/// Every power-of-two matmul up to `up_to` (a power of two).
fn matmul_goals(up_to: u32, dtype: Dtype, target: &Target) -> Result<Vec<CanonicalSpec>> {
    let logs = up_to.trailing_zeros();
    let mut goals = Vec::new();
    for m in 0..=logs {
        for k in 0..=logs {
            for n in 0..=logs {
                let spec = SpecBuilder::matmul(1 << m, 1 << k, 1 << n)
                    .dtype(dtype)
                    .build(target)
                    .map_err(|e| bad_input(e.to_string()))?;
                goals.push(spec);
            }
        }
    }
    Ok(goals)
}
