//! Sharded precompute end to end: shards run as separate processes (one of them killed and run
//! again), merged with `db merge`, and compared with one precompute of the same goals; precompute
//! from a file of specs.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::morello_command;

use morello_search::ActionConfig;
use morello_search::db::{Schema, Table, TableFile, Validation, stored_target};

fn morello(cache: &Path, args: &[&str]) -> Output {
    morello_command(cache).args(args).output().expect("morello runs")
}

fn ok(cache: &Path, args: &[&str]) -> String {
    let out = morello(cache, args);
    assert!(out.status.success(), "morello {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const PRECOMPUTE: [&str; 8] =
    ["precompute", "matmul", "--up-to", "4", "--dtype", "u32", "--target", "x86-avx2"];

fn precompute(db: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = PRECOMPUTE.iter().map(|s| s.to_string()).collect();
    args.extend(["--db".into(), db.display().to_string(), "-q".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn load(path: &Path) -> Table {
    // The target as the table stores it (its processor count is this machine's).
    let bytes = std::fs::read(path).expect("the table exists");
    let (_, target) = stored_target(&bytes, path).expect("a table stores its target");
    let schema = Schema::new(&target, ActionConfig::default());
    TableFile::new(path).load(&schema, Validation::Full).expect("a valid table")
}

/// The JSON `morello search` prints for a spec with a table.
fn search(cache: &Path, spec: &str, db: &Path) -> serde_json::Value {
    let mut args = vec!["search", "matmul", spec, "--dtype", "u32", "--target", "x86-avx2", "--emit", "json"];
    let db = db.display().to_string();
    args.extend(["--db", &db]);
    serde_json::from_str(&ok(cache, &args)).expect("JSON")
}

#[test]
fn two_shards_merged_equal_one_precompute_and_a_killed_shard_resumes() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let one = dir.join("one.mdb");
    let parts: Vec<PathBuf> = (0..2).map(|i| dir.join(format!("part-{i}.mdb"))).collect();
    let args = |db: &Path, extra: &[&str]| precompute(db, extra);

    // Shard 1 runs alongside shard 0, which is killed once it has saved something.
    let spawn = |args: Vec<String>| {
        morello_command(dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("morello starts")
    };
    let mut shard1 = spawn(args(&parts[1], &["--shard", "1/2"]));
    let mut shard0 = spawn(args(&parts[0], &["--shard", "0/2", "--checkpoint", "0.05"]));
    let start = Instant::now();
    while !parts[0].exists() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let killed = shard0.try_wait().unwrap().is_none();
    shard0.kill().unwrap();
    shard0.wait().unwrap();
    assert!(shard1.wait().unwrap().success());
    let partial = load(&parts[0]).len();
    if killed {
        println!("shard 0 killed with {partial} specs saved");
    } else {
        println!("note: shard 0 finished before it could be killed");
    }
    // Run again, it resumes from what was saved.
    let rerun: Vec<String> = args(&parts[0], &["--shard", "0/2"]).into_iter().filter(|a| a != "-q").collect();
    let rerun: Vec<&str> = rerun.iter().map(String::as_str).collect();
    let run = morello(dir, &rerun);
    let (out, err) = (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "{err}");
    assert!(out.starts_with("shard 0/2: 14 goals of 27 matmuls up to 4x4x4"), "{out}");
    let opened = format!("table {}: {partial} specs, opened in", parts[0].display());
    assert!(partial > 0 && err.contains(&opened), "the rerun starts from the saved specs: {err}");

    let single: Vec<String> = args(&one, &[]);
    ok(dir, &single.iter().map(String::as_str).collect::<Vec<_>>());
    let merged = dir.join("merged.mdb");
    let (p0, p1, m) =
        (parts[0].display().to_string(), parts[1].display().to_string(), merged.display().to_string());
    let report = ok(dir, &["db", "merge", &p0, &p1, "-o", &m]);
    assert!(report.contains("already held and equal"), "{report}");

    let (merged_table, one_table) = (load(&merged), load(&one));
    assert_eq!(merged_table.len(), one_table.len());
    assert!(merged_table.entries() == one_table.entries(), "the merged shards differ from one precompute");
    for spec in ["4x4x4", "1x4x2", "4x2x1", "2x2x2"] {
        let (a, b) = (search(dir, spec, &merged), search(dir, spec, &one));
        assert_eq!(a["stats"]["specs_solved"], 0, "{spec}");
        assert_eq!((&a["cost"], &a["impl"]), (&b["cost"], &b["impl"]), "{spec}");
    }
}

#[test]
fn shards_split_the_goals_and_more_than_two_tables_merge() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let mut goals = 0;
    let mut paths = Vec::new();
    for i in 0..3 {
        let db = dir.join(format!("p{i}.mdb"));
        let shard = format!("{i}/3");
        let mut args = vec!["precompute", "matmul", "--up-to", "2", "--dtype", "u32", "--target", "x86-avx2"];
        let db_arg = db.display().to_string();
        args.extend(["--shard", &shard, "--db", &db_arg, "-q"]);
        let out = ok(dir, &args);
        let count: usize = out.split_once(": ").unwrap().1.split(' ').next().unwrap().parse().unwrap();
        goals += count;
        paths.push(db_arg);
    }
    assert_eq!(goals, 8, "every goal in exactly one shard");
    let merged = dir.join("m.mdb").display().to_string();
    let mut args = vec!["db", "merge"];
    args.extend(paths.iter().map(String::as_str));
    args.extend(["-o", &merged]);
    let report = ok(dir, &args);
    assert_eq!(report.lines().count(), 4, "{report}");
    let run = morello(dir, &["precompute", "matmul", "--up-to", "2", "--shard", "3/3"]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("0 <= I < N"));
}

#[test]
fn precompute_takes_a_file_of_specs() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let file = dir.join("model.txt");
    std::fs::write(
        &file,
        "# the matmuls of a small model\nmatmul 2x4x2\n\n  move 4x4  # a transpose\nMatmul(1x2x1x2, u32 GL row-major, u32 GL row-major, u32 GL row-major)\n",
    )
    .unwrap();
    let db = dir.join("model.mdb");
    let (f, d) = (file.display().to_string(), db.display().to_string());
    let base = ["precompute", "--specs", &f, "--dtype", "u32", "--target", "x86-avx2", "--db", &d];
    let out = ok(dir, &base);
    assert!(out.starts_with(&format!("3 specs from {f} (u32, x86-avx2) solved in")), "{out}");
    let warm = search(dir, "2x4x2", &db);
    assert_eq!(warm["stats"]["specs_solved"], 0);
    std::fs::write(&file, "matmul 2x2x2\nmatmul 2x2\n").unwrap();
    let run = morello(dir, &base);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("model.txt:2"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}
