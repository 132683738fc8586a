//! The FMA-throughput probe: this machine's single-core peak f32 GFLOP/s, measured by a C
//! program that keeps many independent fused multiply-add chains in flight.
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
//! samples (a peak, not a typical figure). The probe pins itself with `sched_setaffinity`.

use std::fmt::Write as _;

use serde::Serialize;

use morello_codegen::CodegenError;
use morello_codegen::compiler::{CProgram, CompileOptions, Compiler, SourceUnit};

use crate::error::MeasureError;
use morello_codegen::harness::parse_sample_line;
use morello_codegen::host::{host_supports, require_features};
use morello_codegen::run::run_program;
use morello_core::target::IsaFeature;

/// Which vector width the probe uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PeakVariant {
    /// 512-bit `_mm512_fmadd_ps`.
    Avx512,
    /// 256-bit `_mm256_fmadd_ps`.
    Avx2,
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

    /// f32 lanes per vector.
    pub fn lanes(self) -> u32 {
        match self {
            PeakVariant::Avx512 => 16,
            PeakVariant::Avx2 => 8,
        }
    }

    /// Independent FMA chains.
    pub fn chains(self) -> u32 {
        match self {
            PeakVariant::Avx512 => 16,
            PeakVariant::Avx2 => 12,
        }
    }

    /// The features the variant is compiled with.
    pub fn features(self) -> Vec<IsaFeature> {
        match self {
            PeakVariant::Avx512 => {
                vec![IsaFeature::Avx, IsaFeature::Avx2, IsaFeature::Fma, IsaFeature::Avx512f]
            }
            PeakVariant::Avx2 => vec![IsaFeature::Avx, IsaFeature::Avx2, IsaFeature::Fma],
        }
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
    /// The best sample, in f32 GFLOP/s on one core.
    pub gflops: f64,
    /// Every sample, in GFLOP/s.
    pub samples_gflops: Vec<f64>,
}

/// The probe's C source for `variant`.
pub fn peak_probe_source(variant: PeakVariant) -> String {
    let (vector, set1, fma, add, store, lanes) = match variant {
        PeakVariant::Avx512 => {
            ("__m512", "_mm512_set1_ps", "_mm512_fmadd_ps", "_mm512_add_ps", "_mm512_storeu_ps", 16)
        }
        PeakVariant::Avx2 => {
            ("__m256", "_mm256_set1_ps", "_mm256_fmadd_ps", "_mm256_add_ps", "_mm256_storeu_ps", 8)
        }
    };
    let chains = variant.chains();
    let flops_per_iteration = chains * variant.lanes() * 2;
    let mut c = String::from(
        "/* morello peak probe: independent FMA chains, throughput-bound. */\n\
         #define _GNU_SOURCE\n#include <immintrin.h>\n#include <sched.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n\n\
         static double probe_now(void) {\n  struct timespec t;\n  clock_gettime(CLOCK_MONOTONIC, &t);\n  \
         return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;\n}\n\n\
         static volatile float probe_x = 0.9999999f;\nstatic volatile float probe_y = 1e-7f;\n\
         static volatile float probe_sink;\n\n",
    );
    let _ = writeln!(c, "static double probe_run(long iterations) {{");
    let _ = writeln!(c, "  const {vector} x = {set1}(probe_x);\n  const {vector} y = {set1}(probe_y);");
    for i in 0..chains {
        let _ = writeln!(c, "  {vector} a{i} = {set1}((float){i});");
    }
    let _ = writeln!(c, "  double start = probe_now();\n  for (long i = 0; i < iterations; i++) {{");
    for i in 0..chains {
        let _ = writeln!(c, "    a{i} = {fma}(a{i}, x, y);");
    }
    let _ = writeln!(c, "  }}\n  double seconds = probe_now() - start;");
    let sum = (1..chains).fold("a0".to_string(), |acc, i| format!("{add}({acc}, a{i})"));
    let _ = write!(
        c,
        r#"  float lanes[{lanes}];
  {store}(lanes, {sum});
  probe_sink = lanes[0];
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

/// Compiles and runs the probe for the host's widest variant.
///
/// # Errors
/// [`CodegenError::MissingHostFeatures`] if the host has no FMA; compile and run errors;
/// [`MeasureError::InvalidBench`] for zero samples.
pub fn measure_peak(compiler: &Compiler, config: &PeakConfig) -> Result<PeakReport, MeasureError> {
    if config.samples == 0 {
        return Err(MeasureError::invalid("the peak probe needs at least one sample"));
    }
    let Some(variant) = PeakVariant::for_host() else {
        require_features(&[IsaFeature::Avx2, IsaFeature::Fma])?;
        return Err(CodegenError::MissingHostFeatures { missing: vec![IsaFeature::Fma] }.into());
    };
    let options = CompileOptions { features: variant.features(), ..CompileOptions::default() };
    let program =
        CProgram { units: vec![SourceUnit::new("peak", peak_probe_source(variant))], link_args: Vec::new() };
    let build = compiler.build(&program, &options)?;
    let mut args = vec![config.min_seconds.to_string(), config.samples.to_string()];
    args.extend(config.cpu.map(|cpu| cpu.to_string()));
    let output = run_program(build.binary(), &args, &[])?;
    let flops_per_iteration = f64::from(variant.chains() * variant.lanes() * 2);
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
        let others = [PeakVariant::Avx2, PeakVariant::Avx512]
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
}
