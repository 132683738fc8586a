//! Table files on disk: what a table's path may be, atomic replacement, the locks, and saving
//! for one process.
//!
//! ```text
//! path     a regular file (through a symbolic link, the file it names) or nothing yet; a
//!          directory, FIFO, device or socket is refused before it is opened, for reading or
//!          writing, so nothing blocks on a FIFO and no device is replaced
//! write    a new file: temp file ".<name>.tmp.<pid>.<n>" in the table's directory, write,
//!          fsync, rename over the table (the temp file takes the old file's mode and owner
//!          first), fsync the directory: a reader or a crash sees no table or the whole new one
//! replace  a whole new table over an existing one (`db merge -o`, `db compact`): refused for a
//!          read-only table (see `open::read_only_reason`), written under the lock
//! lock     "<table>.lock" beside the table, an exclusive advisory lock (flock) held while saving
//!          or replacing; a second writer waits for it (the holder only reads, appends and
//!          commits)
//! filling  "<table>.precompute.lock", held shared by every precompute filling the table for its
//!          whole run; `db merge` takes it exclusively while it reads an input, so it never
//!          reads a table a precompute is still filling (it waits, and says so)
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

use crate::db::access::read_only_reason;
use crate::db::error::DbError;
use crate::db::format::spec_key;
use crate::db::identity::Schema;
use crate::db::reader::Reader;
use crate::db::table::{SaveReport, Table, check_identity};
use crate::db::validate::Validation;
use crate::db::wisdom::{WisdomEntry, replace_wisdom};
use crate::db::writer::{self, Plan};
use crate::frontier::{Entry, Frontier};

/// The lock file of a table: its path with `.lock` appended.
pub fn lock_path(table: &Path) -> PathBuf {
    with_suffix(table, ".lock")
}

/// The lock file a precompute filling a table holds: its path with `.precompute.lock` appended.
pub fn fill_lock_path(table: &Path) -> PathBuf {
    with_suffix(table, ".precompute.lock")
}

fn with_suffix(table: &Path, suffix: &str) -> PathBuf {
    let mut name = table.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(suffix);
    table.with_file_name(name)
}

/// The path to read or write a table at `path` through: `path` itself when it is a regular file
/// or nothing is there yet (a new table), the file a symbolic link names when it names a regular
/// file (so the link stays, and its lock is the file's).
///
/// # Errors
/// [`DbError::NotAFile`] for a directory, FIFO, device or socket, a link to one, or a link to
/// nothing; [`DbError::Io`] if the path cannot be examined.
pub fn table_file_path(path: &Path) -> Result<PathBuf, DbError> {
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) => m.file_type().is_symlink(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(e) => return Err(DbError::io(path, "examine", e)),
    };
    let kind = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {
            return if link {
                std::fs::canonicalize(path).map_err(|e| DbError::io(path, "resolve the link", e))
            } else {
                Ok(path.to_path_buf())
            };
        }
        Ok(m) => kind_of(&m.file_type()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "a symbolic link to nothing",
        Err(e) => return Err(DbError::io(path, "examine", e)),
    };
    Err(DbError::NotAFile { path: path.into(), kind })
}

/// What a file that is not a regular file is, for a message.
fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO (named pipe)"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Opens the table file at `path` (resolved by [`table_file_path`]) for reading: `None` when there
/// is none yet.
///
/// # Errors
/// As [`table_file_path`]; [`DbError::Io`] if it cannot be opened.
pub(crate) fn open_for_reading(path: &Path) -> Result<Option<(PathBuf, File)>, DbError> {
    let resolved = table_file_path(path)?;
    match File::open(&resolved) {
        Ok(file) => Ok(Some((resolved, file))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(DbError::io(path, "open", e)),
    }
}

/// Refuses to replace a read-only table (`path` resolved).
fn check_writable(path: &Path) -> Result<(), DbError> {
    match read_only_reason(path) {
        Some(reason) => Err(DbError::ReadOnly { path: path.into(), reason }),
        None => Ok(()),
    }
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
        lock_file(&lock_path(table), Sharing::Exclusive, on_wait).map(|file| TableLock { _file: file })
    }
}

/// Whether a lock excludes every other holder or only exclusive ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sharing {
    Shared,
    Exclusive,
}

/// Opens (creating it and its directory if needed) and locks the lock file `path`; calls
/// `on_wait` once if it has to wait.
fn lock_file(path: &Path, sharing: Sharing, on_wait: &mut dyn FnMut(&Path)) -> Result<File, DbError> {
    let dir = directory(path);
    std::fs::create_dir_all(dir).map_err(|e| DbError::io(dir, "create the directory", e))?;
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| DbError::io(path, "open the lock file", e))?;
    lock_open_file(file, path, sharing, on_wait)
}

/// Locks the lock file `path` for a process that only reads the table: as [`lock_file`], but
/// where the lock file cannot be written (a read-only directory or file system), it is opened
/// read-only, and where it cannot be created, `None`: no process that writes the table could have
/// taken it.
fn lock_file_to_read(
    path: &Path,
    sharing: Sharing,
    on_wait: &mut dyn FnMut(&Path),
) -> Result<Option<File>, DbError> {
    let refused = |e: &std::io::Error| {
        matches!(e.kind(), std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem)
    };
    let file = match OpenOptions::new().create(true).truncate(false).write(true).open(path) {
        Ok(file) => file,
        Err(e) if refused(&e) => match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || refused(&e) => return Ok(None),
            Err(e) => return Err(DbError::io(path, "open the lock file", e)),
        },
        Err(e) => return Err(DbError::io(path, "open the lock file", e)),
    };
    lock_open_file(file, path, sharing, on_wait).map(Some)
}

fn lock_open_file(
    file: File,
    path: &Path,
    sharing: Sharing,
    on_wait: &mut dyn FnMut(&Path),
) -> Result<File, DbError> {
    let tried = match sharing {
        Sharing::Shared => FileExt::try_lock_shared(&file),
        Sharing::Exclusive => FileExt::try_lock_exclusive(&file),
    };
    match tried {
        Ok(true) => {}
        Ok(false) => {
            on_wait(path);
            match sharing {
                Sharing::Shared => FileExt::lock_shared(&file),
                Sharing::Exclusive => FileExt::lock_exclusive(&file),
            }
            .map_err(|e| DbError::io(path, "lock", e))?;
        }
        Err(e) => return Err(DbError::io(path, "lock", e)),
    }
    Ok(file)
}

/// The lock that says a precompute is filling a table ([`fill_lock_path`]), released when dropped:
/// held shared by every precompute of the table for its whole run, and exclusively by a reader
/// that must not see a table someone is still filling (`db merge` reading its inputs).
#[derive(Debug)]
pub struct FillLock {
    _file: File,
}

impl FillLock {
    /// Says that this process fills `table` until the lock is dropped (other precomputes of it may
    /// too); waits, calling `on_wait` with the lock file's path once, while a reader holds it
    /// exclusively.
    ///
    /// # Errors
    /// [`DbError::Io`] if the lock file cannot be created or locked.
    pub fn filling(table: &Path, on_wait: &mut dyn FnMut(&Path)) -> Result<FillLock, DbError> {
        lock_file(&fill_lock_path(table), Sharing::Shared, on_wait).map(|file| FillLock { _file: file })
    }
}

/// Everything a process that reads a whole table holds while it reads: no precompute is filling
/// it and no save is in flight (see [`TableFile::read_settled`]).
struct SettledRead {
    _filling: Option<File>,
    _saving: Option<File>,
}

impl SettledRead {
    /// Waits until no precompute fills the table at `path` (resolved) and no process saves to
    /// it, calling `on_wait` with the lock file's path once for each lock it waits for.
    fn wait(path: &Path, on_wait: &mut dyn FnMut(&Path)) -> Result<SettledRead, DbError> {
        let filling = lock_file_to_read(&fill_lock_path(path), Sharing::Exclusive, on_wait)?;
        let saving = lock_file_to_read(&lock_path(path), Sharing::Exclusive, on_wait)?;
        Ok(SettledRead { _filling: filling, _saving: saving })
    }
}

/// A table file locked to be replaced whole ([`TableFile::lock_for_replacement`]): a regular
/// file (or a new path) that is not read-only, with its lock held until this is dropped or
/// written.
#[derive(Debug)]
pub struct Replacement {
    path: PathBuf,
    _lock: TableLock,
}

impl Replacement {
    /// The file (a symbolic link resolved).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's bytes as they are now, under the lock (`None` if there is no file yet).
    ///
    /// # Errors
    /// [`DbError::Io`] if it cannot be read.
    pub fn read(&self) -> Result<Option<Vec<u8>>, DbError> {
        read_bytes(&self.path)
    }

    /// Replaces the file with `table` (one run), atomically, keeping its mode; releases the lock.
    /// Returns the new file's size.
    ///
    /// # Errors
    /// [`DbError::Io`]; the file is then unchanged.
    pub fn write(self, table: &Table) -> Result<u64, DbError> {
        let bytes = table.to_bytes();
        write_atomically(&self.path, &bytes)?;
        Ok(bytes.len() as u64)
    }
}

/// The bytes of the file at `path` (already resolved), `None` if there is none.
fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, DbError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(DbError::io(path, "read", e)),
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
        keep_mode_and_owner(path, &file).map_err(|e| DbError::io(&temp, "set the mode of", e))?;
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

/// Gives `temp`, which is to replace `path`, the mode of the file at `path` (if there is one) and,
/// where this process may, its owner: a replaced table keeps its permissions.
fn keep_mode_and_owner(path: &Path, temp: &File) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(old) = std::fs::metadata(path) else { return Ok(()) };
    // Changing the owner needs privileges a user usually lacks; the mode is what matters.
    let _ = std::os::unix::fs::fchown(temp, Some(old.uid()), Some(old.gid()));
    temp.set_permissions(old.permissions())
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
    /// [`DbError::NotAFile`] for a path that is not a table file ([`table_file_path`]);
    /// [`DbError::Io`] if it cannot be read; the errors of [`Table::from_bytes`] if it is not a
    /// valid table for `schema`.
    pub fn load(&mut self, schema: &Schema<'_>, validation: Validation) -> Result<Table, DbError> {
        match open_for_reading(&self.path)? {
            Some((path, file)) => Table::read(Box::new(file), &path, schema, validation),
            None => Ok(Table::new(schema)),
        }
    }

    /// The file's bytes (`None` if there is no file), read once no precompute fills it and no
    /// save is in flight: `on_wait` is called with a lock file's path if that means waiting. A
    /// whole-table tool that reads its inputs this way never reads a table a precompute is still
    /// writing.
    ///
    /// # Errors
    /// [`DbError::NotAFile`] for a path that is not a table file ([`table_file_path`]);
    /// [`DbError::Io`] if it cannot be locked or read.
    pub fn read_settled(&self, on_wait: &mut dyn FnMut(&Path)) -> Result<Option<Vec<u8>>, DbError> {
        let path = table_file_path(&self.path)?;
        if !path.exists() {
            return Ok(None);
        }
        let _settled = SettledRead::wait(&path, on_wait)?;
        read_bytes(&path)
    }

    /// The file's bytes (`None` if there is no file), read without any lock.
    ///
    /// # Errors
    /// As [`TableFile::read_settled`].
    pub fn read(&self) -> Result<Option<Vec<u8>>, DbError> {
        read_bytes(&table_file_path(&self.path)?)
    }

    /// Takes the table's lock to replace the file whole (`db merge -o`, `db compact`), after
    /// checking that it may be replaced; `on_wait` is called with the lock file's path if another
    /// process holds it. Saves by other processes wait until the [`Replacement`] is written or
    /// dropped, so what is read from it and written back loses nothing.
    ///
    /// # Errors
    /// [`DbError::NotAFile`] for a path that is not a table file ([`table_file_path`]);
    /// [`DbError::ReadOnly`] for a read-only table ([`read_only_reason`]), which is never
    /// replaced; [`DbError::Io`] if the lock cannot be taken.
    pub fn lock_for_replacement(&self, on_wait: &mut dyn FnMut(&Path)) -> Result<Replacement, DbError> {
        let path = table_file_path(&self.path)?;
        check_writable(&path)?;
        let lock = TableLock::acquire(&path, on_wait)?;
        // It may have changed while this process waited.
        let path = table_file_path(&self.path)?;
        check_writable(&path)?;
        remove_stale_temps(&path);
        Ok(Replacement { path, _lock: lock })
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
        self.save_with_wisdom(table.entries(), table.wisdom(), schema, on_wait)
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
        self.save_with_wisdom(entries, &[], schema, on_wait)
    }

    /// As [`TableFile::save_entries`], with measured winners too: `wisdom` replaces the file's
    /// entries for the same spec, limits and host, and the commit holds the result. A save with no new spec still commits when the wisdom changed.
    ///
    /// # Errors
    /// As [`TableFile::save_entries`].
    pub fn save_with_wisdom(
        &mut self,
        entries: &[(CanonicalSpec, Arc<Frontier>)],
        wisdom: &[WisdomEntry],
        schema: &Schema<'_>,
        on_wait: &mut dyn FnMut(&Path),
    ) -> Result<SaveReport, DbError> {
        let path = table_file_path(&self.path)?;
        check_writable(&path)?;
        let _lock = TableLock::acquire(&path, on_wait)?;
        remove_stale_temps(&path);
        let levels = schema.target.levels().len();
        let Some((path, read_handle)) = open_for_reading(&path)? else {
            let mut table = Table::from_entries(entries.to_vec(), schema);
            table.add_wisdom(&replace_wisdom(&[], wisdom));
            write_atomically_with(&path, &mut |f| table.write_to(f).map(|_| ()), &mut |_| Ok(()))?;
            let n = table.len() as u64;
            return Ok(SaveReport {
                entries: n,
                added: n,
                wisdom_added: table.wisdom().len() as u64,
                already_held: 0,
                bytes: file_size(&path),
                written: true,
                rewritten: true,
            });
        };
        check_writable(&path)?;
        let reader = Reader::open(Box::new(read_handle), &path, levels)?;
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
        let held_wisdom = &reader.index().wisdom;
        let merged_wisdom = replace_wisdom(held_wisdom, wisdom);
        let wisdom_added =
            wisdom.iter().filter(|w| merged_wisdom.contains(w) && !held_wisdom.contains(w)).count() as u64;
        let mut report = SaveReport {
            entries: reader.specs() + added,
            added,
            wisdom_added,
            already_held,
            bytes: file_size(&path),
            written: false,
            rewritten: false,
        };
        if new.is_empty() && merged_wisdom == *held_wisdom {
            return Ok(report);
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| DbError::io(&path, "open for writing", e))?;
        match writer::append(&mut file, &reader, new, &merged_wisdom, levels, &path)? {
            Plan::Appended(length) => report.bytes = length,
            Plan::Rewrite(all) => {
                let metadata = reader.metadata().clone();
                let borrowed: Vec<(Vec<u8>, &[Entry])> =
                    all.iter().map(|(k, e)| (k.clone(), e.as_slice())).collect();
                write_atomically_with(
                    &path,
                    &mut |f| writer::write_fresh(f, &metadata, &borrowed, &merged_wisdom, levels).map(|_| ()),
                    &mut |_| Ok(()),
                )?;
                report.bytes = file_size(&path);
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
