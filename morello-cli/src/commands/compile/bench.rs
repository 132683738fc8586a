//! `morello compile --bench [--baseline xla]`: the compiled function timed with the benchmark
//! protocol of `morello-measure` (one pinned thread, warm calls, calibrated samples), beside XLA's
//! CPU backend running the fixture's JAX function as a serve-mode program of its own, samples
//! alternating; then where the time of one call goes, instruction by instruction.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};
use morello_codegen::{BenchEntry, CompileOptions, Compiler, Warnings};
use morello_compile::{CompiledModule, ModuleProfile, ProfileOptions};
use morello_measure::{
    BenchConfig, BenchRequest, CCandidate, Candidate, PeakProbe, Pinning, ProcessCandidate, SampleStats,
    Work, run_bench,
};
use serde_json::json;

use super::Args;
use crate::failure::bad_input;

/// The fixture script whose functions the XLA baseline runs.
const GENERATE: &str = include_str!("../../../../morello-compile/fixtures/jax/generate.py");
/// The script that times one of them.
const BENCH_XLA: &str = include_str!("../../../../morello-compile/fixtures/jax/bench_xla.py");

/// The environment variable naming the Python with jax when `--python` is not given.
pub(super) const PYTHON_VARIABLE: &str = "MORELLO_PYTHON";

/// The timings of a `--bench` run.
pub(super) struct Timing {
    /// Each candidate's seconds per call, or why it was skipped.
    candidates: Vec<(String, Result<Vec<f64>, String>)>,
    cpu: Option<usize>,
    notes: Vec<String>,
    profile: Option<ModuleProfile>,
}

/// Times the module (and the baseline), then profiles it step by step.
pub(super) fn run(compiled: &CompiledModule, args: &Args) -> Result<Timing> {
    let signature = compiled.signature.clone().ok_or_else(|| {
        bad_input("cannot time the module: the benchmark harness has no buffers for one of its element types")
    })?;
    if args.samples == 0 || !(args.min_sample_seconds.is_finite() && args.min_sample_seconds > 0.0) {
        return Err(bad_input("--samples must be at least 1 and --min-sample-seconds positive"));
    }
    let xla = match args.baseline.as_deref() {
        None => None,
        Some("xla") => Some(XlaBaseline::prepare(args)),
        Some(other) => {
            return Err(bad_input(format!("unknown --baseline `{other}`: the compile baseline is `xla`")));
        }
    };
    let compiler = Compiler::find()?;
    let config = BenchConfig {
        min_sample_seconds: args.min_sample_seconds,
        samples: args.samples,
        seed: args.seed,
        threads: 1,
        pinning: Pinning::Auto,
        peak: PeakProbe::Skip,
        ..BenchConfig::default()
    };
    let options = CompileOptions {
        features: compiled.features.clone(),
        openmp: compiled.openmp,
        warnings: Warnings::Report,
    };
    let mut candidates = vec![Candidate::C(CCandidate {
        entry: BenchEntry::new("morello", compiled.name.clone()),
        unit: None,
        link_args: Vec::new(),
    })];
    let mut notes = Vec::new();
    if let Some(Ok(ready)) = xla.as_ref().map(|x| &x.ready) {
        candidates.push(Candidate::Process(ProcessCandidate {
            label: "xla".into(),
            program: ready.python.clone(),
            args: vec![
                ready.script.display().to_string(),
                xla.as_ref().map(|x| x.function.clone()).unwrap_or_default(),
                "--serve".into(),
            ],
        }));
        notes.push(format!(
            "xla is jax {} timed from Python: each call includes jax.jit's dispatch, about {} here",
            ready.jax,
            seconds(ready.dispatch)
        ));
    }
    let request = BenchRequest {
        signature,
        kernel_source: compiled.source.clone(),
        options,
        candidates,
        work: Work::default(),
    };
    let report = run_bench(&compiler, request, &config).context("cannot time the compiled module")?;
    notes.extend(report.notes.iter().cloned());
    let mut timed: Vec<(String, Result<Vec<f64>, String>)> =
        report.results.iter().map(|r| (r.label.clone(), Ok(r.seconds_per_call.clone()))).collect();
    if let Some(Err(reason)) = xla.as_ref().map(|x| &x.ready) {
        timed.push(("xla".to_string(), Err(reason.clone())));
    }
    crate::signals::check()?;
    let profile_options = ProfileOptions { seed: args.seed, cpu: report.cpu, ..ProfileOptions::default() };
    let profile = morello_compile::profile_module(compiled, &compiler, &profile_options)
        .context("cannot profile the compiled module")?;
    Ok(Timing { candidates: timed, cpu: report.cpu, notes, profile: Some(profile) })
}

/// The XLA baseline: the scripts written to a directory of this process, and whether the
/// Python runs them.
struct XlaBaseline {
    dir: PathBuf,
    function: String,
    ready: Result<Ready, String>,
}

/// A baseline that runs.
struct Ready {
    python: PathBuf,
    script: PathBuf,
    jax: String,
    dispatch: f64,
}

impl Drop for XlaBaseline {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl XlaBaseline {
    fn prepare(args: &Args) -> XlaBaseline {
        let stem = args.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let function = stem.trim_end_matches(".hlo").trim_end_matches(".opt").to_string();
        let dir = std::env::temp_dir().join(format!("morello-xla-baseline-{}", std::process::id()));
        let mut baseline = XlaBaseline { dir, function, ready: Err(String::new()) };
        baseline.ready = baseline.check(&python(args));
        baseline
    }

    fn check(&self, python: &str) -> Result<Ready, String> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        for (name, text) in [("generate.py", GENERATE), ("bench_xla.py", BENCH_XLA)] {
            std::fs::write(self.dir.join(name), text).map_err(|e| format!("cannot write {name}: {e}"))?;
        }
        let how = format!("give a Python with jax and jaxlib as --python or in {PYTHON_VARIABLE}");
        let probe = Command::new(python)
            .args(["-c", "import jax, jaxlib"])
            .output()
            .map_err(|e| format!("cannot run `{python}`: {e} ({how})"))?;
        if !probe.status.success() {
            return Err(format!("`{python}` has no jax (pip install jax jaxlib, or {how})"));
        }
        let known = Command::new(python)
            .current_dir(&self.dir)
            .args([
                "-c",
                &format!(
                    "import generate, sys; sys.exit(0 if {:?} in generate.FUNCTIONS else 1)",
                    self.function
                ),
            ])
            .output()
            .map_err(|e| e.to_string())?;
        if !known.status.success() {
            return Err(format!(
                "no JAX function `{}` in morello-compile/fixtures/jax/generate.py (the XLA baseline runs the \
                 fixtures' functions, named by the module's file)",
                self.function
            ));
        }
        let script = self.dir.join("bench_xla.py");
        let out = Command::new(python)
            .arg(&script)
            .args([self.function.as_str(), "--probe"])
            .output()
            .map_err(|e| format!("cannot run the XLA baseline: {e}"))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(format!("the XLA baseline failed: {}", stderr.lines().last().unwrap_or("")));
        }
        let value: serde_json::Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("the XLA baseline printed no JSON: {e}"))?;
        Ok(Ready {
            python: PathBuf::from(python),
            script,
            jax: value["jax"].as_str().unwrap_or("?").to_string(),
            dispatch: value["dispatch_seconds"].as_f64().unwrap_or(f64::NAN),
        })
    }
}

/// The Python of the baseline: `--python`, else `$MORELLO_PYTHON`, else `python3`.
fn python(args: &Args) -> String {
    args.python
        .clone()
        .or_else(|| std::env::var(PYTHON_VARIABLE).ok().filter(|p| !p.is_empty()))
        .unwrap_or_else(|| "python3".to_string())
}

fn seconds(s: f64) -> String {
    if s >= 1e-3 { format!("{:.3} ms", s * 1e3) } else { format!("{:.1} us", s * 1e6) }
}

impl Timing {
    /// The text report.
    pub(super) fn text(&self) -> String {
        let mut text = String::new();
        let cpu = self.cpu.map_or("unpinned".to_string(), |c| format!("CPU {c}"));
        let _ = writeln!(text, "bench:          one thread on {cpu}, warm calls, samples alternating");
        let mut medians = Vec::new();
        for (name, result) in &self.candidates {
            match result.as_ref().map(|s| SampleStats::of(s)) {
                Ok(Some(stats)) => {
                    let _ = writeln!(
                        text,
                        "  {name:<8} median {} per call (quartiles {} .. {}, {} samples)",
                        seconds(stats.median),
                        seconds(stats.q1),
                        seconds(stats.q3),
                        stats.count
                    );
                    medians.push((name.clone(), stats.median));
                }
                Ok(None) => {
                    let _ = writeln!(text, "  {name:<8} no samples");
                }
                Err(reason) => {
                    let _ = writeln!(text, "  {name:<8} skipped: {reason}");
                }
            }
        }
        if let [(_, ours), rest @ ..] = medians.as_slice() {
            for (name, theirs) in rest {
                let _ =
                    writeln!(text, "  morello is {:.2}x {name} (its median over morello's)", theirs / ours);
            }
        }
        if let Some(profile) = &self.profile {
            let _ = writeln!(
                text,
                "where the time goes: {} per call over {} calls (each step timed alone)",
                seconds(profile.seconds_per_call),
                profile.calls
            );
            for step in &profile.steps {
                let share = if profile.seconds_per_call > 0.0 {
                    100.0 * step.seconds_per_call / profile.seconds_per_call
                } else {
                    0.0
                };
                let _ = writeln!(
                    text,
                    "  {:>5.1}%  {:>10}  {}: {}",
                    share,
                    seconds(step.seconds_per_call),
                    step.instruction,
                    step.what
                );
            }
        }
        for note in &self.notes {
            let _ = writeln!(text, "note: {note}");
        }
        text
    }

    /// The `results` entries of `--json`, and the `profile`.
    pub(super) fn json(&self) -> (serde_json::Value, serde_json::Value) {
        let results = self
            .candidates
            .iter()
            .map(|(name, result)| match result.as_ref().map(|s| (SampleStats::of(s), s)) {
                Ok((Some(stats), samples)) => json!({
                    "name": name,
                    "seconds_per_call": stats.median,
                    "q1": stats.q1,
                    "q3": stats.q3,
                    "samples": samples,
                }),
                Ok((None, _)) => json!({"name": name, "seconds_per_call": null, "skipped": "no samples"}),
                Err(reason) => json!({"name": name, "seconds_per_call": null, "skipped": reason}),
            })
            .collect::<Vec<_>>();
        let profile = self.profile.as_ref().map(|p| {
            json!({
                "seconds_per_call": p.seconds_per_call,
                "calls": p.calls,
                "steps": p.steps.iter().map(|s| json!({
                    "instruction": s.instruction,
                    "what": s.what,
                    "seconds_per_call": s.seconds_per_call,
                })).collect::<Vec<_>>(),
            })
        });
        (json!(results), json!(profile))
    }
}
