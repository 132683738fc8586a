//! The small C functions an emitted kernel may call, defined before it only when it calls them.
//!
//! Each definition sits behind its own include guard, so several emitted kernels can share one
//! translation unit (tests batch kernels that way) without redefinitions. Every helper is
//! `static inline` and marked unused, which keeps `-Wall -Wextra` quiet on gcc and clang.

/// A helper function of the emitted C.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, strum::EnumIter)]
pub enum Helper {
    /// `morello_floordiv(a, c)`: division rounding toward negative infinity (`c > 0`).
    FloorDiv,
    /// `morello_mod(a, c)`: the remainder in `[0, c)` (`c > 0`).
    Mod,
    /// `morello_bf16_to_f32(bits)`: widens a bf16 (its bits) to float, exactly.
    Bf16ToF32,
    /// `morello_f32_to_bf16(x)`: rounds a float to the nearest bf16, ties to even.
    F32ToBf16,
    /// `morello_hsum_m128(v)`: the sum of the four lanes of an `__m128`.
    HsumM128,
    /// `morello_hsum_m256(v)`: the sum of the eight lanes of an `__m256`.
    HsumM256,
    /// `morello_exp_m128(v)`: `e^x` lane by lane (the polynomial of `exp_definition`).
    ExpM128,
    /// `morello_exp_m256(v)`.
    ExpM256,
    /// `morello_exp_m512(v)`.
    ExpM512,
    /// `morello_gelu_m128(v)`: GELU (tanh form) lane by lane, `x / (1 + e^(-2y))` with
    /// `y = sqrt(2 / pi) (x + 0.044715 x^3)`.
    GeluM128,
    /// `morello_gelu_m256(v)`.
    GeluM256,
    /// `morello_gelu_m512(v)`.
    GeluM512,
    /// `morello_gelu_f32(x)`: the 4-lane GELU on one float.
    GeluF32,
    /// `morello_exp_f32x4(v)`: `e^x` of a NEON `float32x4_t` (the polynomial of `exp_definition`).
    ExpF32x4,
    /// `morello_gelu_f32x4(v)`: GELU of a NEON `float32x4_t`, as `morello_gelu_m128`.
    GeluF32x4,
    /// `morello_gelu_f32_neon(x)`: the NEON 4-lane GELU on one float.
    GeluF32Neon,
    /// `morello_dpbusd_m512(acc, u8, i8)`: `vpdpbusd`, each i32 lane of `acc` plus the four
    /// products of the u8 bytes of `u8` and the i8 bytes of `i8` beside it (no saturation), as
    /// `_mm512_dpbusd_epi32` computes. An `asm` statement with the accumulator an in-out register
    /// operand: gcc 12 compiles a loop of `_mm512_dpbusd_epi32` with a constant trip count with
    /// two registers per accumulator, copied back and forth every step, and spills a 6 x 4 block
    /// (24 accumulators) to the stack; through this statement each accumulator keeps one
    /// register (gcc and clang alike).
    DpbusdM512,
    /// `morello_dpbusd_m256(acc, u8, i8)`: AVX-VNNI's `vpdpbusd` on 256-bit vectors, as
    /// `_mm256_dpbusd_avx_epi32` computes, through an `asm` statement for the reason of
    /// [`Helper::DpbusdM512`] (gcc 12 spills a 6 x 2 block of the intrinsic). `{vex}` selects the
    /// VEX encoding (registers 0-15, `x` operands), which AVX-VNNI is: without it the assembler
    /// picks the EVEX form of AVX-512 VNNI, which a core with AVX-VNNI alone lacks.
    DpbusdM256,
}

/// The intrinsic prefix, vector type, integer vector type and integer-to-float cast of a width.
fn width_names(bits: u32) -> (&'static str, &'static str, &'static str, &'static str) {
    match bits {
        128 => ("_mm", "__m128", "__m128i", "_mm_castsi128_ps"),
        256 => ("_mm256", "__m256", "__m256i", "_mm256_castsi256_ps"),
        _ => ("_mm512", "__m512", "__m512i", "_mm512_castsi512_ps"),
    }
}

/// `morello_exp_m<bits>`: `e^x` for f32 lanes.
///
/// ```text
/// x := clamp(x, -87, 88)                        (e^-87 is above the smallest normal float)
/// k := round(x log2 e),  r := x - k ln2         (ln2 in two parts, Cody-Waite: |r| <= ln2 / 2)
/// e^r ~ Σ_{i <= 7} r^i / i!                     (Horner, fused multiply-adds)
/// e^x = e^r 2^k                                 (2^k built in the exponent bits: k + 127 << 23)
/// ```
///
/// The truncated series is within `0.347^8 / 8! * e^0.347 < 1e-8` relative of `e^r`; with the
/// roundings the result is within `8 u` (4.8e-7, `u = 2^-24`) relative of `e^x` on `[-87, 88]` (the bound the
/// softmax tolerance uses).
fn exp_definition(bits: u32) -> String {
    let (p, t, ti, cast) = width_names(bits);
    let c = |v: &str| format!("{p}_set1_ps({v})");
    let mut poly = format!("  {t} q = {};\n", c(EXP_SERIES[0]));
    for coefficient in &EXP_SERIES[1..] {
        poly += &format!("  q = {p}_fmadd_ps(q, r, {});\n", c(coefficient));
    }
    let [lo, hi, log2e, ln2hi, ln2lo] = exp_constants(c);
    format!(
        "#ifndef MORELLO_HELPER_EXP_M{bits}\n#define MORELLO_HELPER_EXP_M{bits}\n\
         static inline __attribute__((unused)) {t} morello_exp_m{bits}({t} x) {{\n\
         \x20 x = {p}_min_ps({p}_max_ps(x, {lo}), {hi});\n\
         \x20 {ti} k = {p}_cvtps_epi32({p}_mul_ps(x, {log2e}));\n\
         \x20 {t} n = {p}_cvtepi32_ps(k);\n\
         \x20 {t} r = {p}_fnmadd_ps(n, {ln2hi}, x);\n\
         \x20 r = {p}_fnmadd_ps(n, {ln2lo}, r);\n\
         {poly}\
         \x20 {ti} scale = {p}_slli_epi32({p}_add_epi32(k, {p}_set1_epi32(127)), 23);\n\
         \x20 return {p}_mul_ps(q, {cast}(scale));\n\
         }}\n#endif\n"
    )
}

/// `morello_gelu_m<bits>`: GELU, tanh form, as `x / (1 + e^(-2y))`.
fn gelu_definition(bits: u32) -> String {
    let (p, t, _, _) = width_names(bits);
    format!(
        "#ifndef MORELLO_HELPER_GELU_M{bits}\n#define MORELLO_HELPER_GELU_M{bits}\n\
         static inline __attribute__((unused)) {t} morello_gelu_m{bits}({t} x) {{\n\
         \x20 {t} cube = {p}_mul_ps({p}_mul_ps(x, x), x);\n\
         \x20 {t} y = {p}_mul_ps({p}_set1_ps(0.797884561f), {p}_fmadd_ps({p}_set1_ps(0.044715f), cube, x));\n\
         \x20 {t} e = morello_exp_m{bits}({p}_mul_ps(y, {p}_set1_ps(-2.0f)));\n\
         \x20 return {p}_div_ps(x, {p}_add_ps({p}_set1_ps(1.0f), e));\n\
         }}\n#endif\n"
    )
}

/// The coefficients of `exp_definition`'s series, highest power first: `1/7!, 1/6!, ..., 1/1!, 1`.
const EXP_SERIES: [&str; 8] = [
    "1.98412698e-4f",
    "1.38888889e-3f",
    "8.33333333e-3f",
    "4.16666667e-2f",
    "1.66666667e-1f",
    "0.5f",
    "1.0f",
    "1.0f",
];

/// The constants of `exp_definition`, each splatted by `splat`: the clamp's low and high ends,
/// `log2 e`, and `ln 2` in two parts (high, low).
fn exp_constants(splat: impl Fn(&str) -> String) -> [String; 5] {
    ["-87.0f", "88.0f", "1.44269504f", "0.693359375f", "-2.12194440e-4f"].map(splat)
}

/// `morello_exp_f32x4`: `exp_definition`'s clamp, reduction, series and scaling in NEON
/// intrinsics (`vcvtnq_s32_f32` rounds to nearest, as `_mm_cvtps_epi32` does in the default
/// rounding mode; `vfmsq_f32(a, b, c) = a - b c`).
fn exp_neon_definition() -> String {
    let c = |v: &str| format!("vdupq_n_f32({v})");
    let mut poly = format!("  float32x4_t q = {};\n", c(EXP_SERIES[0]));
    for coefficient in &EXP_SERIES[1..] {
        poly += &format!("  q = vfmaq_f32({}, q, r);\n", c(coefficient));
    }
    let [lo, hi, log2e, ln2hi, ln2lo] = exp_constants(c);
    format!(
        "#ifndef MORELLO_HELPER_EXP_F32X4\n#define MORELLO_HELPER_EXP_F32X4\n\
         static inline __attribute__((unused)) float32x4_t morello_exp_f32x4(float32x4_t x) {{\n\
         \x20 x = vminq_f32(vmaxq_f32(x, {lo}), {hi});\n\
         \x20 int32x4_t k = vcvtnq_s32_f32(vmulq_f32(x, {log2e}));\n\
         \x20 float32x4_t n = vcvtq_f32_s32(k);\n\
         \x20 float32x4_t r = vfmsq_f32(x, n, {ln2hi});\n\
         \x20 r = vfmsq_f32(r, n, {ln2lo});\n\
         {poly}\
         \x20 int32x4_t scale = vshlq_n_s32(vaddq_s32(k, vdupq_n_s32(127)), 23);\n\
         \x20 return vmulq_f32(q, vreinterpretq_f32_s32(scale));\n\
         }}\n#endif\n"
    )
}

impl Helper {
    /// Helpers this one calls (defined before it).
    fn dependencies(self) -> &'static [Helper] {
        match self {
            Helper::HsumM256 => &[Helper::HsumM128],
            Helper::GeluM128 => &[Helper::ExpM128],
            Helper::GeluM256 => &[Helper::ExpM256],
            Helper::GeluM512 => &[Helper::ExpM512],
            Helper::GeluF32 => &[Helper::ExpM128, Helper::GeluM128],
            Helper::GeluF32x4 => &[Helper::ExpF32x4],
            Helper::GeluF32Neon => &[Helper::ExpF32x4, Helper::GeluF32x4],
            _ => &[],
        }
    }

    /// The guarded C definition.
    fn definition(self) -> std::borrow::Cow<'static, str> {
        match self {
            Helper::ExpM128 => return exp_definition(128).into(),
            Helper::ExpM256 => return exp_definition(256).into(),
            Helper::ExpM512 => return exp_definition(512).into(),
            Helper::GeluM128 => return gelu_definition(128).into(),
            Helper::GeluM256 => return gelu_definition(256).into(),
            Helper::GeluM512 => return gelu_definition(512).into(),
            Helper::ExpF32x4 => return exp_neon_definition().into(),
            Helper::GeluF32x4 => {
                return "#ifndef MORELLO_HELPER_GELU_F32X4\n#define MORELLO_HELPER_GELU_F32X4\n\
                        static inline __attribute__((unused)) float32x4_t morello_gelu_f32x4(float32x4_t x) {\n\
                        \x20 float32x4_t cube = vmulq_f32(vmulq_f32(x, x), x);\n\
                        \x20 float32x4_t y = vmulq_f32(vdupq_n_f32(0.797884561f), vfmaq_f32(x, vdupq_n_f32(0.044715f), cube));\n\
                        \x20 float32x4_t e = morello_exp_f32x4(vmulq_f32(y, vdupq_n_f32(-2.0f)));\n\
                        \x20 return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), e));\n\
                        }\n#endif\n"
                    .into();
            }
            Helper::GeluF32Neon => {
                return "#ifndef MORELLO_HELPER_GELU_F32_NEON\n#define MORELLO_HELPER_GELU_F32_NEON\n\
                        static inline __attribute__((unused)) float morello_gelu_f32_neon(float x) {\n\
                        \x20 return vgetq_lane_f32(morello_gelu_f32x4(vdupq_n_f32(x)), 0);\n\
                        }\n#endif\n"
                    .into();
            }
            Helper::GeluF32 => {
                return "#ifndef MORELLO_HELPER_GELU_F32\n#define MORELLO_HELPER_GELU_F32\n\
                        static inline __attribute__((unused)) float morello_gelu_f32(float x) {\n\
                        \x20 return _mm_cvtss_f32(morello_gelu_m128(_mm_set_ss(x)));\n\
                        }\n#endif\n"
                    .into();
            }
            _ => {}
        }
        std::borrow::Cow::Borrowed(match self {
            Helper::FloorDiv => {
                "#ifndef MORELLO_HELPER_FLOORDIV\n\
                 #define MORELLO_HELPER_FLOORDIV\n\
                 static inline __attribute__((unused)) int64_t morello_floordiv(int64_t a, int64_t c) {\n\
                 \x20 int64_t q = a / c;\n\
                 \x20 return (a % c != 0 && a < 0) ? q - 1 : q;\n\
                 }\n\
                 #endif\n"
            }
            Helper::Mod => {
                "#ifndef MORELLO_HELPER_MOD\n\
                 #define MORELLO_HELPER_MOD\n\
                 static inline __attribute__((unused)) int64_t morello_mod(int64_t a, int64_t c) {\n\
                 \x20 int64_t r = a % c;\n\
                 \x20 return r < 0 ? r + c : r;\n\
                 }\n\
                 #endif\n"
            }
            Helper::Bf16ToF32 => {
                "#ifndef MORELLO_HELPER_BF16_TO_F32\n\
                 #define MORELLO_HELPER_BF16_TO_F32\n\
                 static inline __attribute__((unused)) float morello_bf16_to_f32(uint16_t bits) {\n\
                 \x20 uint32_t wide = (uint32_t)bits << 16;\n\
                 \x20 float value;\n\
                 \x20 memcpy(&value, &wide, sizeof value);\n\
                 \x20 return value;\n\
                 }\n\
                 #endif\n"
            }
            Helper::F32ToBf16 => {
                "#ifndef MORELLO_HELPER_F32_TO_BF16\n\
                 #define MORELLO_HELPER_F32_TO_BF16\n\
                 static inline __attribute__((unused)) uint16_t morello_f32_to_bf16(float value) {\n\
                 \x20 uint32_t bits;\n\
                 \x20 memcpy(&bits, &value, sizeof bits);\n\
                 \x20 if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(bits >> 16);\n\
                 \x20 bits += 0x7fffu + ((bits >> 16) & 1u);\n\
                 \x20 return (uint16_t)(bits >> 16);\n\
                 }\n\
                 #endif\n"
            }
            Helper::HsumM128 => {
                "#ifndef MORELLO_HELPER_HSUM_M128\n\
                 #define MORELLO_HELPER_HSUM_M128\n\
                 static inline __attribute__((unused)) float morello_hsum_m128(__m128 v) {\n\
                 \x20 __m128 pairs = _mm_add_ps(v, _mm_movehl_ps(v, v));\n\
                 \x20 __m128 total = _mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 0x55));\n\
                 \x20 return _mm_cvtss_f32(total);\n\
                 }\n\
                 #endif\n"
            }
            Helper::DpbusdM512 => {
                "#ifndef MORELLO_HELPER_DPBUSD_M512\n\
                 #define MORELLO_HELPER_DPBUSD_M512\n\
                 static inline __attribute__((unused)) __m512i morello_dpbusd_m512(__m512i acc, __m512i u8, __m512i i8) {\n\
                 \x20 __asm__(\"vpdpbusd %2, %1, %0\" : \"+v\"(acc) : \"v\"(u8), \"v\"(i8));\n\
                 \x20 return acc;\n\
                 }\n\
                 #endif\n"
            }
            Helper::DpbusdM256 => {
                "#ifndef MORELLO_HELPER_DPBUSD_M256\n\
                 #define MORELLO_HELPER_DPBUSD_M256\n\
                 static inline __attribute__((unused)) __m256i morello_dpbusd_m256(__m256i acc, __m256i u8, __m256i i8) {\n\
                 \x20 __asm__(\"%{vex%} vpdpbusd %2, %1, %0\" : \"+x\"(acc) : \"x\"(u8), \"x\"(i8));\n\
                 \x20 return acc;\n\
                 }\n\
                 #endif\n"
            }
            Helper::HsumM256 => {
                "#ifndef MORELLO_HELPER_HSUM_M256\n\
                 #define MORELLO_HELPER_HSUM_M256\n\
                 static inline __attribute__((unused)) float morello_hsum_m256(__m256 v) {\n\
                 \x20 return morello_hsum_m128(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));\n\
                 }\n\
                 #endif\n"
            }
            _ => "",
        })
    }
}

/// The definitions of `used` helpers and their dependencies, in a fixed order.
pub fn definitions(used: &std::collections::BTreeSet<Helper>) -> String {
    let mut all: std::collections::BTreeSet<Helper> = used.clone();
    for helper in used {
        all.extend(helper.dependencies());
    }
    // The enum order puts every dependency before the helpers that call it.
    all.iter().map(|h| h.definition()).collect()
}
