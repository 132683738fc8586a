//! Fault injection: `precompute` and `db merge` killed (SIGKILL) at random points, a bounded
//! number of times within a bounded time, from a printed seed (`MORELLO_FAULT_SEED` repeats a
//! run). After every kill the table must pass `db verify`, and every spec it holds must have
//! exactly the frontier one uninterrupted precompute gives it; at the end, resuming must give
//! that precompute's table.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use morello_search::db::Table;
use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};

use crate::common::{load_table, morello_command};

/// Kills of each kind per run, and the time after which no new round starts.
const ROUNDS: usize = 8;
const TIME_BUDGET: Duration = Duration::from_secs(150);

/// A duration in `[0, max)`, drawn from the run's seeded generator.
fn below(random: &mut StdRng, max: Duration) -> Duration {
    let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX).max(1);
    Duration::from_nanos(random.random_range(0..nanos))
}

const GOALS: [&str; 7] = ["matmul", "--up-to", "4", "--dtype", "u32", "--target", "x86-avx2"];

fn precompute_args(db: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["precompute"].iter().chain(GOALS.iter()).map(|s| s.to_string()).collect();
    args.extend(["--processors", "1", "--checkpoint", "0.05", "-q", "--db"].map(String::from));
    args.push(db.display().to_string());
    args
}

/// Runs `args` to the end; panics unless it succeeds.
fn run(cache: &Path, args: &[String]) -> Duration {
    let start = Instant::now();
    let out = morello_command(cache).args(args).output().expect("morello runs");
    assert!(out.status.success(), "morello {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    start.elapsed()
}

/// Starts `args` and kills it with SIGKILL after `delay` (if it has not ended by then); returns
/// whether it was killed.
fn kill_after(cache: &Path, args: &[String], delay: Duration) -> bool {
    let mut child = morello_command(cache)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("morello starts");
    let start = Instant::now();
    while start.elapsed() < delay {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().expect("piped"), &mut stderr).ok();
            assert!(status.success(), "morello {args:?} failed before it was killed: {stderr}");
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = child.kill();
    let _ = child.wait();
    true
}

/// `db verify` accepts the table, and each spec it holds has the reference's frontier.
fn check(cache: &Path, table: &Path, reference: &Table, what: &str) {
    if !table.exists() {
        return;
    }
    let verify = ["db", "verify", &table.display().to_string(), "--rebuild", "20"].map(String::from);
    let out = morello_command(cache).args(&verify).output().expect("morello runs");
    assert!(out.status.success(), "after {what}: {}", String::from_utf8_lossy(&out.stderr));
    let held = load_table(table);
    for (spec, frontier) in held.iter() {
        assert_eq!(reference.get(spec), Some(frontier), "after {what}: a wrong frontier");
    }
}

#[test]
#[allow(clippy::print_stdout, reason = "the seed, to repeat a run")]
fn killed_precomputes_and_merges_leave_verified_tables_with_the_right_answers() {
    let seed = std::env::var("MORELLO_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_secs())
    });
    println!("fault injection seed {seed} (MORELLO_FAULT_SEED={seed} repeats it)");
    let mut random = StdRng::seed_from_u64(seed);
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();

    // The reference: one uninterrupted precompute, and how long it and a merge take.
    let reference_path = dir.join("reference.mdb");
    let full = run(dir, &precompute_args(&reference_path));
    let reference = load_table(&reference_path);
    let other = dir.join("other.mdb");
    let mut other_args = precompute_args(&other);
    other_args[3] = "2".into();
    run(dir, &other_args);
    let table = dir.join("t.mdb");
    let merge_args = |output: &Path| -> Vec<String> {
        ["db", "merge"]
            .iter()
            .map(|s| s.to_string())
            .chain([table.display().to_string(), other.display().to_string(), "-o".into()])
            .chain([output.display().to_string()])
            .collect()
    };
    let start = Instant::now();
    let (mut precomputes_killed, mut merges_killed) = (0, 0);
    for round in 0..ROUNDS {
        if start.elapsed() > TIME_BUDGET {
            println!("time budget spent after {round} rounds");
            break;
        }
        // A precompute killed at a random point of what a whole run takes: from an empty table
        // every other round, otherwise resuming what the rounds before left.
        if round % 2 == 0 {
            let _ = std::fs::remove_file(&table);
        }
        if kill_after(dir, &precompute_args(&table), below(&mut random, full)) {
            precomputes_killed += 1;
        }
        check(dir, &table, &reference, &format!("precompute killed in round {round}"));
        if !table.exists() {
            continue;
        }
        // A merge into the table itself, killed at a random point.
        let merge = merge_args(&table);
        let merge_time = {
            let probe = dir.join("probe.mdb");
            let took = run(dir, &merge_args(&probe));
            std::fs::remove_file(&probe).ok();
            took
        };
        if kill_after(dir, &merge, below(&mut random, merge_time * 2)) {
            merges_killed += 1;
        }
        check(dir, &table, &reference, &format!("merge killed in round {round}"));
    }
    println!("{precomputes_killed} precomputes and {merges_killed} merges killed");
    // Resumed to the end, the table is the reference's, and no temp file is left behind.
    run(dir, &precompute_args(&table));
    assert!(
        load_table(&table).entries() == reference.entries(),
        "the resumed table differs from one precompute"
    );
    let temps: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".tmp."))
        .collect();
    assert!(temps.is_empty(), "temp files left: {temps:?}");
}
