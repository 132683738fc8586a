#![allow(clippy::unwrap_used)]

use morello_core::spec::SpecBuilder;
use morello_core::target::Target;

use morello_core::kernels::KernelKind;

use super::*;
use crate::Search;
use crate::actions::actions;

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

/// The refusal of a step's result.
fn refusal<T: std::fmt::Debug>(result: Result<T, ScheduleError>) -> Refusal {
    match result.unwrap_err() {
        ScheduleError::Illegal { why, step, spec } => {
            assert!(!step.is_empty() && !spec.is_empty());
            *why
        }
        other => panic!("not a refusal: {other}"),
    }
}

fn schedule_of<'t>(target: &'t Target, spec: &CanonicalSpec) -> Schedule<'t> {
    Schedule::with_search(spec, Search::new(target).threads(1))
}

#[test]
fn a_refusal_names_the_step_the_spec_and_why() {
    let target = x86();
    let spec = matmul(&target, 8, 8, 8);
    let err = schedule_of(&target, &spec).tile_out(&[1, 3, 8]).map(|_| ()).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("`tile_out 1x3x8` cannot apply to Matmul(1x8x8x8"), "{text}");
    assert!(text.contains("does not try size 3 on dim m"), "{text}");
}

#[test]
fn a_refused_step_leaves_the_schedule_unchanged() {
    let target = x86();
    let spec = matmul(&target, 8, 8, 8);
    let mut schedule = schedule_of(&target, &spec);
    schedule.tile_out(&[1, 4, 8]).unwrap();
    let before = schedule.partial_impl();
    // The first dim of the tile applies, the second does not: nothing of it stays.
    assert!(schedule.tile_out(&[1, 2, 3]).is_err());
    assert_eq!(schedule.partial_impl(), before);
}

#[test]
fn no_open_leaf() {
    let target = x86();
    let spec = matmul(&target, 2, 2, 2);
    let mut schedule = schedule_of(&target, &spec);
    schedule.complete().unwrap();
    assert_eq!(refusal(schedule.to_accum()), Refusal::NoOpenLeaf);
}

#[test]
fn ambiguous_leaf() {
    let target = x86();
    let spec =
        SpecBuilder::matmul(8, 8, 8).epilogue(morello_core::spec::Activation::Relu).build(&target).unwrap();
    let mut schedule = schedule_of(&target, &spec);
    schedule.step(&Step::SplitEpilogue).unwrap();
    assert!(matches!(refusal(schedule.to_accum()), Refusal::AmbiguousLeaf { children: 2, .. }));
    // Either stage can be scheduled by its path.
    schedule.subschedule(&[0], |s| s.to_accum().map(|_| ())).unwrap();
}

#[test]
fn no_such_child() {
    let target = x86();
    let spec = matmul(&target, 8, 8, 8);
    let mut schedule = schedule_of(&target, &spec);
    schedule.tile_out(&[1, 4, 8]).unwrap();
    let why = refusal(schedule.subschedule(&[0, 3], |_| Ok(())));
    assert_eq!(why, Refusal::NoSuchChild { path: "0.3".into(), depth: 2, index: 3, children: 0 });
}

#[test]
fn no_such_operand() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    assert!(matches!(refusal(schedule.move_to(3, "L1", None, None)), Refusal::NoSuchOperand { .. }));
    let named = Step::MoveTo {
        operand: "weights".into(),
        level: "L1".into(),
        layout: None,
        vector_size: None,
        copy: Copy::ViewOrBuffer,
    };
    let why = refusal(schedule.step(&named));
    assert!(why.to_string().contains("0 lhs, 1 rhs, 2 out"), "{why}");
}

#[test]
fn no_such_level() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    assert!(matches!(refusal(schedule.move_to(0, "L9", None, None)), Refusal::NoSuchLevel { .. }));
}

#[test]
fn unreachable_level() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    assert!(matches!(refusal(schedule.move_to(0, "GL", None, None)), Refusal::UnreachableLevel { .. }));
}

#[test]
fn bad_layout() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    assert!(matches!(refusal(schedule.move_to(0, "L2", Some("[0, 7]"), None)), Refusal::BadLayout { .. }));
    assert!(matches!(refusal(schedule.move_to(0, "L2", Some("sideways"), None)), Refusal::BadLayout { .. }));
}

#[test]
fn does_not_fit_the_level() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 2048, 2048, 2048));
    let why = refusal(schedule.move_to(0, "L2", None, None));
    assert!(matches!(why, Refusal::DoesNotFit { ref level, .. } if level == "L2"), "{why}");
}

#[test]
fn does_not_fit_the_limits() {
    let target = x86();
    let spec = matmul(&target, 8, 8, 8);
    let l2 = target.level_id("L2").unwrap();
    let mut limits = target.capacities();
    limits.0[usize::from(l2.0)] = 0;
    let mut schedule = Schedule::with_search(&spec, Search::new(&target).threads(1).limits(limits));
    let why = refusal(schedule.move_to(0, "L2", None, None));
    assert!(matches!(why, Refusal::DoesNotFit { ref level, available: 0, .. } if level == "L2"), "{why}");
}

#[test]
fn no_such_move() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    schedule
        .tile_out(&[1, 1, 8])
        .unwrap()
        .move_to(2, "L2", None, None)
        .unwrap()
        .move_to(2, "L1", None, None)
        .unwrap();
    let why = refusal(schedule.move_to(2, "VRF", None, Some(3)));
    assert!(matches!(why, Refusal::NoSuchMove { ref offered } if offered.contains("v8")), "{why}");
}

#[test]
fn no_packing() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    assert!(matches!(refusal(schedule.pack(0, "L2", "row-major")), Refusal::NoPacking { .. }));
}

#[test]
fn rank_mismatch() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    assert_eq!(refusal(schedule.tile_out(&[4, 4])), Refusal::RankMismatch { given: 2, expected: 3 });
}

#[test]
fn size_out_of_range() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    let why = refusal(schedule.tile_out(&[1, 16, 8]));
    assert_eq!(why, Refusal::SizeOutOfRange { dim: "m".into(), size: 16, extent: 8 });
}

#[test]
fn nothing_to_tile() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    assert_eq!(refusal(schedule.tile_out(&[1, 8, 8])), Refusal::NothingToTile);
}

#[test]
fn size_not_tried() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    let why = refusal(schedule.tile_out(&[1, 3, 8]));
    assert!(matches!(why, Refusal::SizeNotTried { size: 3, ref tried, .. } if tried.contains('4')), "{why}");
}

#[test]
fn tile_does_not_fit() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    schedule.tile_out(&[1, 1, 8]).unwrap();
    schedule.move_to(2, "L2", None, None).unwrap().move_to(2, "L1", None, None).unwrap();
    schedule.move_to(2, "VRF", None, Some(8)).unwrap();
    let why = refusal(schedule.tile_out(&[1, 1, 4]));
    assert_eq!(why, Refusal::TileDoesNotFit { dim: "n".into(), size: 4 });
}

#[test]
fn not_accumulating() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    assert_eq!(refusal(schedule.split(4)), Refusal::NotAccumulating);
    assert_eq!(refusal(schedule.tile("k", 4)), Refusal::NotAccumulating);
}

#[test]
fn no_single_reduction() {
    let target = x86();
    let spec = SpecBuilder::parse("move 8x8").unwrap().build(&target).unwrap();
    let mut schedule = schedule_of(&target, &spec);
    assert_eq!(refusal(schedule.split(4)), Refusal::NoSingleReduction { count: 0 });
}

#[test]
fn no_such_dim() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    let why = refusal(schedule.tile("z", 2));
    assert_eq!(why, Refusal::NoSuchDim { dim: "z".into(), dims: "b, m, k, n".into() });
}

#[test]
fn not_parallel() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    let why = refusal(schedule.parallel(&[1, 4, 8]));
    assert!(matches!(why, Refusal::NotParallel { ref reason } if reason.contains("one processor")), "{why}");
    let two = Target::builtin("x86-avx2", 2).unwrap();
    let spec = matmul(&two, 8, 8, 8);
    let mut schedule = schedule_of(&two, &spec);
    schedule.parallel(&[1, 4, 8]).unwrap();
    let why = refusal(schedule.parallel(&[1, 2, 8]));
    assert!(matches!(why, Refusal::NotParallel { ref reason } if reason.contains("already inside")), "{why}");
}

#[test]
fn no_such_kernel() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    assert_eq!(refusal(schedule.select("Frobnicate")), Refusal::NoSuchKernel { kernel: "Frobnicate".into() });
}

#[test]
fn kernel_not_on_target() {
    let target = x86();
    let elsewhere = KernelKind::ALL.into_iter().find(|k| !target.kernels().contains(k)).unwrap();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    let why = refusal(schedule.select(elsewhere.name()));
    assert!(matches!(why, Refusal::KernelNotOnTarget { .. }), "{why}");
}

#[test]
fn kernel_does_not_apply() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    let why = refusal(schedule.select("MultAdd"));
    assert_eq!(why, Refusal::KernelDoesNotApply { kernel: "MultAdd".into(), applicable: "none".into() });
}

#[test]
fn not_applicable() {
    let target = x86();
    let mut schedule = schedule_of(&target, &matmul(&target, 8, 8, 8));
    schedule.to_accum().unwrap();
    let why = refusal(schedule.to_accum());
    assert!(matches!(why, Refusal::NotApplicable { ref offered } if offered.contains("split")), "{why}");
}

#[test]
fn infeasible() {
    // Some action of some small spec is pruned as infeasible; as a hand step it is refused so.
    let target = x86();
    let feasibility = Feasibility::new(&target);
    let config = ActionConfig { prune_infeasible: false, ..ActionConfig::default() };
    let mut queue = std::collections::VecDeque::from([matmul(&target, 4, 4, 4)]);
    let mut seen = std::collections::HashSet::new();
    let (spec, action) = loop {
        let spec = queue.pop_front().expect("a 4x4x4 matmul's sub-specs have an action the filter prunes");
        let all = actions(&spec, &target, &config, &feasibility);
        if let Some((action, _)) =
            all.iter().find(|(_, plan)| plan.children.iter().any(|c| !feasibility.spec(c)))
        {
            break (spec, action.clone());
        }
        for child in all.into_iter().flat_map(|(_, plan)| plan.children) {
            if seen.insert(child.clone()) {
                queue.push_back(child);
            }
        }
    };
    let step = step_of(&spec, &action, &target).unwrap();
    let why = refusal(schedule_of(&target, &spec).step(&step));
    assert!(matches!(why, Refusal::Infeasible { .. }), "{step}: {why}");
}

#[test]
fn a_stopped_synthesis_is_an_error() {
    let target = x86();
    let spec = matmul(&target, 8, 8, 8);
    let cancel = crate::CancelToken::new();
    cancel.cancel();
    let mut schedule = Schedule::with_search(&spec, Search::new(&target).threads(1).cancel(cancel));
    schedule.tile_out(&[1, 4, 8]).unwrap();
    let err = schedule.synthesize().unwrap_err();
    assert!(
        matches!(err, ScheduleError::Synthesis { ref source, .. } if matches!(**source, SearchError::Stopped { .. })),
        "{err}"
    );
    assert_eq!(schedule.open_leaves().len(), 1);
}

#[test]
fn a_file_names_the_line_and_column_of_its_errors() {
    let target = x86();
    let spec = matmul(&target, 8, 8, 8);
    let mut schedule = schedule_of(&target, &spec);
    let at =
        |text: &str, schedule: &mut Schedule<'_>| match schedule.apply_text(text).map(|_| ()).unwrap_err() {
            ScheduleError::Syntax { line, column, .. } => (line, column),
            ScheduleError::AtLine { line, column, .. } => (line, column),
            other => panic!("{other}"),
        };
    assert_eq!(at("# tile\ntile_out 1x4x8\n  split 4 # too early\n", &mut schedule), (3, 3));
    assert_eq!(at("tile_out 1x4\n", &mut schedule), (1, 1));
    assert_eq!(at("sub 0 {\n  to_accum\n", &mut schedule), (1, 1));
    assert_eq!(at("}\n", &mut schedule), (1, 1));
    assert_eq!(at("tile_out 1x4x8\nsub 1 {\n}\n", &mut schedule), (2, 1));
    assert_eq!(at("to_accum\nsub 0 {\n  split 9\n}\n", &mut schedule), (3, 3));
    assert_eq!(at("synthesize now\n", &mut schedule), (1, 12));
    // Nothing of a refused file stays.
    assert!(schedule.open_leaves().len() == 1 && schedule.partial_impl().depth() == 1);
}
