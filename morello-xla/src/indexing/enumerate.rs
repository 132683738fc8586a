//! Enumeration of every `(source index, target index)` pair a small map relates.

use std::collections::BTreeSet;

use morello_core::expr::{Interval, Point};

use super::simplify::{advance, interval_size};
use super::{IndexingError, IndexingMap};

/// One pair a map relates: a source index and one of its target indices.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IndexPair {
    /// The index in the source (the map's dims).
    pub source: Vec<i64>,
    /// The index in the target (the map's results).
    pub target: Vec<i64>,
}

/// How much work [`IndexingMap::enumerate`] may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnumerationLimits {
    /// The most pairs it may return.
    pub max_pairs: usize,
    /// The most candidate points `(d, s)` (the product of all range sizes) it may visit.
    pub max_points: u64,
}

impl Default for EnumerationLimits {
    /// A million pairs from at most 64 million candidate points.
    fn default() -> Self {
        EnumerationLimits { max_pairs: 1_000_000, max_points: 64_000_000 }
    }
}

impl IndexingMap {
    /// Every pair `(d, f(d, s))` the map relates, sorted and without repeats.
    ///
    /// Visits every point of the box of dim and symbol ranges and keeps those that satisfy the
    /// constraints, so it decides exactly whether a small map is empty.
    ///
    /// ```
    /// use morello_xla::indexing::{EnumerationLimits, IndexingMap};
    /// let map: IndexingMap = "(d0)[s0] -> (s0, d0), domain: d0 in [0, 1], s0 in [0, 2]".parse().unwrap();
    /// let pairs = map.enumerate(&EnumerationLimits::default()).unwrap();
    /// assert_eq!(pairs.len(), 6);
    /// assert_eq!((pairs[1].source.clone(), pairs[1].target.clone()), (vec![0], vec![1, 0]));
    /// ```
    ///
    /// # Errors
    /// [`IndexingError::TooManyPoints`] before any work if the box exceeds `limits.max_points`,
    /// [`IndexingError::TooManyPairs`] once more than `limits.max_pairs` distinct pairs are
    /// found, [`IndexingError::Arithmetic`] if evaluation overflows.
    pub fn enumerate(&self, limits: &EnumerationLimits) -> Result<Vec<IndexPair>, IndexingError> {
        let boxes: Vec<Interval> = self.dim_ranges.iter().chain(&self.symbol_ranges).copied().collect();
        let points = boxes.iter().fold(1u128, |acc, r| acc.saturating_mul(interval_size(*r)));
        if points > u128::from(limits.max_points) {
            return Err(IndexingError::TooManyPoints { points, limit: limits.max_points });
        }
        let mut pairs = BTreeSet::new();
        if points == 0 {
            return Ok(Vec::new());
        }
        let n = self.num_dims();
        let mut values: Vec<i64> = boxes.iter().map(|r| r.lo).collect();
        loop {
            let point = Point { dims: &values[..n], symbols: &values[n..] };
            let mut inside = true;
            for constraint in &self.constraints {
                if !constraint.holds(&point)? {
                    inside = false;
                    break;
                }
            }
            if inside {
                let target = self.results.iter().map(|r| r.eval(&point)).collect::<Result<Vec<_>, _>>()?;
                pairs.insert(IndexPair { source: values[..n].to_vec(), target });
                if pairs.len() > limits.max_pairs {
                    return Err(IndexingError::TooManyPairs { limit: limits.max_pairs });
                }
            }
            if !advance(&mut values, &boxes) {
                break;
            }
        }
        Ok(pairs.into_iter().collect())
    }
}
