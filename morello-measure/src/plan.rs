//! Planning by measurement (`morello search --plan measure`): time the model's near-best
//! candidates for a spec on this host and keep the fastest, as FFTW's `FFTW_MEASURE` does.
//!
//! ```text
//! candidates  the model's best and its variants, cheapest first (the caller searches for them)
//! distinct    each candidate's C; one that emits the same C as a cheaper one, or none, is dropped
//! k           given, or the distinct candidates predicted within PLAN_SPREAD (2%) of the best,
//!             at least PLAN_MIN_CANDIDATES (2) and at most PLAN_MAX_CANDIDATES (8)
//! timing      the first k, each verified against the reference before anything is timed, then
//!             timed side by side (compare::measure, no baselines); a CandidateTimer stands in
//!             for the machine in tests
//! winner      the lowest median time; a tie keeps the model's order
//! ```
//!
//! Near-ties are where the model's ranking is least reliable (its costs lie within a fraction of
//! a percent while timings differ by several), so the spread decides how many are worth timing.
//! The caller keeps the winner as wisdom (`morello_search::db::WisdomEntry`); this crate never
//! depends on the search.

use morello_codegen::{Compiler, EmitConfig, ImplComment, emit_kernel};
use morello_core::imp::Impl;
use morello_core::spec::LogicalSpec;
use morello_core::target::Target;

use crate::MeasureError;
use crate::bench::BenchConfig;
use crate::compare::{KernelCandidate, measure};

/// The default `k` takes the candidates predicted within this fraction of the best's cost.
pub const PLAN_SPREAD: f64 = 0.02;

/// The default `k` is at least this (fewer when fewer distinct candidates exist).
pub const PLAN_MIN_CANDIDATES: usize = 2;

/// The default `k` is at most this.
pub const PLAN_MAX_CANDIDATES: usize = 8;

/// The default number of candidates to time for predicted `costs` (cheapest first): those within
/// [`PLAN_SPREAD`] of the first, clamped to [[`PLAN_MIN_CANDIDATES`], [`PLAN_MAX_CANDIDATES`]],
/// and never more than there are.
pub fn default_candidates(costs: &[u64]) -> usize {
    let Some(&best) = costs.first() else { return 0 };
    #[allow(clippy::cast_precision_loss)]
    let bound = best as f64 * (1.0 + PLAN_SPREAD);
    #[allow(clippy::cast_precision_loss)]
    let within = costs.iter().filter(|&&c| c as f64 <= bound).count();
    within.clamp(PLAN_MIN_CANDIDATES, PLAN_MAX_CANDIDATES).min(costs.len())
}

/// Times candidates: the machine, or a stand-in in tests.
pub trait CandidateTimer {
    /// The median seconds per call of each kernel, in order, each verified before any is timed.
    ///
    /// # Errors
    /// [`MeasureError::Unverified`] for a kernel that computes something else (nothing is
    /// timed); the errors of building and running them.
    fn time(&mut self, kernels: &[KernelCandidate<'_>]) -> Result<Vec<f64>, MeasureError>;
}

/// The machine: [`measure`] with no baselines.
#[derive(Debug)]
pub struct BenchTimer<'a> {
    /// The C compiler.
    pub compiler: &'a Compiler,
    /// The target the kernels were searched for.
    pub target: &'a Target,
    /// The spec they implement.
    pub spec: &'a LogicalSpec,
    /// How to time them.
    pub config: BenchConfig,
}

impl CandidateTimer for BenchTimer<'_> {
    fn time(&mut self, kernels: &[KernelCandidate<'_>]) -> Result<Vec<f64>, MeasureError> {
        let measured = measure(self.compiler, self.target, self.spec, kernels, &[], &self.config)?;
        Ok(measured.report.results.iter().take(kernels.len()).map(|r| r.stats.median).collect())
    }
}

/// One timed candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedCandidate {
    /// Its index in the caller's list (0: the model's best).
    pub index: usize,
    /// Its predicted cost.
    pub cost: u64,
    /// Its median seconds per call.
    pub seconds: f64,
}

/// What [`measure_plan`] timed and which won.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanMeasurement {
    /// The timed candidates, in the model's order (the first is the model's best).
    pub timed: Vec<TimedCandidate>,
    /// The winner's place in `timed`.
    pub winner: usize,
    /// Candidates left out because they emit the same C as a cheaper one.
    pub duplicates: usize,
    /// Candidates left out because the emitter cannot express them.
    pub unemittable: usize,
}

impl PlanMeasurement {
    /// The winner.
    pub fn winner(&self) -> &TimedCandidate {
        &self.timed[self.winner]
    }

    /// How much faster the winner is than the model's best, as a fraction of the best's time (0
    /// when the model's best won).
    pub fn gain(&self) -> f64 {
        let model = self.timed[0].seconds;
        if model > 0.0 { (model - self.winner().seconds) / model } else { 0.0 }
    }
}

/// Times the first `k` distinct candidates of `candidates` (each an implementation and its
/// predicted cost, cheapest first; `k` is `top_k` or [`default_candidates`]) with `timer`, and
/// picks the fastest (see the module docs).
///
/// # Errors
/// [`MeasureError::InvalidBench`] without candidates or with `top_k` 0; [`MeasureError::Codegen`]
/// when the model's best cannot be emitted; the timer's errors.
pub fn measure_plan(
    candidates: &[(&Impl, u64)],
    target: &Target,
    top_k: Option<usize>,
    timer: &mut dyn CandidateTimer,
) -> Result<PlanMeasurement, MeasureError> {
    if candidates.is_empty() {
        return Err(MeasureError::invalid("no candidate to measure"));
    }
    if top_k == Some(0) {
        return Err(MeasureError::invalid("the number of candidates to time must be at least 1"));
    }
    let config = EmitConfig { name: "kernel".into(), comment: ImplComment::Omit };
    let mut sources: Vec<String> = Vec::new();
    let mut distinct: Vec<usize> = Vec::new();
    let (mut duplicates, mut unemittable) = (0, 0);
    for (i, (imp, _)) in candidates.iter().enumerate() {
        match emit_kernel(imp, target, &config) {
            Ok(kernel) if sources.contains(&kernel.source) => duplicates += 1,
            Ok(kernel) => {
                sources.push(kernel.source);
                distinct.push(i);
            }
            Err(e) if i == 0 => return Err(e.into()),
            Err(_) => unemittable += 1,
        }
    }
    let costs: Vec<u64> = distinct.iter().map(|&i| candidates[i].1).collect();
    let k = top_k.unwrap_or_else(|| default_candidates(&costs)).min(distinct.len());
    distinct.truncate(k);
    let kernels: Vec<KernelCandidate<'_>> = distinct
        .iter()
        .enumerate()
        .map(|(rank, &i)| KernelCandidate { label: format!("morello-{}", rank + 1), imp: candidates[i].0 })
        .collect();
    let seconds = timer.time(&kernels)?;
    if seconds.len() != kernels.len() {
        return Err(MeasureError::invalid(format!(
            "{} times for {} candidates",
            seconds.len(),
            kernels.len()
        )));
    }
    let timed: Vec<TimedCandidate> = distinct
        .iter()
        .zip(&seconds)
        .map(|(&index, &seconds)| TimedCandidate { index, cost: candidates[index].1, seconds })
        .collect();
    let winner = (0..timed.len())
        .min_by(|&a, &b| timed[a].seconds.total_cmp(&timed[b].seconds).then(a.cmp(&b)))
        .expect("at least the model's best is timed");
    Ok(PlanMeasurement { timed, winner, duplicates, unemittable })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use morello_core::imp::Impl;
    use morello_core::kernels::KernelKind;
    use morello_core::spec::LogicalSpec;

    use super::*;

    #[test]
    fn the_default_takes_the_candidates_within_two_percent_between_two_and_eight() {
        assert_eq!(default_candidates(&[]), 0);
        assert_eq!(default_candidates(&[100]), 1);
        assert_eq!(default_candidates(&[100, 150, 200]), 2, "at least two");
        assert_eq!(default_candidates(&[100, 101, 102, 103]), 3, "102 is within 2%, 103 is not");
        assert_eq!(default_candidates(&[100; 20]), 8, "at most eight");
    }

    /// Times each kernel by a fixed table of its label's rank, and counts the calls.
    struct FakeTimer {
        seconds: Vec<f64>,
        calls: usize,
    }

    impl CandidateTimer for FakeTimer {
        fn time(&mut self, kernels: &[KernelCandidate<'_>]) -> Result<Vec<f64>, MeasureError> {
            self.calls += 1;
            Ok(self.seconds[..kernels.len()].to_vec())
        }
    }

    /// Leaves that emit different C: zero fills of two sizes (the tests need distinct and
    /// duplicate C, not a search).
    fn leaves(target: &Target) -> Vec<Impl> {
        [8, 16]
            .iter()
            .map(|n| {
                let text = format!("FillZero(1x{n}, f32 GL row-major)");
                let spec = LogicalSpec::parse(&text, target).unwrap().canonicalize(target).unwrap();
                let kernel = KernelKind::ALL
                    .iter()
                    .copied()
                    .find(|k| k.applies(&spec, target))
                    .expect("a zero fill in memory has a kernel");
                Impl::kernel(spec, kernel, target)
            })
            .collect()
    }

    #[test]
    fn the_fastest_distinct_candidate_wins_and_duplicates_are_not_timed() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let leaves = leaves(&target);
        let candidates = [(&leaves[0], 100), (&leaves[0], 100), (&leaves[1], 101)];
        let mut timer = FakeTimer { seconds: vec![3.0, 2.0], calls: 0 };
        let plan = measure_plan(&candidates, &target, None, &mut timer).unwrap();
        assert_eq!(timer.calls, 1);
        assert_eq!(plan.duplicates, 1);
        assert_eq!(plan.timed.iter().map(|t| t.index).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!((plan.winner, plan.winner().index), (1, 2));
        assert!((plan.gain() - 1.0 / 3.0).abs() < 1e-12);
        // A tie keeps the model's order.
        let mut tie = FakeTimer { seconds: vec![2.0, 2.0], calls: 0 };
        assert_eq!(measure_plan(&candidates, &target, None, &mut tie).unwrap().winner, 0);
        // --top-k 1 times only the model's best.
        let mut one = FakeTimer { seconds: vec![1.0], calls: 0 };
        assert_eq!(measure_plan(&candidates, &target, Some(1), &mut one).unwrap().timed.len(), 1);
        assert!(measure_plan(&candidates, &target, Some(0), &mut one).is_err());
        assert!(measure_plan(&[], &target, None, &mut one).is_err());
    }
}
