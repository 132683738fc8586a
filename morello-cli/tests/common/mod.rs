//! What the end-to-end tests share: running the binary so that no test reads or writes the
//! user's memo tables, and skipping what needs a C compiler when there is none.

#![allow(dead_code, reason = "each test crate uses a part")]

use std::path::Path;
use std::process::{Command, Output};

/// The binary as a command with `cache` as its cache directory (so that it reads and writes no
/// table of the user's), to add arguments to and run or spawn.
pub fn morello_command(cache: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_morello"));
    command.env("XDG_CACHE_HOME", cache);
    command
}

/// A finished run's exit status (-1 for a signal), standard output and standard error.
pub fn parts(out: Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the binary with `cache` as its cache directory and extra environment variables; returns
/// the exit status (-1 for a signal), standard output and standard error.
pub fn morello_in(cache: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    parts(morello_command(cache).envs(env.iter().copied()).args(args).output().expect("morello runs"))
}

/// Runs the binary with extra environment variables and a cache directory of its own.
pub fn morello_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let cache = tempfile::tempdir().expect("a temporary directory");
    morello_in(cache.path(), args, env)
}

/// Runs the binary with a cache directory of its own.
pub fn morello(args: &[&str]) -> (i32, String, String) {
    morello_env(args, &[])
}

/// A target file of main memory (`HBM`) and eight scalar registers: the smallest target a
/// search can use, with only the scalar kernels, which calibration refuses (it has no
/// vector-register level to measure).
pub const SCALAR_TARGET: &str = r#"
name = "tiny"
cache_line_bytes = 64
processors = 1
kernels = ["MultAdd", "ValueAssign", "ValueFill", "MemsetZero"]

[[levels]]
name = "HBM"
kind = "memory"
capacity = "1GiB"
cost_per_line = 40
moves_to = ["REG"]

[[levels]]
name = "REG"
kind = "scalar-registers"
capacity = 8
"#;

/// Runs the binary with a cache directory of its own and asserts that it succeeds (the message
/// holds its standard error); returns its standard output and standard error.
pub fn morello_ok(args: &[&str]) -> (String, String) {
    let (code, stdout, stderr) = morello(args);
    assert_eq!(code, 0, "morello {args:?}: {stderr}");
    (stdout, stderr)
}

/// `available`, after printing that the test is skipped because `missing` when it is not.
#[allow(clippy::print_stdout, reason = "the reason a test is skipped")]
pub fn skip_unless(available: bool, missing: &str) -> bool {
    if !available {
        println!("skipped: {missing}");
    }
    available
}

/// Whether a C compiler is installed (else the test is skipped, saying why).
pub fn have_compiler() -> bool {
    let found = ["cc", "gcc", "clang"].iter().any(|c| Command::new(c).arg("--version").output().is_ok());
    skip_unless(found, "no C compiler")
}

/// Whether this machine runs the `x86-avx2` target's kernels (AVX2 and FMA; every built-in x86
/// target needs them); if not, says that the test is skipped.
pub fn host_runs_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    let runs = std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    let runs = false;
    skip_unless(runs, "this machine does not run x86-avx2 kernels")
}

/// A compiler that cannot link OpenMP programs, as Debian's clang without `libomp-dev`: gcc behind
/// a script that fails every link with `-fopenmp`. `None` (the test is skipped) without gcc.
#[allow(clippy::print_stdout, reason = "the reason a test is skipped")]
pub fn compiler_without_openmp(dir: &Path) -> Option<String> {
    if Command::new("gcc").arg("--version").output().is_err() {
        println!("skipped: needs gcc to stand in for a compiler without OpenMP");
        return None;
    }
    Some(executable_script(
        dir,
        "cc-without-omp",
        "#!/bin/sh\ncase \" $* \" in *' -c '*) ;; *' -fopenmp '*) \
         echo '/usr/bin/ld: cannot find -lomp: No such file or directory' >&2; exit 1 ;; esac\n\
         exec gcc \"$@\"\n",
    ))
}

/// Writes the executable file `name` in `dir` with the text `script` (e.g. a stand-in compiler);
/// returns its path.
pub fn executable_script(dir: &Path, name: &str, script: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, script).expect("the script is written");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("executable");
    path.to_string_lossy().into_owned()
}

/// The memo table in the file at `path`, fully validated, read with the target it stores (whose
/// processor count is the machine's that wrote it); panics unless it is a valid table.
pub fn load_table(path: &Path) -> morello_search::db::Table {
    use morello_search::ActionConfig;
    use morello_search::db::{Schema, TableFile, Validation, stored_target};
    let bytes = std::fs::read(path).expect("the table exists");
    let (_, target) = stored_target(&bytes, path).expect("a table stores its target");
    let schema = Schema::new(&target, ActionConfig::default());
    TableFile::new(path).load(&schema, Validation::Full).expect("a valid table")
}
