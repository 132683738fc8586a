//! End-to-end tests of the memo tables: `search` with the default table, `--db`, `--no-db`, bad
//! files, and `db stats|verify|merge`, `precompute`. Every test has its own cache directory.

use std::path::{Path, PathBuf};

use crate::common::morello_command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn morello(cache: &Path, args: &[&str]) -> Run {
    let out = morello_command(cache).args(args).env_remove("HOME").output().expect("morello runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ok(cache: &Path, args: &[&str]) -> Run {
    let run = morello(cache, args);
    assert_eq!(run.code, 0, "morello {args:?}: {}", run.stderr);
    run
}

fn json(cache: &Path, args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(cache, args).stdout).expect("JSON")
}

/// Asserts that the u32 matmul searches of `sizes` on x86-avx2 find everything in `table`: they
/// solve no spec.
fn answers_without_solving(cache: &Path, table: &Path, sizes: &[&str]) {
    for size in sizes {
        let table = table.to_str().expect("a UTF-8 path");
        let args = [
            "search", "matmul", size, "--dtype", "u32", "--target", "x86-avx2", "--db", table, "--emit",
            "json",
        ];
        let v = json(cache, &args);
        assert_eq!(v["stats"]["specs_solved"], 0, "{size} was not all in the table");
    }
}

/// `morello search matmul 4x4x4 --dtype u32 --target x86-avx2` and `extra`.
fn small<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["search", "matmul", "4x4x4", "--dtype", "u32", "--target", "x86-avx2"];
    args.extend_from_slice(extra);
    args
}

/// A cache directory of its own with a table `name` in it written by the [`small`] search, the
/// table's path and bytes (for a test to damage or rewrite).
fn small_table(name: &str) -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let cache = tempfile::tempdir().expect("a temporary directory");
    let path = cache.path().join(name);
    ok(cache.path(), &small(&["--db", path.to_str().expect("a UTF-8 path"), "-q"]));
    let bytes = std::fs::read(&path).expect("the table is written");
    (cache, path, bytes)
}

/// The one table file in the cache directory.
fn default_table(cache: &Path) -> PathBuf {
    let dir = cache.join("morello");
    let tables: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the cache directory exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "mdb"))
        .collect();
    assert_eq!(tables.len(), 1, "{tables:?}");
    tables[0].clone()
}

/// A file's bytes, inode and modification time: equal before and after means it was neither
/// written in place nor replaced, not even by the same bytes.
fn snapshot(path: &Path) -> (Vec<u8>, u64, std::time::SystemTime) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).expect("the file exists");
    (std::fs::read(path).expect("readable"), meta.ino(), meta.modified().expect("an mtime"))
}

#[test]
fn a_second_search_hits_the_default_table() {
    let cache = tempfile::tempdir().unwrap();
    let cold = json(cache.path(), &small(&["--emit", "json"]));
    assert!(cold["stats"]["specs_solved"].as_u64().unwrap() > 100);
    let table = default_table(cache.path());
    let name = table.file_name().unwrap().to_string_lossy().into_owned();
    let versions =
        format!("-f{}-m{}.mdb", morello_search::db::FORMAT_VERSION, morello_search::db::MODEL_VERSION);
    assert!(name.starts_with("x86-avx2-") && name.ends_with(&versions), "{name}");
    let before = std::fs::read(&table).unwrap();
    let untouched = snapshot(&table);
    let warm = json(cache.path(), &small(&["--emit", "json"]));
    assert_eq!(warm["stats"]["specs_solved"], 0);
    assert_eq!(warm["stats"]["memo_hits"], 1);
    assert_eq!(warm["cost"], cold["cost"]);
    assert_eq!(warm["impl"], cold["impl"]);
    assert!(snapshot(&table) == untouched, "nothing new, nothing written (nor replaced)");
    // A larger search reuses the smaller one's sub-problems and adds its own.
    let bigger = json(
        cache.path(),
        &["search", "matmul", "8x4x4", "--dtype", "u32", "--target", "x86-avx2", "--emit", "json"],
    );
    assert!(bigger["stats"]["memo_hits"].as_u64().unwrap() > 10, "{}", bigger["stats"]);
    assert!(std::fs::read(&table).unwrap().len() > before.len());
}

#[test]
fn no_db_touches_no_file_and_db_picks_one() {
    let cache = tempfile::tempdir().unwrap();
    ok(cache.path(), &small(&["--no-db", "-q"]));
    assert!(!cache.path().join("morello").exists());
    let path = cache.path().join("mine.mdb");
    let path_text = path.to_str().unwrap();
    ok(cache.path(), &small(&["--db", path_text, "-q"]));
    assert!(path.exists());
    assert!(!cache.path().join("morello").exists());
    let run = ok(cache.path(), &small(&["--db", path_text]));
    assert!(run.stderr.contains("0 specs solved, 1 memo hits"), "{}", run.stderr);
    assert!(run.stderr.contains(&format!("table {path_text}:")), "{}", run.stderr);
}

#[test]
fn bad_tables_exit_2_with_the_reason_and_stay_untouched() {
    let cache = tempfile::tempdir().unwrap();
    let good = cache.path().join("good.mdb");
    ok(cache.path(), &small(&["--db", good.to_str().unwrap(), "-q"]));
    let bytes = std::fs::read(&good).unwrap();
    // The index record, which every search reads, ends the file.
    let mut flipped = bytes.clone();
    flipped[bytes.len() - 3] ^= 0xff;
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("truncated.mdb", bytes[..bytes.len() / 3].to_vec(), "is truncated"),
        ("flipped.mdb", flipped, "is corrupt"),
        ("foreign.mdb", b"#!/bin/sh\necho not a table\n".to_vec(), "is not a morello table"),
    ];
    for (name, content, message) in cases {
        let path = cache.path().join(name);
        std::fs::write(&path, &content).unwrap();
        let run = morello(cache.path(), &small(&["--db", path.to_str().unwrap()]));
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        assert!(run.stderr.contains(message) && run.stderr.contains("--no-db"), "{name}: {}", run.stderr);
        assert_eq!(std::fs::read(&path).unwrap(), content, "{name} is never overwritten");
    }
    // Another target.
    let run = morello(
        cache.path(),
        &["search", "matmul", "4x4x4", "--target", "x86-avx512", "--db", good.to_str().unwrap()],
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("was written for target x86-avx2"), "{}", run.stderr);
    assert!(run.stderr.contains("This table answers searches with --target x86-avx2"), "{}", run.stderr);
    assert_eq!(std::fs::read(&good).unwrap(), bytes);
    // The same target for another processor count: the message names the field that differs.
    let mut args = small(&["--db", good.to_str().unwrap()]);
    args.extend(["--processors", "3"]);
    let run = morello(cache.path(), &args);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("was written for target x86-avx2") && run.stderr.contains("processors is "),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(", 3 here"), "{}", run.stderr);
    assert_eq!(std::fs::read(&good).unwrap(), bytes);
    // db commands report bad files the same way, and name a damaged block.
    let run = morello(cache.path(), &["db", "verify", cache.path().join("flipped.mdb").to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("is corrupt"), "{}", run.stderr);
    let mut block = bytes.clone();
    block[bytes.len() / 3] ^= 0xff;
    let damaged = cache.path().join("block.mdb");
    std::fs::write(&damaged, &block).unwrap();
    let run = morello(cache.path(), &["db", "verify", damaged.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("is corrupt (block ") && run.stderr.contains(" of run 0 at byte "),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&damaged).unwrap(), block);
}

/// Where a table's frames start: after the fixed header (124 bytes) and the metadata, whose
/// length the header holds at byte 112.
fn frames_start(bytes: &[u8]) -> usize {
    124 + u32::from_le_bytes(bytes[112..116].try_into().expect("a header")) as usize
}

#[test]
fn a_search_through_a_damaged_block_names_it_and_leaves_the_file() {
    let (cache, path, mut bytes) = small_table("t.mdb");
    let db = path.to_str().unwrap();
    // A new file is written blocks first: the first frame is block 0 of run 0.
    let first = frames_start(&bytes);
    bytes[first + 3] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    // A larger search needs the stored sub-specs, so it reads every block.
    let run = morello(
        cache.path(),
        &["search", "matmul", "4x4x8", "--dtype", "u32", "--target", "x86-avx2", "--db", db],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("{db} is corrupt (block 0 of run 0 at byte {first}"))
            && run.stderr.contains("checksum does not match its content): check it with `morello db verify`")
            && run.stderr.matches("delete it").count() == 1,
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "a damaged table is never written");
    let names: Vec<_> = std::fs::read_dir(cache.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(names.iter().all(|n| !n.to_string_lossy().contains(".tmp.")), "{names:?}");
}

/// FNV-1a 64, the checksum of a table's metadata.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[test]
fn a_table_of_another_model_version_is_refused_with_what_to_do() {
    use morello_search::db::{MODEL_VERSION, stored_target};
    let (cache, path, mut bytes) = small_table("old.mdb");
    let db = path.to_str().unwrap();
    // The metadata (bincode, varint integers) starts with the target's name, its fingerprint,
    // then the model version: rewrite that as a future morello would have, with its checksum.
    let (identity, _) = stored_target(&bytes, &path).unwrap();
    let fingerprint_bytes = match identity.target_fingerprint {
        0..=250 => 1,
        251..=0xffff => 3,
        0x1_0000..=0xffff_ffff => 5,
        _ => 9,
    };
    let at = 124 + 1 + identity.target_name.len() + fingerprint_bytes;
    assert_eq!(u32::from(bytes[at]), MODEL_VERSION, "the model version's byte");
    bytes[at] += 1;
    let checksum = fnv(&bytes[124..frames_start(&bytes)]);
    bytes[116..124].copy_from_slice(&checksum.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(stored_target(&bytes, &path).unwrap().0.model_version, MODEL_VERSION + 1);

    let run = morello(cache.path(), &small(&["--db", db]));
    assert_eq!(run.code, 2, "{}", run.stderr);
    let expected = format!(
        "was written with model version {}, and this morello has model version {MODEL_VERSION}",
        MODEL_VERSION + 1
    );
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("build a table for version {MODEL_VERSION} with `morello precompute`"))
            && run.stderr.contains("--no-db"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "a table of another version is never written");
    // db stats says what it is and that this morello cannot use it.
    let stats = ok(cache.path(), &["db", "stats", db]);
    assert!(stats.stdout.contains(&format!("usable:      no: the table {expected}")), "{}", stats.stdout);
}

#[test]
fn db_stats_verify_and_merge() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let a = dir.join("a.mdb");
    let b = dir.join("b.mdb");
    ok(
        dir,
        &[
            "search",
            "matmul",
            "4x2x2",
            "--dtype",
            "u32",
            "--target",
            "x86-avx2",
            "--db",
            a.to_str().unwrap(),
            "-q",
        ],
    );
    ok(
        dir,
        &[
            "search",
            "matmul",
            "2x2x4",
            "--dtype",
            "u32",
            "--target",
            "x86-avx2",
            "--db",
            b.to_str().unwrap(),
            "-q",
        ],
    );

    let (a_before, b_before) = (snapshot(&a), snapshot(&b));
    let stats = ok(dir, &["db", "stats", a.to_str().unwrap()]).stdout;
    for expected in
        ["target:      x86-avx2", "usable:      yes", "bytes per entry", "MatmulAccum", "FillZero"]
    {
        assert!(stats.contains(expected), "{expected} in:\n{stats}");
    }
    let verify = ok(dir, &["db", "verify", a.to_str().unwrap(), "--rebuild", "all"]).stdout;
    assert!(verify.starts_with("ok: "), "{verify}");

    let out = dir.join("out.mdb");
    let merged =
        ok(dir, &["db", "merge", a.to_str().unwrap(), b.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .stdout;
    assert!(merged.contains("already held and equal"), "{merged}");
    ok(dir, &["db", "verify", out.to_str().unwrap()]);
    assert!(
        snapshot(&a) == a_before && snapshot(&b) == b_before,
        "stats, verify and merge only read their inputs"
    );
    // The merged table answers both searches without solving anything.
    answers_without_solving(dir, &out, &["4x2x2", "2x2x4"]);
    // Tables of different targets do not merge.
    let c = dir.join("c.mdb");
    ok(dir, &["search", "matmul", "2x2x2", "--target", "x86-avx512", "--db", c.to_str().unwrap(), "-q"]);
    let run =
        morello(dir, &["db", "merge", a.to_str().unwrap(), c.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("x86-avx512"), "{}", run.stderr);

    // The default table of a target.
    let run = morello(dir, &["db", "stats", "--target", "x86-avx2"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no table at"), "{}", run.stderr);
}

#[test]
fn precompute_fills_the_table_and_resumes() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let args = ["precompute", "matmul", "--up-to", "2", "--dtype", "u32", "--target", "x86-avx2"];
    let first = ok(dir, &args);
    assert!(first.stdout.contains("8 matmuls up to 2x2x2"), "{}", first.stdout);
    let table = default_table(dir);
    // Its stages made several commits; a finished precompute leaves one run.
    assert!(first.stderr.contains("runs compacted into one"), "{}", first.stderr);
    let stats = ok(dir, &["db", "stats", table.to_str().unwrap()]).stdout;
    assert!(stats.contains("layout:      1 commits; 1 runs of"), "{stats}");
    let bytes = std::fs::read(&table).unwrap();
    let again = ok(dir, &args);
    assert!(again.stdout.contains("8 matmuls"), "{}", again.stdout);
    assert_eq!(std::fs::read(&table).unwrap(), bytes, "a finished precompute has nothing to add");
    let warm =
        json(dir, &["search", "matmul", "2x1x2", "--dtype", "u32", "--target", "x86-avx2", "--emit", "json"]);
    assert_eq!(warm["stats"]["specs_solved"], 0);
    let run = morello(dir, &["precompute", "matmul", "--up-to", "3"]);
    assert_eq!(run.code, 2);
}

#[test]
fn two_searches_at_once_both_save() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let db = dir.join("shared.mdb");
    let spawn = |size: &str| {
        morello_command(dir)
            .args(["search", "matmul", size, "--dtype", "u32", "--target", "x86-avx2", "-q", "--db"])
            .arg(&db)
            .spawn()
            .expect("morello starts")
    };
    let (mut first, mut second) = (spawn("4x2x2"), spawn("2x2x4"));
    assert!(first.wait().unwrap().success() && second.wait().unwrap().success());
    answers_without_solving(dir, &db, &["4x2x2", "2x2x4"]);
}

/// The lines of `stderr` that are warnings.
fn warnings(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.starts_with("warning:")).collect()
}

#[test]
fn a_table_that_cannot_be_opened_or_written_costs_one_warning_not_the_answer() {
    let cache = tempfile::tempdir().unwrap();
    let file = cache.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let through_file = file.join("t.mdb");
    let mut cases: Vec<(PathBuf, Vec<String>, &str)> = vec![
        // A parent that is a file: nothing can open, lock or write it (not even root).
        (
            cache.path().to_path_buf(),
            vec!["--db".into(), through_file.display().to_string()],
            "Not a directory",
        ),
        // A directory given as the table.
        (
            cache.path().to_path_buf(),
            vec!["--db".into(), cache.path().display().to_string()],
            "is a directory, not a table file",
        ),
        // The default table in a cache directory that is a file.
        (file.clone(), vec![], "Not a directory"),
        // No cache directory at all (a relative XDG_CACHE_HOME is ignored, HOME is unset).
        (PathBuf::from("relative"), vec![], "no cache directory"),
    ];
    // The table reads as missing, but its lock file cannot be created (a save fails).
    if Path::new("/proc/self").is_dir() {
        cases.push((cache.path().to_path_buf(), vec!["--db".into(), "/proc/self/t.mdb".into()], "lock"));
    } else {
        println!("skipped the lock case: no /proc/self");
    }
    for (dir, db, reason) in cases {
        let mut args = small(&["--emit", "json", "-q"]);
        args.extend(db.iter().map(String::as_str));
        let run = morello(&dir, &args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("the answer is printed");
        assert!(v["cost"].as_u64().is_some_and(|c| c > 0), "{args:?}: {}", run.stdout);
        let warned = warnings(&run.stderr);
        assert_eq!(warned.len(), 1, "{args:?}: one warning: {}", run.stderr);
        assert!(warned[0].contains(reason), "{args:?}: {}", run.stderr);
        if let Some(path) = db.get(1) {
            assert!(warned[0].contains(path.as_str()), "{args:?}: names the path: {}", run.stderr);
        }
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a directory");
}

#[test]
fn a_read_only_table_is_read_and_used_never_replaced() {
    use std::os::unix::fs::PermissionsExt;
    let cache = tempfile::tempdir().unwrap();
    let path = cache.path().join("ro.mdb");
    let path_text = path.to_str().unwrap();
    ok(cache.path(), &small(&["--db", path_text, "-q"]));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::read(&path).unwrap();
    let run = ok(
        cache.path(),
        &[
            "search", "matmul", "8x4x4", "--dtype", "u32", "--target", "x86-avx2", "--emit", "json", "--db",
            path_text,
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert!(v["stats"]["memo_hits"].as_u64().unwrap() > 10, "the table is used: {}", v["stats"]);
    assert!(run.stderr.contains(&format!("note: the table {path_text} is read-only")), "{}", run.stderr);
    assert!(warnings(&run.stderr).is_empty(), "{}", run.stderr);
    assert_eq!(std::fs::read(&path).unwrap(), before, "never replaced");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o444);
}

#[test]
fn a_search_stopped_by_its_memory_budget_saves_a_valid_table_that_a_larger_budget_resumes() {
    let cache = tempfile::tempdir().unwrap();
    let path = cache.path().join("t.mdb");
    let path_text = path.to_str().unwrap();
    let search = |budget: &str| {
        morello(
            cache.path(),
            &[
                "search",
                "matmul",
                "8x8x16",
                "--target",
                "x86-avx2",
                "--db",
                path_text,
                "--max-memory",
                budget,
            ],
        )
    };
    let stopped = search("4MiB");
    assert_eq!(stopped.code, 1, "work that ran and failed: {}", stopped.stderr);
    assert!(stopped.stdout.is_empty(), "{}", stopped.stdout);
    assert!(
        stopped.stderr.contains("error: the search needs more memory than --max-memory 4.0 MiB")
            && stopped.stderr.contains(&format!("specs it solved are saved in {path_text}"))
            && stopped.stderr.contains("run it again with a larger --max-memory"),
        "{}",
        stopped.stderr
    );
    ok(cache.path(), &["db", "verify", path_text]);
    let resumed = search("1GiB");
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    let loaded = resumed.stderr.lines().find(|l| l.starts_with("table ")).expect("a summary line");
    assert!(!loaded.contains(": 0 specs loaded"), "resumes from the saved specs: {loaded}");
}

/// Tables written by two small searches into `dir` (`a.mdb`: 4x2x2, `b.mdb`: 2x2x4, both u32 on
/// x86-avx2).
fn two_tables(dir: &Path) -> (PathBuf, PathBuf) {
    let (a, b) = (dir.join("a.mdb"), dir.join("b.mdb"));
    for (size, path) in [("4x2x2", &a), ("2x2x4", &b)] {
        let args = ["search", "matmul", size, "--dtype", "u32", "--target", "x86-avx2", "--db"];
        let mut args = args.to_vec();
        args.extend([path.to_str().expect("a UTF-8 path"), "-q"]);
        ok(dir, &args);
    }
    (a, b)
}

/// `db merge -o` and `db compact` write only regular files or new paths: a FIFO, a link to a
/// device and a directory are refused with status 2 and left as they are.
#[test]
fn merge_and_compact_write_only_regular_files() {
    use std::os::unix::fs::FileTypeExt;
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let (a, _) = two_tables(dir);
    let fifo = dir.join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let null = dir.join("null.mdb");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    let folder = dir.join("folder");
    std::fs::create_dir(&folder).unwrap();
    for (out, kind) in [(&fifo, "a FIFO"), (&null, "a character device"), (&folder, "a directory")] {
        let out_text = out.to_str().unwrap();
        for args in
            [vec!["db", "merge", a.to_str().unwrap(), "-o", out_text], vec!["db", "compact", out_text]]
        {
            let run = morello(dir, &args);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert!(run.stderr.contains(&format!("{out_text} is {kind}")), "{}", run.stderr);
            assert!(!run.stderr.contains("--db"), "db commands have no --db: {}", run.stderr);
        }
    }
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO stays");
    assert!(std::fs::symlink_metadata(&null).unwrap().file_type().is_symlink(), "the link stays");
    assert!(!dir.join("null.mdb.lock").exists() && !Path::new("/dev/null.lock").exists());
    // A search given a FIFO does not block on it: it warns and searches in memory.
    let run = ok(dir, &small(&["--db", fifo.to_str().unwrap(), "-q"]));
    assert!(run.stderr.contains("is a FIFO (named pipe), not a table file"), "{}", run.stderr);
}

/// A read-only table is never replaced by merge or compact, nor written by precompute: status
/// 2, its bytes and mode unchanged.
#[test]
fn merge_compact_and_precompute_leave_a_read_only_table_alone() {
    use std::os::unix::fs::PermissionsExt;
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let (a, b) = two_tables(dir);
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = snapshot(&a);
    let (a_text, b_text) = (a.to_str().unwrap(), b.to_str().unwrap());
    for args in [
        vec!["db", "merge", b_text, "-o", a_text],
        vec!["db", "merge", a_text, b_text, "-o", a_text],
        vec!["db", "compact", a_text],
        vec![
            "precompute",
            "matmul",
            "--up-to",
            "2",
            "--dtype",
            "u32",
            "--target",
            "x86-avx2",
            "--db",
            a_text,
        ],
    ] {
        let run = morello(dir, &args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("{a_text} is read-only (the file has no write permission)")),
            "{}",
            run.stderr
        );
    }
    assert!(snapshot(&a) == before, "the read-only table is unchanged");
    assert_eq!(std::fs::metadata(&a).unwrap().permissions().mode() & 0o777, 0o444);
    // A writable table keeps its mode when merge replaces it.
    std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o600)).unwrap();
    ok(dir, &["db", "merge", a_text, b_text, "-o", b_text]);
    assert_eq!(std::fs::metadata(&b).unwrap().permissions().mode() & 0o777, 0o600);
}

/// `db merge X Y -o X` while other processes keep saving new specs to X loses none of them: the
/// output's lock is held from the moment it is read again to the rename.
#[test]
fn merge_into_an_input_loses_nothing_a_concurrent_search_saves() {
    use morello_core::spec::SpecBuilder;
    use morello_core::target::Target;
    use morello_search::db::{OpenTable, TableLocation};
    use morello_search::{ActionConfig, Search};
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let (x, y) = two_tables(dir);
    // The tables were written for this machine's processor count.
    let cores = u32::try_from(std::thread::available_parallelism().unwrap().get()).unwrap();
    let target = Target::builtin("x86-avx2", cores).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let saved: Vec<morello_core::spec::CanonicalSpec> = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut saved = Vec::new();
            for (m, n) in (1..=8).flat_map(|m| (1..=8).map(move |n| (m, n))) {
                if stop.load(std::sync::atomic::Ordering::Relaxed) && saved.len() > 4 {
                    break;
                }
                let spec = SpecBuilder::parse(&format!("zero {m}x{n}"))
                    .unwrap()
                    .dtype(morello_core::dtype::Dtype::U32)
                    .build(&target)
                    .unwrap();
                let mut table =
                    OpenTable::open(&TableLocation::File(x.clone()), &target, ActionConfig::default())
                        .unwrap();
                Search::new(&target).threads(1).memo(table.memo()).solve(&spec).unwrap();
                table.save(&mut |_| {}).unwrap();
                saved.push(spec);
            }
            saved
        });
        for _ in 0..3 {
            ok(dir, &["db", "merge", x.to_str().unwrap(), y.to_str().unwrap(), "-o", x.to_str().unwrap()]);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().unwrap()
    });
    let bytes = std::fs::read(&x).unwrap();
    let schema = morello_search::db::Schema::new(&target, ActionConfig::default());
    let table =
        morello_search::db::Table::from_bytes(&bytes, &x, &schema, morello_search::db::Validation::Full)
            .unwrap();
    for spec in &saved {
        assert!(table.get(spec).is_some(), "{} was saved, then lost by the merge", spec.display(&target));
    }
    answers_without_solving(dir, &x, &["4x2x2", "2x2x4"]);
}

/// `db merge` waits while a precompute fills one of its inputs, and reads it once it is done.
#[test]
fn merge_waits_for_a_precompute_filling_an_input() {
    use std::io::BufRead;
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    let (a, b) = two_tables(dir);
    let out = dir.join("out.mdb");
    let filling = morello_search::db::FillLock::filling(&b, &mut |_| panic!("nobody reads it yet")).unwrap();
    let mut merge = morello_command(dir)
        .args(["db", "merge", a.to_str().unwrap(), b.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(merge.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(
        line.starts_with("waiting for a morello precompute that is filling this table to finish (lock ")
            && line.contains("b.mdb.precompute.lock"),
        "{line}"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(merge.try_wait().unwrap().is_none() && !out.exists(), "nothing is read or written meanwhile");
    drop(filling);
    assert!(merge.wait().unwrap().success());
    answers_without_solving(dir, &out, &["4x2x2", "2x2x4"]);
}

/// `morello bench` searches with --processors equal to its --threads (1 by default): `db stats
/// --target T --processors 1` names that table.
#[test]
fn db_stats_names_the_default_table_of_a_processor_count() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path();
    ok(dir, &["search", "matmul", "2x2x2", "--target", "x86-avx2", "--processors", "1", "-q"]);
    let stats = ok(dir, &["db", "stats", "--target", "x86-avx2", "--processors", "1"]).stdout;
    assert!(stats.contains("usable:      yes"), "{stats}");
    let run = morello(dir, &["db", "stats", "--target", "x86-avx2", "--processors", "3"]);
    assert!(run.code == 2 && run.stderr.contains("no table at"), "{}", run.stderr);
}
