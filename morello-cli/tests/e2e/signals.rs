//! End-to-end tests of stopping a search from outside: SIGTERM, SIGHUP and SIGINT save and exit
//! with 128 + the signal (143, 129, 130: not 1, and no error chain), periodic checkpoints bound
//! what SIGKILL loses, and every run resumes from the table the previous one left (which
//! `db verify` accepts).

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::common::{morello_command, skip_unless};

/// A search long enough to be stopped in the middle four times, with frequent checkpoints. (64^3
/// became too quick: its last runs could finish between a checkpoint and the signal. 100^3 takes
/// about 5 s on one thread, most of it solving, which is when checkpoints write.)
fn spawn_search(cache: &Path, table: &Path) -> Child {
    let args =
        ["search", "matmul", "100x100x100", "--target", "x86-avx2", "--jobs", "1", "--checkpoint", "0.2"];
    spawn(cache, table, &args)
}

/// Starts `morello ARGS --db TABLE` with its output piped.
fn spawn(cache: &Path, table: &Path, args: &[&str]) -> Child {
    morello_command(cache)
        .args(args)
        .arg("--db")
        .arg(table)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("morello starts")
}

/// The table file's size and modification time, if it exists.
fn stamp(table: &Path) -> Option<(u64, SystemTime)> {
    let meta = std::fs::metadata(table).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// Waits until a checkpoint of `child` changes `table` (so the search is under way and has saved).
fn wait_for_checkpoint(child: &mut Child, table: &Path) {
    let before = stamp(table);
    let start = Instant::now();
    while stamp(table) == before {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            panic!("the search ended ({status}) before a checkpoint: make it longer");
        }
        assert!(start.elapsed() < Duration::from_secs(300), "no checkpoint in 300 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn send(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{signal}");
}

fn verify(cache: &Path, table: &Path) {
    let out = morello_command(cache).args(["db", "verify"]).arg(table).output().expect("morello runs");
    assert!(out.status.success(), "db verify: {}", String::from_utf8_lossy(&out.stderr));
}

/// How many specs a run's summary line says the table held.
fn loaded(stderr: &str) -> usize {
    let line = stderr.lines().find(|l| l.starts_with("table ")).expect("a summary line");
    let (_, rest) = line.split_once(": ").expect("table PATH: N specs, opened in ..");
    rest.split(' ').next().and_then(|n| n.parse().ok()).expect("a count")
}

/// A cache directory and the path of a table in it, for a test that sends signals; `None` (the
/// test is skipped, saying why) without a `kill` command to send them with.
fn signal_test_table() -> Option<(tempfile::TempDir, PathBuf)> {
    if !skip_unless(Command::new("kill").arg("-l").output().is_ok(), "no kill command to send signals with") {
        return None;
    }
    let cache = tempfile::tempdir().expect("a temporary directory");
    let table = cache.path().join("t.mdb");
    Some((cache, table))
}

#[test]
fn kill_loses_at_most_a_checkpoint_and_term_hup_and_int_save_and_resume() {
    let Some((cache, table)) = signal_test_table() else { return };

    // SIGKILL cannot be caught: what the last checkpoint saved is all that is left, and it is valid.
    let mut child = spawn_search(cache.path(), &table);
    wait_for_checkpoint(&mut child, &table);
    send(&child, "KILL");
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "{status}");
    verify(cache.path(), &table);

    let mut previous = 0;
    for (signal, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        let mut child = spawn_search(cache.path(), &table);
        wait_for_checkpoint(&mut child, &table);
        send(&child, signal);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "SIG{signal}: {stderr}");
        assert!(out.stdout.is_empty(), "SIG{signal}: no answer yet");
        assert!(
            stderr.contains(&format!(
                "stopped by SIG{signal}; what was solved is saved in {}",
                table.display()
            )) && stderr.contains("run the same command again to resume"),
            "SIG{signal}: {stderr}"
        );
        assert!(!stderr.contains("error"), "a stop is not an error: {stderr}");
        let resumed = loaded(&stderr);
        assert!(resumed > previous, "SIG{signal}: resumed from {resumed} specs, after {previous}");
        previous = resumed;
        verify(cache.path(), &table);
    }
}

/// The CPU time (user and system) process `pid` has used, from `/proc` (None where there is none,
/// or once it has ended). Linux counts it in ticks of 1/100 s for every process.
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The number before `label` in a line of `stderr` (e.g. `12 new specs` for "new specs").
fn count_before(stderr: &str, label: &str) -> Option<usize> {
    let (before, _) = stderr.split_once(&format!(" {label}"))?;
    before.rsplit([' ', ':']).next()?.parse().ok()
}

/// A search of matmul 1024^3 on one thread, which explores its graph for about 3 CPU-seconds on
/// a Zen 3 core before it solves anything (so no checkpoint can write before that).
/// (No checkpoint within the hour: the run that resumes must save all it solved at its end, also on
/// a machine so busy that it takes minutes.)
fn spawn_long_exploration(cache: &Path, table: &Path) -> Child {
    let args =
        ["search", "matmul", "1024x1024x1024", "--target", "x86-avx2", "--jobs", "1", "--checkpoint", "3600"];
    spawn(cache, table, &args)
}

/// SIGTERM while the search explores its graph, before it has solved anything: it solves the part
/// explored to the leaves and saves it (exit 143), the table verifies, and the next run starts
/// from it and solves only the rest. The signal is sent once the search has used some CPU time
/// (a state, not a wall-clock delay, so a loaded machine only makes it slower); if that was too
/// early for anything to be explored to the leaves, it is tried again with twice the time.
#[test]
#[allow(clippy::print_stdout, reason = "the reason the test is skipped")]
fn term_while_exploring_saves_what_was_explored_and_the_next_run_resumes() {
    let Some((cache, table)) = signal_test_table() else { return };
    if cpu_time(std::process::id()).is_none() {
        println!("skipped: no /proc to read CPU time from");
        return;
    }
    let mut cpu = Duration::from_millis(500);
    let saved = loop {
        let mut child = spawn_long_exploration(cache.path(), &table);
        while cpu_time(child.id()).is_some_and(|used| used < cpu) {
            if let Some(status) = child.try_wait().expect("the child can be waited for") {
                panic!("the search ended ({status}) before the signal: make it longer");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        send(&child, "TERM");
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(143), "{stderr}");
        assert!(out.stdout.is_empty(), "no answer yet: {stderr}");
        if let Some(saved) = count_before(&stderr, "new specs written").filter(|&n| n > 0) {
            assert!(
                stderr.contains(&format!(
                    "stopped by SIGTERM; what was solved is saved in {}",
                    table.display()
                )),
                "{stderr}"
            );
            break saved;
        }
        assert!(cpu < Duration::from_secs(8), "nothing saved after {cpu:?} of CPU time: {stderr}");
        cpu *= 2;
    };
    verify(cache.path(), &table);

    // The next run loads what was saved and solves only the rest.
    let out = spawn_long_exploration(cache.path(), &table).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(loaded(&stderr), saved, "{stderr}");
    let solved = count_before(&stderr, "specs solved").expect("a report line");
    assert_eq!(count_before(&stderr, "new specs written"), Some(solved), "{stderr}");
    verify(cache.path(), &table);
}

/// With `--jobs` far beyond the CPUs (clamped to them), SIGTERM still stops the search at once.
#[test]
fn term_stops_a_search_with_many_jobs_promptly() {
    let Some((cache, table)) = signal_test_table() else { return };
    let mut child = spawn(
        cache.path(),
        &table,
        &["search", "matmul", "128x128x128", "--target", "x86-avx2", "--jobs", "10000"],
    );
    std::thread::sleep(Duration::from_millis(500));
    if child.try_wait().unwrap().is_some() {
        println!("skipped: the search ended before the signal");
        return;
    }
    let sent = Instant::now();
    send(&child, "TERM");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(sent.elapsed() < Duration::from_secs(15), "{:?} after SIGTERM: {stderr}", sent.elapsed());
}
