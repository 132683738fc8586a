//! Writing table files: a new file in one piece, or a commit that appends a run to an existing
//! one, merging small runs as it goes and rewriting the file when it is mostly dead space.
//!
//! ```text
//! fresh    header, metadata, one run, index record, slot A (sequence 1): written to a temp file
//!          and renamed over the table (see `file`)
//! append   under the lock: cut the file to its committed length (a crashed writer's tail), merge
//!          the new entries with the newest runs while the new run would be at least half the
//!          size of the run before it (or there would be more than MAX_RUNS runs), append that
//!          run and a new index record, flush, write the older slot with the next sequence,
//!          flush again; a save that adds only wisdom appends just a new index record
//! rewrite  when the merge would take every run, or dead bytes would pass half the file: all
//!          entries as a fresh file, renamed over the table
//! ```
//!
//! So a save of `n` new specs into a table of `N` writes `O(n)` bytes plus, amortised, `O(n log N)`
//! for merges (runs grow geometrically: at most `log2 N` of them), never the whole table for a
//! small save, and a lookup reads at most one block per run.

use std::fs::File;
use std::path::Path;

use crate::db::error::DbError;
use crate::db::format::{self, Appender, Commit, Metadata, SLOT_OFFSETS, Sink, slot_bytes};
use crate::db::index::{IndexRecord, encode, write_run};
use crate::db::reader::Reader;
use crate::db::reader::StoredEntry;
use crate::db::wisdom::WisdomEntry;
use crate::frontier::Entry;

/// Runs a table keeps at most (a lookup reads one block per run).
const MAX_RUNS: usize = 8;

/// Writes a new file holding `entries` (sorted by key, keys distinct) in one run and `wisdom`;
/// returns its length.
///
/// # Errors
/// The sink's.
pub(crate) fn write_fresh<S: Sink>(
    sink: &mut S,
    metadata: &Metadata,
    entries: &[(Vec<u8>, &[Entry])],
    wisdom: &[WisdomEntry],
    levels: usize,
) -> std::io::Result<u64> {
    let header = format::header(metadata);
    sink.write_at(0, &header)?;
    let mut out = Appender::new(sink, header.len() as u64);
    let runs = if entries.is_empty() { Vec::new() } else { vec![write_run(&mut out, entries, levels)?] };
    let index = out.frame(&encode(&IndexRecord { runs, dead_bytes: 0, wisdom: wisdom.to_vec() }))?;
    let length = out.end;
    let commit = Commit { slot: 0, sequence: 1, length, index };
    out.sink().write_at(SLOT_OFFSETS[0], &slot_bytes(&commit))?;
    Ok(length)
}

/// What an append decided.
#[derive(Debug)]
pub(crate) enum Plan {
    /// Appended; the file's committed length after it.
    Appended(u64),
    /// Every run would merge, or the file would be mostly dead: rewrite it whole with these
    /// entries (all of them, sorted by key).
    Rewrite(Vec<StoredEntry>),
}

/// Appends `new` (sorted by key; none of them in the file; possibly none) to the committed state
/// `reader` reads of `file` (opened for writing, under the table's lock), with `wisdom` as the
/// commit's wisdom, or says the file should be rewritten.
///
/// # Errors
/// [`DbError::Io`]; what reading the runs to merge finds; [`DbError::Disagree`] never (the caller
/// removed the specs the file holds).
pub(crate) fn append(
    file: &mut File,
    reader: &Reader,
    new: Vec<StoredEntry>,
    wisdom: &[WisdomEntry],
    levels: usize,
    path: &Path,
) -> Result<Plan, DbError> {
    let commit = *reader.commit();
    let index = reader.index();
    let io = |action: &'static str| move |e: std::io::Error| DbError::io(path, action, e);
    // Which runs the new one absorbs.
    let mut first_merged = index.runs.len();
    let mut specs = new.len() as u64;
    while !new.is_empty()
        && first_merged > 0
        && (specs * 2 >= index.runs[first_merged - 1].specs || first_merged + 1 > MAX_RUNS)
    {
        first_merged -= 1;
        specs += index.runs[first_merged].specs;
    }
    let merged_bytes: u64 = index.runs[first_merged..].iter().map(|r| r.bytes).sum();
    let dead_bytes = index.dead_bytes + merged_bytes + u64::from(commit.index.len);
    let live_bytes = commit.length - dead_bytes;
    if (first_merged == 0 && !new.is_empty()) || dead_bytes > live_bytes {
        let mut all = reader.scan()?;
        all.extend(new);
        all.sort_by(|a, b| a.0.cmp(&b.0));
        return Ok(Plan::Rewrite(all));
    }
    let mut entries = reader.scan_runs(first_merged..index.runs.len())?;
    entries.extend(new);
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let borrowed: Vec<(Vec<u8>, &[Entry])> = entries.iter().map(|(k, e)| (k.clone(), e.as_slice())).collect();
    // Cut off what a writer that died left after the committed state.
    file.set_len(commit.length).map_err(io("truncate"))?;
    let mut out = Appender::new(file, commit.length);
    let mut runs = index.runs[..first_merged].to_vec();
    if !borrowed.is_empty() {
        runs.push(write_run(&mut out, &borrowed, levels).map_err(io("write"))?);
    }
    let record = IndexRecord { runs, dead_bytes, wisdom: wisdom.to_vec() };
    let index_frame = out.frame(&encode(&record)).map_err(io("write"))?;
    let length = out.end;
    file.sync_data().map_err(io("flush to disk"))?;
    let next = Commit { slot: 1 - commit.slot, sequence: commit.sequence + 1, length, index: index_frame };
    file.write_at(SLOT_OFFSETS[next.slot], &slot_bytes(&next)).map_err(io("write"))?;
    file.sync_data().map_err(io("flush to disk"))?;
    Ok(Plan::Appended(length))
}
