//! Blocks: runs of entries (a spec's key and its frontier), sorted by key, searchable without
//! decoding more than the entry asked for.
//!
//! ```text
//! block    n u32 | ends u32 x n | records       (record i is records[ends[i-1]..ends[i]])
//! record   key length (varint) | key | frontier
//! key      the spec's serde serialisation (bincode, varint integers): whatever a CanonicalSpec
//!          holds, with no schema of its own here; keys compare as bytes
//! frontier entry count (varint), then per entry: cost (varint; for all but the first, the
//!          increase over the previous: frontiers are sorted by cost), one peak byte per level,
//!          depth (varint), action (varint)
//! ```
//!
//! A block is compressed and checksummed as one frame (see `format`). Decoding checks the
//! offsets and that keys strictly ascend; a frontier decodes only when asked for, and every
//! malformed byte is an error, never a panic.

use crate::frontier::Entry;
use crate::peaks::Peaks;

/// Blocks are cut once their raw size reaches this (a lookup decompresses one block).
pub(crate) const BLOCK_BYTES: usize = 4 * 1024;

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads a varint at `*at`, advancing it.
fn get_varint(bytes: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at).ok_or("a number runs past the end of its record")?;
        *at += 1;
        value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
        if byte & 0x80 == 0 {
            if shift == 63 && byte > 1 {
                return Err("a number overflows 64 bits".into());
            }
            return Ok(value);
        }
    }
    Err("a number is longer than 10 bytes".into())
}

/// Appends one record of a key and raw value bytes (index pages use these: see `index`).
pub(crate) fn encode_keyed(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    put_varint(out, key.len() as u64);
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

/// Appends one record.
pub(crate) fn encode_record(out: &mut Vec<u8>, key: &[u8], entries: &[Entry], levels: usize) {
    put_varint(out, key.len() as u64);
    out.extend_from_slice(key);
    put_varint(out, entries.len() as u64);
    let mut previous = 0u64;
    for (i, e) in entries.iter().enumerate() {
        put_varint(out, if i == 0 { e.cost } else { e.cost.wrapping_sub(previous) });
        previous = e.cost;
        for level in 0..levels {
            out.push((e.peaks.0 >> (56 - 8 * level)) as u8);
        }
        put_varint(out, u64::from(e.depth));
        put_varint(out, u64::from(e.action));
    }
}

/// The raw bytes of a block holding `records` (each already encoded with [`encode_record`]).
pub(crate) fn encode_block(records: &[Vec<u8>]) -> Vec<u8> {
    let body: usize = records.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(4 + 4 * records.len() + body);
    out.extend_from_slice(&(records.len() as u32).to_le_bytes());
    let mut end = 0u32;
    for r in records {
        end += r.len() as u32;
        out.extend_from_slice(&end.to_le_bytes());
    }
    for r in records {
        out.extend_from_slice(r);
    }
    out
}

/// A decompressed block whose record boundaries and key order were checked.
#[derive(Debug)]
pub(crate) struct Block {
    raw: Vec<u8>,
    /// Per record: where its key starts and ends, and where the record ends.
    records: Vec<RecordSpan>,
}

#[derive(Debug, Clone, Copy)]
struct RecordSpan {
    key_start: usize,
    key_end: usize,
    end: usize,
}

impl Block {
    /// Checks a block's structure: its record offsets and strictly ascending keys.
    ///
    /// # Errors
    /// What is wrong (the caller names the block).
    pub fn decode(raw: Vec<u8>) -> Result<Block, String> {
        let count = raw.get(..4).ok_or("it is shorter than its record count")?;
        let n = u32::from_le_bytes(count.try_into().expect("four bytes")) as usize;
        let body = n.checked_mul(4).and_then(|b| b.checked_add(4)).filter(|&b| b <= raw.len());
        let body = body.ok_or("its record offsets run past its end")?;
        let mut records = Vec::with_capacity(n);
        let mut start = body;
        for i in 0..n {
            let end =
                body + u32::from_le_bytes(raw[4 + 4 * i..8 + 4 * i].try_into().expect("four bytes")) as usize;
            if end < start || end > raw.len() {
                return Err(format!("record {i} has offsets out of order or past the end"));
            }
            let mut at = start;
            let key_len = get_varint(&raw[..end], &mut at).map_err(|e| format!("record {i}: {e}"))?;
            let key_end = usize::try_from(key_len)
                .ok()
                .and_then(|l| at.checked_add(l))
                .filter(|&k| k <= end)
                .ok_or_else(|| format!("record {i}: its key runs past the record"))?;
            records.push(RecordSpan { key_start: at, key_end, end });
            start = end;
        }
        if start != raw.len() {
            return Err(format!("{} bytes after its last record", raw.len() - start));
        }
        let block = Block { raw, records };
        for i in 1..n {
            if block.key(i - 1) >= block.key(i) {
                return Err(format!("its keys are not in strictly ascending order at record {i}"));
            }
        }
        Ok(block)
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// The key of record `i`.
    pub fn key(&self, i: usize) -> &[u8] {
        let r = self.records[i];
        &self.raw[r.key_start..r.key_end]
    }

    /// The bytes of record `i` after its key.
    pub fn value(&self, i: usize) -> &[u8] {
        let r = self.records[i];
        &self.raw[r.key_end..r.end]
    }

    /// The last record whose key is at most `key`, if any.
    pub fn last_at_most(&self, key: &[u8]) -> Option<usize> {
        self.records.partition_point(|r| &self.raw[r.key_start..r.key_end] <= key).checked_sub(1)
    }

    /// The record whose key is `key`, if any.
    pub fn find(&self, key: &[u8]) -> Option<usize> {
        let i = self.records.partition_point(|r| &self.raw[r.key_start..r.key_end] < key);
        (i < self.records.len() && self.key(i) == key).then_some(i)
    }

    /// The frontier entries of record `i`, for a target with `levels` levels.
    ///
    /// # Errors
    /// What is malformed.
    pub fn entries(&self, i: usize, levels: usize) -> Result<Vec<Entry>, String> {
        let r = self.records[i];
        let bytes = &self.raw[..r.end];
        let mut at = r.key_end;
        let count = get_varint(bytes, &mut at)?;
        if count > (r.end - at) as u64 {
            return Err(format!("it claims {count} entries in {} bytes", r.end - at));
        }
        let mut entries = Vec::with_capacity(count as usize);
        let mut cost = 0u64;
        for k in 0..count {
            let value = get_varint(bytes, &mut at)?;
            cost = if k == 0 { value } else { cost.wrapping_add(value) };
            let peak_bytes = bytes.get(at..at + levels).ok_or("its peaks run past the record")?;
            at += levels;
            let peaks = peak_bytes
                .iter()
                .enumerate()
                .fold(0u64, |acc, (level, &b)| acc | u64::from(b) << (56 - 8 * level));
            let depth =
                u32::try_from(get_varint(bytes, &mut at)?).map_err(|_| "a depth overflows 32 bits")?;
            let action =
                u16::try_from(get_varint(bytes, &mut at)?).map_err(|_| "an action overflows 16 bits")?;
            entries.push(Entry { cost, peaks: Peaks(peaks), depth, action });
        }
        if at != r.end {
            return Err(format!("{} bytes after its entries", r.end - at));
        }
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(cost: u64, peaks: u64, depth: u32, action: u16) -> Entry {
        Entry { cost, peaks: Peaks(peaks), depth, action }
    }

    #[test]
    fn records_round_trip_and_are_found_by_key() {
        let frontiers = [
            vec![],
            vec![entry(5, 0x0102_0300_0000_0000, 1, 3)],
            vec![entry(7, 0x0500_0000_0000_0000, 2, 0), entry(300, 0x0100_0000_0000_0000, 9, 700)],
        ];
        let keys: [&[u8]; 3] = [b"a", b"ab", b"b"];
        let records: Vec<Vec<u8>> = keys
            .iter()
            .zip(&frontiers)
            .map(|(k, f)| {
                let mut r = Vec::new();
                encode_record(&mut r, k, f, 3);
                r
            })
            .collect();
        let block = Block::decode(encode_block(&records)).unwrap();
        assert_eq!(block.len(), 3);
        for (i, (k, f)) in keys.iter().zip(&frontiers).enumerate() {
            assert_eq!(block.find(k), Some(i));
            assert_eq!(&block.entries(i, 3).unwrap(), f);
        }
        assert_eq!(block.find(b"aa"), None);
        assert_eq!(block.find(b""), None);
    }

    #[test]
    fn malformed_blocks_are_errors_not_panics() {
        let mut r = Vec::new();
        encode_record(&mut r, b"key", &[entry(1, 0, 1, 1)], 5);
        let good = encode_block(&[r.clone(), {
            let mut s = Vec::new();
            encode_record(&mut s, b"kez", &[], 5);
            s
        }]);
        for len in 0..good.len() {
            if let Ok(block) = Block::decode(good[..len].to_vec()) {
                for i in 0..block.len() {
                    let _ = block.entries(i, 5);
                }
            }
        }
        for at in 0..good.len() {
            for bit in 0..8 {
                let mut bad = good.clone();
                bad[at] ^= 1 << bit;
                if let Ok(block) = Block::decode(bad) {
                    for i in 0..block.len() {
                        let _ = block.entries(i, 5);
                    }
                }
            }
        }
        assert!(Block::decode(encode_block(&[r.clone(), r])).is_err(), "equal keys");
    }
}
