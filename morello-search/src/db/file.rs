//! Table files on disk: atomic replacement, the writer lock, and loading and saving for one process.
//!
//! ```text
//! write    temp file ".<name>.tmp.<pid>.<n>" in the table's directory, write, fsync, rename over
//!          the table, fsync the directory: a reader or a crash sees the old table or the new one
//! lock     "<table>.lock" beside the table, an exclusive advisory lock (flock) held while saving;
//!          a second writer waits for it (the holder only reads, merges and writes)
//! save     under the lock: merge with what the file holds (kept in memory from this process's
//!          last load or save; read again if another process wrote since, so concurrent searches
//!          never lose each other's results), then write atomically if anything is new
//! ```
//!
//! Reading takes no lock: renames are atomic. Temp files left by a killed writer are removed by
//! the next save (only the lock holder writes temp files, so under the lock every one is stale).
//! The lock file stays: deleting it could let two writers hold locks on different files.

use std::fs::{File, OpenOptions};

use fs4::fs_std::FileExt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::db::error::DbError;
use crate::db::format::{self, HEADER_BYTES};
use crate::db::identity::Schema;
use crate::db::table::{SaveReport, Table};
use crate::db::validate::Validation;

/// The lock file of a table: its path with `.lock` appended.
pub fn lock_path(table: &Path) -> PathBuf {
    let mut name = table.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".lock");
    table.with_file_name(name)
}

fn directory(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn temp_prefix(path: &Path) -> String {
    format!(".{}.tmp.", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default())
}

/// The exclusive writer lock of one table, released when dropped.
#[derive(Debug)]
pub struct TableLock {
    _file: File,
}

impl TableLock {
    /// Takes the writer lock of `table`, creating its directory and lock file if needed. If
    /// another process (or thread) holds it, calls `on_wait` with the lock file's path once, then
    /// waits.
    ///
    /// # Errors
    /// [`DbError::Io`] if the directory or lock file cannot be created or locked.
    pub fn acquire(table: &Path, on_wait: &mut dyn FnMut(&Path)) -> Result<TableLock, DbError> {
        let dir = directory(table);
        std::fs::create_dir_all(dir).map_err(|e| DbError::io(dir, "create the directory", e))?;
        let path = lock_path(table);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| DbError::io(&path, "open the lock file", e))?;
        match FileExt::try_lock_exclusive(&file) {
            Ok(true) => {}
            Ok(false) => {
                on_wait(&path);
                FileExt::lock_exclusive(&file).map_err(|e| DbError::io(&path, "lock", e))?;
            }
            Err(e) => return Err(DbError::io(&path, "lock", e)),
        }
        Ok(TableLock { _file: file })
    }
}

/// Replaces `path` with `bytes` atomically: a temp file in the same directory is written,
/// flushed to disk, renamed over `path`, and the directory is flushed. Takes no lock.
///
/// # Errors
/// [`DbError::Io`]; `path` is then unchanged.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), DbError> {
    write_atomically_with(path, bytes, &mut |_| Ok(()))
}

/// As [`write_atomically`], calling `before_rename` with the temp file's path after it is on disk
/// (tests use it to fail there, as a crash would).
pub(crate) fn write_atomically_with(
    path: &Path,
    bytes: &[u8],
    before_rename: &mut dyn FnMut(&Path) -> std::io::Result<()>,
) -> Result<(), DbError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = directory(path);
    std::fs::create_dir_all(dir).map_err(|e| DbError::io(dir, "create the directory", e))?;
    let temp = dir.join(format!(
        "{}{}.{}",
        temp_prefix(path),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(|e| DbError::io(&temp, "create", e))?;
        file.write_all(bytes).map_err(|e| DbError::io(&temp, "write", e))?;
        file.sync_all().map_err(|e| DbError::io(&temp, "flush to disk", e))?;
        drop(file);
        before_rename(&temp).map_err(|e| DbError::io(&temp, "finish writing", e))?;
        std::fs::rename(&temp, path).map_err(|e| DbError::io(path, "replace", e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
        return result;
    }
    sync_directory(dir)
}

fn sync_directory(dir: &Path) -> Result<(), DbError> {
    match File::open(dir).and_then(|d| d.sync_all()) {
        Ok(()) => Ok(()),
        // Some file systems cannot flush a directory; the rename is then as durable as they allow.
        Err(e) if matches!(e.kind(), std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported) => {
            Ok(())
        }
        Err(e) => Err(DbError::io(dir, "flush the directory", e)),
    }
}

/// Removes temp files of `path` left by writers that died (call only under the lock).
fn remove_stale_temps(path: &Path) {
    let prefix = temp_prefix(path);
    let Ok(entries) = std::fs::read_dir(directory(path)) else { return };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether a table file exists, and the checksum its header declares if it has a valid header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnDisk {
    /// No file.
    Absent,
    /// A file; `None` if its header is not a valid header (a full read says why).
    Present(Option<u64>),
}

fn on_disk(path: &Path) -> Result<OnDisk, DbError> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OnDisk::Absent),
        Err(e) => return Err(DbError::io(path, "open", e)),
    };
    let mut header = [0u8; HEADER_BYTES];
    Ok(OnDisk::Present(match file.read_exact(&mut header) {
        Ok(()) => format::check_header(&header, HEADER_BYTES as u64, path).ok(),
        Err(_) => None,
    }))
}

/// What this process last read or wrote: the file's checksum and its table.
#[derive(Debug, Clone)]
struct Seen {
    checksum: u64,
    table: Table,
}

/// A table file as one process uses it: load once, save (merging) as often as needed.
#[derive(Debug, Clone)]
pub struct TableFile {
    path: PathBuf,
    seen: Option<Seen>,
}

impl TableFile {
    /// The table at `path` (which need not exist yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TableFile { path: path.into(), seen: None }
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads and validates the table; an empty table if the file does not exist.
    ///
    /// # Errors
    /// [`DbError::Io`] if it cannot be read; the errors of [`Table::from_bytes`] if it is not a
    /// valid table for `schema`.
    pub fn load(&mut self, schema: &Schema<'_>, validation: Validation) -> Result<Table, DbError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Table::new(schema)),
            Err(e) => return Err(DbError::io(&self.path, "read", e)),
        };
        let table = Table::from_bytes(&bytes, &self.path, schema, validation)?;
        self.seen = Some(Seen { checksum: checksum_of(&bytes), table: table.clone() });
        Ok(table)
    }

    /// Saves `table` under the writer lock, merged with what the file holds: if the file changed
    /// since this process last loaded or saved it (another process saved), it is read again, so
    /// nothing either process solved is lost. If the file already holds everything, nothing is
    /// written.
    ///
    /// # Errors
    /// [`DbError::Io`]; the errors of [`Table::from_bytes`] if the file on disk is no longer a
    /// valid table (it is then left as it is); [`DbError::Disagree`] if it disagrees with `table`.
    pub fn save(
        &mut self,
        table: &Table,
        schema: &Schema<'_>,
        on_wait: &mut dyn FnMut(&Path),
    ) -> Result<SaveReport, DbError> {
        let _lock = TableLock::acquire(&self.path, on_wait)?;
        remove_stale_temps(&self.path);
        let disk = match (on_disk(&self.path)?, self.seen.take()) {
            (OnDisk::Absent, _) => None,
            // Unchanged since this process read or wrote it: what it holds is in memory.
            (OnDisk::Present(Some(sum)), Some(seen)) if sum == seen.checksum => Some(seen),
            (OnDisk::Present(_), _) => {
                let bytes = std::fs::read(&self.path).map_err(|e| DbError::io(&self.path, "read", e))?;
                // Another morello process wrote it; its structure is checked, as at any load.
                let table = Table::from_bytes(&bytes, &self.path, schema, Validation::Structure)?;
                Some(Seen { checksum: checksum_of(&bytes), table })
            }
        };
        let mut merged = table.clone();
        let mut report = SaveReport::default();
        if let Some(disk) = disk {
            let merge = merged.merge(&disk.table, schema.target);
            let merge = match merge {
                Ok(m) => m,
                Err(e) => {
                    self.seen = Some(disk);
                    return Err(e);
                }
            };
            report.merged_from_disk = merge.added;
            if merged.len() == disk.table.len() {
                report.entries = merged.len() as u64;
                self.seen = Some(disk);
                return Ok(report);
            }
        }
        let bytes = merged.to_bytes();
        write_atomically(&self.path, &bytes)?;
        report.entries = merged.len() as u64;
        report.bytes = bytes.len() as u64;
        report.written = true;
        self.seen = Some(Seen { checksum: checksum_of(&bytes), table: merged });
        Ok(report)
    }
}

fn checksum_of(bytes: &[u8]) -> u64 {
    bytes.get(24..32).map_or(0, |b| u64::from_le_bytes(b.try_into().expect("eight bytes")))
}
