//! Rebuilding the best implementation from the memo table.
//!
//! Under limits `L`, a spec's best entry names its root action; each sub-spec is then rebuilt
//! under `L` minus what the action itself holds (a moved operand's units), by re-applying the
//! action to the spec. A stored decision that no longer applies to its spec is an error, never a
//! guess.

use morello_core::imp::Impl;
use morello_core::spec::CanonicalSpec;
use morello_core::target::{MemVec, Target};

use crate::actions::{ActionConfig, actions};
use crate::feasible::Feasibility;
use crate::frontier::Entry;
use crate::memo::Memo;
use crate::peaks::PeakCodec;
use crate::search::SearchError;

/// The best implementation of `spec` within `limits`, and its frontier entry.
///
/// # Errors
/// [`SearchError::NoImplementation`] if nothing fits; [`SearchError::Inconsistent`] if the memo
/// names an action or sub-spec that does not exist.
pub fn best_impl(
    spec: &CanonicalSpec,
    limits: &MemVec,
    memo: &Memo,
    target: &Target,
    config: &ActionConfig,
    feasibility: &Feasibility<'_>,
) -> Result<(Impl, Entry), SearchError> {
    let frontier = memo.get(spec).ok_or_else(|| SearchError::Inconsistent {
        spec: spec.display(target).to_string(),
        message: "the spec is not solved".into(),
    })?;
    let entry = *frontier.best(PeakCodec::new(target).encode_limits(limits)).ok_or_else(|| {
        SearchError::NoImplementation {
            spec: spec.display(target).to_string(),
            limits: limits.display(target).to_string(),
        }
    })?;
    let imp = impl_for_entry(spec, &entry, limits, memo, target, config, feasibility)?;
    if imp.cost != entry.cost {
        return Err(SearchError::Inconsistent {
            spec: spec.display(target).to_string(),
            message: format!("rebuilt cost {} differs from the stored cost {}", imp.cost, entry.cost),
        });
    }
    Ok((imp, entry))
}

/// The implementation whose root is `entry`'s action, with the best sub-implementations within
/// `limits` (its cost is at most `entry.cost`; equal when `entry` is the best within `limits`).
///
/// # Errors
/// As [`best_impl`].
pub fn impl_for_entry(
    spec: &CanonicalSpec,
    entry: &Entry,
    limits: &MemVec,
    memo: &Memo,
    target: &Target,
    config: &ActionConfig,
    feasibility: &Feasibility<'_>,
) -> Result<Impl, SearchError> {
    let inconsistent =
        |message: String| SearchError::Inconsistent { spec: spec.display(target).to_string(), message };
    let mut all = actions(spec, target, config, feasibility);
    if usize::from(entry.action) >= all.len() {
        return Err(inconsistent(format!("action #{} does not exist ({} actions)", entry.action, all.len())));
    }
    let (_, plan) = all.swap_remove(usize::from(entry.action));
    let linear = plan.combine.linear(plan.children.len(), target);
    // Children get what the entry itself was computed with, not all of `limits`: the solver
    // combined child results whose total (snapped to powers of two) fits the entry's peaks, and
    // larger leftovers could admit cheaper children whose snapped total would not fit.
    let budget = PeakCodec::new(target).decode(entry.peaks);
    let child_limits = budget
        .checked_sub(&linear.own)
        .filter(|_| entry.peaks.fits(PeakCodec::new(target).encode_limits(limits)))
        .ok_or_else(|| inconsistent("the action holds more memory than the limits".into()))?;
    let children = plan
        .children
        .iter()
        .map(|child| best_impl(child, &child_limits, memo, target, config, feasibility).map(|(imp, _)| imp))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(plan.build(spec.clone(), children, target))
}
