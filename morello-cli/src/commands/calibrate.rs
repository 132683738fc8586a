//! `morello calibrate`: measure a target's kernels and memory levels on this machine, fit its cost
//! constants, and write a target file (`docs/calibration.md`).
//!
//! ```text
//! measure   morello_measure::calibrate: C microbenchmarks, pinned, alternating, medians
//! fit       constants >= 0 minimising squared relative error; scaled to integer units
//! write     the target description as TOML (atomically), after a comment header saying what was
//!           measured, where and when; standard output without -o
//! report    the measurements and the constants before and after, on standard error (or --json)
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::{Context, Result};
use morello_core::target::{Target, parse_size};
use morello_measure::bench::Pinning;
use morello_measure::calibrate::{
    Calibration, CalibrationConfig, CalibrationError, CalibrationStep, ConstantSource,
    DEFAULT_MIN_SAMPLE_SECONDS, DEFAULT_RESOLUTION, DEFAULT_SAMPLES, calibrate,
};
use serde_json::json;

use crate::database::eprint_line;
use crate::failure::{Failure, bad_input};
use crate::spec_args::load_target;
use crate::{output, progress};

/// Examples shown after `morello calibrate --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello calibrate -o here.toml                                this machine's x86 target
  morello search matmul 64x64x64 --target here.toml             search with the fitted constants
  morello calibrate --target x86-avx2 --samples 9 -o avx2.toml  more samples, the AVX2 target
  morello calibrate --samples 1 --min-sample-seconds 0.001      a rough fit in seconds, to stdout

Use it when the machine differs from what the built-in model describes (another CPU, other caches),
or when `morello bench --top-k` reports a low rank correlation between predicted cost and measured
time. A target file with other constants has its own memo table (its fingerprint differs).";

/// Arguments of `morello calibrate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Target to calibrate: x86, x86-avx2, x86-avx2-vnni, x86-avx512, arm-neon, or a TOML/JSON target file.
    #[arg(long, default_value = crate::spec_args::DEFAULT_TARGET, value_name = "TARGET")]
    target: String,
    /// Write the calibrated target file here (default: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Name of the calibrated target (default: the target's name with `-calibrated`).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Samples per microbenchmark; the median is used.
    #[arg(long, default_value_t = DEFAULT_SAMPLES, value_name = "N", value_parser = crate::numbers::parse_count)]
    samples: usize,
    /// Minimum duration of one sample, in seconds.
    #[arg(
        long,
        default_value_t = DEFAULT_MIN_SAMPLE_SECONDS,
        value_name = "SECONDS",
        value_parser = crate::numbers::parse_seconds_f64
    )]
    min_sample_seconds: f64,
    /// Cost units given to the reference constant (BroadcastVecMultAdd's cost per vector): the
    /// resolution of the fitted integers.
    #[arg(long, default_value_t = DEFAULT_RESOLUTION, value_name = "UNITS", value_parser = crate::numbers::parse_count_u64)]
    resolution: u64,
    /// Bytes streamed to measure main memory (more than the caches hold), e.g. `256MiB`.
    #[arg(long, default_value = "64MiB", value_name = "SIZE")]
    memory_bytes: String,
    /// The CPU the single-threaded measurements run on (default: the highest-numbered one).
    #[arg(long, value_name = "CPU")]
    cpu: Option<usize>,
    /// Print the measurements and fitted constants as JSON on standard output (needs -o).
    #[arg(long, requires = "output")]
    json: bool,
    /// Show a progress indicator even when standard error is not a terminal.
    #[arg(long)]
    progress: bool,
    /// Print nothing on standard error but errors.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// Runs `morello calibrate`.
pub fn run(args: &Args) -> Result<()> {
    let (target, note) = load_target(&args.target)?;
    let compiler = crate::spec_args::timing_compiler(&target, "calibrate")?;
    let memory_bytes =
        parse_size(&args.memory_bytes).map_err(|e| bad_input(format!("--memory-bytes: {e}")))?;
    let config = CalibrationConfig {
        samples: args.samples,
        min_sample_seconds: args.min_sample_seconds,
        resolution: args.resolution,
        memory_bytes,
        pinning: args.cpu.map_or(Pinning::Auto, Pinning::Cpu),
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Some(cpu) = args.cpu.filter(|&cpu| cpu >= cpus) {
        return Err(bad_input(format!("--cpu {cpu}: this machine has CPUs 0 to {}", cpus - 1)));
    }
    let name = args.name.clone().unwrap_or_else(|| format!("{}-calibrated", target.name()));
    if name.trim().is_empty() {
        return Err(bad_input("--name must not be empty"));
    }
    if let (false, Some(note)) = (args.quiet, &note) {
        eprint_line(note);
    }
    let load = load_average();
    let busy = load
        .as_deref()
        .and_then(|l| l.split(' ').next()?.parse::<f64>().ok())
        .filter(|l| *l > 0.75 * cpus as f64);
    if let (false, Some(busy)) = (args.quiet, busy) {
        eprint_line(&format!(
            "note: the machine is busy (load average {busy} on {cpus} CPUs): the figures will be noisy, \
             the parallel loops' most of all; calibrate on a quiet machine for a file to keep"
        ));
    }
    let started = SystemTime::now();
    let shown = progress::shown(args.progress, args.quiet);
    let bar = progress::bar(shown, None, "{spinner} calibrating: {msg} ({elapsed})");
    let result = calibrate(&compiler, &target, &config, &mut |step| {
        bar.set_message(match step {
            CalibrationStep::Kernels { benchmarks } => {
                format!("timing {benchmarks} kernel and memory microbenchmarks")
            }
            CalibrationStep::ParallelLoops { benchmarks } => format!("timing {benchmarks} parallel loops"),
            CalibrationStep::Fitting => "fitting".to_string(),
        });
    });
    bar.finish_and_clear();
    let calibration = match result {
        Ok(c) => c,
        Err(e @ (CalibrationError::Invalid(_) | CalibrationError::Unsupported { .. })) => {
            return Err(bad_input(e.to_string()));
        }
        Err(e) => return Err(anyhow::Error::new(e).context(format!("calibrating {}", target.name()))),
    };
    let mut desc = calibration.target.description_value();
    desc.name = name;
    desc.description = format!("{} (calibrated)", target.description());
    let calibrated = Target::new(desc.clone()).bad_input(|| "--name".to_string())?;
    let header = Header { base: &target, calibration: &calibration, config: &config, started, load };
    let text = format!("{}{}", header.text(), desc.to_toml().context("cannot write the target as TOML")?);
    Target::from_toml(&text).context("the written target file does not read back (a bug)")?;
    match &args.output {
        Some(path) => {
            morello_search::db::write_atomically(path, text.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        None => output::print(&text)?,
    }
    if args.json {
        output::print_json(&json_report(&calibrated, &calibration, args))?;
    }
    if !args.quiet {
        for line in summary(&target, &calibrated, &calibration, args).lines() {
            eprint_line(line);
        }
    }
    Ok(())
}

/// The machine's 1-, 5- and 15-minute load averages (Linux), for the record.
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

/// The CPU's model name (Linux), for the record.
fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':').map(|(_, v)| v.trim().to_string()))
}

/// What the comment header of the written file says.
struct Header<'a> {
    base: &'a Target,
    calibration: &'a Calibration,
    config: &'a CalibrationConfig,
    started: SystemTime,
    load: Option<String>,
}

impl Header<'_> {
    fn text(&self) -> String {
        let c = self.calibration;
        let mut h = String::new();
        let _ = writeln!(
            h,
            "# morello target file: {} calibrated on this machine by `morello calibrate`.",
            self.base.name()
        );
        let _ = writeln!(
            h,
            "# Measured {} on {} ({} CPUs, load average {}),",
            humantime::format_rfc3339_seconds(self.started),
            cpu_model().unwrap_or_else(|| "an unknown CPU".into()),
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            self.load.as_deref().unwrap_or("unknown"),
        );
        let _ = writeln!(
            h,
            "# compiled by {}, pinned to {}, {} samples of at least {} s per microbenchmark (medians).",
            c.compiler,
            c.cpu.map_or("no CPU".to_string(), |cpu| format!("CPU {cpu}")),
            self.config.samples,
            self.config.min_sample_seconds,
        );
        let _ = writeln!(
            h,
            "# Scale: 1 cost unit = {:.4} ns ({} = {} units); rms relative error of the fit {:.1}%.",
            1e9 / c.units_per_second,
            c.reference,
            self.config.resolution,
            100.0 * c.rms_relative_error,
        );
        h.push_str(
            "# Use it with `--target FILE`; it gets its own memo table (its fingerprint differs).\n#\n",
        );
        h.push_str("# measurement (one invocation)                    ns median   model units\n");
        for m in &c.measurements {
            let units = m.model_units.map_or("-".to_string(), |u| u.to_string());
            let _ = writeln!(h, "#   {:<46} {:>10.3}   {:>11}", m.label, m.seconds * 1e9, units);
        }
        h.push_str("#\n# constant                                   before -> after\n");
        for k in &c.constants {
            let how = match (k.source, k.seconds) {
                (ConstantSource::Measured, Some(s)) => format!("fitted {:.4} ns", s * 1e9),
                (ConstantSource::Measured, None) => "measured".to_string(),
                (ConstantSource::ScaledDefault, _) => "not measured: scaled".to_string(),
            };
            let _ = writeln!(h, "#   {:<40} {:>8} -> {:<8} ({how})", k.name, k.before, k.units);
        }
        for note in &c.notes {
            let _ = writeln!(h, "# note: {note}");
        }
        h.push('\n');
        h
    }
}

/// The report on standard error.
fn summary(base: &Target, calibrated: &Target, c: &Calibration, args: &Args) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "calibrated {} with {} measurements: 1 unit = {:.4} ns ({} = {}), rms relative error {:.1}%",
        base.name(),
        c.measurements.len(),
        1e9 / c.units_per_second,
        c.reference,
        args.resolution,
        100.0 * c.rms_relative_error
    );
    let changed: Vec<String> = c
        .constants
        .iter()
        .map(|k| {
            format!(
                "{} {} -> {}{}",
                k.name,
                k.before,
                k.units,
                if k.source == ConstantSource::Measured { "" } else { " (scaled)" }
            )
        })
        .collect();
    let _ = writeln!(s, "constants: {}", changed.join(", "));
    for note in &c.notes {
        let _ = writeln!(s, "note: {note}");
    }
    if let Some(path) = &args.output {
        let _ = writeln!(
            s,
            "wrote {} (target {}); search with: morello search matmul 64x64x64 --target {}",
            path.display(),
            calibrated.name(),
            path.display()
        );
    }
    s
}

fn json_report(calibrated: &Target, c: &Calibration, args: &Args) -> serde_json::Value {
    json!({
        "target": calibrated.name(),
        "calibrated_from": args.target,
        "file": args.output.as_ref().map(|p| p.display().to_string()),
        "fingerprint": format!("{:016x}", calibrated.fingerprint()),
        "units_per_second": c.units_per_second,
        "reference": c.reference,
        "rms_relative_error": c.rms_relative_error,
        "compiler": c.compiler,
        "cpu": c.cpu,
        "measurements": c.measurements,
        "constants": c.constants,
        "notes": c.notes,
    })
}
