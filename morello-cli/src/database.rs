//! The memo table on disk for commands that search: `--db PATH`, `--no-db`, the default table in
//! the user's cache directory, loading before a search and saving after it.
//!
//! ```text
//! default   $XDG_CACHE_HOME/morello/<table>, else ~/.cache/morello/<table>, where <table> is
//!           <target>-<fingerprint>-f<format>-m<model>[-all-tiles].mdb: one table per target,
//!           model and action configuration, so an upgrade or another target starts a new file
//! load      validated (structure); a bad file stops the command with status 2 and is not touched
//! save      after the search, also when it was interrupted, only if it solved something new;
//!           under the table's lock, merged with what other processes saved meanwhile
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use morello_core::target::Target;
use morello_search::db::{
    DbError, FORMAT_VERSION, MODEL_VERSION, SaveReport, Schema, Table, TableFile, Validation,
};
use morello_search::{ActionConfig, Memo, SearchError, TileSizes};

use crate::failure::bad_input;

/// What the CLI adds to a bad-table message.
pub const BAD_TABLE_HINT: &str = "--db PATH picks another table; --no-db searches without one";

/// Options naming the memo table.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DbArgs {
    /// The table of solved specs to load before searching and to save new results into (default:
    /// one file per target in $XDG_CACHE_HOME/morello/, else ~/.cache/morello/).
    #[arg(long, value_name = "PATH", conflicts_with = "no_db")]
    pub db: Option<PathBuf>,
    /// Keep solved specs in memory only: load no table and save none.
    #[arg(long)]
    pub no_db: bool,
}

/// The directory of default tables: `$XDG_CACHE_HOME/morello`, else `$HOME/.cache/morello`.
///
/// # Errors
/// If neither variable gives an absolute path.
pub fn default_dir() -> Result<PathBuf> {
    // The XDG spec says relative values are invalid and must be ignored.
    let absolute = |name: &str| std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(cache) = absolute("XDG_CACHE_HOME") {
        return Ok(cache.join("morello"));
    }
    if let Some(home) = absolute("HOME") {
        return Ok(home.join(".cache").join("morello"));
    }
    Err(bad_input(format!(
        "no cache directory for the default table: set XDG_CACHE_HOME or HOME, or pass --db PATH ({BAD_TABLE_HINT})"
    )))
}

/// The default table's file name for a target and action configuration.
pub fn default_file_name(target: &Target, actions: &ActionConfig) -> String {
    let name: String = target
        .name()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
        .collect();
    let mut file = format!("{name}-{:016x}-f{FORMAT_VERSION}-m{MODEL_VERSION}", target.fingerprint());
    match actions.tile_sizes {
        TileSizes::RegisterBlocks => {}
        TileSizes::PowersOfTwo => file.push_str("-pow2-tiles"),
        TileSizes::All => file.push_str("-all-tiles"),
    }
    if !actions.prune_infeasible {
        file.push_str("-unpruned");
    }
    file.push_str(".mdb");
    file
}

/// The table `--db` names, else the default one.
///
/// # Errors
/// As [`default_dir`].
pub fn table_path(db: Option<&Path>, target: &Target, actions: &ActionConfig) -> Result<PathBuf> {
    match db {
        Some(path) => Ok(path.to_path_buf()),
        None => Ok(default_dir()?.join(default_file_name(target, actions))),
    }
}

/// A table error as the CLI reports it: files at fault exit with status 2 and a hint.
pub fn table_error(err: DbError) -> anyhow::Error {
    if err.is_bad_file()
        || matches!(err, DbError::Rebuild { .. } | DbError::Disagree { .. } | DbError::MergeIdentity { .. })
    {
        bad_input(format!("{err} ({BAD_TABLE_HINT})"))
    } else {
        anyhow::Error::new(err)
    }
}

/// A search's memo table: in memory only, or loaded from a file and saved back.
pub struct OpenTable<'t> {
    schema: Schema<'t>,
    file: Option<TableFile>,
    memo: Arc<Memo>,
    /// Specs loaded when the table was opened.
    opened: usize,
    /// Specs the file is known to hold (after the last load or save).
    loaded: usize,
    load_time: Duration,
}

impl<'t> OpenTable<'t> {
    /// Opens the table the options name (nothing with `--no-db`), validating its structure.
    ///
    /// # Errors
    /// A bad table (status 2, the file is left as it is), or an unreadable one.
    pub fn open(args: &DbArgs, target: &'t Target, actions: ActionConfig) -> Result<OpenTable<'t>> {
        let start = Instant::now();
        let schema = Schema::new(target, actions);
        if args.no_db {
            return Ok(OpenTable {
                schema,
                file: None,
                memo: Arc::new(Memo::new()),
                opened: 0,
                loaded: 0,
                load_time: Duration::ZERO,
            });
        }
        let mut file = TableFile::new(table_path(args.db.as_deref(), target, &actions)?);
        let table = file.load(&schema, Validation::Structure).map_err(table_error)?;
        let memo = Arc::new(table.to_memo());
        Ok(OpenTable {
            schema,
            file: Some(file),
            memo,
            opened: table.len(),
            loaded: table.len(),
            load_time: start.elapsed(),
        })
    }

    /// The memo table to search with.
    pub fn memo(&self) -> Arc<Memo> {
        Arc::clone(&self.memo)
    }

    /// The file, unless memory only.
    pub fn path(&self) -> Option<&Path> {
        self.file.as_ref().map(TableFile::path)
    }

    /// Saves the memo if it holds specs the file did not (waiting for another writer with a
    /// message on standard error unless `quiet`), and returns what was done.
    ///
    /// # Errors
    /// The file cannot be written, or it became a bad table meanwhile (it is then left as it is).
    pub fn save(&mut self, quiet: bool) -> Result<Option<SaveReport>> {
        let Some(file) = &mut self.file else { return Ok(None) };
        if self.memo.len() <= self.loaded {
            return Ok(None);
        }
        let table = Table::from_memo(&self.memo, &self.schema);
        let mut on_wait = |lock: &Path| {
            if !quiet {
                eprint_line(&format!(
                    "waiting for another morello process to finish writing (lock {})",
                    lock.display()
                ));
            }
        };
        let report = file.save(&table, &self.schema, &mut on_wait).map_err(table_error)?;
        self.loaded = report.entries as usize;
        Ok(Some(report))
    }

    /// One line for standard error: where the table is, what was loaded and saved.
    pub fn summary(&self, saved: Option<&SaveReport>) -> Option<String> {
        let path = self.path()?;
        let mut line = format!(
            "table {}: {} specs loaded in {:.3} s",
            path.display(),
            self.opened,
            self.load_time.as_secs_f64()
        );
        if let Some(s) = saved {
            if s.written {
                line += &format!("; saved, now {} specs in {} bytes", s.entries, s.bytes);
            }
            if s.merged_from_disk > 0 {
                line += &format!(" ({} merged from another process)", s.merged_from_disk);
            }
        }
        Some(line)
    }

    /// Adds a hint to a search error: for a stopped search whose results were saved, how to resume;
    /// for a stored decision that does not apply, what to do with the table.
    pub fn explain(&self, err: anyhow::Error, stopped_and_saved: bool) -> anyhow::Error {
        if let (true, Some(path)) = (stopped_and_saved, self.path()) {
            return err.context(format!(
                "what it solved is saved in {}: run the same command again to resume",
                path.display()
            ));
        }
        let inconsistent = err
            .chain()
            .any(|c| matches!(c.downcast_ref::<SearchError>(), Some(SearchError::Inconsistent { .. })));
        match self.path() {
            Some(path) if inconsistent => err.context(format!(
                "the table {} holds a decision that does not apply: check it with `morello db verify {}`, delete it, or pass --no-db",
                path.display(),
                path.display()
            )),
            _ => err,
        }
    }
}

/// Prints one line on standard error.
#[allow(clippy::print_stderr)]
pub fn eprint_line(text: &str) {
    eprintln!("{text}");
}
