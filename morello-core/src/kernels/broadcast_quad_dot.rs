//! `BroadcastQuadDot`: `out[v] += Σ_{j<4} lhs[j] * rhs[j][v]`, four consecutive u8 values of
//! `lhs` broadcast as one 32-bit word, each lane's dot product with the four i8 values of `rhs`
//! beside it, accumulated exactly into i32 vector registers (AVX-512 VNNI `vpdpbusd`).
//!
//! The int8 matmul's register-block step: with the output tile in vector registers, each step
//! covers four values of `k`. `rhs` must hold those four values of each column side by side, the
//! VNNI layout `[K/4][N][4]`: for a matmul's `rhs` `[b, k, n]` the morello layout
//! `[0, 1, 2, 1 p(4)]` (a strip of 4 along `k` inside `n`), which a tile of four rows of `k`
//! starting at a multiple of 4 reads as one run, column after column.
//!
//! A register block of several rows loads each step's `rhs` vectors once into registers (a move
//! of the `[1, 4, n]` strip to 64-lane i8 vectors) and runs this kernel on each row with `rhs` in
//! them: register `j` of `rhs` holds the 64 bytes of columns `16 j .. 16 j + 15`, exactly what
//! output register `j` meets, so no rhs load repeats across rows, as in the f32 blocks.
//!
//! ```text
//! ordinal:  15
//! constants: fixed 0, per_unit 2 per output vectors
//! isa:      Avx512f, Avx512vnni
//! applies:  MatmulAccum [1, 1, 4, n], lhs u8, rhs i8, out i32; lhs in memory or a cache, one
//!           contiguous run in k order; rhs one contiguous run holding element (k, n) at 4 n + k
//!           (the VNNI layout), in a cache that moves to the output's vector registers (L1 on
//!           x86) or in vector registers of 64 i8 lanes; out in vector registers of 16 i32 lanes,
//!           n its innermost physical dim, whole vectors
//! memory:   1 vector register (the broadcast word)
//! cost:     fixed + per_unit * vectors + move_cost(lhs) + vector_move_cost(rhs)
//!           (0 for rhs in registers)
//! ```
//!
//! Exact: each lane adds four products of a u8 and an i8 (each at most 255 * 128 in magnitude) to
//! its i32 without saturation, and a valid spec's reduction is short enough that no sum wraps
//! (`crate::dtype::exact_reduction_limit`).

use super::{CalibrationCase, CalibrationSites, KernelDefinition, KernelKind, sized};
use super::{in_index_order, in_memory, in_vector_registers, output_vectors, vectors_along, whole_vectors};
use crate::cost::{Cost, move_cost, vector_move_cost};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind, TensorSpec};
use crate::target::LevelKind;
use crate::target::{KernelCost, MemVec, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration)
        .after_tiling(could_apply_after_tiling)
        .memory(memory);

/// i32 lanes per output vector (512-bit vectors).
pub const LANES: u32 = 16;

/// Values of `k` one instruction sums per lane.
pub const QUAD: u32 = 4;

const DTYPES: [Dtype; 3] = [Dtype::U8, Dtype::I8, Dtype::I32];

/// The rules of a `vpdpbusd` step on vectors of `lanes` i32: this kernel's (16 lanes, AVX-512
/// VNNI) and `BroadcastQuadDotAvx`'s (8 lanes, AVX-VNNI) differ in nothing else.
#[derive(Debug, Clone, Copy)]
pub(super) struct QuadForm {
    /// The kernel whose ISA features the target must have.
    pub kernel: KernelKind,
    /// i32 lanes of an output register; an `rhs` register holds `QUAD * lanes` i8.
    pub lanes: u32,
    /// Where the kernel reads `rhs` from.
    pub rhs: RhsSource,
}

/// Where a `vpdpbusd` step reads its `rhs` quads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RhsSource {
    /// From vector registers, or with a vector load from a cache that moves to them.
    MemoryOrRegisters,
    /// From vector registers only: a block moves each step's `rhs` into registers as the f32
    /// blocks do. For 256-bit vectors, whose loads the model prices by the line (two loads a
    /// line), a load from memory in each row's step looks cheaper than it runs: blocks of one row
    /// reloading `rhs` ran 1.4x slower than blocks of four rows sharing registers.
    Registers,
}

const FORM: QuadForm =
    QuadForm { kernel: KernelKind::BroadcastQuadDot, lanes: LANES, rhs: RhsSource::MemoryOrRegisters };

impl QuadForm {
    fn has_isa(self, target: &Target) -> bool {
        self.kernel.required_isa().iter().all(|f| target.has_isa(*f))
    }

    /// Whether the kernel could apply to some spec of this kind, levels and dtypes.
    pub fn could_apply(
        self,
        kind: PrimitiveKind,
        levels: &[LevelKind],
        dtypes: &[Dtype],
        target: &Target,
    ) -> bool {
        let memory = |l: LevelKind| matches!(l, LevelKind::Cache | LevelKind::Memory);
        kind == (PrimitiveKind::Matmul { accum: true })
            && dtypes == DTYPES
            && self.has_isa(target)
            && memory(levels[0])
            && (memory(levels[1]) || levels[1] == LevelKind::VectorRegisters)
            && levels[2] == LevelKind::VectorRegisters
    }

    /// Whether some tile of a matmul could take the kernel: a u8 input in memory, an i8 input in
    /// memory or in registers of `QUAD * lanes` i8, and an i32 output that, if in vector
    /// registers, has whole vectors of `lanes` along `n`.
    pub fn could_apply_after_tiling(self, spec: &LogicalSpec, target: &Target) -> bool {
        let (PrimitiveKind::Matmul { .. }, [lhs, rhs, out]) = (spec.kind, spec.operands.as_slice()) else {
            return false;
        };
        let rhs_fits = in_memory(rhs, target)
            || (in_vector_registers(rhs, target) && rhs.vector_size == Some(QUAD * self.lanes));
        [lhs.dtype, rhs.dtype, out.dtype] == DTYPES
            && self.has_isa(target)
            && in_memory(lhs, target)
            && rhs_fits
            && (!in_vector_registers(out, target)
                || (out.vector_size == Some(self.lanes) && vectors_along(out, 2)))
    }

    /// `rhs` in memory (as [`strip_step_applies`] takes it, where the form reads it there), or in
    /// whole vector registers of `QUAD * lanes` i8, register `j` the quads of output register `j`'s
    /// columns.
    pub fn applies(self, spec: &LogicalSpec, target: &Target) -> bool {
        let dtypes: fn(&[Dtype]) -> bool = |d| d == DTYPES;
        if !strip_step_shape_applies(spec, target, self.kernel, QUAD, self.lanes, dtypes) {
            return false;
        }
        let rhs = &spec.operands[1];
        if in_vector_registers(rhs, target) {
            rhs.vector_size == Some(QUAD * self.lanes) && whole_vectors(rhs, QUAD * self.lanes)
        } else {
            self.rhs == RhsSource::MemoryOrRegisters
                && strip_step_applies(spec, target, self.kernel, QUAD, self.lanes, dtypes)
        }
    }

    /// Calibration: 1, 2 and 4 output vectors of `lanes` i32, the u8 quad in L1 and the i8 rows
    /// in the VNNI layout, in L1 (`v1` ..., where the form reads them there) and in registers of
    /// `QUAD * lanes` i8 (`r1` ...).
    pub fn calibration(self, s: &CalibrationSites) -> Vec<CalibrationCase> {
        let mut cases = match self.rhs {
            RhsSource::MemoryOrRegisters => strip_calibration(s, QUAD, self.lanes, Dtype::U8),
            RhsSource::Registers => Vec::new(),
        };
        // Vectors of `lanes` i32 (4 bytes each).
        if s.widths.contains(&(self.lanes * 4)) {
            let (l1, vrf, lanes) = (&s.l1, &s.vrf, self.lanes);
            cases.extend(sized("r", [1, 2, 4], |v| {
                format!(
                    "MatmulAccum(1x1x{QUAD}x{}, u8 {l1} row-major, i8 {vrf} [0, 2, 1] v{}, i32 {vrf} row-major v{lanes}, serial)",
                    v * lanes,
                    QUAD * lanes
                )
            }));
        }
        cases
    }
}

fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], target: &Target) -> bool {
    FORM.could_apply(kind, levels, dtypes, target)
}

fn could_apply_after_tiling(spec: &LogicalSpec, target: &Target) -> bool {
    FORM.could_apply_after_tiling(spec, target)
}

/// Whether `rhs` `[1, s, n]` holds element `(k, n)` at `s n + k` of one run: fully contiguous, in
/// index order, and its physical dims above 1 are `n` then the `s = strip` values of `k`.
pub(super) fn in_strip_order(rhs: &TensorSpec, strip: u32) -> bool {
    let Ok(sizes) = rhs.layout.physical_sizes(&rhs.shape) else { return false };
    let wide: Vec<(u8, u64)> =
        rhs.layout.dims().iter().zip(sizes).filter(|(_, s)| *s > 1).map(|(d, s)| (d.logical, s)).collect();
    let strip_inside_n = match wide.as_slice() {
        [(2, _), (1, s)] => *s == u64::from(strip),
        [(1, s)] => *s == u64::from(strip) && rhs.shape.dim(2) == 1,
        _ => false,
    };
    strip_inside_n && rhs.is_fully_contiguous() && in_index_order(rhs)
}

/// The rules an int8 register-block step shares: `MatmulAccum [1, 1, strip, n]` with `dtypes`
/// accepted, the kernel's ISA, `lhs` one run in `k` order and `rhs` one run in strip order in
/// memory or a cache that moves to the output's vector registers, the output whole vectors of
/// `lanes` i32 along `n` in registers.
pub(super) fn strip_step_applies(
    spec: &LogicalSpec,
    target: &Target,
    kernel: KernelKind,
    strip: u32,
    lanes: u32,
    dtypes: fn(&[Dtype]) -> bool,
) -> bool {
    strip_step_shape_applies(spec, target, kernel, strip, lanes, dtypes)
        && in_memory(&spec.operands[1], target)
        && target.level(spec.operands[1].level).moves_to.contains(&spec.output().level)
}

/// [`strip_step_applies`] but for where `rhs` is: the step's shape and dtypes, the kernel's ISA,
/// `lhs` one run in `k` order in memory, `rhs` holding its strips in order, the output whole
/// vectors of `lanes` i32 along `n` in registers.
fn strip_step_shape_applies(
    spec: &LogicalSpec,
    target: &Target,
    kernel: KernelKind,
    strip: u32,
    lanes: u32,
    dtypes: fn(&[Dtype]) -> bool,
) -> bool {
    if spec.kind != (PrimitiveKind::Matmul { accum: true }) {
        return false;
    }
    let [1, 1, s, n] = spec.shape.dims() else { return false };
    let (lhs, rhs, out) = (&spec.operands[0], &spec.operands[1], &spec.operands[2]);
    *s == strip
        && dtypes(&[lhs.dtype, rhs.dtype, out.dtype])
        && kernel.required_isa().iter().all(|f| target.has_isa(*f))
        && out.vector_size == Some(lanes)
        && *n % lanes == 0
        && in_memory(lhs, target)
        && lhs.is_fully_contiguous()
        && in_index_order(lhs)
        && in_strip_order(rhs, strip)
        && in_vector_registers(out, target)
        && vectors_along(out, 2)
        && whole_vectors(out, lanes)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    FORM.applies(spec, target)
}

fn memory(spec: &LogicalSpec, _target: &Target) -> MemVec {
    MemVec::single(spec.output().level, 1)
}

/// The cost of an int8 register-block step: `fixed + per_unit * vectors + move_cost(lhs) +
/// vector_move_cost(rhs)`.
pub(super) fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    let inputs =
        move_cost(&spec.operands[0], target).saturating_add(vector_move_cost(&spec.operands[1], target));
    c.fixed.saturating_add(c.per_unit.saturating_mul(output_vectors(spec))).saturating_add(inputs)
}

fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    FORM.calibration(s)
}

/// Calibration of an int8 step over `strip` values of `k`: 1, 2 and 4 output vectors of `lanes`
/// i32, the `lhs` strip (of dtype `lhs`) and the i8 rows in L1 in strip order (none without
/// vectors that wide).
pub(super) fn strip_calibration(
    s: &CalibrationSites,
    strip: u32,
    lanes: u32,
    lhs: Dtype,
) -> Vec<CalibrationCase> {
    if !s.widths.contains(&(lanes * 4)) {
        return Vec::new();
    }
    let (l1, vrf) = (&s.l1, &s.vrf);
    sized("v", [1, 2, 4], |v| {
        format!(
            "MatmulAccum(1x1x{strip}x{}, {lhs} {l1} row-major, i8 {l1} [0, 2, 1], i32 {vrf} row-major v{lanes}, serial)",
            v * lanes
        )
    })
}

/// The specs it takes and near misses it must refuse (on `x86-avx512`; `x86-avx2` has no VNNI).
#[test]
fn applies_to_its_specs_only() {
    let avx512 = Target::builtin("x86-avx512", 1).unwrap();
    let check = |text: &str| {
        let spec = LogicalSpec::parse(text, &avx512).unwrap().canonicalize(&avx512).unwrap();
        KernelKind::BroadcastQuadDot.applies(&spec, &avx512)
    };
    let out = "i32 VRF row-major v16";
    for takes in [
        format!("MatmulAccum(1x1x4x16, u8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
        format!("MatmulAccum(1x1x4x32, u8 GL row-major, i8 L2 [0, 2, 1], {out})"),
        // rhs in registers: register j holds the quads of output register j's 16 columns.
        format!("MatmulAccum(1x1x4x32, u8 L1 row-major, i8 VRF [0, 2, 1] v64, {out})"),
    ] {
        assert!(check(&takes), "{takes}");
    }
    for refuses in [
        // rhs row-major: the four values of k of a column are not side by side.
        format!("MatmulAccum(1x1x4x16, u8 L1 row-major, i8 L1 row-major, {out})"),
        format!("MatmulAccum(1x1x4x16, i8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
        // rhs in main memory, which does not move to vector registers.
        format!("MatmulAccum(1x1x4x16, u8 L1 row-major, i8 GL [0, 2, 1], {out})"),
        // Four values of k of each column, but not the columns in order: n split by 8.
        format!("MatmulAccum(1x1x4x16, u8 L1 row-major, i8 L1 [2, 1, 2 p(8)], {out})"),
        format!("MatmulAccum(1x1x8x16, u8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
        "MatmulAccum(1x1x4x8, u8 L1 row-major, i8 L1 [0, 2, 1], i32 VRF row-major v8)".to_string(),
        // rhs in registers of 32 lanes (half an output register's quads), or in k-major order.
        format!("MatmulAccum(1x1x4x32, u8 L1 row-major, i8 VRF [0, 2, 1] v32, {out})"),
        format!("MatmulAccum(1x1x4x32, u8 L1 row-major, i8 VRF row-major v64, {out})"),
        format!("Matmul(1x1x4x16, u8 L1 row-major, i8 L1 [0, 2, 1], {out})"),
    ] {
        assert!(!check(&refuses), "{refuses}");
    }
    let avx2 = Target::builtin("x86-avx2", 1).unwrap();
    let text = "MatmulAccum(1x1x4x16, u8 L1 row-major, i8 L1 [0, 2, 1], i32 VRF row-major v8)";
    let spec = LogicalSpec::parse(text, &avx2).unwrap().canonicalize(&avx2).unwrap();
    assert!(!KernelKind::BroadcastQuadDot.applies(&spec, &avx2), "no VNNI on x86-avx2");
}
