//! End-to-end tests of `morello run` and `morello search --emit c`.

use crate::common::{self, have_compiler, morello, skip_unless};

#[test]
fn run_verifies_and_prints_json() {
    if !have_compiler() {
        return;
    }
    let (code, stdout, stderr) =
        morello(&["run", "matmul", "3x2x4", "--dtype", "u32", "--target", "x86-avx2", "--json", "-q"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(v["verified"], true);
    assert_eq!(v["max_abs_error"], 0.0);
    assert_eq!(v["elements"], 12);
    assert_eq!(v["reduction_length"], 2);
    assert!(v["mismatch"].is_null());
    assert_eq!(v["spec"], "Matmul(1x3x2x4, u32 GL row-major, u32 GL row-major, u32 GL row-major)");
}

#[test]
fn a_matmul_padded_to_whole_vectors_compiles_and_verifies() {
    if !have_compiler() {
        return;
    }
    // 21 columns are padded to 24 (three AVX2 vectors) in L2 buffers for one thread; the kernel is
    // checked against the reference like every other.
    let args = ["matmul", "16x16x21", "--target", "x86-avx2", "--processors", "1", "--no-db"];
    let (code, stdout, stderr) = morello(&[&["search"], &args[..]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("block with 1x16x24 f32 L2 row-major, 1x16x24 f32 L2 row-major"), "{stdout}");
    let (code, stdout, stderr) = morello(&[&["run"], &args[..], &["-q"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.ends_with("verified\n"), "{stdout}");
}

/// Whether this machine runs `x86-avx512`'s kernels (else says the run is skipped).
fn host_runs_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    let runs = std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vl");
    #[cfg(not(target_arch = "x86_64"))]
    let runs = false;
    skip_unless(runs, "this machine lacks AVX-512 (F, BW, VL) to run the kernel")
}

#[test]
fn an_l1_packed_panel_with_its_first_k_chunk_peeled_compiles_and_verifies() {
    if !have_compiler() {
        return;
    }
    // x86-avx512 with a 48 KiB 12-way L1 and a 2 MiB L2 (an Intel Xeon's), L2's fill at 8 (strided
    // 12) instead of 7 (at 7 the rhs rows stream from L2) and a broadcast's `fixed` at 1 instead of
    // 0: 128 x 64 panels of the 256-wide rhs are packed into L1, and the first 128 of k is a matmul
    // of its own.
    let (code, file, stderr) = morello(&["kernels", "--target", "x86-avx512", "--as-file"]);
    assert_eq!(code, 0, "{stderr}");
    let file = file
        .replace("capacity = \"32KiB\"", "capacity = \"48KiB\"")
        .replace("ways = 8", "ways = 12")
        .replace("capacity = \"1MiB\"", "capacity = \"2MiB\"")
        .replace("sets = 1024", "sets = 2048")
        .replace("fill_cost_per_line = 7", "fill_cost_per_line = 8")
        .replace("strided_fill_cost_per_line = 11", "strided_fill_cost_per_line = 12")
        .replace(
            "[costs.kernels.BroadcastVecMultAdd]\nfixed = 0",
            "[costs.kernels.BroadcastVecMultAdd]\nfixed = 1",
        );
    assert!(file.contains("fill_cost_per_line = 8") && file.contains("strided_fill_cost_per_line = 12"));
    assert!(file.contains("[costs.kernels.BroadcastVecMultAdd]\nfixed = 1"));
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("xeon.toml");
    std::fs::write(&path, file).expect("target file");
    let target = path.to_string_lossy().into_owned();
    let args = ["matmul", "128x256x256", "--target", &target, "--processors", "1", "--no-db"];
    let (code, stdout, stderr) = morello(&[&["search"], &args[..]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("[at 0,0,0; 0,0,0; 0,0,0]"), "{stdout}");
    assert!(stdout.contains("move operand 1 to f32 L1 [2, 1, 2 p(32)]"), "{stdout}");
    if !host_runs_avx512() {
        return;
    }
    let (code, stdout, stderr) = morello(&[&["run"], &args[..], &["-q"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.ends_with("verified\n"), "{stdout}");
}

#[test]
fn run_prints_verified_and_keeps_its_files() {
    if !have_compiler() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let keep = dir.path().join("kept");
    let keep_text = keep.to_string_lossy().into_owned();
    let (code, stdout, stderr) = morello(&[
        "run",
        "move",
        "4x8",
        "--from",
        "row-major",
        "--to",
        "col-major",
        "--keep",
        &keep_text,
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.ends_with("verified\n"), "{stdout}");
    assert!(stdout.contains("max abs error:  0"), "{stdout}");
    for file in ["kernel.c", "verify.c", "program"] {
        assert!(keep.join(file).exists(), "{file} was not kept");
    }
    let kernel = std::fs::read_to_string(keep.join("kernel.c")).expect("kernel.c");
    assert!(kernel.contains("void kernel(const float *restrict src, float *restrict dst)"), "{kernel}");
}

#[test]
fn search_emits_c_with_or_without_a_harness() {
    let (code, stdout, stderr) =
        morello(&["search", "zero", "8x8", "--target", "x86-avx2", "--emit", "c", "-q"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("#include <immintrin.h>"), "{stdout}");
    assert!(stdout.contains("void kernel(float *restrict out) {"), "{stdout}");
    assert!(!stdout.contains("int main"), "{stdout}");
    for harness in ["verify", "bench"] {
        let (code, stdout, stderr) = morello(&[
            "search",
            "zero",
            "8x8",
            "--target",
            "x86-avx2",
            "--emit",
            "c",
            "--harness",
            harness,
            "-q",
        ]);
        assert_eq!(code, 0, "{stderr}");
        assert!(stdout.contains("int main(int argc, char **argv)"), "{harness}: {stdout}");
        assert!(stdout.contains("void kernel(float *restrict out) {"), "{harness}: {stdout}");
    }
    let (code, _, stderr) = morello(&["search", "zero", "8x8", "--emit", "json", "--harness", "bench", "-q"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--harness needs --emit c"), "{stderr}");
}

#[test]
fn run_rejects_bad_specs() {
    let (code, _, stderr) = morello(&["run", "matmul", "2x2"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("MxKxN"), "{stderr}");
}

#[test]
fn a_compiler_without_openmp_runs_parallel_loops_serially_with_a_note() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(cc) = common::compiler_without_openmp(dir.path()) else { return };
    let args = ["run", "zero", "256x256", "--target", "x86-avx2", "--processors", "2"];
    let (code, stdout, stderr) = common::morello_env(&args, &[("CC", &cc)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.ends_with("verified\n"), "{stdout}");
    let notes: Vec<&str> = stderr.lines().filter(|l| l.contains("cannot build OpenMP programs")).collect();
    assert_eq!(notes.len(), 1, "one note: {stderr}");
    assert!(notes[0].starts_with("note: ") && notes[0].contains("cannot find -lomp"), "{stderr}");
    assert!(notes[0].contains("run on one thread"), "{stderr}");
}

#[test]
fn a_hand_schedule_runs_and_verifies() {
    if !have_compiler() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("hand.schedule");
    let text = "to_accum\nsplit 8\ntile_out 1x6x16   # 13 = 2 x 6 + 1: the last row is synthesized\nmove_to rhs L2\n";
    std::fs::write(&path, text).expect("the schedule file is written");
    let args = ["run", "matmul", "13x16x16", "--target", "x86-avx2", "--processors", "1", "--no-db", "-q"];
    let (code, stdout, stderr) =
        morello(&[&args[..], &["--schedule", path.to_str().expect("a temporary path is UTF-8")]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.ends_with("verified\n"), "{stdout}");
}
