//! End-to-end tests of `morello compile`: every JAX fixture (the indexing ones and the compile
//! ones at their small sizes, as XLA received them and as it optimised them) compiles and
//! verifies; `--list-specs` feeds `precompute`; bad modules are refused with the instruction.

use std::path::{Path, PathBuf};

use crate::common::{have_compiler, host_runs_avx2, morello, morello_in};

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["morello-xla/fixtures/jax", "morello-compile/fixtures/jax"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("the fixtures") {
            let path = entry.expect("an entry").path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let small = dir.starts_with("morello-xla") || name.contains("_small");
            if name.ends_with(".hlo") && small {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Runs `morello compile FIXTURE --target x86-avx2 --processors 1 ARGS...` in `dir`, for a
/// fixture named from the repository root (or an absolute path); panics unless it succeeds, and
/// returns its stdout.
fn compile_fixture(dir: &Path, fixture: &str, args: &[&str]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(fixture);
    let mut all =
        vec!["compile", path.to_str().expect("a path"), "--target", "x86-avx2", "--processors", "1"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = morello_in(dir, &all, &[]);
    assert_eq!(code, 0, "{fixture}: {stderr}{stdout}");
    stdout
}

#[test]
fn every_fixture_compiles_and_verifies() {
    if !have_compiler() || !host_runs_avx2() {
        return;
    }
    let files = fixtures();
    assert_eq!(files.len(), 20, "{files:?}");
    let work = tempfile::tempdir().expect("a temporary directory");
    let table = work.path().join("table.mdb");
    for file in &files {
        let (file, dir) = (file.to_str().expect("a path"), work.path().to_str().expect("a path"));
        let stdout = compile_fixture(
            work.path(),
            file,
            &["--db", table.to_str().expect("a path"), "-o", dir, "--verify", "-q"],
        );
        assert!(stdout.ends_with("verified\n"), "{file}: {stdout}");
    }
}

#[test]
fn the_report_names_what_is_searched_and_what_runs_as_loops() {
    if !have_compiler() || !host_runs_avx2() {
        return;
    }
    let out = tempfile::tempdir().expect("a temporary directory");
    let stdout = compile_fixture(
        out.path(),
        "morello-xla/fixtures/jax/attention.opt.hlo",
        &["--no-db", "-o", out.path().to_str().expect("a path"), "--json", "-q"],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(v["function"], "jit_attention");
    let searched: Vec<&str> =
        v["searched"].as_array().expect("a list").iter().map(|s| s["spec"].as_str().unwrap_or("")).collect();
    assert_eq!(
        searched,
        [
            "Matmul(1x3x2x4, f32 GL row-major, f32 GL col-major, f32 GL row-major)",
            "Softmax(3x4, f32 GL row-major, f32 GL row-major)",
            "Matmul(1x3x4x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
        ],
        "q k^T reads k in place (col-major), the softmax is one kernel"
    );
    let loops = v["loops"].as_array().expect("a list");
    assert_eq!(loops.len(), 1, "{loops:?}");
    assert!(loops[0]["reason"].as_str().unwrap_or("").contains("elementwise `multiply` has no spec"));
    let source = std::fs::read_to_string(out.path().join("jit_attention.c")).expect("the C file");
    assert!(source.contains("void jit_attention(const float *restrict q_1, const float *restrict k_1, const float *restrict v_1, float *restrict result)"));
    let header = std::fs::read_to_string(out.path().join("jit_attention.h")).expect("the header");
    assert!(header.contains("#define JIT_ATTENTION_ARENA_BYTES"));
}

/// The output of `morello compile FILE --target x86-avx2 --processors 1 --list-specs` for a
/// fixture named from the repository root; panics unless it succeeds.
fn list_specs(fixture: &str) -> String {
    let work = tempfile::tempdir().expect("a temporary directory");
    compile_fixture(work.path(), fixture, &["--list-specs"])
}

#[test]
fn list_specs_feeds_precompute() {
    let listed = list_specs("morello-compile/fixtures/jax/bert_ffn.hlo");
    let specs: Vec<&str> = listed.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        specs,
        [
            "MatmulBiasGelu(1x128x768x3072, f32 GL row-major, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
            "MatmulBias(1x128x3072x768, f32 GL row-major, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
        ]
    );
    // Precompute the small module's specs (the full-size ones take minutes).
    let work = tempfile::tempdir().expect("a temporary directory");
    let file = work.path().join("specs.txt");
    std::fs::write(&file, list_specs("morello-compile/fixtures/jax/bert_ffn_small.hlo")).expect("written");
    let table = work.path().join("t.mdb");
    let (code, _, stderr) = morello_in(
        work.path(),
        &[
            "precompute",
            "--specs",
            file.to_str().expect("a path"),
            "--target",
            "x86-avx2",
            "--processors",
            "1",
            "--db",
            table.to_str().expect("a path"),
            "-q",
        ],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn bad_modules_are_refused_naming_the_instruction() {
    let work = tempfile::tempdir().expect("a temporary directory");
    for (text, message) in [
        (
            "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT s = f32[2] frobnicate(p)\n}",
            "unknown opcode `frobnicate`",
        ),
        (
            "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT s = f32[2] sort(p), dimensions={0}\n}",
            "instruction `s` in computation `e`: `sort` is not compiled",
        ),
        (
            "ENTRY e {\n  a = f32[2] parameter(0)\n  b = s32[2] parameter(1)\n  ROOT s = f32[2] add(a, b)\n}",
            "should have element type f32, but has s32",
        ),
    ] {
        let file = work.path().join("bad.hlo");
        std::fs::write(&file, text).expect("written");
        let (code, _, stderr) = morello(&[
            "compile",
            file.to_str().expect("a path"),
            "--target",
            "x86-avx2",
            "-o",
            work.path().to_str().expect("a path"),
            "--no-db",
        ]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(message), "{stderr}");
    }
    let (code, _, stderr) = morello(&["compile", "/nonexistent.hlo", "--no-db"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot read `/nonexistent.hlo`"), "{stderr}");
}

/// `--bench` times the compiled module (and XLA's when `$MORELLO_PYTHON` has jax; otherwise the
/// baseline is skipped with its reason), and says where a call's time goes, step by step.
#[test]
#[allow(clippy::print_stdout, reason = "the reason the baseline is skipped")]
fn bench_times_the_module_beside_xla_and_breaks_the_call_down() {
    if !have_compiler() || !host_runs_avx2() {
        return;
    }
    let out = tempfile::tempdir().expect("a temporary directory");
    let args = ["--no-db", "-o", out.path().to_str().expect("a path"), "--bench", "--baseline", "xla"];
    let timing = ["--samples", "2", "--min-sample-seconds", "0.005", "--json", "-q"];
    let stdout = compile_fixture(
        out.path(),
        "morello-compile/fixtures/jax/bert_ffn_small.hlo",
        &[&args[..], &timing].concat(),
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0]["name"], "morello");
    let ours = results[0]["seconds_per_call"].as_f64().expect("a median");
    assert!(ours > 0.0 && ours < 0.1, "{ours}");
    assert_eq!(results[0]["samples"].as_array().map(Vec::len), Some(2));
    assert_eq!(results[1]["name"], "xla");
    match results[1]["seconds_per_call"].as_f64() {
        Some(theirs) => assert!(theirs > 0.0 && theirs < 0.1, "{theirs}"),
        None => {
            let reason = results[1]["skipped"].as_str().expect("a reason");
            assert!(reason.contains("jax") || reason.contains("python"), "{reason}");
            println!("xla skipped: {reason}");
        }
    }
    let profile = &v["profile"];
    let steps = profile["steps"].as_array().expect("steps");
    let kinds: Vec<&str> = steps.iter().map(|s| s["what"].as_str().unwrap_or("")).collect();
    assert!(kinds.iter().filter(|k| k.starts_with("searched")).count() >= 2, "{kinds:?}");
    let total = profile["seconds_per_call"].as_f64().expect("a total");
    let sum: f64 = steps.iter().map(|s| s["seconds_per_call"].as_f64().unwrap_or(-1.0)).sum();
    assert!(steps.iter().all(|s| s["seconds_per_call"].as_f64().is_some_and(|t| t >= 0.0)));
    assert!(sum > 0.0 && sum <= total * 1.01, "steps {sum} of a call {total}");
}
