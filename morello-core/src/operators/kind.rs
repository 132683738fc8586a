//! [`PrimitiveKind`], the computation a spec describes, as stored: one variant per operator (in the
//! operators' ordinal order), carrying the parameters that distinguish its forms, and the
//! parameter types (a fill's [`FillValue`], an epilogue's [`Activation`]) and operand
//! [`Direction`]s.
//!
//! What a kind means (its names, operands, dims, semantics) is its operator's definition
//! (`super::OperatorDefinition`), asked through the methods of `super`. This file is only the data
//! a table key holds: its serde form is the key's, so variants keep their order and fields.

use serde::{Deserialize, Serialize};

use super::ConvGeometry;

/// The value a fill writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum FillValue {
    /// 0.
    Zero,
    /// Negative infinity (floats) or the minimum value (integers).
    NegInf,
    /// The minimum value of the dtype.
    Min,
}

/// The function an epilogue applies after adding the bias.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Activation {
    /// None: the sum itself.
    Identity,
    /// `max(x, 0)`.
    Relu,
    /// GELU, tanh form: `x / 2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`, which equals
    /// `x sigmoid(2 sqrt(2 / pi) (x + 0.044715 x^3))`.
    Gelu,
}

impl Activation {
    /// Every activation.
    pub const ALL: [Activation; 3] = [Activation::Identity, Activation::Relu, Activation::Gelu];

    /// The suffix of kind names (`Relu`, `Gelu`, empty for the identity).
    pub const fn suffix(self) -> &'static str {
        match self {
            Activation::Identity => "",
            Activation::Relu => "Relu",
            Activation::Gelu => "Gelu",
        }
    }

    /// The name in lowercase (`relu`, `gelu`; empty for the identity), as epilogues are written.
    pub const fn name(self) -> &'static str {
        match self {
            Activation::Identity => "",
            Activation::Relu => "relu",
            Activation::Gelu => "gelu",
        }
    }

    /// The exact function (in f64), for references.
    pub fn apply(self, x: f64) -> f64 {
        match self {
            Activation::Identity => x,
            Activation::Relu => x.max(0.0),
            Activation::Gelu => {
                let y = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
                0.5 * x * (1.0 + y.tanh())
            }
        }
    }

    /// A bound on the slope of the function, by which errors in its argument grow.
    pub const fn slope_bound(self) -> f64 {
        match self {
            Activation::Identity | Activation::Relu => 1.0,
            Activation::Gelu => 1.13,
        }
    }
}

/// What a requantizing epilogue does to the i32 sum besides requantizing it: nothing, add a
/// per-column i32 bias, or add the bias and apply ReLU to the scaled value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RequantEpilogue {
    /// `requantize(acc)`.
    Plain,
    /// `requantize(acc + bias)`, the sum in i32.
    Bias,
    /// `requantize(acc + bias)` with `max(., 0)` applied after the scale.
    BiasRelu,
}

impl RequantEpilogue {
    /// Whether a per-column i32 bias is added to the sum (an operand of its own).
    pub const fn has_bias(self) -> bool {
        matches!(self, RequantEpilogue::Bias | RequantEpilogue::BiasRelu)
    }

    /// Whether ReLU follows the scale.
    pub const fn relu(self) -> bool {
        matches!(self, RequantEpilogue::BiasRelu)
    }

    /// The epilogue of a requantizing kind (`MatmulRequant`, `Requant`); `Plain` for any other.
    pub const fn of(kind: PrimitiveKind) -> RequantEpilogue {
        match kind {
            PrimitiveKind::MatmulRequant { epilogue } | PrimitiveKind::Requant { epilogue } => epilogue,
            _ => RequantEpilogue::Plain,
        }
    }
}

/// Parses a requantizing epilogue: `requant` or `requant-u8` (a u8 output), `requant-i8` or
/// `requant-s8` (an i8 output), each alone or after `bias,` or `bias,relu,`; `None` for text that
/// does not end in one of those names.
///
/// # Errors
/// Inside the `Some`: a message saying what may come before the requantization.
pub fn parse_requant(text: &str) -> Option<Result<(RequantEpilogue, crate::dtype::Dtype), String>> {
    let parts: Vec<String> = text.split(',').map(|p| p.trim().to_ascii_lowercase()).collect();
    let (last, before) = parts.split_last()?;
    let out = match last.as_str() {
        "requant" | "requant-u8" => crate::dtype::Dtype::U8,
        "requant-i8" | "requant-s8" => crate::dtype::Dtype::I8,
        _ => return None,
    };
    let epilogue = match before.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] => RequantEpilogue::Plain,
        ["bias"] => RequantEpilogue::Bias,
        ["bias", "relu"] => RequantEpilogue::BiasRelu,
        _ => {
            return Some(Err(format!(
                "invalid epilogue `{text}`: requantization takes requant, bias,requant or bias,relu,requant \
                 (each with -i8 for an i8 output)"
            )));
        }
    };
    Some(Ok((epilogue, out)))
}

/// Parses an epilogue: `bias`, `bias,relu` or `bias,gelu` (`gelu-tanh` too).
///
/// # Errors
/// A message saying what is accepted.
pub fn parse_epilogue(text: &str) -> Result<Activation, String> {
    let parts: Vec<String> = text.split(',').map(|p| p.trim().to_ascii_lowercase()).collect();
    let expected =
        || format!("invalid epilogue `{text}`: expected bias, bias,relu, bias,gelu, requant or requant-i8");
    match parts.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["bias"] => Ok(Activation::Identity),
        ["bias", "relu"] => Ok(Activation::Relu),
        ["bias", "gelu" | "gelu-tanh"] => Ok(Activation::Gelu),
        _ => Err(expected()),
    }
}

/// The computation a spec describes: its operator (the variant) and the parameters that tell the
/// operator's forms apart. Each variant's operator file (`src/operators/<name>.rs`) defines it.
///
/// # Invariants
/// Variants are declared in their operators' ordinal order (stored tables know a kind by its
/// variant number); a variant's fields change only with a `MODEL_VERSION` bump, which refuses
/// the tables that knew the old ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PrimitiveKind {
    /// Batched matrix multiplication `out = lhs * rhs` (or `out += lhs * rhs` when accumulating).
    Matmul {
        /// Whether the output is accumulated into instead of overwritten.
        accum: bool,
    },
    /// `out = act(lhs * rhs + bias)`: a matmul with a per-column bias and an activation (an
    /// epilogue), which the search may apply while the output is in registers or as a pass after.
    MatmulBias {
        /// The activation.
        activation: Activation,
    },
    /// `out = act(out + bias)` with the bias along the last dim: the epilogue alone.
    AddBias {
        /// The activation.
        activation: Activation,
    },
    /// Softmax along the last dim of a 2-D tensor, numerically stable (the row maximum
    /// subtracted before `exp`).
    Softmax,
    /// The maximum of each row (`MaxAccum`: the maximum of it and the output's old value).
    Max {
        /// Whether the output is combined with its old value instead of overwritten.
        accum: bool,
    },
    /// `y = exp(x - max)` and `sum = Σ_row y` (accumulated into with `accum`): softmax's middle
    /// pass. It writes two operands; the sum is its output (last).
    SoftmaxExp {
        /// Whether the sum is accumulated into instead of overwritten.
        accum: bool,
    },
    /// `y = y / sum` per row: softmax's last pass.
    SoftmaxScale,
    /// Copy `source` into `destination` (levels, layouts and dtypes may differ; dtypes only widen).
    Move,
    /// Set every element of the output to a value.
    Fill {
        /// The value.
        value: FillValue,
    },
    /// 2-D convolution of an NCHW image with FCHW filters (logical order; any layout), with
    /// strides, dilations and zero padding.
    Conv {
        /// Whether the output is accumulated into instead of overwritten.
        accum: bool,
        /// Strides, dilations and padding.
        geometry: ConvGeometry,
    },
    /// `out = requant(lhs * rhs [+ bias])`: an int8 matmul whose i32 sums (plus a per-column i32
    /// bias) are scaled per column, optionally passed through ReLU, rounded, offset by a
    /// per-column zero point and saturated to u8 or i8 (a requantizing epilogue).
    MatmulRequant {
        /// The bias and activation before the requantization.
        epilogue: RequantEpilogue,
    },
    /// `out = requant(acc [+ bias])` with the bias, scale and zero point along the last dim: the
    /// requantizing epilogue alone.
    Requant {
        /// The bias and activation before the requantization.
        epilogue: RequantEpilogue,
    },
    /// `out[n] = -128 Σ_k rhs[b, k, n]`: what shifting an i8 `lhs` into u8 (`+128`) adds to each
    /// column of an s8s8s32 matmul's sums, to be taken away.
    ShiftCorrection,
    /// `out[b, m, n] = correction[n] + Σ_k lhs[b, m, k] rhs[b, k, n]`: the u8 x i8 matmul of a
    /// shifted s8s8s32 matmul with its column correction added.
    MatmulCorrected,
}

impl PrimitiveKind {
    /// Every form, in a fixed order (convolutions with the unit geometry): the forms of each
    /// operator's definition, in the order `morello db stats` lists them.
    pub const ALL: [PrimitiveKind; 28] = [
        PrimitiveKind::Matmul { accum: false },
        PrimitiveKind::Matmul { accum: true },
        PrimitiveKind::Move,
        PrimitiveKind::Fill { value: FillValue::Zero },
        PrimitiveKind::Fill { value: FillValue::NegInf },
        PrimitiveKind::Fill { value: FillValue::Min },
        PrimitiveKind::Conv { accum: false, geometry: ConvGeometry::UNIT },
        PrimitiveKind::Conv { accum: true, geometry: ConvGeometry::UNIT },
        PrimitiveKind::MatmulBias { activation: Activation::Identity },
        PrimitiveKind::MatmulBias { activation: Activation::Relu },
        PrimitiveKind::MatmulBias { activation: Activation::Gelu },
        PrimitiveKind::AddBias { activation: Activation::Identity },
        PrimitiveKind::AddBias { activation: Activation::Relu },
        PrimitiveKind::AddBias { activation: Activation::Gelu },
        PrimitiveKind::Softmax,
        PrimitiveKind::Max { accum: false },
        PrimitiveKind::Max { accum: true },
        PrimitiveKind::SoftmaxExp { accum: false },
        PrimitiveKind::SoftmaxExp { accum: true },
        PrimitiveKind::SoftmaxScale,
        PrimitiveKind::MatmulRequant { epilogue: RequantEpilogue::Plain },
        PrimitiveKind::MatmulRequant { epilogue: RequantEpilogue::Bias },
        PrimitiveKind::MatmulRequant { epilogue: RequantEpilogue::BiasRelu },
        PrimitiveKind::Requant { epilogue: RequantEpilogue::Plain },
        PrimitiveKind::Requant { epilogue: RequantEpilogue::Bias },
        PrimitiveKind::Requant { epilogue: RequantEpilogue::BiasRelu },
        PrimitiveKind::ShiftCorrection,
        PrimitiveKind::MatmulCorrected,
    ];
}

/// Whether an operand is read, written, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Read only.
    In,
    /// Written only.
    Out,
    /// Read and written (accumulated into).
    InOut,
}

impl Direction {
    /// Whether the operand's old contents are read.
    pub const fn reads(self) -> bool {
        matches!(self, Direction::In | Direction::InOut)
    }

    /// Whether the operand is written.
    pub const fn writes(self) -> bool {
        matches!(self, Direction::Out | Direction::InOut)
    }
}

#[cfg(test)]
mod tests {
    use super::{RequantEpilogue, parse_requant};
    use crate::dtype::Dtype;

    /// Requantizing epilogues name the steps before the requantization and the output; other
    /// steps before it are refused with the accepted forms, and other text is not one.
    #[test]
    fn requantizing_epilogues_parse_with_their_bias_and_relu() {
        let parsed = |text: &str| parse_requant(text).map(|r| r.map_err(|e| e.to_string()));
        assert_eq!(parsed("requant"), Some(Ok((RequantEpilogue::Plain, Dtype::U8))));
        assert_eq!(parsed("bias,requant-i8"), Some(Ok((RequantEpilogue::Bias, Dtype::I8))));
        assert_eq!(parsed(" Bias, ReLU, requant-u8"), Some(Ok((RequantEpilogue::BiasRelu, Dtype::U8))));
        let Some(Err(message)) = parsed("bias,gelu,requant") else { panic!("gelu is refused") };
        assert!(message.contains("bias,relu,requant"), "{message}");
        assert_eq!(parsed("bias,relu"), None);
    }
}
