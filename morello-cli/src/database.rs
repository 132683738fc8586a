//! The memo table of commands that search, as the command line names it: `--db PATH`, `--no-db`,
//! or the default table of the target ([`morello_search::db::OpenTable`] does the work); the lines
//! and hints the CLI prints about it.
//!
//! ```text
//! open      header, identity and index checked; entries read as the search asks for them; a bad
//!           file (or a damaged block a search reads) stops the command with status 2, and the
//!           file is not touched
//! save      after the search, also when it was interrupted, only if it solved something new;
//!           appended under the table's lock, without what other processes saved meanwhile
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
use morello_core::target::{HOST_CACHES_MARK, Target};
use morello_search::db::{Access, DbError, Mismatch, OpenTable, SaveReport, Schema, TableLocation};
use morello_search::{ActionConfig, Memo, SearchError};

use crate::failure::bad_input;

/// Which flags the command whose table failed has for choosing another one, so that the message
/// suggests only flags it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFlags {
    /// `--db PATH` and `--no-db` (`search`, `run`, `bench`).
    DbOrNone,
    /// `--db PATH` only (`precompute`, whose work is the table).
    Db,
    /// Neither: the table is the command's argument (`db stats|verify|merge|compact`).
    Argument,
}

impl TableFlags {
    /// The hint a bad-table message ends with, in parentheses (empty for [`TableFlags::Argument`]).
    fn hint(self) -> &'static str {
        match self {
            TableFlags::DbOrNone => " (--db PATH picks another table; --no-db searches without one)",
            TableFlags::Db => " (--db PATH picks another table)",
            TableFlags::Argument => "",
        }
    }
}

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

/// A table error of a command that searches, as the CLI reports it: files at fault exit with
/// status 2 and a hint.
pub fn table_error(err: DbError) -> anyhow::Error {
    table_error_for(err, TableFlags::DbOrNone)
}

/// A table error as the CLI reports it for a command with `flags`: files at fault (and paths
/// that name no table file, and read-only tables a command would replace) exit with status 2 and
/// a hint that names only flags the command has.
pub fn table_error_for(err: DbError, flags: TableFlags) -> anyhow::Error {
    if err.is_bad_file()
        || matches!(
            err,
            DbError::Rebuild { .. }
                | DbError::Disagree { .. }
                | DbError::MergeIdentity { .. }
                | DbError::NoCacheDirectory
                | DbError::NotAFile { .. }
                | DbError::ReadOnly { .. }
        )
    {
        let hint = match &err {
            DbError::Mismatch { mismatch, .. } => mismatch_hint(mismatch),
            _ => String::new(),
        };
        let flags = if matches!(err, DbError::ReadOnly { .. }) { "" } else { flags.hint() };
        bad_input(format!("{err}{hint}{flags}"))
    } else {
        anyhow::Error::new(err)
    }
}

/// What a user can do with a table made for another target or model.
fn mismatch_hint(mismatch: &Mismatch) -> String {
    match mismatch {
        Mismatch::Target { found_name, expected_name, difference, .. } => {
            // `x86` resolves to a built-in target with the host's caches: a table written that way
            // answers `--target x86` on such a host, not the built-in target's own name.
            let (in_table, here) = difference
                .as_deref()
                .and_then(|d| d.split_once(" in the table, "))
                .map(|(table, here)| (table.contains(HOST_CACHES_MARK), here.contains(HOST_CACHES_MARK)))
                .unwrap_or((false, false));
            if in_table && !here {
                format!(
                    ". This table was written with --target x86, which resolves to {found_name} with the \
                     caches of the host that wrote it: search with --target x86 on that host to use it; for \
                     the built-in {expected_name}, build one with `morello precompute`"
                )
            } else if here && !in_table {
                format!(
                    ". --target x86 searches {expected_name} with this host's caches, and this table was \
                     written for the built-in {found_name}: search with --target {found_name} to use it, \
                     or build one for x86 with `morello precompute --target x86`"
                )
            } else {
                format!(
                    ". This table answers searches with --target {found_name} (the same built-in target on a \
                     machine with the same processor count, or the same target file); for this target, build \
                     one with `morello precompute` or download the one made for it"
                )
            }
        }
        Mismatch::ModelVersion { found, expected } => format!(
            ". Tables are tied to the model version of the morello that made them: use a morello with \
             model version {found} for this one, or build a table for version {expected} with \
             `morello precompute` (or download the one made for it)"
        ),
        Mismatch::ModelProbe { .. } => {
            ". Build a new table with this morello (`morello precompute`)".to_string()
        }
        Mismatch::Actions { found, .. } => format!(". It answers searches made with {found}"),
    }
}

/// Whether a table error is the system's refusal to read or write (so a search can go on without
/// the table), rather than a bad table.
fn is_unavailable(err: &DbError) -> bool {
    matches!(err, DbError::Io { .. } | DbError::NoCacheDirectory | DbError::NotAFile { .. })
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
        if self.save_failed || self.table.memo().failure().is_some() {
            // A damaged table: the search's error says so, and nothing is written to it.
            return None;
        }
        match save(&mut self.table, self.quiet, TableFlags::DbOrNone) {
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

    /// The table as the library sees it, to record measured winners in.
    pub fn table_mut(&mut self) -> &mut OpenTable<'t> {
        &mut self.table
    }
}

/// Opens the table `args` names for a search over `target` with `actions`, for a command with
/// `flags`.
///
/// # Errors
/// A bad table (status 2, the file is left as it is), or an unreadable one.
pub fn open<'t>(
    args: &DbArgs,
    target: &'t Target,
    actions: ActionConfig,
    flags: TableFlags,
) -> Result<OpenTable<'t>> {
    OpenTable::open(&args.location(), target, actions).map_err(|e| table_error_for(e, flags))
}

/// Saves what is new in `table`, saying on standard error (unless `quiet`) when it waits for
/// another process's lock; errors as a command with `flags` reports them.
///
/// # Errors
/// The file cannot be written, or it became a bad table meanwhile (it is then left as it is).
pub fn save(table: &mut OpenTable<'_>, quiet: bool, flags: TableFlags) -> Result<Option<SaveReport>> {
    let mut on_wait = |lock: &Path| {
        if !quiet {
            waiting_for_lock(lock);
        }
    };
    table.save(&mut on_wait).map_err(|e| table_error_for(e, flags))
}

/// Says on standard error that this process waits for another one's lock on a table (`lock`,
/// the lock file): a save, a merge or compaction ([`morello_search::db::lock_path`]), or a
/// precompute still filling the table ([`morello_search::db::fill_lock_path`]).
pub fn waiting_for_lock(lock: &Path) {
    let filling = lock.file_name().is_some_and(|n| n.to_string_lossy().ends_with(".precompute.lock"));
    if filling {
        eprint_line(&format!(
            "waiting for a morello precompute that is filling this table to finish (lock {})",
            lock.display()
        ));
    } else {
        eprint_line(&format!(
            "waiting for another morello process to finish writing (lock {})",
            lock.display()
        ));
    }
}

/// One line for standard error: where the table is, what it held, and what was saved.
pub fn summary(table: &OpenTable<'_>, saved: Option<&SaveReport>) -> Option<String> {
    let path = table.path()?;
    let mut line = format!(
        "table {}: {} specs, opened in {:.1} ms",
        path.display(),
        table.opened(),
        table.load_time().as_secs_f64() * 1000.0
    );
    if let Some(s) = saved {
        if s.written {
            let how = if s.rewritten { "written" } else { "appended" };
            line += &format!("; {} new specs {how}, now {} specs in {} bytes", s.added, s.entries, s.bytes);
        }
        if s.already_held > 0 {
            line += &format!(" ({} already saved by another process)", s.already_held);
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
    if let Some(explained) =
        err.downcast_ref::<SearchError>().and_then(|e| explain_table(e, TableFlags::DbOrNone))
    {
        return explained;
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

/// A damaged table found by a search, as the CLI reports it (status 2) for a command with
/// `flags`; `None` for other errors.
pub fn explain_table(err: &SearchError, flags: TableFlags) -> Option<anyhow::Error> {
    match err {
        SearchError::Table { message } => {
            // The table's own error ends with what to do; this says it once, with the checker.
            let message = message.strip_suffix(": delete it or use another table").unwrap_or(message);
            Some(bad_input(format!(
                "{message}: check it with `morello db verify`, delete it, or use another table{}",
                flags.hint()
            )))
        }
        _ => None,
    }
}

/// Prints one line on standard error.
#[allow(clippy::print_stderr)]
pub fn eprint_line(text: &str) {
    eprintln!("{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target_mismatch(in_table: &str, here: &str) -> Mismatch {
        Mismatch::Target {
            found_name: "x86-avx512".into(),
            found_fingerprint: 1,
            expected_name: "x86-avx512".into(),
            expected_fingerprint: 2,
            difference: Some(format!("description is \"{in_table}\" in the table, \"{here}\" here")),
        }
    }

    #[test]
    fn a_target_mismatch_names_the_flag_that_reads_the_table() {
        let host = format!("AVX-512 {HOST_CACHES_MARK} L1d 48 KiB 12-way)");
        let written_by_x86 = mismatch_hint(&target_mismatch(&host, "AVX-512"));
        assert!(written_by_x86.contains("written with --target x86,"), "{written_by_x86}");
        let read_by_x86 = mismatch_hint(&target_mismatch("AVX-512", &host));
        assert!(read_by_x86.contains("search with --target x86-avx512 to use it"), "{read_by_x86}");
        let other = mismatch_hint(&target_mismatch("AVX2", "AVX-512"));
        assert!(other.contains("answers searches with --target x86-avx512"), "{other}");
    }
}
