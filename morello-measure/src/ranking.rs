//! Testing a cost model's ranking against the machine: which of the model's ranked candidates to
//! time ([`choose`]: the best, then each one distinct C and a gap costlier than the last), and how
//! the timings agree with the ranking ([`Ranking`]: Spearman's correlation with a bootstrap
//! interval over the run's rounds, and the pairs the timer tells apart that the model orders
//! otherwise), with how a candidate differs from the best ([`first_difference`]).
//!
//! The candidates come from the caller (`morello bench --top-k` and the autotune example ask the
//! search for them); this module only emits, compares and counts.

use morello_codegen::{EmitConfig, ImplComment, emit_kernel};
use morello_core::imp::Impl;
use morello_core::target::Target;

use crate::MeasureError;
use crate::bench::CandidateResult;
use crate::correlation::{PairsApart, pairs_apart, spearman, spearman_interval};

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

/// How many resamples of a run's rounds [`Ranking::of`] draws for Spearman's interval.
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
        }
    }
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
