//! Opcodes and their attributes, for the supported HLO subset.
//!
//! Dimension numbers are `usize` (a reader rejects negative ones while parsing); sizes, offsets
//! and strides are `i64` because XLA allows negative padding.

use std::sync::Arc;

use super::{ComputationId, Literal};

/// The comparison of a `compare` instruction (`direction=LT`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComparisonDirection {
    /// `EQ`.
    Eq,
    /// `NE`.
    Ne,
    /// `LT`.
    Lt,
    /// `LE`.
    Le,
    /// `GT`.
    Gt,
    /// `GE`.
    Ge,
}

impl ComparisonDirection {
    /// The direction named by XLA's text (`EQ`, `NE`, `LT`, `LE`, `GT`, `GE`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "EQ" => Self::Eq,
            "NE" => Self::Ne,
            "LT" => Self::Lt,
            "LE" => Self::Le,
            "GT" => Self::Gt,
            "GE" => Self::Ge,
            _ => return None,
        })
    }
}

/// An elementwise opcode: every output element reads the same index of every operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementwiseOp {
    /// `add(a, b)`.
    Add,
    /// `subtract(a, b)`.
    Subtract,
    /// `multiply(a, b)`.
    Multiply,
    /// `divide(a, b)`.
    Divide,
    /// `maximum(a, b)`.
    Maximum,
    /// `minimum(a, b)`.
    Minimum,
    /// `exponential(a)`.
    Exponential,
    /// `log(a)`.
    Log,
    /// `negate(a)`.
    Negate,
    /// `tanh(a)`.
    Tanh,
    /// `convert(a)` (the element type is in the result shape, which is not modelled).
    Convert,
    /// `select(pred, on_true, on_false)`; `pred` may be a scalar.
    Select,
    /// `abs(a)`.
    Abs,
    /// `sign(a)`.
    Sign,
    /// `floor(a)`.
    Floor,
    /// `ceil(a)`.
    Ceil,
    /// `round-nearest-even(a)`.
    RoundNearestEven,
    /// `round-nearest-afz(a)`.
    RoundNearestAfz,
    /// `sqrt(a)`.
    Sqrt,
    /// `rsqrt(a)`.
    Rsqrt,
    /// `cbrt(a)`.
    Cbrt,
    /// `logistic(a)`.
    Logistic,
    /// `sine(a)`.
    Sine,
    /// `cosine(a)`.
    Cosine,
    /// `tan(a)`.
    Tan,
    /// `erf(a)`.
    Erf,
    /// `exponential-minus-one(a)` (expm1).
    ExponentialMinusOne,
    /// `log-plus-one(a)` (log1p).
    LogPlusOne,
    /// `is-finite(a)`.
    IsFinite,
    /// `not(a)`.
    Not,
    /// `popcnt(a)`.
    Popcnt,
    /// `count-leading-zeros(a)`.
    CountLeadingZeros,
    /// `bitcast-convert(a)` between types of the same width (other widths change the shape and have no map here).
    BitcastConvert,
    /// `reduce-precision(a), exponent_bits=.., mantissa_bits=..`.
    ReducePrecision,
    /// `copy(a)`.
    Copy,
    /// `real(a)`.
    Real,
    /// `imag(a)`.
    Imag,
    /// `power(a, b)`.
    Power,
    /// `remainder(a, b)`.
    Remainder,
    /// `and(a, b)`.
    And,
    /// `or(a, b)`.
    Or,
    /// `xor(a, b)`.
    Xor,
    /// `atan2(a, b)`.
    Atan2,
    /// `shift-left(a, b)`.
    ShiftLeft,
    /// `shift-right-arithmetic(a, b)`.
    ShiftRightArithmetic,
    /// `shift-right-logical(a, b)`.
    ShiftRightLogical,
    /// `complex(re, im)`.
    Complex,
    /// `stochastic-convert(a, random)`.
    StochasticConvert,
    /// `clamp(min, a, max)`; `min` and `max` may be scalars.
    Clamp,

    /// `compare(a, b), direction=...`.
    Compare(ComparisonDirection),
}

impl ElementwiseOp {
    /// The opcode for XLA's opcode text, except `compare`, whose direction is an attribute.
    pub fn from_opcode(opcode: &str) -> Option<Self> {
        Some(match opcode {
            "add" => Self::Add,
            "subtract" => Self::Subtract,
            "multiply" => Self::Multiply,
            "divide" => Self::Divide,
            "maximum" => Self::Maximum,
            "minimum" => Self::Minimum,
            "exponential" => Self::Exponential,
            "log" => Self::Log,
            "negate" => Self::Negate,
            "tanh" => Self::Tanh,
            "convert" => Self::Convert,
            "select" => Self::Select,
            "abs" => Self::Abs,
            "sign" => Self::Sign,
            "floor" => Self::Floor,
            "ceil" => Self::Ceil,
            "round-nearest-even" => Self::RoundNearestEven,
            "round-nearest-afz" => Self::RoundNearestAfz,
            "sqrt" => Self::Sqrt,
            "rsqrt" => Self::Rsqrt,
            "cbrt" => Self::Cbrt,
            "logistic" => Self::Logistic,
            "sine" => Self::Sine,
            "cosine" => Self::Cosine,
            "tan" => Self::Tan,
            "erf" => Self::Erf,
            "exponential-minus-one" => Self::ExponentialMinusOne,
            "log-plus-one" => Self::LogPlusOne,
            "is-finite" => Self::IsFinite,
            "not" => Self::Not,
            "popcnt" => Self::Popcnt,
            "count-leading-zeros" => Self::CountLeadingZeros,
            "bitcast-convert" => Self::BitcastConvert,
            "reduce-precision" => Self::ReducePrecision,
            "copy" => Self::Copy,
            "real" => Self::Real,
            "imag" => Self::Imag,
            "power" => Self::Power,
            "remainder" => Self::Remainder,
            "and" => Self::And,
            "or" => Self::Or,
            "xor" => Self::Xor,
            "atan2" => Self::Atan2,
            "shift-left" => Self::ShiftLeft,
            "shift-right-arithmetic" => Self::ShiftRightArithmetic,
            "shift-right-logical" => Self::ShiftRightLogical,
            "complex" => Self::Complex,
            "stochastic-convert" => Self::StochasticConvert,
            "clamp" => Self::Clamp,
            _ => return None,
        })
    }

    /// XLA's opcode text.
    pub fn opcode(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Subtract => "subtract",
            Self::Multiply => "multiply",
            Self::Divide => "divide",
            Self::Maximum => "maximum",
            Self::Minimum => "minimum",
            Self::Exponential => "exponential",
            Self::Log => "log",
            Self::Negate => "negate",
            Self::Tanh => "tanh",
            Self::Convert => "convert",
            Self::Select => "select",
            Self::Abs => "abs",
            Self::Sign => "sign",
            Self::Floor => "floor",
            Self::Ceil => "ceil",
            Self::RoundNearestEven => "round-nearest-even",
            Self::RoundNearestAfz => "round-nearest-afz",
            Self::Sqrt => "sqrt",
            Self::Rsqrt => "rsqrt",
            Self::Cbrt => "cbrt",
            Self::Logistic => "logistic",
            Self::Sine => "sine",
            Self::Cosine => "cosine",
            Self::Tan => "tan",
            Self::Erf => "erf",
            Self::ExponentialMinusOne => "exponential-minus-one",
            Self::LogPlusOne => "log-plus-one",
            Self::IsFinite => "is-finite",
            Self::Not => "not",
            Self::Popcnt => "popcnt",
            Self::CountLeadingZeros => "count-leading-zeros",
            Self::BitcastConvert => "bitcast-convert",
            Self::ReducePrecision => "reduce-precision",
            Self::Copy => "copy",
            Self::Real => "real",
            Self::Imag => "imag",
            Self::Power => "power",
            Self::Remainder => "remainder",
            Self::And => "and",
            Self::Or => "or",
            Self::Xor => "xor",
            Self::Atan2 => "atan2",
            Self::ShiftLeft => "shift-left",
            Self::ShiftRightArithmetic => "shift-right-arithmetic",
            Self::ShiftRightLogical => "shift-right-logical",
            Self::Complex => "complex",
            Self::StochasticConvert => "stochastic-convert",
            Self::Clamp => "clamp",
            Self::Compare(_) => "compare",
        }
    }

    /// The number of operands.
    pub fn arity(self) -> usize {
        match self {
            Self::Exponential
            | Self::Log
            | Self::Negate
            | Self::Tanh
            | Self::Convert
            | Self::Abs
            | Self::Sign
            | Self::Floor
            | Self::Ceil
            | Self::RoundNearestEven
            | Self::RoundNearestAfz
            | Self::Sqrt
            | Self::Rsqrt
            | Self::Cbrt
            | Self::Logistic
            | Self::Sine
            | Self::Cosine
            | Self::Tan
            | Self::Erf
            | Self::ExponentialMinusOne
            | Self::LogPlusOne
            | Self::IsFinite
            | Self::Not
            | Self::Popcnt
            | Self::CountLeadingZeros
            | Self::BitcastConvert
            | Self::ReducePrecision
            | Self::Copy
            | Self::Real
            | Self::Imag => 1,
            Self::Add
            | Self::Subtract
            | Self::Multiply
            | Self::Divide
            | Self::Maximum
            | Self::Minimum
            | Self::Compare(_)
            | Self::Power
            | Self::Remainder
            | Self::And
            | Self::Or
            | Self::Xor
            | Self::Atan2
            | Self::ShiftLeft
            | Self::ShiftRightArithmetic
            | Self::ShiftRightLogical
            | Self::Complex
            | Self::StochasticConvert => 2,
            Self::Select | Self::Clamp => 3,
        }
    }

    /// Whether operand `position` may be a scalar that every output element reads (the
    /// predicate of `select`, the bounds of `clamp`).
    pub fn allows_scalar_operand(self, position: usize) -> bool {
        match self {
            Self::Select => position == 0,
            Self::Clamp => position != 1,
            _ => false,
        }
    }
}

/// One dimension of a `slice`: `[start:limit:stride]`, `limit` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SliceDim {
    /// The first index read.
    pub start: i64,
    /// One past the last index that may be read.
    pub limit: i64,
    /// The step between read indices (at least 1).
    pub stride: i64,
}

/// One dimension of a `pad`: `low_high_interior`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PadDim {
    /// Elements added before the first element (negative crops).
    pub low: i64,
    /// Elements added after the last element (negative crops).
    pub high: i64,
    /// Elements added between two neighbours (at least 0).
    pub interior: i64,
}

/// One dimension of a `reduce-window`'s window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WindowDim {
    /// The window size (at least 1).
    pub size: i64,
    /// The distance between neighbouring windows (at least 1).
    pub stride: i64,
    /// Padding before the base area (may be negative).
    pub pad_low: i64,
    /// Padding after the base area (may be negative).
    pub pad_high: i64,
    /// The dilation of the window (`rhs_dilate`, at least 1).
    pub window_dilation: i64,
    /// The dilation of the base area (`lhs_dilate`, at least 1).
    pub base_dilation: i64,
    /// Whether a convolution reads its kernel reversed along this dimension (`rhs_reversal`):
    /// the same elements, in the other order, so no map depends on it.
    pub reversal: bool,
}

impl WindowDim {
    /// A window dimension of this size and stride, without padding or dilation.
    pub fn new(size: i64, stride: i64) -> Self {
        WindowDim {
            size,
            stride,
            pad_low: 0,
            pad_high: 0,
            window_dilation: 1,
            base_dilation: 1,
            reversal: false,
        }
    }
}

/// The dimension numbers of a `dot`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DotDimensions {
    /// `lhs_batch_dims`.
    pub lhs_batch: Vec<usize>,
    /// `rhs_batch_dims`, paired with `lhs_batch` in order.
    pub rhs_batch: Vec<usize>,
    /// `lhs_contracting_dims`.
    pub lhs_contracting: Vec<usize>,
    /// `rhs_contracting_dims`, paired with `lhs_contracting` in order.
    pub rhs_contracting: Vec<usize>,
}

/// The dimension numbers of a `convolution` (`dim_labels=b01f_01io->b01f`): where the batch,
/// feature and spatial dimensions of each shape are.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ConvolutionDimensions {
    /// The lhs (input) batch dimension (`b`).
    pub lhs_batch: usize,
    /// The lhs feature dimension (`f`).
    pub lhs_feature: usize,
    /// The lhs spatial dimensions, in window order (`0`, `1`, ...).
    pub lhs_spatial: Vec<usize>,
    /// The rhs (kernel) input feature dimension (`i`).
    pub rhs_input_feature: usize,
    /// The rhs output feature dimension (`o`).
    pub rhs_output_feature: usize,
    /// The rhs spatial dimensions, in window order.
    pub rhs_spatial: Vec<usize>,
    /// The output batch dimension.
    pub output_batch: usize,
    /// The output feature dimension.
    pub output_feature: usize,
    /// The output spatial dimensions, in window order.
    pub output_spatial: Vec<usize>,
}

/// The dimension numbers of a `gather` (`offset_dims={1,2}, collapsed_slice_dims={},
/// start_index_map={0,1}, index_vector_dim=1, slice_sizes={7,8,4}`).
///
/// Output dimensions not in `offset_dims` are the *batch* dimensions: they index the start
/// indices (every dimension of `start_indices` but `index_vector_dim`, in order). The operand
/// dimensions neither collapsed nor batching are the *window* dimensions, which `offset_dims`
/// index in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct GatherDimensions {
    /// The output dimensions that index within a slice, ascending.
    pub offset_dims: Vec<usize>,
    /// The operand dimensions a slice of size 1 drops from the output.
    pub collapsed_slice_dims: Vec<usize>,
    /// The operand dimension that each component of a start index vector offsets.
    pub start_index_map: Vec<usize>,
    /// The dimension of `start_indices` that holds the index vectors (its rank: vectors of 1).
    pub index_vector_dim: usize,
    /// The size of the slice taken in each operand dimension.
    pub slice_sizes: Vec<i64>,
    /// Operand dimensions indexed by the batch index itself (with `start_indices_batching_dims`).
    pub operand_batching_dims: Vec<usize>,
    /// The `start_indices` dimensions paired, in order, with `operand_batching_dims`.
    pub start_indices_batching_dims: Vec<usize>,
}

/// An opcode with its attributes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HloOp {
    /// `parameter(number)`.
    Parameter {
        /// The parameter number.
        number: usize,
    },
    /// `constant(...)`: the literal, and the value of an integer scalar (`s32[] constant(42)`),
    /// which the maps of a dynamic-slice use as XLA does.
    Constant {
        /// The value of an integer scalar constant; `None` for every other constant.
        scalar: Option<i64>,
        /// The values; `None` when the text has none to read (an elided `{...}`, a tuple or
        /// complex constant) or the module was built without them.
        literal: Option<Arc<Literal>>,
    },
    /// `iota(), iota_dimension=dimension`.
    Iota {
        /// The dimension along which the values count up.
        dimension: usize,
    },
    /// An elementwise opcode.
    Elementwise(ElementwiseOp),
    /// `broadcast(x), dimensions={...}`: operand dim `i` becomes result dim `dimensions[i]`.
    Broadcast {
        /// The result dimension of each operand dimension.
        dimensions: Vec<usize>,
    },
    /// `transpose(x), dimensions={...}`: result dim `i` is operand dim `dimensions[i]`.
    Transpose {
        /// The permutation.
        dimensions: Vec<usize>,
    },
    /// `reverse(x), dimensions={...}`.
    Reverse {
        /// The reversed dimensions.
        dimensions: Vec<usize>,
    },
    /// `reduce(inputs..., inits...), dimensions={...}, to_apply=c` (variadic: `n` inputs then
    /// `n` scalar inits; a tuple result when `n > 1`).
    Reduce {
        /// The reduced (removed) dimensions of the inputs.
        dimensions: Vec<usize>,
        /// The reducer.
        to_apply: ComputationId,
    },
    /// `slice(x), slice={[start:limit:stride], ...}`.
    Slice {
        /// One entry per dimension.
        dims: Vec<SliceDim>,
    },
    /// `reshape(x)`: the same elements in row-major order, another shape.
    Reshape,
    /// `bitcast(x)`: the same buffer read with another shape and layout.
    Bitcast,
    /// `concatenate(xs...), dimensions={dimension}`.
    Concatenate {
        /// The dimension along which operands are joined.
        dimension: usize,
    },
    /// `dot(lhs, rhs), lhs_batch_dims=..., ...`.
    Dot(DotDimensions),
    /// `pad(x, value), padding=l_h_i x ...`.
    Pad {
        /// One entry per dimension.
        dims: Vec<PadDim>,
    },
    /// `reduce-window(inputs..., inits...), window={...}, to_apply=c` (variadic like reduce).
    ReduceWindow {
        /// One entry per dimension.
        window: Vec<WindowDim>,
        /// The reducer.
        to_apply: ComputationId,
    },
    /// `fusion(xs...), calls=c`: operand `p` is the callee's parameter `p`.
    Fusion {
        /// The fused computation.
        calls: ComputationId,
    },
    /// `call(xs...), to_apply=c`: operand `p` is the callee's parameter `p`; the result is the
    /// callee's root. It has no indexing map (as in XLA), but evaluates and compiles.
    Call {
        /// The called computation.
        to_apply: ComputationId,
    },
    /// `tuple(xs...)`.
    Tuple,
    /// `get-tuple-element(t), index=i`.
    GetTupleElement {
        /// The tuple element.
        index: usize,
    },
    /// `map(xs...), dimensions={...}, to_apply=c`: elementwise with a computation.
    Map {
        /// The computation applied to each element.
        to_apply: ComputationId,
    },
    /// `dynamic-slice(x, offsets...), dynamic_slice_sizes={...}`: a window of `x` at run-time
    /// offsets (one scalar per dimension), clamped so that the window fits.
    DynamicSlice {
        /// The size of the window in each dimension.
        sizes: Vec<i64>,
    },
    /// `dynamic-update-slice(x, update, offsets...)`: `x` with `update` written at run-time
    /// offsets (one scalar per dimension), clamped so that the update fits.
    DynamicUpdateSlice,
    /// `convolution(lhs, rhs), window={...}, dim_labels=..., feature_group_count=g,
    /// batch_group_count=h`.
    Convolution {
        /// One entry per spatial dimension (padding, strides, lhs and rhs dilation).
        window: Vec<WindowDim>,
        /// Where each shape's batch, feature and spatial dimensions are.
        dims: ConvolutionDimensions,
        /// Input features are split into this many groups, each with its own output features.
        feature_group_count: i64,
        /// The input batch is split into this many groups, each with its own output features.
        batch_group_count: i64,
    },
    /// `gather(operand, start_indices), offset_dims=..., ...`: slices of `operand` at run-time
    /// start indices (clamped so that each slice fits).
    Gather(GatherDimensions),
    /// An XLA opcode this project has no indexing map for (`scatter`, `custom-call`, ...): read
    /// and kept in the module, its operands' maps are unknown.
    Unknown {
        /// XLA's opcode text.
        opcode: &'static str,
    },
}

impl HloOp {
    /// XLA's opcode text.
    pub fn opcode(&self) -> &'static str {
        match self {
            HloOp::Parameter { .. } => "parameter",
            HloOp::Constant { .. } => "constant",
            HloOp::Iota { .. } => "iota",
            HloOp::Elementwise(op) => op.opcode(),
            HloOp::Broadcast { .. } => "broadcast",
            HloOp::Transpose { .. } => "transpose",
            HloOp::Reverse { .. } => "reverse",
            HloOp::Reduce { .. } => "reduce",
            HloOp::Slice { .. } => "slice",
            HloOp::Reshape => "reshape",
            HloOp::Bitcast => "bitcast",
            HloOp::Concatenate { .. } => "concatenate",
            HloOp::Dot(_) => "dot",
            HloOp::Pad { .. } => "pad",
            HloOp::ReduceWindow { .. } => "reduce-window",
            HloOp::Fusion { .. } => "fusion",
            HloOp::Call { .. } => "call",
            HloOp::Tuple => "tuple",
            HloOp::GetTupleElement { .. } => "get-tuple-element",
            HloOp::Map { .. } => "map",
            HloOp::DynamicSlice { .. } => "dynamic-slice",
            HloOp::DynamicUpdateSlice => "dynamic-update-slice",
            HloOp::Convolution { .. } => "convolution",
            HloOp::Gather(_) => "gather",
            HloOp::Unknown { opcode } => opcode,
        }
    }

    /// The computation this op calls, if any.
    pub fn called_computation(&self) -> Option<ComputationId> {
        match self {
            HloOp::Reduce { to_apply, .. }
            | HloOp::ReduceWindow { to_apply, .. }
            | HloOp::Map { to_apply }
            | HloOp::Call { to_apply } => Some(*to_apply),
            HloOp::Fusion { calls } => Some(*calls),
            _ => None,
        }
    }
}
