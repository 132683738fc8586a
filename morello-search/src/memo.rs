//! The memo table: a concurrent map from canonical spec to its Pareto frontier.
//!
//! The table holds no memory limits: a frontier answers every limit (see [`crate::frontier`]).
//! It is shared by searches (pass one `Arc<Memo>` to several [`crate::Search`]es) and is what the
//! database persists.

use std::sync::Arc;

use dashmap::DashMap;
use morello_core::spec::CanonicalSpec;
use rustc_hash::FxBuildHasher;

use crate::frontier::Frontier;

/// Solved specs and their frontiers.
#[derive(Debug, Default)]
pub struct Memo {
    map: DashMap<CanonicalSpec, Arc<Frontier>, FxBuildHasher>,
}

impl Memo {
    /// An empty table.
    pub fn new() -> Self {
        Memo { map: DashMap::with_hasher(FxBuildHasher) }
    }

    /// The frontier of a solved spec.
    pub fn get(&self, spec: &CanonicalSpec) -> Option<Arc<Frontier>> {
        self.map.get(spec).map(|f| Arc::clone(&f))
    }

    /// Records a spec's frontier.
    pub fn insert(&self, spec: CanonicalSpec, frontier: Arc<Frontier>) {
        self.map.insert(spec, frontier);
    }

    /// Whether a spec is solved.
    pub fn contains(&self, spec: &CanonicalSpec) -> bool {
        self.map.contains_key(spec)
    }

    /// The number of solved specs.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether nothing is solved.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every solved spec and its frontier, sorted by spec (a deterministic order).
    pub fn entries(&self) -> Vec<(CanonicalSpec, Arc<Frontier>)> {
        let mut out: Vec<(CanonicalSpec, Arc<Frontier>)> =
            self.map.iter().map(|e| (e.key().clone(), Arc::clone(e.value()))).collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}
