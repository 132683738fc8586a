//! Element values and dtype arithmetic for the interpreter.
//!
//! Integers are held as `i64` and wrapped to their dtype's width after every operation (as C's
//! unsigned arithmetic and the hardware's wrapping integer vector instructions do). `f32` is held
//! as `f32`; `bf16` as the `f32` it widens to, rounded to bf16 when stored.

use crate::dtype::Dtype;

/// A scalar value of some dtype.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// An integer, already wrapped to its dtype.
    Int(i64),
    /// A float (`f32`, or `bf16` widened).
    Float(f32),
}

/// Wraps an integer to the range of an integer dtype.
pub fn wrap(v: i64, dtype: Dtype) -> i64 {
    match dtype {
        Dtype::U8 => v & 0xff,
        Dtype::I8 => i64::from(v as i8),
        Dtype::U16 => v & 0xffff,
        Dtype::I16 => i64::from(v as i16),
        Dtype::U32 => v & 0xffff_ffff,
        Dtype::I32 => i64::from(v as i32),
        Dtype::F32 | Dtype::Bf16 => v,
    }
}

/// Rounds an `f32` to the nearest bf16 (ties to even) and widens it back.
pub fn round_bf16(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    let bits = x.to_bits();
    let rounding = 0x7fff + ((bits >> 16) & 1);
    f32::from_bits((bits.wrapping_add(rounding)) & 0xffff_0000)
}

/// Converts a value to another dtype (only identity and bf16 -> f32 occur in valid specs).
pub fn convert(v: Value, to: Dtype) -> Value {
    match (v, to.is_float()) {
        (Value::Float(x), true) => Value::Float(if to == Dtype::Bf16 { round_bf16(x) } else { x }),
        (Value::Int(i), false) => Value::Int(wrap(i, to)),
        (Value::Int(i), true) => Value::Float(i as f32),
        (Value::Float(x), false) => Value::Int(wrap(x as i64, to)),
    }
}

/// `acc + a * b` in the accumulator's dtype (each operation rounded, no fused multiply-add).
pub fn mul_add(acc: Value, a: Value, b: Value, dtype: Dtype) -> Value {
    match (acc, a, b) {
        (Value::Float(c), Value::Float(x), Value::Float(y)) => Value::Float(c + x * y),
        (Value::Int(c), Value::Int(x), Value::Int(y)) => {
            Value::Int(wrap(c.wrapping_add(x.wrapping_mul(y)), dtype))
        }
        (c, x, y) => {
            let f = |v: Value| match v {
                Value::Int(i) => i as f32,
                Value::Float(x) => x,
            };
            convert(Value::Float(f(c) + f(x) * f(y)), dtype)
        }
    }
}
