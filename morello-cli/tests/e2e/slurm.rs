//! The Slurm job array of `deploy/slurm/` end to end on a real cluster: two shards as array
//! tasks, the merge as a job that depends on them (cancelled when a shard fails; the same
//! command again resumes), and the merged table compared with one precompute. Skipped, with the reason printed, where no Slurm cluster answers (as on CI);
//! `docs/database.md` says how to start a one-node cluster to run it.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::load_table;

/// Why the test cannot run here, if it cannot.
fn slurm_unavailable() -> Option<String> {
    let runs = |program: &str, args: &[&str]| Command::new(program).args(args).output().ok();
    match runs("sbatch", &["--version"]) {
        Some(out) if out.status.success() => {}
        _ => {
            return Some(
                "no sbatch on PATH (Debian's slurm-wlm, with munged, slurmctld and slurmd running)".into(),
            );
        }
    }
    match runs("sinfo", &["-h", "-o", "%T"]) {
        Some(out) if out.status.success() => {
            let states = String::from_utf8_lossy(&out.stdout).to_string();
            if !states.lines().any(|s| matches!(s.trim_end_matches('*'), "idle" | "mixed" | "allocated")) {
                return Some(format!("no Slurm node is up (sinfo says: {})", states.trim()));
            }
            None
        }
        Some(out) => Some(format!(
            "the Slurm controller does not answer: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        None => Some("no sinfo on PATH".into()),
    }
}

/// Submits `deploy/slurm/precompute.sh` with two shards and waits until its jobs have left the
/// queue; returns what the script printed.
fn submit_and_wait(cache: &Path, out_dir: &Path, goals: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/slurm/precompute.sh");
    let submitted = Command::new(&script)
        .arg(out_dir)
        .args(goals)
        .env("SHARDS", "2")
        .env("CPUS", "1")
        .env("MORELLO", env!("CARGO_BIN_EXE_morello"))
        .env("XDG_CACHE_HOME", cache)
        .output()
        .expect("precompute.sh runs");
    let stdout = String::from_utf8_lossy(&submitted.stdout).to_string();
    assert!(submitted.status.success(), "{stdout}{}", String::from_utf8_lossy(&submitted.stderr));
    // "submitted shards as job A (array 0-1 of 2) and the merge as job B; table: ..."
    let ids: Vec<&str> = stdout.split("job ").skip(1).filter_map(|s| s.split([' ', ';']).next()).collect();
    assert_eq!(ids.len(), 2, "{stdout}");
    let start = Instant::now();
    loop {
        let queue = Command::new("squeue").args(["-h", "-j", &ids.join(",")]).output().expect("squeue runs");
        if String::from_utf8_lossy(&queue.stdout).trim().is_empty() {
            return stdout;
        }
        assert!(start.elapsed() < Duration::from_secs(300), "the jobs did not finish: {stdout}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
#[allow(clippy::print_stdout, reason = "the reason the test is skipped, what ran")]
fn the_slurm_array_runs_the_shards_then_the_merge_and_a_failed_shard_resumes() {
    if let Some(reason) = slurm_unavailable() {
        println!("skipped: {reason}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("tables");
    let goals = ["matmul", "--up-to", "2", "--dtype", "u32", "--target", "x86-avx2", "--processors", "1"];
    let log = |name: &str| std::fs::read_to_string(out_dir.join(name)).unwrap_or_default();

    // First submission: shard 1's part is not a table (a stand-in for any failure), so that shard
    // fails without touching it, and the merge is cancelled instead of waiting for ever.
    std::fs::create_dir_all(&out_dir).unwrap();
    let bad = out_dir.join("part-1.mdb");
    std::fs::write(&bad, "not a table\n").unwrap();
    let first = submit_and_wait(dir.path(), &out_dir, &goals);
    println!("{first}");
    assert!(log("part-1.log").contains("is not a morello table"), "{}", log("part-1.log"));
    assert_eq!(std::fs::read(&bad).unwrap(), b"not a table\n", "a refused file is left as it was");
    assert!(!out_dir.join("table.mdb").exists(), "the merge ran after a failed shard:\n{}", log("merge.log"));
    assert!(
        log("part-0.log").contains("shard 0/2: 4 goals of 8 matmuls up to 2x2x2"),
        "{}",
        log("part-0.log")
    );
    let saved = load_table(&out_dir.join("part-0.mdb")).len();

    // The same command again, once the cause is gone: shard 0 resumes from its part with nothing
    // left to solve, shard 1 runs, then the merge.
    std::fs::remove_file(&bad).unwrap();
    println!("{}", submit_and_wait(dir.path(), &out_dir, &goals));
    let shard0 = log("part-0.log");
    assert!(
        shard0.contains(&format!("part-0.mdb: {saved} specs, opened in"))
            && shard0.matches("shard 0/2: 4 goals").count() == 2
            && shard0.matches("stage 3/3 done").count() == 1,
        "shard 0 did not resume from its part:\n{shard0}"
    );
    let merge_log = log("merge.log");
    assert!(
        merge_log.contains("ok: "),
        "the merge did not verify:\n{merge_log}\nshard 0:\n{shard0}\nshard 1:\n{}",
        log("part-1.log")
    );

    let one = dir.path().join("one.mdb");
    let local = Command::new(env!("CARGO_BIN_EXE_morello"))
        .args(["precompute"])
        .args(goals)
        .arg("--db")
        .arg(&one)
        .arg("-q")
        .output()
        .unwrap();
    assert!(local.status.success(), "{}", String::from_utf8_lossy(&local.stderr));
    assert!(
        load_table(&out_dir.join("table.mdb")).entries() == load_table(&one).entries(),
        "the cluster's table differs from one precompute's"
    );
    println!("shards, resumed shard and merge ran on Slurm; the merged table equals one precompute's");
}
