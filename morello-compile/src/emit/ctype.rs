//! Element types in C: how each is stored, what it is computed in, literals, and the helper
//! functions the loops call for XLA's semantics where C's differ.
//!
//! ```text
//! type        stored as    computed as   notes
//! f32, f64    float/double the same
//! bf16        uint16_t     float         rounded to nearest even when stored or converted to
//! s8 .. s64   intN_t       intN_t        + - * through the unsigned type, so they wrap
//! u8 .. u64   uintN_t      uintN_t
//! pred        uint8_t      int (0, 1)
//! ```
//!
//! Helpers (all `static inline`, so unused ones cost nothing): NaN-propagating `maximum` and
//! `minimum`, XLA's integer division and remainder (by 0: -1 or all ones, and the dividend),
//! shifts by the width or more, saturating float-to-integer conversion (NaN to 0), bf16
//! conversions, `sign`, `count-leading-zeros`, integer `power`.

use morello_xla::hlo::{LiteralValues, is_float_type};
use morello_xla::xla::ElementType;

/// The C type an element is stored as, or `None` for types the compiler does not handle.
pub fn storage(t: ElementType) -> Option<&'static str> {
    use ElementType as E;
    Some(match t {
        E::F32 => "float",
        E::F64 => "double",
        E::Bf16 | E::U16 => "uint16_t",
        E::S8 => "int8_t",
        E::S16 => "int16_t",
        E::S32 => "int32_t",
        E::S64 => "int64_t",
        E::U8 | E::Pred => "uint8_t",
        E::U32 => "uint32_t",
        E::U64 => "uint64_t",
        _ => return None,
    })
}

/// The C type an element is computed in.
pub fn compute(t: ElementType) -> &'static str {
    match t {
        ElementType::Bf16 => "float",
        ElementType::Pred => "int",
        other => storage(other).unwrap_or("float"),
    }
}

/// The unsigned C type of an integer's width (what wrapping arithmetic goes through).
pub fn unsigned(t: ElementType) -> &'static str {
    match t.bits() {
        8 => "uint8_t",
        16 => "uint16_t",
        32 => "uint32_t",
        _ => "uint64_t",
    }
}

/// Whether a type is computed as a float.
pub fn is_float(t: ElementType) -> bool {
    is_float_type(t)
}

/// The suffix of a float type's math functions (`f` for float).
pub fn math_suffix(t: ElementType) -> &'static str {
    if t == ElementType::F64 { "" } else { "f" }
}

/// A float value as a C literal of the compute type.
pub fn float_literal(value: f64, t: ElementType) -> String {
    let double = t == ElementType::F64;
    if value.is_nan() {
        return if double { "((double)NAN)".into() } else { "NAN".into() };
    }
    if value.is_infinite() {
        let sign = if value < 0.0 { "-" } else { "" };
        return if double { format!("({sign}(double)INFINITY)") } else { format!("({sign}INFINITY)") };
    }
    if double {
        format!("{value:.17e}")
    } else {
        // Nine significant digits name an f32 exactly.
        format!("{:.8e}f", value as f32)
    }
}

/// An integer value as a C literal of type `t`.
pub fn int_literal(value: i128, t: ElementType) -> String {
    if t == ElementType::Pred {
        return i128::from(value != 0).to_string();
    }
    let c = compute(t);
    if value == i128::from(i64::MIN) {
        return format!("(({c})(-9223372036854775807LL - 1))");
    }
    if value > i128::from(i64::MAX) {
        return format!("(({c}){value}ULL)");
    }
    format!("(({c}){value}LL)")
}

/// The `i`-th value of a literal as a C literal.
pub fn literal_value(values: &LiteralValues, i: usize, t: ElementType) -> String {
    match values {
        LiteralValues::Floats(v) => float_literal(v[i], t),
        LiteralValues::Integers(v) => int_literal(v[i], t),
    }
}

/// The C text storing a computed value `expr` of type `t` (bf16 rounded to its bits).
pub fn store(expr: &str, t: ElementType) -> String {
    match t {
        ElementType::Bf16 => format!("m_f32_to_bf16({expr})"),
        ElementType::Pred => format!("(uint8_t)({expr})"),
        other => format!("({})({expr})", storage(other).unwrap_or("float")),
    }
}

/// The C text loading a stored element `expr` of type `t` into its compute type.
pub fn load(expr: &str, t: ElementType) -> String {
    match t {
        ElementType::Bf16 => format!("m_bf16_to_f32({expr})"),
        ElementType::Pred => format!("(int)({expr})"),
        _ => expr.to_string(),
    }
}

/// The helpers every unit gets, before the entry function.
pub const HELPERS: &str = r#"/* ---- helpers: XLA's semantics where C's differ ---- */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A module uses some of these; clang warns of the others under -Wall (gcc does not). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
static inline float m_bf16_to_f32(uint16_t bits) {
  uint32_t wide = (uint32_t)bits << 16;
  float value;
  memcpy(&value, &wide, sizeof value);
  return value;
}
static inline uint16_t m_f32_to_bf16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}
static inline float m_round_bf16(float value) { return m_bf16_to_f32(m_f32_to_bf16(value)); }
static inline float m_maxf(float a, float b) { return (a != a || a > b) ? a : b; }
static inline float m_minf(float a, float b) { return (a != a || a < b) ? a : b; }
static inline double m_max(double a, double b) { return (a != a || a > b) ? a : b; }
static inline double m_min(double a, double b) { return (a != a || a < b) ? a : b; }
static inline float m_signf(float a) { return (a != a || a == 0.0f) ? a : (a > 0.0f ? 1.0f : -1.0f); }
static inline double m_sign(double a) { return (a != a || a == 0.0) ? a : (a > 0.0 ? 1.0 : -1.0); }
static inline int64_t m_clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : (x > hi ? hi : x); }
/* Float to integer: toward zero, saturating, NaN to 0. */
static inline int64_t m_ftoi(double x, double lo, double hi) {
  if (x != x) return 0;
  if (x <= lo) return (int64_t)lo;
  if (x >= hi) return x >= 9223372036854775807.0 ? INT64_MAX : (int64_t)hi;
  return (int64_t)x;
}
static inline uint64_t m_ftou64(double x) {
  if (x != x || x <= 0.0) return 0;
  if (x >= 18446744073709551615.0) return UINT64_MAX;
  return (uint64_t)x;
}
#define M_NEG_S(x) ((x) < 0)
#define M_NEG_U(x) (0 && (x))
#define M_INT_HELPERS(name, T, U, BITS, SIGNED, MIN, NEG)                                       \
  static inline T m_div_##name(T a, T b) {                                                    \
    if (b == 0) return (T)~(U)0;                                                              \
    if (SIGNED && a == (T)MIN && b == (T)-1) return a;                                        \
    return (T)(a / b);                                                                        \
  }                                                                                           \
  static inline T m_rem_##name(T a, T b) {                                                    \
    if (b == 0) return a;                                                                     \
    if (SIGNED && a == (T)MIN && b == (T)-1) return 0;                                        \
    return (T)(a % b);                                                                        \
  }                                                                                           \
  static inline T m_shl_##name(T a, T b) {                                                    \
    if (NEG(b) || (uint64_t)b >= BITS) return 0;                          \
    return (T)((U)a << b);                                                                    \
  }                                                                                           \
  static inline T m_shrl_##name(T a, T b) {                                                   \
    if (NEG(b) || (uint64_t)b >= BITS) return 0;                          \
    return (T)((U)a >> b);                                                                    \
  }                                                                                           \
  static inline T m_max_##name(T a, T b) { return a > b ? a : b; }                            \
  static inline T m_min_##name(T a, T b) { return a < b ? a : b; }                            \
  static inline T m_abs_##name(T a) { return (T)(NEG(a) ? -(U)a : (U)a); }  \
  static inline T m_sign_##name(T a) { return (T)((a > 0) - NEG(a)); }    \
  static inline T m_clz_##name(T a) {                                                         \
    if ((U)a == 0) return (T)BITS;                                                            \
    return (T)(__builtin_clzll((unsigned long long)(U)a) - (64 - BITS));                      \
  }                                                                                           \
  static inline T m_pow_##name(T a, T b) {                                                    \
    if (NEG(b)) return (T)(a == 1 ? 1 : (a == (T)-1) ? ((b & 1) ? -1 : 1) : 0); \
    U result = 1, base = (U)a, e = (U)b;                                                      \
    while (e > 0) {                                                                           \
      if (e & 1) result = (U)(result * base);                                                 \
      base = (U)(base * base);                                                                \
      e = (U)(e >> 1);                                                                        \
    }                                                                                         \
    return (T)result;                                                                         \
  }
M_INT_HELPERS(s8, int8_t, uint8_t, 8, 1, INT8_MIN, M_NEG_S)
M_INT_HELPERS(s16, int16_t, uint16_t, 16, 1, INT16_MIN, M_NEG_S)
M_INT_HELPERS(s32, int32_t, uint32_t, 32, 1, INT32_MIN, M_NEG_S)
M_INT_HELPERS(s64, int64_t, uint64_t, 64, 1, INT64_MIN, M_NEG_S)
M_INT_HELPERS(u8, uint8_t, uint8_t, 8, 0, 0, M_NEG_U)
M_INT_HELPERS(u16, uint16_t, uint16_t, 16, 0, 0, M_NEG_U)
M_INT_HELPERS(u32, uint32_t, uint32_t, 32, 0, 0, M_NEG_U)
M_INT_HELPERS(u64, uint64_t, uint64_t, 64, 0, 0, M_NEG_U)
static inline uint32_t m_f32_bits(float a) { uint32_t b; memcpy(&b, &a, sizeof b); return b; }
static inline float m_bits_f32(uint32_t b) { float a; memcpy(&a, &b, sizeof a); return a; }
static inline uint64_t m_f64_bits(double a) { uint64_t b; memcpy(&b, &a, sizeof b); return b; }
static inline double m_bits_f64(uint64_t b) { double a; memcpy(&a, &b, sizeof a); return a; }
static inline int64_t m_shra(int64_t a, int64_t b, int bits) {
  if (b < 0 || b >= bits) return a < 0 ? -1 : 0;
  return a >> b;
}
#pragma GCC diagnostic pop
"#;

/// The suffix of an integer type's helpers (`s32`, `u8`; `u8` for pred).
pub fn helper_suffix(t: ElementType) -> &'static str {
    use ElementType as E;
    match t {
        E::S8 => "s8",
        E::S16 => "s16",
        E::S32 => "s32",
        E::S64 => "s64",
        E::U16 => "u16",
        E::U32 => "u32",
        E::U64 => "u64",
        _ => "u8",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_name_their_values_exactly() {
        assert_eq!(float_literal(1.41421354, ElementType::F32), "1.41421354e0f");
        assert_eq!(float_literal(f64::NEG_INFINITY, ElementType::F32), "(-INFINITY)");
        assert_eq!(float_literal(0.1, ElementType::F64), "1.00000000000000006e-1");
        assert_eq!(int_literal(-5, ElementType::S32), "((int32_t)-5LL)");
        assert_eq!(
            int_literal(i128::from(u64::MAX), ElementType::U64),
            "((uint64_t)18446744073709551615ULL)"
        );
        assert_eq!(
            int_literal(i128::from(i64::MIN), ElementType::S64),
            "((int64_t)(-9223372036854775807LL - 1))"
        );
    }
}
