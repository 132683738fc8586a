//! Memory vectors: one amount per memory level (peaks, limits, allocations).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{LevelId, Target};

/// The most levels a target may have.
pub const MAX_LEVELS: usize = 8;

/// An amount per memory level: registers for register levels, bytes otherwise.
///
/// Levels a target does not have hold 0, so vectors of one target compare directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct MemVec(pub [u64; MAX_LEVELS]);

impl MemVec {
    /// All zeros.
    pub const ZERO: MemVec = MemVec([0; MAX_LEVELS]);

    /// A vector whose first `len` entries are `f(i)`.
    pub fn from_fn(len: usize, f: impl Fn(usize) -> u64) -> MemVec {
        let mut out = [0; MAX_LEVELS];
        for (i, slot) in out.iter_mut().enumerate().take(len) {
            *slot = f(i);
        }
        MemVec(out)
    }

    /// A vector with `amount` at one level.
    pub fn single(level: LevelId, amount: u64) -> MemVec {
        let mut out = MemVec::ZERO;
        out.0[level.index()] = amount;
        out
    }

    /// The amount at one level.
    pub fn get(&self, level: LevelId) -> u64 {
        self.0[level.index()]
    }

    /// Sets the amount at one level.
    pub fn set(&mut self, level: LevelId, amount: u64) {
        self.0[level.index()] = amount;
    }

    /// Elementwise maximum (the peak of things that run one after another).
    pub fn elementwise_max(&self, other: &MemVec) -> MemVec {
        MemVec(std::array::from_fn(|i| self.0[i].max(other.0[i])))
    }

    /// Elementwise sum, saturating (the peak of things live at the same time).
    pub fn saturating_add(&self, other: &MemVec) -> MemVec {
        MemVec(std::array::from_fn(|i| self.0[i].saturating_add(other.0[i])))
    }

    /// Elementwise difference, or `None` if some entry of `other` is larger.
    pub fn checked_sub(&self, other: &MemVec) -> Option<MemVec> {
        let mut out = [0; MAX_LEVELS];
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = self.0[i].checked_sub(other.0[i])?;
        }
        Some(MemVec(out))
    }

    /// Whether every entry is at most the corresponding entry of `limits`.
    pub fn fits(&self, limits: &MemVec) -> bool {
        self.0.iter().zip(&limits.0).all(|(a, b)| a <= b)
    }

    /// Text such as `GL=0 L2=0 L1=1024 VRF=8 RF=0` for a target's levels.
    pub fn display<'a>(&'a self, target: &'a Target) -> impl fmt::Display + 'a {
        DisplayMemVec { vec: self, target }
    }
}

struct DisplayMemVec<'a> {
    vec: &'a MemVec,
    target: &'a Target,
}

impl fmt::Display for DisplayMemVec<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, level) in self.target.levels().iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}={}", level.name, self.vec.0[i])?;
        }
        Ok(())
    }
}
