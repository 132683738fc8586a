//! Compact peak-memory vectors for frontiers: one byte per level in a `u64`.
//!
//! Peaks at caches and memory are powers of two or three quarters of one (the cost model snaps
//! them up, `morello_core::cost::snap_bytes`), so a byte holds `2 log2(peak) + 1` for `2^k` and
//! `2k` for `3 * 2^(k-2)` (0 for nothing: 1, 2, 3, 4, 6, 8 bytes are codes 1, 3, 4, 5, 6, 7, in
//! order); register counts are stored as they are. Comparisons then work
//! on all levels at once with bit tricks (each byte below 128, so no borrow crosses a byte):
//!
//! ```text
//! fits(a, b)  <=>  ((b | H) - a) & H == H        H = 0x8080...80
//! max(a, b)   =    select bytes of a where ((a | H) - b) & H is set, else of b
//! ```
//!
//! The first level is the most significant byte, so comparing the `u64`s compares levels slowest
//! first, which is the tie-break order of frontiers. Limits encode rounded down to the largest
//! such amount, so a snapped peak fits a limit exactly when its code does.

use morello_core::cost::snap_bytes;
use morello_core::target::{LevelKind, MAX_LEVELS, MemVec, Target};
use serde::{Deserialize, Serialize};

const HIGH: u64 = 0x8080_8080_8080_8080;

/// Peak memory per level, one byte per level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct Peaks(pub u64);

impl Peaks {
    /// Nothing at any level.
    pub const ZERO: Peaks = Peaks(0);

    /// Every level: the mask that keeps all of a peak vector.
    pub const ALL: Peaks = Peaks(u64::MAX);

    /// The levels of `self` that `mask` keeps (a byte of ones per kept level), the others zero.
    pub fn on(self, mask: Peaks) -> Peaks {
        Peaks(self.0 & mask.0)
    }

    /// Whether every level of `self` is at most the level of `limits`.
    pub fn fits(self, limits: Peaks) -> bool {
        ((limits.0 | HIGH).wrapping_sub(self.0)) & HIGH == HIGH
    }

    /// The larger of each level.
    pub fn max(self, other: Peaks) -> Peaks {
        let a_ge_b = ((self.0 | HIGH).wrapping_sub(other.0)) & HIGH;
        let mask = (a_ge_b >> 7).wrapping_mul(0xff);
        Peaks((self.0 & mask) | (other.0 & !mask))
    }
}

/// How a target's levels encode into [`Peaks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeakCodec {
    levels: usize,
    /// Whether each level counts registers (stored as is) or bytes (stored as a log).
    registers: [bool; MAX_LEVELS],
}

/// The byte of level `i` (level 0 is the most significant).
fn shift(i: usize) -> u32 {
    8 * (MAX_LEVELS - 1 - i) as u32
}

impl PeakCodec {
    /// The codec for `target`.
    pub fn new(target: &Target) -> Self {
        let mut registers = [false; MAX_LEVELS];
        for (i, l) in target.levels().iter().enumerate() {
            registers[i] = !matches!(l.kind, LevelKind::Cache | LevelKind::Memory);
        }
        PeakCodec { levels: target.levels().len(), registers }
    }

    /// The mask of the levels in `levels` (a bit per level id).
    pub fn mask(&self, levels: u8) -> Peaks {
        Peaks((0..self.levels).filter(|&i| levels & (1 << i) != 0).fold(0, |m, i| m | (0xff << shift(i))))
    }

    /// Encodes peaks (cache and memory amounts snapped, else rounded up; registers at most 127).
    pub fn encode_peaks(&self, peaks: &MemVec) -> Peaks {
        self.encode(peaks, |v| code_of(snap_bytes(v)))
    }

    /// Encodes limits, rounding byte amounts down to the largest snapped amount.
    pub fn encode_limits(&self, limits: &MemVec) -> Peaks {
        self.encode(limits, |v| {
            if v == 0 {
                return 0;
            }
            let floor = 1u64 << (63 - v.leading_zeros());
            if (2..1 << 63).contains(&floor) && v >= floor / 2 * 3 {
                code_of(floor / 2 * 3)
            } else {
                code_of(floor)
            }
        })
    }

    fn encode(&self, values: &MemVec, log: impl Fn(u64) -> u64) -> Peaks {
        let mut out = 0u64;
        for i in 0..self.levels {
            let v = values.0[i];
            let code = if self.registers[i] { v.min(127) } else { log(v) };
            out |= code << shift(i);
        }
        Peaks(out)
    }

    /// Decodes peaks back into amounts.
    pub fn decode(&self, peaks: Peaks) -> MemVec {
        MemVec::from_fn(self.levels, |i| {
            let code = (peaks.0 >> shift(i)) & 0xff;
            match (self.registers[i], code) {
                (true, c) => c,
                (false, 0) => 0,
                (false, c) if c % 2 == 1 => 1u64 << (c / 2),
                (false, c) => 3u64 << (c / 2).saturating_sub(2),
            }
        })
    }
}

/// The code of a snapped amount: `2k + 1` for `2^k`, `2k` for `3 * 2^(k-2)`, 127 for more than
/// `2^63` (saturated).
fn code_of(v: u64) -> u64 {
    match v {
        0 => 0,
        v if v.is_power_of_two() => 2 * u64::from(v.trailing_zeros()) + 1,
        v if v == 3 << v.trailing_zeros() => 2 * u64::from(v.trailing_zeros()) + 4,
        _ => 127,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_compares_and_takes_maxima() {
        let t = Target::builtin("x86-avx2", 1).unwrap();
        let codec = PeakCodec::new(&t);
        let a = MemVec::from_fn(5, |i| [0, 1024, 64, 8, 2][i]);
        let b = MemVec::from_fn(5, |i| [0, 512, 4096, 3, 2][i]);
        let (pa, pb) = (codec.encode_peaks(&a), codec.encode_peaks(&b));
        assert_eq!(codec.decode(pa), a);
        assert_eq!(codec.decode(pa.max(pb)), a.elementwise_max(&b));
        assert!(!pa.fits(pb) && !pb.fits(pa));
        assert!(pa.fits(pa.max(pb)));
        // Limits round down: 1500 bytes admits 1024, not 2048.
        let limits = codec.encode_limits(&MemVec::from_fn(5, |i| [1 << 40, 1500, 1 << 15, 16, 16][i]));
        assert!(pa.fits(limits));
        let big = codec.encode_peaks(&MemVec::from_fn(5, |i| [0, 2048, 64, 8, 2][i]));
        assert!(!big.fits(limits));
        // Lexicographic order: slowest level first.
        assert!(pb < pa);
    }

    #[test]
    fn snapped_amounts_code_in_order_and_limits_round_down() {
        let t = Target::builtin("x86-avx2", 1).unwrap();
        let codec = PeakCodec::new(&t);
        let at_l1 = |v: u64| MemVec::from_fn(5, |i| if i == 2 { v } else { 0 });
        let mut last = (0, Peaks::ZERO);
        for v in (1..5000).chain([48 << 10, (48 << 10) + 1, 3 << 40, 1 << 63, u64::MAX]) {
            let snapped = snap_bytes(v);
            assert!(
                snapped >= v && (snapped == u64::MAX || snapped < v.max(2).saturating_mul(2)),
                "{v} -> {snapped}"
            );
            let peaks = codec.encode_peaks(&at_l1(v));
            let limits = codec.encode_limits(&at_l1(v));
            assert!(peaks.fits(limits) == (snapped == v || v == u64::MAX), "{v}");
            if snapped != u64::MAX {
                assert_eq!(codec.decode(peaks), at_l1(snapped), "{v}");
                assert!(codec.decode(limits).get(morello_core::target::LevelId(2)) <= v, "{v}");
            }
            if v < 5000 {
                assert!(peaks >= last.1 && (snapped > last.0) == (peaks > last.1), "{v}");
                last = (snapped, peaks);
            }
        }
        // A 48 KiB L1 admits 48 KiB (three quarters of 64), not more.
        let l1 = codec.encode_limits(&at_l1(48 << 10));
        assert!(codec.encode_peaks(&at_l1(40 << 10)).fits(l1));
        assert!(!codec.encode_peaks(&at_l1((48 << 10) + 1)).fits(l1));
        assert_eq!(snap_bytes(33 << 10), 48 << 10);
        assert_eq!(snap_bytes(49 << 10), 64 << 10);
    }
}
