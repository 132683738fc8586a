//! The kernel catalogue: leaf implementations the search may select.
//!
//! Each kernel lives in its own file. Its module doc states its facts (ordinal, default constants
//! and units, required ISA features, summary, cost formula), which `build.rs` lists as the
//! `kernel_catalogue!` macro and `crate::kernel_kind` declares [`KernelKind`] from; its
//! `DEFINITION` ([`KernelDefinition`]) holds its rules: `applies(spec, target)` (the spec shapes,
//! levels, layouts, vector sizes and dtypes it implements), `could_apply(kind, level kinds, dtypes,
//! target)` (a necessary condition on levels and dtypes alone, used to prune the search),
//! optionally `could_apply_after_tiling`, `memory(spec, target)` (registers it needs beyond its
//! operands), `cost(spec, target, constants)` and its calibration specs. From the same list
//! `catalogue!` declares the module and its [`KernelKind::definition`], and `morello-codegen` its C
//! emitter (see `docs/adding-a-kernel.md`).
//!
//! A kernel implements exactly its spec: the reference interpreter executes a kernel by executing
//! the spec, and the emitted C must agree.

pub use crate::kernel_kind::{KernelKind, UnknownKernel};

use crate::cost::Cost;
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind, TensorSpec};
use crate::target::{KernelCost, LevelId, LevelKind, MemVec, Target};

/// Declares the kernels' modules from the catalogue's list ([`KernelKind`] is declared from the
/// same list in `crate::kernel_kind`) and [`KernelKind::definition`]: each module's `DEFINITION`.
macro_rules! catalogue {
    ($($kind:ident = $ordinal:literal => $module:ident { $($facts:tt)* },)+) => {
        $(mod $module;)+

        impl KernelKind {
            /// The kernel's rules: everything core knows about it beyond its facts, from its own file.
            pub fn definition(self) -> &'static KernelDefinition {
                match self {
                    $(KernelKind::$kind => &$module::DEFINITION,)+
                }
            }
        }
    };
}

kernel_catalogue!(catalogue);

pub use vector_interleave::{StripTile, strip_tile};
pub use vector_shift_correction::{ColumnRun, column_run, quad_isa, row_isa};

pub(crate) use broadcast_pair_dot::PAIR;
pub use broadcast_quad_dot::{LANES as QUAD_LANES, QUAD};
pub(crate) use broadcast_quad_dot_avx::LANES as QUAD_AVX_LANES;

impl KernelKind {
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

    /// The specs calibration measures the kernel on, on a target with `sites` (empty when the
    /// target lacks a level they need).
    pub fn calibration(self, sites: &CalibrationSites) -> Vec<CalibrationCase> {
        (self.definition().calibration)(sites)
    }

    /// The kernel's cost on `spec` (which it must apply to), with the target's constants for the
    /// element type of its first operand ([`crate::target::CostConstants::kernel_for`]).
    pub fn cost(self, spec: &LogicalSpec, target: &Target) -> Cost {
        let dtype = spec.operands[0].dtype;
        (self.definition().cost)(spec, target, target.costs().kernel_for(self, dtype))
    }
}

/// A kernel's rules in the catalogue: one constant in the kernel's own file, beside the facts its
/// module doc states ([`KernelKind`]'s name, constants and ISA features), holds what the search and
/// the cost model ask of it (its C emitter is in `morello-codegen`, found by [`KernelKind`]; its
/// calibration specs are its own, measured by `morello-measure`).
#[derive(Debug, Clone, Copy)]
pub struct KernelDefinition {
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
    /// The specs calibration measures the kernel on (none on a target without the levels they
    /// need; tests refuse that for the built-in targets).
    calibration: fn(&CalibrationSites) -> Vec<CalibrationCase>,
}

impl KernelDefinition {
    /// A kernel's rules: its operand rules, cost and calibration specs, with no temporaries, its
    /// tiles judged by `could_apply`.
    const fn rules(
        applies: fn(&LogicalSpec, &Target) -> bool,
        could_apply: fn(PrimitiveKind, &[LevelKind], &[Dtype], &Target) -> bool,
        cost: fn(&LogicalSpec, &Target, KernelCost) -> Cost,
        calibration: fn(&CalibrationSites) -> Vec<CalibrationCase>,
    ) -> KernelDefinition {
        KernelDefinition { applies, could_apply, after_tiling: None, memory: no_memory, cost, calibration }
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

/// Where a target lets calibration put a kernel's operands: the levels and vector widths its
/// calibration specs are written with ([`KernelKind::calibration`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalibrationSites {
    /// The vector-register level with the widest vectors.
    pub vector: LevelId,
    /// Its name.
    pub vrf: String,
    /// Its vector widths in bytes (those of 16, 32 and 64), in the target's order.
    pub widths: Vec<u32>,
    /// Its registers.
    pub vector_registers: u64,
    /// The scalar-register level, if any.
    pub scalar: Option<LevelId>,
    /// Its name.
    pub rf: Option<String>,
    /// The fastest cache or memory level that moves into the vector registers (L1).
    pub nearest: LevelId,
    /// Its name.
    pub l1: String,
    /// The cache line in bytes.
    pub line_bytes: u32,
    /// Element types other than f32 whose `BroadcastVecMultAdd` has constants of its own in the
    /// target (`CostConstants::dtype_kernels`): calibration measures those too.
    pub own_multiply_adds: Vec<Dtype>,
}

impl CalibrationSites {
    /// Finds the levels of `target` that calibration measures kernels at.
    ///
    /// # Errors
    /// Why the target cannot be calibrated: no vector registers, none of 16, 32 or 64 bytes, no
    /// cache or memory level that moves into them, or a cache line outside 16 to 4096 bytes.
    pub fn of(target: &Target) -> Result<Self, &'static str> {
        let vector = target
            .level_ids()
            .filter(|&id| target.level(id).kind == LevelKind::VectorRegisters)
            .max_by_key(|&id| target.level(id).vector_bytes.iter().max().copied().unwrap_or(0))
            .ok_or("it has no vector-register level")?;
        let widths: Vec<u32> =
            target.level(vector).vector_bytes.iter().copied().filter(|w| [16, 32, 64].contains(w)).collect();
        if widths.is_empty() {
            return Err("its vector registers are not 16, 32 or 64 bytes wide");
        }
        let scalar = target.level_ids().find(|&id| target.level(id).kind == LevelKind::ScalarRegisters);
        let nearest = target
            .level_ids()
            .filter(|&id| !target.level(id).kind.counts_registers())
            .filter(|&id| target.level(id).moves_to.contains(&vector))
            .last()
            .ok_or("no cache or memory level moves into its vector registers")?;
        let line_bytes = target.cache_line_bytes();
        if !(16..=4096).contains(&line_bytes) {
            return Err("its cache line is not between 16 and 4096 bytes");
        }
        let name = |id: LevelId| target.level(id).name.clone();
        Ok(CalibrationSites {
            vector,
            vrf: name(vector),
            widths,
            vector_registers: target.level(vector).capacity,
            scalar,
            rf: scalar.map(name),
            nearest,
            l1: name(nearest),
            line_bytes,
            own_multiply_adds: target
                .costs()
                .dtype_kernels
                .iter()
                .filter(|(d, m)| **d != Dtype::F32 && m.contains_key(&KernelKind::BroadcastVecMultAdd))
                .map(|(d, _)| *d)
                .collect(),
        })
    }

    /// The widest vector width in bytes.
    pub fn widest(&self) -> u32 {
        self.widths.iter().copied().max().unwrap_or(16)
    }

    /// f32 lanes of the widest vectors.
    pub fn lanes(&self) -> u32 {
        self.widest() / 4
    }
}

/// One spec calibration measures a kernel on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalibrationCase {
    /// What tells it apart from the kernel's other cases (`v4`, `load.w32.v2`; empty for a
    /// kernel's only case): the measurement is labelled `Kernel.label`.
    pub label: String,
    /// The spec, in its text form.
    pub spec: String,
}

impl CalibrationCase {
    fn new(label: impl Into<String>, spec: String) -> Self {
        CalibrationCase { label: label.into(), spec }
    }
}

/// One calibration case per size `n`, labelled `<prefix><n>`, its spec `spec(n)`.
fn sized(
    prefix: &str,
    sizes: impl IntoIterator<Item = u32>,
    spec: impl Fn(u32) -> String,
) -> Vec<CalibrationCase> {
    sizes.into_iter().map(|n| CalibrationCase::new(format!("{prefix}{n}"), spec(n))).collect()
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
pub(crate) fn in_vector_registers(t: &TensorSpec, target: &Target) -> bool {
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
pub(crate) fn vectors_along(t: &TensorSpec, dim: usize) -> bool {
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
pub(crate) fn output_vectors(spec: &LogicalSpec) -> u64 {
    let out = spec.output();
    out.shape.volume() / u64::from(out.vector_size.unwrap_or(1))
}

/// The vector-register level with the widest vectors, and that width in bytes.
pub(crate) fn widest_vector_level(target: &Target) -> Option<(LevelId, u32)> {
    target
        .level_ids()
        .filter_map(|id| target.level(id).vector_bytes.iter().max().map(|&w| (id, w)))
        .max_by_key(|&(_, w)| w)
}

#[cfg(test)]
mod tests;
