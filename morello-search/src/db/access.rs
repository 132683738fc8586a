//! Whether a table file may be written: read-only tables (by their permission bits, their
//! directory's, or the system's refusal) are read and never replaced.
//!
//! ```text
//! file mode       no write permission bit (chmod 444): kept as it is, even by root, who could
//!                 write it: chmod 444 means keep it
//! directory mode  its directory has no write permission bit (a replacement is a rename there)
//! refused         the system will not open it for writing (another owner, a read-only mount)
//! ```

use std::path::Path;

/// Whether an open table's file may be replaced by [`crate::db::OpenTable::save`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Saves merge into the file and replace it.
    ReadWrite,
    /// The file is read and searched with, never written (see [`read_only_reason`]).
    ReadOnly(ReadOnlyReason),
}

/// Why a table file is read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReadOnlyReason {
    /// The file has no write permission bit (`chmod 444`).
    #[error("the file has no write permission")]
    FileMode,
    /// Its directory has no write permission bit (so the file could not be replaced).
    #[error("its directory has no write permission")]
    DirectoryMode,
    /// The system refused to open it for writing (another owner, a read-only file system).
    #[error("it cannot be opened for writing")]
    NotWritable,
}

/// Why the existing table file at `path` must not be replaced, or `None` if it may be.
///
/// Permission bits are honoured even for a user the system would let write (root): a table
/// someone made read-only is meant to stay as it is.
pub fn read_only_reason(path: &Path) -> Option<ReadOnlyReason> {
    let file = std::fs::metadata(path).ok()?;
    if file.permissions().readonly() {
        return Some(ReadOnlyReason::FileMode);
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if std::fs::metadata(dir).is_ok_and(|d| d.permissions().readonly()) {
        return Some(ReadOnlyReason::DirectoryMode);
    }
    // Opening for writing without truncating changes nothing, and asks the system for permission.
    match std::fs::OpenOptions::new().write(true).open(path) {
        Ok(_) => None,
        Err(_) => Some(ReadOnlyReason::NotWritable),
    }
}
