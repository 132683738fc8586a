//! End-to-end tests of `morello search --schedule FILE` and `--emit schedule`.

use crate::common::{morello, morello_ok};

/// Writes `text` to a schedule file in a new directory.
fn schedule_file(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("hand.schedule");
    std::fs::write(&path, text).expect("the schedule file is written");
    let path = path.to_str().expect("a temporary path is UTF-8").to_string();
    (dir, path)
}

const SPEC: [&str; 6] = ["matmul", "16x16x16", "--target", "x86-avx2", "--processors", "1"];

#[test]
fn the_printed_optimum_reads_back_to_the_same_tree_and_cost() {
    let search = |extra: &[&str]| morello_ok(&[&["search"], &SPEC[..], &["--no-db", "-q"], extra].concat()).0;
    let file = search(&["--emit", "schedule"]);
    assert!(file.starts_with("# Matmul(1x16x16x16"), "{file}");
    assert!(file.contains("\nselect "), "{file}");
    let (_dir, path) = schedule_file(&file);
    assert_eq!(search(&["--schedule", &path]), search(&[]));
    assert_eq!(search(&["--schedule", &path, "--emit", "schedule"]), file);
}

#[test]
fn a_hand_prefix_is_completed_by_the_search() {
    let (_dir, path) =
        schedule_file("# rows of four\ntile_out 1x4x16\nto_accum   # zero, then accumulate\nsplit 8\n");
    let (stdout, stderr) = morello_ok(&[&["search"], &SPEC[..], &["--no-db", "--schedule", &path]].concat());
    assert!(stdout.contains("tile 1x4x16x16") && stdout.contains("tile 1x4x8x16"), "{stdout}");
    assert!(stderr.contains("cost "), "{stderr}");
}

#[test]
fn a_refused_step_is_bad_input_with_its_line_and_column() {
    for (text, message) in [
        ("tile_out 1x4x16\n  split 8\n", "line 2, column 3: `split 8` cannot apply to Matmul(1x4x16x16"),
        ("move_to lhs L9\n", "line 1, column 1: `move_to lhs L9` cannot apply"),
        ("tile_out 1x4\n", "line 1, column 1: `tile_out 1x4` cannot apply to Matmul(1x16x16x16"),
        ("tile_out 1x4x16\nfrobnicate\n", "line 2, column 1: unknown step `frobnicate`"),
        ("sub 0 {\n", "line 1, column 1: this `sub` block is not closed"),
    ] {
        let (_dir, path) = schedule_file(text);
        let (code, stdout, stderr) =
            morello(&[&["search"], &SPEC[..], &["--no-db", "--schedule", &path]].concat());
        assert_eq!(code, 2, "{text}: {stderr}");
        assert!(stdout.is_empty());
        assert!(stderr.contains(message), "{text}: {stderr}");
        assert!(stderr.contains(&format!("schedule {path}")), "{stderr}");
    }
    let (code, _, stderr) =
        morello(&[&["search"], &SPEC[..], &["--schedule", "/nonexistent/x.schedule"]].concat());
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read the schedule file /nonexistent/x.schedule"), "{stderr}");
    let (_dir, path) = schedule_file("to_accum\n");
    let (code, _, stderr) =
        morello(&[&["search"], &SPEC[..], &["--no-db", "--schedule", &path, "--top-k", "2"]].concat());
    assert_eq!(code, 2);
    assert!(stderr.contains("drop --plan measure and --top-k"), "{stderr}");
}
