//! Variants of the best implementation: the cheapest implementations that differ from it in the
//! action taken at exactly one node, for comparing the cost model's ranking with measurements.
//!
//! [`crate::Search::solve_top_k`] returns the best implementation for each root action that is on
//! the spec's Pareto frontier, which is often only two or three (a 64x64x64 matmul has three), and
//! they differ only at the root. A variant may differ anywhere in the tree:
//!
//! ```text
//! variants(spec, L) = { best(spec, L) with the subtree at node x replaced by
//!                       best(spec_x, L_x via action a) :  x a node of the best tree,
//!                                                         a an action of spec_x other than x's }
//! best(s, L via a)  = a's node over the best implementation of each sub-spec of a within L - own(a)
//! ```
//!
//! where `L_x` is the budget the best tree gives node `x` (the same as [`crate::Rebuild::best`] uses).
//! Every variant is complete, fits the limits, and differs from the best and from every other
//! variant at some node (no two are equal trees). They are returned cheapest first (ties: smaller
//! peaks, shallower).
//!
//! The cost model is additive, so many variants cost exactly what the best does (four 1x4x16 fills
//! instead of one 1x4x64 fill). [`VariantCosts::Distinct`] keeps one variant per predicted cost
//! (the best-ranked) and none that ties with the best: the K lowest predicted costs, which is what
//! a rank correlation with measured times can test. [`VariantCosts::All`] keeps the ties.
//!
//! A node's cost is an increasing function of each child's cost (`base + w * child - credit` with
//! `w >= 1`: loops multiply it by their trip count, the other nodes add it; the credit depends on
//! the specs alone), so replacing a subtree by a cheaper one makes the whole tree cheaper, and two
//! variants at one node cost the same at the root exactly when they cost the same at the node.
//! Hence the cheapest `max` variants of the whole tree (or of distinct costs) are built from the
//! cheapest `max` of each node, and each node keeps only those.

use morello_core::cost::Cost;
use morello_core::imp::Impl;
use morello_core::spec::CanonicalSpec;
use morello_core::target::MemVec;

use crate::error::SearchError;
use crate::reconstruct::Rebuild;

/// Which variants to keep when several have the same predicted cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VariantCosts {
    /// One per predicted cost (the best-ranked), and none that costs what the best does.
    #[default]
    Distinct,
    /// Every variant, ties included.
    All,
}

/// How many variants to build, and which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VariantRequest {
    /// At most this many variants (besides the best).
    pub max: usize,
    /// Whether ties in predicted cost are kept.
    pub costs: VariantCosts,
}

/// The best implementation of `spec` within `limits` (as [`Rebuild::best`] rebuilds it) and up
/// to `request.max` of its variants (see the module docs), cheapest first, ties kept or not as
/// `request.costs` says.
///
/// # Errors
/// As [`Rebuild::best`].
pub fn best_and_variants(
    rebuild: &Rebuild<'_>,
    spec: &CanonicalSpec,
    limits: &MemVec,
    request: VariantRequest,
) -> Result<(Impl, Vec<Impl>), SearchError> {
    let (best, mut variants) = node(rebuild, request, spec, limits)?;
    variants.retain(|v| v.peaks.fits(limits));
    Ok((best, variants))
}

/// The best implementation of `spec` within `limits`, and its cheapest `request.max` variants.
fn node(
    rebuild: &Rebuild<'_>,
    request: VariantRequest,
    spec: &CanonicalSpec,
    limits: &MemVec,
) -> Result<(Impl, Vec<Impl>), SearchError> {
    let VariantRequest { max, costs } = request;
    let target = rebuild.target();
    let entry = rebuild.best_entry(spec, limits)?;
    let all = rebuild.actions(spec);
    let plan = rebuild.plan(spec, &all, &entry)?;

    // The best tree, exactly as `Rebuild::best` rebuilds it, with each child's variants.
    let child_limits = rebuild.child_limits(spec, &entry, plan, limits)?;
    let mut bests = Vec::with_capacity(plan.children.len());
    let mut child_variants = Vec::with_capacity(plan.children.len());
    for child in &plan.children {
        let (best, variants) = node(rebuild, request, child, &child_limits)?;
        bests.push(best);
        child_variants.push(variants);
    }
    let best = rebuild.build(spec, plan, bests.clone(), limits)?;
    rebuild.check_cost(spec, &best, &entry)?;

    // Variants below this node: one child replaced by one of its variants.
    let mut variants = Vec::new();
    for (index, replacements) in child_variants.into_iter().enumerate() {
        for replacement in replacements {
            let mut children = bests.clone();
            children[index] = replacement;
            variants.push(plan.build(spec.clone(), children, target));
        }
    }

    // Variants at this node: another action, with the best children it allows. Their costs
    // come from the frontiers first, so only the cheapest `max` are built.
    let chosen = usize::from(entry.action);
    let codec = rebuild.codec();
    let mut others: Vec<(Cost, usize, MemVec)> = Vec::new();
    for (index, (_, other)) in all.iter().enumerate() {
        if index == chosen {
            continue;
        }
        let linear = other.combine.linear(other.children.len(), target);
        let Some(budget) = limits.checked_sub(&linear.own) else { continue };
        let encoded = codec.encode_limits(&budget);
        let children = other.children.iter().zip(&linear.weights).try_fold(0, |sum: Cost, (child, w)| {
            let child_cost = rebuild.memo().get(child)?.best(encoded)?.cost;
            Some(sum.saturating_add(child_cost.saturating_mul(*w)))
        });
        let cost = children.map(|c| linear.cost(c));
        if let Some(cost) = cost {
            others.push((cost, index, budget));
        }
    }
    others.sort_by_key(|(cost, index, _)| (*cost, *index));
    let mut built = 0;
    let mut last_cost = None;
    for (cost, index, budget) in others {
        if built >= max {
            break;
        }
        if costs == VariantCosts::Distinct && (cost == best.cost || last_cost == Some(cost)) {
            continue;
        }
        let (_, other) = &all[index];
        let children = rebuild.children(other, &budget)?;
        let imp = other.build(spec.clone(), children, target);
        if imp.peaks.fits(limits) {
            built += 1;
            last_cost = Some(imp.cost);
            variants.push(imp);
        }
    }
    variants.sort_by_key(|imp| (imp.cost, imp.peaks, imp.depth()));
    if costs == VariantCosts::Distinct {
        variants.retain(|v| v.cost != best.cost);
        variants.dedup_by_key(|v| v.cost);
    }
    variants.truncate(max);
    Ok((best, variants))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use morello_core::spec::LogicalSpec;
    use morello_core::target::Target;

    use super::*;
    use crate::Search;

    #[test]
    fn variants_are_distinct_sorted_and_no_cheaper_than_the_best() {
        let target = Target::builtin("x86-avx2", 2).unwrap();
        let text = "Matmul(1x8x8x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)";
        let spec = LogicalSpec::parse(text, &target).unwrap().canonicalize(&target).unwrap();
        let solutions = Search::new(&target).solve_variants(&spec, 12, VariantCosts::All).unwrap();
        assert_eq!(solutions.len(), 12);
        let best = Search::new(&target).solve(&spec).unwrap();
        assert_eq!(solutions[0].imp, best.imp);
        assert!(solutions.windows(2).all(|w| w[0].cost <= w[1].cost));
        for (i, a) in solutions.iter().enumerate() {
            assert!(a.imp.is_complete());
            assert!(a.imp.peaks.fits(&target.capacities()));
            for b in &solutions[i + 1..] {
                assert_ne!(a.imp, b.imp);
            }
        }
    }

    #[test]
    fn every_other_root_action_of_top_k_is_matched_by_a_variant_at_least_as_cheap() {
        let target = Target::builtin("x86-avx2", 2).unwrap();
        let text = "Matmul(1x16x16x16, f32 GL row-major, f32 GL row-major, f32 GL row-major)";
        let spec = LogicalSpec::parse(text, &target).unwrap().canonicalize(&target).unwrap();
        let search = Search::new(&target);
        let top = search.solve_top_k(&spec, 10).unwrap();
        let variants = search.solve_variants(&spec, 1000, VariantCosts::All).unwrap();
        for other in &top[1..] {
            let root = other.imp.describe(&target);
            assert!(
                variants.iter().any(|v| v.imp.describe(&target) == root && v.cost <= other.cost),
                "no variant starts with {root} at cost <= {}",
                other.cost
            );
        }
    }

    #[test]
    fn distinct_costs_keep_one_variant_per_cost_above_the_best() {
        let target = Target::builtin("x86-avx2", 2).unwrap();
        let text = "Matmul(1x16x16x16, f32 GL row-major, f32 GL row-major, f32 GL row-major)";
        let spec = LogicalSpec::parse(text, &target).unwrap().canonicalize(&target).unwrap();
        let search = Search::new(&target);
        let all = search.solve_variants(&spec, 400, VariantCosts::All).unwrap();
        let distinct = search.solve_variants(&spec, 8, VariantCosts::Distinct).unwrap();
        assert_eq!(distinct.len(), 8);
        assert!(distinct.windows(2).all(|w| w[0].cost < w[1].cost), "strictly increasing costs");
        // The same costs as the lowest distinct ones among all variants.
        let mut costs: Vec<u64> = all.iter().map(|s| s.cost).collect();
        costs.dedup();
        let expected: Vec<u64> = costs.into_iter().take(8).collect();
        assert_eq!(distinct.iter().map(|s| s.cost).collect::<Vec<_>>(), expected);
    }
}
