//! `MemsetZero`: sets a contiguous buffer in memory or a cache to zero.
//!
//! ```text
//! ordinal:  4
//! constants: fixed 1, per_unit 0
//! applies:  FillZero of a tensor in memory or a cache that is one contiguous run
//! cost:     fixed + move_cost(out)
//! ```

use super::in_memory;
use super::{CalibrationCase, CalibrationSites, KernelDefinition};
use crate::cost::{Cost, move_cost};
use crate::dtype::Dtype;
use crate::spec::{FillValue, LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration);

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], _dtypes: &[Dtype], _target: &Target) -> bool {
    kind == (PrimitiveKind::Fill { value: FillValue::Zero })
        && matches!(levels[0], LevelKind::Cache | LevelKind::Memory)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    let out = spec.output();
    spec.kind == (PrimitiveKind::Fill { value: FillValue::Zero })
        && in_memory(out, target)
        && out.is_fully_contiguous()
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    c.fixed.saturating_add(move_cost(spec.output(), target))
}

/// Calibration: 1, 4, 16 and 64 cache lines (at most 4 KiB) in L1.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    [1u32, 4, 16, 64]
        .iter()
        .map(|lines| lines * s.line_bytes)
        .filter(|&bytes| bytes <= 4096)
        .map(|bytes| {
            CalibrationCase::new(
                format!("{bytes}B"),
                format!("FillZero({}, f32 {} row-major, serial)", bytes / 4, s.l1),
            )
        })
        .collect()
}
