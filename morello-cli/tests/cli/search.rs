//! End-to-end tests of `morello search`.

use crate::common::{SCALAR_TARGET, morello, morello_ok};

#[test]
fn search_prints_the_tree_and_a_summary() {
    let (stdout, stderr) =
        morello_ok(&["search", "matmul", "4x4x4", "--dtype", "u32", "--target", "x86-avx2"]);
    assert!(stdout.starts_with("cost  GL"), "{stdout}");
    assert!(stdout.contains("kernel BroadcastVecMultAdd"), "{stdout}");
    assert!(stderr.contains("specs solved"), "{stderr}");
    let (code, _, stderr) =
        morello(&["search", "matmul", "4x4x4", "--dtype", "u32", "--target", "x86-avx2", "-q"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
}

#[test]
fn json_has_cost_target_impl_and_stats() {
    let (stdout, _) =
        morello_ok(&["search", "matmul", "8x8x8", "--target", "x86-avx2", "--emit", "json", "-q"]);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert!(v["cost"].as_u64().is_some_and(|c| c > 0));
    assert_eq!(v["target"], "x86-avx2");
    assert!(v["impl"]["node"].is_object());
    for key in ["specs_solved", "memo_hits", "seconds"] {
        assert!(v["stats"][key].is_number(), "{key}");
    }
}

#[test]
fn every_spec_form_searches() {
    for args in [
        vec!["search", "move", "8x8", "--from", "row-major", "--to", "col-major"],
        vec!["search", "zero", "16x16"],
        vec!["search", "conv", "1x2x5x5", "3x2x3x3"],
        vec!["search", "matmul", "3x5x7", "--batch", "2", "--accum", "--dtype", "i32"],
        vec!["search", "Matmul(1x2x2x2, f32 GL row-major, f32 GL col-major, f32 GL row-major)"],
        vec!["search", "matmul", "8x8x8", "--top-k", "3"],
        vec!["search", "matmul", "8x8x8", "--jobs", "1", "--memory", "L1=4KiB,VRF=8"],
    ] {
        let mut with_target = args.clone();
        with_target.extend(["--target", "x86-avx2", "-q"]);
        let (stdout, _) = morello_ok(&with_target);
        assert!(stdout.contains("kernel "), "{args:?}: {stdout}");
    }
}

#[test]
fn a_target_file_works() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.toml");
    std::fs::write(&path, SCALAR_TARGET).unwrap();
    let (stdout, _) = morello_ok(&["search", "matmul", "2x2x2", "--target", path.to_str().unwrap(), "-q"]);
    assert!(stdout.contains("HBM") && stdout.contains("kernel MultAdd"), "{stdout}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let cases: &[(&[&str], i32, &str)] = &[
        (&["search", "matmul", "0x4x4"], 2, "dimension 0 is zero"),
        (&["search", "matmul", "4x4"], 2, "must be MxKxN"),
        (&["search", "matmul", "4294967296x1x1"], 2, "above the limit of 2^31"),
        (&["search", "matmul", "4xax4"], 2, "is not a positive integer"),
        (&["search", "frobnicate", "4"], 2, "unknown spec `frobnicate`"),
        (&["search", "Matmul(1x2x2, f32 GL row-major)"], 2, "Matmul needs an iteration shape of rank 4"),
        (&["search", "matmul", "4x4x4", "--target", "sparc"], 2, "unknown target `sparc`"),
        (&["search", "matmul", "4x4x4", "--dtype", "f64"], 2, "unknown dtype `f64`"),
        (&["search", "matmul", "4x4x4", "--memory", "L9=1"], 2, "unknown level `L9`"),
        (&["search", "move", "4x4", "--to", "[0, 0]"], 2, "two Dynamic physical dims"),
        (&["search", "conv", "1x2x3x3", "1x3x2x2"], 2, "the image has 2 channels and the filters take 3"),
        (&["search", "conv", "1x3x3x2", "4x4x2x1", "--layout", "nhwc"], 2, "the filter spans 4 rows"),
        (
            &["search", "conv", "1x2x8x8", "1x2x3x3", "--stride", "2"],
            2,
            "the last 1 image rows are never read",
        ),
        (&["search", "conv", "1x2x8x8", "1x2x3x3", "--pad", "sideways"], 2, "valid or same"),
        (&["search", "conv", "1x2x8x8", "1x2x3x3", "--layout", "nwhc"], 2, "nchw or nhwc"),
        (&["search", "matmul", "4x4x4", "--stride", "2"], 2, "apply only to conv"),
        (&["search", "matmul", "4x4x4", "--jobs", "0"], 2, "invalid value '0' for '--jobs <N>'"),
        (
            &[
                "search",
                "MatmulAccum(1x1x1x8, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v8)",
                "--memory",
                "VRF=0",
            ],
            1,
            "no implementation of MatmulAccum(1x1x1x8",
        ),
    ];
    for (args, expected_code, message) in cases {
        let mut with_target: Vec<&str> = args.to_vec();
        if !args.contains(&"--target") {
            with_target.extend(["--target", "x86-avx2"]);
        }
        let (code, stdout, stderr) = morello(&with_target);
        assert_eq!(code, *expected_code, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn help_explains_the_arguments() {
    let (stdout, _) = morello_ok(&["search", "--help"]);
    for needle in [
        "--target",
        "--dtype",
        "--emit",
        "--jobs",
        "--memory",
        "--top-k",
        "Examples:",
        "Specs:",
        "conv IMAGE FILTERS",
        "--layout",
        "--pad",
        "--stride",
        "--dilation",
    ] {
        assert!(stdout.contains(needle), "{needle} missing");
    }
}

#[test]
fn processors_sets_what_parallel_loops_are_modelled_with() {
    let (two, _) = morello_ok(&["search", "matmul", "64x64x64", "--target", "x86-avx2", "--processors", "2"]);
    assert!(two.contains("parallel tile"), "{two}");
    let (one, _) = morello_ok(&["search", "matmul", "64x64x64", "--target", "x86-avx2", "--processors", "1"]);
    assert!(!one.contains("parallel tile"), "{one}");
    let (code, _, stderr) = morello(&["search", "matmul", "8x8x8", "--processors", "0"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("invalid value '0' for '--processors <N>'"), "{stderr}");
}

/// (The quick fallback after the limit has a second: a small spec, so that a busy machine running
/// a test build still finishes it.)
#[test]
fn a_time_limit_still_prints_an_implementation_and_says_it_may_not_be_optimal() {
    let args = ["search", "matmul", "8x8x8", "--target", "x86-avx2", "--no-db", "-q", "--time-limit", "1e-9"];
    let (stdout, stderr) = morello_ok(&args);
    assert!(stdout.contains("kernel "), "{stdout}");
    assert!(stderr.contains("time limit reached") && stderr.contains("may not be optimal"), "{stderr}");
}

/// `--jobs` beyond the CPUs this process may use is clamped to them, with a note: thousands of
/// threads made an 8^3 search take 20 s and a 32^3 one 600 s, deaf to SIGTERM meanwhile.
#[test]
fn many_jobs_are_clamped_to_the_cpus_with_a_note() {
    let start = std::time::Instant::now();
    let (stdout, stderr) =
        morello_ok(&["search", "matmul", "8x8x8", "--target", "x86-avx2", "--no-db", "--jobs", "10000"]);
    assert!(stdout.contains("kernel "), "{stdout}");
    assert!(stderr.contains("note: --jobs 10000 is more than the "), "{stderr}");
    assert!(start.elapsed().as_secs() < 60, "{:?}", start.elapsed());
}

/// `--time-limit` holds for a spec whose graph is wide (a rank-16 fill): the search ends within
/// the limit and a second for the quick fallback (and slack for a busy machine), with an
/// implementation or an error that says to give more time, never minutes later.
#[test]
fn a_time_limit_holds_for_a_rank_16_fill() {
    let shape = ["2"; 16].join("x");
    let start = std::time::Instant::now();
    let (code, stdout, stderr) =
        morello(&["search", "zero", &shape, "--target", "x86-avx2", "--no-db", "-q", "--time-limit", "1"]);
    let took = start.elapsed();
    assert!(took.as_secs() < 8, "took {took:?}: {stderr}");
    match code {
        0 => assert!(stdout.contains("kernel ") && stderr.contains("may not be optimal"), "{stdout}{stderr}"),
        1 => assert!(stderr.contains("give a longer --time-limit"), "{stderr}"),
        _ => panic!("status {code}: {stderr}"),
    }
}
