//! Baseline tests: every available baseline agrees with the f64 reference on each kind of
//! problem (a baseline that disagrees would be skipped, and these tests fail on any such skip);
//! a wrong baseline is caught; missing ones are skipped with a reason that says how to install
//! them.

use super::*;
use crate::bench::{BenchConfig, BenchRequest, PeakProbe, run_bench};
use morello_codegen::harness::Buffer;
use morello_codegen::test_support::{compiler, strict};

/// The baselines of `problem`, asserting that none disagreed with the reference or failed to
/// build, and that `required` ones were offered. Prints the skipped ones and the notes.
fn checked(compiler: &Compiler, problem: &Problem, required: &[&str]) -> BaselineSet {
    let set = baselines(
        compiler,
        problem,
        &BaselineKind::ALL,
        &BaselineOptions { threads: 1, seed: 11, ..BaselineOptions::default() },
    );
    for skipped in &set.skipped {
        println!("skipped: {}", skipped.reason);
        for wrong in ["disagrees", "does not build", "failed on", "no reference"] {
            assert!(!skipped.reason.contains(wrong), "{}: {}", problem.describe(), skipped.reason);
        }
    }
    for note in &set.notes {
        println!("note: {note}");
    }
    let labels: Vec<&str> = set.candidates.iter().map(Candidate::label).collect();
    for label in required {
        assert!(labels.contains(label), "{}: {label} missing from {labels:?}", problem.describe());
    }
    set
}

#[test]
fn every_available_matmul_epilogue_baseline_agrees_with_the_reference() {
    let Some(compiler) = compiler() else { return };
    // The plain matmul is checked (and timed) by `baselines_time_side_by_side`; relu is fused in
    // the convolution test. Here bias and GELU.
    let gelu = MatmulProblem::f32(6, 9, 5).with_epilogue(Epilogue {
        bias: true,
        activation: Activation::Gelu,
        requant: false,
    });
    checked(&compiler, &Problem::Matmul(gelu), &["naive"]);
}

/// Quantized u8 x s8 -> s32 and s8 x s8 -> s32: the naive loop, oneDNN's int8 matmul and MKL's
/// `cblas_gemm_s8u8s32` (where installed; s8 `lhs` shifted to u8) agree exactly with the
/// reference, on inputs over their whole ranges; the other libraries say they have no such matmul.
#[test]
fn the_quantized_matmul_baselines_agree_exactly() {
    let Some(compiler) = compiler() else { return };
    let mut required = vec!["naive"];
    match mkl::locate() {
        Ok(_) => required.push("mkl"),
        Err(why) => println!("skipped: mkl's int8 matmul, MKL is not installed ({why})"),
    }
    for inputs in [[CType::U8, CType::I8], [CType::I8, CType::I8]] {
        let problem =
            MatmulProblem { dtype: CType::I32, inputs: Some(inputs), ..MatmulProblem::f32(5, 300, 7) };
        let set = checked(&compiler, &Problem::Matmul(problem), &required);
        let name = problem.types_name();
        assert!(name == "u8s8s32" || name == "s8s8s32", "{name}");
        for library in ["openblas", "blis", "xnnpack"] {
            let skipped = set.skipped.iter().find(|s| s.reason.starts_with(library));
            assert!(
                skipped.is_some_and(|s| s.reason.contains(&format!("no {name} matmul"))),
                "{library}: {:?}",
                set.skipped
            );
        }
    }
}

/// A requantized u8s8s32 (u8 out) and s8s8s32 (i8 out) matmul: oneDNN's (where installed)
/// agrees with the reference on the seeded inputs and on inputs with many small sums, half-integer
/// products (scale 1/2) and odd zero points, where it rounds `y + zero_point` rather than `y`; the
/// libraries without such a matmul say so.
#[test]
fn the_requantized_matmul_baselines_agree() {
    let Some(compiler) = compiler() else { return };
    let onednn = probe(&compiler, BaselineKind::OneDnn);
    if let Err(why) = &onednn {
        println!("skipped: the onednn requantized matmul ({why})");
    }
    let required: &[&str] = if onednn.is_ok() { &["onednn"] } else { &[] };
    for (inputs, out) in [([CType::U8, CType::I8], CType::U8), ([CType::I8, CType::I8], CType::I8)] {
        let problem = MatmulProblem {
            dtype: out,
            inputs: Some(inputs),
            epilogue: Epilogue::REQUANT,
            ..MatmulProblem::f32(6, 40, 35)
        };
        let set = checked(&compiler, &Problem::Matmul(problem), required);
        let mkl = set.skipped.iter().find(|s| s.kind == BaselineKind::Mkl).map(|s| s.reason.as_str());
        assert!(
            mkl.is_some_and(|r| r.contains("with an epilogue") || r.contains("not installed")),
            "{mkl:?}"
        );
        if onednn.is_err() {
            continue;
        }
        // lhs[i][0] = i + 1 and rhs[0][j] = 1, the rest 0: acc = i + 1, y = (i + 1) / 2 in the
        // columns of scale 1/2 (ties for even i), zero points 0..35 (odd in half the columns).
        let (m, k, n) = (problem.m, problem.k, problem.n);
        let lhs: Vec<u8> = (0..m * k).map(|e| if e % k == 0 { (e / k + 1) as u8 } else { 0 }).collect();
        let rhs: Vec<u8> = (0..k * n).map(|e| u8::from(e < n)).collect();
        let scale: Vec<f32> = (0..n).map(|j| if j % 5 == 4 { 3.0 + j as f32 / 7.0 } else { 0.5 }).collect();
        let zero_point: Vec<u8> = (0..n as u8).collect();
        let buffers = vec![
            Buffer::from_le_bytes(inputs[0], &lhs).expect("bytes"),
            Buffer::from_le_bytes(inputs[1], &rhs).expect("bytes"),
            Buffer::F32(scale),
            Buffer::from_le_bytes(out, &zero_point).expect("bytes"),
        ];
        let reference = reference::reference(&Problem::Matmul(problem), &buffers).expect("a reference");
        let ties = reference.tolerance.iter().filter(|&&t| t > 0.0).count();
        assert!(ties >= n, "{ties} outputs where the orders of rounding differ");
        let problem = Problem::Matmul(problem);
        let mut checker = check::Checker::on_inputs(&compiler, &problem, buffers);
        let candidate = offer(&compiler, &problem, BaselineKind::OneDnn, &BaselineOptions::default())
            .expect("offered")
            .into_iter()
            .find_map(|o| match o {
                Offered::C(c) => Some(c.into_candidate()),
                Offered::Rust { .. } => None,
            })
            .expect("a C unit");
        let notes = checker.check_c(&candidate).expect("oneDNN agrees on ties with odd zero points");
        assert!(notes.iter().any(|n| n.contains("requant")), "{notes:?}");
    }
}

#[test]
fn a_requantized_output_off_by_one_away_from_a_tie_is_refused() {
    let problem = Problem::Matmul(MatmulProblem {
        dtype: CType::U8,
        inputs: Some([CType::U8, CType::I8]),
        epilogue: Epilogue::REQUANT,
        ..MatmulProblem::f32(1, 1, 3)
    });
    // acc = 3 in each column; scales 0.5, 0.5, 0.25: y = 1.5 (a tie), 1.5, 0.75; zero points 1, 2, 1.
    let inputs = [
        Buffer::U8(vec![3]),
        Buffer::I8(vec![1, 1, 1]),
        Buffer::F32(vec![0.5, 0.5, 0.25]),
        Buffer::U8(vec![1, 2, 1]),
    ];
    let reference = reference::reference(&problem, &inputs).expect("a reference");
    // round_half_even(1.5) + 1 = 3, round_half_even(2.5) = 2 (oneDNN's order): both accepted.
    for accepted in [[3, 4, 2], [2, 4, 2]] {
        assert!(reference::check(&reference, &Buffer::U8(accepted.to_vec())).is_ok(), "{accepted:?}");
    }
    for refused in [[3, 4, 1], [3, 4, 3], [4, 4, 2], [1, 4, 2], [3, 3, 2], [3, 5, 2]] {
        assert!(reference::check(&reference, &Buffer::U8(refused.to_vec())).is_err(), "{refused:?}");
    }
}

#[test]
fn every_available_conv_baseline_agrees_with_the_reference() {
    let Some(compiler) = compiler() else { return };
    let layouts =
        [(ActivationLayout::Nhwc, FilterLayout::Ohwi), (ActivationLayout::Nchw, FilterLayout::Oihw)];
    for (layout, filter_layout) in layouts {
        let plain = ConvProblem::new([1, 3, 6, 5], [4, 3, 3], layout, filter_layout);
        checked(&compiler, &Problem::Conv(plain), &["naive"]);
    }
    // Batch 2, stride 2, uneven padding, dilation and an epilogue, in one layout pair.
    let odd = ConvProblem {
        stride: [2, 1],
        padding: ConvPadding { top: 1, bottom: 2, left: 0, right: 1 },
        dilation: [1, 2],
        epilogue: Epilogue { bias: true, activation: Activation::Relu, requant: false },
        ..ConvProblem::new([2, 5, 7, 8], [3, 3, 2], ActivationLayout::Nhwc, FilterLayout::Hwio)
    };
    checked(&compiler, &Problem::Conv(odd), &["naive"]);
}

/// A quantized convolution (u8 input, s8 filter, s32 output; an s8 input takes the same path in
/// every unit): oneDNN's (in the layouts it is given and in the ones it chooses) agrees exactly, on
/// a padded, strided one over 8-bit inputs of every value; the naive loop and XNNPACK say they
/// have none.
#[test]
fn the_quantized_conv_baselines_agree_exactly() {
    let Some(compiler) = compiler() else { return };
    let onednn = probe(&compiler, BaselineKind::OneDnn);
    let required: &[&str] = if onednn.is_ok() { &["onednn", "onednn-any"] } else { &[] };
    let problem = ConvProblem {
        stride: [2, 1],
        padding: ConvPadding::uniform(1),
        inputs: Some([CType::U8, CType::I8]),
        ..ConvProblem::new([1, 19, 7, 6], [5, 3, 3], ActivationLayout::Nhwc, FilterLayout::Hwio)
    };
    let set = checked(&compiler, &Problem::Conv(problem), required);
    for library in ["naive", "xnnpack"] {
        let skipped = set.skipped.iter().find(|s| s.reason.starts_with(library));
        let said = skipped.is_some_and(|s| s.reason.contains("no u8s8s32 convolution"));
        assert!(said, "{library}: {:?}", set.skipped);
    }
}

#[test]
fn every_available_softmax_baseline_agrees_with_the_reference() {
    let Some(compiler) = compiler() else { return };
    checked(&compiler, &Problem::Softmax(SoftmaxProblem { rows: 3, cols: 17 }), &["naive"]);
}

#[test]
fn a_baseline_that_computes_something_else_is_caught() {
    let Some(compiler) = compiler() else { return };
    let problem = Problem::Matmul(MatmulProblem::f32(3, 4, 5));
    let mut checker = check::Checker::new(&compiler, &problem, &BaselineOptions::default());
    // The naive baseline's source with `rhs` read transposed: a misconfigured call.
    let mut wrong = naive::c_baselines(&problem, 1).expect("naive matmul").remove(0);
    wrong.source = wrong.source.replace("rhs[p * 5L + j]", "rhs[j * 4L + p]");
    let error = checker.check_c(&wrong.into_candidate()).expect_err("transposed");
    assert!(error.starts_with("naive: disagrees with the reference on f32 matmul 3x4x5 (out["), "{error}");
    let right = naive::c_baselines(&problem, 1).expect("naive matmul").remove(0);
    assert_eq!(checker.check_c(&right.into_candidate()), Ok(Vec::new()));
}

#[test]
fn the_naive_u32_baseline_is_the_only_one_and_wraps_like_rust() {
    let Some(compiler) = compiler() else { return };
    let problem =
        MatmulProblem { m: 3, k: 4, n: 5, dtype: CType::U32, inputs: None, epilogue: Epilogue::NONE };
    let set = checked(&compiler, &Problem::Matmul(problem), &["naive"]);
    assert_eq!(set.candidates.len(), 1);
    assert_eq!(set.skipped.len(), BaselineKind::ALL.len() - 1);
    assert!(set.skipped.iter().all(|s| s.reason.contains("no u32 matmul")), "{:?}", set.skipped);
}

#[test]
fn what_a_baseline_does_not_compute_is_said_before_whether_it_is_installed() {
    let Some(compiler) = compiler() else { return };
    let problem = Problem::Softmax(SoftmaxProblem { rows: 2, cols: 8 });
    let set = baselines(
        &compiler,
        &problem,
        &[BaselineKind::OpenBlas, BaselineKind::Mkl, BaselineKind::Gemm],
        &BaselineOptions::default(),
    );
    let reasons: Vec<&str> = set.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(reasons, ["openblas: no softmax", "mkl: no softmax", "gemm: no softmax"]);
    let bad =
        Problem::Conv(ConvProblem::new([1, 2, 2, 2], [1, 3, 3], ActivationLayout::Nchw, FilterLayout::Oihw));
    let set = baselines(&compiler, &bad, &[BaselineKind::Naive], &BaselineOptions::default());
    assert_eq!(
        set.skipped[0].reason,
        "naive: the 3x3 filter (dilation 1x1) is larger than the padded 2x2 input"
    );
}

/// A benchmark of `candidates` for `problem` without a kernel.
fn baselines_alone(problem: &MatmulProblem, candidates: Vec<Candidate>) -> BenchRequest {
    BenchRequest {
        signature: problem.signature("unused_kernel"),
        kernel_source: String::new(),
        options: strict(),
        candidates,
        work: problem.work(),
    }
}

#[test]
fn baselines_time_side_by_side() {
    let Some(compiler) = compiler() else { return };
    let problem = MatmulProblem::f32(8, 8, 8);
    let set =
        baselines(&compiler, &Problem::Matmul(problem), &BaselineKind::ALL, &BaselineOptions::default());
    let labels: Vec<String> = set.candidates.iter().map(|c| c.label().to_string()).collect();
    let request = baselines_alone(&problem, set.candidates);
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
fn openblas_calls_its_own_cblas_sgemm_when_blis_is_linked_first() {
    let Some(compiler) = compiler() else { return };
    let problem = MatmulProblem::f32(8, 8, 8);
    let kinds = [BaselineKind::Blis, BaselineKind::OpenBlas];
    let set = baselines(&compiler, &Problem::Matmul(problem), &kinds, &BaselineOptions::default());
    if set.candidates.len() != 2 {
        println!("skipped: BLIS and OpenBLAS are not both installed");
        return;
    }
    let request = baselines_alone(&problem, set.candidates);
    let build = crate::bench::build_bench_program(&compiler, &request).expect("builds");
    // glibc's loader reports which library each symbol binds to; BLIS's CBLAS layer exports
    // `cblas_sgemm` too, and comes first on the link line.
    let output = std::process::Command::new(build.binary())
        .args(["--samples", "1", "--min-seconds", "0"])
        .env("LD_DEBUG", "bindings")
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let bindings: Vec<&str> = stderr.lines().filter(|l| l.contains("`cblas_sgemm'")).collect();
    if bindings.is_empty() {
        println!("skipped: the loader reports no bindings (not glibc?)");
        return;
    }
    for binding in bindings {
        let to = binding.split(" to ").nth(1).unwrap_or_default();
        assert!(to.contains("openblas"), "cblas_sgemm bound elsewhere: {binding}");
    }
}

/// BLIS says which configuration its run-time dispatch chose (`generic` where the build has no
/// kernels for the CPU), as a note beside the results.
#[test]
fn blis_says_which_configuration_it_runs() {
    let Some(compiler) = compiler() else { return };
    let problem = Problem::Matmul(MatmulProblem::f32(8, 8, 8));
    let set = baselines(&compiler, &problem, &[BaselineKind::Blis], &BaselineOptions::default());
    if set.candidates.is_empty() {
        println!("skipped: {:?}", set.skipped.iter().map(|s| &s.reason).collect::<Vec<_>>());
        return;
    }
    let notes: Vec<&String> = set.notes.iter().filter(|n| n.starts_with("blis: BLIS ")).collect();
    assert_eq!(notes.len(), 1, "{:?}", set.notes);
    let configuration = notes[0].split(", configuration ").nth(1).expect("a configuration");
    assert!(!configuration.is_empty(), "{}", notes[0]);
    assert_eq!(
        configuration.starts_with("generic "),
        configuration.contains("reference kernels"),
        "{}",
        notes[0]
    );
}

#[test]
fn names_parse_and_multithreading_is_honest() {
    for kind in BaselineKind::ALL {
        assert_eq!(kind.name().parse::<BaselineKind>(), Ok(kind));
    }
    assert_eq!("MKL".parse::<BaselineKind>(), Ok(BaselineKind::Mkl));
    assert!("cublas".parse::<BaselineKind>().is_err());
    let Some(compiler) = compiler() else { return };
    let problem = Problem::Matmul(MatmulProblem::f32(4, 4, 4));
    let options = BaselineOptions { threads: 2, seed: 1, ..BaselineOptions::default() };
    let set = baselines(&compiler, &problem, &[BaselineKind::Libxsmm, BaselineKind::Xnnpack], &options);
    let reasons: Vec<&str> = set.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "libxsmm: single-threaded only, and 2 threads were requested",
            "xnnpack: single-threaded only, and 2 threads were requested"
        ]
    );
    assert_eq!(problem.work().flops, Some(128.0));
}

/// A cold run skips the baseline timed in Rust, saying why, and keeps it in a warm one.
#[test]
fn cold_runs_skip_the_rust_baseline() {
    let Some(compiler) = compiler() else { return };
    let problem = Problem::Matmul(MatmulProblem::f32(4, 4, 4));
    let cold = BaselineOptions { caches: Caches::Cold, ..BaselineOptions::default() };
    let set = baselines(&compiler, &problem, &[BaselineKind::Gemm], &cold);
    assert!(set.candidates.is_empty());
    let reasons: Vec<&str> = set.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(reasons, ["gemm: timed in Rust, which cannot evict its buffers for cold calls"]);
    let warm = baselines(&compiler, &problem, &[BaselineKind::Gemm], &BaselineOptions::default());
    assert_eq!(warm.candidates.len(), 1, "{:?}", warm.skipped);
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
    let missing = Unavailable::NotFound("no include/mkl.h".into()).reason(BaselineKind::Mkl);
    assert_eq!(missing, format!("mkl: not installed (no include/mkl.h); install it with {}", mkl::INSTALL));
    // Each command is quoted on its own, and every backtick is closed.
    assert!(missing.contains("install it with `python3 -m venv /opt/mklvenv && /opt/mklvenv/bin/pip install mkl mkl-devel`, or set MORELLO_MKL_DIR"), "{missing}");
    for kind in BaselineKind::ALL {
        let hint = kind.install_hint().unwrap_or_default();
        assert_eq!(hint.matches('`').count() % 2, 0, "{kind}: {hint}");
        assert!(hint.is_empty() || hint.starts_with('`'), "{kind}: {hint}");
    }
}

#[test]
fn baseline_lists_keep_order_drop_repeats_and_name_the_unknown() {
    let named = |names: &[&str]| baselines_named(names);
    assert_eq!(
        named(&[" OpenBLAS", "naive", "openblas"]),
        Ok(vec![BaselineKind::OpenBlas, BaselineKind::Naive])
    );
    assert_eq!(named(&["all"]), Ok(BaselineKind::ALL.to_vec()));
    assert_eq!(named(&["none", "naive"]), Ok(vec![BaselineKind::Naive]));
    assert_eq!(named(&["cublas"]), Err(UnknownBaseline("cublas".into())));
}
