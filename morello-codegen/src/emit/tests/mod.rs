//! Emitter tests: hand-built trees (see [`trees`]) checked against their specs by the
//! interpreter, their C compared with golden files, then compiled with gcc and clang
//! (warnings are errors), run, and verified against the reference.
//!
//! Golden files live in `morello-codegen/tests/golden/` (the helper functions' C once, in
//! `helpers.c`, named but not repeated in each tree's file); after an intended change to the
//! emitted C, re-bless them with `MORELLO_BLESS=1 cargo test -p morello-codegen golden` and review
//! the diff.

mod kernels;
mod trees;

use std::path::{Path, PathBuf};

use morello_core::imp::Impl;
use morello_core::interp::{Buffer as InterpBuffer, Interpreter, Value, wrap};
use morello_core::kernels::KernelKind;
use morello_core::spec::{CanonicalSpec, PrimitiveKind};
use morello_core::target::{MemVec, Target};

use super::*;
use crate::compiler::Warnings;
use crate::host::require_features;
use crate::test_support::{compilers_for, gcc_and_clang};
use crate::verify::{VerifyOptions, verify_kernels};
use trees::{Builder, Case};

/// Small deterministic inputs (exact in every dtype).
fn inputs(spec: &CanonicalSpec) -> Vec<InterpBuffer> {
    spec.operands
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let values: Vec<Value> = (0..o.shape.volume() as usize)
                .map(|j| {
                    let v = ((j * 7 + i * 3) % 9) as i64 - 4;
                    if o.dtype.is_float() { Value::Float(v as f32) } else { Value::Int(wrap(v, o.dtype)) }
                })
                .collect();
            InterpBuffer::from_logical(o, &values).expect("fits")
        })
        .collect()
}

#[test]
fn every_tree_computes_its_spec() {
    for case in trees::all() {
        let target = Target::builtin(case.target, 2).expect("target");
        let interp = Interpreter::new(&target);
        let mut by_impl = inputs(&case.imp.spec);
        let mut by_spec = by_impl.clone();
        interp.execute_impl(&case.imp, &mut by_impl).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        interp.execute_spec(&case.imp.spec, &mut by_spec).expect("spec runs");
        if case.imp.spec.kind == PrimitiveKind::Softmax {
            // The passes round their intermediates (the maximum, each exp, the sum) to f32; the
            // spec is computed in f64 and rounded once: a few ulp apart.
            for (a, b) in by_impl.iter().zip(&by_spec) {
                for (x, y) in a.values.iter().zip(&b.values) {
                    let (Value::Float(x), Value::Float(y)) = (x, y) else { panic!("f32 softmax") };
                    assert!((x - y).abs() <= 4.0 * f32::EPSILON * y.abs(), "{}: {x} against {y}", case.name);
                }
            }
            continue;
        }
        assert_eq!(by_impl, by_spec, "{}", case.name);
    }
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join("golden")
}

/// Blesses (writes) the golden file at `path` with `c`, or notes in `stale` how it differs.
fn compare_golden(path: &Path, c: &str, bless: bool, stale: &mut Vec<String>) {
    if bless {
        std::fs::write(path, c).expect("writes the golden file");
        return;
    }
    match std::fs::read_to_string(path) {
        Err(e) => stale.push(format!("{} (missing: {e})", path.display())),
        Ok(expected) if expected != c => {
            let line = expected.lines().zip(c.lines()).position(|(a, b)| a != b).unwrap_or(0) + 1;
            stale.push(format!("{} (first difference at line {line})", path.display()));
        }
        Ok(_) => {}
    }
}

/// Every helper, in the order [`helpers::definitions`] defines them.
fn every_helper() -> BTreeSet<Helper> {
    use strum::IntoEnumIterator;
    Helper::iter().collect()
}

/// A tree's golden text: its emitted C with each helper's guarded definition replaced by one line
/// naming its guard. A helper's C is the same in every unit, so it is checked once, against
/// `tests/golden/helpers.c`; here each replaced block must be exactly that definition.
fn listing(name: &str, c: &str, every_definition: &str) -> String {
    let mut out = String::with_capacity(c.len());
    let mut rest = c;
    while let Some(start) = rest.find("#ifndef MORELLO_HELPER_") {
        out.push_str(&rest[..start]);
        let block = &rest[start..];
        let end = block.find("#endif\n").unwrap_or_else(|| panic!("{name}: an unclosed helper guard")) + 7;
        let guard = block["#ifndef ".len()..].lines().next().expect("a guard line");
        assert!(
            every_definition.contains(&block[..end]),
            "{name}: helper {guard} differs from its definition in helpers.c:\n{}",
            &block[..end]
        );
        out.push_str(&format!("/* {guard}: tests/golden/helpers.c */\n"));
        rest = &block[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn golden_files() {
    let bless = std::env::var_os("MORELLO_BLESS").is_some();
    let mut stale = Vec::new();
    let every_definition = helpers::definitions(&every_helper());
    compare_golden(&golden_dir().join("helpers.c"), &every_definition, bless, &mut stale);
    for case in trees::all().into_iter().filter(|c| c.golden) {
        let target = Target::builtin(case.target, 2).expect("target");
        let c = emit_c(&case.imp, &target).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(
            c,
            emit_c(&case.imp, &target).expect("emits"),
            "{}: emission is not deterministic",
            case.name
        );
        let text = listing(case.name, &c, &every_definition);
        compare_golden(&golden_dir().join(format!("{}.c", case.name)), &text, bless, &mut stale);
    }
    assert!(
        stale.is_empty(),
        "emitted C differs from the golden files; if intended, run `MORELLO_BLESS=1 cargo test -p morello-codegen golden` and review the diff:\n{}",
        stale.join("\n")
    );
}

/// The `compile:` line at the top of emitted C builds it as written (with `cc` standing for gcc or
/// clang, whichever is installed), and its `-m` flags are needed: without them the intrinsics of
/// a vector kernel do not compile.
#[test]
#[allow(clippy::print_stdout, reason = "the reason the test is skipped")]
fn the_comment_says_the_flags_the_unit_compiles_with() {
    let Some(compiler) = ["gcc", "clang"]
        .into_iter()
        .find(|c| std::process::Command::new(c).arg("--version").output().is_ok())
    else {
        println!("skipped: neither gcc nor clang is installed");
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let run = |flags: &[&str]| {
        std::process::Command::new(compiler)
            .args(flags)
            .args(["-o", "kernel.o"])
            .current_dir(dir.path())
            .output()
            .expect("the compiler runs")
    };
    let mut checked_without_m = false;
    for case in trees::all().into_iter().filter(|c| c.golden) {
        let target = Target::builtin(case.target, 2).expect("target");
        let kernel = emit_kernel(&case.imp, &target, &EmitConfig::default()).expect("emits");
        let line =
            kernel.source.lines().find_map(|l| l.strip_prefix(" * compile: cc ")).expect("a compile line");
        let flags: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(flags[flags.len() - 2..], ["-c", "kernel.c"], "{}: {line}", case.name);
        assert_eq!(flags.contains(&"-fopenmp"), kernel.openmp == OpenMp::Enabled, "{}: {line}", case.name);
        std::fs::write(dir.path().join("kernel.c"), &kernel.source).expect("written");
        let built = run(&flags);
        let stderr = String::from_utf8_lossy(&built.stderr);
        assert!(built.status.success(), "{} with {compiler} {line}: {stderr}", case.name);
        if !checked_without_m && kernel.source.contains("_mm256_fmadd_ps") {
            let without_m: Vec<&str> = flags.iter().copied().filter(|f| !f.starts_with("-m")).collect();
            assert!(!run(&without_m).status.success(), "{}: compiles without its -m flags", case.name);
            checked_without_m = true;
        }
    }
    assert!(checked_without_m, "no tree uses an AVX2 FMA");
}

/// Builds a target's kernels, each named and with its spec, into one program per compiler, runs
/// and verifies each (printing why when the host cannot run them).
fn verify_on_hosts(target_name: &str, target: &Target, kernels: Vec<(String, &LogicalSpec, EmittedKernel)>) {
    if kernels.is_empty() {
        return;
    }
    for compiler in compilers_for(target) {
        let options = VerifyOptions { seed: 7, warnings: Warnings::Deny, ..VerifyOptions::default() };
        let batch = kernels.iter().map(|(_, spec, kernel)| (kernel.clone(), *spec)).collect();
        match verify_kernels(batch, target, &compiler, &options) {
            Ok(results) => {
                for ((name, _, _), result) in kernels.iter().zip(results) {
                    let v = result.verification;
                    assert!(v.verified, "{name} with {compiler}: {:?}\n{}", v.mismatch, result.kernel.source);
                    assert!(v.elements > 0);
                }
            }
            Err(CodegenError::MissingHostFeatures { missing }) => {
                println!(
                    "skipped running the {target_name} kernels: the host lacks {missing:?} (they compiled)"
                );
            }
            Err(e) => panic!("{target_name} with {compiler}: {e}"),
        }
    }
}

/// Builds every tree of a target into one program per compiler and verifies each kernel.
fn compile_and_verify(target_name: &str) {
    let cases: Vec<Case> = trees::all().into_iter().filter(|c| c.target == target_name).collect();
    let target = Target::builtin(target_name, 2).expect("target");
    let kernels = cases
        .iter()
        .enumerate()
        .map(|(i, case)| {
            let config = EmitConfig { name: format!("kernel{i}"), comment: ImplComment::Include };
            let kernel =
                emit_kernel(&case.imp, &target, &config).unwrap_or_else(|e| panic!("{}: {e}", case.name));
            (case.name.to_string(), &*case.imp.spec, kernel)
        })
        .collect();
    verify_on_hosts(target_name, &target, kernels);
}

#[test]
fn avx2_trees_compile_and_verify() {
    compile_and_verify("x86-avx2");
}

#[test]
fn avx2_vnni_trees_compile_and_verify() {
    compile_and_verify("x86-avx2-vnni");
}

#[test]
fn avx512_trees_compile_and_verify() {
    compile_and_verify("x86-avx512");
}

#[test]
fn parallel_loops_use_openmp() {
    let case = trees::all().into_iter().find(|c| c.name == "matmul_parallel").expect("case");
    let target = Target::builtin(case.target, 2).expect("target");
    let kernel = emit_kernel(&case.imp, &target, &EmitConfig::default()).expect("emits");
    assert_eq!(kernel.openmp, OpenMp::Enabled);
    assert!(
        kernel.source.contains("#pragma omp parallel for collapse(2) schedule(static)"),
        "{}",
        kernel.source
    );
}

#[test]
fn a_register_blocks_steps_are_unrolled_by_four() {
    let emit = |name: &str| {
        let case = trees::all().into_iter().find(|c| c.name == name).expect("case");
        let target = Target::builtin(case.target, 2).expect("target");
        emit_kernel(&case.imp, &target, &EmitConfig::default()).expect("emits").source
    };
    let block = emit("register_block_steps_unrolled");
    let pragma = block.find("#pragma GCC unroll 4").unwrap_or_else(|| panic!("no pragma:\n{block}"));
    let steps = block[pragma..].lines().nth(1).expect("a line after the pragma");
    assert!(steps.trim_start().starts_with("for (int64_t k_") && steps.contains("< 8;"), "{block}");
    assert_eq!(block.matches("#pragma GCC unroll").count(), 1, "{block}");
    // Two steps, and loops that are not a register block's steps: nothing to ask.
    for name in ["broadcast_vec_mult_add_row", "matmul_parallel", "matmul_2x2x2"] {
        let source = emit(name);
        assert!(!source.contains("#pragma GCC unroll"), "{name}:\n{source}");
    }
}

#[test]
fn a_fused_epilogue_adds_one_statement_to_the_register_tile() {
    let body = |name: &str| {
        let case = trees::all().into_iter().find(|c| c.name == name).expect("case");
        let target = Target::builtin(case.target, 2).expect("target");
        let c = emit_c(&case.imp, &target).expect("emits");
        let start = c.find("\nvoid kernel(").unwrap_or_else(|| panic!("{name}: no kernel function:\n{c}"));
        c[start..].lines().skip(2).map(str::to_string).collect::<Vec<_>>()
    };
    let (plain, fused) = (body("broadcast_vec_mult_add_row"), body("vector_add_bias_relu_fused"));
    let epilogue: Vec<&String> = fused.iter().filter(|l| l.contains("bias")).collect();
    assert_eq!(
        epilogue,
        ["    v0_0 = _mm256_max_ps(_mm256_add_ps(v0_0, _mm256_loadu_ps(bias)), _mm256_setzero_ps());"],
        "{fused:#?}"
    );
    let without: Vec<&String> = fused.iter().filter(|l| !l.contains("bias")).collect();
    assert_eq!(without, plain.iter().collect::<Vec<_>>());
}

#[test]
fn features_follow_the_target_and_the_code() {
    let avx512 = Target::builtin("x86-avx512", 1).expect("target");
    let find = |name: &str| trees::all().into_iter().find(|c| c.name == name).expect("case").imp;
    let plain = emit_kernel(&find("broadcast_vec_mult_add_column_i32"), &avx512, &EmitConfig::default())
        .expect("emits");
    assert!(!plain.features.contains(&IsaFeature::Avx512bf16), "{:?}", plain.features);
    assert!(plain.features.contains(&IsaFeature::Avx512f));
    let bf16 = emit_kernel(&find("dot_product_bf16"), &avx512, &EmitConfig::default()).expect("emits");
    assert!(bf16.features.contains(&IsaFeature::Avx512bf16));
    let avx2 = Target::builtin("x86-avx2", 1).expect("target");
    let scalar = emit_kernel(&find("matmul_2x2x2"), &avx2, &EmitConfig::default()).expect("emits");
    assert_eq!(scalar.features, [IsaFeature::Avx, IsaFeature::Avx2, IsaFeature::Fma]);
}

#[test]
fn unsolved_trees_and_missing_kernels_are_errors() {
    let b = Builder::new("x86-avx2");
    let s = b.spec("Matmul(1x2x2x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
    let unsolved = Impl::spec_app(s.clone(), MemVec::ZERO);
    match emit_c(&unsolved, &b.t) {
        Err(CodegenError::Unsolved { spec }) => assert!(spec.starts_with("Matmul(1x2x2x2"), "{spec}"),
        other => panic!("expected Unsolved, got {other:?}"),
    }
    // A bf16 dot product is not a kernel of the AVX2 target.
    let bf16 = trees::all().into_iter().find(|c| c.name == "dot_product_bf16").expect("case").imp;
    match emit_c(&bf16, &b.t) {
        Err(e @ CodegenError::KernelUnavailable { .. }) => {
            assert_eq!(e.to_string(), "kernel DotProductBf16 is not available on target x86-avx2")
        }
        other => panic!("expected KernelUnavailable, got {other:?}"),
    }
}

#[test]
fn root_operands_must_be_whole_tensors_in_memory() {
    let b = Builder::new("x86-avx2");
    let s = b.spec("FillZero(8, f32 VRF row-major v8)");
    let imp = b.kernel(s, KernelKind::VectorFill);
    match emit_c(&imp, &b.t) {
        Err(CodegenError::Unsupported { reason }) => assert!(reason.contains("kernel parameter"), "{reason}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn kernel_names_are_checked() {
    let b = Builder::new("x86-avx2");
    let imp = b.kernel(b.spec("FillZero(4, f32 GL row-major)"), KernelKind::MemsetZero);
    let config = EmitConfig { name: "morello_x".into(), comment: ImplComment::Omit };
    assert!(matches!(emit_kernel(&imp, &b.t, &config), Err(CodegenError::InvalidSignature { .. })));
    let config = EmitConfig { name: "zero4".into(), comment: ImplComment::Omit };
    let kernel = emit_kernel(&imp, &b.t, &config).expect("emits");
    assert!(
        kernel.source.contains("void zero4(float *restrict out) {\n  memset(out, 0, 16);\n}\n"),
        "{}",
        kernel.source
    );
    assert!(!kernel.source.contains("cost"), "{}", kernel.source);
}

#[test]
fn compile_flags_need_the_host_only_for_what_is_used() {
    // The AVX-512 target's plain kernels do not need BF16 on the host.
    let avx512 = Target::builtin("x86-avx512", 1).expect("target");
    let b = Builder::new("x86-avx512");
    let imp = b.kernel(b.spec("FillZero(4, f32 GL row-major)"), KernelKind::MemsetZero);
    let kernel = emit_kernel(&imp, &avx512, &EmitConfig::default()).expect("emits");
    assert!(!kernel.features.contains(&IsaFeature::Avx512bf16), "{:?}", kernel.features);
    // Every feature the kernel is compiled with is the target's, and the host check refuses
    // exactly the ones this host lacks.
    assert!(kernel.features.iter().all(|f| avx512.has_isa(*f)), "{:?}", kernel.features);
    let lacking: BTreeSet<IsaFeature> = kernel.features.iter().copied().filter(|f| !f.on_host()).collect();
    match require_features(&kernel.features) {
        Ok(()) => assert!(lacking.is_empty(), "{lacking:?} accepted"),
        Err(CodegenError::MissingHostFeatures { missing }) => {
            assert!(!missing.is_empty(), "an error names what is missing");
            assert_eq!(missing.into_iter().collect::<BTreeSet<_>>(), lacking);
        }
        Err(other) => panic!("{other}"),
    }
}

#[test]
fn helpers_compile_and_compute() {
    use crate::compiler::{CProgram, CompileOptions, SourceUnit};
    let all: BTreeSet<Helper> = [
        Helper::FloorDiv,
        Helper::Mod,
        Helper::Bf16ToF32,
        Helper::F32ToBf16,
        Helper::HsumM128,
        Helper::HsumM256,
    ]
    .into_iter()
    .collect();
    let source = format!(
        "#include <immintrin.h>\n#include <stdint.h>\n#include <string.h>\n{}{}\n\
         int main(void) {{\n\
         \x20 int bad = 0;\n\
         \x20 bad |= morello_floordiv(-7, 4) != -2 || morello_floordiv(7, 4) != 1 || morello_floordiv(-8, 4) != -2;\n\
         \x20 bad |= morello_mod(-7, 4) != 1 || morello_mod(7, 4) != 3 || morello_mod(-8, 4) != 0;\n\
         \x20 bad |= morello_bf16_to_f32(0x3fc0) != 1.5f || morello_f32_to_bf16(1.5f) != 0x3fc0;\n\
         \x20 bad |= morello_f32_to_bf16(1.00390625f) != 0x3f80; /* a tie rounds to even */\n\
         \x20 bad |= morello_f32_to_bf16(1.01171875f) != 0x3f82; /* a tie rounds to even, upwards */\n\
         \x20 bad |= morello_hsum_m128(_mm_setr_ps(1, 2, 3, 4)) != 10.0f;\n\
         \x20 bad |= morello_hsum_m256(_mm256_setr_ps(1, 2, 3, 4, 5, 6, 7, 8)) != 36.0f;\n\
         \x20 return bad;\n}}\n",
        helpers::definitions(&all),
        helpers::definitions(&all), // twice: the guards make a second copy harmless
    );
    let options = CompileOptions {
        features: vec![IsaFeature::Avx, IsaFeature::Avx2, IsaFeature::Fma],
        warnings: Warnings::Deny,
        ..CompileOptions::default()
    };
    for compiler in gcc_and_clang() {
        let program = CProgram { units: vec![SourceUnit::new("helpers", source.clone())], link_args: vec![] };
        let build = compiler.build(&program, &options).unwrap_or_else(|e| panic!("{e}"));
        if require_features(build.features()).is_ok() {
            crate::run::run_program(build.binary(), &[], &[]).unwrap_or_else(|e| panic!("{compiler}: {e}"));
        }
    }
}

#[test]
fn a_lone_kernel_is_the_emitters_statements_on_named_operands() {
    let b = Builder::new("x86-avx2");
    let spec = b.spec("MatmulAccum(1x1x1x16, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v8)");
    let names = ["s", "x", "acc"].map(String::from);
    let lone = lone::lone_kernel(KernelKind::BroadcastVecMultAdd, &spec, &b.t, &names, 1).unwrap();
    assert!(matches!(&lone.operands[0], lone::LoneOperand::Memory { name, .. } if name == "s"));
    assert!(
        matches!(&lone.operands[2], lone::LoneOperand::Vectors { prefix, count: 2, .. } if prefix == "acc")
    );
    assert!(lone.statements.contains("  acc_1 = _mm256_fmadd_ps(x_1, b0, acc_1);"), "{}", lone.statements);
    assert!(lone.statements.lines().all(|l| l.starts_with("  ")), "{}", lone.statements);
    let refused = |kind, names: &[String]| {
        matches!(lone::lone_kernel(kind, &spec, &b.t, names, 0), Err(CodegenError::Unsupported { .. }))
    };
    assert!(refused(KernelKind::MultAdd, &names));
    assert!(refused(KernelKind::BroadcastVecMultAdd, &names[..2]));
}
