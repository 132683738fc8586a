//! `morello compile MODULE.hlo`: an HLO module to `DIR/NAME.c` and `DIR/NAME.h`, the parts that
//! map to specs searched through the memo table, the rest plain loops; `--verify` builds and runs
//! the C and checks every result element against the reference evaluator; `--list-specs`
//! prints the specs the module needs, as `precompute --specs` reads them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use morello_codegen::compiler::BuildDir;
use morello_codegen::{Compiler, Warnings};
use morello_compile::plan::Lowering;
use morello_compile::{
    CompileError, CompileOptions, CompiledModule, ModuleVerification, VerifyModuleOptions,
};
use morello_core::target::Target;
use morello_xla::hlo::HloModule;
use serde_json::json;

use crate::commands::search::{SearchOptions, Session};

mod bench;
use crate::database::DbArgs;
use crate::failure::{Failure, bad_input};
use crate::output;
use crate::spec_args::{load_target, with_processors};

/// Examples shown after `morello compile --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello compile model.hlo -o out                   out/NAME.c and out/NAME.h
  morello compile model.opt.hlo --verify             ... and check them against the evaluator
  morello compile model.hlo --list-specs > specs.txt then: morello precompute --specs specs.txt
  morello compile model.hlo --processors 1 --json    single-thread kernels; JSON report
  morello compile bert_ffn.hlo --processors 1 --bench --baseline xla --python venv/bin/python
                                                     time it beside XLA (jax) on one thread

The module is XLA's HLO text, as jax.jit(f).lower(...).as_text(dialect=\"hlo\") prints it or as
XLA's CPU compiler leaves it (fusions, layouts, metadata). The C file holds one function
`void NAME(const T *param, ..., T *result, ...)`: the module's parameters, then its results (a
tuple's elements in order), each a whole array in the layout the module gives it; the header
declares it. Dots (batch and contracting dims anywhere, operands read in place in their
layouts), their bias and ReLU or GELU epilogues, softmax, 2-D convolutions and transposes are
searched kernels; every other instruction runs as a loop nest, and the report says why.

--baseline xla runs the fixture's JAX function through the Python given by --python, else by
the MORELLO_PYTHON environment variable, else python3; without jax there it is skipped with the
reason.";

/// Arguments of `morello compile`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO module's text file (`-` reads standard input).
    file: PathBuf,
    /// Target: x86, x86-avx2, x86-avx2-vnni, x86-avx512, arm-neon, or a TOML/JSON target file.
    #[arg(long, default_value = crate::spec_args::DEFAULT_TARGET, value_name = "TARGET")]
    target: String,
    /// Processors the cost model gives parallel loops (default: the target's; for the built-in
    /// x86 targets, this machine's cores). `--processors 1` makes single-thread kernels.
    #[arg(long, value_name = "N")]
    processors: Option<u32>,
    /// The directory to write NAME.c and NAME.h into (created if needed).
    #[arg(short = 'o', long = "output", value_name = "DIR", default_value = ".")]
    output: PathBuf,
    /// The C function's and the files' name (default: the module's name as a C identifier).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Build the C with a main, run it on seeded inputs and compare every result element with the
    /// reference evaluator: prints the largest error and `verified` (exit 0), or the first
    /// mismatch (exit 1).
    #[arg(long)]
    verify: bool,
    /// Seed of the inputs of --verify.
    #[arg(long, default_value_t = 1, value_name = "N")]
    seed: u64,
    /// Keep the verification's C files, inputs, outputs and binary in this directory.
    #[arg(long, value_name = "DIR", requires = "verify")]
    keep: Option<PathBuf>,
    /// Time the compiled function: one thread pinned to one CPU, warm calls, calibrated samples;
    /// prints the median and quartiles per call, then the time of each step of a call (each
    /// searched kernel, loop nest and result copy).
    #[arg(long)]
    bench: bool,
    /// With --bench, also time the module under XLA's CPU backend: `xla` runs the fixture's JAX
    /// function (`morello-compile/fixtures/jax/generate.py`, named by the file: bert_ffn.opt.hlo
    /// is bert_ffn) with jax.jit on one thread pinned to the same CPU, on the same inputs, its
    /// samples alternating with the C's; skipped with the reason when the Python has no jax or
    /// the function is unknown.
    #[arg(long, value_name = "xla", requires = "bench")]
    baseline: Option<String>,
    /// The Python with jax and jaxlib for --baseline xla (default: $MORELLO_PYTHON, else
    /// python3).
    #[arg(long, value_name = "PATH")]
    python: Option<String>,
    /// Samples per candidate for --bench (alternating between the candidates).
    #[arg(long, value_name = "N", default_value_t = 9)]
    samples: usize,
    /// The shortest sample for --bench, in seconds.
    #[arg(long, value_name = "S", default_value_t = 0.2)]
    min_sample_seconds: f64,
    /// Print the specs the module needs, one per line as `precompute --specs` reads them, and
    /// stop (nothing is searched or written).
    #[arg(long)]
    list_specs: bool,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    options: SearchOptions,
    #[command(flatten)]
    db: DbArgs,
}

/// Runs `morello compile`.
pub fn run(args: &Args) -> Result<()> {
    let text = read(&args.file)?;
    let module: HloModule =
        text.parse().bad_input(|| format!("invalid HLO module {}", args.file.display()))?;
    let (mut target, note) = load_target(&args.target)?;
    if let Some(processors) = args.processors {
        target = with_processors(target, processors)?;
    }
    if args.bench {
        crate::spec_args::timing_compiler(&target, "compile --bench")?;
    }
    if args.list_specs {
        let specs = morello_compile::list_specs(&module, &target).map_err(compile_error)?;
        let mut out = format!("# the specs of {} for target {}\n", module.name(), target.name());
        for (instruction, spec) in specs {
            let _ = writeln!(out, "# {instruction}\n{}", spec.display(&target));
        }
        return output::print(&out);
    }
    let name = match &args.name {
        Some(name) => name.clone(),
        None => morello_compile::default_name(&module),
    };
    let options = CompileOptions { name };
    let session = Session::start_for(&target, target.capacities(), note, &args.options, false)?;
    let compiled = session
        .run_with_table(
            &target,
            &args.db,
            |search| match morello_compile::compile(&module, &target, search, &options) {
                Err(CompileError::Search { source, .. }) => Err(source),
                other => Ok(other),
            },
            |_| (Vec::new(), Vec::new()),
        )?
        .map_err(compile_error)?;
    crate::signals::check()?;
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create the directory {}", args.output.display()))?;
    let c_path = args.output.join(format!("{}.c", compiled.name));
    let h_path = args.output.join(format!("{}.h", compiled.name));
    for (path, contents) in [(&c_path, &compiled.source), (&h_path, &compiled.header)] {
        morello_search::db::write_atomically(path, contents.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let verification = if args.verify { Some(verify(&module, &compiled, &target, args)?) } else { None };
    let report =
        Report { module: &module, compiled: &compiled, target: &target, c_path, h_path, verification };
    // A module that computes the wrong values is not timed.
    let timing = match &report.verification {
        Some(v) if !v.verified => None,
        _ if args.bench => Some(bench::run(&compiled, args)?),
        _ => None,
    };
    finish(args, report, timing.map(|t| (t.json(), t.text())))
}

/// What `compile` reports: the module, what it compiled to and where, and the verification.
struct Report<'a> {
    module: &'a HloModule,
    compiled: &'a CompiledModule,
    target: &'a Target,
    c_path: PathBuf,
    h_path: PathBuf,
    verification: Option<ModuleVerification>,
}

/// Prints the report (with the timing, if any) and turns a mismatch into the exit status.
fn finish(
    args: &Args,
    report: Report<'_>,
    timing: Option<((serde_json::Value, serde_json::Value), String)>,
) -> Result<()> {
    if args.json {
        let mut value = report.json();
        if let Some(((results, profile), _)) = &timing {
            value["results"] = results.clone();
            value["profile"] = profile.clone();
        }
        output::print_json(&value)?;
    } else {
        let mut text = report.text();
        if let Some((_, lines)) = &timing {
            text += lines;
        }
        output::print(&text)?;
    }
    match report.verification.and_then(|v| v.mismatch) {
        None => Ok(()),
        Some(mismatch) => Err(anyhow::anyhow!("verification failed: {mismatch}")),
    }
}

fn read(path: &Path) -> Result<String> {
    if path.as_os_str() == "-" {
        return std::io::read_to_string(std::io::stdin()).context("cannot read standard input");
    }
    std::fs::read_to_string(path).bad_input(|| format!("cannot read `{}`", path.display()))
}

/// A compile error as the CLI reports it: the module's fault (status 2), or work that failed.
fn compile_error(error: CompileError) -> anyhow::Error {
    match error {
        CompileError::Types(_) | CompileError::Unsupported { .. } | CompileError::Options(_) => {
            bad_input(format!("cannot compile the module: {error}"))
        }
        other => anyhow::Error::new(other).context("cannot compile the module"),
    }
}

fn verify(
    module: &HloModule,
    compiled: &CompiledModule,
    target: &Target,
    args: &Args,
) -> Result<ModuleVerification> {
    let compiler = Compiler::for_target(target)?;
    let build_dir = match &args.keep {
        Some(dir) => BuildDir::Keep(dir.clone()),
        None => BuildDir::Temporary,
    };
    let options =
        VerifyModuleOptions { seed: args.seed, build_dir, warnings: Warnings::Report, ..Default::default() };
    morello_compile::verify_module(module, compiled, &compiler, &options).map_err(|e| match e {
        morello_compile::VerifyError::Unsupported(reason) => {
            bad_input(format!("cannot verify the module: {reason}"))
        }
        other => anyhow::Error::new(other).context("cannot verify the module"),
    })
}

/// The instructions that run as loops, with why, in order.
fn loops(compiled: &CompiledModule) -> Vec<(String, String)> {
    compiled
        .plan
        .lowering
        .iter()
        .enumerate()
        .filter_map(|(id, l)| match l {
            Lowering::Loops { reason } => Some((compiled.node_names[id].clone(), reason.clone())),
            _ => None,
        })
        .collect()
}

impl Report<'_> {
    /// The text report.
    fn text(&self) -> String {
        let Report { module, compiled, target, c_path, h_path, verification } = self;
        let mut text = String::new();
        let _ = writeln!(text, "module:         {}", module.name());
        let _ = writeln!(text, "target:         {}", target.name());
        let _ = writeln!(text, "wrote:          {} and {}", c_path.display(), h_path.display());
        let _ = writeln!(
            text,
            "function:       {} (intermediates: {} bytes)",
            compiled.name, compiled.arena_bytes
        );
        let _ = writeln!(text, "searched:       {} kernels", compiled.searched.len());
        for s in &compiled.searched {
            let copied: Vec<String> = s.copies.iter().map(|(input, _)| input.to_string()).collect();
            let copies = match copied.as_slice() {
                [] => String::new(),
                [one] => format!(", input {one} copied to row-major first"),
                many => format!(", inputs {} copied to row-major first", many.join(" and ")),
            };
            let _ =
                writeln!(text, "  {}: {} (cost {}{copies})", s.instruction, s.spec.display(target), s.cost);
        }
        let loops = loops(compiled);
        let _ = writeln!(text, "plain loops:    {}", loops.len());
        for (name, reason) in &loops {
            let _ = writeln!(text, "  {name}: {reason}");
        }
        if let Some(v) = verification {
            let _ = writeln!(
                text,
                "checked:        {} result elements against the reference evaluator (seed {}){}",
                v.elements,
                v.seed,
                if v.unbounded > 0 {
                    format!(", {} without a finite bound not compared", v.unbounded)
                } else {
                    String::new()
                }
            );
            let _ = writeln!(
                text,
                "max abs error:  {} (largest tolerance {})",
                short(v.max_abs_error),
                short(v.max_tolerance)
            );
            if v.verified {
                text += "verified\n";
            }
        }
        text
    }

    /// The JSON report.
    fn json(&self) -> serde_json::Value {
        let Report { module, compiled, target, c_path, h_path, verification } = self;
        let loops = loops(compiled);
        json!({
            "module": module.name(),
            "target": target.name(),
            "function": compiled.name,
            "source": c_path.display().to_string(),
            "header": h_path.display().to_string(),
            "arena_bytes": compiled.arena_bytes,
            "features": compiled.features.iter().map(|f| f.name()).collect::<Vec<_>>(),
            "searched": compiled.searched.iter().map(|s| json!({
                "instruction": s.instruction,
                "spec": s.spec.display(target).to_string(),
                "cost": s.cost,
                "copies": s.copies.iter().map(|(input, spec)| json!({"input": input, "spec": spec.display(target).to_string()})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "loops": loops.iter().map(|(name, reason)| json!({"instruction": name, "reason": reason})).collect::<Vec<_>>(),
            "verification": verification.as_ref().map(|v| json!({
                "verified": v.verified,
                "elements": v.elements,
                "unbounded": v.unbounded,
                "max_abs_error": v.max_abs_error,
                "max_tolerance": v.max_tolerance,
                "seed": v.seed,
                "mismatch": v.mismatch.as_ref().map(ToString::to_string),
            })),
        })
    }
}

/// A number in few digits: `0`, or three significant digits in scientific notation.
fn short(x: f64) -> String {
    if x == 0.0 { "0".to_string() } else { format!("{x:.2e}") }
}
