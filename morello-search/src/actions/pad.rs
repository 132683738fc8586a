//! Pad a matmul's columns to whole vectors: `Matmul(lhs, rhs, out)` over `[b, m, k, n]`, where `n`
//! is not a multiple of the narrowest vector's lanes, becomes a block that allocates
//! `rhs' [b, k, n']` and `out' [b, m, n']` (row-major, `n'` = `n` rounded up to a multiple of the
//! widest vector's lanes) at a faster level that holds buffers, and runs
//!
//! ```text
//! Fill(0, rhs'[.., n..n'])          the padding columns of rhs' are zero, so they add nothing
//! Move(rhs -> rhs'[.., 0..n])
//! Move(out -> out'[.., 0..n])       MatmulAccum only: what it accumulates onto, with
//! Fill(0, out'[.., n..n'])          defined padding columns
//! Matmul(lhs, rhs', out')           every row of out' is whole vectors
//! Move(out'[.., 0..n] -> out)
//! ```
//!
//! A requantizing matmul (`MatmulRequant` and its bias forms) is padded the same way, to whole
//! vectors of its i32 sums: its per-column operands (`bias`, `scale`, `zero_point`) are copied into
//! padded buffers too, their padding zero (the padding columns of the 8-bit `out'` are computed and
//! never stored), and the body `MatmulRequant(lhs, rhs', bias', scale', zero_point', out')` is then
//! split as any requantizing matmul is.
//!
//! The body's register blocks read and write whole vectors where edge code would cover the last
//! columns with narrower vectors and scalars (100x300x77: 13 columns as 8 + 4 + 1, and 1.42x
//! faster padded to 80). The copies and fills are sub-specs priced like every other and weighed
//! against what they save. Where it applies, each rule keeping the space small or the model honest:
//!
//! - `rhs` and `out` share a level outside the registers and a dtype (or are an int8 matmul's i8
//!   `rhs` and i32 output, `n'` then a multiple of the output's vectors), and the buffers go to a level
//!   that level moves to and that allocates, or packs and still moves to a cache (`L2` from main
//!   memory on the built-in targets: their L1 packs only `rhs` panels), where both fit;
//! - every operand is one contiguous run (the whole matrices, or tiles of whole rows): a tile of
//!   columns is left to its parent, which pads once for all of them;
//! - `n` is not a multiple of the output's narrowest vector (4 lanes for f32 on x86): columns that are whole
//!   vectors of some width run at about the speed of the widest, which the model does not see (it
//!   prices a one-vector-wide block's broadcasts on top of its multiply-adds): padding 100 to 112
//!   looks 3% cheaper and runs 14% slower (Intel Xeon, AVX-512);
//! - no parallel loop can follow (the spec is serial-only, or the target has one processor): the
//!   cores read a padded `rhs` that other cores wrote, so its lines move between their caches,
//!   which the model does not price (on two threads 100x300x77 runs 36 us padded at the top against
//!   27 us unpadded; inside a parallel loop each thread pads its own rows, and 1000x300x77 runs
//!   1.32x faster so);
//! - the copies touch at most a fifth as many elements as there are multiply-adds
//!   (`(m + k) n' <= m k n' / 5`): the model does not see a tiny kernel's fixed costs, and padded,
//!   8x8x13 runs 0.63x as fast as its edge code (12x12x13: 1.2x faster).
//!
//! The body's iteration space is larger, but its padded operands sit at a faster level than the ones
//! they replace, and every matmul below it (tiles, moves to faster levels) keeps its operands at
//! least that fast, so padding cannot recur and the sub-spec graph stays acyclic.

use morello_core::dtype::Dtype;
use morello_core::imp::temporaries_memory;
use morello_core::layout::Layout;
use morello_core::shape::Shape;
use morello_core::spec::{CanonicalSpec, FillValue, LogicalSpec, PrimitiveKind, TensorSpec};
use morello_core::target::{LevelId, LevelKind, Target};

use super::{Action, Combine, Plan, PlanShape};

pub(super) fn enumerate(spec: &CanonicalSpec, target: &Target, out: &mut Vec<(Action, Plan)>) {
    // A requantizing matmul's sums are i32 whatever its 8-bit output: its columns are padded to
    // whole i32 vectors, as an int8 matmul's are.
    let (accum, sums) = match spec.kind {
        PrimitiveKind::Matmul { accum } => (accum, spec.operands[2].dtype),
        PrimitiveKind::MatmulRequant { .. } => (false, Dtype::I32),
        _ => return,
    };
    let rhs = &spec.operands[1];
    let source = target.level(rhs.level);
    // One dtype, or an int8 matmul's i8 `rhs` and i32 sums (each buffer keeps its operand's).
    let int8 = rhs.dtype == Dtype::I8 && sums == Dtype::I32;
    if (rhs.dtype != sums && !int8)
        || spec.operands[1..].iter().any(|o| o.level != rhs.level)
        || source.kind.counts_registers()
        || !spec.operands.iter().all(TensorSpec::is_fully_contiguous)
        || !(spec.serial_only || target.processors() == 1)
    {
        return;
    }
    // The copies (about `(m + k) n'` elements) at most a fifth of the multiply-adds (module docs).
    let (m, k) = (u64::from(spec.shape.dim(1)), u64::from(spec.shape.dim(2)));
    if m * k < 5 * (m + k) {
        return;
    }
    let Some((narrowest, widest)) = vector_lanes(target, sums.size_bytes()) else { return };
    let n = spec.shape.dim(3);
    // Columns that are whole vectors of some width are left to edge code (module docs).
    if n % narrowest == 0 {
        return;
    }
    let Some(padded) = n.checked_next_multiple_of(widest) else { return };
    for &level in &source.moves_to {
        let info = target.level(level);
        let holds_buffers = match info.kind {
            LevelKind::Cache => info.allocates || (info.packs && target.moves_to_a_cache(level)),
            LevelKind::Memory => info.allocates,
            LevelKind::VectorRegisters | LevelKind::ScalarRegisters => false,
        };
        if holds_buffers {
            if let Some(plan) = plan(spec, accum, level, padded, target) {
                out.push((Action::Pad { level, columns: padded }, plan));
            }
        }
    }
}

/// Lanes of `element_bytes` elements in the narrowest and the widest vector registers of the
/// target that hold at least two.
fn vector_lanes(target: &Target, element_bytes: u32) -> Option<(u32, u32)> {
    let lanes = target
        .levels()
        .iter()
        .filter(|l| l.kind == LevelKind::VectorRegisters)
        .flat_map(|l| l.vector_bytes.iter().copied())
        .filter(|&w| w % element_bytes == 0 && w / element_bytes >= 2)
        .map(|w| w / element_bytes);
    Some((lanes.clone().min()?, lanes.max()?))
}

fn plan(spec: &CanonicalSpec, accum: bool, level: LevelId, padded: u32, target: &Target) -> Option<Plan> {
    let [b, m, k, n] = *spec.shape.dims() else { return None };
    let count = spec.operands.len();
    // Padded: rhs, a requantizing matmul's per-column operands (bias, scale, zero point), and the
    // output, the last; each into a buffer (a temporary, numbered `count + j` for the j-th) whose
    // last dim, the columns, is `padded`.
    let padded_operands: Vec<usize> = (1..count).collect();
    let buffer = |t: &TensorSpec| {
        let mut dims = t.shape.dims().to_vec();
        *dims.last_mut()? = padded;
        let rank = dims.len() as u8;
        Some(TensorSpec {
            shape: Shape::new(dims).ok()?,
            dtype: t.dtype,
            level,
            layout: Layout::row_major(rank),
            contiguous_dims: rank,
            vector_size: None,
            pitch: None,
        })
    };
    let mut operands = vec![spec.operands[0].clone()];
    for &i in &padded_operands {
        operands.push(buffer(&spec.operands[i])?);
    }
    let body = LogicalSpec {
        kind: spec.kind,
        shape: Shape::new(vec![b, m, k, padded]).ok()?,
        operands,
        serial_only: spec.serial_only,
    }
    .canonicalize(target)
    .ok()?;
    let temporaries = body.operands[1..].to_vec();
    let own = temporaries_memory(&temporaries, target);
    if own.get(level) > target.level(level).capacity {
        return None;
    }
    // The columns that hold the operands, and the padding past them, as tiles of the body.
    let columns = body.tile_at(&[b, m, k, n], &[0, 0, 0, 0], spec.serial_only, target).ok()?;
    let padding = body.tile_at(&[b, m, k, padded - n], &[0, 0, 0, n], spec.serial_only, target).ok()?;
    let zero = |t: &TensorSpec| CanonicalSpec::fill(FillValue::Zero, t, spec.serial_only, target).ok();
    let copy = |from: &TensorSpec, to: &TensorSpec| {
        CanonicalSpec::move_between(from, to, spec.serial_only, target).ok()
    };
    // Where an operand's padding starts: at column `n` of its last dim.
    let pad_origin = |i: usize| {
        let mut origin = vec![0; spec.operands[i].shape.rank()];
        *origin.last_mut()? = n;
        Some(Some(vec![origin]))
    };
    let temporary = |i: usize| count + i - 1;
    let output = count - 1;
    let (mut children, mut stage_operands, mut stage_origins) = (Vec::new(), Vec::new(), Vec::new());
    // Each padded input's padding is zero (a zero rhs column adds nothing; a zero scale, bias or
    // zero point requantizes a column that is never stored), then its columns are copied in.
    for &i in &padded_operands[..padded_operands.len() - 1] {
        children.extend([zero(&padding.operands[i])?, copy(&spec.operands[i], &columns.operands[i])?]);
        stage_operands.extend([vec![temporary(i)], vec![i, temporary(i)]]);
        stage_origins.extend([pad_origin(i)?, None]);
    }
    if accum {
        children.extend([
            copy(&spec.operands[output], &columns.operands[output])?,
            zero(&padding.operands[output])?,
        ]);
        stage_operands.extend([vec![output, temporary(output)], vec![temporary(output)]]);
        stage_origins.extend([None, pad_origin(output)?]);
    }
    children.extend([body, copy(&columns.operands[output], &spec.operands[output])?]);
    stage_operands.extend([
        std::iter::once(0).chain(padded_operands.iter().map(|&i| temporary(i))).collect(),
        vec![temporary(output), output],
    ]);
    stage_origins.extend([None, None]);
    Some(Plan {
        children,
        combine: Combine::Alloc { own, cost: 0 },
        shape: PlanShape::Block { stage_operands, stage_origins, temporaries },
    })
}
