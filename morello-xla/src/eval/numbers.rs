//! Values of XLA's element types: integers wrapped to their width, floats rounded to theirs.

use crate::hlo::integer_range;
use crate::xla::ElementType;

/// `value` wrapped into the range of an integer type (two's complement), or `pred` as 0/1.
pub fn wrap(value: i128, element_type: ElementType) -> i128 {
    if element_type == ElementType::Pred {
        return i128::from(value != 0);
    }
    let Some((lo, _)) = integer_range(element_type) else { return value };
    let bits = element_type.bits();
    let modulus = 1i128 << bits;
    let mut v = value.rem_euclid(modulus);
    if lo < 0 && v >= modulus / 2 {
        v -= modulus;
    }
    v
}

/// `value` rounded to the nearest value of a float type (ties to even); `f64` is unchanged.
pub fn round_to(value: f64, element_type: ElementType) -> f64 {
    match element_type {
        ElementType::F32 => f64::from(value as f32),
        ElementType::Bf16 => f64::from(f32_to_bf16(value as f32)),
        ElementType::F16 => round_to_bits(value, 11, -14, 65504.0),
        _ => value,
    }
}

/// An `f32` rounded to bfloat16 (ties to even), as an `f32`.
pub fn f32_to_bf16(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    let bits = x.to_bits();
    let rounding = 0x7fff + ((bits >> 16) & 1);
    f32::from_bits(bits.wrapping_add(rounding) & 0xffff_0000)
}

/// Rounds to a binary float with `precision` significand bits, minimum normal exponent
/// `min_exponent` and largest finite value `max` (overflow to infinity).
fn round_to_bits(value: f64, precision: i32, min_exponent: i32, max: f64) -> f64 {
    if !value.is_finite() || value == 0.0 {
        return value;
    }
    let exponent = value.abs().log2().floor() as i32;
    let quantum = 2f64.powi(exponent.max(min_exponent) - (precision - 1));
    let rounded = (value / quantum).round_ties_even() * quantum;
    if rounded.abs() > max { value.signum() * f64::INFINITY } else { rounded }
}
