//! The `arm-neon` target end to end: searched kernels cross-compiled and verified under
//! `qemu-aarch64` on a host that is not AArch64 (natively on one), timing refused under emulation,
//! and the apt command when the cross tools are missing.

use std::path::Path;

use morello_codegen::Compiler;
use morello_core::kernels::KernelKind;
use morello_core::target::{Architecture, Target};

use crate::common::{morello_env, morello_in};

/// Whether `arm-neon` kernels can be built and run here (else says why the test is skipped).
#[allow(clippy::print_stdout, reason = "the reason a test is skipped")]
fn arm_tools() -> bool {
    if Architecture::host() == Some(Architecture::Aarch64) {
        return true;
    }
    match Compiler::cross(Architecture::Aarch64) {
        Ok(_) => true,
        Err(error) => {
            println!("skipped: {error}");
            false
        }
    }
}

#[test]
fn run_verifies_searched_neon_kernels() {
    if !arm_tools() {
        return;
    }
    let specs: [&[&str]; 7] = [
        &["matmul", "8x8x8"],
        &["matmul", "64x64x64"],
        &["matmul", "13x35x21"],
        &["matmul", "64x64x64", "--epilogue", "bias,gelu"],
        &["softmax", "7x33"],
        &["softmax", "32x1024"],
        &["conv", "1x16x16x8", "3x3x8x16", "--layout", "nhwc", "--stride", "2", "--pad", "same"],
    ];
    run_verifies_under_qemu(&specs);
}

/// The larger shapes (f32, and u8s8s32 and s8s8s32 at 100x300x77): about a minute under
/// qemu on 2 cores, too long for every CI run.
#[test]
#[ignore = "slow under qemu; run with `cargo test -p morello-cli --test e2e -- --ignored neon`"]
fn run_verifies_larger_searched_neon_kernels() {
    if !arm_tools() {
        return;
    }
    run_verifies_under_qemu(&[
        &["matmul", "100x300x77"],
        &["matmul", "256x256x256"],
        &["matmul", "100x300x77", "--dtype", "u8s8s32"],
        &["matmul", "100x300x77", "--dtype", "s8s8s32"],
    ]);
}

/// `morello run --target arm-neon` on each spec verifies, and says it is emulating on a host that is
/// not AArch64.
fn run_verifies_under_qemu(specs: &[&[&str]]) {
    // One cache directory: the searches share their table, so the larger ones reuse the smaller
    // ones' sub-problems.
    let cache = tempfile::tempdir().expect("a temporary directory");
    for spec in specs {
        let stdout = run_under_qemu(cache.path(), "arm-neon", spec);
        assert!(stdout.contains("target:         arm-neon"), "{stdout}");
    }
}

/// `morello run --target TARGET SPEC` verifies (under qemu on a host that is not AArch64, and says
/// so); its output.
fn run_under_qemu(cache: &Path, target: &str, spec: &[&str]) -> String {
    let args = [&["run"], spec, &["--target", target, "-q"]].concat();
    let (code, stdout, stderr) = morello_in(cache, &args, &[]);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    assert!(stdout.ends_with("verified\n"), "{args:?}: {stdout}");
    if Architecture::host() != Some(Architecture::Aarch64) {
        assert!(stdout.contains("emulating aarch64 with `qemu-aarch64"), "{stdout}");
    }
    stdout
}

/// The kernels of the best implementation of `spec` on `target` (`morello search`, reusing the
/// table `run` left in `cache`).
fn searched_kernels(cache: &Path, target: &str, spec: &[&str]) -> String {
    let args = [&["search"], spec, &["--target", target, "-q"]].concat();
    let (code, stdout, stderr) = morello_in(cache, &args, &[]);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    stdout
        .lines()
        .filter_map(|line| line.split_once("kernel ").map(|(_, k)| k))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Quantized matmuls and a conv on `arm-neon` under qemu, exact (max abs error 0): the dot-product
/// kernels (`BroadcastSdotU8` for u8 activations, `BroadcastSdot` for i8) on the `rhs` the search
/// packs four values of `k` deep, and the scalar path where `k` is not a multiple of 4 and for
/// the conv.
#[test]
fn run_verifies_int8_under_qemu() {
    if !arm_tools() {
        return;
    }
    let cache = tempfile::tempdir().expect("a temporary directory");
    for (spec, kernel) in [
        (&["matmul", "64x64x64", "--dtype", "u8s8s32"][..], Some("BroadcastSdotU8")),
        (&["matmul", "64x64x64", "--dtype", "s8s8s32"], Some("BroadcastSdot")),
        (&["matmul", "9x35x12", "--dtype", "u8s8s32"], None),
        (&["conv", "1x6x6x8", "3x3x8x8", "--layout", "nhwc", "--dtype", "u8s8s32"], None),
    ] {
        let stdout = run_under_qemu(cache.path(), "arm-neon", spec);
        assert!(stdout.contains("max abs error:  0 ("), "{spec:?}: {stdout}");
        if let Some(kernel) = kernel {
            let kernels = searched_kernels(cache.path(), "arm-neon", spec);
            assert!(kernels.lines().any(|k| k.starts_with(&format!("{kernel} "))), "{spec:?}: {kernels}");
        }
    }
}

/// A NEON core without the dot-product extension (ARMv8.0, such as Cortex-A72): `arm-neon`'s
/// description without `dotprod` and its two kernels runs int8 matmuls exactly on the scalar path,
/// compiled without `+dotprod`.
#[test]
fn int8_without_dot_products_falls_back_exactly() {
    if !arm_tools() {
        return;
    }
    let mut description = Target::builtin("arm-neon", 1).expect("built-in").description_value();
    description.name = "arm-neon-v8".into();
    description.isa.retain(|f| f != "dotprod");
    description.kernels.retain(|k| !matches!(k, KernelKind::BroadcastSdot | KernelKind::BroadcastSdotU8));
    let kernels = description.kernels.clone();
    description.costs.kernels.retain(|k, _| kernels.contains(k));
    let cache = tempfile::tempdir().expect("a temporary directory");
    let file = cache.path().join("arm-neon-v8.json");
    std::fs::write(&file, serde_json::to_string(&description).expect("serialises")).expect("writes");
    let file = file.to_str().expect("a UTF-8 path");
    for dtypes in ["u8s8s32", "s8s8s32"] {
        let spec = ["matmul", "16x32x16", "--dtype", dtypes];
        let stdout = run_under_qemu(cache.path(), file, &spec);
        assert!(stdout.contains("max abs error:  0 ("), "{stdout}");
        let kernels = searched_kernels(cache.path(), file, &spec);
        assert!(!kernels.contains("Sdot") && kernels.contains("MultAdd"), "{kernels}");
    }
}

#[test]
fn timing_an_emulated_target_is_refused() {
    if Architecture::host() == Some(Architecture::Aarch64) {
        return;
    }
    for command in
        [&["bench", "matmul", "8x8x8"][..], &["calibrate"], &["bench-suite", "--sizes", "8", "--no-write"]]
    {
        let args = [command, &["--target", "arm-neon"]].concat();
        let (code, _, stderr) = morello_env(&args, &[]);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("emulated time means nothing"), "{stderr}");
    }
}

#[test]
fn missing_cross_tools_name_the_apt_command() {
    if Architecture::host() == Some(Architecture::Aarch64) {
        return;
    }
    let (code, _, stderr) = morello_env(
        &["run", "matmul", "2x2x2", "--target", "arm-neon", "--no-db", "-q"],
        &[("MORELLO_AARCH64_CC", "/nonexistent/aarch64-cc")],
    );
    assert_ne!(code, 0);
    assert!(
        stderr.contains("sudo apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"),
        "{stderr}"
    );
}
