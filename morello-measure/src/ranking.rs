//! Testing a cost model's ranking against the machine: which of the model's ranked candidates to
//! time ([`choose`]: the best, then each one distinct C and a gap costlier than the last), and how
//! the timings agree with the ranking ([`Ranking`]: Spearman's correlation with a bootstrap
//! interval over the run's rounds, the pairs the timer tells apart that the model orders
//! otherwise, and the [`Regret`] of the model's pick against the fastest candidate), with how a
//! candidate differs from the best ([`first_difference`]).
//!
//! The candidates come from the caller (`morello bench --top-k` and the autotune example ask the
//! search for them); this module only emits, compares and counts.

use morello_codegen::{EmitConfig, ImplComment, emit_kernel};
use morello_core::imp::Impl;
use morello_core::target::Target;

use crate::MeasureError;
use crate::bench::CandidateResult;
use crate::correlation::{PairsApart, bootstrap_rounds, pairs_apart, spearman, spearman_interval};

/// A candidate as the model ranks it: its implementation and predicted cost.
#[derive(Debug, Clone, Copy)]
pub struct Ranked<'a> {
    /// The implementation.
    pub imp: &'a Impl,
    /// Its predicted cost.
    pub cost: u64,
}

/// The candidates chosen for timing, and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chosen {
    /// Indices of the chosen candidates in the ranked list, the best first.
    pub indices: Vec<usize>,
    /// Candidates whose C equals a cheaper one's.
    pub duplicates: usize,
    /// Candidates the emitter cannot express.
    pub unemittable: usize,
    /// Candidates predicted within the gap of the one chosen before them.
    pub within_gap: usize,
}

/// The first of `ranked` (the model's best), and with `top_k` up to K-1 more whose C differs from
/// every cheaper one, each predicted at least `gap` (a fraction) costlier than the one chosen
/// before it, so that the ranking spans what a timer can tell apart.
///
/// # Errors
/// [`MeasureError::InvalidBench`] when `ranked` is empty; [`MeasureError::Codegen`] when the best
/// cannot be emitted.
pub fn choose(
    ranked: &[Ranked<'_>],
    target: &Target,
    top_k: Option<usize>,
    gap: f64,
) -> Result<Chosen, MeasureError> {
    let best = ranked.first().ok_or_else(|| MeasureError::invalid("no candidate to choose from"))?;
    let mut chosen = Chosen { indices: vec![0], ..Chosen::default() };
    let Some(k) = top_k else { return Ok(chosen) };
    let config = EmitConfig { name: "kernel".into(), comment: ImplComment::Omit };
    let mut sources = vec![emit_kernel(best.imp, target, &config)?.source];
    let mut last = best.cost;
    for (i, candidate) in ranked.iter().enumerate().skip(1) {
        if chosen.indices.len() >= k {
            break;
        }
        #[allow(clippy::cast_precision_loss)]
        if (candidate.cost as f64) < last as f64 * (1.0 + gap) {
            chosen.within_gap += 1;
            continue;
        }
        match emit_kernel(candidate.imp, target, &config) {
            Err(_) => chosen.unemittable += 1,
            Ok(kernel) if sources.contains(&kernel.source) => chosen.duplicates += 1,
            Ok(kernel) => {
                sources.push(kernel.source);
                chosen.indices.push(i);
                last = candidate.cost;
            }
        }
    }
    Ok(chosen)
}

/// How many resamples of a run's rounds [`Ranking::of`] draws for the intervals of Spearman's rho
/// and of the regret.
pub const SPEARMAN_RESAMPLES: usize = 2000;

/// How a run's timings agree with the model's ranking of the timed candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// Spearman's rank correlation of predicted cost and median time (`None` when undefined: fewer
    /// than two candidates, or all costs or all times equal).
    pub spearman: Option<f64>,
    /// The central 90% of [`SPEARMAN_RESAMPLES`] resamples of the run's rounds.
    pub interval: Option<(f64, f64)>,
    /// The pairs whose samples do not overlap, and how many the model orders so.
    pub apart: PairsApart,
    /// The model's pick's median time over the fastest candidate's (`None` without a candidate or
    /// with a time that is not positive).
    pub regret: Option<Regret>,
}

impl Ranking {
    /// The ranking of `timed` (each candidate's predicted cost and result, in the model's order),
    /// its interval drawn from `seed`.
    pub fn of(timed: &[(u64, &CandidateResult)], seed: u64) -> Ranking {
        let costs: Vec<f64> = timed.iter().map(|&(cost, _)| cost as f64).collect();
        let medians: Vec<f64> = timed.iter().map(|(_, r)| r.stats.median).collect();
        let samples: Vec<Vec<f64>> = timed.iter().map(|(_, r)| r.seconds_per_call.clone()).collect();
        let ranges: Vec<(f64, f64)> = timed.iter().map(|(_, r)| (r.stats.min, r.stats.max)).collect();
        Ranking {
            spearman: spearman(&costs, &medians),
            interval: spearman_interval(&costs, &samples, SPEARMAN_RESAMPLES, 0.9, seed),
            apart: pairs_apart(&costs, &ranges),
            regret: Regret::of(&medians, &samples, SPEARMAN_RESAMPLES, 0.9, seed),
        }
    }
}

/// How much slower the model's pick (the first candidate) ran than the fastest candidate it had:
/// the figure a user pays for a wrong choice, where a rank correlation also counts swaps among
/// candidates nobody would pick.
///
/// ```text
/// regret = median(t_0) / min_i median(t_i)      1 when the model's pick ran fastest
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Regret {
    /// The model's pick's median time over the fastest candidate's, at least 1.
    pub ratio: f64,
    /// The central 90% of the ratio over resamples of the run's rounds, widened to contain
    /// `ratio` (a ratio to a minimum is skewed, so its resamples can miss it); `None` with fewer
    /// than two rounds.
    pub interval: Option<(f64, f64)>,
    /// The index of the fastest candidate (the first of those with the lowest median; 0 when the
    /// model's pick ties it).
    pub fastest: usize,
}

impl Regret {
    /// The regret of the candidates whose median times are `medians` (the model's pick first) and
    /// samples `samples` (in rounds, as [`bootstrap_rounds`] takes them), its interval the central
    /// `level` of `resamples` resamples drawn from `seed`. `None` without candidates, with lengths
    /// that differ, or with a median that is not a positive number.
    ///
    /// ```
    /// use morello_measure::ranking::Regret;
    /// let samples = [vec![3.0, 3.0], vec![2.0, 2.0]];
    /// let regret = Regret::of(&[3.0, 2.0], &samples, 100, 0.9, 1).expect("defined");
    /// assert_eq!((regret.ratio, regret.interval, regret.fastest), (1.5, Some((1.5, 1.5)), 1));
    /// ```
    pub fn of(
        medians: &[f64],
        samples: &[Vec<f64>],
        resamples: usize,
        level: f64,
        seed: u64,
    ) -> Option<Regret> {
        if medians.len() != samples.len() {
            return None;
        }
        let (fastest, ratio) = regret_of(medians)?;
        let interval = bootstrap_rounds(samples, resamples, level, seed, |m| regret_of(m).map(|(_, r)| r))
            .map(|(low, high)| (low.min(ratio), high.max(ratio)));
        Some(Regret { ratio, interval, fastest })
    }
}

/// The index of the fastest of `medians` and the first's time over its; `None` when empty or a
/// median is not a positive number.
fn regret_of(medians: &[f64]) -> Option<(usize, f64)> {
    if medians.iter().any(|&m| !(m > 0.0 && m.is_finite())) {
        return None;
    }
    let (fastest, &min) = medians.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1))?;
    Some((fastest, medians[0] / min))
}

/// Where the first node (parents first) at which `other` differs from `best` is, and how
/// (`Tile(...) instead of Move(...) for Matmul(...)`); `None` for the same tree.
pub fn first_difference(best: &Impl, other: &Impl, target: &Target) -> Option<String> {
    let (mine, theirs) = (best.describe(target), other.describe(target));
    let (a, b) = (best.children(), other.children());
    if mine != theirs || best.spec != other.spec || a.len() != b.len() {
        return Some(format!("{theirs} instead of {mine} for {}", other.spec.display(target)));
    }
    a.iter().zip(&b).find_map(|(x, y)| first_difference(x, y, target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_regret_of_a_pick_that_ran_fastest_is_one() {
        let samples = [vec![1.0, 1.1, 0.9, 1.0], vec![2.0, 2.2, 1.9, 2.1], vec![1.5, 1.6, 1.4, 1.5]];
        let medians = [1.0, 2.05, 1.5];
        let regret = Regret::of(&medians, &samples, 500, 0.9, 3).expect("defined");
        assert_eq!(regret, Regret { ratio: 1.0, interval: Some((1.0, 1.0)), fastest: 0 });
        // A tie with the pick counts as the pick.
        assert_eq!(Regret::of(&[1.0, 1.0], &[vec![1.0], vec![1.0]], 10, 0.9, 3).map(|r| r.fastest), Some(0));
    }

    /// The third candidate ran 1.25x faster than the pick in every round; the rounds drift
    /// together, so every resample gives exactly 1.25.
    #[test]
    fn the_regret_is_the_pick_over_the_fastest_in_every_resample() {
        let rounds = [1.0, 1.3, 0.95, 1.6, 1.1];
        let row = |base: f64| rounds.iter().map(|r| r * base).collect::<Vec<f64>>();
        let samples = [row(2.5), row(3.0), row(2.0)];
        let medians = [2.75, 3.3, 2.2];
        let regret = Regret::of(&medians, &samples, 500, 0.9, 3).expect("defined");
        assert_eq!(regret.fastest, 2);
        assert!((regret.ratio - 1.25).abs() < 1e-12, "{regret:?}");
        let (low, high) = regret.interval.expect("five rounds");
        assert!((low - 1.25).abs() < 1e-12 && (high - 1.25).abs() < 1e-12, "{regret:?}");
    }

    /// Candidates whose samples swap from round to round: the interval spans both orders and
    /// contains the measured ratio.
    #[test]
    fn a_noisy_regret_has_an_interval_around_it() {
        let samples = [vec![1.0, 1.2, 1.0, 1.2, 1.0, 1.2, 1.1], vec![1.2, 1.0, 1.2, 1.0, 1.2, 1.0, 1.05]];
        let medians = [1.1, 1.05];
        let regret = Regret::of(&medians, &samples, 500, 0.9, 3).expect("defined");
        assert_eq!(regret.fastest, 1);
        let (low, high) = regret.interval.expect("seven rounds");
        assert!(low <= regret.ratio && regret.ratio <= high, "{regret:?}");
        assert!(low == 1.0 && high > 1.1, "{regret:?}");
    }

    #[test]
    fn a_regret_needs_positive_times_and_matching_samples() {
        assert_eq!(Regret::of(&[], &[], 10, 0.9, 1), None);
        assert_eq!(Regret::of(&[1.0, 0.0], &[vec![1.0], vec![0.0]], 10, 0.9, 1), None);
        assert_eq!(Regret::of(&[1.0, f64::NAN], &[vec![1.0], vec![1.0]], 10, 0.9, 1), None);
        assert_eq!(Regret::of(&[1.0, 2.0], &[vec![1.0]], 10, 0.9, 1), None);
        // One round: the ratio without an interval.
        let one = Regret::of(&[2.0, 1.0], &[vec![2.0], vec![1.0]], 10, 0.9, 1);
        assert_eq!(one, Some(Regret { ratio: 2.0, interval: None, fastest: 1 }));
    }
}
