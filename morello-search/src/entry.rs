//! One implementation of a spec summarised for the memo: its cost, peak memory per level, depth
//! and root action ([`Entry`]), and the total order the search breaks ties by. Frontiers
//! ([`crate::frontier`]) keep the non-dominated entries; the grid filter ([`crate::grid`]) sorts
//! them into cells.

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

    /// The order of [`crate::frontier::Frontier::from_candidates_on`] for the levels of `relevant`: cost, peaks
    /// there, then all peaks, depth and action.
    pub fn rank_on(&self, relevant: Peaks) -> (Cost, Peaks, Peaks, u32, u16) {
        (self.cost, self.peaks.on(relevant), self.peaks, self.depth, self.action)
    }

    /// Whether `self` is at least as good as `other` on cost and on every level's peak.
    pub fn dominates(&self, other: &Entry) -> bool {
        self.cost <= other.cost && self.peaks.fits(other.peaks)
    }
}
