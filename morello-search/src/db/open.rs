//! A search's memo table: where it lives, loading it before a search and saving it after.
//!
//! ```text
//! location  Memory (nothing loaded or saved), a file, or the default table of the target:
//!           $XDG_CACHE_HOME/morello/<name>, else $HOME/.cache/morello/<name>, where <name> is
//!           <target>-<fingerprint>-f<format>-m<model>[-pow2-tiles|-all-tiles][-unpruned].mdb:
//!           one table per target, model and action configuration, so an upgrade or another
//!           target starts a new file
//! open      the header, identity and index record are read and checked (a bad file is an
//!           error and is not touched); entries are read when a search asks for them: the memo
//!           looks up what it does not hold in the file, one block at a time (a damaged block
//!           stops the search with an error naming it, and nothing is saved to that file)
//! read-only a file with no write permission bit, in a directory with none, or that this process
//!           cannot open for writing (permissions, a read-only file system) is read and searched
//!           with, never saved to (also as root, who may write anything: chmod 444 means keep it)
//! save      only if the memo holds specs the search solved; under the table's lock, appended
//!           as one commit, without those another process saved meanwhile (see `file`)
//! ```
//!
//! ```no_run
//! use morello_core::spec::SpecBuilder;
//! use morello_core::target::{MemVec, Target};
//! use morello_search::db::{OpenTable, TableLocation};
//! use morello_search::{ActionConfig, Search};
//!
//! let target = Target::builtin("x86-avx2", 1).unwrap();
//! let spec = SpecBuilder::matmul(64, 64, 64).build(&target).unwrap();
//! let mut table = OpenTable::open(&TableLocation::Default, &target, ActionConfig::default()).unwrap();
//! let solution = Search::new(&target).memo(table.memo()).solve(&spec).unwrap();
//! table.save(&mut |_lock| {}).unwrap();
//! println!("cost {}", solution.cost);
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use morello_core::spec::CanonicalSpec;
use morello_core::target::{MemVec, Target};

use crate::actions::{ActionConfig, DividingTiles, Remainders, TileSizes};
use crate::db::access::{Access, read_only_reason};
use crate::db::error::DbError;
use crate::db::file::{TableFile, open_for_reading, table_file_path};
use crate::db::format::FORMAT_VERSION;
use crate::db::format::spec_key;
use crate::db::identity::{MODEL_VERSION, Schema};
use crate::db::reader::Reader;
use crate::db::table::{SaveReport, check_identity};
use crate::db::validate::{FrontierCheck, check_frontier};
use crate::db::wisdom::{WisdomEntry, replace_wisdom, wisdom_limits};
use crate::frontier::Frontier;
use crate::memo::{Memo, MemoSource};
use crate::peaks::{PeakCodec, Peaks};

/// Where a search's memo table lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableLocation {
    /// In memory only: nothing is loaded or saved.
    Memory,
    /// The default table of the target and action configuration ([`default_table_path`]).
    Default,
    /// This file.
    File(PathBuf),
}

impl TableLocation {
    /// The file, if any (resolving [`TableLocation::Default`]).
    ///
    /// # Errors
    /// As [`default_table_dir`].
    pub fn path(&self, target: &Target, actions: &ActionConfig) -> Result<Option<PathBuf>, DbError> {
        match self {
            TableLocation::Memory => Ok(None),
            TableLocation::Default => default_table_path(target, actions).map(Some),
            TableLocation::File(path) => Ok(Some(path.clone())),
        }
    }
}

/// The directory of default tables: `$XDG_CACHE_HOME/morello`, else `$HOME/.cache/morello`
/// (relative values are ignored, as the XDG specification says).
///
/// # Errors
/// [`DbError::NoCacheDirectory`] if neither variable holds an absolute path.
pub fn default_table_dir() -> Result<PathBuf, DbError> {
    let absolute = |name: &str| std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(cache) = absolute("XDG_CACHE_HOME") {
        return Ok(cache.join("morello"));
    }
    if let Some(home) = absolute("HOME") {
        return Ok(home.join(".cache").join("morello"));
    }
    Err(DbError::NoCacheDirectory)
}

/// The default table's file name for a target and action configuration: the target's name
/// (characters other than `[A-Za-z0-9._-]` replaced by `_`), its fingerprint, the format and model
/// versions, and the action configuration when it is not the default.
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
        TileSizes::Coarse => file.push_str("-pow4-tiles"),
    }
    if actions.remainders == Remainders::EveryTile {
        file.push_str("-every-remainder");
    }
    if actions.dividing_tiles == DividingTiles::Every {
        file.push_str("-every-dividing-tile");
    }
    if !actions.prune_infeasible {
        file.push_str("-unpruned");
    }
    file.push_str(".mdb");
    file
}

/// The default table of a target and action configuration: [`default_file_name`] in
/// [`default_table_dir`].
///
/// # Errors
/// As [`default_table_dir`].
pub fn default_table_path(target: &Target, actions: &ActionConfig) -> Result<PathBuf, DbError> {
    Ok(default_table_dir()?.join(default_file_name(target, actions)))
}

/// The memo source of an open table file: lookups into its committed state at open.
#[derive(Debug)]
struct TableSource {
    reader: Reader,
    target: Target,
    capacities: Peaks,
}

impl MemoSource for TableSource {
    fn lookup(&self, spec: &CanonicalSpec) -> Result<Option<Arc<Frontier>>, String> {
        let Some(entries) = self.reader.lookup(&spec_key(spec)).map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        check_frontier(entries, self.capacities, FrontierCheck::Ordered).map(Some).map_err(|reason| {
            DbError::Invalid {
                path: self.reader.path().into(),
                spec: spec.display(&self.target).to_string(),
                reason,
            }
            .to_string()
        })
    }
}

/// A search's memo table: in memory only, or a file that the memo reads from as the search asks
/// and that what the search solved is saved back to.
#[derive(Debug)]
pub struct OpenTable<'t> {
    schema: Schema<'t>,
    file: Option<TableFile>,
    access: Access,
    memo: Arc<Memo>,
    /// Specs in the file when the table was opened.
    opened: u64,
    load_time: Duration,
    /// Measured winners: the file's when it was opened, with those saved since.
    wisdom: Vec<WisdomEntry>,
    /// Measured winners recorded and not yet saved.
    pending: Vec<WisdomEntry>,
}

impl<'t> OpenTable<'t> {
    /// Opens the table at `location` for `target` and `actions`: checks the file's header, its
    /// identity and its index (entries are read when a search asks for them); a file that does
    /// not exist yet is an empty table (created by the first save). A read-only file
    /// ([`read_only_reason`]) is read and never saved to ([`OpenTable::access`]).
    ///
    /// # Errors
    /// [`DbError::NoCacheDirectory`] for the default table without a cache directory;
    /// [`DbError::NotAFile`] for a path that names no table file (a directory, FIFO, device);
    /// a bad file (see [`DbError::is_bad_file`]), left as it is; [`DbError::Io`] if it cannot be
    /// read.
    pub fn open(
        location: &TableLocation,
        target: &'t Target,
        actions: ActionConfig,
    ) -> Result<Self, DbError> {
        let start = Instant::now();
        let schema = Schema::new(target, actions);
        let Some(path) = location.path(target, &actions)? else {
            return Ok(OpenTable::in_memory(schema));
        };
        let path = table_file_path(&path)?;
        let (memo, opened, wisdom) = match open_for_reading(&path)? {
            Some((_, handle)) => {
                let reader = Reader::open(Box::new(handle), &path, target.levels().len())?;
                check_identity(&reader, &schema)?;
                let opened = reader.specs();
                let wisdom = reader.index().wisdom.clone();
                let capacities = PeakCodec::new(target).encode_limits(&target.capacities());
                let source = TableSource { reader, target: target.clone(), capacities };
                (Memo::with_source(Arc::new(source)), opened, wisdom)
            }
            None => (Memo::new(), 0, Vec::new()),
        };
        let access = read_only_reason(&path).map_or(Access::ReadWrite, Access::ReadOnly);
        Ok(OpenTable {
            schema,
            file: Some(TableFile::new(path)),
            access,
            memo: Arc::new(memo),
            opened,
            load_time: start.elapsed(),
            wisdom,
            pending: Vec::new(),
        })
    }

    /// A table in memory only (nothing loaded, nothing saved).
    pub fn in_memory(schema: Schema<'t>) -> Self {
        OpenTable {
            schema,
            file: None,
            access: Access::ReadWrite,
            memo: Arc::new(Memo::new()),
            opened: 0,
            load_time: Duration::ZERO,
            wisdom: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// The memo table to search with (shared: searches fill it, [`OpenTable::save`] writes what
    /// they solved).
    pub fn memo(&self) -> Arc<Memo> {
        Arc::clone(&self.memo)
    }

    /// The schema (target, actions, identity) the table is checked against.
    pub fn schema(&self) -> &Schema<'t> {
        &self.schema
    }

    /// The file, unless in memory only.
    pub fn path(&self) -> Option<&Path> {
        self.file.as_ref().map(TableFile::path)
    }

    /// Whether saves may replace the file.
    pub fn access(&self) -> Access {
        self.access
    }

    /// Specs the file held when the table was opened.
    pub fn opened(&self) -> u64 {
        self.opened
    }

    /// How long opening took (reading and checking the header, identity and index).
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// Whether the memo holds specs the search solved that the file does not, or measured
    /// winners it does not (so [`OpenTable::save`] would write).
    pub fn has_unsaved(&self) -> bool {
        self.file.is_some()
            && self.access == Access::ReadWrite
            && (self.memo.unsaved_len() > 0 || !self.pending.is_empty())
    }

    /// Every measured winner the table holds (the file's as opened, and those recorded since).
    pub fn wisdom(&self) -> Vec<WisdomEntry> {
        replace_wisdom(&self.wisdom, &self.pending)
    }

    /// The measured winner for `spec` under `limits` on the host with `fingerprint`, if the table
    /// holds one (recorded by this process first, then the file's). It is not checked here: a
    /// caller re-applies its decisions ([`crate::rebuild_decisions`]) and compares costs.
    pub fn wisdom_for(
        &self,
        spec: &CanonicalSpec,
        limits: &MemVec,
        fingerprint: u64,
    ) -> Option<&WisdomEntry> {
        let key = spec_key(spec);
        let limits = wisdom_limits(limits, self.schema.target);
        self.pending.iter().chain(&self.wisdom).find(|w| w.answers(&key, &limits, fingerprint))
    }

    /// Records a measured winner, saved by the next [`OpenTable::save`] (one per spec, limits and
    /// host: it replaces one recorded before for the same).
    pub fn record_wisdom(&mut self, entry: WisdomEntry) {
        self.pending.retain(|w| !w.same_key(&entry));
        self.pending.push(entry);
    }

    /// Saves the specs the search solved, appended to the file as one commit (without those
    /// other processes saved meanwhile); `on_wait` is called with the lock file's path if another
    /// process holds the lock. `None` when there was nothing to save (or no file, or a read-only
    /// one).
    ///
    /// # Errors
    /// [`DbError::Damaged`] if a search found part of the file damaged (nothing is written to
    /// it); [`DbError::Io`] if the file cannot be locked or written; a bad file if the file on
    /// disk became one meanwhile (it is then left as it is); [`DbError::Disagree`] if it
    /// disagrees.
    pub fn save(&mut self, on_wait: &mut dyn FnMut(&Path)) -> Result<Option<SaveReport>, DbError> {
        let Some(file) = &mut self.file else { return Ok(None) };
        if let Some(message) = self.memo.failure() {
            return Err(DbError::Damaged { message: message.to_string() });
        }
        if self.access != Access::ReadWrite || (self.memo.unsaved_len() == 0 && self.pending.is_empty()) {
            return Ok(None);
        }
        let unsaved = self.memo.unsaved();
        let report = file.save_with_wisdom(&unsaved, &self.pending, &self.schema, on_wait)?;
        self.memo.mark_saved(unsaved.iter().map(|(s, _)| s));
        self.wisdom = replace_wisdom(&self.wisdom, &self.pending);
        self.pending.clear();
        Ok(Some(report))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use morello_core::spec::SpecBuilder;

    use super::*;
    use crate::Search;
    use crate::db::access::ReadOnlyReason;

    fn set_mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A table file at `path` holding the solved 4x4x4 matmul.
    fn saved_table(target: &Target, path: &Path) {
        let location = TableLocation::File(path.to_path_buf());
        let mut table = OpenTable::open(&location, target, ActionConfig::default()).unwrap();
        let spec = SpecBuilder::matmul(4, 4, 4).build(target).unwrap();
        Search::new(target).memo(table.memo()).solve(&spec).unwrap();
        assert!(table.save(&mut |_| {}).unwrap().is_some_and(|r| r.written));
    }

    /// Opens the table at `path`, searches a spec it does not hold, saves, and checks that the
    /// file is exactly as it was and still has `mode`.
    fn check_read_and_kept(target: &Target, path: &Path, mode: u32, reason: ReadOnlyReason) {
        let before = std::fs::read(path).unwrap();
        let location = TableLocation::File(path.to_path_buf());
        let mut table = OpenTable::open(&location, target, ActionConfig::default()).unwrap();
        assert_eq!(table.access(), Access::ReadOnly(reason));
        assert!(table.opened() > 0, "the read-only table is read");
        let spec = SpecBuilder::matmul(8, 8, 8).build(target).unwrap();
        let report = Search::new(target).memo(table.memo()).solve(&spec).unwrap().report;
        assert!(report.memo_hits > 0, "and used");
        assert!(!table.has_unsaved());
        assert_eq!(table.save(&mut |_| {}).unwrap(), None);
        assert_eq!(std::fs::read(path).unwrap(), before, "never replaced");
        assert_eq!(std::fs::metadata(path).unwrap().permissions().mode() & 0o777, mode);
    }

    #[test]
    fn a_table_without_write_permission_is_read_and_never_replaced() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.mdb");
        saved_table(&target, &path);
        set_mode(&path, 0o444);
        check_read_and_kept(&target, &path, 0o444, ReadOnlyReason::FileMode);
    }

    #[test]
    fn a_table_in_a_read_only_directory_is_read_and_never_replaced() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("ro");
        std::fs::create_dir(&folder).unwrap();
        let path = folder.join("t.mdb");
        saved_table(&target, &path);
        set_mode(&folder, 0o555);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        check_read_and_kept(&target, &path, mode, ReadOnlyReason::DirectoryMode);
        set_mode(&folder, 0o755);
    }

    #[test]
    fn a_writable_table_is_read_write() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.mdb");
        assert_eq!(read_only_reason(&path), None, "a missing file is created by the first save");
        saved_table(&target, &path);
        assert_eq!(read_only_reason(&path), None);
    }
}
