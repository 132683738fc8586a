#![allow(clippy::unwrap_used)]

use morello_core::spec::SpecBuilder;
use morello_core::target::Target;

use super::*;
use crate::Search;

fn x86() -> Target {
    Target::builtin("x86-avx2", 1).unwrap()
}

fn matmul(target: &Target, m: u32, k: u32, n: u32) -> CanonicalSpec {
    SpecBuilder::matmul(m, k, n).build(target).unwrap()
}

#[test]
fn a_hand_prefix_completes_to_an_implementation() {
    let target = x86();
    let spec = matmul(&target, 8, 8, 8);
    let mut schedule = Schedule::new(&spec, &target);
    schedule.tile_out(&[1, 4, 8]).unwrap().to_accum().unwrap().split(4).unwrap();
    let imp = schedule.synthesize().unwrap();
    assert!(imp.is_complete());
    let best = Search::new(&target).threads(1).solve(&spec).unwrap();
    assert!(imp.cost >= best.cost);
}

#[test]
fn the_optimum_prints_and_reads_back_to_itself() {
    let target = x86();
    let spec = matmul(&target, 16, 16, 16);
    let search = Search::new(&target).threads(1);
    let best = search.solve(&spec).unwrap();
    let text = schedule_text(&best.imp, &target, search.action_config()).unwrap();
    let mut schedule = Schedule::with_search(&spec, search);
    schedule.apply_text(&text).unwrap();
    assert!(schedule.open_leaves().is_empty(), "{text}");
    let imp = schedule.synthesize().unwrap();
    assert_eq!(imp, best.imp, "{text}");
}
