//! `VectorInterleave`: copies `s = 2` or `4` rows of 16 bytes into one run of `16 s` bytes,
//! column after column (a `[s, 16]` tile from rows to columns), with 128-bit byte and word unpacks.
//!
//! The vector form of packing an 8-bit matmul `rhs` `[k, n]` into strips of `k` inside `n`: a
//! `[s, 16]` tile of the strip layout `[k / s, n, s]` (the VNNI layout for `s = 4`, the pairs of
//! `BroadcastPairDot` for `s = 2`) is column-major and one run, element `(k, n)` at `s n + k`, so
//! the search's packing move (`morello-search/src/actions/moves.rs`) tiles down to it. Four rows
//! take two rounds of unpacks (bytes of rows 0/1 and 2/3, then their 16-bit pairs), two rows one.
//!
//! ```text
//! ordinal:  20
//! constants: fixed 0, per_unit 3 per rows
//! isa:      Avx
//! applies:  Move [.., s, 16] (other dims 1; the two dims in either order, so a convolution's
//!           filter tap [16, s, 1, 1] too), s = 2 or 4, one 8-bit dtype; both sides in
//!           memory or a cache; the source's rows each one run of 16 bytes; the destination one
//!           run holding element (r, c) at s c + r
//! cost:     fixed + per_unit * s + vector_move_cost(source) + vector_move_cost(destination)
//! ```

use super::{CalibrationCase, CalibrationSites, KernelDefinition, KernelKind, sized};
use super::{in_index_order, in_memory, whole_vectors};
use crate::cost::{Cost, vector_move_cost};
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind, TensorSpec};
use crate::target::LevelKind;
use crate::target::{KernelCost, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration);

/// Bytes of each row: one 128-bit vector.
pub const ROW_BYTES: u32 = 16;

/// The row counts it interleaves: the strips of the int8 kernels that read them.
pub const STRIPS: [u32; 2] = [2, 4];

fn has_isa(target: &Target) -> bool {
    KernelKind::VectorInterleave.required_isa().iter().all(|f| target.has_isa(*f))
}

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], target: &Target) -> bool {
    kind == PrimitiveKind::Move
        && dtypes[0] == dtypes[1]
        && dtypes[0].size_bytes() == 1
        && levels.iter().all(|l| matches!(l, LevelKind::Cache | LevelKind::Memory))
        && has_isa(target)
}

/// The tile a `VectorInterleave` copies: `rows` (a strip) along logical dim `k` and 16 along
/// logical dim `n`, every other dim 1 (`[.., s, 16]` for a matmul's `rhs`, `[16, s, 1, 1]` for a
/// tap of a convolution's filters `[f, c, fh, fw]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripTile {
    /// The rows: 2 or 4.
    pub rows: u32,
    /// The logical dim of the rows.
    pub k: usize,
    /// The logical dim of the 16 values of each row.
    pub n: usize,
}

/// The tile of `spec`, if its shape is 1 but for one dim of a strip's extent and one of 16.
pub fn strip_tile(spec: &LogicalSpec) -> Option<StripTile> {
    let dims = spec.shape.dims();
    let wide: Vec<usize> = (0..dims.len()).filter(|&d| dims[d] > 1).collect();
    let &[a, b] = wide.as_slice() else { return None };
    let tile = |k: usize, n: usize| {
        (dims[n] == ROW_BYTES && STRIPS.contains(&dims[k])).then_some(StripTile { rows: dims[k], k, n })
    };
    tile(a, b).or_else(|| tile(b, a))
}

/// The physical dims of `t` above 1, outermost first: (logical dim, size).
fn wide_dims(t: &TensorSpec) -> Option<Vec<(usize, u64)>> {
    let sizes = t.layout.physical_sizes(&t.shape).ok()?;
    Some(
        t.layout
            .dims()
            .iter()
            .zip(sizes)
            .filter(|(_, s)| *s > 1)
            .map(|(d, s)| (usize::from(d.logical), s))
            .collect(),
    )
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let Some(StripTile { rows: s, k, n }) = strip_tile(spec) else { return false };
    if !could_apply(
        spec.kind,
        &spec.operands.iter().map(|o| target.level(o.level).kind).collect::<Vec<_>>(),
        &spec.operands.iter().map(|o| o.dtype).collect::<Vec<_>>(),
        target,
    ) {
        return false;
    }
    let (src, dst) = (&spec.operands[0], &spec.operands[1]);
    let (s, row) = (u64::from(s), u64::from(ROW_BYTES));
    // Rows: k outside n, each row of n one run of 16 bytes in index order.
    let rows = wide_dims(src).is_some_and(|d| d == [(k, s), (n, row)])
        && whole_vectors(src, ROW_BYTES)
        && in_index_order(src);
    // Columns: n outside k, the whole tile one run.
    let columns = wide_dims(dst).is_some_and(|d| d == [(n, row), (k, s)])
        && dst.is_fully_contiguous()
        && in_index_order(dst);
    in_memory(src, target) && in_memory(dst, target) && rows && columns
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    let rows = u64::from(strip_tile(spec).map_or(1, |t| t.rows));
    let sides: Cost = spec.operands.iter().map(|o| vector_move_cost(o, target)).sum();
    c.fixed.saturating_add(c.per_unit.saturating_mul(rows)).saturating_add(sides)
}

/// Calibration: four and two rows of 16 bytes in L1 into one run there.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let l1 = &s.l1;
    sized("s", [4, 2], |rows| {
        format!("Move({rows}x{ROW_BYTES}, i8 {l1} row-major, i8 {l1} col-major, serial)")
    })
}

/// The specs it takes and near misses it must refuse (on `x86-avx2`).
#[test]
fn applies_to_its_specs_only() {
    let takes = [
        "Move(4x16, i8 L1 row-major, i8 L1 col-major)",
        "Move(4x16, i8 L1 row-major c1, i8 L2 col-major)",
        "Move(2x16, u8 GL row-major c1, u8 L1 col-major)",
        "Move(1x4x16, i8 GL row-major c1, i8 L2 [0, 2, 1])",
        "Move(4x16, i8 L2 row-major c1, i8 GL [0, 1, 0 p(4)])",
        // A tap of HWIO filters [f, c, 1, 1] into their strips (`[2, 3, 1, 0, 1 p(4)]`).
        "Move(16x4x1x1, i8 L2 col-major c2, i8 L2 row-major)",
    ];
    let refuses = [
        "Move(4x16, i8 L1 row-major, i8 L1 row-major)",
        "Move(4x16, i8 L1 col-major, i8 L1 col-major)",
        "Move(3x16, i8 L1 row-major, i8 L1 col-major)",
        "Move(4x8, i8 L1 row-major, i8 L1 col-major)",
        "Move(4x32, i8 L1 row-major, i8 L1 col-major)",
        "Move(2x4x16, i8 L1 row-major, i8 L1 [0, 2, 1])",
        "Move(4x16, i8 L1 row-major, i8 L1 col-major c1)",
        "Move(4x16, u32 L1 row-major, u32 L1 col-major)",
        "Move(4x16, i8 VRF row-major v16, i8 L1 col-major)",
        "Move(16x4x1x1, i8 L2 col-major c2, i8 L2 col-major)",
        "Move(16x4x2x1, i8 L2 col-major, i8 L2 row-major)",
    ];
    super::tests::check_avx2(KernelKind::VectorInterleave, &takes, &refuses);
    // No x86 vectors on AArch64.
    super::tests::check_on("arm-neon", KernelKind::VectorInterleave, &[], &takes);
}
