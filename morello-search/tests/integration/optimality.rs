//! The search is optimal for the cost model over its action set, checked against a reference that
//! enumerates the outcome (cost, peaks) of every implementation tree the action set allows.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use morello_core::cost::snap_peaks;
use morello_core::spec::{CanonicalSpec, LogicalSpec};
use morello_core::target::{MemVec, Target};
use morello_search::actions::actions;
use morello_search::{ActionConfig, Feasibility, Memo, Search};
use proptest::prelude::*;

use crate::common::check_with_interpreter;

type Outcomes = Arc<BTreeSet<(u64, MemVec)>>;

/// Every (cost, peaks) some implementation of `spec` achieves that no other beats on both (the
/// minimum under any limits is among them): the plain cross product of the sub-specs' outcomes for
/// every action, then a quadratic dominance filter. Feasibility pruning is off, so the test also
/// checks that pruning never removes an implementation.
fn outcomes(spec: &CanonicalSpec, target: &Target, memo: &mut HashMap<CanonicalSpec, Outcomes>) -> Outcomes {
    if let Some(known) = memo.get(spec) {
        return Arc::clone(known);
    }
    let config = ActionConfig { prune_infeasible: false, ..ActionConfig::default() };
    let feasibility = Feasibility::new(target);
    let capacities = target.capacities();
    let mut all = BTreeSet::new();
    for (_, plan) in actions(spec, target, &config, &feasibility) {
        let linear = plan.combine.linear(plan.children.len(), target);
        let children: Vec<Outcomes> = plan.children.iter().map(|c| outcomes(c, target, memo)).collect();
        // Cross product, accumulating (weighted cost, max peaks).
        let mut partial: Vec<(u64, MemVec)> = vec![(0, MemVec::ZERO)];
        for (child, &w) in children.iter().zip(&linear.weights) {
            let mut next = Vec::with_capacity(partial.len() * child.len());
            for &(c, p) in &partial {
                for &(cc, cp) in child.iter() {
                    next.push((c + w * cc, p.elementwise_max(&cp)));
                }
            }
            partial = undominated(next);
        }
        for (c, p) in partial {
            let peaks = if linear.own == MemVec::ZERO {
                p
            } else {
                snap_peaks(linear.own.saturating_add(&p), target)
            };
            if peaks.fits(&capacities) {
                all.insert((linear.cost(c), peaks));
            }
        }
    }
    let all = Arc::new(undominated(all.into_iter().collect()).into_iter().collect());
    memo.insert(spec.clone(), Arc::clone(&all));
    all
}

/// The outcomes no other outcome beats on cost and on every level's peak.
fn undominated(mut v: Vec<(u64, MemVec)>) -> Vec<(u64, MemVec)> {
    v.sort_unstable();
    v.dedup();
    let keep: Vec<bool> = v
        .iter()
        .enumerate()
        .map(|(i, (c, p))| {
            !v.iter().enumerate().any(|(j, (oc, op))| j != i && oc <= c && op.fits(p) && (oc, op) != (c, p))
        })
        .collect();
    v.into_iter().zip(keep).filter(|(_, k)| *k).map(|(x, _)| x).collect()
}

/// The cheapest outcome whose peaks fit `limits` (peaks at caches are powers of two, so they fit
/// exactly when they fit the limit rounded down to a power of two).
fn reference_best(all: &BTreeSet<(u64, MemVec)>, limits: &MemVec) -> Option<u64> {
    all.iter().filter(|(_, p)| p.fits(limits)).map(|(c, _)| *c).min()
}

fn avx2() -> Target {
    Target::builtin("x86-avx2", 2).unwrap()
}

fn spec(text: &str, t: &Target) -> CanonicalSpec {
    LogicalSpec::parse(text, t).unwrap().canonicalize(t).unwrap()
}

fn tiny_spec() -> impl Strategy<Value = String> {
    let dim = 1u32..=4;
    let dtype = prop::sample::select(vec!["f32", "u32"]);
    let layout = prop::sample::select(vec!["row-major", "col-major"]);
    prop_oneof![
        (dim.clone(), dim.clone(), dim.clone(), dtype.clone(), layout.clone(), any::<bool>()).prop_map(
            |(m, k, n, d, l, accum)| {
                let kind = if accum { "MatmulAccum" } else { "Matmul" };
                format!("{kind}(1x{m}x{k}x{n}, {d} GL {l}, {d} GL row-major, {d} GL row-major)")
            }
        ),
        (dim.clone(), dim, dtype, layout.clone(), layout)
            .prop_map(|(a, b, d, from, to)| format!("Move({a}x{b}, {d} GL {from}, {d} GL {to})")),
    ]
}

/// Softmax, matmuls with a fused epilogue and convolutions (with stride and padding), small
/// enough to enumerate; f32 only, the one type their kernels take. Widths reach 8 so the vector
/// kernels (8 f32 lanes on AVX2) apply.
fn operators_beyond_gemm() -> impl Strategy<Value = String> {
    const M: &str = "f32 GL row-major";
    prop_oneof![
        (1u32..=2, prop::sample::select(vec![1u32, 3, 8]))
            .prop_map(|(rows, cols)| format!("Softmax({rows}x{cols}, {M}, {M})")),
        (
            1u32..=2,
            1u32..=3,
            prop::sample::select(vec![1u32, 2, 8]),
            prop::sample::select(vec!["", "Relu", "Gelu"])
        )
            .prop_map(|(rows, k, cols, act)| format!(
                "MatmulBias{act}(1x{rows}x{k}x{cols}, {M}, {M}, {M}, {M})"
            )),
        (1u32..=2, 1u32..=2, 1u32..=2, 1u32..=2, prop::sample::select(vec!["", ":s2x1", ":p1x0x0x0"]))
            .prop_map(|(f, c, h, w, geometry)| {
                format!("Conv{geometry}(1x{f}x{c}x{h}x{w}x2x1, {M}, {M}, {M})")
            }),
    ]
}

fn limits_strategy() -> impl Strategy<Value = Vec<u64>> {
    // GL, L2, L1 in bytes; VRF, RF in registers.
    (
        prop::sample::select(vec![0u64, 64, 256, 1 << 40]),
        prop::sample::select(vec![0u64, 64, 128, 512, 1 << 20]),
        prop::sample::select(vec![0u64, 64, 128, 256, 1024, 32768]),
        0u64..=16,
        0u64..=16,
    )
        .prop_map(|(a, b, c, d, e)| vec![a, b, c, d, e])
}

/// The search's cost equals the reference minimum with the target's capacities and under each of
/// `limits`, and what it returns fits the limits, is complete and (unlimited) computes what the spec
/// says.
fn check_optimal(text: &str, limits: &[Vec<u64>]) -> Result<(), TestCaseError> {
    let t = avx2();
    let s = spec(text, &t);
    let mut memo = HashMap::new();
    let all = outcomes(&s, &t, &mut memo);
    let table = Arc::new(Memo::new());
    let full = Search::new(&t).threads(1).memo(Arc::clone(&table)).solve(&s);
    prop_assert_eq!(full.as_ref().ok().map(|x| x.cost), reference_best(&all, &t.capacities()), "{}", text);
    if let Ok(full) = &full {
        check_with_interpreter(&full.imp, &t);
    }
    for l in limits {
        let limits = MemVec::from_fn(5, |i| l[i]);
        let found = Search::new(&t).threads(1).memo(Arc::clone(&table)).limits(limits).solve(&s);
        let expected = reference_best(&all, &limits);
        prop_assert_eq!(
            found.as_ref().ok().map(|x| x.cost),
            expected,
            "{} under {}",
            text,
            limits.display(&t)
        );
        if let Ok(found) = found {
            prop_assert!(found.imp.peaks.fits(&limits));
            prop_assert!(found.imp.is_complete());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn search_cost_equals_the_minimum_over_every_implementation(text in tiny_spec(), limits in proptest::collection::vec(limits_strategy(), 4)) {
        check_optimal(&text, &limits)?;
    }

    #[test]
    fn softmax_epilogues_and_convs_are_searched_optimally(text in operators_beyond_gemm(), limits in proptest::collection::vec(limits_strategy(), 4)) {
        check_optimal(&text, &limits)?;
    }
}

#[test]
fn more_memory_never_costs_more() {
    let t = avx2();
    let s = spec("Matmul(1x4x4x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)", &t);
    let table = Arc::new(Memo::new());
    let mut previous: Option<u64> = None;
    for vrf in 0..=16 {
        let mut limits = t.capacities();
        limits.set(t.level_id("VRF").unwrap(), vrf);
        let cost = Search::new(&t).memo(Arc::clone(&table)).limits(limits).solve(&s).map(|x| x.cost).ok();
        if let (Some(p), Some(c)) = (previous, cost) {
            assert!(c <= p, "VRF={vrf}: {c} > {p}");
        }
        assert!(previous.is_none() || cost.is_some(), "more registers lost the only implementation");
        previous = cost.or(previous);
    }
}
