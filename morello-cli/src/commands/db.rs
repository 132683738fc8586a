//! `morello db stats|verify|merge|compact`: inspect, check, combine and rewrite memo tables.
//!
//! Tables store their target's description, so these commands need no `--target` for a table
//! given by path; without a path they use the default table of `--target` (default `x86`, with
//! `--processors` as searches give it).
//!
//! ```text
//! read     a path that is not a regular file (a directory, FIFO, device) is refused unread
//! merge    each input is read once no precompute fills it and no save is in flight (waiting for
//!          their locks), then the output's lock is taken; an output that is one of the inputs
//!          and changed since it was read is read again and merged, so a search that saved to it
//!          meanwhile loses nothing; then it is replaced atomically, keeping its mode
//! compact  under the table's lock: read, rewrite as one run, replace atomically
//! write    only a regular file or a new path, never a read-only table (status 2)
//! ```

use std::hash::{Hash, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use morello_core::target::Target;
use morello_search::db::{
    DbError, Schema, Table, TableFile, TableStats, Validation, default_table_path, stored_target,
};
use morello_search::{ActionConfig, TileSizes};

use crate::database::{TableFlags, table_error_for, waiting_for_lock};
use crate::failure::bad_input;
use crate::output;
use crate::spec_args::{load_target, with_processors};

/// Examples shown after `morello db --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello db stats                              the default table of this machine's x86 target
  morello db stats --target x86-avx2
  morello db verify ./x86.mdb --rebuild all     every check, every implementation rebuilt
  morello db merge part-*.mdb -o merged.mdb     tables of one target from different machines
  morello db compact ./x86.mdb                  one run, no dead space (before shipping a table)";

/// Arguments of `morello db`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: DbCommand,
}

#[derive(Debug, clap::Subcommand)]
enum DbCommand {
    /// Entries by spec kind, bytes, bytes per entry, and whether this morello can use the table.
    Stats(Which),
    /// Check every spec, frontier and stored decision, and rebuild implementations.
    Verify(VerifyArgs),
    /// Combine tables of the same target and model (shards of a precompute) into one.
    Merge(MergeArgs),
    /// Rewrite a table as one run without dead space (atomically, under its lock).
    Compact(Which),
}

/// Which table: a path, or the default table of a target.
#[derive(Debug, clap::Args)]
struct Which {
    /// The table file (default: the default table of --target).
    path: Option<PathBuf>,
    /// The target whose default table to use, or that a given table must be for (default: the
    /// target stored in the table, or x86 for the default table).
    #[arg(long, value_name = "TARGET")]
    target: Option<String>,
    /// The processor count of the target (default: the target's, for the built-in x86 targets
    /// this machine's cores, as `morello search` uses; `morello bench` searches with
    /// --processors equal to its --threads, 1 by default, so its table is `--processors 1`).
    #[arg(long, value_name = "N", value_parser = crate::numbers::parse_count_u32)]
    processors: Option<u32>,
    /// The default table of searches with --all-tile-sizes.
    #[arg(long)]
    all_tile_sizes: bool,
}

#[derive(Debug, clap::Args)]
struct VerifyArgs {
    #[command(flatten)]
    which: Which,
    /// How many specs to rebuild every implementation of, spread evenly over the table: a number,
    /// or `all`.
    #[arg(long, value_name = "N|all", default_value = "100")]
    rebuild: String,
}

#[derive(Debug, clap::Args)]
struct MergeArgs {
    /// The tables to merge (one or more; all for the same target, model and actions).
    #[arg(required = true, value_name = "TABLE")]
    inputs: Vec<PathBuf>,
    /// Where to write the merged table (replaced atomically if it exists; it may be one of the
    /// inputs).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
}

/// Runs `morello db`.
pub fn run(args: &Args) -> Result<()> {
    match &args.command {
        DbCommand::Stats(which) => stats(which),
        DbCommand::Verify(verify_args) => verify(verify_args),
        DbCommand::Merge(merge_args) => merge(merge_args),
        DbCommand::Compact(which) => compact(which),
    }
}

fn actions_of(all_tile_sizes: bool) -> ActionConfig {
    ActionConfig {
        tile_sizes: if all_tile_sizes { TileSizes::All } else { TileSizes::RegisterBlocks },
        ..ActionConfig::default()
    }
}

/// A table error as these commands report it (the table is their argument: no flag to suggest).
fn table_error(err: DbError) -> anyhow::Error {
    table_error_for(err, TableFlags::Argument)
}

/// The table's path.
fn table_path(which: &Which) -> Result<PathBuf> {
    match &which.path {
        Some(p) => Ok(p.clone()),
        None => {
            let target = match named_target(which)? {
                Some(target) => target,
                None => load_target(crate::spec_args::DEFAULT_TARGET)?.0,
            };
            default_table_path(&target, &actions_of(which.all_tile_sizes)).map_err(table_error)
        }
    }
}

/// The table's path and bytes.
fn read(which: &Which) -> Result<(PathBuf, Vec<u8>)> {
    let path = table_path(which)?;
    let bytes = found(&path, TableFile::new(&path).read())?;
    Ok((path, bytes))
}

/// The bytes of the table at `path` as `read` returned them; a missing file is an error.
fn found(path: &Path, read: Result<Option<Vec<u8>>, DbError>) -> Result<Vec<u8>> {
    match read {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(bad_input(format!("no table at {} (a search creates it)", path.display()))),
        Err(e @ DbError::Io { .. }) => Err(bad_input(e.to_string())),
        Err(e) => Err(table_error(e)),
    }
}

/// The target `--target` and `--processors` name (x86 with `--processors` alone), if either is
/// given.
fn named_target(which: &Which) -> Result<Option<Target>> {
    if which.target.is_none() && which.processors.is_none() {
        return Ok(None);
    }
    let (target, _) = load_target(which.target.as_deref().unwrap_or(crate::spec_args::DEFAULT_TARGET))?;
    match which.processors {
        Some(processors) => with_processors(target, processors).map(Some),
        None => Ok(Some(target)),
    }
}

/// The target to validate a table against: `target` if given, else the one the table stores.
fn target_for(bytes: &[u8], path: &Path, target: Option<Target>) -> Result<(Target, ActionConfig)> {
    let (identity, stored) = stored_target(bytes, path).map_err(table_error)?;
    Ok((target.unwrap_or(stored), identity.actions))
}

fn stats(which: &Which) -> Result<()> {
    let (path, bytes) = read(which)?;
    let stats = TableStats::of_bytes(&bytes, &path).map_err(table_error)?;
    let usable = match named_target(which).and_then(|named| target_for(&bytes, &path, named)) {
        Ok((target, actions)) => {
            let schema = Schema::new(&target, actions);
            match schema.mismatch(&stats.identity) {
                None => "yes".to_string(),
                Some(m) => {
                    let stored = stored_target(&bytes, &path).map_err(table_error)?.1;
                    let stored = serde_json::to_string(&stored.description_value())?;
                    format!("no: the table {}", m.with_target_difference(&stored, &target))
                }
            }
        }
        Err(e) => format!("no: {e:#}"),
    };
    output::print(&render_stats(&path, &stats, &usable))
}

fn per_spec(bytes: u64, specs: u64) -> String {
    if specs == 0 { "-".into() } else { format!("{:.1}", bytes as f64 / specs as f64) }
}

fn render_stats(path: &Path, s: &TableStats, usable: &str) -> String {
    let id = &s.identity;
    let mut out = String::new();
    out += &format!("table:       {}\n", path.display());
    out += &format!("target:      {} (fingerprint {:016x})\n", id.target_name, id.target_fingerprint);
    out += &format!(
        "model:       version {} (probe {:016x}, sources {:016x}); {}\n",
        id.model_version, id.model_probe, id.sources, id.actions
    );
    out += &format!("usable:      {usable}\n");
    out += &format!(
        "bytes:       {} ({} bytes per entry; blocks {} bytes before zstd; {} dead bytes)\n",
        s.file_bytes,
        per_spec(s.file_bytes, s.specs),
        s.raw_bytes,
        s.dead_bytes
    );
    out += &format!(
        "layout:      {} commits; {} runs of {} blocks (lookups read one block per run)\n",
        s.commits, s.runs, s.blocks
    );
    out += &format!("entries:     {} solved specs\n", s.specs);
    out += &format!(
        "frontiers:   {} distinct, {} stored entries ({} implementations per spec)\n",
        s.frontiers,
        s.stored_entries,
        per_spec(s.by_kind.iter().map(|k| k.entries).sum(), s.specs)
    );
    out += "\nkind          specs  unsatisfiable  implementations\n";
    for k in &s.by_kind {
        out += &format!("{:<12} {:>6} {:>14} {:>16}\n", k.kind.name(), k.specs, k.unsatisfiable, k.entries);
    }
    out += &render_wisdom(s);
    out
}

/// The measured winners (`search --plan measure`), one block per spec and host.
fn render_wisdom(s: &TableStats) -> String {
    if s.wisdom.is_empty() {
        return "\nwisdom:      none (search --plan measure adds a measured winner per spec and host)\n"
            .into();
    }
    let mut out = format!("\nwisdom:      {} measured winners\n", s.wisdom.len());
    for w in &s.wisdom {
        out += &format!("  {}\n", w.spec);
        out += &format!(
            "    host {:016x}: {}\n    winner {:.4} µs per call, the model's best {:.4} µs; {} candidates timed\n",
            w.host.fingerprint,
            w.host.description,
            w.seconds * 1e6,
            w.model_seconds * 1e6,
            w.candidates
        );
    }
    out
}

fn verify(args: &VerifyArgs) -> Result<()> {
    let rebuild = match args.rebuild.as_str() {
        "all" => None,
        n => Some(
            n.parse::<usize>()
                .map_err(|_| bad_input(format!("--rebuild takes a number or `all`, not `{n}`")))?,
        ),
    };
    let (path, bytes) = read(&args.which)?;
    let start = Instant::now();
    let (target, actions) = target_for(&bytes, &path, named_target(&args.which)?)?;
    let schema = Schema::new(&target, actions);
    let table = Table::from_bytes(&bytes, &path, &schema, Validation::Full).map_err(table_error)?;
    let checked = start.elapsed();
    let report = table.verify(&schema, rebuild, &path).map_err(table_error)?;
    let wisdom = match table.verify_wisdom(&schema, &path).map_err(table_error)? {
        0 => String::new(),
        n => format!("; {n} measured winners rebuilt"),
    };
    let entries: usize = table.iter().map(|(_, f)| f.entries().len()).sum();
    output::print(&format!(
        "ok: {}: {} specs and {} stored decisions checked in {:.2} s; {} specs ({} implementations, {} nodes) rebuilt in {:.2} s{wisdom}\n",
        path.display(),
        table.len(),
        entries,
        checked.as_secs_f64(),
        report.specs,
        report.implementations,
        report.nodes,
        (start.elapsed() - checked).as_secs_f64()
    ))
}

fn merge(args: &MergeArgs) -> Result<()> {
    let mut on_wait = |lock: &Path| waiting_for_lock(lock);
    // Each input once no precompute fills it and no save is in flight.
    let mut read_input = |input: &Path| found(input, TableFile::new(input).read_settled(&mut on_wait));
    let first_bytes = read_input(&args.inputs[0])?;
    let (target, actions) = target_for(&first_bytes, &args.inputs[0], None)?;
    let schema = Schema::new(&target, actions);
    let mut seen = vec![content_hash(&first_bytes)];
    let mut merged =
        Table::from_bytes(&first_bytes, &args.inputs[0], &schema, Validation::Full).map_err(table_error)?;
    drop(first_bytes);
    let mut lines = vec![format!("{}: {} specs", args.inputs[0].display(), merged.len())];
    for input in &args.inputs[1..] {
        let bytes = read_input(input)?;
        seen.push(content_hash(&bytes));
        let table = Table::from_bytes(&bytes, input, &schema, Validation::Full).map_err(table_error)?;
        let report = merged.merge(&table, &target).map_err(table_error)?;
        lines.push(format!(
            "{}: {} specs, {} new, {} already held and equal",
            input.display(),
            table.len(),
            report.added,
            report.shared
        ));
    }
    let output = TableFile::new(&args.output).lock_for_replacement(&mut on_wait).map_err(table_error)?;
    // Saves to the output wait from here on. If it is an input that changed since it was read (a
    // search saved to it), what was saved is merged too.
    if let Some(index) = args.inputs.iter().position(|input| same_file(input, output.path())) {
        if let Some(bytes) = output.read().map_err(table_error)? {
            if content_hash(&bytes) != seen[index] {
                let now = Table::from_bytes(&bytes, &args.output, &schema, Validation::Full)
                    .map_err(table_error)?;
                let report = merged.merge(&now, &target).map_err(table_error)?;
                lines.push(format!(
                    "{}: {} specs saved to it by another process while merging, kept",
                    args.output.display(),
                    report.added
                ));
            }
        }
    }
    let bytes = output.write(&merged).map_err(table_error)?;
    let wisdom = match merged.wisdom().len() {
        0 => String::new(),
        n => format!(", {n} measured winners"),
    };
    lines.push(format!("{}: {} specs{wisdom}, {bytes} bytes", args.output.display(), merged.len()));
    output::print(&(lines.join("\n") + "\n"))
}

/// A hash of a file's bytes, to tell whether it changed between two reads.
fn content_hash(bytes: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// Whether `a` and `b` name the same file (through links and different spellings).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

fn compact(which: &Which) -> Result<()> {
    let path = table_path(which)?;
    let done = compact_file(&path, named_target(which)?, false)?;
    output::print(&format!(
        "{}: {} specs; {} runs and {} bytes before, 1 run and {} bytes after\n",
        path.display(),
        done.specs,
        done.runs_before,
        done.bytes_before,
        done.bytes_after
    ))
}

/// What [`compact_file`] did.
pub struct Compacted {
    /// Specs in the table.
    pub specs: usize,
    /// Runs before.
    pub runs_before: u64,
    /// The file's size before.
    pub bytes_before: u64,
    /// The file's size after (the same when it was not rewritten).
    pub bytes_after: u64,
    /// Whether the file was rewritten.
    pub rewritten: bool,
}

/// Rewrites the table at `path` whole, as one run without dead space, under the writer lock (the
/// new file replaces the old atomically). With `only_if_needed`, a table that is one run without
/// dead space already is left as it is.
pub fn compact_file(path: &Path, target: Option<Target>, only_if_needed: bool) -> Result<Compacted> {
    // Read under the lock, so no save between reading and replacing is lost.
    let mut on_wait = |lock: &Path| waiting_for_lock(lock);
    let file = TableFile::new(path).lock_for_replacement(&mut on_wait).map_err(table_error)?;
    let bytes = found(path, file.read())?;
    let (target, actions) = target_for(&bytes, path, target)?;
    let schema = Schema::new(&target, actions);
    let before = TableStats::of_bytes(&bytes, path).map_err(table_error)?;
    if only_if_needed && before.runs <= 1 && before.dead_bytes == 0 {
        return Ok(Compacted {
            specs: usize::try_from(before.specs).unwrap_or(usize::MAX),
            runs_before: before.runs,
            bytes_before: before.file_bytes,
            bytes_after: before.file_bytes,
            rewritten: false,
        });
    }
    let table = Table::from_bytes(&bytes, path, &schema, Validation::Structure).map_err(table_error)?;
    drop(bytes);
    let bytes_after = file.write(&table).map_err(table_error)?;
    Ok(Compacted {
        specs: table.len(),
        runs_before: before.runs,
        bytes_before: before.file_bytes,
        bytes_after,
        rewritten: true,
    })
}
