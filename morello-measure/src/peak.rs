//! The throughput probes: this machine's single-core peak f32 GFLOP/s, measured by a C program
//! that keeps many independent fused multiply-add chains in flight, and its int8 peak in GOPS
//! (8-bit multiplies and adds, two per multiply-add, as a matmul's `2 M K N` counts them), from
//! the same program around the instruction the target's int8 kernels use.
//!
//! Each iteration of the probe's loop advances `chains` independent accumulators by one vector
//! FMA (`acc = acc * x + y`, with `x` slightly below 1 so nothing overflows or goes subnormal).
//! With more chains than FMA latency times FMA ports (4 x 2 = 8 on current x86 cores) the loop is
//! throughput-bound, so
//!
//! ```text
//! peak GFLOP/s = iterations * chains * lanes * 2 / seconds / 1e9
//! ```
//!
//! The AVX-512 variant (16 lanes, 16 chains) is used when the host has AVX-512F, else the
//! AVX2+FMA variant (8 lanes, 12 chains: 16 ymm registers). The reported peak is the best of the
//! samples (a peak, not a typical figure). The probe pins itself with `sched_setaffinity` and
//! times its loop in the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), so the peak is what the
//! core does while the probe runs, whatever else the machine runs beside it (the wall clock would
//! also count the time other work holds the core, and a shared machine's peak would swing with it).
//!
//! The int8 variants ([`PeakVariant::for_int8`]) chain the target's int8 kernel instruction the
//! same way, on integers (wrapping, so any values do):
//!
//! ```text
//! Vnni512     acc = vpdpbusd(acc, x, y)          zmm: 16 i32 lanes x 4 u8*s8 products
//! AvxVnni     acc = vpdpbusd(acc, x, y)          ymm (VEX): 8 lanes x 4
//! Avx2Pairs   acc = vpaddd(vpmaddwd(acc, x), y)  ymm: 8 lanes x 2 i16 products (one chain
//!                                                through both, as the kernel adds each product)
//! peak GOPS = iterations * chains * lanes * products per lane * 2 / seconds / 1e9
//! ```
//!
//! The `vpdpbusd` chains call the `asm` helpers the kernels call (`morello_dpbusd_m512`,
//! `morello_dpbusd_m256`): gcc 12 compiles a loop of `_mm512_dpbusd_epi32` chains with two
//! registers per chain, copied every step, and stores some chains to the stack each iteration,
//! so the probe timed those copies and stores rather than the instruction, and its result swung
//! by 1.8x from run to run. Through the helpers each chain keeps one register and the loop is the
//! `chains` instructions and the loop's increment and branch alone.

use std::fmt::Write as _;

use serde::Serialize;

use morello_codegen::CodegenError;
use morello_codegen::compiler::{CProgram, CompileOptions, Compiler, SourceUnit};
use morello_codegen::emit::helpers::{Helper, definitions};

use crate::error::MeasureError;
use morello_codegen::harness::parse_sample_line;
use morello_codegen::host::{host_supports, require_features};
use morello_codegen::run::run_program;
use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::operators::Arithmetic;
use morello_core::spec::LogicalSpec;
use morello_core::target::{IsaFeature, Target};

/// Which instruction and vector width the probe uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PeakVariant {
    /// 512-bit `_mm512_fmadd_ps`.
    Avx512,
    /// 256-bit `_mm256_fmadd_ps`.
    Avx2,
    /// 512-bit `vpdpbusd` (AVX-512 VNNI), what `BroadcastQuadDot` runs.
    Vnni512,
    /// 256-bit VEX `vpdpbusd` (AVX-VNNI), what `BroadcastQuadDotAvx` runs.
    AvxVnni,
    /// 256-bit `vpmaddwd` then `vpaddd` (AVX2), what `BroadcastPairDot` runs.
    Avx2Pairs,
}

impl PeakVariant {
    /// The widest variant the host can run, if it has FMA at all.
    pub fn for_host() -> Option<Self> {
        if host_supports(IsaFeature::Avx512f) && host_supports(IsaFeature::Fma) {
            Some(PeakVariant::Avx512)
        } else if host_supports(IsaFeature::Avx2) && host_supports(IsaFeature::Fma) {
            Some(PeakVariant::Avx2)
        } else {
            None
        }
    }

    /// The int8 variant of the kernels `target` has (its int8 matmul kernel's instruction), if any
    /// is an x86 one: `BroadcastQuadDot` first, as the search prefers the widest.
    pub fn for_int8(target: &Target) -> Option<Self> {
        let has = |kind: KernelKind| target.kernels().contains(&kind);
        if has(KernelKind::BroadcastQuadDot) {
            Some(PeakVariant::Vnni512)
        } else if has(KernelKind::BroadcastQuadDotAvx) {
            Some(PeakVariant::AvxVnni)
        } else if has(KernelKind::BroadcastPairDot) {
            Some(PeakVariant::Avx2Pairs)
        } else {
            None
        }
    }

    /// The variant whose peak a spec's throughput is a percentage of: the int8 one of `target`
    /// for a spec whose inputs are 8-bit integers, the host's f32 one for an all-f32 spec, none
    /// otherwise (and none for a spec without arithmetic).
    pub fn for_spec(spec: &LogicalSpec, target: &Target) -> Option<Self> {
        if spec.kind.arithmetic() != Arithmetic::MultiplyAdd {
            return None;
        }
        let int8 = |d: Dtype| matches!(d, Dtype::U8 | Dtype::I8);
        if spec.operands.len() >= 2 && int8(spec.operands[0].dtype) && int8(spec.operands[1].dtype) {
            PeakVariant::for_int8(target)
        } else if spec.operands.iter().all(|o| o.dtype == Dtype::F32) {
            PeakVariant::for_host()
        } else {
            None
        }
    }

    /// Whether it counts 8-bit integer operations (GOPS) rather than f32 ones (GFLOP/s).
    pub fn is_int8(self) -> bool {
        !matches!(self, PeakVariant::Avx512 | PeakVariant::Avx2)
    }

    /// The instruction and width, for reports: `AVX-512 FMA`, `AVX-512 VNNI vpdpbusd`, ...
    pub fn name(self) -> &'static str {
        match self {
            PeakVariant::Avx512 => "AVX-512 FMA",
            PeakVariant::Avx2 => "AVX2 FMA",
            PeakVariant::Vnni512 => "AVX-512 VNNI vpdpbusd",
            PeakVariant::AvxVnni => "AVX-VNNI vpdpbusd",
            PeakVariant::Avx2Pairs => "AVX2 vpmaddwd+vpaddd",
        }
    }

    /// 32-bit lanes per vector.
    pub fn lanes(self) -> u32 {
        match self {
            PeakVariant::Avx512 | PeakVariant::Vnni512 => 16,
            PeakVariant::Avx2 | PeakVariant::AvxVnni | PeakVariant::Avx2Pairs => 8,
        }
    }

    /// Multiply-adds per lane of one step of a chain.
    pub fn products_per_lane(self) -> u32 {
        match self {
            PeakVariant::Avx512 | PeakVariant::Avx2 => 1,
            PeakVariant::Vnni512 | PeakVariant::AvxVnni => 4,
            PeakVariant::Avx2Pairs => 2,
        }
    }

    /// Independent chains.
    pub fn chains(self) -> u32 {
        match self {
            PeakVariant::Avx512 | PeakVariant::Vnni512 => 16,
            PeakVariant::Avx2 | PeakVariant::AvxVnni | PeakVariant::Avx2Pairs => 12,
        }
    }

    /// The features the variant is compiled with.
    pub fn features(self) -> Vec<IsaFeature> {
        let avx2 = [IsaFeature::Avx, IsaFeature::Avx2];
        let extra: &[IsaFeature] = match self {
            PeakVariant::Avx512 => &[IsaFeature::Fma, IsaFeature::Avx512f],
            PeakVariant::Avx2 => &[IsaFeature::Fma],
            PeakVariant::Vnni512 => &[IsaFeature::Avx512f, IsaFeature::Avx512vnni],
            PeakVariant::AvxVnni => &[IsaFeature::Avxvnni],
            PeakVariant::Avx2Pairs => &[],
        };
        avx2.iter().chain(extra).copied().collect()
    }

    /// Operations (a multiply-add counts two) per iteration of the probe's loop.
    fn operations_per_iteration(self) -> u32 {
        self.chains() * self.lanes() * self.products_per_lane() * 2
    }
}

/// How to run the probe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeakConfig {
    /// Minimum seconds per sample.
    pub min_seconds: f64,
    /// Samples (the best is reported), at least 1.
    pub samples: usize,
    /// The CPU to pin to, if any.
    pub cpu: Option<usize>,
}

impl Default for PeakConfig {
    fn default() -> Self {
        PeakConfig { min_seconds: 0.2, samples: 3, cpu: None }
    }
}

/// The measured peak.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeakReport {
    /// The variant that ran.
    pub variant: PeakVariant,
    /// The best sample, in f32 GFLOP/s on one core (int8 GOPS for an int8 variant).
    pub gflops: f64,
    /// Every sample, in GFLOP/s.
    pub samples_gflops: Vec<f64>,
}

/// The C of one probe: its vector type, how a chain starts from `i` and from the constants `x`
/// and `y`, its step (`{a}` the chain), how two chains add, and how a vector is stored to
/// `lanes`, the array of the element type `element`.
struct ProbeC {
    /// The helper the step calls, defined before the probe.
    helper: Option<Helper>,
    vector: &'static str,
    element: &'static str,
    constants: &'static str,
    start: &'static str,
    step: &'static str,
    add: &'static str,
    store: &'static str,
}

impl ProbeC {
    fn of(variant: PeakVariant) -> Self {
        match variant {
            PeakVariant::Avx512 => ProbeC {
                helper: None,
                vector: "__m512",
                element: "float",
                constants: "_mm512_set1_ps(probe_x);\n  const __m512 y = _mm512_set1_ps(probe_y)",
                start: "_mm512_set1_ps((float){i})",
                step: "_mm512_fmadd_ps({a}, x, y)",
                add: "_mm512_add_ps",
                store: "_mm512_storeu_ps",
            },
            PeakVariant::Avx2 => ProbeC {
                helper: None,
                vector: "__m256",
                element: "float",
                constants: "_mm256_set1_ps(probe_x);\n  const __m256 y = _mm256_set1_ps(probe_y)",
                start: "_mm256_set1_ps((float){i})",
                step: "_mm256_fmadd_ps({a}, x, y)",
                add: "_mm256_add_ps",
                store: "_mm256_storeu_ps",
            },
            PeakVariant::Vnni512 => ProbeC {
                helper: Some(Helper::DpbusdM512),
                vector: "__m512i",
                element: "int",
                constants: "_mm512_set1_epi32(probe_i);\n  const __m512i y = _mm512_set1_epi32(probe_j)",
                start: "_mm512_set1_epi32({i})",
                step: "morello_dpbusd_m512({a}, x, y)",
                add: "_mm512_add_epi32",
                store: "_mm512_storeu_si512",
            },
            PeakVariant::AvxVnni => ProbeC {
                helper: Some(Helper::DpbusdM256),
                vector: "__m256i",
                element: "int",
                constants: "_mm256_set1_epi32(probe_i);\n  const __m256i y = _mm256_set1_epi32(probe_j)",
                start: "_mm256_set1_epi32({i})",
                step: "morello_dpbusd_m256({a}, x, y)",
                add: "_mm256_add_epi32",
                store: "_mm256_storeu_si256",
            },
            PeakVariant::Avx2Pairs => ProbeC {
                helper: None,
                vector: "__m256i",
                element: "int",
                constants: "_mm256_set1_epi32(probe_i);\n  const __m256i y = _mm256_set1_epi32(probe_j)",
                start: "_mm256_set1_epi32({i})",
                step: "_mm256_add_epi32(_mm256_madd_epi16({a}, x), y)",
                add: "_mm256_add_epi32",
                store: "_mm256_storeu_si256",
            },
        }
    }
}

/// The probe's C source for `variant`.
pub fn peak_probe_source(variant: PeakVariant) -> String {
    let ProbeC { helper, vector, element, constants, start, step, add, store } = ProbeC::of(variant);
    let lanes = variant.lanes();
    let chains = variant.chains();
    let flops_per_iteration = variant.operations_per_iteration();
    let mut c = String::from(
        "/* morello peak probe: independent FMA chains, throughput-bound. */\n\
         #define _GNU_SOURCE\n#include <immintrin.h>\n#include <sched.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n\n\
         static double probe_now(void) {\n  struct timespec t;\n  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);\n  \
         return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;\n}\n\n\
         static volatile float probe_x = 0.9999999f;\nstatic volatile float probe_y = 1e-7f;\n\
         static volatile int probe_i = 0x01020304;\nstatic volatile int probe_j = -0x05060708;\n\
         static volatile double probe_sink;\n\n",
    );
    c.push_str(&definitions(&helper.into_iter().collect()));
    let _ = writeln!(c, "static double probe_run(long iterations) {{");
    let _ = writeln!(c, "  (void)probe_x, (void)probe_y, (void)probe_i, (void)probe_j;");
    let _ = writeln!(c, "  const {vector} x = {constants};");
    for i in 0..chains {
        let _ = writeln!(c, "  {vector} a{i} = {};", start.replace("{i}", &i.to_string()));
    }
    let _ = writeln!(c, "  double start = probe_now();\n  for (long i = 0; i < iterations; i++) {{");
    for i in 0..chains {
        let _ = writeln!(c, "    a{i} = {};", step.replace("{a}", &format!("a{i}")));
    }
    let _ = writeln!(c, "  }}\n  double seconds = probe_now() - start;");
    let sum = (1..chains).fold("a0".to_string(), |acc, i| format!("{add}({acc}, a{i})"));
    let _ = write!(
        c,
        r#"  {element} lanes[{lanes}];
  {store}((void *)lanes, {sum});
  probe_sink = (double)lanes[0];
  return seconds;
}}

int main(int argc, char **argv) {{
  double min_seconds = argc > 1 ? strtod(argv[1], NULL) : 0.2;
  long samples = argc > 2 ? strtol(argv[2], NULL, 0) : 3;
  if (argc > 3) {{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(argv[3]), &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {{
      fprintf(stderr, "peak probe: cannot pin to CPU %s\n", argv[3]);
      return 3;
    }}
  }}
  long iterations = 1000;
  (void)probe_run(iterations);
  for (;;) {{
    double seconds = probe_run(iterations);
    if (seconds >= min_seconds || iterations >= (1L << 40)) break;
    double scale = seconds > 0.0 ? 1.2 * min_seconds / seconds : 100.0;
    if (scale > 100.0) scale = 100.0;
    if (scale < 2.0) scale = 2.0;
    iterations = (long)((double)iterations * scale);
  }}
  for (long s = 0; s < samples; s++) {{
    double seconds = probe_run(iterations);
    printf("sample\t0\tpeak\t%ld\t%.9e\n", iterations, seconds / (double)iterations);
  }}
  return 0;
}}
/* flops per iteration: {flops_per_iteration} */
"#
    );
    c
}

/// Compiles and runs the probe for the host's widest f32 variant.
///
/// # Errors
/// [`CodegenError::MissingHostFeatures`] if the host has no FMA; compile and run errors;
/// [`MeasureError::InvalidBench`] for zero samples.
pub fn measure_peak(compiler: &Compiler, config: &PeakConfig) -> Result<PeakReport, MeasureError> {
    let Some(variant) = PeakVariant::for_host() else {
        require_features(&[IsaFeature::Avx2, IsaFeature::Fma])?;
        return Err(CodegenError::MissingHostFeatures { missing: vec![IsaFeature::Fma] }.into());
    };
    measure_peak_of(compiler, config, variant)
}

/// Compiles and runs the probe of `variant`.
///
/// # Errors
/// [`CodegenError::MissingHostFeatures`] if the host lacks a feature the variant needs; compile
/// and run errors; [`MeasureError::InvalidBench`] for zero samples.
pub fn measure_peak_of(
    compiler: &Compiler,
    config: &PeakConfig,
    variant: PeakVariant,
) -> Result<PeakReport, MeasureError> {
    if config.samples == 0 {
        return Err(MeasureError::invalid("the peak probe needs at least one sample"));
    }
    require_features(&variant.features())?;
    let options = CompileOptions { features: variant.features(), ..CompileOptions::default() };
    let program =
        CProgram { units: vec![SourceUnit::new("peak", peak_probe_source(variant))], link_args: Vec::new() };
    let build = compiler.build(&program, &options)?;
    let mut args = vec![config.min_seconds.to_string(), config.samples.to_string()];
    args.extend(config.cpu.map(|cpu| cpu.to_string()));
    let output = run_program(build.binary(), &args, &[])?;
    let flops_per_iteration = f64::from(variant.operations_per_iteration());
    let samples_gflops: Vec<f64> = output
        .stdout
        .lines()
        .filter_map(parse_sample_line)
        .filter(|s| s.seconds_per_call > 0.0)
        .map(|s| flops_per_iteration / s.seconds_per_call / 1e9)
        .collect();
    let gflops = samples_gflops.iter().copied().fold(f64::NAN, f64::max);
    if samples_gflops.len() != config.samples || !gflops.is_finite() {
        return Err(MeasureError::BadOutput {
            program: build.binary().to_path_buf(),
            detail: format!("expected {} peak samples, got:\n{}", config.samples, output.stdout),
        });
    }
    Ok(PeakReport { variant, gflops, samples_gflops })
}

#[cfg(test)]
mod tests {
    use super::*;
    use morello_codegen::test_support::compiler;

    #[test]
    fn the_probe_compiles_warning_free_and_measures_a_positive_peak() {
        let Some(compiler) = compiler() else { return };
        if PeakVariant::for_host().is_none() {
            println!("skipped: the host has no FMA");
            return;
        }
        // The host's variant is compiled by `measure_peak` below; check the other one compiles.
        let others = [
            PeakVariant::Avx2,
            PeakVariant::Avx512,
            PeakVariant::Vnni512,
            PeakVariant::AvxVnni,
            PeakVariant::Avx2Pairs,
        ]
        .into_iter()
        .filter(|v| Some(*v) != PeakVariant::for_host());
        for variant in others {
            let options = CompileOptions {
                features: variant.features(),
                warnings: morello_codegen::compiler::Warnings::Deny,
                ..CompileOptions::default()
            };
            let program = CProgram {
                units: vec![SourceUnit::new("peak", peak_probe_source(variant))],
                link_args: vec![],
            };
            compiler.build(&program, &options).expect("the probe compiles without warnings");
        }
        let config = PeakConfig { min_seconds: 0.005, samples: 2, cpu: Some(0) };
        let report = measure_peak(&compiler, &config).expect("runs");
        assert_eq!(report.samples_gflops.len(), 2);
        // Far below any x86 core with FMA, far above none.
        assert!(report.gflops > 1.0 && report.gflops < 10_000.0, "{report:?}");
    }

    /// Each int8 variant the host runs measures a peak, above the f32 peak per instruction: a
    /// `vpdpbusd` does 4 products per lane where an FMA does 1.
    #[test]
    fn the_int8_probes_measure_their_instruction() {
        let Some(compiler) = compiler() else { return };
        let config = PeakConfig { min_seconds: 0.005, samples: 2, cpu: Some(0) };
        for variant in [PeakVariant::Vnni512, PeakVariant::AvxVnni, PeakVariant::Avx2Pairs] {
            if !variant.features().into_iter().all(host_supports) {
                println!("skipped: the {} probe (the host lacks {:?})", variant.name(), variant.features());
                continue;
            }
            let report = measure_peak_of(&compiler, &config, variant).expect("runs");
            assert!(report.gflops > 1.0 && report.gflops < 100_000.0, "{report:?}");
            assert!(variant.is_int8(), "{variant:?}");
        }
    }

    /// The `vpdpbusd` probe's loop is its chains' instructions, each chain in one register: no
    /// copies between registers, no stack traffic (compiled only, so any x86 host checks it).
    #[test]
    fn the_vnni_probe_keeps_each_chain_in_one_register() {
        let Some(compiler) = compiler() else { return };
        let variant = PeakVariant::Vnni512;
        let options = CompileOptions { features: variant.features(), ..CompileOptions::default() };
        let program =
            CProgram { units: vec![SourceUnit::new("peak", peak_probe_source(variant))], link_args: vec![] };
        let build = compiler.build(&program, &options).expect("the probe compiles");
        let disassembly = match std::process::Command::new("objdump").arg("-d").arg(build.binary()).output() {
            Ok(output) if output.status.success() => String::from_utf8_lossy(&output.stdout).into_owned(),
            _ => {
                println!("skipped: objdump does not run here");
                return;
            }
        };
        let lines: Vec<&str> = disassembly.lines().collect();
        let dots: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains("vpdpbusd")).collect();
        let (Some(&first), Some(&last)) = (dots.first(), dots.last()) else {
            panic!("no vpdpbusd in the probe:\n{disassembly}");
        };
        let chains = usize::try_from(variant.chains()).expect("small");
        assert_eq!(dots.len(), chains, "one vpdpbusd per chain:\n{}", lines[first..=last].join("\n"));
        let between = &lines[first..=last];
        assert!(
            !between.iter().any(|l| l.contains("vmovdq") || l.contains("(%r")),
            "the loop copies or spills its chains:\n{}",
            between.join("\n")
        );
    }

    #[test]
    fn a_spec_is_measured_against_its_kernels_instruction() {
        let spec = |target: &Target, text: &str| {
            LogicalSpec::parse(text, target)
                .expect("parses")
                .canonicalize(target)
                .expect("valid")
                .logical()
                .clone()
        };
        let int8 = "Matmul(1x8x8x16, u8 GL row-major, i8 GL row-major, i32 GL row-major)";
        for (name, variant) in [
            ("x86-avx512", Some(PeakVariant::Vnni512)),
            ("x86-avx2-vnni", Some(PeakVariant::AvxVnni)),
            ("x86-avx2", Some(PeakVariant::Avx2Pairs)),
            ("arm-neon", None),
        ] {
            let target = Target::builtin(name, 1).expect("built in");
            assert_eq!(PeakVariant::for_spec(&spec(&target, int8), &target), variant, "{name}");
        }
        let target = Target::builtin("x86-avx2", 1).expect("built in");
        let f32 = spec(&target, "Matmul(1x8x8x16, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
        assert_eq!(PeakVariant::for_spec(&f32, &target), PeakVariant::for_host());
        let u32 = spec(&target, "Matmul(1x8x8x16, u32 GL row-major, u32 GL row-major, u32 GL row-major)");
        assert_eq!(PeakVariant::for_spec(&u32, &target), None);
    }
}
