//! `DotProductLoop`: `out += Σ_k lhs[k] * rhs[k]` in f32, with four vector accumulators of the
//! target's widest vector, summed horizontally at the end.
//!
//! ```text
//! {
//!   const float *a9 = &lhs[...];  const float *b9 = &rhs[...];
//!   __m256 acc9_0 = _mm256_setzero_ps(), ...;
//!   for (int64_t k9 = 0; k9 < 64; k9 += 32) {         (4 registers per step)
//!     acc9_0 = _mm256_fmadd_ps(_mm256_loadu_ps(a9 + k9), _mm256_loadu_ps(b9 + k9), acc9_0);
//!     ...
//!   }
//!   (the remaining registers, unrolled)
//!   acc9_0 = _mm256_add_ps(acc9_0, acc9_1); ...
//!   out[...] += morello_hsum_m256(acc9_0);
//! }
//! ```
//!
//! Both inputs must be contiguous runs in `k` order (checked).

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;

use super::{run_start, unsupported, zeros};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::vector::{VectorIsa, VectorType};
use crate::error::CodegenError;
use morello_core::target::IsaFeature;

/// Vector accumulators (the catalogue's `ACCUMULATORS`).
pub(super) const ACCUMULATORS: u32 = 4;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(KernelKind::DotProductLoop, spec, e, why);
    let &[1, 1, k, 1] = spec.shape.dims() else { return Err(fail(e, "not a [1, 1, K, 1] dot product")) };
    if spec.operands.iter().any(|o| o.dtype != Dtype::F32) {
        return Err(fail(e, "not f32"));
    }
    let lanes = e.target.max_vector_bytes() / 4;
    let vector = VectorType::new(VectorIsa::X86, Dtype::F32, lanes)?;
    if let Some(feature) = vector.feature() {
        e.require(feature, "the dot product's vectors")?;
    }
    if lanes == 0 || k % lanes != 0 {
        return Err(fail(e, "K is not a multiple of the vector's lanes"));
    }
    let fma = e.has(IsaFeature::Fma);
    if fma {
        e.require(IsaFeature::Fma, "fused multiply-add")?;
    }
    let DotProduct { a, b, acc, kv, out, registers } = open(e, spec, views, lanes, "float", vector)?;
    let update = |j: u32, offset: &str| -> Result<String, CodegenError> {
        let x = vector.load(&format!("{a} + {offset}"));
        let y = vector.load(&format!("{b} + {offset}"));
        Ok(format!("{acc}_{j} = {};", vector.mul_add(&x, &y, &format!("{acc}_{j}"), fma)?))
    };
    accumulate_over_k(e, k, lanes, registers, &kv, update)?;
    sum_accumulators(e, vector, &acc, registers);
    let (total, helper) = vector.horizontal_sum(&format!("{acc}_0"));
    e.helpers.extend(helper);
    e.out.line(format!("{out} += {total};"));
    e.out.close();
    Ok(())
}

/// The names a dot-product loop's block declares, and the output element it adds to.
pub(super) struct DotProduct {
    /// The pointer to `lhs`'s run.
    pub a: String,
    /// The pointer to `rhs`'s run.
    pub b: String,
    /// The accumulators' prefix (`{acc}_0`, `{acc}_1`, ...).
    pub acc: String,
    /// The loop counter over `k`.
    pub kv: String,
    /// The C lvalue of the output element.
    pub out: String,
    /// How many accumulators are declared.
    pub registers: u32,
}

/// Opens the block of a `[1, 1, K, 1]` dot product that reads `per_register` elements into each
/// accumulator: declares pointers (to `element` C values) to the runs of `lhs` and `rhs` along `k`
/// and up to [`ACCUMULATORS`] zeroed accumulators of `vector`.
pub(super) fn open(
    e: &mut Emitter<'_>,
    spec: &LogicalSpec,
    views: &[View],
    per_register: u32,
    element: &str,
    vector: VectorType,
) -> Result<DotProduct, CodegenError> {
    let k = spec.shape.dim(2);
    let a_start = run_start(e, &views[0], 3, 2, k)?;
    let b_start = run_start(e, &views[1], 3, 1, k)?;
    let a_address = e.address(&views[0], &a_start)?;
    let b_address = e.address(&views[1], &b_start)?;
    let out = e.element(&views[2], &zeros(spec, 2))?;
    let id = e.fresh();
    let (a, b, acc, kv) = (format!("a{id}"), format!("b{id}"), format!("acc{id}"), format!("k{id}"));
    let registers = (k / per_register).min(ACCUMULATORS);
    e.out.open("{");
    e.out.line(format!("const {element} *{a} = {a_address};"));
    e.out.line(format!("const {element} *{b} = {b_address};"));
    let inits: Vec<String> = (0..registers).map(|j| format!("{acc}_{j} = {}", vector.zero())).collect();
    e.out.line(format!("{} {};", vector.c_type(), inits.join(", ")));
    Ok(DotProduct { a, b, acc, kv, out, registers })
}

/// The updates of a dot product over `k` elements, `per_register` at a time into `registers`
/// accumulators: a loop (counter `kv`) over the full rounds when there is more than one, else the
/// round unrolled, then the remainder with one update per `per_register` elements.
/// `update(j, offset)` is the C statement adding the elements at `offset` into accumulator `j`.
pub(super) fn accumulate_over_k(
    e: &mut Emitter<'_>,
    k: u32,
    per_register: u32,
    registers: u32,
    kv: &str,
    update: impl Fn(u32, &str) -> Result<String, CodegenError>,
) -> Result<(), CodegenError> {
    let step = registers * per_register;
    let full = k / step * step;
    if full > step {
        e.out.open(format!("for (int64_t {kv} = 0; {kv} < {full}; {kv} += {step}) {{"));
        for j in 0..registers {
            let offset = if j == 0 { kv.to_string() } else { format!("{kv} + {}", j * per_register) };
            e.out.line(update(j, &offset)?);
        }
        e.out.close();
    } else {
        for j in 0..registers {
            e.out.line(update(j, &(j * per_register).to_string())?);
        }
    }
    for (j, offset) in (full..k).step_by(per_register as usize).enumerate() {
        e.out.line(update(j as u32, &offset.to_string())?);
    }
    Ok(())
}

/// Adds accumulators `1..n` into accumulator 0, pairwise.
pub(super) fn sum_accumulators(e: &mut Emitter<'_>, vector: VectorType, acc: &str, n: u32) {
    let mut width = 1;
    while width < n {
        for j in (0..n).step_by(2 * width as usize) {
            if j + width < n {
                let sum = vector.add_f32(&format!("{acc}_{j}"), &format!("{acc}_{}", j + width));
                e.out.line(format!("{acc}_{j} = {sum};"));
            }
        }
        width *= 2;
    }
}
