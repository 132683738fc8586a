//! Sharded precompute end to end: shards run as separate processes (one of them killed and run
//! again), merged with `db merge`, and compared with one precompute of the same goals; precompute
//! from a file of specs.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, load_table, morello_command};

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
    let partial = load_table(&parts[0]).len();
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

    let (merged_table, one_table) = (load_table(&merged), load_table(&one));
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

/// The directory of the deploy scripts.
fn deploy(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy").join(path)
}

/// `precompute.sh` refuses, before submitting anything, a CPUS no node of the partition has
/// (Slurm would leave the array pending for ever), checked with sinfo; stand-ins for `sinfo`
/// and `sbatch` on PATH record what they were asked.
#[test]
fn the_slurm_script_refuses_more_cpus_than_a_node_has() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let calls = dir.join("calls");
    // Two nodes of 2 and 8 CPUs in partition `cpu`, one of 2 in `small`.
    common::executable_script(
        &bin,
        "sinfo",
        &format!(
            "#!/bin/sh\necho \"sinfo $*\" >> {calls}\ncase \" $* \" in *' -p small '*) echo 2 ;; *) printf '2\\n8\\n' ;; esac\n",
            calls = calls.display()
        ),
    );
    common::executable_script(
        &bin,
        "sbatch",
        &format!("#!/bin/sh\necho \"sbatch $*\" >> {calls}\necho 42\n", calls = calls.display()),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let run = |cpus: &str, sbatch: &str| {
        let _ = std::fs::remove_file(&calls);
        let out = std::process::Command::new(deploy("slurm/precompute.sh"))
            .args([dir.join("out").to_str().unwrap(), "matmul", "--up-to", "2"])
            .env("PATH", &path)
            .env("CPUS", cpus)
            .env("SBATCH", sbatch)
            .output()
            .unwrap();
        let calls = std::fs::read_to_string(&calls).unwrap_or_default();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned(), calls)
    };
    let (code, stderr, calls_made) = run("16", "--partition=cpu --time=1-0");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("CPUS=16 is more than any node of partition cpu has (8, from sinfo)"),
        "{stderr}"
    );
    assert!(!calls_made.contains("sbatch"), "nothing is submitted: {calls_made}");
    let (code, stderr, _) = run("4", "-p small");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("partition small has (2,"), "{stderr}");
    let (code, stderr, calls_made) = run("8", "--partition cpu");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(calls_made.matches("sbatch ").count(), 2, "the array and the merge: {calls_made}");
    assert!(calls_made.contains("--cpus-per-task=8"), "{calls_made}");
    let (code, stderr, _) = run("0", "");
    assert!(code == Some(2) && stderr.contains("whole numbers of at least 1"), "{stderr}");
}

/// The Slurm jobs' scripts run as Slurm would run them: each shard marks its part done only when
/// it finishes, and the merge refuses to replace the table while a part is not done (a shard of
/// an earlier submission may still be writing it, or have failed), then merges and verifies.
#[test]
fn the_slurm_merge_uses_only_parts_whose_shard_finished() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let out = dir.join("tables");
    std::fs::create_dir(&out).unwrap();
    let env = |command: &mut std::process::Command| {
        command
            .env("MORELLO", env!("CARGO_BIN_EXE_morello"))
            .env("OUT_DIR", &out)
            .env("SHARDS", "2")
            .env("PRECOMPUTE_ARGS", "matmul --up-to 2 --dtype u32 --target x86-avx2 -q")
            .env("XDG_CACHE_HOME", dir);
    };
    let shard = |i: &str| {
        let mut command = std::process::Command::new(deploy("slurm/shard.sbatch"));
        env(&mut command);
        let done = command.env("SLURM_ARRAY_TASK_ID", i).output().unwrap();
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    };
    let merge = || {
        let mut command = std::process::Command::new(deploy("slurm/merge.sbatch"));
        env(&mut command);
        command.output().unwrap()
    };
    shard("0");
    assert!(out.join("part-0.done").exists());
    // Shard 1 saved part of its goals, then stopped (or is still running): no part-1.done.
    let partial = out.join("part-1.mdb");
    let args =
        ["precompute", "matmul", "--up-to", "1", "--dtype", "u32", "--target", "x86-avx2", "-q", "--db"];
    let mut args = args.to_vec();
    args.push(partial.to_str().unwrap());
    ok(dir, &args);
    let refused = merge();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("shard(s) 1 did not finish") && stderr.contains("ARRAY=1"), "{stderr}");
    assert!(!out.join("table.mdb").exists(), "no table from an incomplete part");
    shard("1");
    let merged = merge();
    let stdout = String::from_utf8_lossy(&merged.stdout);
    assert!(merged.status.success(), "{}", String::from_utf8_lossy(&merged.stderr));
    assert!(stdout.contains("ok: "), "verified: {stdout}");
    let one = dir.join("one.mdb");
    let base =
        ["precompute", "matmul", "--up-to", "2", "--dtype", "u32", "--target", "x86-avx2", "-q", "--db"];
    let mut base = base.to_vec();
    base.push(one.to_str().unwrap());
    ok(dir, &base);
    assert!(
        load_table(&out.join("table.mdb")).entries() == load_table(&one).entries(),
        "the merged parts equal one precompute"
    );
}

/// The Kubernetes manifests agree on the shard count (completions, parallelism, `--shard .../N`,
/// the merge's list of parts) and need no shell in the image; run.sh stops on a failed Job.
#[test]
fn the_kubernetes_manifests_agree_and_need_no_shell() {
    let precompute = std::fs::read_to_string(deploy("kubernetes/precompute.yaml")).unwrap();
    let merge = std::fs::read_to_string(deploy("kubernetes/merge.yaml")).unwrap();
    let run = std::fs::read_to_string(deploy("kubernetes/run.sh")).unwrap();
    let field = |name: &str| -> usize {
        let line = precompute.lines().find(|l| l.trim_start().starts_with(name)).unwrap();
        line.split(':').nth(1).unwrap().trim().parse().unwrap()
    };
    let shards = field("completions:");
    assert_eq!(field("parallelism:"), shards);
    assert!(precompute.contains(&format!("--shard=$(SHARD)/{shards}")), "{precompute}");
    let parts: Vec<String> = (0..shards).map(|i| format!("/tables/part-{i}.mdb")).collect();
    for part in &parts {
        assert_eq!(merge.matches(part.as_str()).count(), 1, "{part} in merge.yaml");
    }
    assert!(!merge.contains(&format!("part-{shards}.mdb")));
    for manifest in [&precompute, &merge] {
        assert!(!manifest.contains("/bin/sh") && !manifest.contains("seq "), "no shell: {manifest}");
    }
    assert!(run.contains("\" Failed \"") && run.contains("return 1"), "run.sh stops on a failed Job");
}
