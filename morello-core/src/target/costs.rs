//! Cost constants of a target: everything the cost model multiplies, as data.
//!
//! The formulas live in `crate::cost` and in each kernel's file; the numbers live here so that
//! `morello calibrate` can fit them to measurements and write them to a target file.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::dtype::Dtype;
use crate::kernel_kind::{KernelCost, KernelKind};

/// The constants of the cost model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CostConstants {
    /// Multiplier on the cost of moving a tensor whose buffer is not one contiguous run.
    pub noncontiguous_penalty: u64,
    /// Cost of starting a parallel loop (thread wake-up and join).
    pub parallel_setup: u64,
    /// Cost per iteration of a parallel loop, per thread.
    pub parallel_per_iteration: u64,
    /// Cost of issuing one load (a vector load or a broadcast) on the load side of a register
    /// block's step: FMAs and loads issue on separate ports, so a step costs the larger of its
    /// FMA side and its load side (`crate::cost::register_block::register_step_stall`). x86: 2, as an FMA
    /// (two of each per cycle).
    pub load_issue: u64,
    /// The independent accumulators a chain of multiply-adds needs to issue them at full rate: a
    /// chain with fewer waits for each one's previous multiply-add, and its steps take at least
    /// `per_unit` times this many each, less what `fma_window` overlaps
    /// (`crate::cost::register_block::loop_stalls`). x86: 10 (an FMA's latency of 4 cycles at two a
    /// cycle is 8, and on an AMD Zen 5 register blocks of 8 accumulators run at 85% of the FMA peak:
    /// `docs/cost-model.md`, "Accumulation chains"). 0 or 1: no bound.
    pub fma_chains: u64,
    /// The multiply-adds the core runs ahead over while a chain waits: a chain of fewer (its
    /// accumulators times its steps) overlaps its wait with the chains after it, and waits only
    /// as `fma_window / k` chains' accumulators would (`crate::cost::register_block::loop_stalls`). x86: 128
    /// (on Zen 5 an 8 x 8 x 8 matmul of one accumulator a row ran as fast as one of 8, and 16 x 16
    /// x 16 of one a row, at 0.63 cycles an FMA, as about 6 chains would, where the window says 8:
    /// `docs/cost-model.md`, "Accumulation chains"). 0: no overlap.
    pub fma_window: u64,
    /// Bytes of a virtual-memory page (4096 on x86). A strided stream whose rows are more than
    /// half a page apart starts a new page at nearly every row, where the hardware prefetchers
    /// stop: only such streams make a block pay a strided stall and offer a packed copy
    /// (`crate::cost::rows_on_their_own_pages`).
    pub page_bytes: u64,
    /// Per-kernel constants; kernels missing here use their built-in defaults.
    pub kernels: BTreeMap<KernelKind, KernelCost>,
    /// Per element type (of a kernel's first operand), constants that replace `kernels`' for
    /// that type: an integer multiply-add is a multiply and an add (`vpmulld`, half the FMA's
    /// throughput, then `vpaddd`), not one FMA. TOML: `[costs.dtype_kernels.u32.BroadcastVecMultAdd]`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub dtype_kernels: BTreeMap<Dtype, BTreeMap<KernelKind, KernelCost>>,
}

impl Default for CostConstants {
    fn default() -> Self {
        CostConstants {
            noncontiguous_penalty: 1,
            parallel_setup: 20_000,
            parallel_per_iteration: 60,
            load_issue: 2,
            fma_chains: 10,
            fma_window: 128,
            page_bytes: 4096,
            kernels: KernelKind::ALL.iter().map(|k| (*k, k.default_cost())).collect(),
            dtype_kernels: default_dtype_kernels(),
        }
    }
}

/// The built-in per-dtype constants: `BroadcastVecMultAdd` on 32-bit integers costs twice the
/// f32 FMA's per vector (a multiply at half its throughput, and an add).
fn default_dtype_kernels() -> BTreeMap<Dtype, BTreeMap<KernelKind, KernelCost>> {
    let integer = BTreeMap::from([(KernelKind::BroadcastVecMultAdd, KernelCost { fixed: 1, per_unit: 4 })]);
    BTreeMap::from([(Dtype::U32, integer.clone()), (Dtype::I32, integer)])
}

impl CostConstants {
    /// The constants of one kernel.
    pub fn kernel(&self, kind: KernelKind) -> KernelCost {
        self.kernels.get(&kind).copied().unwrap_or_else(|| kind.default_cost())
    }

    /// The constants of one kernel on operands of `dtype`: the per-dtype entry if there is one,
    /// else [`CostConstants::kernel`].
    pub fn kernel_for(&self, kind: KernelKind, dtype: Dtype) -> KernelCost {
        self.dtype_kernels
            .get(&dtype)
            .and_then(|m| m.get(&kind))
            .copied()
            .unwrap_or_else(|| self.kernel(kind))
    }
}
