//! Table files on disk: atomic replacement, the writer lock, and saving for one process.
//!
//! ```text
//! write    a new file: temp file ".<name>.tmp.<pid>.<n>" in the table's directory, write,
//!          fsync, rename over the table, fsync the directory: a reader or a crash sees no table
//!          or the whole new one
//! lock     "<table>.lock" beside the table, an exclusive advisory lock (flock) held while saving;
//!          a second writer waits for it (the holder only reads, appends and commits)
//! save     under the lock: open the file as it is now (another process may have saved since
//!          this one opened it), drop the specs it already holds (refusing if their frontiers
//!          differ), and append the rest as one commit (see `writer`), or rewrite the file whole
//!          by a rename when merging would take every run
//! ```
//!
//! Reading takes no lock: commits only append past the committed length and then switch a slot,
//! and rewrites are renames. Temp files left by a killed writer are removed by the next save (only
//! the lock holder writes temp files, so under the lock every one is stale), and so is the tail a
//! writer killed mid-append left (cut off before the next append). The lock file stays: deleting
//! it could let two writers hold locks on different files.

use std::fs::{File, OpenOptions};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use fs4::fs_std::FileExt;
use morello_core::spec::CanonicalSpec;

use crate::db::error::DbError;
use crate::db::format::spec_key;
use crate::db::identity::Schema;
use crate::db::reader::Reader;
use crate::db::table::{SaveReport, Table, check_identity};
use crate::db::validate::Validation;
use crate::db::writer::{self, Plan};
use crate::frontier::{Entry, Frontier};

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
    write_atomically_with(path, &mut |file| file.write_all(bytes), &mut |_| Ok(()))
}

/// As [`write_atomically`], with the content written by `write` into the temp file, and
/// `before_rename` called with the temp file's path after it is on disk (tests use it to fail
/// there, as a crash would).
pub(crate) fn write_atomically_with(
    path: &Path,
    write: &mut dyn FnMut(&mut File) -> std::io::Result<()>,
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
            .read(true)
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(|e| DbError::io(&temp, "create", e))?;
        write(&mut file).map_err(|e| DbError::io(&temp, "write", e))?;
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

/// A table file as one process saves to it.
#[derive(Debug, Clone)]
pub struct TableFile {
    path: PathBuf,
}

impl TableFile {
    /// The table at `path` (which need not exist yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TableFile { path: path.into() }
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads and validates every entry; an empty table if the file does not exist.
    ///
    /// # Errors
    /// [`DbError::Io`] if it cannot be read; the errors of [`Table::from_bytes`] if it is not a
    /// valid table for `schema`.
    pub fn load(&mut self, schema: &Schema<'_>, validation: Validation) -> Result<Table, DbError> {
        let file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Table::new(schema)),
            Err(e) => return Err(DbError::io(&self.path, "open", e)),
        };
        Table::read(Box::new(file), &self.path, schema, validation)
    }

    /// Saves `table` under the writer lock: see [`TableFile::save_entries`].
    ///
    /// # Errors
    /// As [`TableFile::save_entries`].
    pub fn save(
        &mut self,
        table: &Table,
        schema: &Schema<'_>,
        on_wait: &mut dyn FnMut(&Path),
    ) -> Result<SaveReport, DbError> {
        self.save_entries(table.entries(), schema, on_wait)
    }

    /// Saves `entries` under the writer lock: the specs the file already holds (another process
    /// may have saved them) are dropped, the rest appended as one commit, or the file rewritten
    /// whole when that is due (see `writer`). If the file holds everything, nothing is written.
    ///
    /// # Errors
    /// [`DbError::Io`]; the errors of [`Table::from_bytes`] if the file on disk is not a valid
    /// table for `schema` (it is then left as it is); [`DbError::Disagree`] if it holds one of
    /// the specs with another frontier.
    pub fn save_entries(
        &mut self,
        entries: &[(CanonicalSpec, Arc<Frontier>)],
        schema: &Schema<'_>,
        on_wait: &mut dyn FnMut(&Path),
    ) -> Result<SaveReport, DbError> {
        let _lock = TableLock::acquire(&self.path, on_wait)?;
        remove_stale_temps(&self.path);
        let levels = schema.target.levels().len();
        let read_handle = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let table = Table::from_entries(entries.to_vec(), schema);
                write_atomically_with(&self.path, &mut |f| table.write_to(f).map(|_| ()), &mut |_| Ok(()))?;
                let n = table.len() as u64;
                return Ok(SaveReport {
                    entries: n,
                    added: n,
                    already_held: 0,
                    bytes: file_size(&self.path),
                    written: true,
                    rewritten: true,
                });
            }
            Err(e) => return Err(DbError::io(&self.path, "open", e)),
        };
        let reader = Reader::open(Box::new(read_handle), &self.path, levels)?;
        check_identity(&reader, schema)?;
        let mut keyed: Vec<(Vec<u8>, &CanonicalSpec, &Frontier)> =
            entries.iter().map(|(s, f)| (spec_key(s), s, f.as_ref())).collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        let mut new = Vec::new();
        let mut already_held = 0u64;
        let mut disagreements = Vec::new();
        for (key, spec, frontier) in keyed {
            match reader.lookup(&key)? {
                Some(stored) => {
                    already_held += 1;
                    if stored != frontier.entries() {
                        disagreements.push(spec.display(schema.target).to_string());
                    }
                }
                None => new.push((key, frontier.entries().to_vec())),
            }
        }
        if let Some(example) = disagreements.first() {
            return Err(DbError::Disagree { count: disagreements.len(), example: example.clone() });
        }
        let added = new.len() as u64;
        let mut report = SaveReport {
            entries: reader.specs() + added,
            added,
            already_held,
            bytes: file_size(&self.path),
            written: false,
            rewritten: false,
        };
        if new.is_empty() {
            return Ok(report);
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(|e| DbError::io(&self.path, "open for writing", e))?;
        match writer::append(&mut file, &reader, new, levels, &self.path)? {
            Plan::Appended(length) => report.bytes = length,
            Plan::Rewrite(all) => {
                let metadata = reader.metadata().clone();
                let borrowed: Vec<(Vec<u8>, &[Entry])> =
                    all.iter().map(|(k, e)| (k.clone(), e.as_slice())).collect();
                write_atomically_with(
                    &self.path,
                    &mut |f| writer::write_fresh(f, &metadata, &borrowed, levels).map(|_| ()),
                    &mut |_| Ok(()),
                )?;
                report.bytes = file_size(&self.path);
                report.rewritten = true;
            }
        }
        report.written = true;
        Ok(report)
    }
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}
