//! The small C functions an emitted kernel may call, defined before it only when it calls them.
//!
//! Each definition sits behind its own include guard, so several emitted kernels can share one
//! translation unit (tests batch kernels that way) without redefinitions. Every helper is
//! `static inline` and marked unused, which keeps `-Wall -Wextra` quiet on gcc and clang.

/// A helper function of the emitted C.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
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
}

impl Helper {
    /// Helpers this one calls (defined before it).
    fn dependencies(self) -> &'static [Helper] {
        match self {
            Helper::HsumM256 => &[Helper::HsumM128],
            _ => &[],
        }
    }

    /// The guarded C definition.
    fn definition(self) -> &'static str {
        match self {
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
            Helper::HsumM256 => {
                "#ifndef MORELLO_HELPER_HSUM_M256\n\
                 #define MORELLO_HELPER_HSUM_M256\n\
                 static inline __attribute__((unused)) float morello_hsum_m256(__m256 v) {\n\
                 \x20 return morello_hsum_m128(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));\n\
                 }\n\
                 #endif\n"
            }
        }
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
