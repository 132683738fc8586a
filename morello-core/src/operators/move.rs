//! `Move`: copy a tensor into another, `destination = source`; the two may differ in level,
//! layout and dtype (a dtype only widens, bf16 into f32, or an i8 source is shifted into u8).
//!
//! ```text
//! ordinal:  7
//! forms:    Move
//! space:    any rank, the tensor's shape
//! operands: src in, dst out (both of the iteration shape)
//! dtypes:   dst the same as src or wider, or src i8 and dst u8
//! computes: dst[p] = src[p], converted; from i8 to u8, src[p] + 128 (the bits src[p] ^ 0x80)
//! verified: exactly
//! ```
//!
//! The search makes moves to bring operands into faster levels (`actions/moves.rs`); a move's own
//! operands only move to a level faster than the other's, so the sub-spec graph stays acyclic.
//! Its kernels are `ValueAssign`, `VectorAssign` and the memsets and copies of the harness.
//!
//! The shift from i8 to u8 is how an s8s8s32 matmul reaches the u8 x i8 kernels (`vpdpbusd` reads
//! one side unsigned): `actions/shift.rs` in the search copies its `lhs` so, and corrects the sums
//! by `-128` times the column sums of `rhs` (`ShiftCorrection`).

use super::{
    Direction, OperandDim, OperandsMut, OperatorDefinition, PrimitiveKind, Tolerance, dims, operand,
};
use crate::dtype::Dtype;
use crate::interp::values::{Value, convert};
use crate::shape::Shape;
use crate::target::LevelId;

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[(PrimitiveKind::Move, "Move")],
    &[operand("src", Direction::In), operand("dst", Direction::Out)],
    operand_dims,
    dtypes,
    semantics,
    tolerance,
    description,
    |m| format!("Move(3x4, f32 {m} row-major, f32 {m} col-major)"),
)
.moves(shrinks);

fn operand_dims(_: PrimitiveKind, rank: usize) -> Vec<Vec<OperandDim>> {
    vec![dims::identity(rank); 2]
}

fn dtypes(_: PrimitiveKind, d: &[Dtype]) -> Result<(), String> {
    if d[0] != d[1] && !d[0].widens_to(d[1]) && !shifts(d[0], d[1]) {
        return Err(format!(
            "a move copies, widens (bf16 -> f32) or shifts i8 into u8 (+128); it cannot convert {} to {}",
            d[0], d[1]
        ));
    }
    Ok(())
}

/// Whether a move from `src` to `dst` is the shift of an i8 tensor into u8 (`x + 128`).
pub fn shifts(src: Dtype, dst: Dtype) -> bool {
    (src, dst) == (Dtype::I8, Dtype::U8)
}

fn semantics(_: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let shift = shifts(ops.dtype(0), ops.dtype(1));
    let out_dtype = ops.dtype(1);
    for p in shape.points() {
        let v = match ops.read(0, &p) {
            Value::Int(x) if shift => Value::Int(x + 128),
            v => v,
        };
        ops.write(1, &p, convert(v, out_dtype));
    }
}

fn tolerance(_: PrimitiveKind) -> Tolerance {
    Tolerance::Exact
}

/// Copying operand `operand` into a new buffer at `level` gives the move `level -> other` (or
/// `other -> level`), smaller than this one only when `level` is faster than the other operand's.
fn shrinks(levels: &[LevelId], operand: usize, level: LevelId) -> bool {
    level > levels[1 - operand]
}

fn description(_: PrimitiveKind) -> &'static str {
    "a move"
}
