//! `morello search SPEC`: the best implementation of a spec for a target.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Result;
use indicatif::ProgressBar;
use morello_codegen::{BenchEntry, EmitConfig, bench_program_source, emit_kernel, verify_program_source};
use morello_core::imp::Impl;
use morello_core::spec::CanonicalSpec;
use morello_core::target::Target;
use morello_search::schedule::{Schedule, ScheduleError, schedule_text};
use morello_search::{
    ActionConfig, Search, SearchError, SearchReport, Solution, StopReason, TileSizes, VariantCosts,
};
use serde_json::json;

use crate::database::{self, DbArgs};
use crate::failure::bad_input;
use crate::memory::{Bytes, MemorySize};
use crate::numbers::Seconds;
use crate::spec_args::{Resolved, SpecArgs, resolve};
use crate::wisdom::{CANDIDATE_POOL, Plan, PlanArgs, Searched, choose_measured};
use crate::{output, signals};

/// Examples shown after `morello search --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello search matmul 64x64x64 --target x86
  morello search matmul 4x4x4 --dtype u32 --target x86-avx2 --emit json
  morello search move 64x64 --from row-major --to col-major
  morello search matmul 16x16x16 --memory L1=4KiB,VRF=8 --top-k 3
  morello search matmul 256x256x256 --plan measure     (times near-ties once, kept as wisdom)
  morello search matmul 64x64x64 --db ./x86.mdb      (or --no-db: nothing loaded or saved)
  morello search matmul 4096x4096x4096 --db big.mdb --max-memory 4GiB
  morello search 'Matmul(1x8x8x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)'
  morello search matmul 64x64x64 --emit schedule > best.schedule   (edit it, then:)
  morello search matmul 64x64x64 --schedule best.schedule";

/// What `search` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// The implementation tree as a table (cost, peak memory per level, node, spec).
    Impl,
    /// One JSON object: cost, target, impl, stats.
    Json,
    /// The C translation unit of the best implementation (with `--harness`, a `main` too).
    C,
    /// The best implementation as a schedule file, which `--schedule` reads back
    /// (docs/schedules.md).
    Schedule,
}

/// A `main` to add to the emitted C.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Harness {
    /// Times the kernel: `program [--seed N] [--samples N] [--min-seconds S] [--cpu K]`.
    Bench,
    /// Runs the kernel once: `program [--seed N] FILE...`, one raw little-endian file per parameter.
    Verify,
}

/// Arguments of `morello search`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    spec: SpecArgs,
    /// What to print.
    #[arg(long, value_enum, default_value = "impl")]
    emit: Emit,
    /// With `--emit c`: also print a `main` that benchmarks or verifies the kernel.
    #[arg(long, value_enum, requires = "emit")]
    harness: Option<Harness>,
    /// Print the K best implementations that differ in their first rewrite (with --plan measure:
    /// time K candidates).
    #[arg(long, value_name = "K", value_parser = crate::numbers::parse_count)]
    top_k: Option<usize>,
    /// Try every tile size, not only powers of two (slower, finds more).
    #[arg(long)]
    all_tile_sizes: bool,
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    schedule: ScheduleArgs,
    #[command(flatten)]
    options: SearchOptions,
    #[command(flatten)]
    db: DbArgs,
}

/// `--schedule FILE`, shared by the commands that search.
#[derive(Debug, Clone, clap::Args)]
pub struct ScheduleArgs {
    /// Take the first steps from this schedule file (one step per line, `#` comments; see
    /// docs/schedules.md); the search completes every sub-spec it leaves open.
    #[arg(long, value_name = "FILE")]
    pub schedule: Option<PathBuf>,
}

impl ScheduleArgs {
    /// The schedule file's text and path, if one was given.
    ///
    /// # Errors
    /// When the file cannot be read.
    pub fn read(&self) -> Result<Option<(String, &Path)>> {
        let Some(path) = &self.schedule else { return Ok(None) };
        let text = std::fs::read_to_string(path)
            .map_err(|e| bad_input(format!("cannot read the schedule file {}: {e}", path.display())))?;
        Ok(Some((text, path)))
    }
}

/// How a search runs, shared by the commands that search: threads, a time limit, what it prints.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct SearchOptions {
    /// Search threads (default: all cores; more than the cores this process may use is reduced
    /// to them); the answer does not depend on it.
    #[arg(long, short = 'j', value_name = "N", value_parser = crate::numbers::parse_count)]
    pub jobs: Option<usize>,
    /// Stop searching after this many seconds (what was solved so far is kept in the table) and
    /// return the best implementation a quick search of fewer tile sizes finds, with a warning
    /// that it may not be optimal (that quick search takes at most a quarter of the limit more, or a
    /// second if that is longer).
    #[arg(long, value_name = "SECONDS", value_parser = crate::numbers::parse_seconds)]
    pub time_limit: Option<Seconds>,
    /// Show progress even when standard error is not a terminal.
    #[arg(long)]
    pub progress: bool,
    /// Print neither progress nor summary lines.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Save what the search solved to the table every this many seconds while it runs, so a
    /// killed process loses at most that much work (SIGINT, SIGTERM and SIGHUP save in any case).
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = crate::numbers::parse_seconds)]
    pub checkpoint: Seconds,
    /// Memory the process may hold: bytes such as 4GiB or 512MiB, or a share of this machine's
    /// memory such as 25% [default: 50%]. The search's table of solved specs and the graph it
    /// explores get 35% of it by their own estimate (65% with --no-db), the rest is for the
    /// allocator and saving the table. Near that the search solves smaller sub-problems first;
    /// when the table alone fills it, the search stops, saves what it solved, and exits with
    /// status 1 (run again with more to go on from there).
    #[arg(long, value_name = "SIZE", value_parser = crate::memory::parse_memory_size)]
    pub max_memory: Option<MemorySize>,
}

/// Runs `morello search`: load the table, search, save what is new (also when interrupted), print.
pub fn run(args: &Args) -> Result<()> {
    let resolved = resolve(&args.spec)?;
    if args.harness.is_some() && args.emit != Emit::C {
        return Err(bad_input("--harness needs --emit c"));
    }
    if let Some((text, path)) = args.schedule.read()? {
        if args.plan.plan == Plan::Measure || args.top_k.is_some() {
            return Err(bad_input("--schedule gives one implementation: drop --plan measure and --top-k"));
        }
        let session = Session::start(&resolved, &args.options, args.all_tile_sizes)?;
        let actions = *session.search.action_config();
        let solution = session.solve_scheduled(&resolved, &args.db, &text, path)?;
        return print_solutions(&resolved, &[solution], args.emit, args.harness, &actions);
    }
    if args.plan.plan == Plan::Measure {
        args.plan.check(args.top_k)?;
        let session = Session::start(&resolved, &args.options, args.all_tile_sizes)?;
        let (limits, actions) = (session.search.effective_limits(), *session.search.action_config());
        let solutions = session.solve_with_table_by(&resolved, &args.db, |search, spec| {
            search.solve_variants(spec, CANDIDATE_POOL, VariantCosts::All)
        })?;
        signals::check()?;
        let searched = Searched { solutions, limits, actions };
        let solution =
            choose_measured(&resolved, &args.db, searched, args.top_k, &args.plan, args.options.quiet)?;
        return print_solutions(&resolved, &[solution], args.emit, args.harness, &actions);
    }
    let session = Session::start(&resolved, &args.options, args.all_tile_sizes)?;
    let actions = *session.search.action_config();
    let solutions = session.solve_with_table(&resolved, &args.db, args.top_k)?;
    print_solutions(&resolved, &solutions, args.emit, args.harness, &actions)
}

/// A configured search with its progress bar and cancellation, shared by the commands that search.
pub struct Session<'t> {
    /// The search.
    pub search: Search<'t>,
    bar: ProgressBar,
    quiet: bool,
    checkpoint: Duration,
    note: Option<String>,
    /// The memory budget in bytes, and whether it is the default.
    budget: Option<(u64, bool)>,
}

impl<'t> Session<'t> {
    /// Configures a search over `resolved.target`: the options, the process's cancellation token
    /// and a progress bar on standard error.
    pub fn start(
        resolved: &'t Resolved,
        options: &SearchOptions,
        all_tile_sizes: bool,
    ) -> Result<Session<'t>> {
        Session::start_for(&resolved.target, resolved.limits, resolved.note.clone(), options, all_tile_sizes)
    }

    /// Configures a search over `target` under `limits` (what [`Session::start`] does for a
    /// resolved spec; `note` is what the target name resolved to, printed unless quiet).
    pub fn start_for(
        target: &'t Target,
        limits: morello_core::target::MemVec,
        note: Option<String>,
        options: &SearchOptions,
        all_tile_sizes: bool,
    ) -> Result<Session<'t>> {
        let SearchOptions { jobs, time_limit, progress, quiet, checkpoint, max_memory } = *options;
        let checkpoint = checkpoint.duration();
        let mut search = Search::new(target).limits(limits).cancel(signals::cancel_token());
        // The search's share of it is set once the table is open (a save needs room too).
        let budget = crate::memory::budget(max_memory).map(|bytes| (bytes, max_memory.is_none()));
        if let Some(threads) = crate::numbers::jobs(jobs, quiet) {
            search = search.threads(threads);
        }
        if let Some(limit) = time_limit {
            search = search.time_limit(limit.duration());
        }
        if all_tile_sizes {
            search = search.tile_sizes(TileSizes::All);
        }
        let (bar, report) = crate::progress::search_bar(crate::progress::shown(progress, quiet));
        search = search.on_progress(report);
        Ok(Session { search, bar, quiet, checkpoint, note, budget })
    }

    /// Loads the memo table `db` names, solves the spec (its `top_k` best when asked), saves what
    /// is new (also when interrupted or out of time) and ends the session.
    pub fn solve_with_table(
        self,
        resolved: &'t Resolved,
        db: &DbArgs,
        top_k: Option<usize>,
    ) -> Result<Vec<Solution>> {
        self.solve_with_table_by(resolved, db, |search, spec| match top_k {
            Some(k) if k > 1 => search.solve_top_k(spec, k),
            _ => search.solve(spec).map(|s| vec![s]),
        })
    }

    /// As [`Session::solve_with_table`], with the solutions `solve` picks (e.g.
    /// [`Search::solve_variants`]).
    pub fn solve_with_table_by(
        self,
        resolved: &'t Resolved,
        db: &DbArgs,
        solve: impl FnOnce(&Search<'t>, &CanonicalSpec) -> Result<Vec<Solution>, SearchError>,
    ) -> Result<Vec<Solution>> {
        self.run_with_table(
            &resolved.target,
            db,
            |search| solve(search, &resolved.spec),
            |result| {
                let (mut warnings, mut lines) = (Vec::new(), Vec::new());
                if let Ok(Some(best)) = result.as_ref().map(|s| s.first()) {
                    if !best.report.optimal() {
                        warnings.push(format!(
                            "warning: the search stopped before finishing ({}); this is the best implementation \
                             a quick search of fewer tile sizes found, and it may not be optimal",
                            best.report.stop
                        ));
                    }
                    lines.push(format!("cost {}; {}", best.cost, best.report));
                }
                (warnings, lines)
            },
        )
    }

    /// Loads the memo table `db` names, applies the schedule file `text` (read from `path`) to the
    /// spec, completes what it leaves open with the search, saves what is new and ends the session.
    ///
    /// # Errors
    /// A refused step or a syntax error is bad input naming the file, line and column.
    pub fn solve_scheduled(
        self,
        resolved: &'t Resolved,
        db: &DbArgs,
        text: &str,
        path: &Path,
    ) -> Result<Solution> {
        let scheduled = self.run_with_table(
            &resolved.target,
            db,
            |search| {
                let mut schedule = Schedule::with_search(&resolved.spec, search.clone());
                let imp = schedule.apply_text(text).and_then(Schedule::synthesize);
                match imp {
                    Err(e) => match stopped_search(&e) {
                        Some(stop) => Err(stop.clone()),
                        None => Ok(Err(e)),
                    },
                    Ok(imp) => Ok(Ok(Solution { cost: imp.cost, imp, report: schedule.report().clone() })),
                }
            },
            |result| match result {
                Ok(Ok(solution)) => {
                    (Vec::new(), vec![format!("cost {}; {}", solution.cost, solution.report)])
                }
                _ => (Vec::new(), Vec::new()),
            },
        )?;
        scheduled.map_err(|e| bad_input(format!("schedule {}: {e}", path.display())))
    }

    /// Loads the memo table `db` names, runs `run` with the search reading and filling it,
    /// saves what is new (also when interrupted or out of time) and ends the session. `summary`
    /// gives the warnings (always printed) and the lines (unless quiet) that the result calls
    /// for, printed before the table's summary.
    pub fn run_with_table<T>(
        self,
        target: &'t Target,
        db: &DbArgs,
        run: impl FnOnce(&Search<'t>) -> Result<T, SearchError>,
        summary: impl FnOnce(&Result<T, SearchError>) -> (Vec<String>, Vec<String>),
    ) -> Result<T> {
        let table = database::SearchTable::open(db, target, *self.search.action_config(), self.quiet)?;
        let Session { mut search, bar, quiet, checkpoint, note, budget } = self;
        let saves = table.saved_in().is_some();
        if let Some((bytes, _)) = budget {
            search = search.max_memory(crate::memory::search_budget(bytes, saves));
        }
        let memo = table.memo();
        // Checkpoints save from a search thread; a save still running when the next one is due
        // is not waited for.
        let table = Arc::new(Mutex::new(table));
        let saver = Arc::clone(&table);
        let search = search.memo(memo).checkpoint(checkpoint, move |_| {
            if let Ok(mut table) = saver.try_lock() {
                table.save();
            }
        });
        let result = run(&search);
        drop(search);
        bar.finish_and_clear();
        let mut table = table.lock().unwrap_or_else(PoisonError::into_inner);
        let stopped = matches!(result, Err(SearchError::Stopped { .. }));
        let saved = table.save();
        let (warnings, lines) = summary(&result);
        for warning in &warnings {
            eprintln_quiet(warning);
        }
        if !quiet {
            if let Some(note) = &note {
                eprintln_quiet(note);
            }
            for line in &lines {
                eprintln_quiet(line);
            }
            if let Some(line) = database::summary(table.table(), saved.as_ref()) {
                eprintln_quiet(&line);
            }
        }
        let value = result.map_err(|e| match (&e, signals::received()) {
            (SearchError::Stopped { reason: StopReason::Cancelled, .. }, Some(signal)) => {
                let solved_any = !table.memo().is_empty();
                let saved_in = table.saved_in().filter(|_| solved_any).map(Path::to_path_buf);
                anyhow::Error::new(signals::Interrupted { signal, saved_in })
            }
            (SearchError::Stopped { reason: StopReason::MemoryLimit, report }, _) => {
                out_of_memory(report, budget, saves, table.saved_in().filter(|_| !table.memo().is_empty()))
            }
            _ => database::explain(&table, search_error(e), stopped),
        })?;
        Ok(value)
    }
}

/// A search stopped by its memory budget (`budget`: bytes, and whether it is the default; `saves`:
/// whether it had a table to save, which sets its share), as the CLI reports it: how much it held,
/// where what it solved is, and what to do.
fn out_of_memory(
    report: &SearchReport,
    budget: Option<(u64, bool)>,
    saves: bool,
    saved_in: Option<&Path>,
) -> anyhow::Error {
    let (bytes, default) = budget.unwrap_or((0, false));
    let flag = if default {
        format!(
            "--max-memory (by default {}% of this machine's memory, {})",
            crate::memory::DEFAULT_PERCENT,
            Bytes(bytes)
        )
    } else {
        format!("--max-memory {}", Bytes(bytes))
    };
    let machine = crate::memory::physical_memory()
        .map(|total| format!(" (this machine has {})", Bytes(total)))
        .unwrap_or_default();
    let next = match saved_in {
        Some(path) => format!(
            "the {} specs it solved are saved in {}: run it again with a larger --max-memory{machine} to go on from there",
            report.specs_solved,
            path.display()
        ),
        None => format!(
            "nothing was saved (no table): run it again with a larger --max-memory{machine}, and --db PATH to keep what it solves"
        ),
    };
    let (percent, rest) = if saves {
        (crate::memory::SEARCH_SHARE_WITH_TABLE, "the allocator and saving the table")
    } else {
        (crate::memory::SEARCH_SHARE_WITHOUT_TABLE, "the allocator")
    };
    anyhow::anyhow!(
        "the search needs more memory than {flag}: its table of solved specs and search graph reached {} \
         by its estimate, their {percent}% share of it (the rest is for {rest}); {next}",
        Bytes(report.estimated_memory),
    )
}

/// A search error as the CLI reports it.
fn search_error(error: SearchError) -> anyhow::Error {
    match error {
        // Only when the quick search after the limit found nothing in its time either.
        SearchError::Stopped { reason: StopReason::TimeLimit, report } => anyhow::anyhow!(
            "the search reached its time limit, and the quick search of fewer tile sizes after it \
             found no implementation in its time either ({report}): give a longer --time-limit"
        ),
        SearchError::Stopped { reason, report } => {
            anyhow::anyhow!("the search stopped before finishing ({reason}): {report}")
        }
        e => anyhow::Error::new(e),
    }
}

#[allow(clippy::print_stderr)]
fn eprintln_quiet(text: &str) {
    eprintln!("{text}");
}

/// The search's stop inside a schedule's error, if a synthesis stopped (a signal, a limit), so the
/// session reports it as it reports any stopped search.
fn stopped_search(error: &ScheduleError) -> Option<&SearchError> {
    match error {
        ScheduleError::Synthesis { source, .. } if matches!(**source, SearchError::Stopped { .. }) => {
            Some(source)
        }
        ScheduleError::AtLine { source, .. } => stopped_search(source),
        _ => None,
    }
}

fn print_solutions(
    resolved: &Resolved,
    solutions: &[Solution],
    emit: Emit,
    harness: Option<Harness>,
    actions: &ActionConfig,
) -> Result<()> {
    let target = &resolved.target;
    match emit {
        Emit::Schedule => {
            let mut text = String::new();
            for (i, s) in solutions.iter().enumerate() {
                text += &format!("# {} on {}: cost {}", resolved.spec.display(target), target.name(), s.cost);
                if solutions.len() > 1 {
                    text += &format!(" (#{})", i + 1);
                }
                text.push('\n');
                text += &schedule_text(&s.imp, target, actions)?;
            }
            output::print(&text)
        }
        Emit::C => {
            let mut text = String::new();
            for (i, s) in solutions.iter().enumerate() {
                if solutions.len() > 1 {
                    text += &format!("/* ---- #{} cost {} ---- */\n", i + 1, s.cost);
                }
                text += &c_program(&s.imp, target, harness)?;
            }
            output::print(&text)
        }
        Emit::Impl => {
            let mut text = String::new();
            for (i, s) in solutions.iter().enumerate() {
                if solutions.len() > 1 {
                    text += &format!("#{} cost {}\n", i + 1, s.cost);
                }
                text += &s.imp.render(target);
            }
            output::print(&text)
        }
        Emit::Json => {
            let objects: Vec<serde_json::Value> = solutions
                .iter()
                .map(|s| {
                    json!({
                        "cost": s.cost,
                        "target": target.name(),
                        "spec": resolved.spec.display(target).to_string(),
                        "peaks": (0..target.levels().len()).map(|i| (target.levels()[i].name.clone(), json!(s.imp.peaks.0[i]))).collect::<serde_json::Map<String, serde_json::Value>>(),
                        "impl": s.imp,
                        "stats": {
                            "specs_solved": s.report.specs_solved,
                            "memo_hits": s.report.memo_hits,
                            "actions": s.report.actions,
                            "seconds": s.report.wall_time.as_secs_f64(),
                            "estimated_memory_bytes": s.report.estimated_memory,
                            "stop": s.report.stop.to_string(),
                        },
                    })
                })
                .collect();
            let value = if objects.len() == 1 {
                objects.into_iter().next().unwrap_or_default()
            } else {
                serde_json::Value::Array(objects)
            };
            output::print_json(&value)
        }
    }
}

/// The emitted kernel, with the harness's `main` if asked for.
fn c_program(imp: &Impl, target: &Target, harness: Option<Harness>) -> Result<String> {
    let kernel = emit_kernel(imp, target, &EmitConfig::default())?;
    Ok(match harness {
        None => kernel.source,
        Some(Harness::Verify) => verify_program_source(&kernel.signature, &kernel.source)?,
        Some(Harness::Bench) => {
            let entry = BenchEntry::new("morello", kernel.signature.name.clone());
            bench_program_source(&kernel.signature, &kernel.source, &[entry])?
        }
    })
}
