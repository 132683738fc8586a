//! Steering a search: cancellation, deadlines and checkpoints stop or observe it without losing or
//! corrupting what it solved.

#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use morello_core::spec::SpecBuilder;
use morello_core::target::Target;
use morello_search::{CancelToken, Memo, Phase, Progress, Search, SearchError, StopReason};

use crate::common::check_with_interpreter;

fn target() -> Target {
    Target::builtin("x86-avx2", 2).unwrap()
}

#[test]
fn a_cancelled_search_stops_and_keeps_only_finished_frontiers() {
    let t = target();
    let spec = SpecBuilder::matmul(8, 8, 16).build(&t).unwrap();
    let full = Arc::new(Memo::new());
    Search::new(&t).memo(Arc::clone(&full)).solve(&spec).unwrap();

    // Cancel from the first checkpoint: after the first height bucket.
    let token = CancelToken::new();
    let memo = Arc::new(Memo::new());
    let from_checkpoint = token.clone();
    let search = Search::new(&t)
        .memo(Arc::clone(&memo))
        .cancel(token.clone())
        .checkpoint(Duration::ZERO, move |_: &Memo| from_checkpoint.cancel());
    match search.solve(&spec) {
        Err(SearchError::Stopped { reason: StopReason::Cancelled, report }) => {
            assert_eq!(report.specs_solved as usize, memo.len());
        }
        other => panic!("expected a cancelled search, got {other:?}"),
    }
    assert!(!memo.is_empty() && memo.len() < full.len(), "{} of {}", memo.len(), full.len());
    for (spec, frontier) in memo.entries() {
        assert_eq!(
            full.get(&spec).as_deref(),
            Some(&*frontier),
            "a stopped search stored a partial frontier"
        );
    }
    // Resuming with the same memo finishes with the answer of an uninterrupted search.
    let resumed = Search::new(&t).memo(Arc::clone(&memo)).solve(&spec).unwrap();
    assert_eq!(resumed.cost, Search::new(&t).memo(full).solve(&spec).unwrap().cost);
}

/// Runs a search of `spec` cancelled at the start of exploring wave `wave` (1-based) and, if
/// `abort`, aborted when the final solve begins; returns the outcome and the memo.
fn cancel_at_wave(
    t: &Target,
    spec: &morello_core::spec::CanonicalSpec,
    wave: usize,
    abort: bool,
) -> (Result<morello_search::Solution, SearchError>, Arc<Memo>) {
    let token = CancelToken::new();
    let memo = Arc::new(Memo::new());
    let waves = AtomicUsize::new(0);
    let from_progress = token.clone();
    let search =
        Search::new(t).memo(Arc::clone(&memo)).cancel(token).on_progress(move |p: Progress| match p.phase {
            Phase::Explore if waves.fetch_add(1, Ordering::SeqCst) + 1 == wave => from_progress.cancel(),
            Phase::Solve if abort && from_progress.is_cancelled() => from_progress.abort(),
            _ => {}
        });
    (search.solve(spec), memo)
}

/// Cancelled while exploring, a search solves the part of its graph explored to the leaves
/// before it returns: exact frontiers, in the memo (a caller saves them), so the next search starts
/// from there and solves only the rest. An abort (a second Ctrl-C) skips that final solve.
#[test]
fn a_search_cancelled_while_exploring_keeps_what_it_explored_to_the_leaves() {
    let t = target();
    let spec = SpecBuilder::matmul(16, 16, 32).build(&t).unwrap();
    let full = Arc::new(Memo::new());
    let waves = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&waves);
    let complete = Search::new(&t)
        .memo(Arc::clone(&full))
        .on_progress(move |p: Progress| {
            if p.phase == Phase::Explore {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        })
        .solve(&spec)
        .unwrap();
    let waves = waves.load(Ordering::SeqCst);
    assert!(waves > 3, "{waves} waves: too few to cancel in the middle");

    // Cancelled at the start of the last wave: the waves before it are explored.
    let (result, memo) = cancel_at_wave(&t, &spec, waves, false);
    match result {
        Err(SearchError::Stopped { reason: StopReason::Cancelled, report }) => {
            assert_eq!(report.specs_solved as usize, memo.len());
        }
        other => panic!("expected a cancelled search, got {other:?}"),
    }
    assert!(!memo.is_empty() && memo.len() < full.len(), "{} of {}", memo.len(), full.len());
    for (spec, frontier) in memo.entries() {
        assert_eq!(full.get(&spec).as_deref(), Some(&*frontier), "the final solve stored a wrong frontier");
    }
    // The next search solves only the rest, to the same answer.
    let kept = memo.len();
    let resumed = Search::new(&t).memo(Arc::clone(&memo)).solve(&spec).unwrap();
    assert_eq!(resumed.cost, complete.cost);
    assert_eq!(resumed.report.specs_solved as usize + kept, full.len());

    // Cancelled before the first wave: nothing explored, nothing solved.
    let (result, memo) = cancel_at_wave(&t, &spec, 1, false);
    assert!(matches!(result, Err(SearchError::Stopped { reason: StopReason::Cancelled, .. })));
    assert!(memo.is_empty());

    // Aborted as the final solve begins: it solves nothing.
    let (result, memo) = cancel_at_wave(&t, &spec, waves, true);
    assert!(matches!(result, Err(SearchError::Stopped { reason: StopReason::Cancelled, .. })));
    assert!(memo.is_empty(), "an aborted final solve kept {} specs", memo.len());
}

/// Cancelled as the last height bucket (the goal's) begins, a search skips it and says it was
/// cancelled: it never reports a goal it did not solve as solved.
#[test]
fn a_search_cancelled_in_its_last_bucket_is_not_solved() {
    let t = target();
    let spec = SpecBuilder::matmul(8, 8, 16).build(&t).unwrap();
    let reports = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&reports);
    Search::new(&t)
        .on_progress(move |p: Progress| {
            if p.phase == Phase::Solve {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        })
        .solve(&spec)
        .unwrap();
    // One report as each bucket begins, and one at the end.
    let last_bucket = reports.load(Ordering::SeqCst) - 1;
    let token = CancelToken::new();
    let from_progress = token.clone();
    let seen = AtomicUsize::new(0);
    let memo = Arc::new(Memo::new());
    let search = Search::new(&t).memo(Arc::clone(&memo)).cancel(token).on_progress(move |p: Progress| {
        if p.phase == Phase::Solve && seen.fetch_add(1, Ordering::SeqCst) + 1 == last_bucket {
            from_progress.cancel();
        }
    });
    match search.solve(&spec) {
        Err(SearchError::Stopped { reason: StopReason::Cancelled, .. }) => {}
        other => panic!("expected a cancelled search, got {other:?}"),
    }
    assert!(!memo.is_empty() && memo.get(&spec).is_none());
}

#[test]
fn checkpoints_see_the_memo_grow() {
    let t = target();
    let spec = SpecBuilder::matmul(8, 8, 16).build(&t).unwrap();
    let sizes = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&sizes);
    let memo = Arc::new(Memo::new());
    Search::new(&t)
        .memo(Arc::clone(&memo))
        .checkpoint(Duration::ZERO, move |m: &Memo| seen.lock().unwrap().push(m.len()))
        .solve(&spec)
        .unwrap();
    let sizes = sizes.lock().unwrap();
    assert!(sizes.len() > 2, "{sizes:?}");
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
    assert_eq!(sizes.last().copied(), Some(memo.len()));

    // A long interval: no checkpoint in a short search.
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    Search::new(&t)
        .checkpoint(Duration::from_secs(3600), move |_: &Memo| {
            counted.fetch_add(1, Ordering::SeqCst);
        })
        .solve(&spec)
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn a_past_deadline_stops_with_the_time_limit() {
    let t = target();
    let spec = SpecBuilder::matmul(8, 8, 8).build(&t).unwrap();
    match Search::new(&t).deadline(Instant::now()).fill(&spec) {
        Err(SearchError::Stopped { reason: StopReason::TimeLimit, .. }) => {}
        other => panic!("expected the time limit, got {other:?}"),
    }
    let token = CancelToken::new();
    token.cancel();
    match Search::new(&t).cancel(token).fill(&spec) {
        Err(SearchError::Stopped { reason: StopReason::Cancelled, .. }) => {}
        other => panic!("expected a cancellation, got {other:?}"),
    }
}

/// A time limit leaves `solve` with the quick fallback's implementation (given the time to find it),
/// which computes the spec, costs at least the optimum and says it may not be optimal; `fill`
/// (which returns no implementation) still reports the stop, and the fallback adds nothing to
/// the memo that a table would save.
#[test]
fn a_time_limit_returns_the_best_implementation_found() {
    let t = target();
    for (m, k, n) in [(12, 10, 6), (8, 8, 8)] {
        let spec = SpecBuilder::matmul(m, k, n).build(&t).unwrap();
        let optimum = Search::new(&t).solve(&spec).unwrap();
        assert!(optimum.report.optimal());
        let memo = Arc::new(Memo::new());
        // Time enough for the quick search on a busy machine (its default is a second).
        let stopped = Search::new(&t)
            .memo(Arc::clone(&memo))
            .deadline(Instant::now())
            .fallback_time(Duration::from_secs(600));
        let found = stopped.solve(&spec).unwrap();
        assert_eq!(found.report.stop, StopReason::TimeLimit);
        assert!(!found.report.optimal());
        assert!(found.cost >= optimum.cost, "{} < {}", found.cost, optimum.cost);
        assert!(found.imp.is_complete());
        check_with_interpreter(&found.imp, &t);
        assert!(memo.is_empty(), "the fallback's thinned frontiers must not reach the memo");
        let top = stopped.solve_top_k(&spec, 3).unwrap();
        assert_eq!(top.len(), 1);
        assert_eq!(top[0].cost, found.cost);
        assert!(matches!(
            stopped.fill(&spec),
            Err(SearchError::Stopped { reason: StopReason::TimeLimit, .. })
        ));
    }
}

/// A time limit holds for a spec whose graph is wide (a rank-16 fill: waves of thousands of specs
/// whose actions take long to enumerate): every phase polls the deadline, and the quick fallback
/// after it has a quarter of the limit or a second.
#[test]
fn a_time_limit_holds_for_a_wide_graph() {
    let t = target();
    let spec = SpecBuilder::parse(&format!("zero {}", ["2"; 16].join("x"))).unwrap().build(&t).unwrap();
    let limit = Duration::from_millis(500);
    let start = Instant::now();
    let result = Search::new(&t).threads(2).time_limit(limit).max_memory(1 << 30).solve(&spec);
    let took = start.elapsed();
    // The limit, at most a second for the fallback, and slack for one spec's work on a busy
    // machine; without the polls this took minutes.
    assert!(took < limit + Duration::from_secs(4), "took {took:?}");
    match result {
        Ok(found) => assert_eq!(found.report.stop, StopReason::TimeLimit),
        Err(SearchError::Stopped { reason: StopReason::TimeLimit, .. }) => {}
        other => panic!("expected the time limit, got {other:?}"),
    }
}

#[test]
fn a_memory_budget_bounds_the_search_and_stops_it_when_the_memo_fills_it() {
    let t = target();
    let spec = SpecBuilder::matmul(8, 8, 16).build(&t).unwrap();
    let full = Arc::new(Memo::new());
    let unbounded = Search::new(&t).memo(Arc::clone(&full)).solve(&spec).unwrap();
    let (peak, solved) = (unbounded.report.estimated_memory, full.estimated_bytes());
    assert!(peak > solved, "the graph counts too: {peak} vs {solved}");

    // Room for the finished memo, not for the whole graph on top of it: the search solves
    // sub-specs first and stays within the budget (checked before each spec is expanded, so it
    // may pass it by one spec's actions).
    let budget = solved + (peak - solved) / 4;
    let memo = Arc::new(Memo::new());
    let bounded = Search::new(&t).memo(Arc::clone(&memo)).max_memory(budget).solve(&spec).unwrap();
    assert_eq!(bounded.cost, unbounded.cost);
    assert!(
        bounded.report.estimated_memory < budget + budget / 20,
        "{} of {budget}",
        bounded.report.estimated_memory
    );
    for (spec, frontier) in memo.entries() {
        assert_eq!(full.get(&spec).as_deref(), Some(&*frontier), "a partial frontier was stored");
    }
    check_with_interpreter(&bounded.imp, &t);

    // A budget the memo outgrows stops the search; what it solved is kept, and a search with
    // more memory resumes from it.
    let memo = Arc::new(Memo::new());
    match Search::new(&t).memo(Arc::clone(&memo)).max_memory(solved / 2).solve(&spec) {
        Err(SearchError::Stopped { reason: StopReason::MemoryLimit, report }) => {
            assert!(report.specs_solved > 0 && report.specs_solved as usize == memo.len(), "{report}");
            assert!(report.estimated_memory > solved / 2, "{report:?}");
        }
        other => panic!("expected the memory budget, got {other:?}"),
    }
    for (spec, frontier) in memo.entries() {
        assert_eq!(full.get(&spec).as_deref(), Some(&*frontier), "a partial frontier was stored");
    }
    let resumed = Search::new(&t).memo(Arc::clone(&memo)).solve(&spec).unwrap();
    assert_eq!(resumed.cost, unbounded.cost);
    assert!(resumed.report.memo_hits > 0);

    // A memo that alone takes more than the budget stops every search before it starts.
    let bigger = SpecBuilder::matmul(16, 8, 16).build(&t).unwrap();
    match Search::new(&t).memo(Arc::clone(&memo)).max_memory(memo.estimated_bytes() / 2).solve(&bigger) {
        Err(SearchError::Stopped { reason: StopReason::MemoryLimit, report }) => {
            assert_eq!(report.specs_solved, 0);
        }
        other => panic!("expected the memory budget, got {other:?}"),
    }
}

/// The quick search after a time limit has a limit of its own: a fallback given no time returns
/// the stop, not an implementation found later.
#[test]
fn the_fallback_has_a_time_limit_of_its_own() {
    let t = target();
    let spec = SpecBuilder::matmul(64, 64, 64).build(&t).unwrap();
    let start = Instant::now();
    let result = Search::new(&t).deadline(Instant::now()).fallback_time(Duration::ZERO).solve(&spec);
    assert!(matches!(result, Err(SearchError::Stopped { reason: StopReason::TimeLimit, .. })), "{result:?}");
    assert!(start.elapsed() < Duration::from_secs(30), "{:?}", start.elapsed());
}
