//! The command examples of `README.md` and `docs/*.md` run as written, so their output cannot
//! drift from what this version prints (trycmd): every ```` ```console ```` block is a list of
//! `$ command` lines, each followed by its exact output (standard output then standard error),
//! with `...` standing for any lines and `[..]` for any text on a line (what depends on the
//! machine: the compiler's version, the amount of memory). `? N` after a command is its exit
//! status (default 0). Blocks marked ```` ```text ```` are not run (long searches and timings).
//!
//! The examples run in a temporary directory holding the HLO files the documents show (taken
//! from the documents themselves), with their own cache directory. This is the only test of
//! this binary, because it changes the process's working directory.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root (this crate's parent).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the crate is in the workspace").to_path_buf()
}

/// The text of the first fenced block of `document` that starts with `first_line`.
fn block_starting_with(document: &str, first_line: &str) -> String {
    let start = document
        .find(&format!("\n{first_line}\n"))
        .unwrap_or_else(|| panic!("no block starting with `{first_line}`"))
        + 1;
    let end = start + document[start..].find("```").expect("the block is closed");
    document[start..end].to_string()
}

/// Why the examples that compile and run an AVX2 kernel cannot run here, if they cannot.
fn cannot_run_avx2_kernels() -> Option<&'static str> {
    if !["cc", "gcc", "clang"].iter().any(|c| Command::new(c).arg("--version").output().is_ok()) {
        return Some("no C compiler");
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        return None;
    }
    Some("the host cannot run AVX2 and FMA kernels")
}

#[test]
#[allow(clippy::print_stdout, reason = "the reason a document is skipped")]
fn the_examples_in_the_readme_and_the_docs_print_what_they_show() {
    let root = root();
    let read = |path: &str| std::fs::read_to_string(root.join(path)).expect("the document exists");
    let work = tempfile::tempdir().expect("a temporary directory");
    let cache = tempfile::tempdir().expect("a temporary directory");
    // The files the examples read, as the documents show them.
    let readme = read("README.md");
    let broadcast = block_starting_with(&readme, "$ cat bc.hlo");
    let broadcast = broadcast.split_once('\n').map(|(_, rest)| rest).unwrap_or_default();
    let broadcast = &broadcast[..broadcast.find("\n$ ").expect("the next command")];
    std::fs::write(work.path().join("bc.hlo"), format!("{}\n", broadcast.trim_end())).expect("written");
    let worked = block_starting_with(&read("docs/indexing-maps.md"), "HloModule worked_example");
    std::fs::write(work.path().join("worked.hlo"), worked).expect("written");
    let compile = read("docs/compile.md");
    let dense = block_starting_with(&compile, "$ cat dense.hlo");
    let dense = dense.split_once('\n').map(|(_, rest)| rest).unwrap_or_default();
    let dense = &dense[..dense.find("\n$ ").expect("the next command")];
    std::fs::write(work.path().join("dense.hlo"), format!("{}\n", dense.trim_end())).expect("written");
    std::env::set_current_dir(work.path()).expect("the working directory changes");

    let cases = trycmd::TestCases::new();
    cases
        .register_bin("morello", Path::new(env!("CARGO_BIN_EXE_morello")))
        .register_bin("cat", Path::new("/bin/cat"))
        .env("XDG_CACHE_HOME", cache.path().display().to_string())
        .case(root.join("README.md"))
        .case(root.join("docs/*.md"));
    if let Some(reason) = cannot_run_avx2_kernels() {
        println!("skipped README.md and docs/compile.md: {reason}");
        cases.skip(root.join("README.md"));
        cases.skip(root.join("docs/compile.md"));
    }
    cases.run();
}
