//! An in-memory table: solved specs and their frontiers for one identity, sorted by spec.
//!
//! A [`Table`] is what a whole file holds, validated: the tools that need every entry (`db
//! verify`, `db merge`, compaction) read one; a search does not (it looks specs up through
//! [`crate::db::OpenTable`]). It converts to and from a [`Memo`], merges with other tables of the
//! same identity, and encodes to a file's bytes; [`TableStats`] summarises a file without
//! validating it against a target.

use std::path::Path;
use std::sync::Arc;

use morello_core::spec::{CanonicalSpec, PrimitiveKind};
use morello_core::target::Target;
use rayon::slice::ParallelSliceMut;

use crate::db::error::DbError;
use crate::db::format::{self, Metadata, Sink, Storage, logical_of_key, spec_key};
use crate::db::identity::{Mismatch, Schema, TableIdentity};
use crate::db::reader::Reader;
use crate::db::validate::{self, Validation, VerifyReport};
use crate::db::wisdom::{WisdomEntry, WisdomHost, merge_wisdom};
use crate::db::writer;
use crate::frontier::{Entry, Frontier};
use crate::memo::Memo;

/// Solved specs and their frontiers for one target, model and action configuration.
///
/// # Invariants
/// Entries are sorted by spec, each spec once. A table read from a file has passed every check of
/// the `validate` module for its schema.
#[derive(Debug, Clone)]
pub struct Table {
    identity: TableIdentity,
    /// The target's description (JSON), written into files.
    target: Arc<str>,
    /// The target's level count.
    levels: usize,
    entries: Vec<(CanonicalSpec, Arc<Frontier>)>,
    /// Measured winners, sorted by key (see `wisdom`).
    wisdom: Vec<WisdomEntry>,
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
    /// Specs written by this save.
    pub added: u64,
    /// Measured winners written by this save (new, or faster than the one the file held).
    pub wisdom_added: u64,
    /// Specs this save would have added that the file already held (another process saved them
    /// since this one opened the file).
    pub already_held: u64,
    /// The file's size in bytes after the save.
    pub bytes: u64,
    /// Whether the file was written (false when it already held everything).
    pub written: bool,
    /// Whether the save rewrote the whole file (a compaction) rather than appending to it.
    pub rewritten: bool,
}

impl Table {
    /// An empty table for a schema (computes the schema's probe).
    pub fn new(schema: &Schema<'_>) -> Table {
        Table {
            identity: schema.identity(),
            target: target_json(schema.target),
            levels: schema.target.levels().len(),
            entries: Vec::new(),
            wisdom: Vec::new(),
        }
    }

    /// Every entry a memo holds in memory.
    pub fn from_memo(memo: &Memo, schema: &Schema<'_>) -> Table {
        Table::from_entries(memo.entries(), schema)
    }

    /// A table of these entries (each spec once; any order).
    pub fn from_entries(mut entries: Vec<(CanonicalSpec, Arc<Frontier>)>, schema: &Schema<'_>) -> Table {
        entries.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Table { entries, ..Table::new(schema) }
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

    /// The measured winners (wisdom), sorted by spec key, limits and host.
    pub fn wisdom(&self) -> &[WisdomEntry] {
        &self.wisdom
    }

    /// Adds measured winners: one per spec, limits and host, the faster of two kept.
    pub fn add_wisdom(&mut self, wisdom: &[WisdomEntry]) {
        self.wisdom = merge_wisdom(&self.wisdom, wisdom);
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
    /// wrong, and the merge is refused without changing `self`. Wisdom is kept per spec, limits
    /// and host (of two for one host, the faster).
    ///
    /// # Errors
    /// [`DbError::MergeIdentity`] for different identities; [`DbError::Disagree`] with the number
    /// of differing specs and the first one.
    pub fn merge(&mut self, other: &Table, target: &Target) -> Result<MergeReport, DbError> {
        if Mismatch::between(&other.identity, &self.identity).is_some() {
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
        self.wisdom = merge_wisdom(&self.wisdom, &other.wisdom);
        Ok(report)
    }

    /// The metadata a file of this table starts with.
    pub(crate) fn metadata(&self) -> Metadata {
        Metadata { identity: self.identity.clone(), target: self.target.to_string() }
    }

    /// The entries as (key, frontier entries), sorted by key.
    pub(crate) fn keyed(&self) -> Vec<(Vec<u8>, &[Entry])> {
        let mut keyed: Vec<(Vec<u8>, &[Entry])> =
            self.entries.iter().map(|(s, f)| (spec_key(s), f.entries())).collect();
        keyed.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        keyed
    }

    /// Writes the table as a new file (one run) into `sink`; returns its length.
    ///
    /// # Errors
    /// The sink's.
    pub(crate) fn write_to<S: Sink>(&self, sink: &mut S) -> std::io::Result<u64> {
        writer::write_fresh(sink, &self.metadata(), &self.keyed(), &self.wisdom, self.levels)
    }

    /// The table as a file's bytes (deterministic: equal tables give equal bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out).expect("writing to memory does not fail");
        out
    }

    /// Reads a table from a file's bytes and validates it for `schema` as thoroughly as
    /// `validation` says; `path` names the file in messages.
    ///
    /// # Errors
    /// Any [`DbError`] but [`DbError::Rebuild`] and the merge errors.
    pub fn from_bytes(
        bytes: &[u8],
        path: &Path,
        schema: &Schema<'_>,
        validation: Validation,
    ) -> Result<Table, DbError> {
        Table::read(Box::new(bytes.to_vec()), path, schema, validation)
    }

    /// Reads every entry of a table and validates it for `schema` as thoroughly as `validation`
    /// says.
    ///
    /// # Errors
    /// Any [`DbError`] but [`DbError::Rebuild`] and the merge errors.
    pub(crate) fn read(
        storage: Box<dyn Storage>,
        path: &Path,
        schema: &Schema<'_>,
        validation: Validation,
    ) -> Result<Table, DbError> {
        let reader = Reader::open(storage, path, schema.target.levels().len())?;
        check_identity(&reader, schema)?;
        let stored = reader.scan()?;
        let entries = validate::entries(stored, schema.target, &schema.actions, validation, path)?;
        // The identity matched: a file written from this table is this build's (its sources).
        Ok(Table {
            identity: schema.identity(),
            target: target_json(schema.target),
            levels: schema.target.levels().len(),
            entries,
            wisdom: reader.index().wisdom.clone(),
        })
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

impl Table {
    /// Re-applies every measured winner's decisions and checks that each rebuilds, for its spec,
    /// to its stored cost within its stored limits (what a search checks before it uses one);
    /// returns how many were checked.
    ///
    /// # Errors
    /// [`DbError::Rebuild`] for the first entry that does not (its spec, or why its key does not
    /// name a spec of this target).
    pub fn verify_wisdom(&self, schema: &Schema<'_>, path: &Path) -> Result<usize, DbError> {
        let target = schema.target;
        for entry in &self.wisdom {
            let fail = |spec: String, reason: String| DbError::Rebuild { path: path.into(), spec, reason };
            let logical = logical_of_key(&entry.spec).map_err(|e| {
                fail("a measured winner".into(), format!("its spec key does not decode: {e}"))
            })?;
            let text = logical.display(target).to_string();
            let spec = logical
                .canonicalize(target)
                .map_err(|e| fail(text.clone(), format!("its spec is not valid for the target: {e}")))?;
            let reason = |why: String| {
                fail(text.clone(), format!("measured winner on host {}: {why}", entry.host.description))
            };
            let imp = crate::rebuild_decisions(&spec, &entry.decisions, target, &schema.actions)
                .map_err(|e| reason(e.to_string()))?;
            if imp.cost != entry.cost {
                return Err(reason(format!(
                    "it rebuilds to cost {}, not the stored {}",
                    imp.cost, entry.cost
                )));
            }
            let fits = entry.limits.len() == target.levels().len()
                && imp.peaks.0.iter().zip(&entry.limits).all(|(peak, limit)| peak <= limit);
            if !fits {
                return Err(reason("it does not fit its stored limits".into()));
            }
        }
        Ok(self.wisdom.len())
    }
}

/// Refuses a table whose identity is not `schema`'s.
///
/// # Errors
/// [`DbError::Mismatch`].
pub(crate) fn check_identity(reader: &Reader, schema: &Schema<'_>) -> Result<(), DbError> {
    let metadata = reader.metadata();
    match schema.mismatch(&metadata.identity) {
        Some(mismatch) => Err(DbError::Mismatch {
            path: reader.path().into(),
            mismatch: Box::new(mismatch.with_target_difference(&metadata.target, schema.target)),
        }),
        None => Ok(()),
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
    let header = format::read_header(&bytes.to_vec(), path)?;
    target_of(&header.metadata, path)
}

/// The target metadata describes, checked against its fingerprint.
fn target_of(metadata: &Metadata, path: &Path) -> Result<(TableIdentity, Target), DbError> {
    let corrupt = |detail: String| DbError::Corrupt { path: path.into(), detail };
    let target = Target::from_json(&metadata.target)
        .map_err(|e| corrupt(format!("the stored target description is invalid: {e}")))?;
    let identity = metadata.identity.clone();
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
    /// Frontier entries over those specs.
    pub entries: u64,
}

/// One measured winner as `db stats` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct WisdomSummary {
    /// The spec's text (or why its key does not decode).
    pub spec: String,
    /// Where it was measured.
    pub host: WisdomHost,
    /// The winner's median seconds per call.
    pub seconds: f64,
    /// The model's best's median seconds per call in the same run.
    pub model_seconds: f64,
    /// How many candidates were timed.
    pub candidates: u32,
}

/// A summary of a table file, read without validating it against a target.
#[derive(Debug, Clone, PartialEq)]
pub struct TableStats {
    /// Who the table is for.
    pub identity: TableIdentity,
    /// The file's size.
    pub file_bytes: u64,
    /// The committed part of the file.
    pub committed_bytes: u64,
    /// Bytes of frames no run refers to (reclaimed by the next compaction).
    pub dead_bytes: u64,
    /// Commits so far (the sequence of the newest).
    pub commits: u64,
    /// Runs (sorted sequences of blocks; searched newest first).
    pub runs: u64,
    /// Blocks over all runs.
    pub blocks: u64,
    /// Solved specs.
    pub specs: u64,
    /// Distinct frontiers.
    pub frontiers: u64,
    /// Frontier entries over all specs.
    pub stored_entries: u64,
    /// The blocks' bytes before compression.
    pub raw_bytes: u64,
    /// Per kind, in [`PrimitiveKind::ALL`] order, kinds with no spec left out.
    pub by_kind: Vec<KindStats>,
    /// The measured winners, sorted by spec key, limits and host.
    pub wisdom: Vec<WisdomSummary>,
}

impl TableStats {
    /// Summarises a table file's bytes (checked for damage, not validated against a target).
    ///
    /// # Errors
    /// [`DbError::NotATable`], [`DbError::Truncated`], [`DbError::FormatVersion`] or
    /// [`DbError::Corrupt`].
    pub fn of_bytes(bytes: &[u8], path: &Path) -> Result<TableStats, DbError> {
        TableStats::of_storage(Box::new(bytes.to_vec()), path)
    }

    /// Summarises a table file (checked for damage, not validated against a target).
    ///
    /// # Errors
    /// As [`TableStats::of_bytes`], and [`DbError::Io`].
    pub fn of_file(path: &Path) -> Result<TableStats, DbError> {
        let file = std::fs::File::open(path).map_err(|e| DbError::io(path, "open", e))?;
        TableStats::of_storage(Box::new(file), path)
    }

    fn of_storage(storage: Box<dyn Storage>, path: &Path) -> Result<TableStats, DbError> {
        let file_bytes = storage.size();
        let header = format::read_header(storage.as_ref(), path)?;
        let (_, target) = target_of(&header.metadata, path)?;
        let reader = Reader::open(storage, path, target.levels().len())?;
        let stored = reader.scan()?;
        let mut by_kind: Vec<KindStats> = PrimitiveKind::ALL
            .iter()
            .map(|&kind| KindStats { kind, specs: 0, unsatisfiable: 0, entries: 0 })
            .collect();
        let mut distinct: std::collections::HashSet<&[Entry]> = std::collections::HashSet::new();
        for (key, frontier) in &stored {
            let logical = logical_of_key(key).map_err(|e| DbError::Corrupt {
                path: path.into(),
                detail: format!("a stored spec does not decode: {e}"),
            })?;
            distinct.insert(frontier);
            if let Some(k) = by_kind.iter_mut().find(|k| k.kind == logical.kind.family()) {
                k.specs += 1;
                k.entries += frontier.len() as u64;
                k.unsatisfiable += u64::from(frontier.is_empty());
            }
        }
        by_kind.retain(|k| k.specs > 0);
        let index = reader.index();
        let wisdom = index
            .wisdom
            .iter()
            .map(|w| WisdomSummary {
                spec: logical_of_key(&w.spec).map_or_else(
                    |e| format!("(a spec that does not decode: {e})"),
                    |s| s.display(&target).to_string(),
                ),
                host: w.host.clone(),
                seconds: w.seconds,
                model_seconds: w.model_seconds,
                candidates: w.candidates,
            })
            .collect();
        let blocks = reader.blocks()?;
        let raw_bytes = blocks.iter().map(|b| u64::from(b.frame.raw_len)).sum();
        Ok(TableStats {
            identity: header.metadata.identity.clone(),
            file_bytes,
            committed_bytes: reader.commit().length,
            dead_bytes: index.dead_bytes,
            commits: reader.commit().sequence,
            runs: index.runs.len() as u64,
            blocks: blocks.len() as u64,
            specs: stored.len() as u64,
            frontiers: distinct.len() as u64,
            stored_entries: stored.iter().map(|(_, f)| f.len() as u64).sum(),
            raw_bytes,
            by_kind,
            wisdom,
        })
    }
}
