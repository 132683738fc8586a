//! Buffers and views: where each operand's elements are, and the C that reaches one.
//!
//! Like the reference interpreter, the emitter tracks every operand as a *view*: a buffer (a
//! kernel parameter, an array, or a set of registers) with its full shape and layout, and the
//! origin of the operand inside it, one index expression per logical dim over the loop
//! variables in scope. The offset of a point `p` of the operand is the buffer's indexing
//! expression with `d_i := origin_i + p_i`, simplified with the loop ranges:
//!
//! ```text
//! offset(view, p) = simplify(index_buffer[d_i := origin_i + p_i], loop ranges)
//! ```
//!
//! so a tile of a row-major 64x64 buffer at `(4 m, k)` reads `lhs[256 * m + k + ...]`.
//! Registers have no addresses: a vector register buffer is `n` C variables `v<id>_<j>` and an
//! element at constant offset `o` is lane `o mod lanes` of variable `o / lanes`; scalar registers
//! are one variable `r<id>_<o>` per element. Loops over register operands are unrolled (see
//! [`super::nodes`]), so their offsets are always constants.

use morello_core::expr::{IndexExpr, Var};
use morello_core::layout::Layout;
use morello_core::shape::Shape;
use morello_core::spec::Axis;

use super::Emitter;
use super::vector::VectorType;
use crate::error::CodegenError;

/// Where a buffer's elements live in C.
#[derive(Debug, Clone)]
pub(crate) enum Storage {
    /// A pointer: a kernel parameter or an array (`name[offset]`).
    Memory {
        /// The C name.
        name: String,
    },
    /// Vector registers: `<prefix>_<j>` for register `j`.
    Vectors {
        /// The variables' common prefix.
        prefix: String,
        /// Their type.
        vector: VectorType,
    },
    /// Scalar registers: `<prefix>_<o>` for the element at offset `o`.
    Scalars {
        /// The variables' common prefix.
        prefix: String,
    },
}

/// A buffer: its storage, element type, full shape and layout.
#[derive(Debug, Clone)]
pub(crate) struct BufferInfo {
    /// Where it lives.
    pub storage: Storage,
    /// The buffer's own indexing expression over `d0, d1, ...` of its full shape.
    pub index: IndexExpr,
    /// The rank of its shape.
    pub rank: usize,
}

impl BufferInfo {
    /// A buffer of `shape` in `layout`.
    pub fn new(storage: Storage, shape: &Shape, layout: &Layout) -> Result<Self, CodegenError> {
        let index = layout
            .buffer_index(shape)
            .map_err(|e| CodegenError::Internal { reason: format!("layout {layout} of {shape}: {e}") })?;
        Ok(BufferInfo { storage, index, rank: shape.rank() })
    }
}

/// An operand as a window of a buffer: point `p` of the view is the buffer's point `origin`
/// plus, for each view dim `i` with an axis, `scale * p_i` along the axis' dim. A plain view (a
/// box) has axis `i` step 1 for dim `i`; a convolution computed as a matmul reads its operands
/// through other axes (`morello_core::spec::matmul_axes`).
#[derive(Debug, Clone)]
pub(crate) struct View {
    /// Index into the emitter's buffer table.
    pub buffer: usize,
    /// Where the operand starts, per logical dim of the buffer.
    pub origin: Vec<IndexExpr>,
    /// Per dim of the view, the buffer dim it steps along and how far (`None`: extent 1).
    pub axes: Vec<Option<Axis>>,
}

impl View {
    /// The view of all of a buffer of `rank` dims.
    pub fn whole(buffer: usize, rank: usize) -> View {
        View {
            buffer,
            origin: vec![IndexExpr::constant(0); rank],
            axes: (0..rank).map(|dim| Some(Axis { dim, scale: 1 })).collect(),
        }
    }

    /// The buffer point of a view point.
    pub fn global(&self, point: &[IndexExpr]) -> Result<Vec<IndexExpr>, morello_core::expr::ExprError> {
        let mut global = self.origin.clone();
        for (axis, p) in self.axes.iter().zip(point) {
            if let Some(a) = axis {
                global[a.dim] = global[a.dim].add(&p.mul(i64::from(a.scale))?)?;
            }
        }
        Ok(global)
    }

    /// The view moved by `offset` (per view dim).
    pub fn shifted(&self, offset: &[IndexExpr]) -> Result<View, morello_core::expr::ExprError> {
        Ok(View { buffer: self.buffer, origin: self.global(offset)?, axes: self.axes.clone() })
    }

    /// The view through `axes` (per dim of the new view, the dim of this view it reads).
    pub fn through(&self, axes: &[Option<Axis>]) -> View {
        let axes = axes
            .iter()
            .map(|a| a.and_then(|a| self.axes[a.dim].map(|b| Axis { dim: b.dim, scale: b.scale * a.scale })))
            .collect();
        View { buffer: self.buffer, origin: self.origin.clone(), axes }
    }
}

/// One element of a vector register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Lane {
    /// The register's number in its buffer.
    pub register: u64,
    /// The lane.
    pub lane: u64,
}

fn overflow(e: morello_core::expr::ExprError) -> CodegenError {
    CodegenError::Internal { reason: format!("index arithmetic: {e}") }
}

impl Emitter<'_> {
    /// The buffer behind a view.
    pub(crate) fn buffer(&self, view: &View) -> &BufferInfo {
        &self.buffers[view.buffer]
    }

    /// The offset in its buffer of the point `point` (per logical dim) of a view, simplified.
    pub(crate) fn offset(&self, view: &View, point: &[IndexExpr]) -> Result<IndexExpr, CodegenError> {
        self.offset_in(view, point, &self.env)
    }

    /// [`Emitter::offset`] with another range environment (for points with free dims `d_i`).
    pub(crate) fn offset_in(
        &self,
        view: &View,
        point: &[IndexExpr],
        env: &morello_core::expr::RangeEnv,
    ) -> Result<IndexExpr, CodegenError> {
        let buffer = self.buffer(view);
        let global = view.global(point).map_err(overflow)?;
        let substituted = buffer
            .index
            .substitute(&mut |v| match v {
                Var::Dim(i) => Ok(Some(global[i as usize].clone())),
                Var::Symbol(_) => Ok(None),
            })
            .map_err(overflow)?;
        substituted.simplify(env).map_err(overflow)
    }

    /// The offset of a constant point of a view.
    pub(crate) fn offset_at(&self, view: &View, point: &[u32]) -> Result<IndexExpr, CodegenError> {
        let point: Vec<IndexExpr> = point.iter().map(|&p| IndexExpr::constant(i64::from(p))).collect();
        self.offset(view, &point)
    }

    /// The constant offset of a point of a register view.
    fn register_offset(&self, view: &View, point: &[u32]) -> Result<u64, CodegenError> {
        let offset = self.offset_at(view, point)?;
        offset.as_constant().and_then(|o| u64::try_from(o).ok()).ok_or_else(|| CodegenError::Internal {
            reason: format!("a register index depends on a loop variable: {offset}"),
        })
    }

    /// The register and lane holding a point of a vector-register view.
    pub(crate) fn lane(&self, view: &View, point: &[u32]) -> Result<Lane, CodegenError> {
        let Storage::Vectors { vector, .. } = &self.buffer(view).storage else {
            return Err(CodegenError::Internal {
                reason: "a lane of a view that is not in vector registers".into(),
            });
        };
        let lanes = u64::from(vector.lanes);
        let offset = self.register_offset(view, point)?;
        Ok(Lane { register: offset / lanes, lane: offset % lanes })
    }

    /// The C name of vector register `register` of a vector-register view's buffer.
    pub(crate) fn register_name(&self, view: &View, register: u64) -> String {
        match &self.buffer(view).storage {
            Storage::Vectors { prefix, .. }
            | Storage::Scalars { prefix }
            | Storage::Memory { name: prefix } => {
                format!("{prefix}_{register}")
            }
        }
    }

    /// The vector type of a vector-register view.
    pub(crate) fn vector_type(&self, view: &View) -> Result<VectorType, CodegenError> {
        match &self.buffer(view).storage {
            Storage::Vectors { vector, .. } => Ok(*vector),
            _ => Err(CodegenError::Internal { reason: "a view that is not in vector registers".into() }),
        }
    }

    /// Whether a view is in vector registers.
    pub(crate) fn in_vector_registers(&self, view: &View) -> bool {
        matches!(self.buffer(view).storage, Storage::Vectors { .. })
    }

    /// A C lvalue for the element at a constant point of a view in memory or scalar registers.
    pub(crate) fn element(&mut self, view: &View, point: &[u32]) -> Result<String, CodegenError> {
        match self.buffer(view).storage.clone() {
            Storage::Memory { name } => {
                let offset = self.offset_at(view, point)?;
                Ok(format!("{name}[{}]", self.c_expr(&offset)?))
            }
            Storage::Scalars { prefix } => Ok(format!("{prefix}_{}", self.register_offset(view, point)?)),
            Storage::Vectors { .. } => Err(CodegenError::Internal {
                reason: "a scalar access to a vector register (no kernel reads lanes one by one)".into(),
            }),
        }
    }

    /// A C pointer expression to the element at `offset` of a memory view's buffer.
    pub(crate) fn address(&mut self, view: &View, offset: &IndexExpr) -> Result<String, CodegenError> {
        match self.buffer(view).storage.clone() {
            Storage::Memory { name } => {
                let text = self.c_expr(offset)?;
                Ok(if text == "0" { name } else { format!("&{name}[{text}]") })
            }
            _ => Err(CodegenError::Internal { reason: "the address of a register".into() }),
        }
    }
}
