//! The persisted memo table: one file per target, loaded before a search and saved after it.
//!
//! A table file holds every solved spec of a [`Memo`] with its [`Frontier`], for one target, one
//! action configuration and one version of the actions and cost model. Stored decisions are action
//! indices (see [`crate::actions`]), so a table is only meaningful with exactly the actions and
//! costs that wrote it; [`TableIdentity`] says which, and a file whose identity differs is refused.
//!
//! - [`format`](mod@format): the container (magic, version, commit slots, metadata, frames);
//! - `block`: blocks of entries (a spec's key, its serialisation, and its frontier);
//! - `index`: runs of blocks, their pages and the index record of a commit;
//! - `reader`: lookups of one spec (one page and one block per run), and full scans;
//! - `writer`: new files, and commits that append a run (merging small runs);
//! - `validate`: what reading checks about every spec and frontier;
//! - [`Table`]: a whole table in memory: iterate, merge, verify, statistics;
//! - `wisdom`: measured winners per spec and host ([`WisdomEntry`]), kept in the index record;
//! - `access`: whether a table file may be written (read-only tables);
//! - `file`: what a table's path may be, atomic replacement, the locks, saving;
//! - [`OpenTable`]: a search's table, in memory or in a file (the default one of a target, in the
//!   user's cache directory, or a path), loaded before the search and saved after it.
//!
//! ```text
//! file     = header (magic, version, two commit slots) | metadata | frames appended by commits
//! commit   = runs of blocks sorted by key + index pages + an index record (with the wisdom),
//!            then a slot switch
//! identity = target name + target fingerprint + MODEL_VERSION + model probe + action config
//! ```
//!
//! Reading never trusts the file: the header is checked first (magic, format version, slot and
//! metadata checksums), then the identity; every frame is checked against its checksum when it is
//! read, and every spec (canonical for the target) and frontier (sorted, non-dominated, within
//! the target's capacities) when it is used. With [`Validation::Full`] also every stored action
//! (it exists for its spec, the table holds the sub-specs it needs, and they combine to the
//! stored cost). Reconstruction re-applies every action it uses and compares costs
//! ([`crate::Rebuild::best`]), so a table can make a search faster but never give it a wrong kernel.
//! `docs/database.md` describes the format for users.

mod access;
mod block;
mod error;
mod file;
pub mod format;
mod identity;
mod index;
mod open;
mod reader;
mod table;
mod validate;
mod wisdom;
mod writer;

#[cfg(test)]
mod tests;

pub use access::{Access, ReadOnlyReason, read_only_reason};
pub use error::DbError;
pub use file::{
    FillLock, Replacement, TableFile, TableLock, fill_lock_path, lock_path, table_file_path, write_atomically,
};
pub use format::FORMAT_VERSION;
pub use format::spec_key;
pub use identity::{MODEL_SOURCES, MODEL_VERSION, Mismatch, Schema, TableIdentity, model_probe};
pub use open::{OpenTable, TableLocation, default_file_name, default_table_dir, default_table_path};
pub use table::{KindStats, MergeReport, SaveReport, Table, TableStats, WisdomSummary, stored_target};
pub use validate::{Validation, VerifyReport};
pub use wisdom::{WisdomEntry, WisdomHost, merge_wisdom, replace_wisdom, wisdom_limits};

#[cfg(doc)]
use crate::{frontier::Frontier, memo::Memo};
