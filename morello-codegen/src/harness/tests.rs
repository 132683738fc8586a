//! Harness tests: signatures, the seeded generator against the C one, verification round trips,
//! the benchmark main, and crashes reported by signal.

use super::*;
use crate::compiler::{CProgram, SourceUnit};
use crate::run::Termination;
use crate::test_support::{compiler, gcc_and_clang, one_unit, strict};

const ADD: &str = "void add(const float *lhs, const float *rhs, float *out) {\n\
                   for (int i = 0; i < 5; i++) out[i] = lhs[i] + rhs[i];\n}\n";

fn add_signature() -> KernelSignature {
    KernelSignature::new(
        "add",
        vec![
            KernelParam::new("lhs", CType::F32, 5, ParamRole::Input),
            KernelParam::new("rhs", CType::F32, 5, ParamRole::Input),
            KernelParam::new("out", CType::F32, 5, ParamRole::Output),
        ],
    )
}

/// A hand-written 2x2x2 matmul with the morello kernel shape.
const MATMUL_2X2X2: &str = "static void mm(const float *restrict lhs, const float *restrict rhs,\n\
                            float *restrict out) {\n\
                            for (int i = 0; i < 2; i++)\n\
                            for (int j = 0; j < 2; j++) {\n\
                            float acc = 0.0f;\n\
                            for (int k = 0; k < 2; k++) acc += lhs[i * 2 + k] * rhs[k * 2 + j];\n\
                            out[i * 2 + j] = acc;\n}\n}\n";

#[test]
fn signatures_are_validated() {
    assert!(add_signature().validate().is_ok());
    let reason = |s: KernelSignature| match s.validate() {
        Err(CodegenError::InvalidSignature { reason }) => reason,
        other => panic!("expected an invalid signature, got {other:?}"),
    };
    assert!(reason(add_signature().renamed("2add")).contains("not a C identifier"));
    assert!(reason(add_signature().renamed("morello_k")).contains("reserved"));
    let mut twice = add_signature();
    twice.params[1].name = "lhs".into();
    assert!(reason(twice).contains("two parameters"));
    let mut empty = add_signature();
    empty.params[0].elements = 0;
    assert!(reason(empty).contains("zero elements"));
    let mut read_only = add_signature();
    read_only.params[2].role = ParamRole::Input;
    assert!(reason(read_only).contains("writes no parameter"));
    assert_eq!(add_signature().c_prototype(), "void add(const float *lhs, const float *rhs, float *out)");
}

#[test]
fn buffers_round_trip_through_bytes() {
    for c_type in CType::ALL {
        let buffer = Buffer::from_seed(c_type, 9, 3, 1);
        assert_eq!(buffer.len(), 9);
        assert_eq!(buffer.c_type(), c_type);
        let bytes = buffer.to_le_bytes();
        assert_eq!(bytes.len(), 9 * c_type.size_bytes());
        assert_eq!(Buffer::from_le_bytes(c_type, &bytes), Some(buffer));
    }
    assert_eq!(Buffer::from_le_bytes(CType::F32, &[0, 1, 2]), None);
    let floats = Buffer::from_seed(CType::F32, 1000, 0, 0);
    let values = floats.as_f32().expect("f32");
    assert!(values.iter().all(|v| (-2.0..2.0).contains(v) && (v * 16.0).fract() == 0.0));
}

#[test]
fn the_c_generator_matches_the_rust_one_for_every_type() {
    let Some(compiler) = compiler() else { return };
    let mut params: Vec<KernelParam> = CType::ALL
        .iter()
        .map(|&t| KernelParam::new(format!("in_{}", t.name()), t, 37, ParamRole::Input))
        .collect();
    params.push(KernelParam::new("out", CType::U8, 1, ParamRole::Output));
    let signature = KernelSignature::new("touch", params);
    let pointer_params = signature.c_prototype().replace("void touch", "");
    let kernel = format!(
        "static void touch{pointer_params} {{\n  (void)in_f32; (void)in_u32; (void)in_i32; (void)in_u16;\n  \
         (void)in_i16; (void)in_u8; (void)in_i8; (void)in_bf16;\n  out[0] = 1;\n}}\n"
    );
    let source = verify_program_source(&signature, &kernel).expect("valid");
    let build = compiler.build(&one_unit(source), &strict()).expect("compiles");
    let run = run_verify(&build, &signature, &VerifyInputs::Seed(0xDEAD_BEEF)).expect("runs");
    for (index, param) in signature.params.iter().enumerate().take(CType::ALL.len()) {
        let expected = Buffer::from_seed(param.c_type, param.elements, 0xDEAD_BEEF, index);
        assert_eq!(run.params[index], expected, "{}", param.name);
    }
    assert_eq!(run.param(&signature, "out"), Some(&Buffer::U8(vec![1])));
}

#[test]
fn verification_round_trips_an_elementwise_kernel_exactly() {
    let Some(compiler) = compiler() else { return };
    let signature = add_signature();
    let source = verify_program_source(&signature, ADD).expect("valid");
    let build = compiler.build(&one_unit(source), &strict()).expect("compiles");
    let lhs = vec![1.5f32, -2.0, 1e30, f32::MIN_POSITIVE, 0.1];
    let rhs = vec![2.25f32, 2.0, 1e30, 0.0, 0.2];
    let inputs = VerifyInputs::Buffers(vec![Buffer::F32(lhs.clone()), Buffer::F32(rhs.clone())]);
    let run = run_verify(&build, &signature, &inputs).expect("runs");
    let expected: Vec<f32> = lhs.iter().zip(&rhs).map(|(a, b)| a + b).collect();
    assert_eq!(run.params[2], Buffer::F32(expected));
    assert_eq!(run.params[0], Buffer::F32(lhs));
}

#[test]
fn verification_runs_a_hand_written_2x2x2_matmul_with_gcc_and_clang() {
    let signature = KernelSignature::matmul("mm", CType::F32, 2, 2, 2);
    let source = verify_program_source(&signature, MATMUL_2X2X2).expect("valid");
    for compiler in gcc_and_clang() {
        let build = compiler.build(&one_unit(source.clone()), &strict()).expect("compiles warning-free");
        let inputs = VerifyInputs::Buffers(vec![
            Buffer::F32(vec![1.0, 2.0, 3.0, 4.0]),
            Buffer::F32(vec![5.0, 6.0, 7.0, 8.0]),
        ]);
        let run = run_verify(&build, &signature, &inputs).expect("runs");
        assert_eq!(run.params[2], Buffer::F32(vec![19.0, 22.0, 43.0, 50.0]), "{compiler}");
    }
}

#[test]
fn in_out_parameters_are_read_then_written() {
    let Some(compiler) = compiler() else { return };
    let signature = KernelSignature::new(
        "acc",
        vec![
            KernelParam::new("x", CType::U32, 3, ParamRole::Input),
            KernelParam::new("total", CType::U32, 3, ParamRole::InOut),
        ],
    );
    let kernel = "void acc(const uint32_t *x, uint32_t *total) {\n  for (int i = 0; i < 3; i++) total[i] += x[i];\n}\n";
    let source = verify_program_source(&signature, kernel).expect("valid");
    let build = compiler.build(&one_unit(source), &strict()).expect("compiles");
    let inputs = VerifyInputs::Buffers(vec![Buffer::U32(vec![1, 2, u32::MAX]), Buffer::U32(vec![10, 20, 2])]);
    let run = run_verify(&build, &signature, &inputs).expect("runs");
    assert_eq!(run.params[1], Buffer::U32(vec![11, 22, 1]));
}

#[test]
fn a_wrong_buffer_is_refused_before_running() {
    let Some(compiler) = compiler() else { return };
    let signature = add_signature();
    let build = compiler
        .build(&one_unit(verify_program_source(&signature, ADD).expect("valid")), &strict())
        .expect("compiles");
    let short = VerifyInputs::Buffers(vec![Buffer::F32(vec![0.0; 4]), Buffer::F32(vec![0.0; 5])]);
    match run_verify(&build, &signature, &short) {
        Err(CodegenError::BadBuffer { param, reason }) => {
            assert_eq!(param, "lhs");
            assert_eq!(reason, "expected f32[5], got f32[4]");
        }
        other => panic!("expected BadBuffer, got {other:?}"),
    }
}

#[test]
fn a_kernel_raising_sigill_is_reported_as_such() {
    let Some(compiler) = compiler() else { return };
    let signature = add_signature();
    let kernel = "#include <signal.h>\nvoid add(const float *lhs, const float *rhs, float *out) {\n\
                  (void)lhs; (void)rhs; (void)out;\n  raise(SIGILL);\n}\n";
    let source = verify_program_source(&signature, kernel).expect("valid");
    let build = compiler.build(&one_unit(source), &strict()).expect("compiles");
    let error = run_verify(&build, &signature, &VerifyInputs::Seed(1)).expect_err("dies");
    match &error {
        CodegenError::Signalled { termination, .. } => assert_eq!(*termination, Termination::Signal(4)),
        other => panic!("expected Signalled, got {other:?}"),
    }
    assert!(
        error
            .to_string()
            .contains("SIGILL (illegal instruction: the binary uses instructions this CPU lacks)")
    );
}

#[test]
fn the_standalone_bench_main_alternates_candidates() {
    let Some(compiler) = compiler() else { return };
    let signature = add_signature();
    let sub = "void sub(const float *lhs, const float *rhs, float *out) {\n\
               for (int i = 0; i < 5; i++) out[i] = lhs[i] - rhs[i];\n}\n";
    let entries = [BenchEntry::new("add", "add"), BenchEntry::new("sub-1.0", "sub")];
    let source = bench_program_source(&signature, ADD, &entries).expect("valid");
    let program = CProgram {
        units: vec![SourceUnit::new("bench", source), SourceUnit::new("sub", sub)],
        link_args: Vec::new(),
    };
    let build = compiler.build(&program, &strict()).expect("compiles");
    let args: Vec<String> = ["--samples", "3", "--min-seconds", "0.002", "--cpu", "0", "--seed", "9"]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    let output = crate::run::run_program(build.binary(), &args, &[]).expect("runs");
    let samples: Vec<SampleLine> = output.stdout.lines().filter_map(parse_sample_line).collect();
    let order: Vec<usize> = samples.iter().map(|s| s.candidate).collect();
    assert_eq!(order, [0, 1, 1, 0, 0, 1], "{}", output.stdout);
    for sample in &samples {
        assert_eq!(sample.label, if sample.candidate == 0 { "add" } else { "sub-1.0" });
        assert!(sample.seconds_per_call > 0.0 && sample.seconds_per_call < 1e-3, "{sample:?}");
        assert!(sample.seconds_per_call * sample.reps as f64 >= 0.002 * 0.5, "{sample:?}");
    }
}

/// `--cold` evicts every parameter's buffer (all of its bytes) before each call, and the program
/// still calibrates and prints its samples.
#[test]
fn the_bench_main_times_cold_calls_after_evicting_every_buffer() {
    let signature = add_signature();
    let source = bench_program_source(&signature, ADD, &[BenchEntry::new("add", "add")]).expect("valid");
    for param in 0..3 {
        assert!(source.contains(&format!("morello_evict(morello_p{param}, 20u);")), "{source}");
    }
    let Some(compiler) = compiler() else { return };
    let build = compiler.build(&one_unit(source), &strict()).expect("compiles");
    let args: Vec<String> =
        ["--samples", "2", "--min-seconds", "0.002", "--cold"].iter().map(|s| (*s).to_string()).collect();
    let output = crate::run::run_program(build.binary(), &args, &[]).expect("runs");
    let samples: Vec<SampleLine> = output.stdout.lines().filter_map(parse_sample_line).collect();
    assert_eq!(samples.len(), 2, "{}", output.stdout);
    for sample in &samples {
        assert!(sample.seconds_per_call > 0.0 && sample.seconds_per_call < 1e-3, "{sample:?}");
        assert!(sample.seconds_per_call * sample.reps as f64 >= 0.002 * 0.5, "{sample:?}");
    }
}

/// The loops that make the timed calls start on a 64-byte boundary whatever code comes before
/// them (here a kernel unit of another size in front of the harness), and the pointers to the
/// buffers they pass start a page. Read from the program's symbol table with `nm` (binutils,
/// which gcc needs anyway); skipped with the reason without it.
#[test]
fn the_timing_loops_start_on_64_byte_boundaries_whatever_precedes_them() {
    let Some(compiler) = compiler() else { return };
    let padding = |n: usize| {
        let body: String =
            (0..n).map(|i| format!("  out[{}] += lhs[{}] * {i}.5f;\n", i % 5, i % 5)).collect();
        format!("void pad(const float *lhs, float *out) {{\n{body}}}\n")
    };
    for n in [1, 7, 40] {
        let source =
            bench_program_source(&add_signature(), ADD, &[BenchEntry::new("add", "add")]).expect("valid");
        let program = CProgram {
            units: vec![SourceUnit::new("pad", padding(n)), SourceUnit::new("bench", source)],
            link_args: Vec::new(),
        };
        let build = compiler.build(&program, &strict()).expect("compiles");
        let output = match std::process::Command::new("nm").arg(build.binary()).output() {
            Ok(output) if output.status.success() => output,
            _ => {
                eprintln!("skipped: `nm` did not run, so the symbols' addresses cannot be read");
                return;
            }
        };
        let symbols = String::from_utf8_lossy(&output.stdout);
        for (name, alignment) in [("morello_repeat", 64), ("morello_repeat_cold", 64), ("morello_args", 4096)]
        {
            let address = symbols
                .lines()
                .find_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
                    [address, _, symbol] if symbol == name => u64::from_str_radix(address, 16).ok(),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{name} is not in the symbol table:\n{symbols}"));
            assert_eq!(address % alignment, 0, "{name} at {address:#x} with {n} padding statements");
        }
    }
}

#[test]
fn small_buffers_are_packed_in_one_mapping_and_large_ones_get_their_own() {
    use super::bench_main::{BufferPlace, buffer_places};
    let shared = |offset| BufferPlace::Shared { offset };
    // Three 1 KiB buffers: where a fresh glibc `malloc` puts them (page offsets 0x080, 0x500, 0x980).
    assert_eq!(buffer_places(&[1024; 3]), (4096, vec![shared(0x80), shared(0x500), shared(0x980)]));
    // Sizes are rounded up to 128 bytes first; 16 bytes of header between buffers.
    assert_eq!(buffer_places(&[20, 300, 128]), (4096, vec![shared(0x80), shared(0x180), shared(0x380)]));
    // From 128 KiB, a mapping each, a page longer than the buffer.
    let own = BufferPlace::Own { mapping: (4 << 20) + 4096, offset: 128 };
    assert_eq!(buffer_places(&[4 << 20; 3]), (0, vec![own; 3]));
    let (arena, places) = buffer_places(&[400, (128 << 10) - 1, 5000]);
    assert_eq!(arena, 8192);
    assert_eq!(
        places,
        [shared(0x80), BufferPlace::Own { mapping: (128 << 10) + 4096, offset: 128 }, shared(0x300)]
    );
    // Past the harness's pointers to the buffers, 8 bytes each, where there are more than 16.
    let (_, places) = buffer_places(&[64; 17]);
    assert_eq!((places[0], places[1]), (shared(0x100), shared(0x200)));
}

/// The buffers sit at the same offsets within their pages whatever the program allocated before
/// `main` (a library that allocates as it loads, as OpenBLAS does): here a constructor in another
/// unit allocates 1,600 bytes, and the candidate prints where its arguments are.
#[test]
fn buffers_sit_where_the_layout_says_whatever_was_allocated_first() {
    let Some(compiler) = compiler() else { return };
    let signature = KernelSignature::new(
        "where",
        vec![
            KernelParam::new("lhs", CType::F32, 256, ParamRole::Input),
            KernelParam::new("rhs", CType::F32, 64 << 10, ParamRole::Input),
            KernelParam::new("out", CType::F32, 256, ParamRole::Output),
        ],
    );
    let kernel = "#include <stdint.h>\n#include <stdio.h>\n\
                  void where(const float *lhs, const float *rhs, float *out) {\n\
                  static int printed;\n\
                  if (!printed++) fprintf(stderr, \"at %lx %lx %lx\\n\", (unsigned long)((uintptr_t)lhs & 4095),\n\
                  (unsigned long)((uintptr_t)rhs & 4095), (unsigned long)((uintptr_t)out & 4095));\n}\n";
    let early = "#include <stdlib.h>\nvoid *morello_test_early;\n\
                 __attribute__((constructor)) static void allocate_early(void) {\n\
                 morello_test_early = malloc(1600);\n}\n";
    let args: Vec<String> =
        ["--samples", "1", "--min-seconds", "0"].iter().map(|s| (*s).to_string()).collect();
    for units in [1, 2] {
        let source =
            bench_program_source(&signature, kernel, &[BenchEntry::new("where", "where")]).expect("valid");
        let mut program = CProgram { units: vec![SourceUnit::new("bench", source)], link_args: Vec::new() };
        if units == 2 {
            program.units.push(SourceUnit::new("early", early));
        }
        let build = compiler.build(&program, &strict()).expect("compiles");
        let output = crate::run::run_program(build.binary(), &args, &[]).expect("runs");
        // lhs and out share a mapping (0x080, 0x500); rhs (256 KiB) has its own.
        assert!(output.stderr.contains("at 80 80 500"), "with {units} units: {}", output.stderr);
    }
}

#[test]
fn bench_entries_are_validated() {
    let signature = add_signature();
    assert!(bench_program_source(&signature, ADD, &[]).is_err());
    let bad_label = [BenchEntry::new("has space", "add")];
    assert!(bench_program_source(&signature, ADD, &bad_label).is_err());
    let twice = [BenchEntry::new("a", "add"), BenchEntry::new("a", "add")];
    assert!(bench_program_source(&signature, ADD, &twice).is_err());
}

#[test]
fn sample_lines_parse_strictly() {
    assert_eq!(
        parse_sample_line("sample\t2\topenblas\t100\t1.5e-06\n"),
        Some(SampleLine { candidate: 2, label: "openblas".into(), reps: 100, seconds_per_call: 1.5e-6 })
    );
    assert_eq!(parse_sample_line("ready\t2"), None);
    assert_eq!(parse_sample_line("sample\t2\tx\t100"), None);
    assert_eq!(parse_sample_line("sample\t2\tx\t100\tnan"), None);
}

#[test]
fn harnesses_for_every_type_compile_warning_free_with_gcc_and_clang() {
    let params: Vec<KernelParam> = CType::ALL
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            let role = [ParamRole::Input, ParamRole::InOut, ParamRole::Output][i % 3];
            KernelParam::new(format!("p_{}", t.name()), t, 3 + i, role)
        })
        .collect();
    let signature = KernelSignature::new("kernel_all_types", params);
    let casts: String = signature.params.iter().map(|p| format!("  (void){};\n", p.name)).collect();
    let kernel = format!("{} {{\n{casts}}}\n", signature.c_prototype());
    let verify = verify_program_source(&signature, &kernel).expect("valid");
    let bench = bench_program_source(&signature, &kernel, &[BenchEntry::new("k", "kernel_all_types")])
        .expect("valid");
    for compiler in gcc_and_clang() {
        for source in [&verify, &bench] {
            let build = compiler.build(&one_unit(source.clone()), &strict());
            assert!(build.is_ok(), "{compiler}: {}", build.err().map(|e| e.to_string()).unwrap_or_default());
        }
    }
}
