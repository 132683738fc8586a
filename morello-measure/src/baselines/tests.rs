//! Baseline tests: every available baseline agrees with a Rust reference matmul; missing ones
//! are skipped with a reason that says how to install them.

use super::*;
use crate::bench::{BenchConfig, BenchRequest, PeakProbe, run_bench};
use morello_codegen::harness::{Buffer, VerifyInputs, run_verify, verify_program_source};
use morello_codegen::test_support::{compiler, strict};

/// `out = lhs * rhs`, row-major, accumulated in f64.
fn reference_f32(problem: &MatmulProblem, lhs: &[f32], rhs: &[f32]) -> Vec<f64> {
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let mut out = vec![0.0f64; m * n];
    for i in 0..m {
        for p in 0..k {
            for j in 0..n {
                out[i * n + j] += f64::from(lhs[i * k + p]) * f64::from(rhs[p * n + j]);
            }
        }
    }
    out
}

/// Checks `actual` against the reference with a tolerance that scales with the reduction length:
/// `|actual - exact| <= K * 2^-23 * sum_k |lhs * rhs|` (inputs are multiples of 1/16 below 2 in
/// magnitude, so products are exact and only the sums round).
fn assert_close(problem: &MatmulProblem, lhs: &[f32], rhs: &[f32], actual: &[f32], label: &str) {
    let exact = reference_f32(problem, lhs, rhs);
    let abs_lhs: Vec<f32> = lhs.iter().map(|x| x.abs()).collect();
    let abs_rhs: Vec<f32> = rhs.iter().map(|x| x.abs()).collect();
    let magnitude = reference_f32(problem, &abs_lhs, &abs_rhs);
    assert_eq!(actual.len(), exact.len(), "{label}");
    for (index, ((a, e), mag)) in actual.iter().zip(&exact).zip(&magnitude).enumerate() {
        let tolerance = problem.k as f64 * f64::from(f32::EPSILON) * mag;
        assert!((f64::from(*a) - e).abs() <= tolerance, "{label}: out[{index}] = {a}, expected {e}");
    }
}

fn seeded_inputs(problem: &MatmulProblem, seed: u64) -> (Buffer, Buffer) {
    let lhs = Buffer::from_seed(problem.dtype, problem.m * problem.k, seed, 0);
    let rhs = Buffer::from_seed(problem.dtype, problem.k * problem.n, seed, 1);
    (lhs, rhs)
}

/// Runs a baseline once on seeded inputs and returns (lhs, rhs, out).
fn run_once(compiler: &Compiler, problem: &MatmulProblem, candidate: Candidate) -> (Buffer, Buffer, Buffer) {
    let seed = 11;
    match candidate {
        Candidate::C(c) => {
            let signature = problem.signature(c.entry.function.clone());
            let main = verify_program_source(&signature, "").expect("valid");
            let mut program =
                CProgram { units: vec![SourceUnit::new("verify_main", main)], link_args: c.link_args };
            program.units.extend(c.unit);
            let build = compiler.build(&program, &strict()).expect("baselines compile warning-free");
            let run = run_verify(&build, &signature, &VerifyInputs::Seed(seed)).expect("runs");
            let mut params = run.params.into_iter();
            let mut next = || params.next().expect("three parameters");
            (next(), next(), next())
        }
        Candidate::Rust(r) => {
            let (lhs, rhs) = seeded_inputs(problem, seed);
            let out = Buffer::zeros(problem.dtype, problem.m * problem.n);
            let mut kernel = (r.prepare)(&[lhs.clone(), rhs.clone(), out]).expect("prepares");
            kernel.run();
            let out = kernel.written().pop().expect("one written parameter");
            (lhs, rhs, out)
        }
    }
}

#[test]
fn every_available_f32_baseline_agrees_with_the_reference() {
    let Some(compiler) = compiler() else { return };
    for problem in [MatmulProblem::f32(5, 7, 3)] {
        let set = matmul_baselines(&compiler, &problem, &BaselineKind::ALL, 1);
        for skipped in &set.skipped {
            println!("skipped: {}", skipped.reason);
        }
        assert!(set.candidates.iter().any(|c| c.label() == "naive"));
        assert!(set.candidates.iter().any(|c| c.label() == "gemm"));
        for candidate in set.candidates {
            let label = candidate.label().to_string();
            let (lhs, rhs, out) = run_once(&compiler, &problem, candidate);
            let (lhs, rhs, out) =
                (lhs.as_f32().expect("f32"), rhs.as_f32().expect("f32"), out.as_f32().expect("f32"));
            assert_close(&problem, lhs, rhs, out, &label);
        }
    }
}

#[test]
fn the_naive_u32_baseline_wraps_like_rust() {
    let Some(compiler) = compiler() else { return };
    let problem = MatmulProblem { m: 3, k: 4, n: 5, dtype: CType::U32 };
    let set = matmul_baselines(&compiler, &problem, &BaselineKind::ALL, 1);
    assert_eq!(set.candidates.len(), 1);
    assert_eq!(set.skipped.len(), 4);
    assert!(set.skipped.iter().all(|s| s.reason.contains("no u32 matmul")), "{:?}", set.skipped);
    let candidate = set.candidates.into_iter().next().expect("naive");
    let (lhs, rhs, out) = run_once(&compiler, &problem, candidate);
    let (lhs, rhs, out) =
        (lhs.as_u32().expect("u32"), rhs.as_u32().expect("u32"), out.as_u32().expect("u32"));
    for i in 0..3 {
        for j in 0..5 {
            let expected =
                (0..4).fold(0u32, |acc, p| acc.wrapping_add(lhs[i * 4 + p].wrapping_mul(rhs[p * 5 + j])));
            assert_eq!(out[i * 5 + j], expected);
        }
    }
}

#[test]
fn baselines_time_side_by_side() {
    let Some(compiler) = compiler() else { return };
    let problem = MatmulProblem::f32(8, 8, 8);
    let set = matmul_baselines(&compiler, &problem, &BaselineKind::ALL, 1);
    let labels: Vec<String> = set.candidates.iter().map(|c| c.label().to_string()).collect();
    let request = BenchRequest {
        signature: problem.signature("unused_kernel"),
        kernel_source: String::new(),
        options: strict(),
        candidates: set.candidates,
        work: problem.work(),
    };
    let config = BenchConfig {
        min_sample_seconds: 0.002,
        samples: 2,
        peak: PeakProbe::Skip,
        ..BenchConfig::default()
    };
    let report = run_bench(&compiler, request, &config).expect("runs");
    let reported: Vec<&str> = report.results.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(reported, labels);
    for result in &report.results {
        let gflops = result.gflops.expect("matmul work is known");
        assert!(gflops > 0.01 && gflops < 10_000.0, "{result:?}");
    }
}

#[test]
fn names_parse_and_multithreading_is_honest() {
    for kind in BaselineKind::ALL {
        assert_eq!(kind.name().parse::<BaselineKind>(), Ok(kind));
    }
    assert!("mkl".parse::<BaselineKind>().is_err());
    let Some(compiler) = compiler() else { return };
    let problem = MatmulProblem::f32(4, 4, 4);
    let reason = match matmul_baseline(&compiler, &problem, BaselineKind::Libxsmm, 2) {
        Err(reason) => reason,
        Ok(_) => panic!("libxsmm is single-threaded"),
    };
    assert_eq!(reason, "libxsmm: single-threaded only, and 2 threads were requested");
    assert_eq!(problem.work().flops, Some(128.0));
}

#[test]
fn probe_failures_say_how_to_install() {
    let gcc_missing_header = "/tmp/x/baseline_openblas.c:2:10: fatal error: cblas.h: No such file or directory\n\
                              2 | #include <cblas.h>\ncompilation terminated.\n";
    assert_eq!(first_error_line(gcc_missing_header), "cblas.h: No such file or directory");
    let missing_library =
        "/usr/bin/ld: cannot find -lxsmm: No such file or directory\ncollect2: error: ld returned 1\n";
    assert_eq!(
        first_error_line(missing_library),
        "/usr/bin/ld: cannot find -lxsmm: No such file or directory"
    );
    // A stand-in compiler that answers `--version` and fails every compile like a machine
    // without the library's header.
    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join("fakecc");
    let text = "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'fakecc 1.0'; exit 0; fi\n\
                echo 'x.c:1:10: fatal error: blis.h: No such file or directory' >&2\nexit 1\n";
    std::fs::write(&script, text).expect("writes");
    let made_executable = std::process::Command::new("chmod").arg("+x").arg(&script).status();
    let Ok(failing) = Compiler::from_command(&script.to_string_lossy()) else {
        println!("skipped: cannot run a shell script as a stand-in compiler ({made_executable:?})");
        return;
    };
    let reason = probe_uncached(&failing, BaselineKind::Blis).expect_err("nothing compiles");
    assert_eq!(
        reason,
        "blis: not installed (blis.h: No such file or directory); install it with `apt-get install libblis-dev`"
    );
}
