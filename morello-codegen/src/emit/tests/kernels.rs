//! One golden file per kernel, from its definition alone: the kernel's first calibration case
//! (`KernelKind::calibration`) on the first built-in target offering it, emitted by
//! [`lone_function`] (the emitter's statements on the operands, as calibration runs them) and
//! compared with `tests/golden/kernels/<module>.c` (the unit with its helpers named, not defined), then compiled with gcc and clang, run and verified
//! against the reference. A new kernel needs no hand-built tree: its golden file is blessed with
//! `MORELLO_BLESS=1 cargo test -p morello-codegen golden`.
//!
//! Every kernel of `arm-neon` also has its NEON golden file, `tests/golden/kernels/arm-neon/<module>.c`,
//! compiled with both AArch64 cross compilers under `-Werror` and verified under `qemu-aarch64` (on
//! a host without them, skipped with the command that installs them).

use std::path::PathBuf;

use morello_core::kernels::{CalibrationSites, KernelKind};
use morello_core::spec::{CanonicalSpec, LogicalSpec};
use morello_core::target::Target;

use super::{compare_golden, verify_on_hosts};
use crate::emit::EmittedKernel;
use crate::emit::lone::{LoneFunction, lone_function};

/// The built-in targets, in the order a kernel's golden target is chosen.
const TARGETS: [&str; 3] = ["x86-avx2", "x86-avx2-vnni", "x86-avx512"];

/// The built-in targets of another instruction set, each with golden files of its own for every
/// kernel it offers, in `tests/golden/kernels/<target>/`.
const OTHER_ISA_TARGETS: [&str; 1] = ["arm-neon"];

/// A kernel's golden case: its first calibration spec, emitted by itself.
struct KernelCase {
    kernel: KernelKind,
    target: &'static str,
    spec: CanonicalSpec,
    emitted: LoneFunction,
}

fn cases() -> Vec<KernelCase> {
    KernelKind::ALL
        .into_iter()
        .filter_map(|kernel| {
            let (name, target) = TARGETS
                .into_iter()
                .map(|name| (name, Target::builtin(name, 2).expect("a built-in target")))
                .find(|(_, t)| t.kernels().contains(&kernel))?;
            Some(case(kernel, name, &target))
        })
        .collect()
}

/// The golden cases of a target of [`OTHER_ISA_TARGETS`]: each kernel it offers.
fn other_isa_cases(name: &'static str) -> Vec<KernelCase> {
    let target = Target::builtin(name, 2).expect("a built-in target");
    target.kernels().iter().map(|&kernel| case(kernel, name, &target)).collect()
}

fn case(kernel: KernelKind, name: &'static str, target: &Target) -> KernelCase {
    let sites = CalibrationSites::of(target).expect("a built-in target calibrates");
    let case = kernel
        .calibration(&sites)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{kernel}: its definition names no calibration case on {name}"));
    let spec = LogicalSpec::parse(&case.spec, target)
        .unwrap_or_else(|e| panic!("{kernel}: calibration spec {}: {e}", case.spec))
        .canonicalize(target)
        .unwrap_or_else(|e| panic!("{kernel}: calibration spec {}: {e}", case.spec));
    let emitted = lone_function(kernel, &spec, target, kernel.module_name())
        .unwrap_or_else(|e| panic!("{kernel} on {name}, {}: {e}", case.spec));
    KernelCase { kernel, target: name, spec, emitted }
}

fn golden_path(kernel: KernelKind) -> PathBuf {
    super::golden_dir().join("kernels").join(format!("{}.c", kernel.module_name()))
}

fn other_isa_golden_path(target: &str, kernel: KernelKind) -> PathBuf {
    super::golden_dir().join("kernels").join(target).join(format!("{}.c", kernel.module_name()))
}

#[test]
fn golden_kernel_files() {
    let bless = std::env::var_os("MORELLO_BLESS").is_some();
    let mut stale = Vec::new();
    for case in cases() {
        compare_golden(&golden_path(case.kernel), &case.emitted.listing, bless, &mut stale);
    }
    for target in OTHER_ISA_TARGETS {
        if bless {
            std::fs::create_dir_all(super::golden_dir().join("kernels").join(target))
                .expect("creates the directory");
        }
        for case in other_isa_cases(target) {
            compare_golden(
                &other_isa_golden_path(target, case.kernel),
                &case.emitted.listing,
                bless,
                &mut stale,
            );
        }
    }
    assert!(
        stale.is_empty(),
        "a kernel's emitted C differs from its golden file (or it has none); if intended, run \
         `MORELLO_BLESS=1 cargo test -p morello-codegen golden` and review the new or changed files:\n{}",
        stale.join("\n")
    );
}

/// The names of the files (not directories) in `tests/golden/kernels/<under>`, sorted.
fn golden_files(under: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(super::golden_dir().join("kernels").join(under))
        .expect("the golden directory exists")
        .map(|entry| entry.expect("a directory entry"))
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

#[test]
fn goldens_cover_every_kernel() {
    let mut expected: Vec<String> = cases().iter().map(|c| format!("{}.c", c.kernel.module_name())).collect();
    expected.sort();
    assert_eq!(golden_files(""), expected, "one golden file per kernel of the x86 targets, no other");
    for kernel in KernelKind::ALL {
        assert!(
            std::iter::once(TARGETS.as_slice())
                .chain([OTHER_ISA_TARGETS.as_slice()])
                .flatten()
                .any(|name| Target::builtin(name, 2).expect("a built-in target").kernels().contains(&kernel)),
            "{kernel}: no built-in target offers it, so it has no golden file"
        );
    }
    for target in OTHER_ISA_TARGETS {
        let mut expected: Vec<String> = Target::builtin(target, 2)
            .expect("a built-in target")
            .kernels()
            .iter()
            .map(|k| format!("{}.c", k.module_name()))
            .collect();
        expected.sort();
        assert_eq!(golden_files(target), expected, "one golden file per kernel of {target}, no other");
    }
}

#[test]
fn golden_kernels_compile_and_verify() {
    let cases = cases();
    for target_name in TARGETS {
        let target = Target::builtin(target_name, 2).expect("target");
        let kernels: Vec<(String, &LogicalSpec, EmittedKernel)> = cases
            .iter()
            .filter(|c| c.target == target_name)
            .map(|c| (c.kernel.to_string(), &*c.spec, c.emitted.kernel.clone()))
            .collect();
        verify_on_hosts(target_name, &target, kernels);
    }
}

#[test]
fn other_isa_golden_kernels_compile_and_verify() {
    for target_name in OTHER_ISA_TARGETS {
        let target = Target::builtin(target_name, 2).expect("target");
        let cases = other_isa_cases(target_name);
        let kernels: Vec<(String, &LogicalSpec, EmittedKernel)> =
            cases.iter().map(|c| (c.kernel.to_string(), &*c.spec, c.emitted.kernel.clone())).collect();
        verify_on_hosts(target_name, &target, kernels);
    }
}

/// AArch64's int8 dot products at the ends of the u8 and i8 ranges, where a saturating step or a
/// wrong offset correction would differ: each output lane of the golden case (`[1, 1, 4, 4]`,
/// `rhs` element `(k, n)` at `4 n + k`) against the sum computed here, with both cross compilers
/// under qemu (natively on an AArch64 host).
#[test]
fn neon_int8_dot_products_are_exact_at_the_ends_of_the_ranges() {
    use crate::compiler::{CompileOptions, Warnings};
    use crate::harness::{Buffer, VerifyInputs, run_verify, verify_program_source};
    use crate::test_support::{compilers_for, one_unit};

    let target = Target::builtin("arm-neon", 2).expect("target");
    let cases = other_isa_cases("arm-neon");
    let rhs_patterns: [[i8; 16]; 3] = [
        [i8::MIN; 16],
        [i8::MAX; 16],
        std::array::from_fn(|i| if i % 3 == 0 { i8::MIN } else { i8::MAX - i as i8 }),
    ];
    let initial = [0, -1, i32::MAX / 2, i32::MIN / 2];
    for (kernel, lhs_patterns) in [
        (KernelKind::BroadcastSdotU8, [[u8::MAX; 4], [0; 4], [0, 128, 127, 255]].map(|p| p.map(i64::from))),
        (
            KernelKind::BroadcastSdot,
            [[i8::MIN; 4], [i8::MAX; 4], [-128, 127, 0, -1]].map(|p| p.map(i64::from)),
        ),
    ] {
        let case = cases.iter().find(|c| c.kernel == kernel).expect("its golden case");
        let signature = &case.emitted.kernel.signature;
        let source = verify_program_source(signature, &case.emitted.kernel.source).expect("a harness");
        let options = CompileOptions {
            features: case.emitted.kernel.features.clone(),
            warnings: Warnings::Deny,
            ..CompileOptions::default()
        };
        for compiler in compilers_for(&target) {
            let build = compiler.build(&one_unit(source.clone()), &options).expect("compiles");
            for lhs in &lhs_patterns {
                for rhs in &rhs_patterns {
                    let lhs_buffer = match kernel {
                        KernelKind::BroadcastSdotU8 => Buffer::U8(lhs.map(|x| x as u8).to_vec()),
                        _ => Buffer::I8(lhs.map(|x| x as i8).to_vec()),
                    };
                    let inputs = VerifyInputs::Buffers(vec![
                        lhs_buffer,
                        Buffer::I8(rhs.to_vec()),
                        Buffer::I32(initial.to_vec()),
                    ]);
                    let run = run_verify(&build, signature, &inputs).expect("runs");
                    let expected: Vec<i32> = (0..4)
                        .map(|n| {
                            let sum: i64 = (0..4).map(|k| lhs[k] * i64::from(rhs[4 * n + k])).sum();
                            i32::try_from(i64::from(initial[n]) + sum).expect("fits i32")
                        })
                        .collect();
                    assert_eq!(
                        run.params[2],
                        Buffer::I32(expected),
                        "{kernel} with {compiler}: {lhs:?} {rhs:?}"
                    );
                }
            }
        }
    }
}

/// The requantization kernels on the values where it is delicate (ties to even, both saturation
/// bounds with various zero points, NaN and zero scales, the i32 extremes, sums that round when
/// converted to f32, products that round in f32), with no bias, with an i32 bias (at the i32
/// extremes too: sums that reach them exactly, and sums that wrap) and with a bias and ReLU,
/// compiled with gcc and clang, run on this host (each vector width only where the host has it)
/// and compared bit for bit with the reference interpreter. The seeded inputs of the other tests
/// saturate nearly every output.
#[test]
fn requantization_matches_the_reference_on_delicate_values() {
    use morello_core::dtype::Dtype;
    use morello_core::interp::{Buffer as Values, Interpreter, Value};
    use morello_core::spec::{PrimitiveKind, RequantEpilogue};
    use morello_core::target::IsaFeature;

    use crate::compiler::{CompileOptions, Warnings};
    use crate::harness::{Buffer, VerifyInputs, run_verify, verify_program_source};
    use crate::host::host_supports;
    use crate::test_support::{gcc_and_clang, one_unit};

    // (acc, bias, scale, zero point as i64); the zero point is read as the output's dtype, the
    // bias only by the forms with one.
    let cases: Vec<(i32, i32, f32, i64)> = vec![
        (5, 0, 0.5, 0),
        (7, 2, 0.5, 10),
        (-5, -2, 0.5, 10),
        (-1, 0, 0.5, 3),
        (3, 2, 0.5, 0),
        (25, -20, 0.1, 1),
        ((1 << 24) + 1, 1, 1.0 / 131_072.0, 0),
        (1000, -999, 1.0, 0),
        (-1000, 1, 1.0, 100),
        (200, -400, 1.0, 100),
        (-101, 0, 1.0, 100),
        (i32::MAX, 0, 1e30, 0),
        (i32::MIN, 0, 1e30, 7),
        (123_456, 5, f32::NAN, 20),
        (123_456, -5, 0.0, 42),
        (-77, 3, -0.5, 9),
        (i32::MAX, -1, 1.0 / 16_777_216.0, 5),
        (-300, 100, 0.75, 0),
        (255, 0, 1.0, 0),
        (127, 1, 1.0, 0),
        (-128, -1, 1.0, 0),
        (9, 1, -0.5, 120),
        (11, 2, 0.5, 0),
        (13, -2, 0.5, 0),
        // The bias at the i32 extremes: sums that reach them exactly, and sums that wrap.
        (0, i32::MAX, 1e-7, 0),
        (-100, i32::MAX, 1e-7, 3),
        (0, i32::MIN, 1e-7, 0),
        (100, i32::MIN, 1e-8, -5),
        (1, i32::MAX, 1.0, 0),
        (-1, i32::MIN, 1.0, 0),
        (i32::MAX, i32::MAX, 1e-9, 0),
        (i32::MIN, i32::MIN, 1e-9, 0),
        (-(1 << 30), 1 << 30, 1.0, 17),
        (1 << 30, -(1 << 30) - 1, 1.0, -17),
        (-40, 30, 1.0, -20),
        (-40, 30, -1.0, -20),
    ];
    let host_runs = |target: &str| match target {
        "x86-avx512" => host_supports(IsaFeature::Avx512f),
        _ => host_supports(IsaFeature::Avx2),
    };
    let mut ran = 0;
    for (kernel, target_name) in [
        (KernelKind::VectorRequant, "x86-avx2"),
        (KernelKind::VectorRequant, "x86-avx512"),
        (KernelKind::ValueRequant, "x86-avx2"),
    ] {
        if !host_runs(target_name) {
            println!("skipped {kernel} on {target_name}: this host lacks its vector instructions");
            continue;
        }
        let target = Target::builtin(target_name, 2).expect("a built-in target");
        let case = case(kernel, target_name, &target);
        let lanes = case.spec.operands[0].shape.volume() as usize;
        for epilogue in [RequantEpilogue::Plain, RequantEpilogue::Bias, RequantEpilogue::BiasRelu] {
            for out_dtype in [Dtype::U8, Dtype::I8] {
                // The golden case with the output (and zero point) of `out_dtype`, and a bias
                // beside the scale in the forms with one.
                let mut spec: LogicalSpec = case.spec.logical().clone();
                spec.operands[2].dtype = out_dtype;
                spec.operands[3].dtype = out_dtype;
                spec.kind = PrimitiveKind::Requant { epilogue };
                if epilogue.has_bias() {
                    let mut bias = spec.operands[1].clone();
                    bias.dtype = Dtype::I32;
                    spec.operands.insert(1, bias);
                }
                let out = spec.operands.len() - 1;
                let emitted = lone_function(kernel, &spec, &target, "kernel").expect("emits");
                let options = CompileOptions {
                    features: emitted.kernel.features.clone(),
                    warnings: Warnings::Deny,
                    ..CompileOptions::default()
                };
                let signature = &emitted.kernel.signature;
                let source = verify_program_source(signature, &emitted.kernel.source).expect("a harness");
                for compiler in gcc_and_clang() {
                    let build = compiler.build(&one_unit(source.clone()), &options).expect("compiles");
                    for chunk in cases.chunks(lanes) {
                        let mut chunk = chunk.to_vec();
                        chunk.resize(lanes, (0, 0, 1.0, 0));
                        let zero = |z: i64| {
                            if out_dtype == Dtype::U8 { z.clamp(0, 255) } else { z.clamp(-128, 127) }
                        };
                        let eight = |values: Vec<i64>| match out_dtype {
                            Dtype::U8 => Buffer::U8(values.iter().map(|&v| v as u8).collect()),
                            _ => Buffer::I8(values.iter().map(|&v| v as i8).collect()),
                        };
                        let mut inputs = vec![
                            Buffer::I32(chunk.iter().map(|t| t.0).collect()),
                            Buffer::F32(chunk.iter().map(|t| t.2).collect()),
                            eight(chunk.iter().map(|t| zero(t.3)).collect()),
                        ];
                        let mut logical = vec![
                            chunk.iter().map(|t| Value::Int(i64::from(t.0))).collect::<Vec<_>>(),
                            chunk.iter().map(|t| Value::Float(t.2)).collect(),
                            chunk.iter().map(|t| Value::Int(zero(t.3))).collect(),
                            vec![Value::Int(0); lanes],
                        ];
                        if epilogue.has_bias() {
                            inputs.insert(1, Buffer::I32(chunk.iter().map(|t| t.1).collect()));
                            logical.insert(1, chunk.iter().map(|t| Value::Int(i64::from(t.1))).collect());
                        }
                        let run =
                            run_verify(&build, signature, &VerifyInputs::Buffers(inputs)).expect("runs");
                        let mut buffers: Vec<Values> = spec
                            .operands
                            .iter()
                            .zip(&logical)
                            .map(|(t, v)| Values::from_logical(t, v).expect("fits"))
                            .collect();
                        Interpreter::new(&target).execute_spec(&spec, &mut buffers).expect("interprets");
                        let expected: Vec<i64> = buffers[out]
                            .to_logical(&spec.operands[out])
                            .expect("fits")
                            .into_iter()
                            .map(|v| match v {
                                Value::Int(i) => i,
                                Value::Float(x) => panic!("a float output {x}"),
                            })
                            .collect();
                        assert_eq!(
                            run.params[out],
                            eight(expected),
                            "{kernel} {epilogue:?} with {compiler} into {out_dtype}: {chunk:?}"
                        );
                        ran += 1;
                    }
                }
            }
        }
    }
    println!("{ran} runs compared");
}

/// The kernel's lone function for `spec` compiled into a verifying program with gcc and clang
/// (warnings are errors): its signature and each compiler with its build.
fn lone_builds(
    kernel: KernelKind,
    spec: &LogicalSpec,
    target: &Target,
) -> (crate::harness::KernelSignature, Vec<(crate::compiler::Compiler, crate::compiler::Build)>) {
    use crate::compiler::{CompileOptions, Warnings};
    use crate::harness::verify_program_source;
    use crate::test_support::{gcc_and_clang, one_unit};

    let emitted = lone_function(kernel, spec, target, "kernel").expect("emits");
    let options = CompileOptions {
        features: emitted.kernel.features.clone(),
        warnings: Warnings::Deny,
        ..Default::default()
    };
    let signature = emitted.kernel.signature.clone();
    let source = verify_program_source(&signature, &emitted.kernel.source).expect("a harness");
    let builds = gcc_and_clang()
        .into_iter()
        .map(|compiler| {
            let build = compiler.build(&one_unit(source.clone()), &options).expect("compiles");
            (compiler, build)
        })
        .collect();
    (signature, builds)
}

/// The reference interpreter's integer output `output` of `spec` on the logical values of its
/// operands (each operand's, the outputs' ignored).
fn reference_ints(
    spec: &LogicalSpec,
    target: &Target,
    logical: &[Vec<morello_core::interp::Value>],
    output: usize,
) -> Vec<i64> {
    use morello_core::interp::{Buffer as Values, Interpreter, Value};

    let mut buffers: Vec<Values> =
        spec.operands.iter().zip(logical).map(|(t, v)| Values::from_logical(t, v).expect("fits")).collect();
    Interpreter::new(target).execute_spec(spec, &mut buffers).expect("interprets");
    buffers[output]
        .to_logical(&spec.operands[output])
        .expect("fits")
        .into_iter()
        .map(|v| match v {
            Value::Int(i) => i,
            Value::Float(x) => panic!("a float output {x}"),
        })
        .collect()
}

/// The shifted s8s8s32 matmul's pieces at the extremes: the column-sum corrections (rows and VNNI
/// quads, each vector width, and the scalar kernel on rows; its walk over the strips of a packed
/// `rhs` runs inside the searched trees of the end-to-end tests) on `rhs` all -128 and all 127 at
/// the largest `K` the shifted matmul takes (65792, a multiple of 4 within the u8s8s32 bound
/// 65793), and the shift of i8 values into u8 (all of them by the vector copy, the ends and the
/// values around 0 by the scalar one), compiled with gcc and clang, run on this host where it has
/// the instructions, and compared with the reference interpreter.
#[test]
fn shift_pieces_are_exact_at_the_extremes() {
    use morello_core::interp::Value;
    use morello_core::target::IsaFeature;

    use crate::harness::{Buffer, VerifyInputs, run_verify};
    use crate::host::host_supports;

    const K: u32 = 65_792;
    let quads = "[0, 1, 2, 1 p(4)]";
    let cases: Vec<(KernelKind, &str, String, Vec<IsaFeature>)> = vec![
        (KernelKind::VectorShiftCorrection, "x86-avx2", format!("1x{K}x8, i8 GL row-major"), vec![]),
        (
            KernelKind::VectorShiftCorrection,
            "x86-avx512",
            format!("1x{K}x16, i8 GL row-major"),
            vec![IsaFeature::Avx512f],
        ),
        (
            KernelKind::VectorShiftCorrection,
            "x86-avx512",
            format!("1x{K}x16, i8 GL {quads}"),
            vec![IsaFeature::Avx512f, IsaFeature::Avx512vnni],
        ),
        (
            KernelKind::VectorShiftCorrection,
            "x86-avx2-vnni",
            format!("1x{K}x8, i8 GL {quads}"),
            vec![IsaFeature::Avxvnni],
        ),
        (KernelKind::ValueShiftCorrection, "x86-avx2", format!("1x{K}x1, i8 GL row-major"), vec![]),
    ];
    let mut ran = 0;
    for (kernel, target_name, operands, needs) in cases {
        if let Some(missing) = needs.iter().find(|f| !host_supports(**f)) {
            println!("skipped {kernel} on {target_name} ({operands}): this host lacks {missing:?}");
            continue;
        }
        let target = Target::builtin(target_name, 2).expect("a built-in target");
        let text = format!("ShiftCorrection({operands}, i32 GL row-major)");
        let spec =
            LogicalSpec::parse(&text, &target).expect("parses").canonicalize(&target).expect("canonical");
        assert!(kernel.applies(&spec, &target), "{kernel} applies to {text}");
        let spec = spec.logical().clone();
        let (signature, builds) = lone_builds(kernel, &spec, &target);
        let [volume, outputs] = [0, 1].map(|o| spec.operands[o].shape.volume() as usize);
        for (compiler, build) in &builds {
            for value in [-128i8, 127] {
                let inputs = VerifyInputs::Buffers(vec![Buffer::I8(vec![value; volume])]);
                let run = run_verify(build, &signature, &inputs).expect("runs");
                let logical = [vec![Value::Int(i64::from(value)); volume], vec![Value::Int(0); outputs]];
                let expected = reference_ints(&spec, &target, &logical, 1);
                assert_eq!(expected[0], -128 * i64::from(value) * i64::from(K), "the reference");
                let expected = expected.into_iter().map(|v| i32::try_from(v).expect("an i32")).collect();
                assert_eq!(
                    run.params[1],
                    Buffer::I32(expected),
                    "{kernel} on {target_name} with {compiler}: {value}"
                );
                ran += 1;
            }
        }
    }
    // The shift: i8 values into u8, by the vector and the scalar copies.
    let target = Target::builtin("x86-avx2", 2).expect("a built-in target");
    for (kernel, text) in [
        (KernelKind::VectorAssign, "Move(256, i8 GL row-major, u8 VRF row-major v32)"),
        (KernelKind::ValueAssign, "Move(1, i8 GL row-major, u8 GL row-major)"),
    ] {
        let spec = LogicalSpec::parse(text, &target).expect("parses");
        let (signature, builds) = lone_builds(kernel, &spec, &target);
        let runs: Vec<Vec<i8>> = if spec.shape.volume() == 256 {
            vec![(-128i16..128).map(|v| v as i8).collect()]
        } else {
            [-128i8, -127, -1, 0, 1, 127].iter().map(|&v| vec![v]).collect()
        };
        for (compiler, build) in &builds {
            for values in &runs {
                let inputs = VerifyInputs::Buffers(vec![Buffer::I8(values.clone())]);
                let run = run_verify(build, &signature, &inputs).expect("runs");
                let shifted: Vec<u8> = values.iter().map(|&v| (i16::from(v) + 128) as u8).collect();
                assert_eq!(run.params[1], Buffer::U8(shifted), "{kernel} with {compiler}");
                ran += 1;
            }
        }
    }
    println!("{ran} runs compared");
}
