//! The container of a table file: a fixed header, metadata, and the compressed payload.
//!
//! ```text
//! offset  bytes  field
//!  0       8     magic         89 4D 4F 52 0D 0A 1A 0A   ("\x89MOR\r\n\x1a\n")
//!  8       4     format        FORMAT_VERSION, u32 little-endian
//! 12       4     metadata      length M of the metadata, u32 LE
//! 16       8     length        length of the whole file, u64 LE
//! 24       8     checksum      FNV-1a 64 of bytes 0..24 then 32..end, u64 LE
//! 32       M     metadata      bincode (varint integers): identity, counts, compression, raw length
//! 32+M     ...   payload       the entries (see `payload`), compressed as the metadata says
//! ```
//!
//! The magic's first byte is not ASCII and it holds `\r\n` and `\x1a`, so a text file never looks
//! like a table and a newline conversion shows up at once. Reading checks, in order: the magic,
//! the format version (a newer layout may change everything after it), the checksum (a
//! truncated file is told apart from a damaged one by the stored length), then decodes the
//! metadata. FNV-1a detects every change of a single byte (each step is a bijection of the
//! state); it is not a defence against a deliberately forged file, which validation handles.
//!
//! [`FORMAT_VERSION`] changes when this layout or the payload encoding changes;
//! [`crate::db::MODEL_VERSION`] when what the entries mean changes.

use std::io::Read;
use std::path::Path;

use bincode::Options;
use serde::{Deserialize, Serialize};

use crate::db::error::DbError;
use crate::db::identity::TableIdentity;

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = [0x89, b'M', b'O', b'R', b'\r', b'\n', 0x1a, b'\n'];

/// The version of the container and payload layout this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Bytes of the fixed header.
pub const HEADER_BYTES: usize = 32;

/// The largest uncompressed payload a table may declare (a sanity bound against forged headers).
const MAX_PAYLOAD_BYTES: u64 = 1 << 34;

/// How the payload is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compression {
    /// Stored as is.
    None,
    /// A zstd frame.
    Zstd,
}

/// What follows the fixed header: who the table is for and what the payload holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// The target, model and actions the entries were computed for.
    pub identity: TableIdentity,
    /// Solved specs.
    pub specs: u64,
    /// Distinct frontiers (each stored once).
    pub frontiers: u64,
    /// Spec families (what specs share apart from their shape).
    pub families: u64,
    /// How the payload is compressed.
    pub compression: Compression,
    /// The payload's length before compression.
    pub payload_bytes: u64,
}

/// The bincode options of the metadata and the payload: varint integers, little-endian, trailing
/// bytes refused, at most `limit` bytes read.
pub(crate) fn bincode_options(limit: u64) -> impl Options {
    bincode::DefaultOptions::new().with_limit(limit).reject_trailing_bytes()
}

/// A streaming FNV-1a 64.
#[derive(Debug, Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn update(mut self, bytes: &[u8]) -> Self {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self
    }
}

fn checksum(file: &[u8]) -> u64 {
    Fnv::new().update(&file[..24]).update(&file[HEADER_BYTES..]).0
}

/// Builds a table file from its metadata and uncompressed payload.
pub(crate) fn write(metadata: &Metadata, payload: &[u8]) -> Vec<u8> {
    let compressed;
    let stored: &[u8] = match metadata.compression {
        Compression::None => payload,
        Compression::Zstd => {
            compressed = zstd::bulk::compress(payload, ZSTD_LEVEL).expect("compressing a buffer in memory");
            &compressed
        }
    };
    let meta = bincode_options(u64::MAX).serialize(metadata).expect("metadata serialises");
    let mut out = Vec::with_capacity(HEADER_BYTES + meta.len() + stored.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&u32::try_from(meta.len()).expect("metadata is small").to_le_bytes());
    let total = (HEADER_BYTES + meta.len() + stored.len()) as u64;
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&meta);
    out.extend_from_slice(stored);
    let sum = checksum(&out);
    out[24..32].copy_from_slice(&sum.to_le_bytes());
    out
}

/// The zstd level of saved tables (measured in `docs/database.md`: higher levels save little
/// more and cost seconds on large tables).
const ZSTD_LEVEL: i32 = 9;

/// A checked container: its metadata and the uncompressed payload.
#[derive(Debug)]
pub(crate) struct Container {
    pub metadata: Metadata,
    pub payload: Vec<u8>,
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
}

/// Checks the fixed header of a file's first bytes (at least the whole header, or the whole file
/// if shorter) and returns the checksum it declares.
///
/// # Errors
/// [`DbError::NotATable`], [`DbError::Truncated`] or [`DbError::FormatVersion`].
pub(crate) fn check_header(bytes: &[u8], file_len: u64, path: &Path) -> Result<u64, DbError> {
    let prefix = bytes.len().min(MAGIC.len());
    if bytes[..prefix] != MAGIC[..prefix] {
        return Err(DbError::NotATable { path: path.into() });
    }
    if bytes.len() < HEADER_BYTES {
        return Err(DbError::Truncated { path: path.into(), found: file_len, expected: None });
    }
    let format = u32_at(bytes, 8);
    if format != FORMAT_VERSION {
        return Err(DbError::FormatVersion { path: path.into(), found: format, supported: FORMAT_VERSION });
    }
    Ok(u64_at(bytes, 24))
}

/// Checks and opens a whole table file.
///
/// # Errors
/// [`DbError::NotATable`], [`DbError::Truncated`], [`DbError::FormatVersion`] or
/// [`DbError::Corrupt`].
pub(crate) fn read(bytes: &[u8], path: &Path) -> Result<Container, DbError> {
    let corrupt = |detail: String| DbError::Corrupt { path: path.into(), detail };
    let declared = check_header(bytes, bytes.len() as u64, path)?;
    let expected_len = u64_at(bytes, 16);
    if checksum(bytes) != declared {
        let found = bytes.len() as u64;
        return Err(if found < expected_len {
            DbError::Truncated { path: path.into(), found, expected: Some(expected_len) }
        } else if found > expected_len {
            corrupt(format!("{} bytes after the end its header gives", found - expected_len))
        } else {
            corrupt("its checksum does not match its content".into())
        });
    }
    let meta_len = u32_at(bytes, 12) as usize;
    let Some(meta_bytes) = bytes.get(HEADER_BYTES..HEADER_BYTES + meta_len) else {
        return Err(corrupt("the metadata is longer than the file".into()));
    };
    let metadata: Metadata = bincode_options(meta_len as u64)
        .deserialize(meta_bytes)
        .map_err(|e| corrupt(format!("unreadable metadata: {e}")))?;
    if metadata.payload_bytes > MAX_PAYLOAD_BYTES {
        return Err(corrupt(format!("a payload of {} bytes is implausible", metadata.payload_bytes)));
    }
    let stored = &bytes[HEADER_BYTES + meta_len..];
    let payload = match metadata.compression {
        Compression::None => stored.to_vec(),
        Compression::Zstd => {
            let mut out = Vec::with_capacity(metadata.payload_bytes.min(1 << 26) as usize);
            zstd::stream::read::Decoder::new(stored)
                .and_then(|d| d.take(metadata.payload_bytes + 1).read_to_end(&mut out))
                .map_err(|e| corrupt(format!("the payload does not decompress: {e}")))?;
            out
        }
    };
    if payload.len() as u64 != metadata.payload_bytes {
        return Err(corrupt(format!(
            "the payload is {} bytes, and the metadata says {}",
            payload.len(),
            metadata.payload_bytes
        )));
    }
    Ok(Container { metadata, payload })
}
