//! `Move`: copy a tensor into another, `destination = source`; the two may differ in level,
//! layout and dtype (a dtype only widens: bf16 into f32).
//!
//! ```text
//! ordinal:  7
//! forms:    Move
//! space:    any rank, the tensor's shape
//! operands: src in, dst out (both of the iteration shape)
//! dtypes:   dst the same as src or wider
//! computes: dst[p] = src[p], converted
//! verified: exactly
//! ```
//!
//! The search makes moves to bring operands into faster levels (`actions/moves.rs`); a move's own
//! operands only move to a level faster than the other's, so the sub-spec graph stays acyclic.
//! Its kernels are `ValueAssign`, `VectorAssign` and the memsets and copies of the harness.

use super::{
    Direction, OperandDim, OperandsMut, OperatorDefinition, PrimitiveKind, Tolerance, dims, operand,
};
use crate::dtype::Dtype;
use crate::interp::values::convert;
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
    if d[0] != d[1] && !d[0].widens_to(d[1]) {
        return Err(format!("a move copies or widens (bf16 -> f32); it cannot convert {} to {}", d[0], d[1]));
    }
    Ok(())
}

fn semantics(_: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let out_dtype = ops.dtype(1);
    for p in shape.points() {
        let v = ops.read(0, &p);
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
