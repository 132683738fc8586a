//! Schedules by hand completed by the search, against the search's optimum: a legal prefix plus
//! synthesis never beats the optimum, the optimum's own prefix reaches it exactly, and the
//! optimum read back from its schedule file is the same tree.

#![allow(clippy::unwrap_used)]

use morello_core::dtype::Dtype;
use morello_core::spec::{Activation, CanonicalSpec, SpecBuilder};
use morello_core::target::Target;
use morello_search::schedule::{Schedule, schedule_text, step_of};
use morello_search::{Feasibility, Search, actions::actions};
use proptest::prelude::*;

use crate::common::check_with_interpreter;

fn spec(target: &Target, (m, k, n): (u32, u32, u32), integers: bool) -> CanonicalSpec {
    let builder = SpecBuilder::matmul(m, k, n);
    let builder = if integers { builder.dtype(Dtype::U32) } else { builder };
    builder.build(target).unwrap()
}

fn dims() -> impl Strategy<Value = (u32, u32, u32)> {
    let size = prop::sample::select(vec![1u32, 2, 3, 4, 8]);
    (size.clone(), size.clone(), size)
}

/// Applies `choices.len()` random actions of the search (each an index into the current leaf's
/// action list) as hand steps, stopping early where no leaf is open; returns the steps' text.
fn random_prefix(schedule: &mut Schedule<'_>, search: &Search<'_>, choices: &[u32]) -> Vec<String> {
    let target = schedule.target();
    let feasibility = Feasibility::new(target);
    let mut steps = Vec::new();
    for &choice in choices {
        let Some(leaf) = schedule.current().cloned() else { break };
        let all = actions(&leaf, target, search.action_config(), &feasibility);
        let Some((action, _)) = all.get(choice as usize % all.len().max(1)) else { break };
        let step = step_of(&leaf, action, target).unwrap();
        // A step of the search's own list is always legal by hand.
        schedule.step(&step).unwrap_or_else(|e| panic!("{}: {e}", steps.join("; ")));
        steps.push(step.to_string());
    }
    steps
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn a_legal_prefix_completed_never_beats_the_optimum(
        shape in dims(),
        integers in any::<bool>(),
        processors in 1u32..=2,
        choices in prop::collection::vec(any::<u32>(), 1..5),
    ) {
        let target = Target::builtin("x86-avx2", processors).unwrap();
        let spec = spec(&target, shape, integers);
        let search = Search::new(&target).threads(1);
        let best = search.solve(&spec).unwrap();
        let mut schedule = Schedule::with_search(&spec, search.clone());
        let steps = random_prefix(&mut schedule, &search, &choices);
        if let Ok(imp) = schedule.synthesize() {
            prop_assert!(imp.cost >= best.cost, "{} costs {} < {}", steps.join("; "), imp.cost, best.cost);
            check_with_interpreter(&imp, &target);
        }
    }

    #[test]
    fn the_optimums_own_prefix_completes_to_the_optimum(
        shape in dims(),
        integers in any::<bool>(),
        processors in 1u32..=2,
        length in 0usize..6,
    ) {
        let target = Target::builtin("x86-avx2", processors).unwrap();
        let spec = spec(&target, shape, integers);
        let search = Search::new(&target).threads(1);
        let best = search.solve(&spec).unwrap();
        let text = schedule_text(&best.imp, &target, search.action_config()).unwrap();
        // The first steps of the default path (the lines before any block).
        let prefix: Vec<&str> = text.lines().take_while(|l| !l.starts_with("sub ")).take(length).collect();
        let mut schedule = Schedule::with_search(&spec, search.clone());
        schedule.apply_text(&prefix.join("\n")).unwrap();
        let imp = schedule.synthesize().unwrap();
        prop_assert_eq!(imp.cost, best.cost, "{}", prefix.join("; "));
        // The whole file rebuilds the very tree.
        let mut whole = Schedule::with_search(&spec, search);
        whole.apply_text(&text).unwrap();
        prop_assert!(whole.open_leaves().is_empty(), "{}", text);
        prop_assert_eq!(whole.synthesize().unwrap(), best.imp, "{}", text);
    }
}

/// The round trip on larger specs, with boundaries, moves and packing: every block of the file
/// reads back.
#[test]
fn larger_optima_print_and_read_back_to_themselves() {
    for (target, builder) in [
        ("x86-avx512", SpecBuilder::matmul(16, 16, 16)),
        ("x86-avx2", SpecBuilder::matmul(7, 9, 13).dtype(Dtype::U32)),
        ("x86-avx2", SpecBuilder::matmul(16, 16, 16).epilogue(Activation::Relu)),
    ] {
        let target = Target::builtin(target, 1).unwrap();
        let spec = builder.build(&target).unwrap();
        let text = spec.display(&target).to_string();
        let search = Search::new(&target).threads(1);
        let best = search.solve(&spec).unwrap();
        let file = schedule_text(&best.imp, &target, search.action_config()).unwrap();
        let mut schedule = Schedule::with_search(&spec, search);
        schedule.apply_text(&file).unwrap_or_else(|e| panic!("{text}: {e}\n{file}"));
        assert_eq!(schedule.synthesize().unwrap(), best.imp, "{text}\n{file}");
    }
}
