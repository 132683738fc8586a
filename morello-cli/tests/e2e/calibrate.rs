//! End-to-end tests of `morello calibrate`: a quick calibration writes a target file that searches
//! load, with its own memo table. Timings are never asserted.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::path::Path;

use crate::common::{SCALAR_TARGET, have_compiler, host_runs_avx2, morello_in};

/// Runs the binary with `cache` as its cache directory.
fn morello(cache: &Path, args: &[&str]) -> (i32, String, String) {
    morello_in(cache, args, &[])
}

/// The quickest calibration: one sample per microbenchmark, one call each, a small memory set.
const QUICK: [&str; 6] = ["--samples", "1", "--min-sample-seconds", "0", "--memory-bytes", "4MiB"];

/// A temporary directory for a calibration, or `None` (the test is skipped, saying why) where
/// none can run: on a host without the built-in x86 targets' features or without a C compiler.
fn calibration_dir() -> Option<tempfile::TempDir> {
    (host_runs_avx2() && have_compiler()).then(|| tempfile::tempdir().unwrap())
}

#[test]
fn a_calibrated_target_file_searches_with_its_own_memo_table() {
    let Some(dir) = calibration_dir() else { return };
    let cache = dir.path().join("cache");
    let file = dir.path().join("here.toml");
    let file_arg = file.to_str().unwrap();
    let mut args = vec!["calibrate", "--target", "x86", "-o", file_arg];
    args.extend(QUICK);
    let (code, stdout, stderr) = morello(&cache, &args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "", "the file goes to -o");
    assert!(stderr.contains("wrote") && stderr.contains("constants:"), "{stderr}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("# morello target file"), "{text}");
    assert!(text.contains("# Measured ") && text.contains("BroadcastVecMultAdd.per_unit"), "{text}");
    assert!(text.contains("name = \"x86-avx"), "{text}");

    let (code, stdout, stderr) =
        morello(&cache, &["search", "matmul", "8x8x8", "--target", file_arg, "--no-db"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Matmul(1x8x8x8"), "{stdout}");

    // With the default table: the calibrated target and the built-in one get different files.
    for target in [file_arg, "x86"] {
        let (code, _, stderr) = morello(&cache, &["search", "matmul", "2x2x2", "--target", target, "-q"]);
        assert_eq!(code, 0, "{stderr}");
    }
    let mut tables: Vec<String> = std::fs::read_dir(cache.join("morello"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".mdb"))
        .collect();
    tables.sort();
    assert_eq!(tables.len(), 2, "{tables:?}");
    assert!(tables.iter().any(|t| t.contains("-calibrated-")), "{tables:?}");
}

#[test]
fn json_and_stdout_outputs() {
    let Some(dir) = calibration_dir() else { return };
    let file = dir.path().join("t.toml");
    let mut args = vec!["calibrate", "--target", "x86-avx2", "--name", "mine", "-q", "--json", "-o"];
    args.push(file.to_str().unwrap());
    args.extend(QUICK);
    let (code, stdout, stderr) = morello(dir.path(), &args);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["target"], "mine");
    assert!(v["units_per_second"].as_f64().is_some_and(|s| s > 0.0));
    assert!(v["measurements"].as_array().is_some_and(|m| m.len() > 20));
    assert!(v["constants"].as_array().unwrap().iter().any(|c| c["name"] == "GL.cost_per_line"));
    assert!(std::fs::read_to_string(&file).unwrap().contains("name = \"mine\""));

    // Without -o the file is printed.
    let mut args = vec!["calibrate", "--target", "x86-avx2", "-q"];
    args.extend(QUICK);
    let (code, stdout, stderr) = morello(dir.path(), &args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("# morello target file") && stdout.contains("[costs"), "{stdout}");
}

#[test]
fn bad_input_is_refused_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let scalar_only = dir.path().join("scalar.toml");
    std::fs::write(&scalar_only, SCALAR_TARGET).unwrap();
    for (args, message) in [
        (vec!["calibrate", "--samples", "0"], "invalid value '0' for '--samples <N>'"),
        (vec!["calibrate", "--memory-bytes", "lots"], "--memory-bytes"),
        (vec!["calibrate", "--memory-bytes", "1KiB"], "between 1 MiB and 16 GiB"),
        (vec!["calibrate", "--target", "no-such-target"], "unknown target"),
        (vec!["calibrate", "--json"], "--output"),
        (vec!["calibrate", "--name", " "], "--name"),
        (vec!["calibrate", "--cpu", "100000"], "--cpu 100000"),
        (vec!["calibrate", "--target", scalar_only.to_str().unwrap()], "no vector-register level"),
    ] {
        let (code, stdout, stderr) = morello(dir.path(), &args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stdout, "", "{args:?}");
    }
}
