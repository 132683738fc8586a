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
    let PrimitiveKind::Matmul { accum } = spec.kind else { return };
    let (rhs, output) = (&spec.operands[1], &spec.operands[2]);
    let source = target.level(rhs.level);
    // One dtype, or an int8 matmul's i8 `rhs` and i32 output (each buffer keeps its operand's).
    let int8 = rhs.dtype == Dtype::I8 && output.dtype == Dtype::I32;
    if (rhs.dtype != output.dtype && !int8)
        || output.level != rhs.level
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
    let Some((narrowest, widest)) = vector_lanes(target, output.dtype.size_bytes()) else { return };
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
    let (lhs, rhs, output) = (&spec.operands[0], &spec.operands[1], &spec.operands[2]);
    let buffer = |dims: Vec<u32>, dtype: Dtype| {
        Some(TensorSpec {
            shape: Shape::new(dims).ok()?,
            dtype,
            level,
            layout: Layout::row_major(3),
            contiguous_dims: 3,
            vector_size: None,
            pitch: None,
        })
    };
    let body = LogicalSpec {
        kind: spec.kind,
        shape: Shape::new(vec![b, m, k, padded]).ok()?,
        operands: vec![
            lhs.clone(),
            buffer(vec![b, k, padded], rhs.dtype)?,
            buffer(vec![b, m, padded], output.dtype)?,
        ],
        serial_only: spec.serial_only,
    }
    .canonicalize(target)
    .ok()?;
    let temporaries = vec![body.operands[1].clone(), body.operands[2].clone()];
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
    let pad_origin = Some(vec![vec![0, 0, n]]);
    // Parent operands: lhs 0, rhs 1, out 2; temporaries: rhs' 3, out' 4.
    let mut children = vec![zero(&padding.operands[1])?, copy(rhs, &columns.operands[1])?];
    let mut stage_operands = vec![vec![3], vec![1, 3]];
    let mut stage_origins = vec![pad_origin.clone(), None];
    if accum {
        children.extend([copy(output, &columns.operands[2])?, zero(&padding.operands[2])?]);
        stage_operands.extend([vec![2, 4], vec![4]]);
        stage_origins.extend([None, pad_origin]);
    }
    children.extend([body, copy(&columns.operands[2], output)?]);
    stage_operands.extend([vec![0, 3, 4], vec![4, 2]]);
    stage_origins.extend([None, None]);
    Some(Plan {
        children,
        combine: Combine::Alloc { own, cost: 0 },
        shape: PlanShape::Block { stage_operands, stage_origins, temporaries },
    })
}
