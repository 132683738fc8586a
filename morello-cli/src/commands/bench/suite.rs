//! `morello bench-suite`: the kernel suite (f32 matmul cubes 8 to 1024, the vector-matrix and
//! matrix-vector products 1x2048x16384 and 16384x2048x1, a bf16-to-f32 vector-matrix product, a
//! u32 64^3, and layers of real networks: ResNet-50's 3x3 convolutions 1x56x56x64 and 1x14x14x256,
//! a 1x1 convolution 1x28x28x512 to 128 channels, BERT-base's softmax (12*128)x128 and its
//! 128x768x3072 matmul with bias and GELU), and quantized u8 x s8 -> s32 rows (cubes 64 to 1024,
//! 100x300x77, BERT-base's 128x768x3072 plain and requantized, the GEMV 1x768x3072 and ResNet-50's
//! 1x56x56x64 3x3 convolution), each searched, verified and timed beside the baselines; the figures
//! go into a Markdown table between markers in `docs/PERFORMANCE.md` and a plot in `docs/perf.svg`.
//!
//! The peak is measured once (the f32 FMA peak, and the int8 peak of the target's int8 kernel when
//! the suite has int8 rows); each size is then one side-by-side run (`measure.rs`). A size that
//! fails (a kernel this host cannot run, say) is recorded as failed and the suite goes on; the
//! command exits with status 1 after writing the files.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use morello_codegen::{Compiler, host_features};
use morello_core::dtype::{Dtype, OperandDtypes};
use morello_measure::compare::percent_of_peak;
use morello_measure::peak::PeakVariant;
use morello_measure::{BaselineKind, BenchConfig, KernelCandidate, Measurement};
use serde_json::{Value, json};

use super::busy::{CpuTimes, busy_since};
use super::markdown::{Cell, Machine, Markers, Row, SUITE_MARKERS, Table, insert_section, section, utc_date};
use morello_measure::report::{measure_peak_once, result_json};

use super::measure::{MeasureArgs, measure_error, peak_line, protocol_line};
use super::svg::{Labels, Series, plot};
use crate::commands::search::{SearchOptions, Session};
use crate::database::DbArgs;
use crate::failure::bad_input;
use crate::spec_args::{SpecArgs, load_target, resolve};
use crate::{output, progress};

/// Examples shown after `morello bench-suite --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello bench-suite                                  (the whole suite; writes docs/PERFORMANCE.md, docs/perf.svg)
  morello bench-suite --sizes 8,16,32,64 --baseline openblas,libxsmm
  morello bench-suite --sizes 64,u32:64,bf16:1x2048x16384 --no-write
  morello bench-suite --sizes 8,16 --samples 2 --min-sample-seconds 0.01 --markdown /tmp/p.md --svg /tmp/p.svg

Sizes: N (an f32 NxNxN matmul), MxKxN, DTYPE:SIZE (bf16 operands accumulate into f32; u8s8s32 and
s8s8s32 are the quantized ones), or a spec in words as `morello bench` takes it (`conv 1x56x56x64
3x3x64x64 --layout nhwc --pad same`, `softmax 1536x128`, `matmul 128x768x3072 --epilogue bias,gelu`),
also after DTYPE: (`u8s8s32:conv 1x56x56x64 3x3x64x64 --layout nhwc --pad same`). The default suite is
8,16,32,64,128,256,512,1024,1x2048x16384,16384x2048x1,bf16:1x2048x16384,u32:64, those layers, and the
u8s8s32 rows.
Run it from the repository root (or pass --markdown and --svg); it takes several minutes.";

/// The default suite, in order: matmuls, then layers of real networks, then quantized rows.
pub const SUITE: [&str; 27] = [
    "8",
    "16",
    "32",
    "64",
    "128",
    "256",
    "512",
    "1024",
    "1x2048x16384",
    "16384x2048x1",
    "bf16:1x2048x16384",
    "u32:64",
    "conv 1x56x56x64 3x3x64x64 --layout nhwc --pad same",
    "conv 1x14x14x256 3x3x256x256 --layout nhwc --pad same",
    "conv 1x28x28x512 1x1x512x128 --layout nhwc",
    "softmax 1536x128",
    "matmul 128x768x3072 --epilogue bias,gelu",
    "u8s8s32:64",
    "u8s8s32:128",
    "u8s8s32:256",
    "u8s8s32:512",
    "u8s8s32:1024",
    "u8s8s32:100x300x77",
    "u8s8s32:128x768x3072",
    "u8s8s32:matmul 128x768x3072 --epilogue requant",
    "u8s8s32:1x768x3072",
    "u8s8s32:conv 1x56x56x64 3x3x64x64 --layout nhwc --pad same",
];

/// Arguments of `morello bench-suite`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Sizes to run, comma-separated (default: the whole suite): `N` for an f32 NxNxN matmul,
    /// `MxKxN`, optionally prefixed by a dtype, e.g. `bf16:1x2048x16384` or `u32:64`.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    sizes: Vec<String>,
    /// Target: x86, x86-avx2, x86-avx2-vnni, x86-avx512, arm-neon, or a TOML/JSON target file.
    #[arg(long, default_value = crate::spec_args::DEFAULT_TARGET, value_name = "TARGET")]
    pub(super) target: String,
    #[command(flatten)]
    pub(super) measure: MeasureArgs,
    /// The Markdown file whose `## Kernel suite` section (between marker comments) is replaced;
    /// created if missing, the section appended if it has no markers.
    #[arg(long, default_value = "docs/PERFORMANCE.md", value_name = "FILE")]
    pub(super) markdown: PathBuf,
    /// The SVG plot to write.
    #[arg(long, default_value = "docs/perf.svg", value_name = "FILE")]
    svg: PathBuf,
    /// Print the results but write no file.
    #[arg(long)]
    pub(super) no_write: bool,
    /// Print one JSON object with every size's results instead of the Markdown table.
    #[arg(long)]
    pub(super) json: bool,
    /// Instead of timing morello against the baselines, time the model's K best candidates of each
    /// size side by side and report the regret of its pick (its median time over the fastest
    /// candidate's) in the `## Regret of the model's pick` section; the default sizes are then the
    /// regret suite (cubes, odd shapes, BERT-base and ResNet-50 layers). No plot is written.
    #[arg(long)]
    pub(super) regret: bool,
    /// With --regret: how many candidates to time per size.
    #[arg(long, value_name = "K", default_value = "10", requires = "regret", value_parser = crate::numbers::parse_count)]
    pub(super) top_k: usize,
    /// With --regret: time only candidates predicted at least PERCENT costlier than the one ranked
    /// before them (as `morello bench --top-k --min-gap`).
    #[arg(long, value_name = "PERCENT", default_value = "2", requires = "regret", value_parser = super::kernel::parse_gap)]
    pub(super) min_gap: f64,
    #[command(flatten)]
    pub(super) options: SearchOptions,
    #[command(flatten)]
    pub(super) db: DbArgs,
}

/// One size of the suite: an `MxKxN` row-major matmul of some operand dtypes, or a spec in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// A spec in words with its flags (`softmax 1536x128`); the matmul fields are then unused.
    pub words: Option<String>,
    /// The operands' dtypes, as `--dtype` names them (bf16 accumulates into f32; u8s8s32 is a
    /// u8 `lhs`, an i8 `rhs` and an i32 output).
    pub dtypes: OperandDtypes,
    /// Rows of the output.
    pub m: u32,
    /// The reduction length.
    pub k: u32,
    /// Columns of the output.
    pub n: u32,
}

impl Entry {
    /// Parses `N`, `MxKxN` or a spec in words, each optionally after `DTYPE:` (a dtype or
    /// `u8s8s32`, `s8s8s32`).
    ///
    /// # Errors
    /// A sentence naming the bad part.
    pub fn parse(text: &str) -> Result<Entry, String> {
        let text = text.trim();
        let (dtypes, size) = match text.split_once(':') {
            Some((dtypes, size)) if !dtypes.contains(' ') => (
                dtypes.trim().parse::<OperandDtypes>().map_err(|e| format!("size `{text}`: {e}"))?,
                size.trim(),
            ),
            _ => (OperandDtypes::single(Dtype::F32), text),
        };
        if size.starts_with(|c: char| c.is_ascii_alphabetic()) && size.contains(' ') {
            return Ok(Entry { words: Some(size.to_string()), dtypes, m: 0, k: 0, n: 0 });
        }
        let dims: Vec<u32> = size
            .split('x')
            .map(|d| d.trim().parse::<u32>().ok().filter(|&d| d > 0))
            .collect::<Option<_>>()
            .ok_or_else(|| format!("size `{text}` must be N or MxKxN with positive integers"))?;
        match dims[..] {
            [n] => Ok(Entry { words: None, dtypes, m: n, k: n, n }),
            [m, k, n] => Ok(Entry { words: None, dtypes, m, k, n }),
            _ => Err(format!("size `{text}` must be N or MxKxN")),
        }
    }

    /// `f32 64x64x64`, `u8s8s32 256x256x256`, `softmax 1536x128`, `u8s8s32 conv ...`.
    pub fn label(&self) -> String {
        let dtypes = self.dtypes.name();
        match &self.words {
            Some(words) if self.is_f32() => words.clone(),
            Some(words) => format!("{dtypes} {words}"),
            None => format!("{dtypes} {}x{}x{}", self.m, self.k, self.n),
        }
    }

    /// Whether every operand is f32.
    fn is_f32(&self) -> bool {
        self.dtypes == OperandDtypes::single(Dtype::F32)
    }

    /// Whether the inputs are 8-bit integers (the row's figures are int8 GOPS).
    pub fn is_int8(&self) -> bool {
        OperandDtypes::COMBINATIONS.iter().any(|(_, d)| *d == self.dtypes)
    }

    /// The edge of an f32 cube (the plot's x axis), if it is one.
    pub fn cube(&self) -> Option<u32> {
        (self.words.is_none() && self.is_f32() && self.m == self.k && self.k == self.n).then_some(self.m)
    }
}

/// One size's outcome.
struct Outcome {
    entry: Entry,
    spec: Option<String>,
    result: Result<Measurement, String>,
}

/// Runs `morello bench-suite`.
pub fn run(args: &Args) -> Result<()> {
    let entries = entries(args, &SUITE)?;
    let config = args.measure.config()?;
    let baselines = args.measure.baselines(&BaselineKind::ALL)?;
    if !args.no_write {
        check_outputs(&args.markdown, SUITE_MARKERS, Some(&args.svg))?;
    }
    let (target, target_note) = load_target(&args.target)?;
    let compiler = crate::spec_args::timing_compiler(&target, "bench-suite")?;

    let bar = progress::bar(
        progress::shown(args.options.progress, args.options.quiet),
        Some(entries.len() as u64),
        "{spinner} [{pos}/{len}] {msg} ({elapsed})",
    );
    bar.set_message("measuring the peak");
    let before = CpuTimes::now();
    let peak = measure_peak_once(&compiler, &config, None);
    // The int8 rows' peak: the instruction of the target's int8 kernel.
    let int8_peak = entries
        .iter()
        .any(Entry::is_int8)
        .then(|| PeakVariant::for_int8(&target).map(|v| measure_peak_once(&compiler, &config, Some(v))))
        .flatten();
    let mut outcomes = Vec::new();
    for entry in &entries {
        bar.set_message(format!("{}: searching, verifying, timing", entry.label()));
        let words = match &entry.words {
            Some(words) => words.clone(),
            None => format!("matmul {}x{}x{}", entry.m, entry.k, entry.n),
        };
        let spec_args = match SpecArgs::from_words(&words, &args.target, &entry.dtypes.name()) {
            Ok(mut spec_args) => {
                spec_args.processors = u32::try_from(config.threads).ok();
                spec_args
            }
            Err(e) => return Err(bad_input(format!("size `{words}`: {e}"))),
        };
        let (spec, result) = match run_entry(args, &spec_args, &compiler, &baselines, &config) {
            Ok((spec, m)) => (Some(spec), Ok(m)),
            Err(e) => {
                bar.suspend(|| report_failure(entry, &e));
                (None, Err(format!("{e:#}")))
            }
        };
        outcomes.push(Outcome { entry: entry.clone(), spec, result });
        bar.inc(1);
    }
    bar.finish_and_clear();
    let busy = busy_since(before);

    let peak_gflops = peak.as_ref().ok().map(|p| p.gflops);
    let table = table(&outcomes, &baselines);
    let mut notes = notes(&outcomes);
    for warning in args.measure.noise_note().into_iter().chain(busy) {
        notes.insert(0, format!("Warning: {warning}."));
    }
    let target_text = target_note.clone().unwrap_or_else(|| target.name().to_string());
    let peak_text = match &int8_peak {
        Some(int8) => format!("{}; int8 rows: {}", peak_line(&peak), peak_line(int8)),
        None => peak_line(&peak),
    };
    let machine = machine(&compiler, &config, peak_text, target_text);
    let int8_peak = int8_peak.and_then(|p| p.ok()).map(|p| p.gflops);
    let svg = plot(
        &series(&table, &entries),
        peak_gflops.map(|p| p * config.threads as f64),
        &Labels {
            title: format!(
                "f32 matmul NxNxN, {} thread{}: GFLOP/s (median)",
                config.threads,
                if config.threads == 1 { "" } else { "s" }
            ),
            x: "N (log scale)".into(),
            y: "GFLOP/s".into(),
        },
    );
    if !args.no_write {
        let link = plot_link(&args.markdown, &args.svg);
        let body = section(&table, &machine, &notes, &link);
        write_outputs(&args.markdown, SUITE_MARKERS, &body, Some((&args.svg, &svg)))?;
    }

    if args.json {
        let peaks = Peaks { f32: peak_gflops, int8: int8_peak };
        output::print_json(&suite_json(&outcomes, &table, &machine, peaks, &config))?;
    } else {
        let mut text = format!("peak: {}\n\n", machine.peak);
        text += &table.markdown();
        for note in &notes {
            text += &format!("\n- {note}");
        }
        if !notes.is_empty() {
            text.push('\n');
        }
        if !args.no_write {
            text += &format!("\nwrote {} and {}\n", args.markdown.display(), args.svg.display());
        }
        output::print(&text)?;
    }
    let failed = outcomes.iter().filter(|o| o.result.is_err()).count();
    if failed > 0 {
        return Err(anyhow!("{failed} of {} sizes failed (see the notes)", outcomes.len()));
    }
    Ok(())
}

/// The sizes `--sizes` names, else `default`.
pub(super) fn entries(args: &Args, default: &[&str]) -> Result<Vec<Entry>> {
    if args.sizes.is_empty() {
        return default.iter().map(|t| Entry::parse(t).map_err(bad_input)).collect();
    }
    args.sizes.iter().map(|t| Entry::parse(t).map_err(bad_input)).collect()
}

/// Searches, verifies and times one size; returns its spec text and measurement.
fn run_entry(
    args: &Args,
    spec_args: &SpecArgs,
    compiler: &Compiler,
    baselines: &[BaselineKind],
    config: &BenchConfig,
) -> Result<(String, Measurement)> {
    let resolved = resolve(spec_args)?;
    crate::memory::check_runnable(&resolved, "bench-suite")?;
    let session =
        Session::start(&resolved, &SearchOptions { progress: false, quiet: true, ..args.options }, false)?;
    let solution = session
        .solve_with_table(&resolved, &args.db, None)?
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("the search returned no implementation"))?;
    let kernels = [KernelCandidate { label: "morello".into(), imp: &solution.imp }];
    let measured =
        morello_measure::measure(compiler, &resolved.target, &resolved.spec, &kernels, baselines, config)
            .map_err(measure_error(&resolved.target))?;
    Ok((resolved.spec.display(&resolved.target).to_string(), measured))
}

#[allow(clippy::print_stderr)]
fn report_failure(entry: &Entry, error: &anyhow::Error) {
    eprintln!("error: {}: {error:#}", entry.label());
}

/// Fails early (before minutes of timing) if the outputs cannot be written.
pub(super) fn check_outputs(markdown: &Path, markers: Markers, svg: Option<&Path>) -> Result<()> {
    for path in std::iter::once(markdown).chain(svg) {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !parent.is_dir() {
            return Err(bad_input(format!(
                "{} does not exist: run from the repository root, pass --markdown FILE{}, or --no-write",
                parent.display(),
                if svg.is_some() { " and --svg FILE" } else { "" }
            )));
        }
    }
    if markdown.exists() {
        let text = std::fs::read_to_string(markdown)
            .with_context(|| format!("cannot read {}", markdown.display()))?;
        insert_section(&text, "", markers).map_err(|e| bad_input(format!("{}: {e}", markdown.display())))?;
    }
    Ok(())
}

/// Replaces the section between `markers` of `markdown` with `body`, and writes the plot if given.
pub(super) fn write_outputs(
    markdown: &Path,
    markers: Markers,
    body: &str,
    svg: Option<(&Path, &str)>,
) -> Result<()> {
    let document = if markdown.exists() {
        std::fs::read_to_string(markdown).with_context(|| format!("cannot read {}", markdown.display()))?
    } else {
        String::new()
    };
    let updated = insert_section(&document, body, markers)
        .map_err(|e| bad_input(format!("{}: {e}", markdown.display())))?;
    morello_search::db::write_atomically(markdown, updated.as_bytes())
        .with_context(|| format!("cannot write {}", markdown.display()))?;
    if let Some((path, svg)) = svg {
        morello_search::db::write_atomically(path, svg.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// How the Markdown file refers to the plot: its file name when both are in one directory.
fn plot_link(markdown: &Path, svg: &Path) -> String {
    let same_dir = markdown.parent() == svg.parent();
    match svg.file_name() {
        Some(name) if same_dir => name.to_string_lossy().into_owned(),
        _ => std::path::absolute(svg).unwrap_or_else(|_| svg.to_path_buf()).display().to_string(),
    }
}

/// The table: morello, then each requested baseline, one row per size.
fn table(outcomes: &[Outcome], baselines: &[BaselineKind]) -> Table {
    let implementations: Vec<String> = std::iter::once("morello".to_string())
        .chain(baselines.iter().map(|b| b.name().to_string()))
        .collect();
    let rows = outcomes
        .iter()
        .map(|o| {
            let cells = implementations
                .iter()
                .map(|name| {
                    let m = o.result.as_ref().ok()?;
                    let result = m.report.result(name)?;
                    // Work per call: flops, or bytes for a kernel without a flop count.
                    let (work, median) = match (m.work.flops, m.work.bytes) {
                        (Some(flops), _) => (flops, result.gflops?),
                        (None, Some(bytes)) => (bytes, result.gbytes_per_second?),
                        (None, None) => return None,
                    };
                    Some(Cell {
                        gflops: median,
                        slowest: work / result.stats.max / 1e9,
                        fastest: work / result.stats.min / 1e9,
                        gbytes_per_second: result.gbytes_per_second,
                    })
                })
                .collect();
            let bytes_only = o.result.as_ref().is_ok_and(|m| m.work.flops.is_none());
            Row {
                label: o.entry.label(),
                bytes_only,
                memory_bound: o.entry.m == 1 || o.entry.n == 1,
                cells,
                failure: o.result.as_ref().err().cloned(),
            }
        })
        .collect();
    Table { implementations, rows }
}

/// Why things are missing, each reason once with the sizes it applies to.
fn notes(outcomes: &[Outcome]) -> Vec<String> {
    let mut reasons: Vec<(String, Vec<String>)> = Vec::new();
    let mut add = |reason: String, label: String| match reasons.iter_mut().find(|(r, _)| *r == reason) {
        Some((_, labels)) => labels.push(label),
        None => reasons.push((reason, vec![label])),
    };
    for o in outcomes {
        match &o.result {
            Err(e) => add(format!("failed: {e}"), o.entry.label()),
            Ok(m) => {
                if let Some(reason) = &m.not_comparable {
                    add(format!("no baseline: {reason}"), o.entry.label());
                }
                // "openblas: no u32 matmul", "blis: no u32 matmul" -> "skipped openblas, blis: no u32 matmul".
                let mut causes: Vec<(&str, Vec<&str>)> = Vec::new();
                for s in &m.skipped {
                    let cause = s.reason.strip_prefix(&format!("{}: ", s.name)).unwrap_or(&s.reason);
                    match causes.iter_mut().find(|(c, _)| *c == cause) {
                        Some((_, names)) => names.push(&s.name),
                        None => causes.push((cause, vec![&s.name])),
                    }
                }
                for (cause, names) in causes {
                    add(format!("skipped {}: {cause}", names.join(", ")), o.entry.label());
                }
            }
        }
    }
    let total = outcomes.len();
    reasons
        .into_iter()
        .map(|(reason, labels)| {
            if labels.len() == total && total > 1 {
                format!("All sizes: {reason}")
            } else {
                format!("{}: {reason}", labels.join(", "))
            }
        })
        .collect()
}

/// The plot's lines: each implementation's GFLOP/s over the f32 cubes.
fn series(table: &Table, entries: &[Entry]) -> Vec<Series> {
    table
        .implementations
        .iter()
        .enumerate()
        .map(|(column, name)| Series {
            name: name.clone(),
            points: table
                .rows
                .iter()
                .zip(entries)
                .filter_map(|(row, entry)| {
                    let x = f64::from(entry.cube()?);
                    Some((x, row.cells.get(column).copied().flatten().map(|c| c.gflops)))
                })
                .collect(),
        })
        .filter(|s| s.points.iter().any(|p| p.1.is_some()))
        .collect()
}

/// The measured single-core peaks: f32 GFLOP/s and, with int8 rows, int8 GOPS.
#[derive(Debug, Clone, Copy)]
struct Peaks {
    f32: Option<f64>,
    int8: Option<f64>,
}

fn suite_json(
    outcomes: &[Outcome],
    table: &Table,
    machine: &Machine,
    peaks: Peaks,
    config: &BenchConfig,
) -> Value {
    let rows: Vec<Value> = outcomes
        .iter()
        .zip(&table.rows)
        .map(|(o, row)| {
            let (results, skipped, not_comparable) = match &o.result {
                Ok(m) => {
                    let peak = if o.entry.is_int8() {
                        peaks.int8
                    } else {
                        peaks.f32.filter(|_| o.entry.is_f32())
                    };
                    let results: Vec<Value> = m
                        .report
                        .results
                        .iter()
                        .map(|r| result_json(r, percent_of_peak(r.gflops, peak, config.threads)))
                        .collect();
                    let skipped: Vec<Value> =
                        m.skipped.iter().map(|s| json!({"name": s.name, "reason": s.reason})).collect();
                    (results, skipped, m.not_comparable.clone())
                }
                Err(_) => (Vec::new(), Vec::new(), None),
            };
            json!({
                "label": o.entry.label(),
                "spec": o.spec,
                "results": results,
                "skipped": skipped,
                "baselines_not_comparable": not_comparable,
                "failure": o.result.as_ref().err(),
                "morello_vs_best_library": table.ratio(row).map(|(r, name)| json!({"ratio": r, "library": name})),
            })
        })
        .collect();
    json!({
        "peak_gflops": peaks.f32,
        "int8_peak_gops": peaks.int8,
        "machine": {
            "date": machine.date, "command": machine.command, "cpu": machine.cpu, "os": machine.os,
            "features": machine.features, "compiler": machine.compiler, "peak": machine.peak,
            "protocol": machine.protocol, "target": machine.target,
        },
        "rows": rows,
    })
}

/// The command line as typed, quoted where a shell would need it.
/// This machine and run as the generated sections record them: now, the command line, the CPU, the
/// OS, the instruction sets, `compiler`, `peak` and `target` as given, and `config`'s protocol.
pub(super) fn machine(compiler: &Compiler, config: &BenchConfig, peak: String, target: String) -> Machine {
    Machine {
        date: utc_date(std::time::SystemTime::now()),
        command: command_line(),
        cpu: cpu_description(),
        os: os_description(),
        features: host_features().iter().map(|f| f.name()).collect::<Vec<_>>().join(" "),
        compiler: compiler.to_string(),
        peak,
        protocol: protocol_line(config, &config.bound_cpus()),
        target,
    }
}

fn command_line() -> String {
    let quote = |arg: String| {
        let plain =
            !arg.is_empty() && arg.chars().all(|c| c.is_ascii_alphanumeric() || "_-./:=,+@%".contains(c));
        if plain { arg } else { format!("'{}'", arg.replace('\'', r"'\''")) }
    };
    std::iter::once("morello".to_string())
        .chain(std::env::args().skip(1).map(quote))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The CPU's model name, family and model numbers (a virtual machine's name can be as bare as
/// "Intel Xeon Processor": the numbers tell its generation) and the logical CPUs.
fn cpu_description() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines().find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == name).then(|| value.trim().to_string())
        })
    };
    let model = field("model name").unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let numbers = match (field("cpu family"), field("model")) {
        (Some(family), Some(number)) => format!(" (family {family} model {number})"),
        _ => String::new(),
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}{numbers}, {cpus} logical CPU{}", if cpus == 1 { "" } else { "s" })
}

fn os_description() -> String {
    let os = match std::env::consts::OS {
        "linux" => "Linux",
        other => other,
    };
    match std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        Ok(release) => format!("{os} {}", release.trim()),
        Err(_) => os.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn sizes_parse_with_an_optional_dtype() {
        let f32 = OperandDtypes::single(Dtype::F32);
        assert_eq!(Entry::parse("64"), Ok(Entry { words: None, dtypes: f32, m: 64, k: 64, n: 64 }));
        let layer = Entry::parse("softmax 1536x128").unwrap();
        assert_eq!((layer.label(), layer.cube()), ("softmax 1536x128".to_string(), None));
        assert_eq!(Entry::parse("1x2048x16384").map(|e| (e.m, e.k, e.n)), Ok((1, 2048, 16384)));
        let bf16 = Entry::parse("bf16:1x2048x16384").unwrap();
        assert_eq!((bf16.dtypes.lhs, bf16.label()), (Dtype::Bf16, "bf16 1x2048x16384".to_string()));
        assert_eq!(Entry::parse("u32:64").map(|e| e.cube()), Ok(None));
        assert_eq!(Entry::parse("32").map(|e| e.cube()), Ok(Some(32)));
        let int8 = Entry::parse("u8s8s32:100x300x77").unwrap();
        assert_eq!(
            (int8.label(), int8.is_int8(), int8.cube()),
            ("u8s8s32 100x300x77".to_string(), true, None)
        );
        let conv = Entry::parse("s8s8s32:conv 1x8x8x4 3x3x4x4 --pad same").unwrap();
        assert_eq!(conv.label(), "s8s8s32 conv 1x8x8x4 3x3x4x4 --pad same");
        assert_eq!(conv.words.as_deref(), Some("conv 1x8x8x4 3x3x4x4 --pad same"));
        for bad in ["", "0", "8x8", "axbxc", "f64:8", "8x8x8x8", "-1", "u8s8s16:64", "u8s8s32:softmax"] {
            assert!(Entry::parse(bad).is_err(), "{bad}");
        }
        assert!(SUITE.iter().all(|s| Entry::parse(s).is_ok()));
    }

    #[test]
    fn the_plot_link_is_relative_only_within_one_directory() {
        assert_eq!(plot_link(Path::new("docs/PERFORMANCE.md"), Path::new("docs/perf.svg")), "perf.svg");
        assert!(plot_link(Path::new("docs/P.md"), Path::new("other/perf.svg")).ends_with("other/perf.svg"));
    }
}
