//! The index of a committed state: runs of blocks sorted by key, found through pages.
//!
//! ```text
//! index record   runs (oldest first), dead bytes (frames no run refers to), wisdom (measured
//!                winners per spec and host, see `wisdom`)
//! run            specs; pages, each with its first key and frame
//! page           up to PAGE_BLOCKS block references in the layout of a block (see `block`): per
//!                block its first key, then specs u32, frame offset u64, stored length u32, raw
//!                length u32, checksum u64 (little-endian), searchable without decoding it
//! ```
//!
//! A run is one sorted sequence of blocks with disjoint, ascending key ranges; each save that
//! adds specs writes a new run (newer runs are searched first; a spec is in at most one run).
//! A lookup finds, in each run, the last page and then the last block whose first key is at most
//! the key: one page and one block per run, each read, checked and decompressed on first use. The
//! index record itself (a few bytes per page) is read when the file is opened.

use serde::{Deserialize, Serialize};

use crate::db::block::{BLOCK_BYTES, Block, encode_block, encode_keyed, encode_record};
use crate::db::format::{Appender, FrameRef, Sink, bincode_options};
use crate::db::wisdom::WisdomEntry;
use crate::frontier::Entry;
use bincode::Options;

/// Blocks per index page.
pub(crate) const PAGE_BLOCKS: usize = 128;

/// The index of a committed state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct IndexRecord {
    /// Runs, oldest first.
    pub runs: Vec<RunRef>,
    /// Bytes of frames that no run refers to any more (merged away), for deciding when to compact.
    pub dead_bytes: u64,
    /// Measured winners, sorted by key (see `wisdom`).
    pub wisdom: Vec<WisdomEntry>,
}

impl IndexRecord {
    /// Specs over all runs.
    pub fn specs(&self) -> u64 {
        self.runs.iter().map(|r| r.specs).sum()
    }
}

/// One run: a sorted sequence of blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunRef {
    /// Specs in the run.
    pub specs: u64,
    /// Its pages, by ascending first key.
    pub pages: Vec<PageRef>,
    /// Bytes of all its frames (blocks and pages).
    pub bytes: u64,
}

/// One page of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PageRef {
    /// The first key of its first block.
    pub first_key: Vec<u8>,
    /// Its blocks.
    pub blocks: u32,
    /// Where it is.
    pub frame: FrameRef,
}

/// One block of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlockRef {
    /// Its first key.
    pub first_key: Vec<u8>,
    /// Specs in it.
    pub specs: u32,
    /// Where it is.
    pub frame: FrameRef,
}

/// Bytes of a block reference's value in a page.
const BLOCK_REF_BYTES: usize = 28;

impl BlockRef {
    /// The value bytes of this reference in a page.
    fn value(&self) -> [u8; BLOCK_REF_BYTES] {
        let mut out = [0u8; BLOCK_REF_BYTES];
        out[0..4].copy_from_slice(&self.specs.to_le_bytes());
        out[4..12].copy_from_slice(&self.frame.offset.to_le_bytes());
        out[12..16].copy_from_slice(&self.frame.len.to_le_bytes());
        out[16..20].copy_from_slice(&self.frame.raw_len.to_le_bytes());
        out[20..28].copy_from_slice(&self.frame.checksum.to_le_bytes());
        out
    }

    /// Record `i` of a page.
    ///
    /// # Errors
    /// A message if the record is not a block reference.
    pub fn of_page(page: &Block, i: usize) -> Result<BlockRef, String> {
        let v = page.value(i);
        if v.len() != BLOCK_REF_BYTES {
            return Err(format!("record {i} is {} bytes, not a block reference", v.len()));
        }
        let u32_at = |at: usize| u32::from_le_bytes(v[at..at + 4].try_into().expect("four bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(v[at..at + 8].try_into().expect("eight bytes"));
        Ok(BlockRef {
            first_key: page.key(i).to_vec(),
            specs: u32_at(0),
            frame: FrameRef { offset: u64_at(4), len: u32_at(12), raw_len: u32_at(16), checksum: u64_at(20) },
        })
    }
}

/// Encodes the index record.
pub(crate) fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    bincode_options(u64::MAX).serialize(value).expect("index records serialise")
}

/// Decodes an index record or page.
///
/// # Errors
/// bincode's message.
pub(crate) fn decode<T: for<'de> Deserialize<'de>>(raw: &[u8]) -> Result<T, String> {
    bincode_options(raw.len() as u64).deserialize(raw).map_err(|e| e.to_string())
}

/// Writes `entries` (sorted by key, keys distinct) as one run of blocks and pages.
///
/// # Errors
/// The sink's.
pub(crate) fn write_run<S: Sink>(
    out: &mut Appender<'_, S>,
    entries: &[(Vec<u8>, &[Entry])],
    levels: usize,
) -> std::io::Result<RunRef> {
    let start = out.end;
    let mut blocks: Vec<BlockRef> = Vec::new();
    let mut records: Vec<Vec<u8>> = Vec::new();
    let mut first_key: Option<&[u8]> = None;
    let mut raw_bytes = 0usize;
    let mut flush = |records: &mut Vec<Vec<u8>>, first: &mut Option<&[u8]>, raw: &mut usize| {
        let block = encode_block(records);
        let frame = out.frame(&block)?;
        blocks.push(BlockRef {
            first_key: first.take().expect("a block has a first record").to_vec(),
            specs: records.len() as u32,
            frame,
        });
        records.clear();
        *raw = 0;
        Ok::<(), std::io::Error>(())
    };
    for (key, frontier) in entries {
        let mut record = Vec::new();
        encode_record(&mut record, key, frontier, levels);
        first_key.get_or_insert(key);
        raw_bytes += record.len() + 4;
        records.push(record);
        if raw_bytes >= BLOCK_BYTES {
            flush(&mut records, &mut first_key, &mut raw_bytes)?;
        }
    }
    if !records.is_empty() {
        flush(&mut records, &mut first_key, &mut raw_bytes)?;
    }
    let mut pages = Vec::new();
    for chunk in blocks.chunks(PAGE_BLOCKS) {
        let records: Vec<Vec<u8>> = chunk
            .iter()
            .map(|b| {
                let mut record = Vec::new();
                encode_keyed(&mut record, &b.first_key, &b.value());
                record
            })
            .collect();
        let frame = out.frame(&encode_block(&records))?;
        pages.push(PageRef { first_key: chunk[0].first_key.clone(), blocks: chunk.len() as u32, frame });
    }
    Ok(RunRef { specs: entries.len() as u64, pages, bytes: out.end - start })
}

/// Index of the last item whose first key is at most `key`, given the items' first keys in
/// ascending order.
pub(crate) fn last_at_most<'a, T: 'a>(
    items: &'a [T],
    key: &[u8],
    first_key: impl Fn(&T) -> &[u8],
) -> Option<usize> {
    items.partition_point(|item| first_key(item) <= key).checked_sub(1)
}
