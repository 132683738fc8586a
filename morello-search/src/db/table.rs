//! An in-memory table: solved specs and their frontiers for one identity, sorted by spec.
//!
//! A [`Table`] is what a file holds, validated. It converts to and from a [`Memo`], merges with
//! another table of the same identity, encodes to bytes and decodes from them; [`TableStats`]
//! summarises a file without validating it against a target.

use std::path::Path;
use std::sync::Arc;

use morello_core::spec::{CanonicalSpec, PrimitiveKind};
use morello_core::target::Target;
use rayon::slice::ParallelSliceMut;

use crate::db::error::{DbError, Mismatch};
use crate::db::format::{self, Compression, Metadata};
use crate::db::identity::{Schema, TableIdentity};
use crate::db::payload::Payload;
use crate::db::validate::{self, Validation, VerifyReport};
use crate::frontier::Frontier;
use crate::memo::Memo;

/// Solved specs and their frontiers for one target, model and action configuration.
///
/// # Invariants
/// Entries are sorted by spec, each spec once. A table read from bytes has passed every check of
/// the `validate` module for its schema.
#[derive(Debug, Clone)]
pub struct Table {
    identity: TableIdentity,
    /// The target's description (JSON), written into files.
    target: Arc<str>,
    /// The target's level count.
    levels: usize,
    entries: Vec<(CanonicalSpec, Arc<Frontier>)>,
}

/// What a merge did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MergeReport {
    /// Specs only the other table had, now added.
    pub added: u64,
    /// Specs both had (with equal frontiers).
    pub shared: u64,
    /// Specs in the merged table.
    pub total: u64,
}

/// What a save did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SaveReport {
    /// Specs in the file after the save.
    pub entries: u64,
    /// Specs another process had saved since this one loaded the file, merged in.
    pub merged_from_disk: u64,
    /// The file's size in bytes (0 if nothing was written).
    pub bytes: u64,
    /// Whether the file was written (false when it already held everything).
    pub written: bool,
}

impl Table {
    /// An empty table for a schema.
    pub fn new(schema: &Schema<'_>) -> Table {
        Table {
            identity: schema.identity.clone(),
            target: target_json(schema.target),
            levels: schema.target.levels().len(),
            entries: Vec::new(),
        }
    }

    /// Every entry of a memo.
    pub fn from_memo(memo: &Memo, schema: &Schema<'_>) -> Table {
        Table { entries: memo.entries(), ..Table::new(schema) }
    }

    /// The identity every entry was computed for.
    pub fn identity(&self) -> &TableIdentity {
        &self.identity
    }

    /// The number of solved specs.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table holds nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The solved specs and their frontiers, sorted by spec.
    pub fn entries(&self) -> &[(CanonicalSpec, Arc<Frontier>)] {
        &self.entries
    }

    /// Iterates over the solved specs and their frontiers, sorted by spec.
    pub fn iter(&self) -> impl Iterator<Item = (&CanonicalSpec, &Arc<Frontier>)> {
        self.entries.iter().map(|(s, f)| (s, f))
    }

    /// The frontier of a spec.
    pub fn get(&self, spec: &CanonicalSpec) -> Option<&Arc<Frontier>> {
        self.entries.binary_search_by(|(s, _)| s.cmp(spec)).ok().map(|i| &self.entries[i].1)
    }

    /// A memo table holding every entry.
    pub fn to_memo(&self) -> Memo {
        let memo = Memo::new();
        self.fill_memo(&memo);
        memo
    }

    /// Inserts every entry into `memo` (replacing the memo's frontier of a spec both hold: a
    /// validated table and a search agree on every spec).
    pub fn fill_memo(&self, memo: &Memo) {
        for (spec, frontier) in &self.entries {
            memo.insert(spec.clone(), Arc::clone(frontier));
        }
    }

    /// Adds the entries of `other`, which must have the same identity. A spec both hold must have
    /// the same frontier in both: the search is deterministic, so a difference means one table is
    /// wrong, and the merge is refused without changing `self`.
    ///
    /// # Errors
    /// [`DbError::MergeIdentity`] for different identities; [`DbError::Disagree`] with the number
    /// of differing specs and the first one.
    pub fn merge(&mut self, other: &Table, target: &Target) -> Result<MergeReport, DbError> {
        if self.identity != other.identity {
            return Err(DbError::MergeIdentity {
                first: Box::new(self.identity.clone()),
                second: Box::new(other.identity.clone()),
            });
        }
        let mut merged = Vec::with_capacity(self.entries.len() + other.entries.len());
        let (mut a, mut b) = (self.entries.iter().peekable(), other.entries.iter().peekable());
        let mut report = MergeReport::default();
        let mut disagreements = Vec::new();
        loop {
            let next = match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some(_), None) => a.next(),
                (None, Some(_)) => {
                    report.added += 1;
                    b.next()
                }
                (Some(x), Some(y)) => match x.0.cmp(&y.0) {
                    std::cmp::Ordering::Less => a.next(),
                    std::cmp::Ordering::Greater => {
                        report.added += 1;
                        b.next()
                    }
                    std::cmp::Ordering::Equal => {
                        if x.1 != y.1 {
                            disagreements.push(x.0.display(target).to_string());
                        }
                        report.shared += 1;
                        b.next();
                        a.next()
                    }
                },
            };
            merged.extend(next.cloned());
        }
        if let Some(example) = disagreements.first() {
            return Err(DbError::Disagree { count: disagreements.len(), example: example.clone() });
        }
        report.total = merged.len() as u64;
        self.entries = merged;
        Ok(report)
    }

    /// The table as a file's bytes (deterministic: equal tables give equal bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload = self.payload();
        let counts = payload.counts();
        let raw = payload.to_bytes();
        let metadata = Metadata {
            identity: self.identity.clone(),
            specs: counts.specs,
            frontiers: counts.frontiers,
            families: counts.families,
            compression: Compression::Zstd,
            payload_bytes: raw.len() as u64,
        };
        format::write(&metadata, &raw)
    }

    fn payload(&self) -> Payload {
        Payload::build(&self.entries, self.target.to_string(), self.levels)
    }

    /// Reads a table from a file's bytes and validates it for `schema` as thoroughly as
    /// `validation` says; `path` names the file in messages.
    ///
    /// # Errors
    /// Any [`DbError`] but [`DbError::Io`], [`DbError::Rebuild`] and the merge errors.
    pub fn from_bytes(
        bytes: &[u8],
        path: &Path,
        schema: &Schema<'_>,
        validation: Validation,
    ) -> Result<Table, DbError> {
        let container = format::read(bytes, path)?;
        if let Some(mismatch) = Mismatch::between(&container.metadata.identity, &schema.identity) {
            return Err(DbError::Mismatch { path: path.into(), mismatch: Box::new(mismatch) });
        }
        let payload = Payload::from_bytes(&container.payload).map_err(|e| DbError::Corrupt {
            path: path.into(),
            detail: format!("unreadable payload: {e}"),
        })?;
        let mut entries = validate::entries(&payload, schema.target, &schema.actions, validation, path)?;
        // Stored order is by family, then shape; a table is sorted by spec.
        entries.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let counts = payload.counts();
        let declared = &container.metadata;
        if (declared.specs, declared.frontiers, declared.families)
            != (counts.specs, counts.frontiers, counts.families)
        {
            return Err(DbError::Corrupt {
                path: path.into(),
                detail: "the metadata's counts differ from the payload's".into(),
            });
        }
        Ok(Table { entries, ..Table::new(schema) })
    }

    /// Rebuilds the implementation of every frontier entry of every spec (or of `sample` specs
    /// spread evenly over the table) and checks that each rebuilds as stored, with the same cost.
    ///
    /// # Errors
    /// [`DbError::Rebuild`] for the first entry that does not.
    pub fn verify(
        &self,
        schema: &Schema<'_>,
        sample: Option<usize>,
        path: &Path,
    ) -> Result<VerifyReport, DbError> {
        let n = self.entries.len();
        let chosen: Vec<usize> = match sample {
            Some(k) if k < n => (0..k).map(|i| i * n / k).collect(),
            _ => (0..n).collect(),
        };
        validate::rebuild(&self.entries, &chosen, schema.target, &schema.actions, path)
    }
}

fn target_json(target: &Target) -> Arc<str> {
    serde_json::to_string(&target.description_value()).expect("a target description serialises").into()
}

/// The target a table file was written for, rebuilt from the description it stores.
///
/// # Errors
/// As [`TableStats::of_bytes`]; [`DbError::Corrupt`] if the stored description is not a valid
/// target or does not match the fingerprint in the header.
pub fn stored_target(bytes: &[u8], path: &Path) -> Result<(TableIdentity, Target), DbError> {
    let container = format::read(bytes, path)?;
    let corrupt = |detail: String| DbError::Corrupt { path: path.into(), detail };
    let payload =
        Payload::from_bytes(&container.payload).map_err(|e| corrupt(format!("unreadable payload: {e}")))?;
    let target = Target::from_json(&payload.target)
        .map_err(|e| corrupt(format!("the stored target description is invalid: {e}")))?;
    let identity = container.metadata.identity;
    if target.fingerprint() != identity.target_fingerprint || target.name() != identity.target_name {
        return Err(corrupt("the stored target description does not match the header's fingerprint".into()));
    }
    Ok((identity, target))
}

/// Counts for one spec kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindStats {
    /// The kind.
    pub kind: PrimitiveKind,
    /// Solved specs of this kind.
    pub specs: u64,
    /// Of which nothing implements.
    pub unsatisfiable: u64,
    /// Frontier entries over those specs (counting shared frontiers once per spec).
    pub entries: u64,
}

/// A summary of a table file, read without validating it against a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableStats {
    /// Who the table is for.
    pub identity: TableIdentity,
    /// The file's size.
    pub file_bytes: u64,
    /// The payload before compression.
    pub payload_bytes: u64,
    /// Solved specs.
    pub specs: u64,
    /// Distinct frontiers stored.
    pub frontiers: u64,
    /// Frontier entries stored (in distinct frontiers).
    pub stored_entries: u64,
    /// Spec families.
    pub families: u64,
    /// Per kind, in [`PrimitiveKind::ALL`] order, kinds with no spec left out.
    pub by_kind: Vec<KindStats>,
}

impl TableStats {
    /// Summarises a table file's bytes (checked for damage, not validated against a target).
    ///
    /// # Errors
    /// [`DbError::NotATable`], [`DbError::Truncated`], [`DbError::FormatVersion`] or
    /// [`DbError::Corrupt`].
    pub fn of_bytes(bytes: &[u8], path: &Path) -> Result<TableStats, DbError> {
        let container = format::read(bytes, path)?;
        let corrupt = |detail: String| DbError::Corrupt { path: path.into(), detail };
        let payload = Payload::from_bytes(&container.payload)
            .map_err(|e| corrupt(format!("unreadable payload: {e}")))?;
        let frontiers = payload.frontiers().map_err(corrupt)?;
        let specs = payload.specs().map_err(corrupt)?;
        let mut by_kind: Vec<KindStats> = PrimitiveKind::ALL
            .iter()
            .map(|&kind| KindStats { kind, specs: 0, unsatisfiable: 0, entries: 0 })
            .collect();
        for stored in &specs {
            let (kind, frontier) = (payload.families[stored.family].kind, stored.frontier);
            if let Some(k) = by_kind.iter_mut().find(|k| k.kind == kind.family()) {
                let entries = frontiers[frontier].len() as u64;
                k.specs += 1;
                k.entries += entries;
                k.unsatisfiable += u64::from(entries == 0);
            }
        }
        by_kind.retain(|k| k.specs > 0);
        Ok(TableStats {
            identity: container.metadata.identity,
            file_bytes: bytes.len() as u64,
            payload_bytes: container.payload.len() as u64,
            specs: specs.len() as u64,
            frontiers: frontiers.len() as u64,
            stored_entries: frontiers.iter().map(|f| f.len() as u64).sum(),
            families: payload.families.len() as u64,
            by_kind,
        })
    }
}
