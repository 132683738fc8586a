//! `morello compile --bench [--baseline xla]`: the compiled function timed on one pinned thread
//! with the benchmark protocol of `morello-measure` (warm calls, calibrated samples), and XLA's
//! CPU backend on the fixture's JAX function, in alternating rounds.

use std::fmt::Write as _;
use std::process::Command;

use anyhow::{Context, Result};
use morello_codegen::{BenchEntry, CompileOptions, Compiler, Warnings};
use morello_compile::CompiledModule;
use morello_measure::{
    BenchConfig, BenchRequest, CCandidate, Candidate, PeakProbe, Pinning, SampleStats, Work, run_bench,
};
use serde_json::json;

use super::Args;
use crate::failure::bad_input;

/// The fixture script whose functions the XLA baseline runs.
const GENERATE: &str = include_str!("../../../../morello-compile/fixtures/jax/generate.py");
/// The script that times one of them.
const BENCH_XLA: &str = include_str!("../../../../morello-compile/fixtures/jax/bench_xla.py");

/// Rounds the candidates alternate over.
const ROUNDS: usize = 3;

/// One candidate's samples, or why it was skipped.
pub(super) struct Timing {
    candidates: Vec<(String, Result<Vec<f64>, String>)>,
    cpu: Option<usize>,
    notes: Vec<String>,
}

/// Times the module (and the baseline).
pub(super) fn run(compiled: &CompiledModule, args: &Args) -> Result<Timing> {
    let signature = compiled.signature.clone().ok_or_else(|| {
        bad_input("cannot time the module: the benchmark harness has no buffers for one of its element types")
    })?;
    if args.samples == 0 || !(args.min_sample_seconds.is_finite() && args.min_sample_seconds > 0.0) {
        return Err(bad_input("--samples must be at least 1 and --min-sample-seconds positive"));
    }
    let mut xla = match args.baseline.as_deref() {
        None => None,
        Some("xla") => Some(XlaBaseline::prepare(args)),
        Some(other) => {
            return Err(bad_input(format!("unknown --baseline `{other}`: the compile baseline is `xla`")));
        }
    };
    let compiler = Compiler::find()?;
    let per_round = args.samples.div_ceil(ROUNDS);
    let config = BenchConfig {
        min_sample_seconds: args.min_sample_seconds,
        samples: per_round,
        seed: args.seed,
        threads: 1,
        pinning: Pinning::Auto,
        peak: PeakProbe::Skip,
        ..BenchConfig::default()
    };
    let cpu = config.cpu();
    let mut morello = Vec::new();
    let mut baseline: Option<Result<Vec<f64>, String>> =
        xla.as_ref().map(|x| x.ready.clone().map(|()| Vec::new()));
    let mut notes = Vec::new();
    for _ in 0..ROUNDS {
        let request = BenchRequest {
            signature: signature.clone(),
            kernel_source: compiled.source.clone(),
            options: CompileOptions {
                features: compiled.features.clone(),
                openmp: compiled.openmp,
                warnings: Warnings::Report,
            },
            candidates: vec![Candidate::C(CCandidate {
                entry: BenchEntry::new("morello", compiled.name.clone()),
                unit: None,
                link_args: Vec::new(),
            })],
            work: Work::default(),
        };
        let report = run_bench(&compiler, request, &config).context("cannot time the compiled module")?;
        notes.extend(report.notes.iter().filter(|n| !notes.contains(*n)).cloned().collect::<Vec<_>>());
        if let Some(result) = report.results.first() {
            morello.extend(&result.seconds_per_call);
        }
        crate::signals::check()?;
        if let (Some(x), Some(Ok(samples))) = (&mut xla, &mut baseline) {
            match x.round(per_round, args, cpu) {
                Ok(more) => samples.extend(more),
                Err(reason) => baseline = Some(Err(reason)),
            }
        }
    }
    let mut candidates = vec![("morello".to_string(), Ok(morello))];
    if let Some(b) = baseline {
        candidates.push(("xla".to_string(), b));
    }
    if let Some(x) = &xla {
        if let Some(d) = x.dispatch {
            notes.push(format!(
                "xla is timed through jax.jit from Python: each call includes its dispatch, about {} here",
                seconds(d)
            ));
        }
    }
    Ok(Timing { candidates, cpu, notes })
}

/// The XLA baseline: the scripts written to a directory of this process, and whether the
/// Python runs them.
struct XlaBaseline {
    dir: std::path::PathBuf,
    python: String,
    function: String,
    ready: Result<(), String>,
    dispatch: Option<f64>,
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
        let mut baseline =
            XlaBaseline { dir, python: args.python.clone(), function, ready: Ok(()), dispatch: None };
        baseline.ready = baseline.check();
        baseline
    }

    fn check(&self) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        for (name, text) in [("generate.py", GENERATE), ("bench_xla.py", BENCH_XLA)] {
            std::fs::write(self.dir.join(name), text).map_err(|e| format!("cannot write {name}: {e}"))?;
        }
        let probe = Command::new(&self.python)
            .args(["-c", "import jax, jaxlib"])
            .output()
            .map_err(|e| format!("cannot run `{}`: {e} (give a Python with jax as --python)", self.python))?;
        if !probe.status.success() {
            return Err(format!(
                "`{}` has no jax (pip install jax jaxlib, or give another Python as --python)",
                self.python
            ));
        }
        let known = Command::new(&self.python)
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
                 fixtures' functions)",
                self.function
            ));
        }
        Ok(())
    }

    /// One round of samples.
    fn round(&mut self, samples: usize, args: &Args, cpu: Option<usize>) -> Result<Vec<f64>, String> {
        let mut command = Command::new(&self.python);
        command.current_dir(&self.dir).args([
            "bench_xla.py",
            &self.function,
            "--samples",
            &samples.to_string(),
            "--min-seconds",
            &args.min_sample_seconds.to_string(),
            "--seed",
            &args.seed.to_string(),
        ]);
        if let Some(cpu) = cpu {
            command.args(["--cpu", &cpu.to_string()]);
        }
        let out = command.output().map_err(|e| format!("cannot run the XLA baseline: {e}"))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(format!("the XLA baseline failed: {}", stderr.lines().last().unwrap_or("")));
        }
        let value: serde_json::Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("the XLA baseline printed no JSON: {e}"))?;
        self.dispatch = value["dispatch_seconds"].as_f64().or(self.dispatch);
        let times = value["seconds_per_call"].as_array().ok_or("the XLA baseline printed no times")?;
        Ok(times.iter().filter_map(serde_json::Value::as_f64).collect())
    }
}

fn seconds(s: f64) -> String {
    if s >= 1e-3 { format!("{:.3} ms", s * 1e3) } else { format!("{:.1} us", s * 1e6) }
}

impl Timing {
    pub(super) fn text(&self) -> String {
        let mut text = String::new();
        let cpu = self.cpu.map_or("unpinned".to_string(), |c| format!("CPU {c}"));
        let _ =
            writeln!(text, "bench:          one thread on {cpu}, warm calls, {ROUNDS} alternating rounds");
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
                let _ = writeln!(text, "  morello is {:.2}x {name}", theirs / ours);
            }
        }
        for note in &self.notes {
            let _ = writeln!(text, "note: {note}");
        }
        text
    }

    pub(super) fn json(&self) -> serde_json::Value {
        json!(
            self.candidates
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
                .collect::<Vec<_>>()
        )
    }
}
