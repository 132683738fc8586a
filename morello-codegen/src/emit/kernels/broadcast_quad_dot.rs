//! `BroadcastQuadDot`: `out[v] += Σ_{j<4} lhs[j] * rhs[j][v]`, four u8 values of `lhs` loaded as
//! one 32-bit word and broadcast, each output register's 16 lanes updated by `vpdpbusd` with the
//! 64 i8 values of `rhs` it meets (four per lane, the VNNI layout).
//!
//! ```text
//! {
//!   const __m512i q7 = _mm512_broadcastd_epi32(_mm_loadu_si32((const void *)(&lhs[k_2])));
//!   v3_0 = morello_dpbusd_m512(v3_0, q7, _mm512_loadu_si512((const void *)(&rhs[4 * n_1 + ...])));
//!   v3_1 = morello_dpbusd_m512(v3_1, q7, v5_1);                (rhs in registers)
//! }
//! ```
//!
//! `morello_dpbusd_m512` is `vpdpbusd` in an `asm` statement, which keeps each accumulator in one
//! register where gcc's `_mm512_dpbusd_epi32` spills register blocks (`Helper::DpbusdM512`).
//!
//! Checked before writing: `lhs`'s four values are consecutive in `k` order, and lane `j` of each
//! output register meets the four values of `k` of its column at offsets `4 j .. 4 j + 3` of one
//! run of `rhs` (so one load gives `vpdpbusd` the bytes of every lane) or, with `rhs` in vector
//! registers, at lanes `4 j .. 4 j + 3` of one register of 64 i8. `_mm_loadu_si32` reads the
//! word without an aliasing or alignment assumption.

use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;
use morello_core::target::IsaFeature;

use super::{Register, consecutive, project, unsupported, whole_registers};
use crate::emit::Emitter;
use crate::emit::buffers::View;
use crate::emit::helpers::Helper;
use crate::error::CodegenError;

/// What differs between the `vpdpbusd` steps of 512-bit vectors (this kernel, AVX-512 VNNI)
/// and 256-bit ones (`BroadcastQuadDotAvx`, AVX-VNNI): the lanes, the C names and the features.
pub(super) struct QuadForm {
    /// The kernel emitted (for errors).
    pub kernel: KernelKind,
    /// i32 lanes of an output register; an `rhs` register holds four times as many i8.
    pub lanes: u32,
    /// The C vector type, e.g. `__m512i`.
    pub c_type: &'static str,
    /// The intrinsic broadcasting a 32-bit word from an `__m128i`.
    pub broadcast: &'static str,
    /// The `vpdpbusd` helper.
    pub helper: Helper,
    /// The helper's C name.
    pub helper_name: &'static str,
    /// The features the code needs, each with what needs it.
    pub isa: &'static [(IsaFeature, &'static str)],
}

const FORM: QuadForm = QuadForm {
    kernel: KernelKind::BroadcastQuadDot,
    lanes: 16,
    c_type: "__m512i",
    broadcast: "_mm512_broadcastd_epi32",
    helper: Helper::DpbusdM512,
    helper_name: "morello_dpbusd_m512",
    isa: &[(IsaFeature::Avx512f, "512-bit vectors"), (IsaFeature::Avx512vnni, "vpdpbusd")],
};

/// Values of `k` one `vpdpbusd` sums per lane.
const QUAD: u32 = 4;

/// The register of an `rhs` in vector registers whose lane `j` holds `sources[j]`, for all
/// `QUAD * lanes` (the four values of `k` of each of an output register's columns, in order);
/// `None` if they are not one whole register in that order.
fn rhs_register(e: &Emitter<'_>, view: &View, sources: &[Vec<u32>], lanes: u32) -> Option<u64> {
    if e.vector_type(view).ok()?.lanes != QUAD * lanes {
        return None;
    }
    let mut register = None;
    for (j, point) in sources.iter().enumerate() {
        let lane = e.lane(view, point).ok()?;
        if lane.lane != j as u64 || register.is_some_and(|r| r != lane.register) {
            return None;
        }
        register = Some(lane.register);
    }
    register
}

pub(super) fn emit(e: &mut Emitter<'_>, spec: &LogicalSpec, views: &[View]) -> Result<(), CodegenError> {
    emit_form(e, spec, views, &FORM)
}

/// The statements of a `vpdpbusd` step of `form`'s width.
pub(super) fn emit_form(
    e: &mut Emitter<'_>,
    spec: &LogicalSpec,
    views: &[View],
    form: &QuadForm,
) -> Result<(), CodegenError> {
    let fail = |e: &Emitter<'_>, why: &str| unsupported(form.kernel, spec, e, why);
    if spec.shape.dims() != [1, 1, QUAD, spec.shape.dim(3)] {
        return Err(fail(e, "not four values of k of a row [1, 1, 4, n]"));
    }
    let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).collect();
    if dtypes != [Dtype::U8, Dtype::I8, Dtype::I32] {
        return Err(fail(e, "not u8 x i8 -> i32"));
    }
    let vector = e.vector_type(&views[2])?;
    if vector.lanes != form.lanes {
        return Err(fail(e, &format!("the output's registers are not {} i32 lanes", form.lanes)));
    }
    for (feature, what) in form.isa {
        e.require(*feature, what)?;
    }
    let quad: Vec<Vec<u32>> = (0..QUAD).map(|k| vec![0, 0, k]).collect();
    let quad_start = consecutive(e, &views[0], &quad)?;
    let quad_address = e.address(&views[0], &quad_start)?;
    // What each output register meets: lane j's four values of k at bytes 4 j .. 4 j + 3 of one
    // run of `rhs` in memory, or of one register of `rhs`.
    let rhs_in_registers = e.in_vector_registers(&views[1]);
    let mut rows = Vec::new();
    for Register { index, points } in whole_registers(e, &views[2], &spec.output().shape)? {
        // Output [b, m, n] is iteration [b, m, k, n].
        let sources: Vec<Vec<u32>> = points
            .iter()
            .flat_map(|p| (0..QUAD).map(move |k| project(spec, 1, &[p[0], p[1], k, p[2]])))
            .collect();
        let row = if rhs_in_registers {
            let register = rhs_register(e, &views[1], &sources, form.lanes).ok_or_else(|| {
                fail(e, "an output register's quads are not one register of rhs, in lane order")
            })?;
            e.register_name(&views[1], register)
        } else {
            let start = consecutive(e, &views[1], &sources)?;
            vector.load(&e.address(&views[1], &start)?)
        };
        rows.push((index, row));
    }
    let broadcast = format!("q{}", e.fresh());
    e.helpers.insert(form.helper);
    let (c_type, splat, helper) = (form.c_type, form.broadcast, form.helper_name);
    e.out.open("{");
    e.out.line(format!(
        "const {c_type} {broadcast} = {splat}(_mm_loadu_si32((const void *)({quad_address})));"
    ));
    for (register, row) in rows {
        let out = e.register_name(&views[2], register);
        e.out.line(format!("{out} = {helper}({out}, {broadcast}, {row});"));
    }
    e.out.close();
    Ok(())
}
