//! `DotProductBf16`: `out += Σ_k lhs[k] * rhs[k]` with bf16 inputs and an f32 result, using the
//! AVX-512 BF16 instruction `vdpbf16ps` (32 bf16 pairs per instruction).
//!
//! ```text
//! ordinal:  8
//! constants: fixed 4, per_unit 1 per K / 32
//! isa:      Avx512f, Avx512bf16
//! applies:  MatmulAccum [1, 1, K, 1], lhs and rhs bf16, out f32; lhs and rhs in memory or a
//!           cache, each one contiguous run in k order (no odd-even strip); out not in vector
//!           registers; K a multiple of 32
//! memory:   ACCUMULATORS + 1 vector registers (`DotProductLoop`'s, which it shares)
//! cost:     fixed + per_unit * K / 32 + Σ move_cost(operand)
//! ```

use super::{CalibrationCase, CalibrationSites, KernelDefinition, KernelKind, dot_product_loop, sized};
use crate::cost::Cost;
use crate::dtype::Dtype;
use crate::spec::{LogicalSpec, PrimitiveKind};
use crate::target::LevelKind;
use crate::target::{KernelCost, Target};

/// The catalogue entry.
pub(super) const DEFINITION: KernelDefinition =
    KernelDefinition::rules(applies, could_apply, cost, calibration).memory(dot_product_loop::memory);

/// bf16 pairs one `vdpbf16ps` consumes.
pub const STEP: u32 = 32;

/// Whether the kernel could apply to some spec of this kind, levels and dtypes.
fn could_apply(kind: PrimitiveKind, levels: &[LevelKind], dtypes: &[Dtype], target: &Target) -> bool {
    KernelKind::DotProductBf16.required_isa().iter().all(|f| target.has_isa(*f))
        && dtypes == [Dtype::Bf16, Dtype::Bf16, Dtype::F32]
        && dot_product_loop::could_stream(kind, levels)
}

fn applies(spec: &LogicalSpec, target: &Target) -> bool {
    if spec.kind != (PrimitiveKind::Matmul { accum: true }) {
        return false;
    }
    let [1, 1, k, 1] = spec.shape.dims() else { return false };
    let dtypes = [&spec.operands[0], &spec.operands[1], &spec.operands[2]].map(|o| o.dtype);
    KernelKind::DotProductBf16.required_isa().iter().all(|f| target.has_isa(*f))
        && dtypes == [Dtype::Bf16, Dtype::Bf16, Dtype::F32]
        && k % STEP == 0
        && dot_product_loop::streams_in_k_order(spec, target)
}

fn cost(spec: &LogicalSpec, target: &Target, c: KernelCost) -> Cost {
    dot_product_loop::steps_cost(spec, target, c, u64::from(spec.shape.dim(2) / STEP))
}

/// Calibration: K = 128, 512 and 2048 bf16 pairs in L1.
fn calibration(s: &CalibrationSites) -> Vec<CalibrationCase> {
    let (Some(rf), l1) = (&s.rf, &s.l1) else { return Vec::new() };
    let operands = format!("bf16 {l1} row-major, bf16 {l1} row-major, f32 {rf} row-major");
    sized("k", [128, 512, 2048], |k| format!("MatmulAccum(1x1x{k}x1, {operands}, serial)"))
}
