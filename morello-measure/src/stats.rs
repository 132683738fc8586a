//! Summary statistics of timing samples: median, quartiles and range.
//!
//! Quartiles use linear interpolation between order statistics (the "type 7" definition of R
//! and NumPy's default):
//!
//! ```text
//! q(p) = x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]),  h = (n - 1) * p
//! ```

use serde::Serialize;

/// The median, quartiles and range of a non-empty set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SampleStats {
    /// Number of samples.
    pub count: usize,
    /// The smallest sample.
    pub min: f64,
    /// The first quartile.
    pub q1: f64,
    /// The median.
    pub median: f64,
    /// The third quartile.
    pub q3: f64,
    /// The largest sample.
    pub max: f64,
}

impl SampleStats {
    /// Statistics of `samples`; `None` if there are none or one is not finite.
    pub fn of(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let quantile = |p: f64| {
            let h = (sorted.len() - 1) as f64 * p;
            let low = h.floor() as usize;
            let high = (low + 1).min(sorted.len() - 1);
            sorted[low] + (h - low as f64) * (sorted[high] - sorted[low])
        };
        Some(SampleStats {
            count: sorted.len(),
            min: sorted[0],
            q1: quantile(0.25),
            median: quantile(0.5),
            q3: quantile(0.75),
            max: sorted[sorted.len() - 1],
        })
    }

    /// The interquartile range relative to the median, `(q3 - q1) / median` (0 when the median
    /// is 0): a unitless measure of noise.
    pub fn relative_iqr(&self) -> f64 {
        if self.median == 0.0 { 0.0 } else { (self.q3 - self.q1) / self.median }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_interpolate() {
        let stats = SampleStats::of(&[4.0, 1.0, 3.0, 2.0, 5.0]).expect("non-empty");
        assert_eq!((stats.min, stats.q1, stats.median, stats.q3, stats.max), (1.0, 2.0, 3.0, 4.0, 5.0));
        let even = SampleStats::of(&[1.0, 2.0, 3.0, 4.0]).expect("non-empty");
        assert_eq!((even.q1, even.median, even.q3), (1.75, 2.5, 3.25));
        assert_eq!(SampleStats::of(&[7.0]).map(|s| s.median), Some(7.0));
        assert!(SampleStats::of(&[]).is_none());
        assert!(SampleStats::of(&[1.0, f64::NAN]).is_none());
    }
}
