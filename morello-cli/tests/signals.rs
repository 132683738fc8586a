//! End-to-end tests of stopping a search from outside: SIGTERM, SIGHUP and SIGINT save and exit
//! with 128 + the signal (143, 129, 130: not 1, and no error chain), periodic checkpoints bound
//! what SIGKILL loses, and every run resumes from the table the previous one left (which
//! `db verify` accepts).

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// A search long enough to be stopped in the middle four times, with frequent checkpoints. (64^3
/// became too quick: its last runs could finish between a checkpoint and the signal. 100^3 takes
/// about 5 s on one thread, most of it solving, which is when checkpoints write.)
fn spawn_search(cache: &Path, table: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_morello"))
        .args([
            "search",
            "matmul",
            "100x100x100",
            "--target",
            "x86-avx2",
            "--jobs",
            "1",
            "--checkpoint",
            "0.2",
        ])
        .arg("--db")
        .arg(table)
        .env("XDG_CACHE_HOME", cache)
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
    let out = Command::new(env!("CARGO_BIN_EXE_morello"))
        .args(["db", "verify"])
        .arg(table)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .expect("morello runs");
    assert!(out.status.success(), "db verify: {}", String::from_utf8_lossy(&out.stderr));
}

/// How many specs a run's summary line says the table held.
fn loaded(stderr: &str) -> usize {
    let line = stderr.lines().find(|l| l.starts_with("table ")).expect("a summary line");
    let (_, rest) = line.split_once(": ").expect("table PATH: N specs, opened in ..");
    rest.split(' ').next().and_then(|n| n.parse().ok()).expect("a count")
}

#[test]
#[allow(clippy::print_stdout, reason = "the reason the test is skipped")]
fn kill_loses_at_most_a_checkpoint_and_term_hup_and_int_save_and_resume() {
    if Command::new("kill").arg("-l").output().is_err() {
        println!("skipped: no kill command to send signals with");
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let table = cache.path().join("t.mdb");

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
