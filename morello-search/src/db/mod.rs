//! The persisted memo table: one file per target, loaded before a search and saved after it.
//!
//! A table file holds every solved spec of a [`Memo`] with its [`Frontier`], for one target, one
//! action configuration and one version of the actions and cost model. Stored decisions are action
//! indices (see [`crate::actions`]), so a table is only meaningful with exactly the actions and
//! costs that wrote it; [`TableIdentity`] says which, and a file whose identity differs is refused.
//!
//! - [`format`](mod@format): the container (magic, versions, length, checksum, metadata);
//! - `payload`: the compact encoding of specs and frontiers (spec families, shared frontiers);
//! - `validate`: what loading checks about every spec and frontier;
//! - [`Table`]: an in-memory table: load, save, iterate, merge, statistics;
//! - `file`: atomic replacement and the writer lock;
//! - [`OpenTable`]: a search's table, in memory or in a file (the default one of a target, in the
//!   user's cache directory, or a path), loaded before the search and saved after it.
//!
//! ```text
//! file     = fixed header (32 bytes) | metadata (bincode) | payload (zstd of bincode)
//! identity = target name + target fingerprint + MODEL_VERSION + model probe + action config
//! ```
//!
//! Loading never trusts the file: the container is checked first (magic, format version, length,
//! checksum), then the identity, then every spec (canonical for the target) and every frontier
//! (sorted, non-dominated, within the target's capacities); with [`Validation::Full`] also every
//! stored action (it exists for its spec, the table holds the sub-specs it needs, and they combine
//! to the stored cost). Reconstruction re-applies every action it uses and compares costs
//! ([`crate::Rebuild::best`]), so a table can make a search faster but never give it a wrong kernel.
//! `docs/database.md` describes the format for users.

mod error;
mod file;
pub mod format;
mod identity;
mod open;
mod payload;
mod table;
mod validate;

#[cfg(test)]
mod tests;

pub use error::{DbError, Mismatch};
pub use file::{TableFile, TableLock, lock_path, write_atomically};
pub use format::{Compression, FORMAT_VERSION};
pub use identity::{MODEL_VERSION, Schema, TableIdentity, model_probe};
pub use open::{
    Access, OpenTable, ReadOnlyReason, TableLocation, default_file_name, default_table_dir,
    default_table_path, read_only_reason,
};
pub use table::{KindStats, MergeReport, SaveReport, Table, TableStats, stored_target};
pub use validate::{Validation, VerifyReport};

#[cfg(doc)]
use crate::{frontier::Frontier, memo::Memo};
