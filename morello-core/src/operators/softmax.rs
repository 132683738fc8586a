//! `Softmax`: softmax along the last dim of a 2-D tensor, numerically stable:
//! `y[i, j] = exp(x[i, j] - max_i) / Σ_j exp(x[i, j] - max_i)`.
//!
//! ```text
//! ordinal:  3
//! forms:    Softmax
//! space:    [m, n]
//! operands: x [m, n] in, y [m, n] out
//! reduces:  n (the row maximum and sum)
//! dtypes:   f32
//! computes: per row, the maximum, exp(x - max) and its sum in f64, y rounded to f32
//! verified: relative, per element of y: 2 (e + D u) + (n + 3) u, e the polynomial exp's bound
//!           and D the row's largest |x - max| (the difference is rounded before exp)
//! parts:    Max(x, max), SoftmaxExp(x, max, y, sum), SoftmaxScale(sum, y), the temporaries max
//!           and sum at any level that allocates buffers, vector registers aside
//! ```
//!
//! No kernel computes it whole: `actions/softmax.rs` splits it into its three passes.

use super::{
    AbstractSpec, Arithmetic, Direction, EXP_RELATIVE_ERROR, F32_UNIT_ROUNDOFF, KernelReach, OperandDim,
    Operands, OperandsMut, OperatorDefinition, Parts, PrimitiveKind, Tolerance, all_f32, dims, float,
    operand,
};
use crate::dtype::Dtype;
use crate::interp::values::Value;
use crate::shape::Shape;
use crate::target::{LevelId, LevelKind, Target};

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[(PrimitiveKind::Softmax, "Softmax")],
    &[operand("x", Direction::In), operand("y", Direction::Out)],
    operand_dims,
    all_f32,
    semantics,
    tolerance,
    description,
    |m| format!("Softmax(2x8, f32 {m} row-major, f32 {m} row-major)"),
)
.rank(2, None)
.reductions(&[1])
.arithmetic(Arithmetic::Elementwise { flops_per_point: 5 })
.parts(parts, KernelReach::Tiles);

fn operand_dims(_: PrimitiveKind, _: usize) -> Vec<Vec<OperandDim>> {
    vec![dims::rows_cols(); 2]
}

fn semantics(_: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let [rows, cols] = [shape.dim(0), shape.dim(1)];
    for r in 0..rows {
        let x: Vec<f64> = (0..cols).map(|c| float(ops.read(0, &[r, c]))).collect();
        let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = x.iter().map(|v| (v - max).exp()).collect();
        let sum: f64 = e.iter().sum();
        for (c, e) in (0..cols).zip(e) {
            ops.write(1, &[r, c], Value::Float((e / sum) as f32));
        }
    }
}

fn tolerance(_: PrimitiveKind) -> Tolerance {
    Tolerance::Relative(bounds)
}

/// `y`'s bound per row, `2 (e + D u) + (n + 3) u`: the exp of a rounded difference (whose error
/// `D u` the exp magnifies into a relative one), the sum of `n` terms, and the reciprocal.
fn bounds(_: PrimitiveKind, shape: &Shape, ops: &dyn Operands) -> Vec<Option<Vec<f64>>> {
    let [rows, cols] = [shape.dim(0), shape.dim(1)];
    let (u, e, n) = (F32_UNIT_ROUNDOFF, EXP_RELATIVE_ERROR, f64::from(cols));
    let y = (0..rows)
        .map(|r| {
            let row: Vec<f64> = (0..cols).map(|c| float(ops.read(0, &[r, c]))).collect();
            let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let spread = row.iter().map(|v| (v - max).abs()).fold(0.0, f64::max);
            2.0 * (e + spread * u) + (n + 3.0) * u
        })
        .collect();
    vec![None, Some(y)]
}

/// Its three passes, with the temporaries (the row maxima and sums) at any level that allocates
/// buffers other than vector registers.
fn parts(_: PrimitiveKind, l: &[LevelId], d: &[Dtype], target: &Target) -> Parts {
    let (x, y, f) = (l[0], l[1], d[0]);
    let alternatives = target
        .level_ids()
        .filter(|&t| target.level(t).allocates && target.level(t).kind != LevelKind::VectorRegisters)
        .map(|t| {
            vec![
                AbstractSpec {
                    kind: PrimitiveKind::Max { accum: false },
                    levels: vec![x, t],
                    dtypes: vec![f, f],
                },
                AbstractSpec {
                    kind: PrimitiveKind::SoftmaxExp { accum: false },
                    levels: vec![x, t, y, t],
                    dtypes: vec![f; 4],
                },
                AbstractSpec { kind: PrimitiveKind::SoftmaxScale, levels: vec![t, y], dtypes: vec![f, f] },
            ]
        })
        .collect();
    Parts::Also(alternatives)
}

fn description(_: PrimitiveKind) -> &'static str {
    "a softmax"
}
