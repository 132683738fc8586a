//! The microbenchmarks of calibration: one C function per measurement, each doing many
//! invocations of one kernel (or streaming one working set, or running one parallel loop), and
//! what the cost model says that invocation is.
//!
//! Every function has the benchmark harness's call shape `void f(const float *data, float *out)`
//! ([`signature`]) and is timed by [`crate::bench`]: all of them in one program, alternating,
//! on one pinned core. A function performs `invocations` invocations per call, so the time of
//! one invocation is the harness's median time per call divided by `invocations`.
//!
//! The C mirrors what the emitter writes for each kernel (the same intrinsics, from
//! [`morello_codegen::emit::vector`]), arranged so that invocations are independent of each other (as the
//! invocations of a register-tiled microkernel are) and cannot be removed by the compiler:
//!
//! ```text
//! CALIB_USE(x)      an empty asm that reads x: the value must be computed, no instruction added
//! CALIB_OPAQUE(x)   an empty asm that may change x: the compiler cannot hoist or reuse it
//! CALIB_CLOBBER()   an empty asm that may read and write memory: stores happen, loads repeat
//! ```
//!
//! Buffers (floats): `data[0, 1024)` scalars read from L1, `data[0, 2560)` vector loads,
//! `data[0, 2048)` and `data[4096, 6144)` dot-product operands, `data[6144, 6400)` register
//! initial values; `out[0, 4096)` stores and memsets, `out[12288, 16384)` sinks for results. The
//! streaming benchmarks read `data` from its start over their working set.

use std::fmt::Write as _;

use morello_core::dtype::Dtype;
use morello_core::imp::Parallelism;
use morello_core::kernels::{CalibrationCase, CalibrationSites, KernelKind};
use morello_core::layout::Layout;
use morello_core::shape::Shape;
use morello_core::spec::{Direction, LogicalSpec, TensorSpec};
use morello_core::target::{IsaFeature, LevelId, LevelKind, Target};

use super::CalibrationError;
use morello_codegen::emit::helpers::{Helper, definitions};
use morello_codegen::emit::lone::{LoneOperand, lone_kernel};
use morello_codegen::emit::vector::{VectorIsa, VectorType};
use morello_codegen::harness::{CType, KernelParam, KernelSignature, ParamRole};

/// Rounds of the kernel benchmarks' loops per call.
const ROUNDS: u64 = 256;

/// Floats in `out`.
pub(crate) const OUT_FLOATS: usize = 16384;

/// Where the sinks of results start in `out`.
const SINK: usize = 12288;

/// Where register initial values are read in `data`.
const REGISTERS: usize = 6144;

/// The smallest `data` buffer in floats (what the kernel benchmarks read).
pub(crate) const MIN_DATA_FLOATS: usize = 8192;

/// The C text before the benchmark functions.
const PRELUDE: &str = "\
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CALIB_USE(x) __asm__ volatile(\"\" : : \"v\"(x))
#define CALIB_OPAQUE(x) __asm__ volatile(\"\" : \"+v\"(x))
#define CALIB_OPAQUE_R(x) __asm__ volatile(\"\" : \"+r\"(x))
#define CALIB_CLOBBER() __asm__ volatile(\"\" : : : \"memory\")
";

/// The call shape every benchmark function has: `data` (read) and `out` (written).
pub(crate) fn signature(suite: &Suite) -> KernelSignature {
    KernelSignature::new(
        "calib",
        vec![
            KernelParam::new("data", CType::F32, suite.data_floats, ParamRole::Input),
            KernelParam::new("out", CType::F32, suite.out_floats, ParamRole::Output),
        ],
    )
}

/// What a microbenchmark measures, and how the model charges one invocation of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Measures {
    /// One application of a kernel to `spec`.
    Kernel {
        /// The kernel.
        kind: KernelKind,
        /// The spec it is applied to (canonical for the target).
        spec: LogicalSpec,
    },
    /// One cache line streamed from `level` into vector registers: the model moves it through
    /// `path` (each step an `Alloc` from one level to the next) and loads it with `load`.
    Stream {
        /// Where the working set lives.
        level: LevelId,
        /// The moves, as (source, destination) tensors of one line.
        path: Vec<(TensorSpec, TensorSpec)>,
        /// The `VectorAssign` spec loading the line into registers.
        load: LogicalSpec,
        /// Whether each line is its own row of a strided tile (not one contiguous run).
        strided: bool,
    },
    /// One call of a loop of `iterations` tiny bodies, parallel (OpenMP) or serial.
    Loop {
        /// Iterations of the loop.
        iterations: u64,
        /// Serial, or an OpenMP parallel loop.
        parallelism: Parallelism,
    },
}

/// One microbenchmark: a C function and what it measures.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Microbenchmark {
    /// Its label in the benchmark program and in reports, e.g. `BroadcastVecMultAdd.v4`.
    pub label: String,
    /// A phrase for people, e.g. `4 vectors of 16 f32`.
    pub description: String,
    /// The C function's name.
    pub function: String,
    /// The C function's definition.
    pub source: String,
    /// Invocations per call.
    pub invocations: u64,
    /// What it measures.
    pub measures: Measures,
}

/// A set of microbenchmarks that go into one program.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Suite {
    /// The benchmarks, in a fixed order.
    pub benches: Vec<Microbenchmark>,
    /// The translation unit holding all their functions.
    pub source: String,
    /// Floats in `data`.
    pub data_floats: usize,
    /// Floats in `out`.
    pub out_floats: usize,
    /// Kernels the target lists but no benchmark measures, with the reason.
    pub unmeasured: Vec<(KernelKind, String)>,
}

/// The levels the suite measures at: the kernels' [`CalibrationSites`], or why the target has none.
fn sites(target: &Target) -> Result<CalibrationSites, CalibrationError> {
    CalibrationSites::of(target).map_err(|reason| CalibrationError::Unsupported {
        target: target.name().to_string(),
        reason: reason.to_string(),
    })
}

/// The path of moves from `level` to the nearest level, through cache and memory levels (the
/// fewest steps; ties by level order), or `None` if there is none.
fn path_from(sites: &CalibrationSites, target: &Target, level: LevelId) -> Option<Vec<LevelId>> {
    let mut paths: Vec<Vec<LevelId>> = vec![vec![level]];
    for _ in 0..target.levels().len() {
        if let Some(found) = paths.iter().find(|p| p.last() == Some(&sites.nearest)) {
            return Some(found.clone());
        }
        paths = paths
            .iter()
            .flat_map(|p| {
                let last = *p.last().expect("paths are never empty");
                target
                    .level(last)
                    .moves_to
                    .iter()
                    .filter(|&&d| !target.level(d).kind.counts_registers())
                    .map(|&d| {
                        let mut next = p.clone();
                        next.push(d);
                        next
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    None
}

/// How the kernel and memory suite is sized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SuiteSize {
    /// Bytes streamed from the slowest (memory) levels.
    pub memory_bytes: u64,
    /// The ISA features the host cannot run: a kernel that requires one is left unmeasured.
    pub host_lacks: Vec<IsaFeature>,
}

/// Builds the kernel and memory suite for `target`.
///
/// # Errors
/// [`CalibrationError::Unsupported`] for a target without the levels calibration needs;
/// [`CalibrationError::Model`] if a benchmark's spec is not valid for the target or its kernel
/// does not apply to it (the suite and the kernel catalogue disagree).
pub(crate) fn kernel_suite(target: &Target, size: SuiteSize) -> Result<Suite, CalibrationError> {
    let levels = sites(target)?;
    let mut b = Builder::new(target, &levels);
    let mut unmeasured = Vec::new();
    for &kind in target.kernels() {
        let lacks: Vec<&str> = kind
            .required_isa()
            .iter()
            .filter(|f| size.host_lacks.contains(f))
            .map(|f| f.display_name())
            .collect();
        if !lacks.is_empty() {
            unmeasured.push((kind, format!("the host cannot run {} instructions", lacks.join(" and "))));
            continue;
        }
        let before = b.benches.len();
        // The kernel's own calibration cases, each run through its own emitter.
        for case in kind.calibration(&levels) {
            b.kernel_case(kind, &case)?;
        }
        if b.benches.len() == before {
            unmeasured
                .push((kind, "its calibration specs need levels this target does not have".to_string()));
        }
    }
    let memory_bytes = size.memory_bytes.max(MIN_DATA_FLOATS as u64 * 4);
    for level in target.level_ids() {
        b.stream(level, memory_bytes)?;
    }
    if let Some(home) = target.level_ids().find(|&id| target.level(id).kind == LevelKind::Memory) {
        b.strided_stream(home, memory_bytes)?;
    }
    let data_floats = b.data_floats.max(MIN_DATA_FLOATS);
    Ok(b.finish(data_floats, unmeasured))
}

/// The parallel-loop suite: for each iteration count, an OpenMP loop and the same loop serial.
pub(crate) fn parallel_suite(target: &Target) -> Suite {
    let processors = u64::from(target.processors());
    let counts: Vec<u64> = [1, 2, 8, 32, 128].iter().map(|m| m * processors).collect();
    let floats = counts.iter().copied().max().unwrap_or(1) as usize * 16;
    let mut benches = Vec::new();
    for &n in &counts {
        for parallelism in [Parallelism::Serial, Parallelism::Parallel] {
            let parallel = parallelism == Parallelism::Parallel;
            let function = format!("calib_{}", benches.len());
            let pragma = if parallel { "  #pragma omp parallel for schedule(static)\n" } else { "" };
            let source = format!(
                "void {function}(const float *data, float *out) {{\n{pragma}  for (int64_t i = 0; i < {n}; i++) {{\n    \
                 for (int64_t j = 0; j < 16; j++) out[i * 16 + j] = data[i * 16 + j] + 1.0f;\n  }}\n}}\n"
            );
            let (kind, article) = if parallel { ("parallel", "a parallel") } else { ("serial", "a serial") };
            benches.push(Microbenchmark {
                label: format!("{kind}.{n}"),
                description: format!("{article} loop of {n} iterations, one line each"),
                function,
                source,
                invocations: 1,
                measures: Measures::Loop { iterations: n, parallelism },
            });
        }
    }
    let mut source = format!("{PRELUDE}#include <omp.h>\n");
    for bench in &benches {
        source.push('\n');
        source.push_str(&bench.source);
    }
    Suite { benches, source, data_floats: floats, out_floats: floats.max(OUT_FLOATS), unmeasured: Vec::new() }
}

/// Accumulates microbenchmarks and their C.
struct Builder<'t> {
    target: &'t Target,
    levels: &'t CalibrationSites,
    benches: Vec<Microbenchmark>,
    helpers: std::collections::BTreeSet<Helper>,
    data_floats: usize,
}

impl<'t> Builder<'t> {
    fn new(target: &'t Target, levels: &'t CalibrationSites) -> Self {
        Builder {
            target,
            levels,
            benches: Vec::new(),
            helpers: std::collections::BTreeSet::new(),
            data_floats: MIN_DATA_FLOATS,
        }
    }

    fn finish(self, data_floats: usize, unmeasured: Vec<(KernelKind, String)>) -> Suite {
        let mut source = String::from(PRELUDE);
        source.push_str(&definitions(&self.helpers));
        for bench in &self.benches {
            source.push('\n');
            source.push_str(&bench.source);
        }
        Suite { benches: self.benches, source, data_floats, out_floats: OUT_FLOATS, unmeasured }
    }

    fn name(&self, level: LevelId) -> &str {
        &self.target.level(level).name
    }

    /// A canonical spec from its text, checked to be one `kind` applies to.
    fn kernel_spec(&self, kind: KernelKind, text: &str) -> Result<LogicalSpec, CalibrationError> {
        let model = |why: String| CalibrationError::Model(format!("calibration spec `{text}`: {why}"));
        let spec = LogicalSpec::parse(text, self.target)
            .map_err(|e| model(e.to_string()))?
            .canonicalize(self.target)
            .map_err(|e| model(e.to_string()))?;
        let spec: LogicalSpec = (*spec).clone();
        if !kind.applies(&spec, self.target) {
            return Err(model(format!("{kind} does not apply to it")));
        }
        Ok(spec)
    }

    fn push(&mut self, label: String, description: String, invocations: u64, body: &str, measures: Measures) {
        let function = format!("calib_{}", self.benches.len());
        let source = format!(
            "/* {label}: {description} */\nvoid {function}(const float *data, float *out) {{\n{body}}}\n"
        );
        self.benches.push(Microbenchmark { label, description, function, source, invocations, measures });
    }

    fn vector(&self, bytes: u32) -> Result<VectorType, CalibrationError> {
        Ok(VectorType::new(VectorIsa::of(self.target), Dtype::F32, bytes / 4)?)
    }

    /// One microbenchmark of `kind` on a case its definition names ([`KernelKind::calibration`]):
    /// the emitter's own statements for the kernel ([`lone_kernel`]), `A` invocations per round.
    ///
    /// Invocations are independent: each has its own memory operands (inputs in `data`, outputs
    /// in `out`) and its own output registers; input registers are shared. `CALIB_OPAQUE` before
    /// an invocation makes its input registers unknown (nothing is hoisted or reused across
    /// invocations) and after it makes its output registers used; `CALIB_CLOBBER` after each
    /// round makes the next one load and store again. `A` is at most 8, as many as the output
    /// registers fit beside the inputs, and as many as keep the memory operands within half of
    /// L1.
    fn kernel_case(&mut self, kind: KernelKind, case: &CalibrationCase) -> Result<(), CalibrationError> {
        let spec = self.kernel_spec(kind, &case.spec)?;
        let directions = spec.kind.directions();
        let target = self.target;
        let registers = |o: &TensorSpec| match target.level(o.level).kind {
            LevelKind::VectorRegisters => o.shape.volume() / u64::from(o.vector_size.unwrap_or(1).max(1)),
            LevelKind::ScalarRegisters => o.shape.volume(),
            LevelKind::Cache | LevelKind::Memory => 0,
        };
        // Bytes of a memory operand, in whole 64-byte blocks.
        let bytes = |o: &TensorSpec| (o.shape.volume() * u64::from(o.dtype.size_bytes())).div_ceil(64) * 64;
        let (mut shared, mut own, mut memory) = (0, 0, 0);
        for (o, d) in spec.operands.iter().zip(&directions) {
            match (registers(o), d) {
                (0, _) => memory += bytes(o),
                (n, Direction::In) => shared += n,
                (n, _) => own += n,
            }
        }
        let by_registers = self.levels.vector_registers.saturating_sub(shared + 2) / own.max(1);
        let by_memory = (target.level(self.levels.nearest).capacity / 2) / memory.max(1);
        let a_count = by_registers.min(by_memory).clamp(1, 8);

        let label =
            if case.label.is_empty() { kind.name().to_string() } else { format!("{kind}.{}", case.label) };
        let model = |why: String| CalibrationError::Model(format!("calibration of {label}: {why}"));
        let mut head = String::from("  (void)data;\n  (void)out;\n");
        let mut rounds = format!("  for (int r = 0; r < {ROUNDS}; r++) {{\n");
        let mut sink = String::new();
        // Floats used so far in `data` (inputs), `out` (outputs), register values and sinks.
        let (mut inputs, mut outputs, mut values, mut sinks) = (0u64, 0u64, 0u64, 0u64);
        let mut value_at = |elements: u64| {
            let at = REGISTERS as u64 + values;
            values += elements.div_ceil(16) * 16;
            at
        };
        let mut declared_shared = false;
        for a in 0..a_count {
            let names: Vec<String> = directions
                .iter()
                .enumerate()
                .map(|(i, d)| match (registers(&spec.operands[i]), d) {
                    (0, _) => format!("m{i}"),
                    (_, Direction::In) => format!("o{i}"),
                    _ => format!("o{i}a{a}"),
                })
                .collect();
            let lone = lone_kernel(kind, &spec, target, &names, 3)?;
            self.helpers.extend(lone.helpers);
            let mut before = String::new();
            let mut after = String::new();
            for ((operand, lone), direction) in spec.operands.iter().zip(&lone.operands).zip(&directions) {
                let input = *direction == Direction::In;
                match lone {
                    LoneOperand::Memory { name, c_type } => {
                        let (buffer, used, qualifier) =
                            if input { ("data", &mut inputs, "const ") } else { ("out", &mut outputs, "") };
                        let c = c_type.c_name();
                        let _ = writeln!(
                            before,
                            "      {qualifier}{c} *{name} = ({qualifier}{c} *)({buffer} + {used});"
                        );
                        *used += bytes(operand) / 4;
                    }
                    LoneOperand::Vectors { prefix, vector, count } => {
                        if input && declared_shared {
                            continue;
                        }
                        let lanes = u64::from(vector.lanes);
                        for j in 0..*count {
                            let var = format!("{prefix}_{j}");
                            let at = value_at(lanes);
                            let _ = writeln!(
                                head,
                                "  {} {var} = {};",
                                vector.c_type(),
                                vector.load(&format!("data + {at}"))
                            );
                            if !input {
                                let _ = writeln!(after, "      CALIB_OPAQUE({var});");
                                let _ = writeln!(
                                    sink,
                                    "  {};",
                                    vector.store(&format!("out + {}", SINK as u64 + sinks), &var)
                                );
                                sinks += lanes;
                            }
                        }
                    }
                    LoneOperand::Scalars { prefix, c_type, count } => {
                        if input && declared_shared {
                            continue;
                        }
                        let c = c_type.c_name();
                        let opaque = if *c_type == CType::F32 { "CALIB_OPAQUE" } else { "CALIB_OPAQUE_R" };
                        for j in 0..*count {
                            let var = format!("{prefix}_{j}");
                            let _ = writeln!(head, "  {c} {var} = ({c})data[{}];", value_at(1));
                            if !input {
                                let _ = writeln!(after, "      {opaque}({var});");
                                let _ = writeln!(sink, "  out[{}] = (float){var};", SINK as u64 + sinks);
                                sinks += 1;
                            }
                        }
                    }
                }
            }
            declared_shared = true;
            // Shared input registers, declared once, are made opaque before every invocation.
            let shared_opaque: String = spec
                .operands
                .iter()
                .zip(&lone.operands)
                .zip(&directions)
                .filter(|((_, _), d)| **d == Direction::In)
                .flat_map(|((_, lone), _)| match lone {
                    LoneOperand::Vectors { prefix, count, .. } => (0..*count)
                        .map(|j| format!("      CALIB_OPAQUE({prefix}_{j});\n"))
                        .collect::<Vec<_>>(),
                    LoneOperand::Scalars { prefix, count, c_type } => {
                        let opaque = if *c_type == CType::F32 { "CALIB_OPAQUE" } else { "CALIB_OPAQUE_R" };
                        (0..*count).map(|j| format!("      {opaque}({prefix}_{j});\n")).collect()
                    }
                    LoneOperand::Memory { .. } => Vec::new(),
                })
                .collect();
            before.push_str(&shared_opaque);
            let _ = write!(rounds, "    {{\n{before}{}{after}    }}\n", lone.statements);
        }
        rounds.push_str("    CALIB_CLOBBER();\n  }\n");
        if outputs > SINK as u64 || sinks > (OUT_FLOATS - SINK) as u64 {
            return Err(model(format!("its operands take {outputs} floats of `out` and {sinks} of sinks")));
        }
        self.data_floats = self.data_floats.max((REGISTERS as u64 + values) as usize).max(inputs as usize);
        if inputs > REGISTERS as u64 {
            return Err(model(format!("its inputs take {inputs} floats of `data`")));
        }
        let description = format!("{} ({a_count} per round)", spec.display(target));
        self.push(
            label,
            description,
            ROUNDS * a_count,
            &format!("{head}{rounds}{sink}"),
            Measures::Kernel { kind, spec },
        );
        Ok(())
    }

    /// A tensor of one cache line of f32 at `level` (`lanes` for vector registers).
    fn line_tensor(&self, level: LevelId, lanes: Option<u32>) -> Result<TensorSpec, CalibrationError> {
        let floats = self.target.cache_line_bytes() / 4;
        Ok(TensorSpec {
            shape: Shape::new(vec![floats]).map_err(|e| CalibrationError::Model(e.to_string()))?,
            dtype: Dtype::F32,
            level,
            layout: Layout::row_major(1),
            contiguous_dims: 1,
            vector_size: lanes,
            pitch: None,
        })
    }

    /// The working set a stream from `level` reads: half a cache's capacity, or `memory_bytes`
    /// for memory; whole groups of four lines.
    fn working_set(&self, level: LevelId, memory_bytes: u64) -> u64 {
        let l = self.target.level(level);
        let line = u64::from(self.target.cache_line_bytes());
        let bytes = match l.kind {
            LevelKind::Memory => memory_bytes,
            _ => (l.capacity / 2).min(memory_bytes),
        };
        (bytes / (4 * line)).max(1) * 4 * line
    }

    /// Streams the working set of a cache or memory level into vector registers, one line per
    /// invocation (every line loaded with the widest vectors).
    fn stream(&mut self, level: LevelId, memory_bytes: u64) -> Result<(), CalibrationError> {
        if self.target.level(level).kind.counts_registers() {
            return Ok(());
        }
        let Some(path) = path_from(self.levels, self.target, level) else { return Ok(()) };
        let bytes = self.working_set(level, memory_bytes);
        let line = self.target.cache_line_bytes();
        let measures = self.stream_model(level, &path, false)?;
        let body = self.read_lines("data", bytes / u64::from(line), u64::from(line))?;
        self.data_floats = self.data_floats.max((bytes / 4) as usize);
        self.push(
            format!("stream.{}", self.name(level)),
            format!("{} KiB read from {}, per line", bytes >> 10, self.name(level)),
            bytes / u64::from(line),
            &body,
            measures,
        );
        Ok(())
    }

    /// Reads one line of every 65 from the memory level's working set: a tile one line wide of a
    /// row-major matrix with 65-line rows (no run longer than a line).
    fn strided_stream(&mut self, level: LevelId, memory_bytes: u64) -> Result<(), CalibrationError> {
        let Some(path) = path_from(self.levels, self.target, level) else { return Ok(()) };
        let line = u64::from(self.target.cache_line_bytes());
        let pitch = 65 * line;
        let bytes = self.working_set(level, memory_bytes);
        let rows = (bytes / pitch / 4).max(1) * 4;
        let measures = self.stream_model(level, &path, true)?;
        let body = self.read_lines("data", rows, pitch)?;
        self.data_floats = self.data_floats.max((rows * pitch / 4) as usize);
        self.push(
            format!("strided.{}", self.name(level)),
            format!("{rows} lines {pitch} bytes apart in {}, per line", self.name(level)),
            rows,
            &body,
            measures,
        );
        Ok(())
    }

    fn stream_model(
        &self,
        level: LevelId,
        path: &[LevelId],
        strided: bool,
    ) -> Result<Measures, CalibrationError> {
        let w = self.levels.widest();
        let lanes = w / 4;
        let mut moves = Vec::new();
        for pair in path.windows(2) {
            moves.push((self.line_tensor(pair[0], None)?, self.line_tensor(pair[1], None)?));
        }
        let floats = self.target.cache_line_bytes() / 4;
        let vrf = self.levels.vector;
        let text = format!(
            "Move({floats}, f32 {} row-major, f32 {} row-major v{lanes}, serial)",
            self.name(self.levels.nearest),
            self.name(vrf)
        );
        let load = self.kernel_spec(KernelKind::VectorAssign, &text)?;
        Ok(Measures::Stream { level, path: moves, load, strided })
    }

    /// A loop reading `lines` lines `stride` bytes apart from `buffer` with the widest vectors,
    /// four lines per iteration.
    fn read_lines(&self, buffer: &str, lines: u64, stride: u64) -> Result<String, CalibrationError> {
        let w = self.levels.widest();
        let vt = self.vector(w)?;
        let line = u64::from(self.target.cache_line_bytes());
        let per_line = (line / u64::from(w)).max(1);
        let mut c = format!(
            "  (void)out;\n  const char *p = (const char *){buffer};\n  for (size_t i = 0; i < {}; i += {}) {{\n",
            lines * stride,
            4 * stride
        );
        for l in 0..4 {
            for j in 0..per_line {
                let at = l * stride + j * u64::from(w);
                let _ = writeln!(
                    c,
                    "    {{ {} y = {}; CALIB_USE(y); }}",
                    vt.c_type(),
                    vt.load(&format!("(const float *)(p + i + {at})"))
                );
            }
        }
        c.push_str("  }\n");
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use morello_codegen::compiler::{CProgram, CompileOptions, SourceUnit, Warnings};
    use morello_codegen::harness::BenchEntry;
    use morello_codegen::test_support::gcc_and_clang;

    fn size() -> SuiteSize {
        SuiteSize { memory_bytes: 1 << 20, host_lacks: Vec::new() }
    }

    #[test]
    fn every_kernel_of_the_builtin_targets_is_measured() {
        // Between them the built-in targets hold every kernel, so every kernel has a benchmark.
        let builtin = ["x86-avx2", "x86-avx2-vnni", "x86-avx512", "arm-neon"];
        for kind in KernelKind::ALL {
            assert!(
                builtin.iter().any(|name| Target::builtin(name, 2).unwrap().kernels().contains(&kind)),
                "{kind} is in no built-in target, so nothing checks that calibration measures it"
            );
        }
        for name in builtin {
            let target = Target::builtin(name, 2).unwrap();
            let suite = kernel_suite(&target, size()).unwrap();
            assert!(suite.unmeasured.is_empty(), "{name}: {:?}", suite.unmeasured);
            for kind in target.kernels() {
                let measured = suite
                    .benches
                    .iter()
                    .filter(|b| matches!(&b.measures, Measures::Kernel { kind: k, .. } if k == kind))
                    .count();
                assert!(measured >= 1, "{name}: {kind} has no benchmark");
            }
            let streams: Vec<&str> =
                suite.benches.iter().map(|b| b.label.as_str()).filter(|l| l.starts_with("stream")).collect();
            assert_eq!(streams, ["stream.GL", "stream.L2", "stream.L1"], "{name}");
            assert!(suite.benches.iter().any(|b| b.label == "strided.GL"));
        }
    }

    #[test]
    fn parallel_loops_stay_inside_their_buffers_for_any_processor_count() {
        for processors in [1, 2, 16, 64] {
            let suite = parallel_suite(&Target::builtin("x86-avx2", processors).unwrap());
            let most = suite
                .benches
                .iter()
                .map(|b| match b.measures {
                    Measures::Loop { iterations, .. } => iterations as usize,
                    _ => 0,
                })
                .max()
                .unwrap();
            assert_eq!(most, 128 * processors as usize);
            assert!(suite.data_floats >= most * 16 && suite.out_floats >= most * 16);
            assert!(suite.benches.iter().all(|b| suite.source.contains(&b.source)));
        }
    }

    #[test]
    fn a_host_without_bf16_leaves_the_bf16_kernel_unmeasured() {
        let target = Target::builtin("x86-avx512", 2).unwrap();
        let suite =
            kernel_suite(&target, SuiteSize { host_lacks: vec![IsaFeature::Avx512bf16], ..size() }).unwrap();
        assert_eq!(suite.unmeasured.len(), 1);
        assert_eq!(suite.unmeasured[0].0, KernelKind::DotProductBf16);
    }

    #[test]
    fn the_suites_compile_without_warnings_on_gcc_and_clang() {
        for target_name in ["x86-avx2", "x86-avx2-vnni", "x86-avx512"] {
            let target = Target::builtin(target_name, 2).unwrap();
            let mut features = morello_codegen::emit::compile_features(&target, &Default::default());
            features.push(IsaFeature::Avx512bf16);
            features.retain(|f| target_name == "x86-avx512" || *f != IsaFeature::Avx512bf16);
            let suite = kernel_suite(&target, size()).unwrap();
            let parallel = parallel_suite(&target);
            for compiler in gcc_and_clang() {
                for (suite, openmp) in [
                    (&suite, morello_codegen::compiler::OpenMp::Disabled),
                    (&parallel, morello_codegen::compiler::OpenMp::Enabled),
                ] {
                    let entries: Vec<BenchEntry> = suite
                        .benches
                        .iter()
                        .map(|b| BenchEntry::new(b.label.clone(), b.function.clone()))
                        .collect();
                    let main = morello_codegen::harness::bench_program_source(
                        &signature(suite),
                        &suite.source,
                        &entries,
                    )
                    .unwrap();
                    let options =
                        CompileOptions { features: features.clone(), openmp, warnings: Warnings::Deny };
                    let program = CProgram { units: vec![SourceUnit::new("calib", main)], link_args: vec![] };
                    match compiler.build(&program, &options) {
                        Ok(_) => {}
                        // clang without libomp cannot build OpenMP programs; calibration skips them.
                        Err(e)
                            if openmp == morello_codegen::compiler::OpenMp::Enabled
                                && compiler.command() == "clang" =>
                        {
                            println!("note: clang cannot build the OpenMP suite here: {e}");
                        }
                        Err(e) => panic!("{target_name} with {compiler}: {e}"),
                    }
                }
            }
        }
    }
}
