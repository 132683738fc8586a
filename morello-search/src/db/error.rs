//! Why a table could not be read, written or merged, and whose fault it is.
//!
//! Every message names the file and says what to do. The library does not know the command line,
//! so it says "use another table"; the CLI adds its flags.

use std::path::PathBuf;

use crate::db::access::ReadOnlyReason;
use crate::db::identity::{Mismatch, TableIdentity};

/// A table problem. Nothing here is a panic: a damaged or foreign file is an error value.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Reading, writing, renaming or locking failed (the system: permissions, a full disk, ...).
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done (`read`, `write`, `lock`, ...).
        action: &'static str,
        /// The system's error.
        source: std::io::Error,
    },
    /// The path names something that is not a table file (the user's choice of path): a
    /// directory, a FIFO, a device, a socket, or a symbolic link to one or to nothing. Nothing is
    /// read from or written to it.
    #[error("{} is {kind}, not a table file: name a regular file, or a new path for a new table", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is (`a directory`, `a FIFO (named pipe)`, ...).
        kind: &'static str,
    },
    /// A whole-table write (`db merge -o`, `db compact`, a save) was asked of a table someone
    /// made read-only: it is never replaced.
    #[error("{} is read-only ({reason}), so it is left as it is: make it writable (chmod u+w) to change it, or write another file", path.display())]
    ReadOnly {
        /// The table.
        path: PathBuf,
        /// Why it is read-only.
        reason: ReadOnlyReason,
    },
    /// The default table was asked for, but there is no cache directory to hold it.
    #[error(
        "no cache directory for the default table: set XDG_CACHE_HOME or HOME to an absolute path, or use another table"
    )]
    NoCacheDirectory,
    /// The file does not start like a table (the user pointed at another kind of file).
    #[error("{} is not a morello table (it does not start with the table magic bytes): use another path for the table", path.display())]
    NotATable {
        /// The file.
        path: PathBuf,
    },
    /// The file ends early (an interrupted copy or download; morello's own writes are atomic).
    #[error("{} is truncated ({}): delete it or use another table", path.display(), truncation(*found, *expected))]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Its length.
        found: u64,
        /// The length its header gives, if the header is complete.
        expected: Option<u64>,
    },
    /// The content does not match its checksum or does not decode (the file was damaged).
    #[error("{} is corrupt ({detail}): delete it or use another table", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The file was written in another container format (an older or newer morello).
    #[error("{} has table format version {found}, and this morello reads version {supported}: delete it (or use the morello that wrote it) or use another table", path.display())]
    FormatVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this build reads and writes.
        supported: u32,
    },
    /// The table is intact but for another target, model version or action configuration.
    #[error("{} {mismatch}: delete it or use another table", path.display())]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// What differs.
        mismatch: Box<Mismatch>,
    },
    /// The file is intact but a stored result is wrong for this target and model (written by a
    /// buggy or modified morello): its checksum cannot catch that, validation does.
    #[error("{} holds an invalid entry for {spec}: {reason}; delete it or use another table", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The spec (text form, or its stored fields when it is not a valid spec).
        spec: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// A search found part of the table damaged (a block that fails its checksum, an invalid
    /// entry): the process that found it never writes to the file.
    #[error("{message}; nothing was saved to it")]
    Damaged {
        /// What the search found (it names the file and the block).
        message: String,
    },
    /// A stored implementation does not rebuild as stored (found by a deep verification: the table
    /// is wrong, or reconstruction has a bug).
    #[error("{} does not rebuild {spec}: {reason}", path.display())]
    Rebuild {
        /// The file.
        path: PathBuf,
        /// The spec.
        spec: String,
        /// What differs.
        reason: String,
    },
    /// Two tables give different frontiers for the same spec. The search is deterministic, so one
    /// of them is wrong (a bug, or a change that should have bumped the model version); nothing is
    /// written.
    #[error("the tables disagree on {count} spec(s), for example {example}: merge refused, nothing written")]
    Disagree {
        /// How many specs differ.
        count: usize,
        /// The first one (text form).
        example: String,
    },
    /// Two tables with different identities cannot be merged (the user's choice of files).
    #[error("cannot merge tables for different targets or models: {first} versus {second}")]
    MergeIdentity {
        /// The first table's identity.
        first: Box<TableIdentity>,
        /// The second table's identity.
        second: Box<TableIdentity>,
    },
}

/// How a truncated file falls short: of the length its header gives, or of the header itself.
fn truncation(found: u64, expected: Option<u64>) -> String {
    match expected {
        Some(expected) => format!("{found} of {expected} bytes"),
        None => format!("{found} bytes, shorter than the header every table starts with"),
    }
}

impl DbError {
    /// An I/O error on `path`.
    pub(super) fn io(path: impl Into<PathBuf>, action: &'static str, source: std::io::Error) -> Self {
        DbError::Io { path: path.into(), action, source }
    }

    /// Whether the file itself is at fault (unreadable as a table, or for another target or
    /// model), as opposed to the system ([`DbError::Io`]) or a merge conflict.
    pub fn is_bad_file(&self) -> bool {
        matches!(
            self,
            DbError::NotATable { .. }
                | DbError::Truncated { .. }
                | DbError::Corrupt { .. }
                | DbError::FormatVersion { .. }
                | DbError::Mismatch { .. }
                | DbError::Invalid { .. }
                | DbError::Damaged { .. }
        )
    }
}
