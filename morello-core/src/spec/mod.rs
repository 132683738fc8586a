//! Specs: what a kernel must compute, on which tensors, where they live and how they are laid out.
//!
//! A [`LogicalSpec`] is a primitive ([`PrimitiveKind`]) over an iteration shape, one
//! [`TensorSpec`] per operand, and a `serial_only` flag. Operand shapes are derived from the
//! iteration shape ([`PrimitiveKind::operand_shapes`]):
//!
//! ```text
//! Matmul [b, m, k, n]:               lhs [b, m, k], rhs [b, k, n], out [b, m, n]
//! Conv   [b, f, c, h, w, fh, fw]:    image [b, c, s (h - 1) + d (fh - 1) + 1 - pads, ...],
//!                                    filters [f, c, fh, fw], out [b, f, h, w]
//!                                    (logical NCHW and FCHW; any layout, e.g. NHWC and HWIO;
//!                                    strides s, dilations d and padding: [`ConvGeometry`])
//! MatmulBias [b, m, k, n]:           lhs, rhs, bias [n], out [b, m, n]: out = act(lhs rhs + bias)
//! AddBias S:                         bias [S_last], out S (read and written): out = act(out + bias)
//! Softmax [m, n]:                    x [m, n], y [m, n]: y = exp(x - max_row) / Σ_row exp(x - max_row)
//! Max [m, n]:                        x [m, n], out [m]: the row maxima
//! SoftmaxExp [m, n]:                 x, max [m], y [m, n], sum [m]: y = exp(x - max), sum = Σ_row y
//! SoftmaxScale [m, n]:               sum [m], y [m, n] (read and written): y = y / sum
//! Move   S:                          source S, destination S
//! Fill   S:                          out S
//! ```
//!
//! [`CanonicalSpec`] is a `LogicalSpec` that has been validated against a target and put in
//! canonical form (layouts canonical for their shapes, register layouts normalised, `serial_only`
//! set when some operand can never be split by a parallel loop). The search and the memo table only
//! take canonical specs. A [`Spec`] adds memory limits.
//!
//! Text form (prints and parses back, given the target for level names):
//! `Matmul(1x64x64x64, f32 GL row-major, f32 GL row-major, f32 GL row-major)`, with `Accum`
//! suffixes, `c1` for partial contiguity, `v8` for vector sizes and a trailing `serial`.
//! [`SpecBuilder`] builds canonical specs from shorthand (`matmul 64x64x64`, `zero 8x8`).

mod canonical;
mod conv;
mod derived;
mod geometry;
mod shorthand;
#[cfg(test)]
mod tests;
mod text;

use std::ops::Deref;

use serde::{Deserialize, Serialize};

use crate::dtype::Dtype;
use crate::layout::Layout;
use crate::shape::Shape;
use crate::target::{LevelId, MemVec};

pub use canonical::SpecError;
pub use conv::{Axis, ConvGeometry, ConvGeometryError, PaddingRegion, matmul_axes};
pub use geometry::OperandDim;
pub use shorthand::{
    ConvLayout, ConvOptions, FilterLayout, Padding, Shorthand, ShorthandError, SpecBuilder, parse_pair,
};
pub use text::{SpecParseError, parse_limits};

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

/// Parses an epilogue: `bias`, `bias,relu` or `bias,gelu` (`gelu-tanh` too).
///
/// # Errors
/// A message saying what is accepted.
pub fn parse_epilogue(text: &str) -> Result<Activation, String> {
    let parts: Vec<String> = text.split(',').map(|p| p.trim().to_ascii_lowercase()).collect();
    let expected = || format!("invalid epilogue `{text}`: expected bias, bias,relu or bias,gelu");
    match parts.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["bias"] => Ok(Activation::Identity),
        ["bias", "relu"] => Ok(Activation::Relu),
        ["bias", "gelu" | "gelu-tanh"] => Ok(Activation::Gelu),
        _ => Err(expected()),
    }
}

/// The computation a spec describes.
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

impl PrimitiveKind {
    /// The name in the text form: `Matmul`, `MatmulAccum`, `Move`, `FillZero`, `FillNegInf`,
    /// `FillMin`, `Conv`, `ConvAccum`.
    pub const fn name(self) -> &'static str {
        match self {
            PrimitiveKind::Matmul { accum: false } => "Matmul",
            PrimitiveKind::Matmul { accum: true } => "MatmulAccum",
            PrimitiveKind::Move => "Move",
            PrimitiveKind::Fill { value: FillValue::Zero } => "FillZero",
            PrimitiveKind::Fill { value: FillValue::NegInf } => "FillNegInf",
            PrimitiveKind::Fill { value: FillValue::Min } => "FillMin",
            PrimitiveKind::Conv { accum: false, .. } => "Conv",
            PrimitiveKind::Conv { accum: true, .. } => "ConvAccum",
            PrimitiveKind::MatmulBias { activation: Activation::Identity } => "MatmulBias",
            PrimitiveKind::MatmulBias { activation: Activation::Relu } => "MatmulBiasRelu",
            PrimitiveKind::MatmulBias { activation: Activation::Gelu } => "MatmulBiasGelu",
            PrimitiveKind::AddBias { activation: Activation::Identity } => "AddBias",
            PrimitiveKind::AddBias { activation: Activation::Relu } => "AddBiasRelu",
            PrimitiveKind::AddBias { activation: Activation::Gelu } => "AddBiasGelu",
            PrimitiveKind::Softmax => "Softmax",
            PrimitiveKind::Max { accum: false } => "Max",
            PrimitiveKind::Max { accum: true } => "MaxAccum",
            PrimitiveKind::SoftmaxExp { accum: false } => "SoftmaxExp",
            PrimitiveKind::SoftmaxExp { accum: true } => "SoftmaxExpAccum",
            PrimitiveKind::SoftmaxScale => "SoftmaxScale",
        }
    }

    /// Every kind, in a fixed order (convolutions with the unit geometry).
    pub const ALL: [PrimitiveKind; 20] = [
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
    ];

    /// The kind with parameters that do not change its name reset (a convolution's geometry):
    /// what statistics group by.
    pub fn family(self) -> PrimitiveKind {
        match self {
            PrimitiveKind::Conv { accum, .. } => PrimitiveKind::Conv { accum, geometry: ConvGeometry::UNIT },
            other => other,
        }
    }

    /// The number of operands.
    pub const fn operand_count(self) -> usize {
        match self {
            PrimitiveKind::Matmul { .. } | PrimitiveKind::Conv { .. } => 3,
            PrimitiveKind::MatmulBias { .. } | PrimitiveKind::SoftmaxExp { .. } => 4,
            PrimitiveKind::Move
            | PrimitiveKind::AddBias { .. }
            | PrimitiveKind::Softmax
            | PrimitiveKind::Max { .. }
            | PrimitiveKind::SoftmaxScale => 2,
            PrimitiveKind::Fill { .. } => 1,
        }
    }

    /// The direction of each operand; the output is always the last operand.
    pub fn directions(self) -> Vec<Direction> {
        let out = if self.accumulates() { Direction::InOut } else { Direction::Out };
        match self {
            PrimitiveKind::Matmul { .. } | PrimitiveKind::Conv { .. } => {
                vec![Direction::In, Direction::In, out]
            }
            PrimitiveKind::MatmulBias { .. } => {
                vec![Direction::In, Direction::In, Direction::In, Direction::Out]
            }
            PrimitiveKind::AddBias { .. } | PrimitiveKind::SoftmaxScale => {
                vec![Direction::In, Direction::InOut]
            }
            PrimitiveKind::Softmax => vec![Direction::In, Direction::Out],
            PrimitiveKind::Max { .. } => vec![Direction::In, out],
            PrimitiveKind::SoftmaxExp { .. } => vec![Direction::In, Direction::In, Direction::Out, out],
            PrimitiveKind::Move => vec![Direction::In, Direction::Out],
            PrimitiveKind::Fill { .. } => vec![Direction::Out],
        }
    }

    /// Whether the output is accumulated into.
    pub const fn accumulates(self) -> bool {
        matches!(
            self,
            PrimitiveKind::Matmul { accum: true }
                | PrimitiveKind::Conv { accum: true, .. }
                | PrimitiveKind::Max { accum: true }
                | PrimitiveKind::SoftmaxExp { accum: true }
        )
    }

    /// The accumulating twin of a non-accumulating reduction (`Matmul` -> `MatmulAccum`).
    pub const fn as_accum(self) -> Option<PrimitiveKind> {
        match self {
            PrimitiveKind::Matmul { accum: false } => Some(PrimitiveKind::Matmul { accum: true }),
            PrimitiveKind::Conv { accum: false, geometry } => {
                Some(PrimitiveKind::Conv { accum: true, geometry })
            }
            _ => None,
        }
    }

    /// Iteration dims that are reductions (summed over, not in the output).
    pub const fn reduction_dims(self) -> &'static [usize] {
        match self {
            PrimitiveKind::Matmul { .. } | PrimitiveKind::MatmulBias { .. } => &[2],
            PrimitiveKind::Conv { .. } => &[2, 5, 6],
            PrimitiveKind::Softmax | PrimitiveKind::Max { .. } | PrimitiveKind::SoftmaxExp { .. } => &[1],
            PrimitiveKind::Move
            | PrimitiveKind::Fill { .. }
            | PrimitiveKind::AddBias { .. }
            | PrimitiveKind::SoftmaxScale => &[],
        }
    }

    /// The value an accumulating twin's output starts from: zero, or negative infinity for a
    /// maximum.
    pub const fn accum_init(self) -> FillValue {
        match self {
            PrimitiveKind::Max { .. } => FillValue::NegInf,
            _ => FillValue::Zero,
        }
    }

    /// Names of the iteration dims, for messages (`b, m, k, n` for matmul).
    pub fn dim_names(self, rank: usize) -> Vec<String> {
        match self {
            PrimitiveKind::Matmul { .. } | PrimitiveKind::MatmulBias { .. } => {
                ["b", "m", "k", "n"].map(String::from).to_vec()
            }
            PrimitiveKind::Conv { .. } => ["b", "f", "c", "h", "w", "fh", "fw"].map(String::from).to_vec(),
            _ => (0..rank).map(|i| format!("d{i}")).collect(),
        }
    }

    /// Floating-point (or integer) operations the spec performs, for GFLOP/s figures.
    pub fn flops(self, shape: &Shape) -> u64 {
        match self {
            PrimitiveKind::Matmul { .. } | PrimitiveKind::Conv { .. } | PrimitiveKind::MatmulBias { .. } => {
                2 * shape.volume()
            }
            PrimitiveKind::Softmax => 5 * shape.volume(),
            PrimitiveKind::Move
            | PrimitiveKind::Fill { .. }
            | PrimitiveKind::AddBias { .. }
            | PrimitiveKind::Max { .. }
            | PrimitiveKind::SoftmaxExp { .. }
            | PrimitiveKind::SoftmaxScale => shape.volume(),
        }
    }

    /// An epilogue's activation (`None` for kinds without an epilogue).
    pub fn activation(self) -> Option<Activation> {
        match self {
            PrimitiveKind::MatmulBias { activation } | PrimitiveKind::AddBias { activation } => {
                Some(activation)
            }
            _ => None,
        }
    }

    /// A convolution's geometry (`None` for other kinds).
    pub fn conv_geometry(self) -> Option<ConvGeometry> {
        match self {
            PrimitiveKind::Conv { geometry, .. } => Some(geometry),
            _ => None,
        }
    }
}

/// The kind's text: its name and, for a convolution, its geometry (`Conv:s2x2:p1x1x1x1`).
impl std::fmt::Display for PrimitiveKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())?;
        if let Some(geometry) = self.conv_geometry() {
            write!(f, "{geometry}")?;
        }
        Ok(())
    }
}

/// One operand: its shape, element type, memory level, layout and (in vector registers) vector size.
///
/// # Invariants (for operands of a [`CanonicalSpec`])
/// The layout is valid and canonical for the shape; `contiguous_dims <= layout.len()`;
/// `vector_size` is set exactly when the level holds vector registers, its bytes are one of the
/// level's vector widths, and it divides the volume.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TensorSpec {
    /// The shape.
    pub shape: Shape,
    /// The element type.
    pub dtype: Dtype,
    /// Where the tensor lives.
    pub level: LevelId,
    /// How its elements are arranged.
    pub layout: Layout,
    /// How many innermost physical dims of `layout` form one contiguous run of the buffer.
    pub contiguous_dims: u8,
    /// Elements per vector register, for tensors in vector registers.
    pub vector_size: Option<u32>,
    /// The canonical class of the buffer's *pitch*: the stride, in elements, between consecutive
    /// contiguous runs of the tensor (of its innermost physical dim outside the run), modulo the
    /// span over which the target's caches repeat their set mapping
    /// ([`crate::target::Target::set_period_bytes`]). It is what the cost model needs to count
    /// the cache sets a tile's lines fall into. `None` when it cannot matter: the tensor is one
    /// run, lives in registers, has no more lines than any cache has ways, is a tile of a matrix
    /// whose lines fall into distinct sets of every cache, each run within a line and the runs at
    /// most half a page apart ([`crate::cost::pitch_cannot_matter`]), or the target gives no cache
    /// geometry (and when the text form leaves it out); the tiles of a matrix tile without a pitch
    /// have none either. Text form: `sN`.
    pub pitch: Option<u32>,
}

impl TensorSpec {
    /// Whether the whole tensor is one contiguous run of its buffer.
    pub fn is_fully_contiguous(&self) -> bool {
        usize::from(self.contiguous_dims) == self.layout.len()
    }

    /// Bytes the tensor's elements occupy.
    pub fn bytes(&self) -> u64 {
        self.shape.volume() * u64::from(self.dtype.size_bytes())
    }

    /// The contiguous runs of the tensor's elements in their buffer, and the bytes of each: the
    /// run is the innermost `contiguous_dims` physical dims, the runs are the product of the others.
    pub fn runs(&self) -> (u64, u64) {
        let sizes =
            self.layout.physical_sizes(&self.shape).expect("a canonical tensor's layout fits its shape");
        let split = sizes.len() - usize::from(self.contiguous_dims).min(sizes.len());
        let outer: u64 = sizes[..split].iter().product();
        let run_bytes: u64 = sizes[split..].iter().product::<u64>() * u64::from(self.dtype.size_bytes());
        (outer, run_bytes)
    }

    /// Cache lines of `line_bytes` the tensor's elements touch in their buffer (each run starting
    /// on a line).
    pub fn cache_lines(&self, line_bytes: u32) -> u64 {
        let (runs, run_bytes) = self.runs();
        runs * run_bytes.div_ceil(u64::from(line_bytes))
    }
}

/// A primitive over an iteration shape with its operands: what to compute, not how.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LogicalSpec {
    /// The computation.
    pub kind: PrimitiveKind,
    /// The iteration shape (for matmul `[b, m, k, n]`).
    pub shape: Shape,
    /// The operands; the output is last.
    pub operands: Vec<TensorSpec>,
    /// Whether the implementation must run on one thread (set inside parallel loops).
    pub serial_only: bool,
}

impl LogicalSpec {
    /// The output operand (always the last).
    pub fn output(&self) -> &TensorSpec {
        self.operands.last().expect("every primitive has an output operand")
    }

    /// The index of the output operand.
    pub fn output_index(&self) -> usize {
        self.operands.len() - 1
    }

    /// Bytes the spec holds on the heap (its operands, and any shape or layout too long to be
    /// stored inline), for estimating the memory of tables of specs: a spec takes
    /// `size_of::<LogicalSpec>() + heap_bytes()`.
    pub fn heap_bytes(&self) -> usize {
        let operands = self.operands.capacity() * size_of::<TensorSpec>();
        let inner: usize = self.operands.iter().map(|o| o.shape.heap_bytes() + o.layout.heap_bytes()).sum();
        self.shape.heap_bytes() + operands + inner
    }
}

/// A validated, canonical [`LogicalSpec`]: the only kind of spec the search and memo accept.
///
/// It serialises but does not deserialise: validity depends on the target, so the only way in is
/// [`LogicalSpec::canonicalize`] (read a [`LogicalSpec`], from text or serde, and canonicalise it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct CanonicalSpec(LogicalSpec);

impl Deref for CanonicalSpec {
    type Target = LogicalSpec;

    fn deref(&self) -> &LogicalSpec {
        &self.0
    }
}

impl CanonicalSpec {
    /// The logical spec.
    pub fn logical(&self) -> &LogicalSpec {
        &self.0
    }

    /// Unwraps the logical spec.
    pub fn into_logical(self) -> LogicalSpec {
        self.0
    }
}

/// A canonical spec with per-level memory limits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Spec {
    /// What to compute.
    pub logical: CanonicalSpec,
    /// How much of each level an implementation may use (registers or bytes).
    pub limits: MemVec,
}
