//! The kernel catalogue: leaf implementations the search may select.
//!
//! Each kernel lives in its own file, whose `DEFINITION` ([`KernelDefinition`]) is its one
//! catalogue entry: name, `required_isa`, `default_cost` and what its `units` are, then
//! `applies(spec, target)` (the spec shapes, levels, layouts, vector sizes and dtypes it
//! implements), `could_apply(kind, level kinds, dtypes, target)` (a necessary condition on levels
//! and dtypes alone, used to prune the search), optionally `could_apply_after_tiling`, `memory(spec,
//! target)` (registers it needs beyond its operands) and `cost(spec, target, constants)`. Adding a
//! kernel: a file here, a variant of [`KernelKind`] with its line in [`KernelKind::definition`],
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
mod value_add_bias;
mod value_assign;
mod value_fill;
mod vector_add_bias;
mod vector_assign;
mod vector_fill;
mod vector_max;
mod vector_scale;
mod vector_softmax_exp;

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
    /// `out[v] = act(out[v] + bias[v])` on f32 vector registers (a fused epilogue).
    VectorAddBias,
    /// `out = act(out + bias)` on one f32 scalar.
    ValueAddBias,
    /// The maximum of one f32 row in memory (a vector loop).
    VectorMax,
    /// Softmax's middle pass on one row: `y = exp(x - max)` (a polynomial) and `sum = Σ y`.
    VectorSoftmaxExp,
    /// Softmax's last pass on one row: `y = y * (1 / sum)`.
    VectorScale,
}

/// A kernel name that is not in the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown kernel `{0}`")]
pub struct UnknownKernel(pub String);

impl KernelKind {
    /// Every kernel, in the fixed order the search tries them.
    pub const ALL: [KernelKind; 15] = [
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
        KernelKind::VectorAddBias,
        KernelKind::ValueAddBias,
        KernelKind::VectorMax,
        KernelKind::VectorSoftmaxExp,
        KernelKind::VectorScale,
    ];

    /// The kernel's catalogue entry: everything core knows about it, from its own file.
    pub fn definition(self) -> &'static KernelDefinition {
        match self {
            KernelKind::MultAdd => &mult_add::DEFINITION,
            KernelKind::BroadcastVecMultAdd => &broadcast_vec_mult_add::DEFINITION,
            KernelKind::VectorAssign => &vector_assign::DEFINITION,
            KernelKind::VectorFill => &vector_fill::DEFINITION,
            KernelKind::MemsetZero => &memset_zero::DEFINITION,
            KernelKind::ValueAssign => &value_assign::DEFINITION,
            KernelKind::ValueFill => &value_fill::DEFINITION,
            KernelKind::DotProductLoop => &dot_product_loop::DEFINITION,
            KernelKind::DotProductBf16 => &dot_product_bf16::DEFINITION,
            KernelKind::BroadcastVecMultAddBf16 => &broadcast_vec_mult_add_bf16::DEFINITION,
            KernelKind::VectorAddBias => &vector_add_bias::DEFINITION,
            KernelKind::ValueAddBias => &value_add_bias::DEFINITION,
            KernelKind::VectorMax => &vector_max::DEFINITION,
            KernelKind::VectorSoftmaxExp => &vector_softmax_exp::DEFINITION,
            KernelKind::VectorScale => &vector_scale::DEFINITION,
        }
    }

    /// The kernel's name.
    pub fn name(self) -> &'static str {
        self.definition().name
    }

    /// ISA features the kernel's code needs (their implications aside; see
    /// [`IsaFeature::implies`]).
    pub fn required_isa(self) -> &'static [IsaFeature] {
        self.definition().required_isa
    }

    /// The built-in cost constants (a target file may override them).
    pub fn default_cost(self) -> KernelCost {
        self.definition().default_cost
    }

    /// What the kernel's `per_unit` constant is charged per (`vectors`, `none`).
    pub fn units(self) -> &'static str {
        self.definition().units
    }

    /// Whether the kernel implements `spec` on `target`.
    pub fn applies(self, spec: &LogicalSpec, target: &Target) -> bool {
        (self.definition().applies)(spec, target)
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
        (self.definition().could_apply)(kind, levels, dtypes, target)
    }

    /// Whether some tile of `spec`, reached by serial tiling while its register operands stay where
    /// they are, could apply the kernel. Only asked of specs with operands in vector registers
    /// (which can never move again): a spec none of whose kernels passes has no implementation.
    /// Never false when a tile could apply the kernel.
    pub fn could_apply_after_tiling(self, spec: &LogicalSpec, target: &Target) -> bool {
        if self.applies(spec, target) {
            return true;
        }
        if let Some(after_tiling) = self.definition().after_tiling {
            return after_tiling(spec, target);
        }
        let levels: Vec<LevelKind> = spec.operands.iter().map(|o| level_kind(o, target)).collect();
        let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).collect();
        self.could_apply(spec.kind, &levels, &dtypes, target)
    }

    /// Memory the kernel needs beyond its operands (temporary registers).
    pub fn memory(self, spec: &LogicalSpec, target: &Target) -> MemVec {
        (self.definition().memory)(spec, target)
    }

    /// The kernel's cost on `spec` (which it must apply to).
    pub fn cost(self, spec: &LogicalSpec, target: &Target) -> Cost {
        (self.definition().cost)(spec, target, target.costs().kernel(self))
    }
}

/// A kernel's entry in the catalogue: one constant in the kernel's own file holds everything the
/// IR, the search and the cost model know about it (its C emitter is in `morello-codegen`, found by
/// [`KernelKind`]; its calibration microbenchmark in `morello-measure`).
#[derive(Debug, Clone, Copy)]
pub struct KernelDefinition {
    /// The name (in target files, printed trees and the text forms).
    pub name: &'static str,
    /// ISA features the kernel's code needs.
    pub required_isa: &'static [IsaFeature],
    /// The built-in cost constants.
    pub default_cost: KernelCost,
    /// What `per_unit` is charged per.
    pub units: &'static str,
    /// Whether the kernel implements a spec (its operand rules).
    applies: fn(&LogicalSpec, &Target) -> bool,
    /// A necessary condition on the spec's kind, levels and dtypes (for pruning).
    could_apply: fn(PrimitiveKind, &[LevelKind], &[Dtype], &Target) -> bool,
    /// A necessary condition for some serial tile of a spec with register operands; `None` means
    /// `could_apply` on the spec's levels and dtypes.
    after_tiling: Option<fn(&LogicalSpec, &Target) -> bool>,
    /// Temporary registers.
    memory: fn(&LogicalSpec, &Target) -> MemVec,
    /// The cost, given the target's constants for the kernel.
    cost: fn(&LogicalSpec, &Target, KernelCost) -> Cost,
}

/// What a kernel is before its rules: name, default constants and their units (the first half of
/// a [`KernelDefinition`], which [`KernelFacts::rules`] completes).
#[derive(Debug, Clone, Copy)]
struct KernelFacts {
    name: &'static str,
    default_cost: KernelCost,
    units: &'static str,
}

impl KernelFacts {
    /// A kernel named `name` with these default constants, `per_unit` counting `units`.
    const fn new(name: &'static str, default_cost: KernelCost, units: &'static str) -> Self {
        KernelFacts { name, default_cost, units }
    }

    /// The kernel with its operand rules and cost, needing no ISA extension and no temporaries,
    /// its tiles judged by `could_apply`.
    const fn rules(
        self,
        applies: fn(&LogicalSpec, &Target) -> bool,
        could_apply: fn(PrimitiveKind, &[LevelKind], &[Dtype], &Target) -> bool,
        cost: fn(&LogicalSpec, &Target, KernelCost) -> Cost,
    ) -> KernelDefinition {
        let KernelFacts { name, default_cost, units } = self;
        KernelDefinition {
            name,
            required_isa: &[],
            default_cost,
            units,
            applies,
            could_apply,
            after_tiling: None,
            memory: no_memory,
            cost,
        }
    }
}

impl KernelDefinition {
    /// The same kernel, needing `required_isa`.
    const fn isa(self, required_isa: &'static [IsaFeature]) -> Self {
        KernelDefinition { required_isa, ..self }
    }

    /// The same kernel, whose serial tiles `after_tiling` judges.
    const fn after_tiling(self, after_tiling: fn(&LogicalSpec, &Target) -> bool) -> Self {
        KernelDefinition { after_tiling: Some(after_tiling), ..self }
    }

    /// The same kernel, with `memory` temporaries.
    const fn memory(self, memory: fn(&LogicalSpec, &Target) -> MemVec) -> Self {
        KernelDefinition { memory, ..self }
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

/// No memory beyond the operands (the `memory` of most kernels).
fn no_memory(_spec: &LogicalSpec, _target: &Target) -> MemVec {
    MemVec::ZERO
}

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
