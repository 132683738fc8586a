//! The container of a table file: a fixed header with two commit slots, the metadata, and
//! append-only checksummed frames (blocks of entries, index pages, index records).
//!
//! ```text
//! offset  bytes  field
//!  0       8     magic         89 4D 4F 52 0D 0A 1A 0A   ("\x89MOR\r\n\x1a\n")
//!  8       4     format        FORMAT_VERSION, u32 little-endian
//! 12       4     zero
//! 16      48     commit slot A \  sequence u64, committed length u64, index frame (offset u64,
//! 64      48     commit slot B /  length u32, raw length u32, checksum u64), slot checksum u64
//! 112      4     metadata length M, u32
//! 116      8     metadata checksum, u64
//! 124      M     metadata      bincode: identity, the target's description (never changes)
//! 124+M   ...    frames        zstd, each with its offset, lengths and checksum in its parent
//! ```
//!
//! A commit appends frames after the committed length, flushes them to disk, then writes the
//! slot holding the older state (sequence + 1, the new length and index), and flushes again.
//! A reader takes the valid slot with the higher sequence: a slot torn by a crash fails its
//! checksum and the other, older state is read; bytes past the committed length (an append that
//! never committed) are ignored and cut off by the next writer. Committed bytes are never
//! changed, so a reader is never disturbed by a writer (a compaction replaces the whole file by
//! an atomic rename).
//!
//! The magic's first byte is not ASCII and it holds `\r\n` and `\x1a`, so a text file never looks
//! like a table and a newline conversion shows up at once. Checksums are FNV-1a 64, which detects
//! every change of a single byte (each step is a bijection of the state); they are not a defence
//! against a deliberately forged file, which validation handles.
//!
//! [`FORMAT_VERSION`] changes when this layout or the encoding of frames changes;
//! [`crate::db::MODEL_VERSION`] when what the entries mean changes.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use bincode::Options;
use morello_core::spec::{CanonicalSpec, LogicalSpec};
use serde::{Deserialize, Serialize};

use crate::db::error::DbError;
use crate::db::identity::TableIdentity;

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = [0x89, b'M', b'O', b'R', b'\r', b'\n', 0x1a, b'\n'];

/// The version of the container and frame layout this build reads and writes.
pub const FORMAT_VERSION: u32 = 4;

/// Bytes of one commit slot.
pub(crate) const SLOT_BYTES: usize = 48;

/// Where the two slots start.
pub(crate) const SLOT_OFFSETS: [u64; 2] = [16, 64];

/// Bytes of the fixed header (prefix, slots, metadata length and checksum).
pub const HEADER_BYTES: usize = 124;

/// The largest metadata or frame (uncompressed) a table may declare (a sanity bound against
/// forged headers; blocks and pages are far smaller).
const MAX_FRAME_BYTES: u32 = 1 << 28;

/// The zstd level of frames (blocks are small, so higher levels cost little time and gain little).
const ZSTD_LEVEL: i32 = 9;

/// What the metadata says: who the table is for (never changes after the file is created).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// The target, model and actions the entries were computed for.
    pub identity: TableIdentity,
    /// The target's description as JSON (a target file), so that a table describes itself.
    pub target: String,
}

/// Where a frame is and how to check it: its bytes `offset..offset + len` in the file, zstd of
/// `raw_len` bytes, with FNV-1a 64 `checksum` of the stored bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameRef {
    /// The first byte.
    pub offset: u64,
    /// Stored (compressed) bytes.
    pub len: u32,
    /// Bytes after decompression.
    pub raw_len: u32,
    /// FNV-1a 64 of the stored bytes.
    pub checksum: u64,
}

impl FrameRef {
    /// The first byte after the frame.
    pub fn end(&self) -> u64 {
        self.offset + u64::from(self.len)
    }
}

/// A committed state: which slot, its sequence, the file's committed length and the index frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Commit {
    /// The slot (0 or 1) that holds it.
    pub slot: usize,
    /// Increases by one with every commit.
    pub sequence: u64,
    /// Bytes of the file that belong to this state.
    pub length: u64,
    /// The index record.
    pub index: FrameRef,
}

/// The bincode options of every record: varint integers, little-endian, trailing bytes refused,
/// at most `limit` bytes read.
pub(crate) fn bincode_options(limit: u64) -> impl Options {
    bincode::DefaultOptions::new().with_limit(limit).reject_trailing_bytes()
}

/// FNV-1a 64 of some byte strings, one after the other.
pub(crate) fn fnv(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// Where a table's bytes are read from: a file (positioned reads, so threads share it) or bytes
/// in memory.
pub(crate) trait Storage: Send + Sync {
    /// The number of bytes.
    fn size(&self) -> u64;
    /// Fills `buf` from `offset` (which the caller checked against [`Storage::size`]).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()>;
}

impl Storage for File {
    fn size(&self) -> u64 {
        self.metadata().map_or(0, |m| m.len())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.read_exact_at(buf, offset)
    }
}

impl Storage for Vec<u8> {
    fn size(&self) -> u64 {
        self.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let start = usize::try_from(offset).map_err(std::io::Error::other)?;
        let bytes = self
            .get(start..start + buf.len())
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

/// Where a table's bytes are written: a file (positioned writes) or bytes in memory.
pub(crate) trait Sink {
    /// Writes `bytes` at `offset` (extending the storage if needed).
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()>;
}

impl Sink for File {
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        self.write_all_at(bytes, offset)
    }
}

impl Sink for Vec<u8> {
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        let start = usize::try_from(offset).map_err(std::io::Error::other)?;
        if self.len() < start + bytes.len() {
            self.resize(start + bytes.len(), 0);
        }
        self[start..start + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }
}

/// Writes frames one after another from a position, keeping track of the end.
pub(crate) struct Appender<'s, S: Sink> {
    sink: &'s mut S,
    /// The next free byte.
    pub end: u64,
}

impl<'s, S: Sink> Appender<'s, S> {
    /// Appends from `end`.
    pub fn new(sink: &'s mut S, end: u64) -> Self {
        Appender { sink, end }
    }

    /// Compresses `raw` and appends it as a frame.
    ///
    /// # Errors
    /// The sink's.
    pub fn frame(&mut self, raw: &[u8]) -> std::io::Result<FrameRef> {
        let stored = zstd::bulk::compress(raw, ZSTD_LEVEL)?;
        let frame = FrameRef {
            offset: self.end,
            len: u32::try_from(stored.len()).map_err(std::io::Error::other)?,
            raw_len: u32::try_from(raw.len()).map_err(std::io::Error::other)?,
            checksum: fnv(&[&stored]),
        };
        self.sink.write_at(self.end, &stored)?;
        self.end = frame.end();
        Ok(frame)
    }

    /// The sink.
    pub fn sink(&mut self) -> &mut S {
        self.sink
    }
}

/// The fixed prefix and the metadata of a new file (both slots empty).
pub(crate) fn header(metadata: &Metadata) -> Vec<u8> {
    let meta = bincode_options(u64::MAX).serialize(metadata).expect("metadata serialises");
    let mut out = Vec::with_capacity(HEADER_BYTES + meta.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&[0; 2 * SLOT_BYTES]);
    out.extend_from_slice(&u32::try_from(meta.len()).expect("metadata is small").to_le_bytes());
    out.extend_from_slice(&fnv(&[&meta]).to_le_bytes());
    out.extend_from_slice(&meta);
    out
}

/// The bytes of a commit's slot.
pub(crate) fn slot_bytes(commit: &Commit) -> [u8; SLOT_BYTES] {
    let mut out = [0u8; SLOT_BYTES];
    out[0..8].copy_from_slice(&commit.sequence.to_le_bytes());
    out[8..16].copy_from_slice(&commit.length.to_le_bytes());
    out[16..24].copy_from_slice(&commit.index.offset.to_le_bytes());
    out[24..28].copy_from_slice(&commit.index.len.to_le_bytes());
    out[28..32].copy_from_slice(&commit.index.raw_len.to_le_bytes());
    out[32..40].copy_from_slice(&commit.index.checksum.to_le_bytes());
    let sum = fnv(&[&MAGIC, &FORMAT_VERSION.to_le_bytes(), &out[..40]]);
    out[40..48].copy_from_slice(&sum.to_le_bytes());
    out
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
}

/// The commit a slot's bytes hold, if they are intact.
fn parse_slot(slot: usize, bytes: &[u8]) -> Option<Commit> {
    let sum = fnv(&[&MAGIC, &FORMAT_VERSION.to_le_bytes(), &bytes[..40]]);
    if sum != u64_at(bytes, 40) {
        return None;
    }
    Some(Commit {
        slot,
        sequence: u64_at(bytes, 0),
        length: u64_at(bytes, 8),
        index: FrameRef {
            offset: u64_at(bytes, 16),
            len: u32_at(bytes, 24),
            raw_len: u32_at(bytes, 28),
            checksum: u64_at(bytes, 32),
        },
    })
}

/// Checks the magic and format version of a file's first bytes (at least 12, or the whole file
/// if shorter).
///
/// # Errors
/// [`DbError::NotATable`], [`DbError::Truncated`] or [`DbError::FormatVersion`].
pub(crate) fn check_prefix(bytes: &[u8], file_len: u64, path: &Path) -> Result<(), DbError> {
    let prefix = bytes.len().min(MAGIC.len());
    if bytes[..prefix] != MAGIC[..prefix] {
        return Err(DbError::NotATable { path: path.into() });
    }
    if bytes.len() < 12 {
        return Err(DbError::Truncated { path: path.into(), found: file_len, expected: None });
    }
    let format = u32_at(bytes, 8);
    if format != FORMAT_VERSION {
        return Err(DbError::FormatVersion { path: path.into(), found: format, supported: FORMAT_VERSION });
    }
    Ok(())
}

/// What the fixed header says: the newest intact commit (if any) and the metadata.
#[derive(Debug, Clone)]
pub(crate) struct Header {
    /// The newest intact commit; `None` for a file whose first commit never completed.
    pub commit: Option<Commit>,
    /// The metadata.
    pub metadata: Metadata,
}

/// Reads and checks a file's header: magic, format version, slots, metadata.
///
/// # Errors
/// [`DbError::NotATable`], [`DbError::Truncated`], [`DbError::FormatVersion`] or
/// [`DbError::Corrupt`]; [`DbError::Io`] if reading fails.
pub(crate) fn read_header(storage: &dyn Storage, path: &Path) -> Result<Header, DbError> {
    let size = storage.size();
    let corrupt = |detail: String| DbError::Corrupt { path: path.into(), detail };
    let mut fixed = vec![0u8; HEADER_BYTES.min(usize::try_from(size).unwrap_or(HEADER_BYTES))];
    storage.read_at(0, &mut fixed).map_err(|e| DbError::io(path, "read", e))?;
    check_prefix(&fixed, size, path)?;
    if fixed.len() < HEADER_BYTES {
        return Err(DbError::Truncated { path: path.into(), found: size, expected: None });
    }
    if u32_at(&fixed, 12) != 0 {
        return Err(corrupt("its header has bytes set that must be zero".into()));
    }
    let commits: Vec<Commit> = (0..2)
        .filter_map(|slot| {
            let at = SLOT_OFFSETS[slot] as usize;
            parse_slot(slot, &fixed[at..at + SLOT_BYTES])
        })
        .collect();
    let commit = commits.iter().copied().max_by_key(|c| c.sequence);
    let meta_len = u32_at(&fixed, 112);
    let data_start = HEADER_BYTES as u64 + u64::from(meta_len);
    if let Some(c) = commit {
        if size < c.length {
            return Err(DbError::Truncated { path: path.into(), found: size, expected: Some(c.length) });
        }
        if c.length < data_start || c.index.end() > c.length || c.index.offset < data_start {
            return Err(corrupt("its commit record points outside the file".into()));
        }
    } else if slot_is_empty(&fixed, 0) && slot_is_empty(&fixed, 1) {
        // A file whose first commit never happened: only a crashed writer leaves one, and morello
        // creates files by renaming a complete one, so this is damage.
        return Err(corrupt("it has no commit record".into()));
    } else {
        return Err(corrupt("neither of its commit records is intact".into()));
    }
    if meta_len > MAX_FRAME_BYTES || size < data_start {
        return Err(if size < data_start && meta_len <= MAX_FRAME_BYTES {
            DbError::Truncated { path: path.into(), found: size, expected: Some(data_start) }
        } else {
            corrupt("its metadata length is implausible".into())
        });
    }
    let mut meta = vec![0u8; meta_len as usize];
    storage.read_at(HEADER_BYTES as u64, &mut meta).map_err(|e| DbError::io(path, "read", e))?;
    if fnv(&[&meta]) != u64_at(&fixed, 116) {
        return Err(corrupt("its metadata does not match its checksum".into()));
    }
    let metadata: Metadata = bincode_options(u64::from(meta_len))
        .deserialize(&meta)
        .map_err(|e| corrupt(format!("unreadable metadata: {e}")))?;
    Ok(Header { commit, metadata })
}

fn slot_is_empty(fixed: &[u8], slot: usize) -> bool {
    let at = SLOT_OFFSETS[slot] as usize;
    fixed[at..at + SLOT_BYTES].iter().all(|&b| b == 0)
}

/// Reads, checks and decompresses one frame of a committed state. `what` names the frame in
/// messages ("block 3 of run 1").
///
/// # Errors
/// [`DbError::Corrupt`] naming the frame; [`DbError::Io`] if reading fails.
pub(crate) fn read_frame(
    storage: &dyn Storage,
    frame: &FrameRef,
    committed: u64,
    path: &Path,
    what: &dyn Fn() -> String,
) -> Result<Vec<u8>, DbError> {
    let corrupt = |detail: String| DbError::Corrupt {
        path: path.into(),
        detail: format!("{} at byte {}: {detail}", what(), frame.offset),
    };
    if frame.end() > committed || frame.raw_len > MAX_FRAME_BYTES {
        return Err(corrupt("it lies outside the committed part of the file".into()));
    }
    let mut stored = vec![0u8; frame.len as usize];
    storage.read_at(frame.offset, &mut stored).map_err(|e| DbError::io(path, "read", e))?;
    if fnv(&[&stored]) != frame.checksum {
        return Err(corrupt("its checksum does not match its content".into()));
    }
    let raw = decompress(&stored, frame.raw_len as usize)
        .map_err(|e| corrupt(format!("it does not decompress: {e}")))?;
    if raw.len() != frame.raw_len as usize {
        return Err(corrupt(format!("it is {} bytes, and its index says {}", raw.len(), frame.raw_len)));
    }
    Ok(raw)
}

thread_local! {
    /// A decompression context per thread, reused (creating one costs more than a small frame).
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Decompresses a zstd frame of at most `capacity` bytes.
fn decompress(stored: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new()?);
        }
        slot.as_mut().expect("the decompressor was just created").decompress(stored, capacity)
    })
}

/// The key of a spec in a table file: its serde serialisation (bincode, varint integers), so a
/// table stores whatever a [`CanonicalSpec`] holds without a schema of its own.
pub fn spec_key(spec: &CanonicalSpec) -> Vec<u8> {
    bincode_options(u64::MAX).serialize(spec).expect("a spec serialises")
}

/// The logical spec a key encodes (not yet validated for a target).
///
/// # Errors
/// bincode's message.
pub(crate) fn logical_of_key(key: &[u8]) -> Result<LogicalSpec, String> {
    bincode_options(key.len() as u64).deserialize(key).map_err(|e| e.to_string())
}
