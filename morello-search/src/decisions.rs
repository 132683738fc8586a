//! A tree as the actions that build it, and back: how a measured winner is stored as wisdom and
//! re-applied by a later search.
//!
//! ```text
//! decisions(tree)           = index of the node's action in actions(node's spec), then
//!                             decisions(child) for each child in plan order (parents first)
//! rebuild(spec, decisions)  = actions(spec)[d0]'s node over rebuild(child, rest) per child
//! ```
//!
//! A decision is an index into [`crate::actions::actions`] (which is deterministic), as a table's
//! stored actions are; no memo table is needed to rebuild. Rebuilding re-applies every action
//! through the same constructors a search uses, so the tree's cost and peaks are recomputed, never
//! read; the caller compares the cost with the one it stored. A list that names an action that
//! does not exist, ends early or runs over is an error, never a guess.

use morello_core::imp::Impl;
use morello_core::spec::CanonicalSpec;
use morello_core::target::Target;

use crate::actions::{ActionConfig, actions};
use crate::error::SearchError;
use crate::feasible::Feasibility;

/// The actions that build `imp`, parents first (see the module docs); `None` when a node is not
/// one of its spec's actions (an unsolved leaf, or a tree built under another configuration).
pub fn decisions_of(imp: &Impl, target: &Target, config: &ActionConfig) -> Option<Vec<u32>> {
    let feasibility = Feasibility::new(target);
    let mut out = Vec::new();
    collect(imp, target, config, &feasibility, &mut out)?;
    Some(out)
}

fn collect(
    imp: &Impl,
    target: &Target,
    config: &ActionConfig,
    feasibility: &Feasibility<'_>,
    out: &mut Vec<u32>,
) -> Option<()> {
    let children = imp.children();
    let all = actions(&imp.spec, target, config, feasibility);
    let index = all.iter().position(|(_, plan)| {
        plan.children.len() == children.len()
            && plan.children.iter().zip(&children).all(|(spec, child)| *spec == child.spec)
            && plan.build(imp.spec.clone(), children.iter().map(|c| (*c).clone()).collect(), target) == *imp
    })?;
    out.push(u32::try_from(index).ok()?);
    for child in children {
        collect(child, target, config, feasibility, out)?;
    }
    Some(())
}

/// The tree that `decisions` build for `spec` (see the module docs), with its cost and peaks
/// recomputed by the constructors.
///
/// # Errors
/// [`SearchError::Inconsistent`] when a decision names no action of its spec, or the list ends
/// before the tree does or goes on after it.
pub fn rebuild_decisions(
    spec: &CanonicalSpec,
    decisions: &[u32],
    target: &Target,
    config: &ActionConfig,
) -> Result<Impl, SearchError> {
    let feasibility = Feasibility::new(target);
    let mut rest = decisions;
    let imp = rebuild(spec, &mut rest, target, config, &feasibility)?;
    if !rest.is_empty() {
        return Err(inconsistent(spec, target, format!("{} decisions are left after the tree", rest.len())));
    }
    Ok(imp)
}

fn rebuild(
    spec: &CanonicalSpec,
    rest: &mut &[u32],
    target: &Target,
    config: &ActionConfig,
    feasibility: &Feasibility<'_>,
) -> Result<Impl, SearchError> {
    let (&first, tail) =
        rest.split_first().ok_or_else(|| inconsistent(spec, target, "the decisions end early".into()))?;
    *rest = tail;
    let all = actions(spec, target, config, feasibility);
    let (_, plan) = all.get(first as usize).ok_or_else(|| {
        inconsistent(spec, target, format!("action #{first} does not exist ({} actions)", all.len()))
    })?;
    let children = plan
        .children
        .iter()
        .map(|child| rebuild(child, rest, target, config, feasibility))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(plan.build(spec.clone(), children, target))
}

fn inconsistent(spec: &CanonicalSpec, target: &Target, message: String) -> SearchError {
    SearchError::Inconsistent { spec: spec.display(target).to_string(), message }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use morello_core::spec::LogicalSpec;

    use super::*;
    use crate::{Search, VariantCosts};

    fn spec(target: &Target) -> CanonicalSpec {
        let text = "Matmul(1x8x8x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)";
        LogicalSpec::parse(text, target).unwrap().canonicalize(target).unwrap()
    }

    #[test]
    fn every_variant_rebuilds_from_its_decisions() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let spec = spec(&target);
        let search = Search::new(&target).threads(1);
        let config = *search.action_config();
        let solutions = search.solve_variants(&spec, 12, VariantCosts::All).unwrap();
        assert!(solutions.len() > 2);
        for s in &solutions {
            let decisions = decisions_of(&s.imp, &target, &config).unwrap();
            let rebuilt = rebuild_decisions(&spec, &decisions, &target, &config).unwrap();
            assert_eq!(rebuilt, s.imp);
        }
    }

    #[test]
    fn a_list_that_does_not_fit_the_tree_is_an_error() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let spec = spec(&target);
        let search = Search::new(&target).threads(1);
        let config = *search.action_config();
        let best = search.solve(&spec).unwrap().imp;
        let decisions = decisions_of(&best, &target, &config).unwrap();
        let message = |d: &[u32]| match rebuild_decisions(&spec, d, &target, &config).unwrap_err() {
            SearchError::Inconsistent { message, .. } => message,
            other => panic!("{other}"),
        };
        assert!(message(&decisions[..decisions.len() - 1]).contains("end early"));
        let mut longer = decisions.clone();
        longer.push(0);
        assert!(message(&longer).contains("left after the tree"));
        let mut wrong = decisions;
        wrong[0] = 100_000;
        assert!(message(&wrong).contains("does not exist"));
    }
}
