//! `MatmulRequant`: a quantized matmul requantized in its epilogue, `out = requant(lhs * rhs)`:
//! the exact i32 sum of 8-bit products scaled per column, rounded, offset by a zero point and
//! saturated to 8 bits.
//!
//! ```text
//! ordinal:  10
//! forms:    MatmulRequant
//! space:    [b, m, k, n]
//! operands: lhs [b, m, k] in, rhs [b, k, n] in, scale [n] in, zero_point [n] in, out [b, m, n] out
//! reduces:  k, into an i32 accumulator
//! dtypes:   lhs and rhs u8 and i8 or i8 and i8 (u8s8s32, s8s8s32); scale f32; out u8 or i8 and
//!           zero_point the same
//! computes: acc = Σ_k lhs[b, m, k] rhs[b, k, n] (exact in i32: k is bounded),
//!           out[b, m, n] = requantize(acc, scale[n], zero_point[n]) (`super::requantize`)
//! verified: exactly
//! parts:    Matmul(lhs, rhs, acc) then Requant(acc, scale, zero_point, out), acc an i32 temporary
//! ```
//!
//! It moves only `lhs` and `rhs`: its requantization reads `scale` and `zero_point` and writes
//! `out` where they are (moves of them would multiply its sub-specs for nothing the model can
//! price lower). The search reaches kernels only through its parts (`actions/requant.rs`): the temporary in
//! vector registers is the fused plan (a register block requantized before it is stored), in
//! memory a separate pass.

use super::{
    AbstractSpec, Arithmetic, Direction, FrontierLevels, KernelReach, OperandDim, OperandRole, OperandsMut,
    OperatorDefinition, Parts, PrimitiveKind, Tolerance, dims, operand, requant_dtypes, requantize,
};
use crate::dtype::Dtype;
use crate::interp::values::{Value, wrap};
use crate::shape::Shape;
use crate::target::{LevelId, Target};

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[(PrimitiveKind::MatmulRequant, "MatmulRequant")],
    &OPERANDS,
    operand_dims,
    dtypes,
    semantics,
    tolerance,
    description,
    |m| {
        format!(
            "MatmulRequant(1x2x4x4, u8 {m} row-major, i8 {m} row-major, f32 {m} row-major, u8 {m} row-major, \
             u8 {m} row-major)"
        )
    },
)
.rank(4, Some(&["b", "m", "k", "n"]))
.reductions(&[2])
.accumulator(Dtype::I32)
.arithmetic(Arithmetic::MultiplyAdd)
.frontier_levels(FrontierLevels::ReachingOperands)
.parts(parts, KernelReach::Parts)
.unmoved(&[2, 3, 4])
.memory_bound(super::matmul::vector_product);

const OPERANDS: [OperandRole; 5] = [
    operand("lhs", Direction::In),
    operand("rhs", Direction::In),
    operand("scale", Direction::In),
    operand("zero_point", Direction::In),
    operand("out", Direction::Out),
];

/// The operands of each part, as indices of this operator's and the temporary (5): the matmul on
/// `lhs`, `rhs` and `acc`, then the requantization of `acc` into `out`.
pub const REQUANT_STAGES: [&[usize]; 2] = [&[0, 1, 5], &[5, 2, 3, 4]];

fn operand_dims(_: PrimitiveKind, _: usize) -> Vec<Vec<OperandDim>> {
    let mut dims = dims::matmul();
    let column = vec![OperandDim::one(3)];
    dims.insert(2, column.clone());
    dims.insert(2, column);
    dims
}

fn dtypes(kind: PrimitiveKind, d: &[Dtype]) -> Result<(), String> {
    let quantized = matches!((d[0], d[1]), (Dtype::U8 | Dtype::I8, Dtype::I8));
    if !quantized {
        return Err(format!(
            "{} needs u8 or i8 lhs and i8 rhs (u8s8s32 or s8s8s32), found {} and {}",
            kind.name(),
            d[0],
            d[1]
        ));
    }
    requant_dtypes(kind, d[2], d[3], d[4])
}

fn semantics(_: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let [batch, rows, depth, cols] = *shape.dims() else { return };
    let out = ops.dtype(4);
    for b in 0..batch {
        for m in 0..rows {
            for n in 0..cols {
                let mut acc = 0i64;
                for k in 0..depth {
                    let (Value::Int(x), Value::Int(w)) = (ops.read(0, &[b, m, k]), ops.read(1, &[b, k, n]))
                    else {
                        continue;
                    };
                    acc = wrap(acc + x * w, Dtype::I32);
                }
                let value = requantize(Value::Int(acc), ops.read(2, &[n]), ops.read(3, &[n]), out);
                ops.write(4, &[b, m, n], value);
            }
        }
    }
}

fn tolerance(_: PrimitiveKind) -> Tolerance {
    Tolerance::Exact
}

/// The matmul into an i32 temporary at any level that allocates, then its requantization.
fn parts(_: PrimitiveKind, l: &[LevelId], d: &[Dtype], target: &Target) -> Parts {
    let alternatives = target
        .level_ids()
        .filter(|&t| target.level(t).allocates)
        .map(|t| {
            vec![
                AbstractSpec {
                    kind: PrimitiveKind::Matmul { accum: false },
                    levels: vec![l[0], l[1], t],
                    dtypes: vec![d[0], d[1], Dtype::I32],
                },
                AbstractSpec {
                    kind: PrimitiveKind::Requant,
                    levels: vec![t, l[2], l[3], l[4]],
                    dtypes: vec![Dtype::I32, d[2], d[3], d[4]],
                },
            ]
        })
        .collect();
    Parts::Also(alternatives)
}

fn description(_: PrimitiveKind) -> &'static str {
    "a quantized matmul with a requantizing epilogue"
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use crate::spec::LogicalSpec;
    use crate::target::Target;

    /// Its sums are kept in i32, so its reduction is bounded as an int8 matmul's into i32 is.
    #[test]
    fn a_reduction_that_could_overflow_i32_is_refused() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let spec = |k: u32| {
            format!(
                "MatmulRequant(1x1x{k}x8, u8 GL row-major, i8 GL row-major, f32 GL row-major, u8 GL row-major, \
                 u8 GL row-major)"
            )
        };
        assert!(LogicalSpec::parse(&spec(65_793), &target).unwrap().canonicalize(&target).is_ok());
        let err = LogicalSpec::parse(&spec(65_794), &target).unwrap().canonicalize(&target).unwrap_err();
        assert!(err.to_string().contains("only up to 65793"), "{err}");
    }
}
