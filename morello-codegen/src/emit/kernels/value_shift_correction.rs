//! `ValueShiftCorrection`: one column of `out = -128 Σ_k rhs`.
//!
//! ```text
//! {
//!   const int8_t *r9 = &rhs[...];
//!   uint32_t s9 = 0;
//!   for (int64_t q9 = 0; q9 < 64; q9++) {      (strips of 4 values of k, 4 * n apart)
//!     s9 += (uint32_t)r9[q9 * 256 + 0]; ... s9 += (uint32_t)r9[q9 * 256 + 3];
//!   }
//!   s9 = 0u - (s9 << 7);
//!   out[...] = (int32_t)s9;
//! }
//! ```
//!
//! The walk along `k` is checked at every value of `k`: element `k` at `q S + r` from the first
//! (`k = g q + r`, `g` 1 for rows, the strip for strip layouts); a column that is neither is
//! summed element by element. The sum is kept in `uint32_t`, so
//! it wraps as the vector kernel's i32 lanes and the reference do (never within the matmul's
//! bound on `K`, `ShiftCorrection`'s doc), without C's undefined signed overflow.

use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;

use super::{arithmetic, unsupported};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::error::CodegenError;

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    let &[1, depth, 1] = spec.shape.dims() else {
        return Err(unsupported(KernelKind::ValueShiftCorrection, spec, e, "not one column of one batch"));
    };
    let (rhs, out) = (&views[0], &views[1]);
    let id = e.fresh();
    let (r, s, q) = (format!("r{id}"), format!("s{id}"), format!("q{id}"));
    e.out.open("{");
    let start = e.offset_at(rhs, &[0, 0, 0])?;
    let address = e.address(rhs, &start)?;
    e.out.line(format!("const int8_t *{r} = {address};"));
    e.out.line(format!("uint32_t {s} = 0;"));
    match [1, 2, 4].into_iter().find_map(|g| Walk::find(e, rhs, depth, g, |k| vec![0, k, 0]).transpose()) {
        Some(walk) => {
            let walk = walk?;
            let adds: Vec<String> = (0..walk.strip)
                .map(|j| format!("{s} += (uint32_t){r}[{q} * {} + {j}];", walk.stride))
                .collect();
            e.out.open(format!("for (int64_t {q} = 0; {q} < {}; {q}++) {{", depth / walk.strip));
            e.out.line(adds.join(" "));
            e.out.close();
        }
        None => {
            for k in 0..depth {
                let element = e.element(rhs, &[0, k, 0])?;
                e.out.line(format!("{s} += (uint32_t){element};"));
            }
        }
    }
    e.out.line(format!("{s} = 0u - ({s} << 7);"));
    let element = e.element(out, &[0])?;
    e.out.line(format!("{element} = (int32_t){s};"));
    e.out.close();
    Ok(())
}

/// A walk along one dim of a view in strips of `strip`: element `i = strip q + r` at `q stride + r`
/// from the first.
#[derive(Debug, Clone, Copy)]
pub(super) struct Walk {
    /// Values of the dim per strip.
    pub strip: u32,
    /// Elements between strips.
    pub stride: i64,
}

impl Walk {
    /// The walk of `len` elements (`point(i)` the view's point of element `i`) in strips of
    /// `strip`, if every element is where it says (checked one by one); `None` if not, or if
    /// `strip` does not divide `len`.
    pub fn find(
        e: &Emitter<'_>,
        view: &View,
        len: u32,
        strip: u32,
        point: impl Fn(u32) -> Vec<u32>,
    ) -> Result<Option<Walk>, CodegenError> {
        if len % strip != 0 {
            return Ok(None);
        }
        let start = e.offset_at(view, &point(0))?;
        let gap = |i: u32| -> Result<Option<i64>, CodegenError> {
            let offset = e.offset_at(view, &point(i))?;
            Ok(offset.sub(&start).and_then(|d| d.simplify(&e.env)).map_err(arithmetic)?.as_constant())
        };
        let stride = if len > strip { gap(strip)? } else { Some(0) };
        let Some(stride) = stride else { return Ok(None) };
        for i in 0..len {
            let expected = i64::from(i / strip) * stride + i64::from(i % strip);
            if gap(i)? != Some(expected) {
                return Ok(None);
            }
        }
        Ok(Some(Walk { strip, stride }))
    }
}
