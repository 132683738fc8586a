//! Pareto frontiers: the best implementations of a spec for every memory budget.
//!
//! A spec's implementations trade cost against peak memory per level. The frontier keeps every
//! implementation that no other beats on both: `a` dominates `b` when `a.cost <= b.cost` and
//! `a.peaks <= b.peaks` at every level. The best implementation under limits `L` is the cheapest
//! entry whose peaks fit `L` (ties: smaller peaks, compared slowest level first, then shallower,
//! then the earlier action), so one frontier answers every memory-limit query: memory limits are
//! not part of the memo key, and each spec is solved once.

use serde::{Deserialize, Serialize};

use crate::peaks::Peaks;
use morello_core::cost::Cost;

/// One implementation summarised: its cost, peaks, depth and the action at its root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Entry {
    /// The implementation's cost.
    pub cost: Cost,
    /// Its peak memory per level (encoded; see [`crate::peaks`]).
    pub peaks: Peaks,
    /// The depth of its tree (a kernel is 1).
    pub depth: u32,
    /// The index of its root action in `actions(spec)`.
    pub action: u16,
}

impl Entry {
    /// The total order used for ties: cost, then peaks (slowest level first), then depth, then action.
    pub fn rank(&self) -> (Cost, Peaks, u32, u16) {
        (self.cost, self.peaks, self.depth, self.action)
    }

    /// Whether `self` is at least as good as `other` on cost and on every level's peak.
    pub fn dominates(&self, other: &Entry) -> bool {
        self.cost <= other.cost && self.peaks.fits(other.peaks)
    }
}

/// The non-dominated implementations of one spec, sorted by [`Entry::rank`].
///
/// # Invariants
/// Sorted by rank; no entry dominates another (of two entries with equal cost and peaks only the
/// better-ranked one is kept). Empty means no implementation fits the target at all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frontier {
    entries: Vec<Entry>,
}

impl Frontier {
    /// A frontier of candidate entries: dominated ones are dropped.
    pub fn from_candidates(mut candidates: Vec<Entry>) -> Frontier {
        candidates.sort_unstable_by_key(Entry::rank);
        let mut entries: Vec<Entry> = Vec::with_capacity(candidates.len().min(16));
        for c in candidates {
            // Everything already kept ranks before `c`, so has cost <= c.cost: `c` survives only
            // if no kept entry also fits inside its peaks.
            if !entries.iter().any(|e| e.peaks.fits(c.peaks)) {
                entries.push(c);
            }
        }
        Frontier { entries }
    }

    /// Entries already sorted by rank (strictly ascending), as a table stores them; the caller
    /// checked the order (`db::validate`), and a dominated entry among them would only cost space.
    pub(crate) fn from_sorted(entries: Vec<Entry>) -> Frontier {
        debug_assert!(entries.windows(2).all(|p| p[0].rank() < p[1].rank()));
        Frontier { entries }
    }

    /// At most `k` of the entries, evenly spread from the cheapest to the smallest (both kept when
    /// `k >= 2`): still sorted and free of dominated entries, but no longer every trade-off. The
    /// quick fallback of a stopped search keeps frontiers this small.
    pub fn thinned(&self, k: usize) -> Frontier {
        let n = self.entries.len();
        if n <= k {
            return self.clone();
        }
        let entries = match k {
            0 => Vec::new(),
            1 => vec![self.entries[0]],
            _ => (0..k).map(|i| self.entries[i * (n - 1) / (k - 1)]).collect(),
        };
        Frontier { entries }
    }

    /// The entries, best-ranked first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Whether no implementation exists.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The best entry whose peaks fit `limits` (encoded with [`crate::peaks::PeakCodec::encode_limits`]).
    pub fn best(&self, limits: Peaks) -> Option<&Entry> {
        self.entries.iter().find(|e| e.peaks.fits(limits))
    }

    /// The best entry for the given action whose peaks fit `limits`.
    pub fn best_for_action(&self, action: u16, limits: Peaks) -> Option<&Entry> {
        self.entries.iter().find(|e| e.action == action && e.peaks.fits(limits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry whose peaks are the given codes, most significant level first.
    fn entry(cost: Cost, peaks: &[u64], action: u16) -> Entry {
        let code = peaks.iter().enumerate().fold(0u64, |acc, (i, p)| acc | (p << (56 - 8 * i)));
        Entry { cost, peaks: Peaks(code), depth: 1, action }
    }

    fn limits(peaks: &[u64]) -> Peaks {
        entry(0, peaks, 0).peaks
    }

    #[test]
    fn keeps_only_non_dominated_entries() {
        let f = Frontier::from_candidates(vec![
            entry(10, &[4, 0], 0),
            entry(5, &[8, 0], 1),
            entry(12, &[4, 1], 2), // dominated by the first
            entry(5, &[8, 0], 3),  // tie with action 1: the earlier action wins
            entry(20, &[1, 0], 4),
        ]);
        let actions: Vec<u16> = f.entries().iter().map(|e| e.action).collect();
        assert_eq!(actions, [1, 0, 4]);
        assert_eq!(f.best(limits(&[100, 100])).unwrap().action, 1);
        assert_eq!(f.best(limits(&[5, 0])).unwrap().action, 0);
        assert_eq!(f.best(limits(&[2, 0])).unwrap().action, 4);
        assert!(f.best(Peaks::ZERO).is_none());
    }

    #[test]
    fn thinning_keeps_the_cheapest_and_the_smallest() {
        let f = Frontier::from_candidates((0..10).map(|i| entry(i, &[10 - i, 0], 0)).collect());
        let costs = |f: &Frontier| f.entries().iter().map(|e| e.cost).collect::<Vec<_>>();
        assert_eq!(costs(&f.thinned(3)), [0, 4, 9]);
        assert_eq!(costs(&f.thinned(1)), [0]);
        assert_eq!(costs(&f.thinned(20)), costs(&f));
    }
}
