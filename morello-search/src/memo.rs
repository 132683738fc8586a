//! The memo table: a concurrent map from canonical spec to its Pareto frontier, optionally backed by
//! a read-only source (a table on disk) that it consults for specs it does not hold.
//!
//! The table holds no memory limits: its frontiers answer the target's capacities (see
//! [`crate::frontier`]; a search under tighter limits solves into a memo of its own).
//! It is shared by searches (pass one `Arc<Memo>` to several [`crate::Search`]es) and is what the
//! database persists. It keeps an estimate of the memory it holds ([`Memo::estimated_bytes`]:
//! what it solved and what it read from the source), which a search's memory budget counts.
//!
//! ```text
//! get(spec)   in memory?  yes -> its frontier
//!             no, and a source: ask it; a hit is kept in memory (marked saved), a miss is None;
//!             a source that fails (a damaged table) is recorded once (`failure`) and answers None
//! insert      a spec the search solved: kept in memory, marked unsaved until `mark_saved`
//! ```
//!
//! So a search on a large table reads only the specs it touches: the explore phase asks for each
//! sub-spec once and treats a hit as a leaf, and reconstruction asks for the specs of the tree.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use dashmap::DashMap;
use morello_core::spec::CanonicalSpec;
use rustc_hash::FxBuildHasher;

use crate::frontier::Frontier;
use crate::memory::{frontier_bytes, map_entry_bytes, spec_heap_bytes};

/// Where a memo looks up the specs it does not hold: a read-only store of solved specs (such as
/// a table file, [`crate::db::OpenTable`]).
pub trait MemoSource: Send + Sync + fmt::Debug {
    /// The stored frontier of `spec`, if the source holds it.
    ///
    /// # Errors
    /// A message saying what is damaged (it names the file and the part of it).
    fn lookup(&self, spec: &CanonicalSpec) -> Result<Option<Arc<Frontier>>, String>;
}

/// A frontier in memory and whether the memo's source (or a save) already holds it.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    frontier: Arc<Frontier>,
    saved: bool,
}

/// Solved specs and their frontiers.
#[derive(Debug, Default)]
pub struct Memo {
    map: DashMap<CanonicalSpec, Slot, FxBuildHasher>,
    source: Option<Arc<dyn MemoSource>>,
    unsaved: AtomicUsize,
    failure: OnceLock<String>,
    /// The estimate of [`Memo::estimated_bytes`].
    bytes: AtomicU64,
}

impl Memo {
    /// An empty table.
    pub fn new() -> Self {
        Memo::default()
    }

    /// An empty table that looks up what it does not hold in `source`.
    pub fn with_source(source: Arc<dyn MemoSource>) -> Self {
        Memo { source: Some(source), ..Memo::default() }
    }

    /// The frontier of a solved spec (held in memory, or found in the source).
    pub fn get(&self, spec: &CanonicalSpec) -> Option<Arc<Frontier>> {
        if let Some(slot) = self.map.get(spec) {
            return Some(Arc::clone(&slot.frontier));
        }
        let source = self.source.as_ref()?;
        match source.lookup(spec) {
            Ok(Some(frontier)) => {
                let entry = self.map.entry(spec.clone());
                if let dashmap::Entry::Occupied(held) = &entry {
                    return Some(Arc::clone(&held.get().frontier));
                }
                self.bytes.fetch_add(memo_entry_bytes(spec, &frontier), Ordering::Relaxed);
                entry.or_insert(Slot { frontier: Arc::clone(&frontier), saved: true });
                Some(frontier)
            }
            Ok(None) => None,
            Err(message) => {
                let _ = self.failure.set(message);
                None
            }
        }
    }

    /// Records a spec's frontier (solved by a search: unsaved until [`Memo::mark_saved`]).
    pub fn insert(&self, spec: CanonicalSpec, frontier: Arc<Frontier>) {
        let entry = memo_entry_bytes(&spec, &frontier);
        let added = frontier_bytes(&frontier);
        let previous = self.map.insert(spec, Slot { frontier, saved: false });
        if previous.as_ref().is_none_or(|p| p.saved) {
            self.unsaved.fetch_add(1, Ordering::Relaxed);
        }
        match previous {
            None => self.bytes.fetch_add(entry, Ordering::Relaxed),
            // The map keeps its key; only the frontier changes (the old one was counted, so the
            // total stays above what is subtracted).
            Some(old) => {
                self.bytes.fetch_add(added, Ordering::Relaxed);
                self.bytes.fetch_sub(frontier_bytes(&old.frontier), Ordering::Relaxed)
            }
        };
    }

    /// An estimate of the bytes the table holds in memory: its specs, frontiers and map slots
    /// (see the `memory` module; frontiers shared with other tables are counted here too, the
    /// source's own caches are not).
    pub fn estimated_bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Whether a spec is solved (held in memory, or found in the source).
    pub fn contains(&self, spec: &CanonicalSpec) -> bool {
        self.get(spec).is_some()
    }

    /// The number of specs held in memory (solved here or read from the source so far).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether nothing is held in memory.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every spec held in memory and its frontier, sorted by spec (a deterministic order).
    pub fn entries(&self) -> Vec<(CanonicalSpec, Arc<Frontier>)> {
        self.collect(|_| true)
    }

    /// The specs solved here that no save holds yet, sorted by spec.
    pub fn unsaved(&self) -> Vec<(CanonicalSpec, Arc<Frontier>)> {
        self.collect(|slot| !slot.saved)
    }

    /// How many specs [`Memo::unsaved`] would return.
    pub fn unsaved_len(&self) -> usize {
        self.unsaved.load(Ordering::Relaxed)
    }

    /// Marks specs as saved (after a save wrote them).
    pub fn mark_saved<'a>(&self, specs: impl IntoIterator<Item = &'a CanonicalSpec>) {
        for spec in specs {
            if let Some(mut slot) = self.map.get_mut(spec) {
                if !slot.saved {
                    slot.saved = true;
                    self.unsaved.fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// The first failure of the source, if it failed (a damaged table): a search that sees one
    /// stops, and a memo with one is never saved.
    pub fn failure(&self) -> Option<&str> {
        self.failure.get().map(String::as_str)
    }

    fn collect(&self, keep: impl Fn(&Slot) -> bool) -> Vec<(CanonicalSpec, Arc<Frontier>)> {
        let mut out: Vec<(CanonicalSpec, Arc<Frontier>)> = self
            .map
            .iter()
            .filter(|e| keep(e.value()))
            .map(|e| (e.key().clone(), Arc::clone(&e.value().frontier)))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// Bytes one memo entry takes: its map slot, the spec's heap and the frontier.
fn memo_entry_bytes(spec: &CanonicalSpec, frontier: &Frontier) -> u64 {
    map_entry_bytes(size_of::<(CanonicalSpec, Slot)>()) + spec_heap_bytes(spec) + frontier_bytes(frontier)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use morello_core::spec::SpecBuilder;
    use morello_core::target::Target;

    use super::*;

    #[test]
    fn a_memo_entry_counts_the_spec_once_its_slot_and_its_frontier() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let matmul = SpecBuilder::matmul(4, 4, 4).build(&target).unwrap();
        let heap = spec_heap_bytes(&matmul);
        let frontier = Frontier::default();
        let entry = memo_entry_bytes(&matmul, &frontier);
        assert!(entry > heap + frontier_bytes(&frontier) + size_of::<CanonicalSpec>() as u64, "{entry}");
    }
}
