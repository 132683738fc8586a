//! The memo table of commands that search, as the command line names it: `--db PATH`, `--no-db`,
//! or the default table of the target ([`morello_search::db::OpenTable`] does the work); the lines
//! and hints the CLI prints about it.
//!
//! ```text
//! load      validated (structure); a bad file stops the command with status 2 and is not touched
//! save      after the search, also when it was interrupted, only if it solved something new;
//!           under the table's lock, merged with what other processes saved meanwhile
//! no table  a table that cannot be read (no cache directory, a path through a file, no
//!           permission) or written (no lock file, a full disk) never costs the answer: one
//!           warning on stderr with the path and the reason, the search goes on in memory, the
//!           result is printed and the status is 0 (only `precompute`, whose work is the table,
//!           fails instead)
//! read-only a table with no write permission (chmod 444, or in a read-only directory) is read
//!           and used, and never replaced (a note unless --quiet)
//! ```

use std::path::{Path, PathBuf};

use anyhow::Result;
use morello_core::target::Target;
use morello_search::db::{Access, DbError, OpenTable, SaveReport, Schema, TableLocation};
use morello_search::{ActionConfig, Memo, SearchError};

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

impl DbArgs {
    /// Where the table is.
    pub fn location(&self) -> TableLocation {
        match (&self.db, self.no_db) {
            (_, true) => TableLocation::Memory,
            (Some(path), false) => TableLocation::File(path.clone()),
            (None, false) => TableLocation::Default,
        }
    }
}

/// A table error as the CLI reports it: files at fault exit with status 2 and a hint.
pub fn table_error(err: DbError) -> anyhow::Error {
    if err.is_bad_file()
        || matches!(
            err,
            DbError::Rebuild { .. }
                | DbError::Disagree { .. }
                | DbError::MergeIdentity { .. }
                | DbError::NoCacheDirectory
        )
    {
        bad_input(format!("{err} ({BAD_TABLE_HINT})"))
    } else {
        anyhow::Error::new(err)
    }
}

/// Whether a table error is the system's refusal to read or write (so a search can go on without
/// the table), rather than a bad table.
fn is_unavailable(err: &DbError) -> bool {
    matches!(err, DbError::Io { .. } | DbError::NoCacheDirectory)
}

/// The memo table of a search, as the commands that search use it: a table that cannot be opened
/// or saved costs a warning, never the answer.
#[derive(Debug)]
pub struct SearchTable<'t> {
    table: OpenTable<'t>,
    quiet: bool,
    /// Whether a save failed (warned once; no later save is tried).
    save_failed: bool,
}

impl<'t> SearchTable<'t> {
    /// Opens the table `args` names for a search over `target` with `actions`. A table that
    /// cannot be read is replaced by one in memory, with a warning; a read-only one is used with
    /// a note (unless `quiet`).
    ///
    /// # Errors
    /// A bad table (status 2, the file is left as it is).
    pub fn open(args: &DbArgs, target: &'t Target, actions: ActionConfig, quiet: bool) -> Result<Self> {
        let table = match OpenTable::open(&args.location(), target, actions) {
            Ok(table) => table,
            Err(err) if is_unavailable(&err) => {
                eprint_line(&format!("warning: {err}; searching without a table (nothing is saved)"));
                OpenTable::in_memory(Schema::new(target, actions))
            }
            Err(err) => return Err(table_error(err)),
        };
        if let (false, Access::ReadOnly(reason), Some(path)) = (quiet, table.access(), table.path()) {
            eprint_line(&format!(
                "note: the table {} is read-only ({reason}): it is used, and what this search solves is not saved",
                path.display()
            ));
        }
        Ok(SearchTable { table, quiet, save_failed: false })
    }

    /// The memo table to search with.
    pub fn memo(&self) -> std::sync::Arc<Memo> {
        self.table.memo()
    }

    /// Saves what is new, if the table has a writable file and no save failed before. A failure
    /// is one warning on standard error (the first time) and `None`.
    pub fn save(&mut self) -> Option<SaveReport> {
        if self.save_failed {
            return None;
        }
        match save(&mut self.table, self.quiet) {
            Ok(report) => report,
            Err(err) => {
                self.save_failed = true;
                eprint_line(&format!(
                    "warning: {}; what this search solved is not saved",
                    crate::failure::message(&err)
                ));
                None
            }
        }
    }

    /// The file that holds what was solved, if there is one (not in memory, not read-only, no
    /// failed save).
    pub fn saved_in(&self) -> Option<&Path> {
        match (self.save_failed, self.table.access()) {
            (false, Access::ReadWrite) => self.table.path(),
            _ => None,
        }
    }

    /// The table as the library sees it.
    pub fn table(&self) -> &OpenTable<'t> {
        &self.table
    }
}

/// Opens the table `args` names for a search over `target` with `actions`.
///
/// # Errors
/// A bad table (status 2, the file is left as it is), or an unreadable one.
pub fn open<'t>(args: &DbArgs, target: &'t Target, actions: ActionConfig) -> Result<OpenTable<'t>> {
    OpenTable::open(&args.location(), target, actions).map_err(table_error)
}

/// Saves what is new in `table`, saying on standard error (unless `quiet`) when it waits for
/// another process's lock.
///
/// # Errors
/// The file cannot be written, or it became a bad table meanwhile (it is then left as it is).
pub fn save(table: &mut OpenTable<'_>, quiet: bool) -> Result<Option<SaveReport>> {
    let mut on_wait = |lock: &Path| {
        if !quiet {
            eprint_line(&format!(
                "waiting for another morello process to finish writing (lock {})",
                lock.display()
            ));
        }
    };
    table.save(&mut on_wait).map_err(table_error)
}

/// One line for standard error: where the table is, what was loaded and saved.
pub fn summary(table: &OpenTable<'_>, saved: Option<&SaveReport>) -> Option<String> {
    let path = table.path()?;
    let mut line = format!(
        "table {}: {} specs loaded in {:.3} s",
        path.display(),
        table.opened(),
        table.load_time().as_secs_f64()
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
pub fn explain(table: &SearchTable<'_>, err: anyhow::Error, stopped: bool) -> anyhow::Error {
    if let (true, Some(path)) = (stopped, table.saved_in()) {
        return err.context(format!(
            "what it solved is saved in {}: run the same command again to resume",
            path.display()
        ));
    }
    let inconsistent = err
        .chain()
        .any(|c| matches!(c.downcast_ref::<SearchError>(), Some(SearchError::Inconsistent { .. })));
    match table.table().path() {
        Some(path) if inconsistent => err.context(format!(
            "the table {} holds a decision that does not apply: check it with `morello db verify {}`, delete it, or pass --no-db",
            path.display(),
            path.display()
        )),
        _ => err,
    }
}

/// Prints one line on standard error.
#[allow(clippy::print_stderr)]
pub fn eprint_line(text: &str) {
    eprintln!("{text}");
}
