//! Rank correlation: how well one ordering (a cost model's predictions) agrees with another (the
//! measured times), whatever the scale of either.
//!
//! Spearman's coefficient is Pearson's correlation of the ranks. Tied values share the average of
//! the ranks they span (values 10, 20, 20, 30 get ranks 1, 2.5, 2.5, 4), so the coefficient stays
//! exact with ties, where the shortcut `1 - 6 Σd² / (n (n² - 1))` is not:
//!
//! ```text
//! rho = Σ (r_i - r̄)(s_i - s̄) / sqrt(Σ (r_i - r̄)² · Σ (s_i - s̄)²)     r = ranks(x), s = ranks(y)
//! ```
//!
//! `rho` is 1 when `y` increases with `x` (not necessarily linearly), -1 when it decreases, and
//! about 0 when the orders are unrelated.
//!
//! How far a figure of a run's median times could move with other samples of the same run is a
//! bootstrap over its rounds ([`bootstrap_rounds`]); [`spearman_interval`] applies it to rho.

use rand::{Rng, SeedableRng};

use crate::stats::SampleStats;

/// The ranks of `values`, 1-based, ties given the average of the ranks they span; `None` if a
/// value is NaN.
///
/// ```
/// use morello_measure::correlation::average_ranks;
/// assert_eq!(average_ranks(&[10.0, 30.0, 20.0, 20.0]), Some(vec![1.0, 4.0, 2.5, 2.5]));
/// ```
pub fn average_ranks(values: &[f64]) -> Option<Vec<f64>> {
    if values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start..end (0-based) hold equal values: ranks start+1 ..= end, averaged.
        let average = (start + 1 + end) as f64 / 2.0;
        for &index in &order[start..end] {
            ranks[index] = average;
        }
        start = end;
    }
    Some(ranks)
}

/// Spearman's rank correlation of `x` and `y` (pairs `(x_i, y_i)`), with average ranks for ties.
///
/// `None` when it is undefined: fewer than two pairs, lengths that differ, a NaN, or all values of
/// one side equal (no order to compare).
///
/// ```
/// use morello_measure::correlation::spearman;
/// // y grows with x, though not linearly: perfect rank agreement.
/// assert_eq!(spearman(&[1.0, 2.0, 3.0, 4.0], &[1.0, 8.0, 27.0, 64.0]), Some(1.0));
/// assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
/// assert_eq!(spearman(&[1.0, 2.0], &[5.0, 5.0]), None);
/// ```
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 {
        return None;
    }
    let (rx, ry) = (average_ranks(x)?, average_ranks(y)?);
    pearson(&rx, &ry)
}

/// What a ranking says about the differences a timer can see ([`pairs_apart`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PairsApart {
    /// All pairs of candidates.
    pub pairs: usize,
    /// Pairs whose timings do not overlap: every sample of one ran faster than every sample of the
    /// other.
    pub apart: usize,
    /// Of those, the pairs the ranking orders as measured: the faster one predicted strictly cheaper.
    pub ordered: usize,
    /// The others, as `(faster, slower)` indices: the faster one was not predicted cheaper. In the
    /// order of `faster`, then `slower`.
    pub misordered: Vec<(usize, usize)>,
}

/// Of the pairs of candidates, those a timer tells apart (their sample ranges `ranges[i] = (min,
/// max)` do not overlap), and how many of them `predicted` orders as measured. Spearman's
/// coefficient weighs every swap alike, also of candidates whose times overlap; this counts only
/// the differences the measurement shows. Lengths that differ count nothing.
///
/// ```
/// use morello_measure::correlation::{PairsApart, pairs_apart};
/// // The first two overlap; the third ran slower than both and is predicted costlier than the
/// // first only.
/// let ranges = [(1.0, 1.2), (1.1, 1.3), (2.0, 2.1)];
/// let counts = pairs_apart(&[1.0, 3.0, 2.0], &ranges);
/// assert_eq!(counts, PairsApart { pairs: 3, apart: 2, ordered: 1, misordered: vec![(1, 2)] });
/// ```
pub fn pairs_apart(predicted: &[f64], ranges: &[(f64, f64)]) -> PairsApart {
    if predicted.len() != ranges.len() {
        return PairsApart::default();
    }
    let mut counts = PairsApart::default();
    for i in 0..predicted.len() {
        for j in i + 1..predicted.len() {
            counts.pairs += 1;
            let (faster, slower) = if ranges[i].1 < ranges[j].0 {
                (i, j)
            } else if ranges[j].1 < ranges[i].0 {
                (j, i)
            } else {
                continue;
            };
            counts.apart += 1;
            if predicted[faster] < predicted[slower] {
                counts.ordered += 1;
            } else {
                counts.misordered.push((faster, slower));
            }
        }
    }
    counts.misordered.sort_unstable();
    counts
}

/// How far [`spearman`] of `predicted` against the kernels' median times could move with other
/// samples: a bootstrap interval over the rounds of a run.
///
/// `samples[i]` are kernel `i`'s times in the order taken, sample `s` of every kernel from round
/// `s` (a run alternates its candidates, every round timing each once). Each of `resamples`
/// resamples draws as many rounds as the run had, with replacement, and takes each kernel's
/// median over them, so that what disturbed one round (another program, a frequency change)
/// stays together; the interval is the central `level` of the resamples' coefficients (0.9: from
/// the 5th percentile to the 95th). The draws come from `seed`, so a run's interval repeats.
///
/// `None` if there are fewer than two rounds (every kernel's shortest row counts) or fewer than
/// half the resamples define a coefficient.
///
/// ```
/// use morello_measure::correlation::spearman_interval;
/// // Three kernels whose times never overlap, in the predicted order: every resample agrees.
/// let samples = [vec![1.0, 1.1, 1.0], vec![2.0, 2.1, 2.0], vec![3.0, 3.2, 3.1]];
/// assert_eq!(spearman_interval(&[1.0, 2.0, 3.0], &samples, 200, 0.9, 7), Some((1.0, 1.0)));
/// ```
pub fn spearman_interval(
    predicted: &[f64],
    samples: &[Vec<f64>],
    resamples: usize,
    level: f64,
    seed: u64,
) -> Option<(f64, f64)> {
    if predicted.len() != samples.len() {
        return None;
    }
    bootstrap_rounds(samples, resamples, level, seed, |medians| spearman(predicted, medians))
}

/// How far a `statistic` of the kernels' median times could move with other samples: the central
/// `level` of its values over `resamples` resamples of the run's rounds.
///
/// `samples[i]` are kernel `i`'s times in the order taken, sample `s` of every kernel from round
/// `s`. Each resample draws as many rounds as the run had, with replacement (whole rounds, so
/// what disturbed one round stays together), and passes `statistic` each kernel's median over
/// them, in the order of `samples`. The draws come from `seed`. [`spearman_interval`] is this
/// with Spearman's coefficient as the statistic.
///
/// `None` if there are fewer than two rounds (every kernel's shortest row counts) or the statistic
/// is undefined (`None`) for more than half the resamples.
///
/// ```
/// use morello_measure::correlation::bootstrap_rounds;
/// // The first kernel always runs at twice the second's time: every resample says so.
/// let samples = [vec![2.0, 4.0, 3.0], vec![1.0, 2.0, 1.5]];
/// let ratio = |m: &[f64]| Some(m[0] / m[1]);
/// assert_eq!(bootstrap_rounds(&samples, 200, 0.9, 7, ratio), Some((2.0, 2.0)));
/// ```
pub fn bootstrap_rounds(
    samples: &[Vec<f64>],
    resamples: usize,
    level: f64,
    seed: u64,
    mut statistic: impl FnMut(&[f64]) -> Option<f64>,
) -> Option<(f64, f64)> {
    let rounds = samples.iter().map(Vec::len).min()?;
    if rounds < 2 {
        return None;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut drawn = vec![0usize; rounds];
    let mut times = Vec::with_capacity(rounds);
    let mut values: Vec<f64> = (0..resamples)
        .filter_map(|_| {
            drawn.iter_mut().for_each(|d| *d = rng.random_range(0..rounds));
            let medians: Option<Vec<f64>> = samples
                .iter()
                .map(|row| {
                    times.clear();
                    times.extend(drawn.iter().map(|&d| row[d]));
                    SampleStats::of(&times).map(|s| s.median)
                })
                .collect();
            statistic(&medians?)
        })
        .filter(|v| !v.is_nan())
        .collect();
    if values.len() * 2 < resamples.max(1) {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let at = |p: f64| values[((values.len() - 1) as f64 * p).round() as usize];
    let tail = (1.0 - level.clamp(0.0, 1.0)) / 2.0;
    Some((at(tail), at(1.0 - tail)))
}

/// Pearson's correlation; `None` if either side has no variance.
fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn ties_share_the_average_rank() {
        assert_eq!(average_ranks(&[]), Some(vec![]));
        assert_eq!(average_ranks(&[5.0]), Some(vec![1.0]));
        assert_eq!(average_ranks(&[2.0, 2.0, 2.0]), Some(vec![2.0, 2.0, 2.0]));
        assert_eq!(average_ranks(&[3.0, 1.0, 3.0, 2.0, 1.0]), Some(vec![4.5, 1.5, 4.5, 3.0, 1.5]));
        assert_eq!(average_ranks(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn agrees_with_the_textbook_formula_without_ties() {
        // rho = 1 - 6 Σ d² / (n (n² - 1)); here d = (0, -2, 1, 1, 0), Σ d² = 6, n = 5.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [10.0, 40.0, 20.0, 30.0, 50.0];
        assert!(close(spearman(&x, &y), 1.0 - 6.0 * 6.0 / (5.0 * 24.0)));
    }

    #[test]
    fn ties_use_pearson_on_average_ranks() {
        // Ranks of x: 1, 2.5, 2.5, 4; of y: 1, 2, 3, 4. Means 2.5; Σ (rx - 2.5)(ry - 2.5) = 4.5,
        // Σ (rx - 2.5)² = 4.5, Σ (ry - 2.5)² = 5, so rho = 4.5 / sqrt(22.5).
        let rho = spearman(&[1.0, 2.0, 2.0, 3.0], &[1.0, 2.0, 3.0, 4.0]);
        assert!(close(rho, 4.5 / 22.5f64.sqrt()), "{rho:?}");
    }

    #[test]
    fn is_invariant_under_monotone_maps_and_symmetric() {
        let x = [3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0];
        let y = [2.0, 7.0, 1.0, 8.0, 2.5, 8.5, 1.8, 2.8];
        let rho = spearman(&x, &y).expect("defined");
        let exp: Vec<f64> = x.iter().map(|v: &f64| v.exp()).collect();
        assert!(close(spearman(&exp, &y), rho));
        assert!(close(spearman(&y, &x), rho));
        let negated: Vec<f64> = y.iter().map(|v| -v).collect();
        assert!(close(spearman(&x, &negated), -rho));
    }

    #[test]
    fn only_pairs_whose_samples_do_not_overlap_count() {
        // Touching ranges overlap; equal predictions order nothing.
        let ranges = [(1.0, 2.0), (2.0, 3.0), (3.5, 4.0), (0.1, 0.2)];
        let counts = pairs_apart(&[1.0, 2.0, 2.0, 5.0], &ranges);
        // Apart: (0, 2), (1, 2), (3, every other); ordered: (0, 2) only (1 and 2 tie, 3 is
        // predicted costliest and ran fastest).
        assert_eq!(
            counts,
            PairsApart { pairs: 6, apart: 5, ordered: 1, misordered: vec![(1, 2), (3, 0), (3, 1), (3, 2)] }
        );
        assert_eq!(pairs_apart(&[1.0], &[(1.0, 1.0)]), PairsApart::default());
        assert_eq!(pairs_apart(&[1.0, 2.0], &[(1.0, 1.0)]), PairsApart::default());
    }

    #[test]
    fn undefined_cases_are_none() {
        assert_eq!(spearman(&[1.0], &[1.0]), None);
        assert_eq!(spearman(&[1.0, 2.0], &[1.0]), None);
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(spearman(&[1.0, f64::NAN], &[1.0, 2.0]), None);
    }

    /// A slow round slows every kernel in it: drawn together, such rounds keep the order, where
    /// kernels whose samples swap places from round to round give a wide interval.
    #[test]
    fn bootstrap_draws_whole_rounds() {
        let factors = [1.0, 1.5, 0.9, 2.0, 1.1, 1.3, 0.95];
        let drifting: Vec<Vec<f64>> =
            [1.0, 1.02, 1.04].iter().map(|&base| factors.iter().map(|f| base * f).collect()).collect();
        assert_eq!(spearman_interval(&[1.0, 2.0, 3.0], &drifting, 500, 0.9, 1), Some((1.0, 1.0)));
        let swapping = [vec![1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.5], vec![2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 1.4]];
        let (low, high) = spearman_interval(&[1.0, 2.0], &swapping, 500, 0.9, 1).expect("defined");
        assert_eq!((low, high), (-1.0, 1.0));
        // The same seed draws the same resamples.
        let again = spearman_interval(&[1.0, 2.0], &swapping, 500, 0.9, 1);
        assert_eq!(again, Some((low, high)));
    }

    #[test]
    fn a_bootstrap_needs_two_rounds_and_matching_kernels() {
        assert_eq!(spearman_interval(&[1.0, 2.0], &[vec![1.0], vec![2.0]], 100, 0.9, 1), None);
        assert_eq!(spearman_interval(&[1.0], &[vec![1.0, 2.0], vec![2.0, 3.0]], 100, 0.9, 1), None);
        assert_eq!(spearman_interval(&[1.0, 2.0], &[], 100, 0.9, 1), None);
        // Equal predictions never define a coefficient.
        assert_eq!(spearman_interval(&[1.0, 1.0], &[vec![1.0, 2.0], vec![2.0, 3.0]], 100, 0.9, 1), None);
    }
}
