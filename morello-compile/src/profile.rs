//! Where a compiled module's time goes: its unit built with `MORELLO_PROFILE` defined (each step
//! of the entry function adds its wall time to a counter) and a `main` that calls the function
//! on seeded inputs until the calls last long enough, then prints the counters.
//!
//! ```text
//! inputs   the harnesses' seeded values (splitmix64 per parameter, floats multiples of 1/16
//!          in [-2, 2), integers over their whole range, pred masked to 0 or 1)
//! calls    one warm-up call, then at least 3 calls and at least `min_seconds` of them
//! timing   clock_gettime(CLOCK_MONOTONIC) around each step and around each call; the steps'
//!          sum falls short of the call by the arena's allocation and the timers themselves
//! ```
//!
//! The timers cost tens of nanoseconds per step: negligible for modules whose steps take
//! microseconds, not for tiny ones. Step times of one call are what the call spends in each step
//! with warm caches, as `--bench` times whole calls.

use std::fmt::Write as _;
use std::process::Command;

use morello_codegen::{
    BuildDir, CProgram, CType, CodegenError, CompileOptions, Compiler, SourceUnit, Warnings,
};

use crate::CompiledModule;
use crate::verify::VerifyError;

/// How to profile a module.
#[derive(Debug, Clone)]
pub struct ProfileOptions {
    /// The seed of the inputs.
    pub seed: u64,
    /// The CPU to pin the program to, if any.
    pub cpu: Option<usize>,
    /// The least time the timed calls take together, in seconds.
    pub min_seconds: f64,
    /// Whether compiler warnings fail the build.
    pub warnings: Warnings,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        ProfileOptions { seed: 1, cpu: None, min_seconds: 0.5, warnings: Warnings::Report }
    }
}

/// One step's share of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTime {
    /// The instruction it computes.
    pub instruction: String,
    /// What it is (see [`crate::ModuleStep::what`]).
    pub what: String,
    /// Its mean wall time per call, in seconds.
    pub seconds_per_call: f64,
}

/// Where a module's calls spend their time.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleProfile {
    /// The calls timed.
    pub calls: u64,
    /// The mean wall time of a whole call, in seconds.
    pub seconds_per_call: f64,
    /// Every step, in the order they run.
    pub steps: Vec<StepTime>,
}

/// Builds the module with its steps timed, runs it and reads the times.
///
/// # Errors
/// [`VerifyError::Unsupported`] for element types the harnesses have no buffers for or invalid
/// options; [`VerifyError::Codegen`] when the build or the run fails or its output is not what
/// the program prints.
pub fn profile_module(
    compiled: &CompiledModule,
    compiler: &Compiler,
    options: &ProfileOptions,
) -> Result<ModuleProfile, VerifyError> {
    let signature = compiled.signature.as_ref().ok_or_else(|| {
        VerifyError::Unsupported(
            "the profile has buffers of f32, bf16 and 8- to 32-bit integers only; a parameter or result of \
             this module has another type"
                .into(),
        )
    })?;
    if !(options.min_seconds.is_finite() && options.min_seconds >= 0.0 && options.min_seconds <= 3600.0) {
        return Err(VerifyError::Unsupported("the profile's least time must be 0 to 3600 seconds".into()));
    }
    let source = program_source(compiled, signature, options);
    let program = CProgram { units: vec![SourceUnit::new("profile", source)], link_args: Vec::new() };
    let compile = CompileOptions {
        features: compiled.features.clone(),
        openmp: compiled.openmp,
        warnings: options.warnings,
    };
    let build = compiler.build_in(&program, &compile, &BuildDir::Temporary)?;
    let binary = build.binary();
    let output = Command::new(binary)
        .env("OMP_NUM_THREADS", "1")
        .output()
        .map_err(|e| CodegenError::Io { context: format!("running {}", binary.display()), source: e })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(VerifyError::Unsupported(format!(
            "the profile program failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    parse(&stdout, compiled).ok_or_else(|| {
        VerifyError::Unsupported(format!("the profile program printed something else: `{}`", stdout.trim()))
    })
}

/// `calls N SECONDS` then one `step K SECONDS` line per step (totals over the calls).
fn parse(text: &str, compiled: &CompiledModule) -> Option<ModuleProfile> {
    let mut lines = text.lines();
    let mut first = lines.next()?.split(' ');
    if first.next()? != "calls" {
        return None;
    }
    let calls: u64 = first.next()?.parse().ok()?;
    let total: f64 = first.next()?.parse().ok()?;
    if calls == 0 {
        return None;
    }
    let mut steps = Vec::new();
    for (k, step) in compiled.steps.iter().enumerate() {
        let mut words = lines.next()?.split(' ');
        if words.next()? != "step" || words.next()?.parse::<usize>().ok()? != k {
            return None;
        }
        let seconds: f64 = words.next()?.parse().ok()?;
        steps.push(StepTime {
            instruction: step.instruction.clone(),
            what: step.what.clone(),
            seconds_per_call: seconds / calls as f64,
        });
    }
    Some(ModuleProfile { calls, seconds_per_call: total / calls as f64, steps })
}

/// The unit with the timers on and its `main`.
fn program_source(
    compiled: &CompiledModule,
    signature: &morello_codegen::KernelSignature,
    options: &ProfileOptions,
) -> String {
    let name = &compiled.name;
    let mut text = String::from(
        "#define _GNU_SOURCE\n#define MORELLO_PROFILE 1\n#include <sched.h>\n#include <stdio.h>\n",
    );
    text += &compiled.source;
    text += "\n/* ---- the profile's main ---- */\n";
    text += "static uint64_t m_splitmix64(uint64_t *state) {\n  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);\n  \
             z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;\n  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;\n  \
             return z ^ (z >> 31);\n}\n";
    text += "int main(void) {\n";
    if let Some(cpu) = options.cpu {
        let _ = writeln!(text, "  cpu_set_t set;\n  CPU_ZERO(&set);\n  CPU_SET({cpu}, &set);");
        text += "  (void)sched_setaffinity(0, sizeof set, &set);\n";
    }
    let mut args = Vec::new();
    for (k, param) in signature.params.iter().enumerate() {
        let t = param.c_type.c_name();
        let elements = param.elements.max(1);
        let bytes = (elements * param.c_type.size_bytes()).div_ceil(64) * 64;
        let _ =
            writeln!(text, "  {t} *m_p{k} = aligned_alloc(64, {bytes}u);\n  if (m_p{k} == NULL) abort();");
        let _ = writeln!(
            text,
            "  {{\n    uint64_t state = {seed}ull ^ (0xD1B54A32D192ED03ull * {index}ull);\n    \
             for (size_t i = 0; i < {elements}u; i++) {{\n      uint64_t r = m_splitmix64(&state);",
            seed = options.seed,
            index = k as u64 + 1,
        );
        let value = match param.c_type {
            CType::F32 => "(float)((int)(r >> 58) - 32) / 16.0f".to_string(),
            CType::Bf16 => {
                "({ float f = (float)((int)(r >> 58) - 32) / 16.0f; uint32_t b; memcpy(&b, &f, 4); \
                 (uint16_t)(b >> 16); })"
                    .to_string()
            }
            CType::U8 if param.role.is_read() => "(uint8_t)(r & 1u)".to_string(),
            other => format!("({})r", other.c_name()),
        };
        let _ = writeln!(text, "      m_p{k}[i] = {value};\n    }}\n  }}");
        args.push(format!("m_p{k}"));
    }
    let call = format!("{name}({});", args.join(", "));
    let steps = compiled.steps.len();
    let _ = writeln!(text, "  {call}");
    let _ = writeln!(
        text,
        "  memset({name}_profile_seconds, 0, sizeof {name}_profile_seconds);\n  \
         uint64_t calls = 0;\n  double start = m_profile_now(), elapsed = 0;\n  \
         while (calls < 3 || elapsed < {min}) {{\n    {call}\n    calls++;\n    elapsed = m_profile_now() - start;\n  }}\n  \
         printf(\"calls %llu %.17g\\n\", (unsigned long long)calls, elapsed);\n  \
         for (int k = 0; k < {steps}; k++) printf(\"step %d %.17g\\n\", k, {name}_profile_seconds[k]);",
        min = options.min_seconds,
    );
    text += "  return 0;\n}\n";
    text
}
