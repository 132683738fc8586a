//! End-to-end tests of error text and exit status: 2 for bad input (files the user named
//! included), each cause printed once, long inputs not echoed in full.

use crate::common::morello;

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
    for args in [
        vec!["db", "stats", path],
        vec!["db", "verify", path],
        vec!["search", "matmul", "2x2x2", "--target", path, "--no-db"],
        vec!["indexing", path],
    ] {
        let stderr = bad_input(&args, "directory");
        assert_eq!(stderr.matches("directory").count(), 1, "{args:?}: the cause once: {stderr}");
    }
    let missing = dir.path().join("missing.hlo");
    let os = std::io::Error::from_raw_os_error(2).to_string();
    let stderr = bad_input(&["indexing", missing.to_str().unwrap()], &os);
    assert_eq!(stderr.matches(&os).count(), 1, "the cause once: {stderr}");
}

/// Runs `args`, expects clap's refusal of a flag's value (status 2) containing `expected`.
fn bad_flag(args: &[&str], expected: &str) {
    let (code, stdout, stderr) = morello(args);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert!(stdout.is_empty(), "{args:?}: {stdout}");
    assert!(stderr.starts_with("error: invalid value") && stderr.contains(expected), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

/// Every numeric flag is checked when it is parsed: durations finite, not negative and at most a
/// year, counts at least 1 (no panic converting `1e20` seconds, no `--jobs 0`).
#[test]
fn numeric_flags_out_of_range_are_refused_with_what_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.mdb");
    let db = db.to_str().unwrap();
    for command in [
        vec!["search", "matmul", "2x2x2", "--no-db"],
        vec!["run", "matmul", "2x2x2", "--no-db"],
        vec!["precompute", "matmul", "--up-to", "2", "--db", db],
    ] {
        for (flag, value, says) in [
            ("--time-limit", "1e20", "`1e20` seconds is longer than a year (31536000 seconds)"),
            ("--time-limit", "1e308", "longer than a year"),
            ("--time-limit", "18446744073709551616", "longer than a year"),
            ("--time-limit", "NaN", "not a number of seconds from 0 to 31536000"),
            ("--time-limit", "-1", "not a number of seconds from 0"),
            ("--checkpoint", "1e20", "longer than a year"),
            ("--jobs", "0", "0 is not allowed here: give at least 1"),
            ("--jobs", "-1", "not a whole number"),
        ] {
            let mut args = command.clone();
            let flag = format!("{flag}={value}");
            args.push(&flag);
            bad_flag(&args, says);
        }
    }
    bad_flag(&["search", "matmul", "4x4x4", "--top-k", "0", "--no-db"], "give at least 1");
    bad_flag(&["search", "matmul", "4x4x4", "--processors", "0", "--no-db"], "give at least 1");
    bad_flag(&["precompute", "matmul", "--up-to", "99999999999", "--db", db], "more than 1048576");
    bad_flag(&["bench", "matmul", "4x4x4", "--samples", "0", "--no-db"], "give at least 1");
    bad_flag(
        &["bench", "matmul", "4x4x4", "--min-sample-seconds", "inf", "--no-db"],
        "not a number of seconds",
    );
    assert!(!dir.path().join("t.mdb").exists(), "nothing ran");
}

/// A text input is read through a bounded reader: `/dev/zero` is refused at its first chunk (not
/// read until memory runs out), and a file over the kind's cap is refused before it is read.
#[test]
fn text_inputs_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.mdb");
    let start = std::time::Instant::now();
    for args in [
        vec!["search", "matmul", "2x2x2", "--target", "/dev/zero", "--no-db"],
        vec!["precompute", "--specs", "/dev/zero", "--db", db.to_str().unwrap()],
        vec!["indexing", "/dev/zero"],
    ] {
        bad_input(&args, "/dev/zero holds a NUL byte (byte 0)");
    }
    assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
    let big = dir.path().join("big.toml");
    std::fs::File::create(&big).unwrap().set_len(2 << 20).unwrap();
    bad_input(
        &["search", "matmul", "2x2x2", "--target", big.to_str().unwrap(), "--no-db"],
        "is larger than 1 MiB, the most a target file may be",
    );
    let specs = dir.path().join("specs.txt");
    std::fs::write(&specs, "matmul 4x4x4\nzero 4\0x4\n").unwrap();
    bad_input(
        &["precompute", "--specs", specs.to_str().unwrap(), "--db", db.to_str().unwrap()],
        "specs.txt holds a NUL byte (byte 19): a file of specs is text",
    );
}

/// Messages name what the user wrote, as written: a size beyond any integer, control characters
/// escaped; a table shorter than its header says so; the db tools, which take the table as an
/// argument, suggest no flag they lack, and precompute none but --db.
#[test]
fn messages_name_the_input_as_written_and_only_flags_the_command_has() {
    bad_input(
        &["search", "zero", "18446744073709551616x1x1", "--no-db"],
        "dimension 0 is 18446744073709551616, above the limit of 2^31",
    );
    let stderr = bad_input(&["search", "zero", "4\u{1}x4", "--no-db"], "invalid shape `4\\u{1}x4`");
    assert!(!stderr.contains('\u{1}'), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short.mdb");
    // The first 100 bytes of a table: the magic, the format version, zeros.
    let mut head = vec![0x89, b'M', b'O', b'R', b'\r', b'\n', 0x1a, b'\n'];
    head.extend(morello_search::db::FORMAT_VERSION.to_le_bytes());
    head.resize(100, 0);
    std::fs::write(&short, head).unwrap();
    let short = short.to_str().unwrap();
    for args in [
        vec!["db", "stats", short],
        vec!["db", "verify", short],
        vec!["db", "compact", short],
        vec!["db", "merge", short, "-o", short],
    ] {
        let stderr =
            bad_input(&args, "is truncated (100 bytes, shorter than the header every table starts with)");
        assert!(!stderr.contains("--db") && !stderr.contains("--no-db"), "{args:?}: {stderr}");
    }
    let stderr = bad_input(&["precompute", "matmul", "--up-to", "2", "--db", short], "is truncated");
    assert!(stderr.contains("(--db PATH picks another table)") && !stderr.contains("--no-db"), "{stderr}");
    let stderr = bad_input(&["search", "matmul", "2x2x2", "--db", short], "is truncated");
    assert!(stderr.contains("--no-db searches without one"), "{stderr}");
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

/// Quantized dtypes: an unknown name lists the choices, a reduction whose i32 sum could wrap is
/// refused with the limit, and the mixed dtypes are refused for forms with one dtype.
#[test]
fn quantized_dtypes_refuse_what_they_cannot_compute_exactly() {
    fn run<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        [&["search"], extra, &["--target", "x86-avx2", "--no-db"][..]].concat()
    }
    bad_input(&run(&["matmul", "2x2x2", "--dtype", "u8u8s32"]), "u8s8s32 or s8s8s32");
    bad_input(&run(&["matmul", "1x65794x1", "--dtype", "u8s8s32"]), "up to 65793 of them");
    bad_input(&run(&["matmul", "1x131072x1", "--dtype", "s8s8s32"]), "up to 131071 of them");
    bad_input(&run(&["move", "4x4", "--dtype", "u8s8s32"]), "a move takes one dtype");
    bad_input(&run(&["zero", "4x4", "--rhs-layout", "vnni"]), "--rhs-layout applies only to matmul");
}
