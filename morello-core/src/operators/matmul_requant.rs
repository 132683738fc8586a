//! `MatmulRequant`: a quantized matmul requantized in its epilogue, `out = requant(lhs * rhs)`:
//! the exact i32 sum of 8-bit products (plus a per-column i32 bias) scaled per column, rounded,
//! offset by a zero point and saturated to 8 bits (`MatmulRequant`, `MatmulBiasRequant`,
//! `MatmulBiasReluRequant`).
//!
//! ```text
//! ordinal:  10
//! forms:    MatmulRequant, MatmulBiasRequant, MatmulBiasReluRequant (epilogue)
//! space:    [b, m, k, n]
//! operands: lhs [b, m, k] in, rhs [b, k, n] in, (bias [n] in,) scale [n] in, zero_point [n] in,
//!           out [b, m, n] out
//! reduces:  k, into an i32 accumulator
//! dtypes:   lhs and rhs u8 and i8 or i8 and i8 (u8s8s32, s8s8s32); bias i32; scale f32; out u8 or
//!           i8 and zero_point the same
//! computes: acc = Σ_k lhs[b, m, k] rhs[b, k, n] (exact in i32: k is bounded),
//!           out[b, m, n] = requantize(acc + bias[n], scale[n], zero_point[n]) (`super::requantize`),
//!           ReLU after the scale in MatmulBiasReluRequant
//! bias:     k bounded so that k max|ab| + 2^30 <= 2^31 - 1: any bias in [-2^30, 2^30] sums exactly;
//!           beyond it the i32 sum wraps (the same in the interpreter and the C)
//! verified: exactly
//! parts:    Matmul(lhs, rhs, acc) then Requant(acc, (bias,) scale, zero_point, out), acc an i32
//!           temporary
//! ```
//!
//! It moves only `lhs` and `rhs`: its requantization reads `bias`, `scale` and `zero_point` and writes
//! `out` where they are (moves of them would multiply its sub-specs for nothing the model can
//! price lower). The search reaches kernels only through its parts (`actions/requant.rs`): the temporary in
//! vector registers is the fused plan (a register block requantized before it is stored), in
//! memory a separate pass.

use super::{
    AbstractSpec, Arithmetic, Direction, FrontierLevels, KernelReach, OperandDim, OperandRole, OperandsMut,
    OperatorDefinition, Parts, PrimitiveKind, RequantEpilogue, Requantization, Tolerance, dims, operand,
    requant_bias_bound, requant_dtypes, requantize,
};
use crate::dtype::Dtype;
use crate::interp::values::{Value, wrap};
use crate::shape::Shape;
use crate::target::{LevelId, Target};

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[
        (PrimitiveKind::MatmulRequant { epilogue: RequantEpilogue::Plain }, "MatmulRequant"),
        (PrimitiveKind::MatmulRequant { epilogue: RequantEpilogue::Bias }, "MatmulBiasRequant"),
        (PrimitiveKind::MatmulRequant { epilogue: RequantEpilogue::BiasRelu }, "MatmulBiasReluRequant"),
    ],
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
.accumulator_addend(|kind| requant_bias_bound(RequantEpilogue::of(kind)))
.form_operands(form_operands)
.arithmetic(Arithmetic::MultiplyAdd)
.frontier_levels(FrontierLevels::ReachingOperands)
.parts(parts, KernelReach::Parts)
.unmoved(&[2, 3, 4, 5])
.memory_bound(super::matmul::vector_product);

const OPERANDS: [OperandRole; 5] = [
    operand("lhs", Direction::In),
    operand("rhs", Direction::In),
    operand("scale", Direction::In),
    operand("zero_point", Direction::In),
    operand("out", Direction::Out),
];

const BIAS_OPERANDS: [OperandRole; 6] = [
    operand("lhs", Direction::In),
    operand("rhs", Direction::In),
    operand("bias", Direction::In),
    operand("scale", Direction::In),
    operand("zero_point", Direction::In),
    operand("out", Direction::Out),
];

fn form_operands(kind: PrimitiveKind) -> &'static [OperandRole] {
    if RequantEpilogue::of(kind).has_bias() { &BIAS_OPERANDS } else { &OPERANDS }
}

/// The operands of each part, as indices of this operator's (`count` of them) and the
/// temporary (`count`): the matmul on `lhs`, `rhs` and `acc`, then the requantization of `acc`
/// and every other operand (`bias`, `scale`, `zero_point`) into `out`.
pub fn requant_stages(count: usize) -> [Vec<usize>; 2] {
    [vec![0, 1, count], std::iter::once(count).chain(2..count).collect()]
}

fn operand_dims(kind: PrimitiveKind, _: usize) -> Vec<Vec<OperandDim>> {
    let mut dims = dims::matmul();
    let column = vec![OperandDim::one(3)];
    for _ in 2..form_operands(kind).len() - 1 {
        dims.insert(2, column.clone());
    }
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
    requant_dtypes(kind, &d[2..])
}

fn semantics(kind: PrimitiveKind, shape: &Shape, ops: &mut dyn OperandsMut) {
    let [batch, rows, depth, cols] = *shape.dims() else { return };
    let epilogue = RequantEpilogue::of(kind);
    // The operands after lhs and rhs: (bias,) scale, zero_point, out.
    let count = form_operands(kind).len();
    let (scale, zero_point, out_at) = (count - 3, count - 2, count - 1);
    let out = ops.dtype(out_at);
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
                let bias = epilogue.has_bias().then(|| ops.read(2, &[n]));
                let requant = Requantization {
                    scale: ops.read(scale, &[n]),
                    zero_point: ops.read(zero_point, &[n]),
                    epilogue,
                };
                ops.write(out_at, &[b, m, n], requantize(Value::Int(acc), bias, requant, out));
            }
        }
    }
}

fn tolerance(_: PrimitiveKind) -> Tolerance {
    Tolerance::Exact
}

/// The matmul into an i32 temporary at any level that allocates, then its requantization.
fn parts(kind: PrimitiveKind, l: &[LevelId], d: &[Dtype], target: &Target) -> Parts {
    let [matmul, requant] = requant_stages(l.len());
    // Operand `l.len()` is the temporary, at `t` in i32.
    let part = |kind, operands: &[usize], t: LevelId| AbstractSpec {
        kind,
        levels: operands.iter().map(|&i| l.get(i).copied().unwrap_or(t)).collect(),
        dtypes: operands.iter().map(|&i| d.get(i).copied().unwrap_or(Dtype::I32)).collect(),
    };
    let alternatives = target
        .level_ids()
        .filter(|&t| target.level(t).allocates)
        .map(|t| {
            vec![
                part(PrimitiveKind::Matmul { accum: false }, &matmul, t),
                part(PrimitiveKind::Requant { epilogue: RequantEpilogue::of(kind) }, &requant, t),
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

    /// With a bias the bound leaves room for any bias in [-2^30, 2^30], and the message says so.
    #[test]
    fn a_bias_halves_the_reduction_bound() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let spec = |k: u32| {
            format!(
                "MatmulBiasReluRequant(1x1x{k}x8, u8 GL row-major, i8 GL row-major, i32 GL row-major, \
                 f32 GL row-major, u8 GL row-major, u8 GL row-major)"
            )
        };
        assert!(LogicalSpec::parse(&spec(32_896), &target).unwrap().canonicalize(&target).is_ok());
        let err = LogicalSpec::parse(&spec(32_897), &target).unwrap().canonicalize(&target).unwrap_err();
        let err = err.to_string();
        assert!(
            err.contains("only up to 32896") && err.contains("bias of magnitude up to 1073741824"),
            "{err}"
        );
    }
}
