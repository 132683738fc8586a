//! `morello run SPEC`: search, emit C, compile, run once on seeded inputs, and verify the result
//! against the reference (exit status 0 when verified, 1 on a mismatch).

use std::path::PathBuf;

use anyhow::{Context, Result};
use morello_codegen::compiler::BuildDir;
use morello_codegen::{CodegenError, Compiler, OpenMp, VerifyOptions, Warnings, verify_impl};
use morello_measure::compare::serial_note;
use serde_json::json;

use crate::commands::search::{ScheduleArgs, SearchOptions, Session};
use crate::database::{DbArgs, eprint_line};
use crate::output;
use crate::spec_args::{SpecArgs, resolve};

/// Examples shown after `morello run --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello run matmul 64x64x64 --target x86
  morello run matmul 5x7x3 --dtype u32 --json
  morello run move 16x16 --from row-major --to col-major --keep /tmp/move
  morello run zero 64x64
  morello run matmul 512x512x512 --target x86 --schedule examples/blis-512.schedule";

/// Arguments of `morello run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    spec: SpecArgs,
    /// Print one JSON object: `{"verified": bool, "max_abs_error": number, ...}`.
    #[arg(long)]
    json: bool,
    /// Keep the C files, inputs, outputs and binary in this directory.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1, value_name = "N")]
    seed: u64,
    #[command(flatten)]
    schedule: ScheduleArgs,
    #[command(flatten)]
    options: SearchOptions,
    #[command(flatten)]
    db: DbArgs,
}

/// Runs `morello run`.
pub fn run(args: &Args) -> Result<()> {
    let resolved = resolve(&args.spec)?;
    crate::memory::check_runnable(&resolved, "run")?;
    let target = &resolved.target;
    let session = Session::start(&resolved, &args.options, false)?;
    let solution = match args.schedule.read()? {
        Some((text, path)) => session.solve_scheduled(&resolved, &args.db, &text, path)?,
        None => session
            .solve_with_table(&resolved, &args.db, None)?
            .into_iter()
            .next()
            .ok_or_else(|| anyhow::anyhow!("the search returned no implementation"))?,
    };
    crate::signals::check()?;
    let compiler = Compiler::for_target(target)?;
    let build_dir = match &args.keep {
        Some(dir) => BuildDir::Keep(dir.clone()),
        None => BuildDir::Temporary,
    };
    let options = VerifyOptions { seed: args.seed, build_dir, warnings: Warnings::Report };
    let verified = match verify_impl(&solution.imp, target, &compiler, &options) {
        Ok(v) => v,
        Err(e @ CodegenError::MissingHostFeatures { .. }) => {
            return Err(anyhow::anyhow!(
                "the kernel for {} compiled, but this machine cannot run it: {e}; \
                 choose a target it supports (e.g. --target x86)",
                target.name()
            ));
        }
        Err(e) => return Err(e.into()),
    };
    if let (false, true, Some(note)) =
        (args.options.quiet, verified.kernel.openmp == OpenMp::Enabled, serial_note(&compiler))
    {
        eprint_line(&format!("note: {note}"));
    }
    if let Some(dir) = &args.keep {
        let path = dir.join("kernel.c");
        morello_search::db::write_atomically(&path, verified.kernel.source.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let v = &verified.verification;
    let spec_text = resolved.spec.display(target).to_string();
    if args.json {
        output::print_json(&json!({
            "verified": v.verified,
            "max_abs_error": v.max_abs_error,
            "max_tolerance": v.max_tolerance,
            "reduction_length": v.reduction_length,
            "elements": v.elements,
            "reference": v.reference.to_string(),
            "seed": v.seed,
            "mismatch": v.mismatch,
            "spec": spec_text,
            "target": target.name(),
            "cost": solution.cost,
            "compiler": compiler.to_string(),
            "features": verified.kernel.features.iter().map(|f| f.name()).collect::<Vec<_>>(),
            "openmp": verified.kernel.openmp == OpenMp::Enabled && compiler.openmp().is_ok(),
            "kept": args.keep.as_ref().map(|d| d.display().to_string()),
        }))?;
    } else {
        let mut text = String::new();
        text += &format!("spec:           {spec_text}\n");
        text += &format!("target:         {} (cost {})\n", target.name(), solution.cost);
        text += &format!("compiler:       {compiler}\n");
        text +=
            &format!("checked:        {} elements against {} (seed {})\n", v.elements, v.reference, v.seed);
        text += &format!(
            "max abs error:  {} (largest tolerance {})\n",
            short(v.max_abs_error),
            short(v.max_tolerance)
        );
        if let Some(dir) = &args.keep {
            text += &format!("kept in:        {}\n", dir.display());
        }
        if v.verified {
            text += "verified\n";
        }
        output::print(&text)?;
    }
    match &v.mismatch {
        None => Ok(()),
        Some(mismatch) => Err(anyhow::anyhow!("verification failed: {mismatch}")),
    }
}

/// A number in few digits: `0`, or three significant digits in scientific notation.
fn short(x: f64) -> String {
    if x == 0.0 { "0".to_string() } else { format!("{x:.2e}") }
}
