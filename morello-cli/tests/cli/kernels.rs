//! End-to-end tests of `morello kernels`.

use std::process::Command;

fn morello(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_morello")).args(args).output().expect("morello runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn lists_each_kernel_of_the_target_with_its_definition() {
    let (code, avx512, stderr) = morello(&["kernels", "--target", "x86-avx512"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        avx512.starts_with("Kernels of target x86-avx512, in the order the search tries them"),
        "{avx512}"
    );
    let bf16 =
        "\nDotProductBf16 (needs avx512f, avx512bf16)\n  `out += Σ_k lhs[k] * rhs[k]` with bf16 inputs";
    assert!(avx512.contains(bf16), "{avx512}");
    let costs =
        "\n  cost: fixed + per_unit * K / 32 + Σ move_cost(operand)\n  units: K / 32; fixed 4, per_unit 1\n";
    assert!(avx512.contains(costs), "{avx512}");
    let per_dtype = "\n  units: output vectors; fixed 0, per_unit 2; on u32: 1, 4; on i32: 1, 4\n";
    assert!(avx512.contains(per_dtype), "{avx512}");
    let (code, avx2, stderr) = morello(&["kernels", "--target", "x86-avx2"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!avx2.contains("DotProductBf16"), "{avx2}");
    // The search's order: the first kernel listed is the catalogue's first.
    let first = "target's):\n\nMultAdd\n  `out += lhs * rhs` on single scalars.\n  cost: fixed + Σ move_cost(operand)\n";
    assert!(avx2.contains(first), "{avx2}");
}

#[test]
fn an_unknown_target_is_bad_input() {
    let (code, stdout, stderr) = morello(&["kernels", "--target", "no-such-target"]);
    assert_eq!(code, 2, "{stdout}");
    assert!(stderr.contains("unknown target `no-such-target`"), "{stderr}");
}

#[test]
fn a_target_printed_as_a_file_reads_back_as_the_same_target() {
    let dir = tempfile::tempdir().unwrap();
    let (code, file, stderr) = morello(&["kernels", "--target", "x86-avx512", "--as-file"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(file.starts_with("name = \"x86-avx512\"\n"), "{file}");
    let path = dir.path().join("avx512.toml");
    std::fs::write(&path, &file).unwrap();
    let path = path.to_str().unwrap();
    // The same listing and, printed again, the same file.
    assert_eq!(morello(&["kernels", "--target", path]).1, morello(&["kernels", "--target", "x86-avx512"]).1);
    assert_eq!(morello(&["kernels", "--target", path, "--as-file"]).1, file);
    // And the same search: its cost, its tree.
    let search = |target: &str| {
        let (code, out, err) = morello(&[
            "search",
            "matmul",
            "16x16x16",
            "--target",
            target,
            "--no-db",
            "--processors",
            "1",
            "-q",
        ]);
        assert_eq!(code, 0, "{err}");
        out
    };
    assert_eq!(search(path), search("x86-avx512"));
}
