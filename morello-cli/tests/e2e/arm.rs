//! The `arm-neon` target end to end: searched kernels cross-compiled and verified under
//! `qemu-aarch64` on a host that is not AArch64 (natively on one), timing refused under emulation,
//! and the apt command when the cross tools are missing.

use morello_codegen::Compiler;
use morello_core::target::Architecture;

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

/// The larger shapes: about a minute under qemu on 2 cores, too long for every CI run.
#[test]
#[ignore = "slow under qemu; run with `cargo test -p morello-cli --test e2e -- --ignored neon`"]
fn run_verifies_larger_searched_neon_kernels() {
    if !arm_tools() {
        return;
    }
    run_verifies_under_qemu(&[&["matmul", "100x300x77"], &["matmul", "256x256x256"]]);
}

/// `morello run --target arm-neon` on each spec verifies, and says it is emulating on a host that is
/// not AArch64.
fn run_verifies_under_qemu(specs: &[&[&str]]) {
    // One cache directory: the searches share their table, so the larger ones reuse the smaller
    // ones' sub-problems.
    let cache = tempfile::tempdir().expect("a temporary directory");
    for spec in specs {
        let args = [&["run"], *spec, &["--target", "arm-neon", "-q"]].concat();
        let (code, stdout, stderr) = morello_in(cache.path(), &args, &[]);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert!(stdout.contains("target:         arm-neon"), "{stdout}");
        assert!(stdout.ends_with("verified\n"), "{args:?}: {stdout}");
        if Architecture::host() != Some(Architecture::Aarch64) {
            assert!(stdout.contains("emulating aarch64 with `qemu-aarch64"), "{stdout}");
        }
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
