//! Pareto frontiers: the best implementations of a spec for every memory budget.
//!
//! A spec's implementations trade cost against peak memory per level. The frontier keeps every
//! implementation that no other beats on both: `a` dominates `b` when `a.cost <= b.cost` and
//! `a.peaks <= b.peaks` at every level the spec's frontier keeps apart (its relevant levels under
//! the search's limits, [`Frontier::from_candidates_on`] and `crate::projection`). The best
//! implementation under the limits `L` is the cheapest entry whose peaks fit `L` (ties: smaller
//! peaks, compared slowest level first, then shallower, then the earlier action), so one frontier
//! answers every budget the spec can be given under `L`: budgets are not part of the memo key,
//! and each spec is solved once.

use serde::{Deserialize, Serialize};

pub use crate::entry::Entry;
use crate::grid::{self, Grid};
use crate::peaks::Peaks;
use morello_core::cost::Cost;

/// Candidate lists at least this long are filtered on the grid of their peak codes
/// ([`grid::union`]) when it has at most [`GRID_CELLS_PER_CANDIDATE`] cells per candidate.
const GRID_ABOVE: usize = 64;

/// See [`GRID_ABOVE`].
const GRID_CELLS_PER_CANDIDATE: usize = 16;

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
    pub fn from_candidates(candidates: Vec<Entry>) -> Frontier {
        Frontier::from_candidates_on(candidates, Peaks::ALL)
    }

    /// A frontier of candidate entries compared on the levels of `relevant` only (a mask of
    /// [`Peaks`] bytes): one candidate dominates another when it costs no more and its peaks at
    /// those levels are no larger. Of candidates equal there, the smaller peaks elsewhere, then the
    /// shallower, then the earlier action wins.
    pub fn from_candidates_on(candidates: Vec<Entry>, relevant: Peaks) -> Frontier {
        // The pairwise filter compares each candidate with up to every kept entry; the grid
        // visits each cell a few times.
        if candidates.len() >= GRID_ABOVE && candidates.iter().all(|c| c.cost < Cost::MAX) {
            let masked = candidates.iter().map(|c| c.peaks.on(relevant));
            if let Some(grid) = Grid::spanning(masked, candidates.len() * GRID_CELLS_PER_CANDIDATE) {
                return Frontier { entries: grid::union(&grid, &candidates, relevant) };
            }
        }
        Frontier { entries: filter_pairwise(candidates, relevant) }
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

    /// Bytes the frontier holds on the heap (its entries' buffer).
    pub fn heap_bytes(&self) -> usize {
        self.entries.capacity() * size_of::<Entry>()
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

/// The candidates that survive [`Frontier::from_candidates_on`], by comparing each with the
/// entries kept so far (best-ranked first), in [`Entry::rank`] order.
fn filter_pairwise(mut candidates: Vec<Entry>, relevant: Peaks) -> Vec<Entry> {
    candidates.sort_unstable_by_key(|c| c.rank_on(relevant));
    let mut entries: Vec<Entry> = Vec::with_capacity(candidates.len().min(16));
    for c in candidates {
        // Everything already kept ranks before `c`, so has cost <= c.cost: `c` survives only
        // if no kept entry also fits inside its peaks.
        let peaks = c.peaks.on(relevant);
        if !entries.iter().any(|e| e.peaks.on(relevant).fits(peaks)) {
            entries.push(c);
        }
    }
    if relevant != Peaks::ALL {
        entries.sort_unstable_by_key(Entry::rank);
    }
    entries
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

    /// Random candidates: costs and peak codes from small ranges, so that ties and dominance
    /// are common, over four levels (the first always 0, as main memory's usually is).
    fn candidates() -> impl Strategy<Value = Vec<Entry>> {
        prop::collection::vec((0u64..40, [0u64..1, 0u64..6, 0u64..5, 0u64..4], 1u32..4, 0u16..5), 0..160)
            .prop_map(|v| v.into_iter().map(|(c, p, d, a)| Entry { depth: d, ..entry(c, &p, a) }).collect())
    }

    use proptest::prelude::*;

    proptest! {
        /// The grid filter keeps exactly what the pairwise filter keeps, for every projection.
        #[test]
        fn grid_union_equals_the_pairwise_filter(candidates in candidates(), levels in 0u8..16) {
            let relevant = Peaks((0..4).filter(|i| levels & (1 << i) != 0).fold(0, |m, i| m | (0xff << (56 - 8 * i))));
            let relevant = if levels == 15 { Peaks::ALL } else { relevant };
            let grid = Grid::spanning(candidates.iter().map(|c| c.peaks.on(relevant)), usize::MAX).unwrap();
            prop_assert_eq!(grid::union(&grid, &candidates, relevant), filter_pairwise(candidates, relevant));
        }
    }
}
