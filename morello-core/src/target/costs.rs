//! Cost constants of a target: everything the cost model multiplies, as data.
//!
//! The formulas live in `crate::cost` and in each kernel's file; the numbers live here so that
//! `morello calibrate` can fit them to measurements and write them to a target file.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::kernels::KernelKind;

/// Cost of one kernel application: `fixed + per_unit * units`, where each kernel defines its
/// units (vectors, elements, loop steps) in its own file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelCost {
    /// Cost paid once per application.
    pub fixed: u64,
    /// Cost per unit of work.
    pub per_unit: u64,
}

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
    /// Per-kernel constants; kernels missing here use their built-in defaults.
    pub kernels: BTreeMap<KernelKind, KernelCost>,
}

impl Default for CostConstants {
    fn default() -> Self {
        CostConstants {
            noncontiguous_penalty: 1,
            parallel_setup: 20_000,
            parallel_per_iteration: 60,
            kernels: KernelKind::ALL.iter().map(|k| (*k, k.default_cost())).collect(),
        }
    }
}

impl CostConstants {
    /// The constants of one kernel.
    pub fn kernel(&self, kind: KernelKind) -> KernelCost {
        self.kernels.get(&kind).copied().unwrap_or_else(|| kind.default_cost())
    }
}
