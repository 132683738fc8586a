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
use morello_core::kernels::KernelKind;
use morello_core::layout::Layout;
use morello_core::shape::Shape;
use morello_core::spec::{LogicalSpec, TensorSpec};
use morello_core::target::{IsaFeature, LevelId, LevelKind, Target};

use super::CalibrationError;
use morello_codegen::emit::helpers::{Helper, definitions};
use morello_codegen::emit::vector::VectorType;
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
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CALIB_USE(x) __asm__ volatile(\"\" : : \"v\"(x))
#define CALIB_OPAQUE(x) __asm__ volatile(\"\" : \"+v\"(x))
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

/// What the suite needs to know about the target's levels.
#[derive(Debug, Clone)]
pub(crate) struct Levels {
    /// The vector-register level with the widest vectors, its widths (bytes) and registers.
    vector: (LevelId, Vec<u32>, u64),
    /// The scalar-register level, if any.
    scalar: Option<LevelId>,
    /// The fastest cache or memory level that moves to the vector registers (L1).
    nearest: LevelId,
}

impl Levels {
    /// Finds the levels calibration needs.
    ///
    /// # Errors
    /// [`CalibrationError::Unsupported`] if the target has no vector registers or no cache or
    /// memory level that moves into them.
    pub fn of(target: &Target) -> Result<Self, CalibrationError> {
        let unsupported = |reason: &str| CalibrationError::Unsupported {
            target: target.name().to_string(),
            reason: reason.to_string(),
        };
        let vector = target
            .level_ids()
            .filter(|&id| target.level(id).kind == LevelKind::VectorRegisters)
            .max_by_key(|&id| target.level(id).vector_bytes.iter().max().copied().unwrap_or(0))
            .ok_or_else(|| unsupported("it has no vector-register level"))?;
        let widths: Vec<u32> =
            target.level(vector).vector_bytes.iter().copied().filter(|w| [16, 32, 64].contains(w)).collect();
        if widths.is_empty() {
            return Err(unsupported("its vector registers are not 16, 32 or 64 bytes wide"));
        }
        let scalar = target.level_ids().find(|&id| target.level(id).kind == LevelKind::ScalarRegisters);
        let nearest = target
            .level_ids()
            .filter(|&id| !target.level(id).kind.counts_registers())
            .filter(|&id| target.level(id).moves_to.contains(&vector))
            .last()
            .ok_or_else(|| unsupported("no cache or memory level moves into its vector registers"))?;
        if target.cache_line_bytes() < 16 || target.cache_line_bytes() > 4096 {
            return Err(unsupported("its cache line is not between 16 and 4096 bytes"));
        }
        Ok(Levels { vector: (vector, widths, target.level(vector).capacity), scalar, nearest })
    }

    /// The path of moves from `level` to the nearest level, through cache and memory levels
    /// (the fewest steps; ties by level order), or `None` if there is none.
    fn path_from(&self, target: &Target, level: LevelId) -> Option<Vec<LevelId>> {
        let mut paths: Vec<Vec<LevelId>> = vec![vec![level]];
        for _ in 0..target.levels().len() {
            if let Some(found) = paths.iter().find(|p| p.last() == Some(&self.nearest)) {
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

    fn widest(&self) -> u32 {
        self.vector.1.iter().copied().max().unwrap_or(16)
    }
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
    let levels = Levels::of(target)?;
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
        // One microbenchmark builder per kernel; the match is exhaustive, so a new kernel does not
        // compile until it has one (or an arm that says why it cannot be measured).
        match kind {
            KernelKind::BroadcastVecMultAdd => b.broadcast_vec_mult_add()?,
            KernelKind::VectorAssign => b.vector_assign()?,
            KernelKind::VectorFill => b.vector_fill()?,
            KernelKind::MemsetZero => b.memset_zero()?,
            KernelKind::MultAdd => b.mult_add()?,
            KernelKind::ValueAssign => b.value_assign()?,
            KernelKind::ValueFill => b.value_fill()?,
            KernelKind::DotProductLoop => b.dot_product_loop()?,
            KernelKind::DotProductBf16 => b.dot_product_bf16()?,
            KernelKind::BroadcastVecMultAddBf16 => b.broadcast_vec_mult_add_bf16()?,
            KernelKind::VectorAddBias => b.vector_add_bias()?,
            KernelKind::ValueAddBias => b.value_add_bias()?,
            KernelKind::VectorMax => b.softmax_pass(KernelKind::VectorMax)?,
            KernelKind::VectorSoftmaxExp => b.softmax_pass(KernelKind::VectorSoftmaxExp)?,
            KernelKind::VectorScale => b.softmax_pass(KernelKind::VectorScale)?,
        }
        if b.benches.len() == before {
            unmeasured.push((kind, "its operands need levels this target does not have".to_string()));
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
    levels: &'t Levels,
    benches: Vec<Microbenchmark>,
    helpers: std::collections::BTreeSet<Helper>,
    data_floats: usize,
    fma: bool,
}

impl<'t> Builder<'t> {
    fn new(target: &'t Target, levels: &'t Levels) -> Self {
        Builder {
            target,
            levels,
            benches: Vec::new(),
            helpers: std::collections::BTreeSet::new(),
            data_floats: MIN_DATA_FLOATS,
            fma: target.has_isa(IsaFeature::Fma),
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
        Ok(VectorType::new(Dtype::F32, bytes / 4)?)
    }

    /// `BroadcastVecMultAdd` on `v` vectors of the widest width, scalar read from L1:
    /// `b = splat(s); acc_j = fma(x_j, b, acc_j)`, `A` independent invocations per round.
    fn broadcast_vec_mult_add(&mut self) -> Result<(), CalibrationError> {
        let (vrf, l1) = (self.levels.vector.0, self.levels.nearest);
        let registers = self.levels.vector.2;
        let w = self.levels.widest();
        let vt = self.vector(w)?;
        let lanes = u64::from(vt.lanes);
        let accumulators = (registers / 2).max(1);
        let mut v = 1;
        while v <= accumulators && accumulators + v < registers {
            let a_count = accumulators / v;
            let text = format!(
                "MatmulAccum(1x1x1x{n}, f32 {l1} row-major, f32 {vrf} row-major v{lanes}, f32 {vrf} row-major v{lanes}, serial)",
                n = v * lanes,
                l1 = self.name(l1),
                vrf = self.name(vrf),
            );
            let spec = self.kernel_spec(KernelKind::BroadcastVecMultAdd, &text)?;
            let ty = vt.c_type();
            let mut c = String::new();
            for j in 0..v {
                let at = REGISTERS as u64 + j * lanes;
                let _ = writeln!(c, "  {ty} x{j} = {};", vt.load(&format!("data + {at}")));
                let _ = writeln!(c, "  CALIB_OPAQUE(x{j});");
            }
            start_accumulator_rounds(&mut c, vt, a_count, v);
            for a in 0..a_count {
                let _ = writeln!(c, "    {{\n      {ty} b = {};", vt.splat(&format!("data[s + {a}]")));
                for j in 0..v {
                    let update = vt.mul_add(&format!("x{j}"), "b", &format!("acc{a}_{j}"), self.fma)?;
                    let _ = writeln!(c, "      acc{a}_{j} = {update};");
                }
                let _ = writeln!(c, "    }}");
            }
            end_accumulator_rounds(&mut c, vt, a_count, v);
            self.push(
                format!("BroadcastVecMultAdd.v{v}"),
                format!("{v} vectors of {lanes} f32, the scalar from {}", self.name(l1)),
                ROUNDS * a_count,
                &c,
                Measures::Kernel { kind: KernelKind::BroadcastVecMultAdd, spec },
            );
            v *= 2;
        }
        Ok(())
    }

    /// `BroadcastVecMultAddBf16` on 1, 2 and 4 vectors of the widest f32 width: a bf16 scalar
    /// widened and broadcast, rows of bf16 from L1 widened and multiplied into f32 accumulators,
    /// as the emitter writes it; `A` independent invocations per round.
    fn broadcast_vec_mult_add_bf16(&mut self) -> Result<(), CalibrationError> {
        let (vrf, l1) = (self.levels.vector.0, self.levels.nearest);
        let vt = self.vector(self.levels.widest().min(64))?;
        let lanes = u64::from(vt.lanes);
        let a_count = 4;
        for v in [1u64, 2, 4] {
            let text = format!(
                "MatmulAccum(1x1x1x{n}, bf16 {l1} row-major, bf16 {l1} row-major, f32 {vrf} row-major v{lanes}, serial)",
                n = v * lanes,
                l1 = self.name(l1),
                vrf = self.name(vrf),
            );
            let spec = self.kernel_spec(KernelKind::BroadcastVecMultAddBf16, &text)?;
            let ty = vt.c_type();
            let mut c = String::from("  const uint16_t *p16 = (const uint16_t *)data;\n");
            start_accumulator_rounds(&mut c, vt, a_count, v);
            for a in 0..a_count {
                let _ = writeln!(
                    c,
                    "    {{\n      union {{ uint32_t u; float f; }} cv;\n      cv.u = (uint32_t)p16[s + {a}] << 16;\n      {ty} b = {};",
                    vt.splat("cv.f")
                );
                for j in 0..v {
                    // Rows from the bf16 view of the registers' region, moving with `s`.
                    let row = format!("p16 + {} + ((s * 8 + {}) & 2047)", 2 * REGISTERS, (a * v + j) * lanes);
                    let update =
                        vt.mul_add(&vt.load_bf16_as_f32(&row)?, "b", &format!("acc{a}_{j}"), self.fma)?;
                    let _ = writeln!(c, "      acc{a}_{j} = {update};");
                }
                let _ = writeln!(c, "    }}");
            }
            end_accumulator_rounds(&mut c, vt, a_count, v);
            self.push(
                format!("BroadcastVecMultAddBf16.v{v}"),
                format!(
                    "{v} bf16 rows of {lanes} widened into f32 vectors, bf16 scalar and rows from {}",
                    self.name(l1)
                ),
                ROUNDS * a_count,
                &c,
                Measures::Kernel { kind: KernelKind::BroadcastVecMultAddBf16, spec },
            );
        }
        Ok(())
    }

    /// `VectorAssign` loads (L1 to registers) and stores (registers to L1) of 1, 2 and 4
    /// consecutive vectors of every width, 8 invocations per round.
    fn vector_assign(&mut self) -> Result<(), CalibrationError> {
        let (vrf, l1) = (self.levels.vector.0, self.levels.nearest);
        const PER_ROUND: u32 = 8;
        for &w in &self.levels.vector.1.clone() {
            let vt = self.vector(w)?;
            let lanes = vt.lanes;
            let ty = vt.c_type();
            for v in [1u32, 2, 4] {
                let n = v * lanes;
                let step = PER_ROUND * n;
                for load in [true, false] {
                    let (from, to) = if load { (l1, vrf) } else { (vrf, l1) };
                    let side = |level: LevelId| {
                        let vector = if level == vrf { format!(" v{lanes}") } else { String::new() };
                        format!("f32 {} row-major{vector}", self.name(level))
                    };
                    let text = format!("Move({n}, {}, {}, serial)", side(from), side(to));
                    let spec = self.kernel_spec(KernelKind::VectorAssign, &text)?;
                    let mut c = String::new();
                    if !load {
                        for j in 0..v {
                            let at = REGISTERS as u32 + j * lanes;
                            let _ = writeln!(
                                c,
                                "  {ty} x{j} = {};\n  CALIB_OPAQUE(x{j});",
                                vt.load(&format!("data + {at}"))
                            );
                        }
                    } else {
                        let _ = writeln!(c, "  (void)out;");
                    }
                    let _ = writeln!(c, "  size_t o = 0;\n  for (int r = 0; r < {ROUNDS}; r++) {{");
                    for a in 0..PER_ROUND {
                        for j in 0..v {
                            let offset = (a * v + j) * lanes;
                            if load {
                                let value = vt.load(&format!("data + o + {offset}"));
                                let _ = writeln!(c, "    {{ {ty} y = {value}; CALIB_USE(y); }}");
                            } else {
                                let _ = writeln!(
                                    c,
                                    "    {};",
                                    vt.store(&format!("out + o + {offset}"), &format!("x{j}"))
                                );
                            }
                        }
                    }
                    let _ = writeln!(c, "    o = (o + {step}) & 2047;\n    CALIB_CLOBBER();\n  }}");
                    let direction = if load { "load" } else { "store" };
                    self.push(
                        format!("VectorAssign.{direction}.w{w}.v{v}"),
                        format!("{direction} {v} vectors of {lanes} f32 ({})", self.name(l1)),
                        ROUNDS * u64::from(PER_ROUND),
                        &c,
                        Measures::Kernel { kind: KernelKind::VectorAssign, spec },
                    );
                }
            }
        }
        Ok(())
    }

    /// `VectorFill` of 1, 2, 4 and 8 vectors of the widest width with zeros.
    fn vector_fill(&mut self) -> Result<(), CalibrationError> {
        let vrf = self.levels.vector.0;
        let vt = self.vector(self.levels.widest())?;
        let (lanes, ty) = (vt.lanes, vt.c_type());
        for v in [1u32, 2, 4, 8] {
            let per_round = (16 / v).max(1);
            let text = format!("FillZero({}, f32 {} row-major v{lanes}, serial)", v * lanes, self.name(vrf));
            let spec = self.kernel_spec(KernelKind::VectorFill, &text)?;
            let mut c = format!("  (void)data;\n  (void)out;\n  for (int r = 0; r < {ROUNDS}; r++) {{\n");
            for _ in 0..per_round * v {
                let _ = writeln!(c, "    {{ {ty} z = {}; CALIB_OPAQUE(z); }}", vt.zero());
            }
            c.push_str("  }\n");
            self.push(
                format!("VectorFill.v{v}"),
                format!("{v} vectors of {lanes} f32 set to zero"),
                ROUNDS * u64::from(per_round),
                &c,
                Measures::Kernel { kind: KernelKind::VectorFill, spec },
            );
        }
        Ok(())
    }

    /// `VectorAddBias` (relu) on 1, 2 and 4 widest f32 vectors, the bias in L1: each vector
    /// `max(v + bias, 0)`, the registers carried from round to round.
    fn vector_add_bias(&mut self) -> Result<(), CalibrationError> {
        let (vrf, l1) = (self.levels.vector.0, self.levels.nearest);
        let vt = self.vector(self.levels.widest())?;
        let (lanes, ty) = (vt.lanes, vt.c_type());
        for v in [1u32, 2, 4] {
            let n = v * lanes;
            let text = format!(
                "AddBiasRelu(1x{n}, f32 {} row-major, f32 {} row-major v{lanes}, serial)",
                self.name(l1),
                self.name(vrf)
            );
            let spec = self.kernel_spec(KernelKind::VectorAddBias, &text)?;
            let mut c = String::new();
            for i in 0..v {
                let _ = writeln!(c, "  {ty} x{i} = {};", vt.load(&format!("data + {}", i * lanes)));
            }
            let _ = writeln!(c, "  for (int r = 0; r < {ROUNDS}; r++) {{");
            for i in 0..v {
                let bias = vt.load(&format!("data + {}", REGISTERS as u32 + i * lanes));
                let _ = writeln!(
                    c,
                    "    x{i} = {};\n    CALIB_OPAQUE(x{i});",
                    vt.max_f32(&vt.add_f32(&format!("x{i}"), &bias), &vt.zero())
                );
            }
            c.push_str("  }\n");
            for i in 0..v {
                let _ = writeln!(
                    c,
                    "  {};",
                    vt.store(&format!("out + {}", SINK as u32 + i * lanes), &format!("x{i}"))
                );
            }
            self.push(
                format!("VectorAddBias.v{v}"),
                format!("{v} vectors of {lanes} f32: max(x + bias, 0), the bias in {}", self.name(l1)),
                ROUNDS,
                &c,
                Measures::Kernel { kind: KernelKind::VectorAddBias, spec },
            );
        }
        Ok(())
    }

    /// `ValueAddBias` (relu) on one f32 in a register, the bias in L1.
    fn value_add_bias(&mut self) -> Result<(), CalibrationError> {
        let (Some(rf), l1) = (self.levels.scalar, self.levels.nearest) else { return Ok(()) };
        let text = format!(
            "AddBiasRelu(1, f32 {} row-major, f32 {} row-major, serial)",
            self.name(l1),
            self.name(rf)
        );
        let spec = self.kernel_spec(KernelKind::ValueAddBias, &text)?;
        let k = self.scalar_accumulators();
        let mut c = String::new();
        for i in 0..k {
            let _ = writeln!(c, "  float x{i} = data[{}];", REGISTERS as u32 + i);
        }
        let _ = writeln!(c, "  for (int r = 0; r < {ROUNDS}; r++) {{");
        for i in 0..k {
            let _ = writeln!(
                c,
                "    {{ float s = x{i} + data[{i}]; x{i} = s > 0.0f ? s : 0.0f; }}\n    CALIB_OPAQUE(x{i});"
            );
        }
        c.push_str("  }\n");
        for i in 0..k {
            let _ = writeln!(c, "  out[{}] = x{i};", SINK as u32 + i);
        }
        self.push(
            "ValueAddBias".into(),
            format!("f32 max(x + bias, 0) in {}, the bias in {}", self.name(rf), self.name(l1)),
            ROUNDS * u64::from(k),
            &c,
            Measures::Kernel { kind: KernelKind::ValueAddBias, spec },
        );
        Ok(())
    }

    /// A softmax pass (`VectorMax`, `VectorSoftmaxExp`, `VectorScale`) on one row of 64 and 256
    /// f32 in L1 with the widest vectors, its scalars in registers, written as the emitter writes
    /// it (one vector per step here), one invocation per round.
    fn softmax_pass(&mut self, kind: KernelKind) -> Result<(), CalibrationError> {
        let (Some(rf), l1) = (self.levels.scalar, self.levels.nearest) else { return Ok(()) };
        let vt = self.vector(self.levels.widest())?;
        let (lanes, ty) = (vt.lanes, vt.c_type());
        let (rf, l1) = (self.name(rf).to_string(), self.name(l1).to_string());
        for n in [64u32, 256] {
            let text = match kind {
                KernelKind::VectorMax => {
                    format!("Max(1x{n}, f32 {l1} row-major, f32 {rf} row-major, serial)")
                }
                KernelKind::VectorSoftmaxExp => format!(
                    "SoftmaxExp(1x{n}, f32 {l1} row-major, f32 {rf} row-major, f32 {l1} row-major, f32 {rf} row-major, serial)"
                ),
                _ => format!("SoftmaxScale(1x{n}, f32 {rf} row-major, f32 {l1} row-major, serial)"),
            };
            let spec = self.kernel_spec(kind, &text)?;
            let load = |at: &str| vt.load(at);
            let mut c = format!(
                "  {ty} acc = {};\n  float scalar = data[{}];\n  (void)scalar;\n",
                vt.zero(),
                REGISTERS
            );
            let _ = writeln!(c, "  for (int r = 0; r < {ROUNDS}; r++) {{");
            let _ = writeln!(c, "    for (int i = 0; i < {n}; i += {lanes}) {{");
            match kind {
                KernelKind::VectorMax => {
                    let _ = writeln!(c, "      acc = {};", vt.max_f32("acc", &load("data + i")));
                }
                KernelKind::VectorSoftmaxExp => {
                    let (exp, helper) = vt.exp(&vt.sub_f32(&load("data + i"), &vt.splat("scalar")));
                    self.helpers.insert(helper);
                    let _ = writeln!(c, "      {ty} e = {exp};\n      {};", vt.store("out + i", "e"));
                    let _ = writeln!(c, "      acc = {};", vt.add_f32("acc", "e"));
                }
                _ => {
                    let _ = writeln!(
                        c,
                        "      {};",
                        vt.store("out + i", &vt.mul_f32(&load("out + i"), &vt.splat("scalar")))
                    );
                }
            }
            c.push_str("    }\n    CALIB_OPAQUE(acc);\n    CALIB_CLOBBER();\n  }\n");
            let _ = writeln!(c, "  {};", vt.store(&format!("out + {SINK}"), "acc"));
            self.push(
                format!("{}.{n}", kind.name()),
                format!("{kind} on a row of {n} f32 in {l1}"),
                ROUNDS,
                &c,
                Measures::Kernel { kind, spec },
            );
        }
        Ok(())
    }

    /// `MemsetZero` of 1, 4, 16 and 64 cache lines in L1, four invocations per round.
    fn memset_zero(&mut self) -> Result<(), CalibrationError> {
        let l1 = self.levels.nearest;
        let line = self.target.cache_line_bytes();
        for lines in [1u32, 4, 16, 64] {
            let bytes = lines * line;
            if 4 * bytes as usize > 4 * 4096 {
                continue;
            }
            let floats = bytes / 4;
            let text = format!("FillZero({floats}, f32 {} row-major, serial)", self.name(l1));
            let spec = self.kernel_spec(KernelKind::MemsetZero, &text)?;
            let mut c = format!("  (void)data;\n  for (int r = 0; r < {ROUNDS}; r++) {{\n");
            for a in 0..4 {
                let _ = writeln!(c, "    memset(out + {}, 0, {bytes});", a * floats);
            }
            c.push_str("    CALIB_CLOBBER();\n  }\n");
            self.push(
                format!("MemsetZero.{bytes}B"),
                format!("{bytes} bytes in {}", self.name(l1)),
                ROUNDS * 4,
                &c,
                Measures::Kernel { kind: KernelKind::MemsetZero, spec },
            );
        }
        Ok(())
    }

    /// Independent scalar accumulators (registers beyond them: one x per accumulator and y).
    fn scalar_accumulators(&self) -> u32 {
        ((self.levels.vector.2.min(32) as u32).saturating_sub(1) / 2).clamp(1, 8)
    }

    /// `MultAdd` on f32 scalars in registers: `c_i += x_i * y`, independent accumulators.
    fn mult_add(&mut self) -> Result<(), CalibrationError> {
        let Some(rf) = self.levels.scalar else { return Ok(()) };
        let text = format!(
            "MatmulAccum(1x1x1x1, f32 {rf} row-major, f32 {rf} row-major, f32 {rf} row-major, serial)",
            rf = self.name(rf)
        );
        let spec = self.kernel_spec(KernelKind::MultAdd, &text)?;
        let k = self.scalar_accumulators();
        let mut c = format!("  float y = data[{}];\n", REGISTERS + 64);
        for i in 0..k {
            let _ = writeln!(c, "  float x{i} = data[{}], c{i} = 0.0f;", REGISTERS as u32 + i);
        }
        let _ = writeln!(c, "  for (int r = 0; r < {ROUNDS}; r++) {{");
        for i in 0..k {
            let _ = writeln!(c, "    CALIB_OPAQUE(x{i});\n    c{i} += x{i} * y;");
        }
        c.push_str("  }\n");
        for i in 0..k {
            let _ = writeln!(c, "  out[{}] = c{i};", SINK as u32 + i);
        }
        self.push(
            "MultAdd".into(),
            format!("f32 out += lhs * rhs in {}", self.name(rf)),
            ROUNDS * u64::from(k),
            &c,
            Measures::Kernel { kind: KernelKind::MultAdd, spec },
        );
        Ok(())
    }

    /// `ValueAssign` of one f32 from L1 into a register and back.
    fn value_assign(&mut self) -> Result<(), CalibrationError> {
        let (Some(rf), l1) = (self.levels.scalar, self.levels.nearest) else { return Ok(()) };
        for load in [true, false] {
            let (from, to) = if load { (l1, rf) } else { (rf, l1) };
            let text = format!(
                "Move(1, f32 {} row-major, f32 {} row-major, serial)",
                self.name(from),
                self.name(to)
            );
            let spec = self.kernel_spec(KernelKind::ValueAssign, &text)?;
            let mut c = String::new();
            if load {
                c.push_str("  (void)out;\n");
            } else {
                for a in 0..8 {
                    let _ = writeln!(c, "  float x{a} = data[{}];\n  CALIB_OPAQUE(x{a});", REGISTERS + a);
                }
            }
            let _ = writeln!(c, "  size_t s = 0;\n  for (int r = 0; r < {ROUNDS}; r++) {{");
            for a in 0..8 {
                if load {
                    let _ = writeln!(c, "    {{ float x = data[s + {a}]; CALIB_USE(x); }}");
                } else {
                    let _ = writeln!(c, "    out[s + {a}] = x{a};");
                }
            }
            let _ = writeln!(c, "    s = (s + 8) & 1023;\n    CALIB_CLOBBER();\n  }}");
            let direction = if load { "load" } else { "store" };
            self.push(
                format!("ValueAssign.{direction}"),
                format!("{direction} one f32 ({} and {})", self.name(l1), self.name(rf)),
                ROUNDS * 8,
                &c,
                Measures::Kernel { kind: KernelKind::ValueAssign, spec },
            );
        }
        Ok(())
    }

    /// `ValueFill` of one f32 register with zero.
    fn value_fill(&mut self) -> Result<(), CalibrationError> {
        let Some(rf) = self.levels.scalar else { return Ok(()) };
        let text = format!("FillZero(1, f32 {} row-major, serial)", self.name(rf));
        let spec = self.kernel_spec(KernelKind::ValueFill, &text)?;
        let mut c = format!("  (void)data;\n  (void)out;\n  for (int r = 0; r < {ROUNDS}; r++) {{\n");
        for _ in 0..8 {
            c.push_str("    { float z = 0.0f; CALIB_OPAQUE(z); }\n");
        }
        c.push_str("  }\n");
        self.push(
            "ValueFill".into(),
            format!("one f32 in {} set to zero", self.name(rf)),
            ROUNDS * 8,
            &c,
            Measures::Kernel { kind: KernelKind::ValueFill, spec },
        );
        Ok(())
    }

    /// `DotProductLoop` over K = 4, 16 and 64 widest vectors, operands in L1, result in a
    /// register; four independent invocations per round, as the emitter writes it.
    fn dot_product_loop(&mut self) -> Result<(), CalibrationError> {
        let (Some(rf), l1) = (self.levels.scalar, self.levels.nearest) else { return Ok(()) };
        let vt = self.vector(self.levels.widest())?;
        let lanes = vt.lanes;
        for vectors in [4u32, 16, 64] {
            let k = vectors * lanes;
            if k > 1024 {
                continue;
            }
            let text = format!(
                "MatmulAccum(1x1x{k}x1, f32 {l1} row-major, f32 {l1} row-major, f32 {rf} row-major, serial)",
                l1 = self.name(l1),
                rf = self.name(rf)
            );
            let spec = self.kernel_spec(KernelKind::DotProductLoop, &text)?;
            let (sum, helper) = vt.horizontal_sum("acc0");
            self.helpers.extend(helper);
            let ty = vt.c_type();
            let registers = vectors.min(4);
            let step = registers * lanes;
            let mut c = String::from("  float t0 = 0.0f, t1 = 0.0f, t2 = 0.0f, t3 = 0.0f;\n");
            let _ = writeln!(c, "  for (int r = 0; r < {ROUNDS}; r++) {{");
            for a in 0..4 {
                let offset = (a * 256) & 1023;
                let _ = writeln!(
                    c,
                    "    {{\n      const float *pa = data + {offset};\n      const float *pb = data + {};",
                    4096 + offset
                );
                let zeros: Vec<String> = (0..registers).map(|j| format!("acc{j} = {}", vt.zero())).collect();
                let _ = writeln!(c, "      {ty} {};", zeros.join(", "));
                let _ = writeln!(c, "      for (int64_t k = 0; k < {k}; k += {step}) {{");
                for j in 0..registers {
                    let x = vt.load(&format!("pa + k + {}", j * lanes));
                    let y = vt.load(&format!("pb + k + {}", j * lanes));
                    let _ = writeln!(
                        c,
                        "        acc{j} = {};",
                        vt.mul_add(&x, &y, &format!("acc{j}"), self.fma)?
                    );
                }
                c.push_str("      }\n");
                reduce_accumulators(&mut c, registers, |a, b| vt.add_f32(a, b));
                let _ = writeln!(c, "      t{a} += {sum};\n    }}");
            }
            end_rounds_and_sink_sums(&mut c);
            self.push(
                format!("DotProductLoop.k{k}"),
                format!("f32 dot product of length {k} from {}", self.name(l1)),
                ROUNDS * 4,
                &c,
                Measures::Kernel { kind: KernelKind::DotProductLoop, spec },
            );
        }
        Ok(())
    }

    /// `DotProductBf16` over K = 128, 512 and 2048 bf16 pairs in L1, as the emitter writes it.
    fn dot_product_bf16(&mut self) -> Result<(), CalibrationError> {
        let (Some(rf), l1) = (self.levels.scalar, self.levels.nearest) else { return Ok(()) };
        for k in [128u32, 512, 2048] {
            let text = format!(
                "MatmulAccum(1x1x{k}x1, bf16 {l1} row-major, bf16 {l1} row-major, f32 {rf} row-major, serial)",
                l1 = self.name(l1),
                rf = self.name(rf)
            );
            let spec = self.kernel_spec(KernelKind::DotProductBf16, &text)?;
            let registers = (k / 32).min(4);
            let step = registers * 32;
            let mut c = String::from("  float t0 = 0.0f, t1 = 0.0f, t2 = 0.0f, t3 = 0.0f;\n");
            let _ = writeln!(c, "  for (int r = 0; r < {ROUNDS}; r++) {{");
            for a in 0..4u32 {
                // bf16 offsets: the same bytes as the f32 benchmarks' regions.
                let offset = 2 * ((a * 256) & 1023);
                let _ = writeln!(
                    c,
                    "    {{\n      const uint16_t *pa = (const uint16_t *)data + {offset};\n      const uint16_t *pb = (const uint16_t *)data + {};",
                    2 * 4096 + offset
                );
                let zeros: Vec<String> =
                    (0..registers).map(|j| format!("acc{j} = _mm512_setzero_ps()")).collect();
                let _ = writeln!(c, "      __m512 {};", zeros.join(", "));
                let _ = writeln!(c, "      for (int64_t k = 0; k < {k}; k += {step}) {{");
                for j in 0..registers {
                    let load = |p: &str| {
                        format!("(__m512bh)_mm512_loadu_si512((const void *)({p} + k + {}))", j * 32)
                    };
                    let _ = writeln!(
                        c,
                        "        acc{j} = _mm512_dpbf16_ps(acc{j}, {}, {});",
                        load("pa"),
                        load("pb")
                    );
                }
                c.push_str("      }\n");
                reduce_accumulators(&mut c, registers, |a, b| format!("_mm512_add_ps({a}, {b})"));
                let _ = writeln!(c, "      t{a} += _mm512_reduce_add_ps(acc0);\n    }}");
            }
            end_rounds_and_sink_sums(&mut c);
            self.push(
                format!("DotProductBf16.k{k}"),
                format!("bf16 dot product of length {k} from {}", self.name(l1)),
                ROUNDS * 4,
                &c,
                Measures::Kernel { kind: KernelKind::DotProductBf16, spec },
            );
        }
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
        let Some(path) = self.levels.path_from(self.target, level) else { return Ok(()) };
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
        let Some(path) = self.levels.path_from(self.target, level) else { return Ok(()) };
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
        let vrf = self.levels.vector.0;
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

/// Adds `acc1 .. acc{registers-1}` into `acc0` pairwise (`add` writes one vector addition in C).
fn reduce_accumulators(c: &mut String, registers: u32, add: impl Fn(&str, &str) -> String) {
    let mut width = 1;
    while width < registers {
        for j in (0..registers).step_by(2 * width as usize) {
            if j + width < registers {
                let _ =
                    writeln!(c, "      acc{j} = {};", add(&format!("acc{j}"), &format!("acc{}", j + width)));
            }
        }
        width *= 2;
    }
}

/// Declares `a_count x v` zeroed accumulators `acc{a}_{j}` of `vt` and opens the rounds loop,
/// with `s` the moving offset of the scalars.
fn start_accumulator_rounds(c: &mut String, vt: VectorType, a_count: u64, v: u64) {
    let ty = vt.c_type();
    for a in 0..a_count {
        for j in 0..v {
            let _ = writeln!(c, "  {ty} acc{a}_{j} = {};", vt.zero());
        }
    }
    let _ = writeln!(c, "  size_t s = 0;\n  for (int r = 0; r < {ROUNDS}; r++) {{");
}

/// Advances `s`, closes the rounds loop and stores every accumulator where the compiler must keep it.
fn end_accumulator_rounds(c: &mut String, vt: VectorType, a_count: u64, v: u64) {
    let lanes = u64::from(vt.lanes);
    let _ = writeln!(c, "    s = (s + {a_count}) & 1023;\n  }}");
    for a in 0..a_count {
        for j in 0..v {
            let at = SINK as u64 + (a * v + j) * lanes;
            let _ = writeln!(c, "  {};", vt.store(&format!("out + {at}"), &format!("acc{a}_{j}")));
        }
    }
}

/// Closes the rounds loop and stores the four running sums `t0 .. t3` where the compiler must keep them.
fn end_rounds_and_sink_sums(c: &mut String) {
    c.push_str("    CALIB_CLOBBER();\n  }\n");
    let _ = writeln!(
        c,
        "  out[{s}] = t0;\n  out[{}] = t1;\n  out[{}] = t2;\n  out[{}] = t3;",
        SINK + 1,
        SINK + 2,
        SINK + 3,
        s = SINK
    );
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
        let builtin = ["x86-avx2", "x86-avx512"];
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
        for target_name in ["x86-avx2", "x86-avx512"] {
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
