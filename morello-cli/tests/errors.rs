//! End-to-end tests of error text and exit status: 2 for bad input (files the user named
//! included), each cause printed once, long inputs not echoed in full.

mod common;
use common::morello;

/// Runs `args`, expects status 2 and one `error:` line containing `expected`; returns it.
fn bad_input(args: &[&str], expected: &str) -> String {
    let (code, stdout, stderr) = morello(args);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert!(stdout.is_empty(), "{args:?}: {stdout}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
    assert!(stderr.starts_with("error: ") && stderr.contains(expected), "{args:?}: {stderr}");
    stderr
}

#[test]
fn files_that_cannot_be_read_are_bad_input_and_say_why_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let os = std::io::Error::from_raw_os_error(21).to_string();
    for args in [
        vec!["db", "stats", path],
        vec!["db", "verify", path],
        vec!["search", "matmul", "2x2x2", "--target", path, "--no-db"],
        vec!["indexing", path],
    ] {
        let stderr = bad_input(&args, &os);
        assert_eq!(stderr.matches(&os).count(), 1, "{args:?}: the cause once: {stderr}");
    }
}

#[test]
fn shapes_with_another_separator_say_which_to_use() {
    bad_input(
        &["search", "matmul", "4X4X4", "--no-db"],
        "dimensions are separated by a lowercase `x`, as in `4x4x4`, not `X`",
    );
    bad_input(&["layout", "4*4", "row-major"], "as in `4x4`, not `*`");
}

#[test]
fn top_k_zero_is_refused() {
    bad_input(&["search", "matmul", "4x4x4", "--top-k", "0", "--no-db"], "--top-k must be at least 1");
}

#[test]
fn long_inputs_are_not_echoed_in_full() {
    let layout = format!("[{}]", vec!["0"; 20_000].join(", "));
    let stderr = bad_input(&["layout", "4x4", &layout], "at most 64 physical dims");
    assert!(stderr.len() < 400, "{} bytes: {stderr}", stderr.len());
    assert!(stderr.contains("(60000 characters)"), "{stderr}");
    let stderr = bad_input(
        &["search", "move", "4x4", "--from", &layout, "--to", "row-major", "--no-db"],
        "invalid source layout",
    );
    assert!(stderr.len() < 400, "{} bytes: {stderr}", stderr.len());
}

#[test]
fn run_and_bench_refuse_up_front_what_no_machine_could_verify() {
    // 2^60 elements: exabytes of buffers; refused before any search or compile, so at once.
    for command in ["run", "bench"] {
        let start = std::time::Instant::now();
        let stderr =
            bad_input(&[command, "zero", "1073741824x1073741824", "--no-db"], "of memory to run and verify");
        assert!(
            stderr.contains(&format!("`morello {command}` of FillZero(1073741824x1073741824"))
                && stderr.contains("search it without running it (`morello search`)"),
            "{stderr}"
        );
        assert!(start.elapsed().as_secs() < 20, "{command} searched first: {:?}", start.elapsed());
    }
}
