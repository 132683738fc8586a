//! Rebuilding implementations from the memo table: the one path that [`crate::Search::solve`],
//! [`crate::Search::solve_top_k`], [`crate::Search::solve_variants`] and `db verify` share.
//!
//! Under limits `L`, a spec's best entry names its root action; each sub-spec is then rebuilt
//! under the budget the entry was computed with (its own peaks) minus what the action itself holds
//! (a moved operand's units), by re-applying the action to the spec:
//!
//! ```text
//! rebuild(spec, e, L) = action(e)'s node over rebuild(child, best(child, B), B) for each child
//!                       where B = decode(peaks(e)) - own(action(e)),   peaks(e) fits L
//! ```
//!
//! Every step is checked, so a stale or corrupt memo is an error ([`SearchError::Inconsistent`]),
//! never a guess: the entry's action exists, the entry fits the limits, the action's own memory
//! fits the entry's budget, the rebuilt tree's peaks fit the limits, and (for a spec's best entry)
//! the rebuilt cost is the stored cost.

use morello_core::imp::Impl;
use morello_core::spec::CanonicalSpec;
use morello_core::target::{MemVec, Target};

use crate::actions::{Action, ActionConfig, Plan, actions};
use crate::error::SearchError;
use crate::feasible::Feasibility;
use crate::frontier::Entry;
use crate::memo::Memo;
use crate::peaks::PeakCodec;

/// Rebuilds implementations from a memo table (see the module docs).
///
/// ```
/// use morello_core::spec::LogicalSpec;
/// use morello_core::target::Target;
/// use morello_search::{Feasibility, Rebuild, Search};
///
/// let target = Target::builtin("x86-avx2", 1).unwrap();
/// let text = "Matmul(1x4x4x4, f32 GL row-major, f32 GL row-major, f32 GL row-major)";
/// let spec = LogicalSpec::parse(text, &target).unwrap().canonicalize(&target).unwrap();
/// let search = Search::new(&target).threads(1);
/// search.fill(&spec).unwrap();
/// let feasibility = Feasibility::new(&target);
/// let rebuild = Rebuild::new(search.memo_table(), &target, search.action_config(), &feasibility);
/// let (imp, entry) = rebuild.best(&spec, &target.capacities()).unwrap();
/// assert_eq!(imp.cost, entry.cost);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Rebuild<'a> {
    memo: &'a Memo,
    target: &'a Target,
    config: &'a ActionConfig,
    feasibility: &'a Feasibility<'a>,
    codec: PeakCodec,
}

impl<'a> Rebuild<'a> {
    /// Rebuilds from `memo`, whose decisions index [`actions`] under `config`.
    pub fn new(
        memo: &'a Memo,
        target: &'a Target,
        config: &'a ActionConfig,
        feasibility: &'a Feasibility<'a>,
    ) -> Self {
        Rebuild { memo, target, config, feasibility, codec: PeakCodec::new(target) }
    }

    /// The target.
    pub fn target(&self) -> &'a Target {
        self.target
    }

    /// The memo table.
    pub fn memo(&self) -> &'a Memo {
        self.memo
    }

    /// The peak codec of the target.
    pub fn codec(&self) -> PeakCodec {
        self.codec
    }

    /// The best implementation of `spec` within `limits`, and its frontier entry.
    ///
    /// # Errors
    /// [`SearchError::NoImplementation`] if nothing fits; [`SearchError::Inconsistent`] if the memo
    /// lacks a solved spec, names an action that does not exist, or rebuilds to another cost or to
    /// peaks above the limits.
    pub fn best(&self, spec: &CanonicalSpec, limits: &MemVec) -> Result<(Impl, Entry), SearchError> {
        let entry = self.best_entry(spec, limits)?;
        Ok((self.entry(spec, &entry, limits)?, entry))
    }

    /// The implementation whose root is `entry`'s action (an entry of `spec`'s frontier), with the
    /// best sub-implementations within the entry's budget; it costs what the entry says (a frontier
    /// entry is the best within its own peaks).
    ///
    /// # Errors
    /// As [`Rebuild::best`], and [`SearchError::Inconsistent`] if `entry` does not fit `limits`.
    pub fn entry(&self, spec: &CanonicalSpec, entry: &Entry, limits: &MemVec) -> Result<Impl, SearchError> {
        let all = self.actions(spec);
        let plan = self.plan(spec, &all, entry)?;
        let child_limits = self.child_limits(spec, entry, plan, limits)?;
        let children = self.children(plan, &child_limits)?;
        let imp = self.build(spec, plan, children, limits)?;
        self.check_cost(spec, &imp, entry)?;
        Ok(imp)
    }

    /// The best frontier entry of a solved `spec` within `limits`.
    ///
    /// # Errors
    /// [`SearchError::Inconsistent`] if `spec` is not solved; [`SearchError::NoImplementation`] if
    /// no entry fits.
    pub fn best_entry(&self, spec: &CanonicalSpec, limits: &MemVec) -> Result<Entry, SearchError> {
        let frontier =
            self.memo.get(spec).ok_or_else(|| self.inconsistent(spec, "the spec is not solved".into()))?;
        frontier.best(self.codec.encode_limits(limits)).copied().ok_or_else(|| {
            SearchError::NoImplementation {
                spec: spec.display(self.target).to_string(),
                limits: limits.display(self.target).to_string(),
            }
        })
    }

    /// Every action of `spec` with its plan, in the order stored decisions index.
    pub(crate) fn actions(&self, spec: &CanonicalSpec) -> Vec<(Action, Plan)> {
        actions(spec, self.target, self.config, self.feasibility)
    }

    /// The plan of `entry`'s action among `all` (the actions of `spec`).
    ///
    /// # Errors
    /// [`SearchError::Inconsistent`] if the action does not exist.
    pub(crate) fn plan<'p>(
        &self,
        spec: &CanonicalSpec,
        all: &'p [(Action, Plan)],
        entry: &Entry,
    ) -> Result<&'p Plan, SearchError> {
        all.get(usize::from(entry.action)).map(|(_, plan)| plan).ok_or_else(|| {
            self.inconsistent(
                spec,
                format!("action #{} does not exist ({} actions)", entry.action, all.len()),
            )
        })
    }

    /// The limits the children of `entry` (whose action has `plan`) are rebuilt under: what the
    /// entry itself was computed with, not all of `limits`. The solver combined child results whose
    /// total (snapped to powers of two) fits the entry's peaks, and larger leftovers could admit
    /// cheaper children whose snapped total would not fit.
    ///
    /// # Errors
    /// [`SearchError::Inconsistent`] if the entry does not fit `limits` or the action holds more
    /// memory than the entry's budget.
    pub(crate) fn child_limits(
        &self,
        spec: &CanonicalSpec,
        entry: &Entry,
        plan: &Plan,
        limits: &MemVec,
    ) -> Result<MemVec, SearchError> {
        if !entry.peaks.fits(self.codec.encode_limits(limits)) {
            return Err(self.inconsistent(spec, "the entry does not fit the limits".into()));
        }
        let own = plan.combine.linear(plan.children.len(), self.target).own;
        self.codec
            .decode(entry.peaks)
            .checked_sub(&own)
            .ok_or_else(|| self.inconsistent(spec, "the action holds more memory than the limits".into()))
    }

    /// The best implementation of each of `plan`'s children within `child_limits`.
    ///
    /// # Errors
    /// As [`Rebuild::best`] for each child.
    pub(crate) fn children(&self, plan: &Plan, child_limits: &MemVec) -> Result<Vec<Impl>, SearchError> {
        plan.children.iter().map(|child| self.best(child, child_limits).map(|(imp, _)| imp)).collect()
    }

    /// `plan`'s node (an action of `spec`) over the best implementation of each child within
    /// `limits` less what the action holds, if every child has one and the node fits `limits`.
    ///
    /// # Errors
    /// [`SearchError::Inconsistent`] as [`Rebuild::best`] does for a child.
    pub(crate) fn best_for_plan(
        &self,
        spec: &CanonicalSpec,
        plan: &Plan,
        limits: &MemVec,
    ) -> Result<Option<Impl>, SearchError> {
        let own = plan.combine.linear(plan.children.len(), self.target).own;
        let Some(budget) = limits.checked_sub(&own) else { return Ok(None) };
        let children = match self.children(plan, &budget) {
            Ok(children) => children,
            Err(SearchError::NoImplementation { .. }) => return Ok(None),
            Err(other) => return Err(other),
        };
        let imp = plan.build(spec.clone(), children, self.target);
        Ok(imp.peaks.fits(limits).then_some(imp))
    }

    /// `plan`'s node over `children`, checked to fit `limits`.
    ///
    /// # Errors
    /// [`SearchError::Inconsistent`] if the node's peaks exceed `limits`.
    pub(crate) fn build(
        &self,
        spec: &CanonicalSpec,
        plan: &Plan,
        children: Vec<Impl>,
        limits: &MemVec,
    ) -> Result<Impl, SearchError> {
        let imp = plan.build(spec.clone(), children, self.target);
        if !imp.peaks.fits(limits) {
            return Err(self.inconsistent(
                spec,
                format!(
                    "rebuilt peaks {} exceed the limits {}",
                    imp.peaks.display(self.target),
                    limits.display(self.target)
                ),
            ));
        }
        Ok(imp)
    }

    /// Checks that `imp`, rebuilt from `entry`, costs what the entry says.
    ///
    /// # Errors
    /// [`SearchError::Inconsistent`] if it does not.
    pub(crate) fn check_cost(
        &self,
        spec: &CanonicalSpec,
        imp: &Impl,
        entry: &Entry,
    ) -> Result<(), SearchError> {
        if imp.cost == entry.cost {
            return Ok(());
        }
        Err(self.inconsistent(
            spec,
            format!("rebuilt cost {} differs from the stored cost {}", imp.cost, entry.cost),
        ))
    }

    fn inconsistent(&self, spec: &CanonicalSpec, message: String) -> SearchError {
        SearchError::Inconsistent { spec: spec.display(self.target).to_string(), message }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use morello_core::spec::LogicalSpec;

    use crate::frontier::{Entry, Frontier};
    use crate::memo::Memo;
    use crate::variants::VariantCosts;
    use crate::{Search, SearchError};

    use super::*;

    /// A memo whose goal entries claim another cost is an error for best, top-k and variants
    /// alike (they share the rebuild), never a tree that costs what the table does not say.
    #[test]
    fn every_rebuild_path_rejects_a_tampered_cost() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let text = "Matmul(1x8x8x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)";
        let spec = LogicalSpec::parse(text, &target).unwrap().canonicalize(&target).unwrap();
        let solved = Arc::new(Memo::new());
        Search::new(&target).threads(1).memo(Arc::clone(&solved)).fill(&spec).unwrap();
        let tampered = Arc::new(Memo::new());
        for (s, frontier) in solved.entries() {
            let frontier = if s == spec {
                let entries = frontier.entries().iter().map(|e| Entry { cost: e.cost + 1, ..*e }).collect();
                Arc::new(Frontier::from_candidates(entries))
            } else {
                frontier
            };
            tampered.insert(s, frontier);
        }
        let search = Search::new(&target).threads(1).memo(tampered);
        let inconsistent = |e: &SearchError| matches!(e, SearchError::Inconsistent { message, .. } if message.contains("rebuilt cost"));
        assert!(inconsistent(&search.solve(&spec).unwrap_err()));
        assert!(inconsistent(&search.solve_top_k(&spec, 3).unwrap_err()));
        assert!(inconsistent(&search.solve_variants(&spec, 3, VariantCosts::All).unwrap_err()));
    }

    /// A frontier entry that does not fit the limits it is rebuilt under is an error.
    #[test]
    fn an_entry_above_the_limits_is_an_error() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let text = "Matmul(1x8x8x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)";
        let spec = LogicalSpec::parse(text, &target).unwrap().canonicalize(&target).unwrap();
        let search = Search::new(&target).threads(1);
        search.fill(&spec).unwrap();
        let feasibility = Feasibility::new(&target);
        let rebuild = Rebuild::new(search.memo_table(), &target, search.action_config(), &feasibility);
        let entry = rebuild.best_entry(&spec, &target.capacities()).unwrap();
        assert!(entry.peaks != crate::peaks::Peaks::ZERO, "the best 8x8x8 matmul uses memory");
        let err = rebuild.entry(&spec, &entry, &MemVec::ZERO).unwrap_err();
        assert!(
            matches!(err, SearchError::Inconsistent { ref message, .. } if message.contains("does not fit")),
            "{err}"
        );
    }
}
