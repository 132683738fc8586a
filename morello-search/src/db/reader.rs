//! Reading one committed state of a table: lookups that read only the page and block they need,
//! and a full scan for the tools that need every entry.
//!
//! ```text
//! open     header (magic, format, slots, metadata), then the index record of the newest commit
//! lookup   per run, newest first: the page, then the block that could hold the key (each read
//!          with one positioned read, checked against its checksum, decompressed and kept in a
//!          small cache), then a binary search of its keys; the first hit is the answer
//! scan     every block of every run, in key order, with every order rule checked
//! ```
//!
//! A reader opens the file read-only and never writes it. It sees the state that was committed
//! when it opened: later commits only append (or replace the file by a rename), so what it reads
//! stays valid.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rustc_hash::FxBuildHasher;

use crate::db::block::Block;
use crate::db::error::DbError;
use crate::db::format::{Commit, Header, Metadata, Storage, read_frame, read_header};
use crate::db::index::{BlockRef, IndexRecord, decode, last_at_most};
use crate::frontier::Entry;

/// Decoded blocks kept per reader; when full, the cache is emptied (a warm search touches a few
/// dozen blocks, a full scan does not use the cache).
const CACHED_BLOCKS: usize = 1024;

/// A stored entry: a spec's key and its frontier's entries.
pub(crate) type StoredEntry = (Vec<u8>, Vec<Entry>);

/// Decoded index pages by (run, page).
type PageCache = HashMap<(usize, usize), Arc<Block>, FxBuildHasher>;

/// One committed state of a table file.
pub(crate) struct Reader {
    storage: Box<dyn Storage>,
    path: PathBuf,
    header: Header,
    commit: Commit,
    index: IndexRecord,
    levels: usize,
    pages: Mutex<PageCache>,
    blocks: Mutex<HashMap<u64, Arc<Block>, FxBuildHasher>>,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("path", &self.path)
            .field("commit", &self.commit)
            .field("runs", &self.index.runs.len())
            .finish_non_exhaustive()
    }
}

impl Reader {
    /// Opens the newest committed state: checks the header and reads the index record. `levels`
    /// is the number of peak bytes per entry (the target's levels).
    ///
    /// # Errors
    /// A bad file ([`DbError::is_bad_file`]); [`DbError::Io`] if reading fails.
    pub fn open(storage: Box<dyn Storage>, path: &Path, levels: usize) -> Result<Reader, DbError> {
        let header = read_header(storage.as_ref(), path)?;
        let commit = header.commit.expect("read_header returns a commit or an error");
        let raw =
            read_frame(storage.as_ref(), &commit.index, commit.length, path, &|| "the index record".into())?;
        let index: IndexRecord = decode(&raw).map_err(|e| DbError::Corrupt {
            path: path.into(),
            detail: format!("unreadable index record: {e}"),
        })?;
        let reader = Reader {
            storage,
            path: path.into(),
            header,
            commit,
            index,
            levels,
            pages: Mutex::new(HashMap::default()),
            blocks: Mutex::new(HashMap::default()),
        };
        reader.check_index()?;
        Ok(reader)
    }

    fn check_index(&self) -> Result<(), DbError> {
        for (r, run) in self.index.runs.iter().enumerate() {
            let blocks: u64 = run.pages.iter().map(|p| u64::from(p.blocks)).sum();
            if run.pages.is_empty() || blocks > run.specs {
                return Err(
                    self.corrupt(format!("run {r} of the index record has no pages or too few specs"))
                );
            }
            for pair in run.pages.windows(2) {
                if pair[0].first_key >= pair[1].first_key {
                    return Err(self.corrupt(format!("the pages of run {r} are not in key order")));
                }
            }
        }
        Ok(())
    }

    fn corrupt(&self, detail: String) -> DbError {
        DbError::Corrupt { path: self.path.clone(), detail }
    }

    /// The metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.header.metadata
    }

    /// The commit this reader reads.
    pub fn commit(&self) -> &Commit {
        &self.commit
    }

    /// The index record.
    pub fn index(&self) -> &IndexRecord {
        &self.index
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Specs in the committed state.
    pub fn specs(&self) -> u64 {
        self.index.specs()
    }

    /// Every block's reference, run by run (reads every index page).
    ///
    /// # Errors
    /// As [`Reader::lookup`].
    pub fn blocks(&self) -> Result<Vec<BlockRef>, DbError> {
        let mut out = Vec::new();
        for (r, run) in self.index.runs.iter().enumerate() {
            for p in 0..run.pages.len() {
                let page = self.page(r, p)?;
                for b in 0..page.len() {
                    out.push(self.block_ref(&page, r, p, b)?);
                }
            }
        }
        Ok(out)
    }

    fn page(&self, run: usize, page: usize) -> Result<Arc<Block>, DbError> {
        if let Some(p) = self.pages.lock().unwrap_or_else(PoisonError::into_inner).get(&(run, page)) {
            return Ok(Arc::clone(p));
        }
        let page_ref = &self.index.runs[run].pages[page];
        let what = || format!("index page {page} of run {run}");
        let raw = read_frame(self.storage.as_ref(), &page_ref.frame, self.commit.length, &self.path, &what)?;
        let blocks =
            Block::decode(raw).map_err(|e| self.corrupt(format!("{} is unreadable: {e}", what())))?;
        if blocks.len() != page_ref.blocks as usize
            || blocks.len() == 0
            || blocks.key(0) != page_ref.first_key
        {
            return Err(self.corrupt(format!("{} does not match the index record", what())));
        }
        let blocks = Arc::new(blocks);
        self.pages.lock().unwrap_or_else(PoisonError::into_inner).insert((run, page), Arc::clone(&blocks));
        Ok(blocks)
    }

    /// Block `b` of page `p` of run `r`.
    fn block_ref(&self, page: &Block, r: usize, p: usize, b: usize) -> Result<BlockRef, DbError> {
        BlockRef::of_page(page, b).map_err(|e| self.corrupt(format!("index page {p} of run {r}: {e}")))
    }

    /// Reads and checks one block (not cached).
    fn read_block(&self, block: &BlockRef, what: &dyn Fn() -> String) -> Result<Block, DbError> {
        let raw = read_frame(self.storage.as_ref(), &block.frame, self.commit.length, &self.path, what)?;
        let decoded = Block::decode(raw).map_err(|e| self.corrupt(format!("{}: {e}", what())))?;
        if decoded.len() != block.specs as usize || decoded.len() == 0 || decoded.key(0) != block.first_key {
            return Err(self.corrupt(format!("{} does not match its index page", what())));
        }
        Ok(decoded)
    }

    fn block(&self, block: &BlockRef, what: &dyn Fn() -> String) -> Result<Arc<Block>, DbError> {
        let key = block.frame.offset;
        if let Some(b) = self.blocks.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return Ok(Arc::clone(b));
        }
        let decoded = Arc::new(self.read_block(block, what)?);
        let mut cache = self.blocks.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.len() >= CACHED_BLOCKS {
            cache.clear();
        }
        cache.insert(key, Arc::clone(&decoded));
        Ok(decoded)
    }

    /// The frontier entries stored for `key`, if any.
    ///
    /// # Errors
    /// [`DbError::Corrupt`] naming the page or block that is damaged; [`DbError::Io`].
    pub fn lookup(&self, key: &[u8]) -> Result<Option<Vec<Entry>>, DbError> {
        for (r, run) in self.index.runs.iter().enumerate().rev() {
            let Some(p) = last_at_most(&run.pages, key, |p| &p.first_key) else { continue };
            let page = self.page(r, p)?;
            let Some(b) = page.last_at_most(key) else { continue };
            let what = || format!("block {} of run {r}", p * crate::db::index::PAGE_BLOCKS + b);
            let block = self.block(&self.block_ref(&page, r, p, b)?, &what)?;
            if let Some(i) = block.find(key) {
                let entries =
                    block.entries(i, self.levels).map_err(|e| self.corrupt(format!("{}: {e}", what())))?;
                return Ok(Some(entries));
            }
        }
        Ok(None)
    }

    /// Every entry of the committed state as (key, frontier entries), sorted by key, with every
    /// rule of the layout checked: blocks and pages in key order, no key in two runs, counts as
    /// the index says.
    ///
    /// # Errors
    /// [`DbError::Corrupt`] naming what is damaged; [`DbError::Io`].
    pub fn scan(&self) -> Result<Vec<StoredEntry>, DbError> {
        self.scan_runs(0..self.index.runs.len())
    }

    /// As [`Reader::scan`], for some of the runs.
    ///
    /// # Errors
    /// As [`Reader::scan`].
    pub fn scan_runs(&self, which: std::ops::Range<usize>) -> Result<Vec<StoredEntry>, DbError> {
        let mut runs: Vec<Vec<StoredEntry>> = Vec::with_capacity(which.len());
        for (r, run) in self.index.runs.iter().enumerate().take(which.end).skip(which.start) {
            let mut entries: Vec<StoredEntry> = Vec::with_capacity(run.specs as usize);
            for p in 0..run.pages.len() {
                let page = self.page(r, p)?;
                for b in 0..page.len() {
                    let what = || format!("block {} of run {r}", p * crate::db::index::PAGE_BLOCKS + b);
                    let block = self.read_block(&self.block_ref(&page, r, p, b)?, &what)?;
                    if entries.last().is_some_and(|(last, _)| last.as_slice() >= block.key(0)) {
                        return Err(self.corrupt(format!("{} is not in key order", what())));
                    }
                    for i in 0..block.len() {
                        let frontier = block
                            .entries(i, self.levels)
                            .map_err(|e| self.corrupt(format!("{}: {e}", what())))?;
                        entries.push((block.key(i).to_vec(), frontier));
                    }
                }
            }
            if entries.len() as u64 != run.specs {
                return Err(self.corrupt(format!(
                    "run {r} holds {} specs, and the index record says {}",
                    entries.len(),
                    run.specs
                )));
            }
            runs.push(entries);
        }
        let total: usize = runs.iter().map(Vec::len).sum();
        let mut all: Vec<StoredEntry> = runs.into_iter().flatten().collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all.dedup_by(|a, b| a.0 == b.0);
        if all.len() != total {
            return Err(
                self.corrupt(format!("{} spec(s) are stored in more than one run", total - all.len()))
            );
        }
        Ok(all)
    }
}
