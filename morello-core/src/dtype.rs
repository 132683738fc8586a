//! Element types of tensors, and the dtypes of a contraction's operands as `--dtype` names them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// An element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 32-bit integer.
    I32,
    /// IEEE 754 single precision.
    F32,
    /// bfloat16: the upper 16 bits of an `f32`.
    Bf16,
}

/// An element type name that is not one of [`Dtype::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dtype `{0}`; expected one of u8, i8, u16, i16, u32, i32, f32, bf16")]
pub struct UnknownDtype(pub String);

impl Dtype {
    /// Every dtype, in a fixed order.
    pub const ALL: [Dtype; 8] =
        [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16, Dtype::U32, Dtype::I32, Dtype::F32, Dtype::Bf16];

    /// Size of one element in bytes.
    pub const fn size_bytes(self) -> u32 {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::U16 | Dtype::I16 | Dtype::Bf16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
        }
    }

    /// The lower-case name used in text forms.
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "u8",
            Dtype::I8 => "i8",
            Dtype::U16 => "u16",
            Dtype::I16 => "i16",
            Dtype::U32 => "u32",
            Dtype::I32 => "i32",
            Dtype::F32 => "f32",
            Dtype::Bf16 => "bf16",
        }
    }

    /// Whether the type is a floating-point type.
    pub const fn is_float(self) -> bool {
        matches!(self, Dtype::F32 | Dtype::Bf16)
    }

    /// Whether the type is a signed integer.
    pub const fn is_signed_int(self) -> bool {
        matches!(self, Dtype::I8 | Dtype::I16 | Dtype::I32)
    }

    /// Whether a value of `self` converts to `to` without loss (the widening moves allow).
    pub fn widens_to(self, to: Dtype) -> bool {
        matches!((self, to), (Dtype::Bf16, Dtype::F32))
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dtype {
    type Err = UnknownDtype;

    fn from_str(s: &str) -> Result<Self, UnknownDtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == s).ok_or_else(|| UnknownDtype(s.to_string()))
    }
}

/// The dtypes of a contraction's inputs and output (`--dtype`): one name for all three (`f32`,
/// `u32`), `bf16` (bf16 inputs accumulating into f32), or a quantized combination named as the
/// libraries name it, inputs then output, `s` for signed:
///
/// ```text
/// name       lhs  rhs  out
/// u8s8s32    u8   i8   i32     (oneDNN's u8s8s32, MKL's cblas_gemm_s8u8s32 with its operands swapped)
/// s8s8s32    i8   i8   i32
/// ```
///
/// Other operators (moves, fills, softmax) take the one dtype of a plain name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OperandDtypes {
    /// The left input's (a matmul's `lhs`, a convolution's image).
    pub lhs: Dtype,
    /// The right input's (a matmul's `rhs`, a convolution's filters).
    pub rhs: Dtype,
    /// The output's (and the accumulator's).
    pub out: Dtype,
}

/// A `--dtype` that is neither a dtype nor a combination of [`OperandDtypes::COMBINATIONS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown dtype `{0}`; expected one of u8, i8, u16, i16, u32, i32, f32, bf16, or u8s8s32 or s8s8s32 \
     (8-bit inputs, 32-bit output) for a matmul or convolution"
)]
pub struct UnknownOperandDtypes(pub String);

impl OperandDtypes {
    /// The quantized combinations and their names.
    pub const COMBINATIONS: [(&'static str, OperandDtypes); 2] = [
        ("u8s8s32", OperandDtypes { lhs: Dtype::U8, rhs: Dtype::I8, out: Dtype::I32 }),
        ("s8s8s32", OperandDtypes { lhs: Dtype::I8, rhs: Dtype::I8, out: Dtype::I32 }),
    ];

    /// Inputs of `dtype`, accumulated in `dtype` (in f32 for bf16).
    pub fn single(dtype: Dtype) -> OperandDtypes {
        let out = if dtype == Dtype::Bf16 { Dtype::F32 } else { dtype };
        OperandDtypes { lhs: dtype, rhs: dtype, out }
    }

    /// The one dtype of every operand, if the inputs and the output share it (bf16 counts as one:
    /// its output is f32 because it accumulates, and a move or fill of bf16 is bf16 throughout).
    pub fn uniform(self) -> Option<Dtype> {
        (self == OperandDtypes::single(self.lhs)).then_some(self.lhs)
    }

    /// The name `--dtype` takes for these dtypes.
    pub fn name(self) -> String {
        match OperandDtypes::COMBINATIONS.iter().find(|(_, d)| *d == self) {
            Some((name, _)) => (*name).to_string(),
            None if self.uniform().is_some() => self.lhs.name().to_string(),
            None => format!("{}, {} and {}", self.lhs, self.rhs, self.out),
        }
    }
}

impl fmt::Display for OperandDtypes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for OperandDtypes {
    type Err = UnknownOperandDtypes;

    fn from_str(s: &str) -> Result<Self, UnknownOperandDtypes> {
        if let Some((_, dtypes)) = OperandDtypes::COMBINATIONS.iter().find(|(name, _)| *name == s) {
            return Ok(*dtypes);
        }
        s.parse::<Dtype>().map(OperandDtypes::single).map_err(|_| UnknownOperandDtypes(s.to_string()))
    }
}

/// The largest reduction length whose sum of products of `lhs` and `rhs` values, plus any value
/// of magnitude up to `addend` (a bias; 0 for none), is exact in the integer `out`, whatever the
/// values (`None` when the output is a float, or when no product's sum needs a bound: the dtypes
/// wrap by design, as u32 and i32 inputs do):
///
/// ```text
/// limit = floor((2^31 - 1 - addend) / max |a b|)    over a in lhs's range, b in rhs's range
/// u8 x i8 -> i32:  max |a b| = 255 * 128 = 32640   limit 65793
/// i8 x i8 -> i32:  max |a b| = 128 * 128 = 16384   limit 131071
/// with a bias up to 2^30:                          limits 32896 and 65535
/// ```
///
/// The positive bound decides: a sum of `k` products lies in `[k min, k max]`, and `-2^31` is one
/// further from zero than `2^31 - 1`.
pub fn exact_reduction_limit(lhs: Dtype, rhs: Dtype, out: Dtype, addend: u64) -> Option<u64> {
    let magnitude = |d: Dtype| match d {
        Dtype::U8 => Some(255u64),
        Dtype::I8 => Some(128),
        _ => None,
    };
    if out != Dtype::I32 {
        return None;
    }
    let largest = magnitude(lhs)? * magnitude(rhs)?;
    Some(u64::from(i32::MAX as u32).saturating_sub(addend) / largest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Dtype::ALL {
            assert_eq!(d.name().parse::<Dtype>(), Ok(d));
        }
        assert_eq!(
            "f64".parse::<Dtype>().unwrap_err().to_string(),
            "unknown dtype `f64`; expected one of u8, i8, u16, i16, u32, i32, f32, bf16"
        );
    }

    #[test]
    fn operand_dtypes_parse_and_print_back() {
        for name in ["f32", "bf16", "u32", "i8", "u8s8s32", "s8s8s32"] {
            let dtypes: OperandDtypes = name.parse().unwrap();
            assert_eq!(dtypes.name(), name);
        }
        assert_eq!(
            "u8s8s32".parse::<OperandDtypes>(),
            Ok(OperandDtypes { lhs: Dtype::U8, rhs: Dtype::I8, out: Dtype::I32 })
        );
        assert_eq!("bf16".parse::<OperandDtypes>().unwrap().out, Dtype::F32);
        let err = "u8u8s32".parse::<OperandDtypes>().unwrap_err().to_string();
        assert!(err.contains("u8s8s32 or s8s8s32"), "{err}");
    }

    /// The limit is the largest `k` whose worst sums stay in i32, checked at `k` and `k + 1`.
    #[test]
    fn exact_reduction_limits_are_tight() {
        for (lhs, rhs, min, max) in
            [(Dtype::U8, Dtype::I8, 255 * -128, 255 * 127), (Dtype::I8, Dtype::I8, -128 * 127, 128 * 128)]
        {
            for addend in [0i64, 1 << 30] {
                let k = exact_reduction_limit(lhs, rhs, Dtype::I32, addend as u64).unwrap() as i64;
                let fits = |k: i64| {
                    k * max + addend <= i64::from(i32::MAX) && k * min - addend >= i64::from(i32::MIN)
                };
                assert!(fits(k) && !fits(k + 1), "{lhs} x {rhs} + {addend}: {k}");
            }
        }
        assert_eq!(exact_reduction_limit(Dtype::U8, Dtype::I8, Dtype::I32, 0), Some(65793));
        assert_eq!(exact_reduction_limit(Dtype::U8, Dtype::I8, Dtype::I32, 1 << 30), Some(32896));
        assert_eq!(exact_reduction_limit(Dtype::I8, Dtype::I8, Dtype::I32, 1 << 30), Some(65535));
        assert_eq!(exact_reduction_limit(Dtype::F32, Dtype::F32, Dtype::F32, 0), None);
        assert_eq!(exact_reduction_limit(Dtype::I32, Dtype::I32, Dtype::I32, 0), None);
    }
}
