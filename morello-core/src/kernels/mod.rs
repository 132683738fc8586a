//! The kernel catalogue: leaf implementations the search may select.
//!
//! Each kernel lives in its own file with these items: `REQUIRED_ISA`, `DEFAULT_COST`,
//! `applies(spec, target)` (the spec shapes, levels, layouts, vector sizes and dtypes it
//! implements), `could_apply(kind, level kinds, dtypes, target)` (a necessary condition on levels
//! and dtypes alone, used to prune the search), `memory(spec, target)` (registers it needs beyond
//! its operands) and `cost(spec, target)`. Adding a kernel: a file here, a variant and one line per dispatch below,
//! and its C emitter in `morello-codegen` (see `docs/adding-a-kernel.md`).
//!
//! A kernel implements exactly its spec: the reference interpreter executes a kernel by executing
//! the spec, and the emitted C must agree.

mod broadcast_vec_mult_add;
mod broadcast_vec_mult_add_bf16;
mod dot_product_bf16;
mod dot_product_loop;
mod memset_zero;
mod mult_add;
mod value_assign;
mod value_fill;
mod vector_assign;
mod vector_fill;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::cost::Cost;
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind, TensorSpec};
use crate::target::{IsaFeature, KernelCost, LevelId, LevelKind, MemVec, Target};

/// A kernel: a leaf of an implementation that the code generator emits directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum KernelKind {
    /// `out += lhs * rhs` on scalars (matmul or convolution of volume 1).
    MultAdd,
    /// `out[v] += s * x[v]`: a scalar broadcast times vectors, accumulated into vectors.
    BroadcastVecMultAdd,
    /// Copies whole vectors between vector registers and memory or caches (loads and stores).
    VectorAssign,
    /// Sets whole vectors in registers to a fill value.
    VectorFill,
    /// Sets a contiguous buffer to zero.
    MemsetZero,
    /// Copies (or widens) one scalar.
    ValueAssign,
    /// Sets one scalar to a fill value.
    ValueFill,
    /// A vectorised f32 dot product loop `out += Σ_k lhs[k] * rhs[k]` with several accumulators.
    DotProductLoop,
    /// The AVX-512 BF16 dot product (`vdpbf16ps`): bf16 inputs, f32 accumulator.
    DotProductBf16,
    /// `out[v] += f32(s) * f32(x[v])`: a bf16 scalar broadcast times a bf16 row widened to f32,
    /// accumulated into f32 vectors.
    BroadcastVecMultAddBf16,
}

/// A kernel name that is not in the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown kernel `{0}`")]
pub struct UnknownKernel(pub String);

impl KernelKind {
    /// Every kernel, in the fixed order the search tries them.
    pub const ALL: [KernelKind; 10] = [
        KernelKind::MultAdd,
        KernelKind::BroadcastVecMultAdd,
        KernelKind::VectorAssign,
        KernelKind::VectorFill,
        KernelKind::MemsetZero,
        KernelKind::ValueAssign,
        KernelKind::ValueFill,
        KernelKind::DotProductLoop,
        KernelKind::DotProductBf16,
        KernelKind::BroadcastVecMultAddBf16,
    ];

    /// The kernel's name.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::MultAdd => "MultAdd",
            KernelKind::BroadcastVecMultAdd => "BroadcastVecMultAdd",
            KernelKind::VectorAssign => "VectorAssign",
            KernelKind::VectorFill => "VectorFill",
            KernelKind::MemsetZero => "MemsetZero",
            KernelKind::ValueAssign => "ValueAssign",
            KernelKind::ValueFill => "ValueFill",
            KernelKind::DotProductLoop => "DotProductLoop",
            KernelKind::DotProductBf16 => "DotProductBf16",
            KernelKind::BroadcastVecMultAddBf16 => "BroadcastVecMultAddBf16",
        }
    }

    /// ISA features the kernel's code needs.
    pub fn required_isa(self) -> &'static [IsaFeature] {
        match self {
            KernelKind::MultAdd => mult_add::REQUIRED_ISA,
            KernelKind::BroadcastVecMultAdd => broadcast_vec_mult_add::REQUIRED_ISA,
            KernelKind::VectorAssign => vector_assign::REQUIRED_ISA,
            KernelKind::VectorFill => vector_fill::REQUIRED_ISA,
            KernelKind::MemsetZero => memset_zero::REQUIRED_ISA,
            KernelKind::ValueAssign => value_assign::REQUIRED_ISA,
            KernelKind::ValueFill => value_fill::REQUIRED_ISA,
            KernelKind::DotProductLoop => dot_product_loop::REQUIRED_ISA,
            KernelKind::DotProductBf16 => dot_product_bf16::REQUIRED_ISA,
            KernelKind::BroadcastVecMultAddBf16 => broadcast_vec_mult_add_bf16::REQUIRED_ISA,
        }
    }

    /// The built-in cost constants (a target file may override them).
    pub fn default_cost(self) -> KernelCost {
        match self {
            KernelKind::MultAdd => mult_add::DEFAULT_COST,
            KernelKind::BroadcastVecMultAdd => broadcast_vec_mult_add::DEFAULT_COST,
            KernelKind::VectorAssign => vector_assign::DEFAULT_COST,
            KernelKind::VectorFill => vector_fill::DEFAULT_COST,
            KernelKind::MemsetZero => memset_zero::DEFAULT_COST,
            KernelKind::ValueAssign => value_assign::DEFAULT_COST,
            KernelKind::ValueFill => value_fill::DEFAULT_COST,
            KernelKind::DotProductLoop => dot_product_loop::DEFAULT_COST,
            KernelKind::DotProductBf16 => dot_product_bf16::DEFAULT_COST,
            KernelKind::BroadcastVecMultAddBf16 => broadcast_vec_mult_add_bf16::DEFAULT_COST,
        }
    }

    /// Whether the kernel implements `spec` on `target`.
    pub fn applies(self, spec: &LogicalSpec, target: &Target) -> bool {
        match self {
            KernelKind::MultAdd => mult_add::applies(spec, target),
            KernelKind::BroadcastVecMultAdd => broadcast_vec_mult_add::applies(spec, target),
            KernelKind::VectorAssign => vector_assign::applies(spec, target),
            KernelKind::VectorFill => vector_fill::applies(spec, target),
            KernelKind::MemsetZero => memset_zero::applies(spec, target),
            KernelKind::ValueAssign => value_assign::applies(spec, target),
            KernelKind::ValueFill => value_fill::applies(spec, target),
            KernelKind::DotProductLoop => dot_product_loop::applies(spec, target),
            KernelKind::DotProductBf16 => dot_product_bf16::applies(spec, target),
            KernelKind::BroadcastVecMultAddBf16 => broadcast_vec_mult_add_bf16::applies(spec, target),
        }
    }

    /// Whether the kernel could apply to some spec of `kind` whose operands live at levels of
    /// `levels` kinds with `dtypes` (shapes and layouts aside). Never false when [`Self::applies`]
    /// could be true for such a spec: the search uses it to skip sub-specs no kernel can finish.
    pub fn could_apply(
        self,
        kind: PrimitiveKind,
        levels: &[LevelKind],
        dtypes: &[Dtype],
        target: &Target,
    ) -> bool {
        match self {
            KernelKind::MultAdd => mult_add::could_apply(kind, levels, dtypes, target),
            KernelKind::BroadcastVecMultAdd => {
                broadcast_vec_mult_add::could_apply(kind, levels, dtypes, target)
            }
            KernelKind::VectorAssign => vector_assign::could_apply(kind, levels, dtypes, target),
            KernelKind::VectorFill => vector_fill::could_apply(kind, levels, dtypes, target),
            KernelKind::MemsetZero => memset_zero::could_apply(kind, levels, dtypes, target),
            KernelKind::ValueAssign => value_assign::could_apply(kind, levels, dtypes, target),
            KernelKind::ValueFill => value_fill::could_apply(kind, levels, dtypes, target),
            KernelKind::DotProductLoop => dot_product_loop::could_apply(kind, levels, dtypes, target),
            KernelKind::DotProductBf16 => dot_product_bf16::could_apply(kind, levels, dtypes, target),
            KernelKind::BroadcastVecMultAddBf16 => {
                broadcast_vec_mult_add_bf16::could_apply(kind, levels, dtypes, target)
            }
        }
    }

    /// Whether some tile of `spec`, reached by serial tiling while its register operands stay where
    /// they are, could apply the kernel. Only asked of specs with operands in vector registers
    /// (which can never move again): a spec none of whose kernels passes has no implementation.
    /// Never false when a tile could apply the kernel.
    pub fn could_apply_after_tiling(self, spec: &LogicalSpec, target: &Target) -> bool {
        if self.applies(spec, target) {
            return true;
        }
        match self {
            KernelKind::BroadcastVecMultAdd => broadcast_vec_mult_add::could_apply_after_tiling(spec, target),
            KernelKind::VectorAssign => vector_assign::could_apply_after_tiling(spec, target),
            KernelKind::BroadcastVecMultAddBf16 => {
                broadcast_vec_mult_add_bf16::could_apply_after_tiling(spec, target)
            }
            KernelKind::VectorFill => matches!(spec.kind, PrimitiveKind::Fill { .. }),
            _ => {
                let levels: Vec<LevelKind> = spec.operands.iter().map(|o| level_kind(o, target)).collect();
                let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).collect();
                self.could_apply(spec.kind, &levels, &dtypes, target)
            }
        }
    }

    /// Memory the kernel needs beyond its operands (temporary registers).
    pub fn memory(self, spec: &LogicalSpec, target: &Target) -> MemVec {
        match self {
            KernelKind::BroadcastVecMultAdd => broadcast_vec_mult_add::memory(spec, target),
            KernelKind::DotProductLoop => dot_product_loop::memory(spec, target),
            KernelKind::DotProductBf16 => dot_product_bf16::memory(spec, target),
            KernelKind::BroadcastVecMultAddBf16 => broadcast_vec_mult_add_bf16::memory(spec, target),
            _ => MemVec::ZERO,
        }
    }

    /// The kernel's cost on `spec` (which it must apply to).
    pub fn cost(self, spec: &LogicalSpec, target: &Target) -> Cost {
        let c = target.costs().kernel(self);
        match self {
            KernelKind::MultAdd => mult_add::cost(spec, target, c),
            KernelKind::BroadcastVecMultAdd => broadcast_vec_mult_add::cost(spec, target, c),
            KernelKind::VectorAssign => vector_assign::cost(spec, target, c),
            KernelKind::VectorFill => vector_fill::cost(spec, target, c),
            KernelKind::MemsetZero => memset_zero::cost(spec, target, c),
            KernelKind::ValueAssign => value_assign::cost(spec, target, c),
            KernelKind::ValueFill => value_fill::cost(spec, target, c),
            KernelKind::DotProductLoop => dot_product_loop::cost(spec, target, c),
            KernelKind::DotProductBf16 => dot_product_bf16::cost(spec, target, c),
            KernelKind::BroadcastVecMultAddBf16 => broadcast_vec_mult_add_bf16::cost(spec, target, c),
        }
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for KernelKind {
    type Err = UnknownKernel;

    fn from_str(s: &str) -> Result<Self, UnknownKernel> {
        KernelKind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| UnknownKernel(s.to_string()))
    }
}

// Predicates the kernel files share.

fn level_kind(t: &TensorSpec, target: &Target) -> LevelKind {
    target.level(t.level).kind
}

/// Whether the tensor lives in vector registers.
fn in_vector_registers(t: &TensorSpec, target: &Target) -> bool {
    level_kind(t, target) == LevelKind::VectorRegisters
}

/// Whether the tensor can be read and written one scalar at a time (not in vector registers).
fn scalar_accessible(t: &TensorSpec, target: &Target) -> bool {
    !in_vector_registers(t, target)
}

/// Whether the tensor lives in memory or a cache (not in registers).
fn in_memory(t: &TensorSpec, target: &Target) -> bool {
    matches!(level_kind(t, target), LevelKind::Cache | LevelKind::Memory)
}

/// Elements in the tensor's innermost contiguous run.
fn run_elements(t: &TensorSpec) -> u64 {
    let sizes = t.layout.physical_sizes(&t.shape).expect("a canonical tensor's layout fits its shape");
    let split = sizes.len() - usize::from(t.contiguous_dims).min(sizes.len());
    sizes[split..].iter().product()
}

/// Whether every run of `lanes` elements in the tensor's physical order is contiguous, so the
/// tensor splits into whole vectors of `lanes` elements.
fn whole_vectors(t: &TensorSpec, lanes: u32) -> bool {
    lanes > 0 && run_elements(t) % u64::from(lanes) == 0
}

/// Whether tiles of `t` that are 1 in every dim but `dim` are whole vectors: `dim` is its innermost
/// physical dim, that dim is in the contiguous run, and it holds at least one vector.
fn vectors_along(t: &TensorSpec, dim: usize) -> bool {
    let innermost = t.layout.dims().last().map(|d| usize::from(d.logical));
    let lanes = t.vector_size.unwrap_or(1);
    innermost == Some(dim)
        && t.contiguous_dims >= 1
        && t.shape.dim(dim) >= lanes
        && t.shape.dim(dim) % lanes == 0
}

/// Whether a contiguous run holds its elements in index order: an odd-even strip permutes them.
fn in_index_order(t: &TensorSpec) -> bool {
    !t.layout.dims().iter().any(|d| matches!(d.kind, crate::layout::PhysDim::OddEven(_)))
}

/// Vector registers the spec's output covers (its volume over its vector size).
fn output_vectors(spec: &LogicalSpec) -> u64 {
    let out = spec.output();
    out.shape.volume() / u64::from(out.vector_size.unwrap_or(1))
}

/// The vector-register level with the widest vectors, and that width in bytes.
fn widest_vector_level(target: &Target) -> Option<(LevelId, u32)> {
    target
        .level_ids()
        .filter_map(|id| target.level(id).vector_bytes.iter().max().map(|&w| (id, w)))
        .max_by_key(|&(_, w)| w)
}

#[cfg(test)]
mod tests;
