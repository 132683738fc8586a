//! `morello search --plan measure`: measured winners kept in the table per host (wisdom), used
//! without timing by a later search, ignored with a warning when they no longer rebuild, and kept
//! per host by `db merge`. Tables with wisdom are built through the library, so most of these need
//! no compiler: a run that would time anything is given a compiler that does not exist.

use std::path::Path;

use morello_core::spec::{CanonicalSpec, LogicalSpec};
use morello_core::target::Target;
use morello_search::db::{OpenTable, TableLocation, WisdomEntry, WisdomHost, spec_key, wisdom_limits};
use morello_search::{ActionConfig, Search, VariantCosts, decisions_of};

use crate::common::{have_compiler, morello_in};

const SPEC: &str = "Matmul(1x4x4x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)";

/// No compiler: a run that tried to time something would fail.
const NO_COMPILER: (&str, &str) = ("CC", "/nonexistent/cc");

fn target() -> Target {
    Target::builtin("x86-avx2", 1).expect("a built-in target")
}

fn spec(target: &Target) -> CanonicalSpec {
    let logical = LogicalSpec::parse(SPEC, target).expect("the spec parses");
    logical.canonicalize(target).expect("the spec is valid")
}

/// `morello search SPEC --target x86-avx2 --processors 1 --db DB` with `extra` arguments.
fn search(dir: &Path, db: &Path, extra: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let db = db.to_string_lossy();
    let mut args = vec!["search", SPEC, "--target", "x86-avx2", "--processors", "1", "--db", &db];
    args.extend_from_slice(extra);
    morello_in(dir, &args, env)
}

/// The cost `--emit json` reports.
fn cost(stdout: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(stdout).expect("JSON");
    v["cost"].as_u64().expect("a cost")
}

/// The table at `db` with the spec solved and a winner recorded for each `(fingerprint, rank)`:
/// the model's `rank`-th distinct cost (0 its best). Returns the winners' costs.
fn table_with_wisdom(db: &Path, winners: &[(u64, usize)], tamper: impl Fn(&mut WisdomEntry)) -> Vec<u64> {
    let target = target();
    let spec = spec(&target);
    let location = TableLocation::File(db.to_path_buf());
    let mut table = OpenTable::open(&location, &target, ActionConfig::default()).expect("the table opens");
    let search = Search::new(&target).threads(1).memo(table.memo());
    let variants = search.solve_variants(&spec, 4, VariantCosts::Distinct).expect("the spec solves");
    let mut costs = Vec::new();
    for &(fingerprint, rank) in winners {
        let winner = &variants[rank];
        let mut entry = WisdomEntry {
            spec: spec_key(&spec),
            limits: wisdom_limits(&target.capacities(), &target),
            host: WisdomHost { fingerprint, description: format!("host {fingerprint:x}") },
            decisions: decisions_of(&winner.imp, &target, search.action_config()).expect("decisions"),
            cost: winner.cost,
            seconds: 1e-6,
            model_seconds: 2e-6,
            candidates: 3,
        };
        tamper(&mut entry);
        costs.push(entry.cost);
        table.record_wisdom(entry);
    }
    table.save(&mut |_| {}).expect("the table saves");
    costs
}

fn this_host() -> u64 {
    morello_measure::host_fingerprint(&target()).fingerprint
}

#[test]
fn a_table_answers_this_host_with_its_winner_without_timing_and_estimate_ignores_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("t.mdb");
    // This host's winner is the model's second cost; another host's its third.
    let costs = table_with_wisdom(&db, &[(this_host(), 1), (this_host() ^ 1, 2)], |_| {});
    let (code, stdout, stderr) =
        search(dir.path(), &db, &["--plan", "measure", "--emit", "json"], &[NO_COMPILER]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(cost(&stdout), costs[0], "this host's winner");
    assert!(stderr.contains("nothing was timed") && stderr.contains("50.0% faster"), "{stderr}");
    let (code, stdout, stderr) = search(dir.path(), &db, &["--emit", "json"], &[NO_COMPILER]);
    assert_eq!(code, 0, "{stderr}");
    assert!(cost(&stdout) < costs[0], "--plan estimate (the default) answers with the model's best");
    assert!(!stderr.contains("plan:"), "{stderr}");
}

#[test]
fn a_winner_that_no_longer_rebuilds_is_ignored_with_a_warning() {
    for (what, tamper) in [
        (
            "an action that does not exist",
            Box::new(|e: &mut WisdomEntry| e.decisions[0] = 100_000) as Box<dyn Fn(&mut WisdomEntry)>,
        ),
        ("another cost", Box::new(|e: &mut WisdomEntry| e.cost += 1)),
        (
            "a tree cut short",
            Box::new(|e: &mut WisdomEntry| {
                e.decisions.pop();
            }),
        ),
    ] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let db = dir.path().join("t.mdb");
        table_with_wisdom(&db, &[(this_host(), 1)], tamper);
        // Without a compiler it cannot time the candidates again: it says so, after the warning.
        let (code, _, stderr) = search(dir.path(), &db, &["--plan", "measure"], &[NO_COMPILER]);
        assert!(
            stderr.contains(
                "warning: the measured winner this table holds for this spec on this host is ignored"
            ),
            "{what}: {stderr}"
        );
        assert_ne!(code, 0, "{what}: never the stored tree: {stderr}");
        let db_text = db.to_string_lossy();
        let (code, _, stderr) = morello_in(dir.path(), &["db", "verify", &db_text], &[]);
        assert!(code != 0 && stderr.contains("measured winner on host"), "{what}: db verify: {stderr}");
    }
}

#[test]
fn measuring_keeps_the_winner_and_the_next_search_uses_it_without_timing() {
    if !have_compiler() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("t.mdb");
    let quick = ["--plan", "measure", "--samples", "2", "--min-sample-seconds", "0.002", "--emit", "json"];
    let (code, first, stderr) = search(dir.path(), &db, &quick, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("plan: timed") && stderr.contains("the model's best"), "{stderr}");
    assert!(stderr.contains("the winner is kept in the table"), "{stderr}");
    let (code, second, stderr) = search(dir.path(), &db, &quick, &[NO_COMPILER]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("nothing was timed") && !stderr.contains("plan: timed"), "{stderr}");
    let tree = |text: &str| {
        let v: serde_json::Value = serde_json::from_str(text).expect("JSON");
        (v["cost"].clone(), v["impl"].clone())
    };
    assert!(tree(&second) == tree(&first), "the same tree");
    let db_text = db.to_string_lossy();
    let (code, stats, stderr) =
        morello_in(dir.path(), &["db", "stats", &db_text, "--target", "x86-avx2"], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stats.contains("wisdom:      1 measured winners") && stats.contains("Matmul(1x4x4x8"), "{stats}");
    let (code, out, stderr) = morello_in(dir.path(), &["db", "verify", &db_text], &[]);
    assert!(code == 0 && out.contains("1 measured winners rebuilt"), "{out}{stderr}");
}

#[test]
fn merge_keeps_each_hosts_winner() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (a, b, merged) = (dir.path().join("a.mdb"), dir.path().join("b.mdb"), dir.path().join("m.mdb"));
    let costs_a = table_with_wisdom(&a, &[(this_host(), 1)], |_| {});
    table_with_wisdom(&b, &[(0x1234, 2)], |_| {});
    let text = |p: &Path| p.to_string_lossy().into_owned();
    let (code, out, stderr) =
        morello_in(dir.path(), &["db", "merge", &text(&a), &text(&b), "-o", &text(&merged)], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(out.contains("2 measured winners"), "{out}");
    let (_, stats, _) = morello_in(dir.path(), &["db", "stats", &text(&merged)], &[]);
    assert!(
        stats.contains("wisdom:      2 measured winners") && stats.contains("host 0000000000001234"),
        "{stats}"
    );
    let (code, stdout, stderr) =
        search(dir.path(), &merged, &["--plan", "measure", "--emit", "json"], &[NO_COMPILER]);
    assert_eq!((code, cost(&stdout)), (0, costs_a[0]), "{stderr}");
}
