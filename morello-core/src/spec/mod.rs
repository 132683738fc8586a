//! Specs: what a kernel must compute, on which tensors, where they live and how they are laid out.
//!
//! A [`LogicalSpec`] is a primitive ([`PrimitiveKind`]) over an iteration shape, one
//! [`TensorSpec`] per operand, and a `serial_only` flag. What a kind computes, its operands and how
//! their shapes derive from the iteration shape ([`PrimitiveKind::operand_shapes`]) is its
//! operator's definition, one file per operator in `crate::operators` (re-exported here), e.g.
//!
//! ```text
//! Matmul [b, m, k, n]:               lhs [b, m, k], rhs [b, k, n], out [b, m, n]
//! Conv   [b, f, c, h, w, fh, fw]:    image [b, c, s (h - 1) + d (fh - 1) + 1 - pads, ...],
//!                                    filters [f, c, fh, fw], out [b, f, h, w]
//! Softmax [m, n]:                    x [m, n], y [m, n]
//! Move   S:                          source S, destination S
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

pub use crate::operators::{
    Activation, ConvGeometry, ConvGeometryError, Direction, FillValue, OperandDim, PrimitiveKind,
    RequantEpilogue, parse_epilogue, parse_requant,
};
pub use canonical::SpecError;
pub use conv::{Axis, PaddingRegion, matmul_axes};
pub use shorthand::{
    ConvLayout, ConvOptions, FilterLayout, Padding, Shorthand, ShorthandError, SpecBuilder, VNNI_LAYOUT,
    parse_pair,
};
pub use text::{SpecParseError, parse_limits};

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
    /// A view of this tensor's buffer with another shape and layout: the same dtype, level and
    /// vector size, and no pitch (the caller derives one where it can matter).
    pub fn view(&self, shape: Shape, layout: Layout, contiguous_dims: u8) -> TensorSpec {
        TensorSpec {
            shape,
            dtype: self.dtype,
            level: self.level,
            layout,
            contiguous_dims,
            vector_size: self.vector_size,
            pitch: None,
        }
    }

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
        let sizes = self
            .layout
            .physical_sizes_inline(&self.shape)
            .expect("a canonical tensor's layout fits its shape");
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
