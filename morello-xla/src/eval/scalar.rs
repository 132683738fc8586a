//! One element of one elementwise op: its exact value (`f64` for floats, `i128` for integers and
//! `pred`) and a bound on how far an implementation's value may be from it.
//!
//! The implementation being bounded computes each op in the result's element type: the basic
//! operations (`+ - * /`, `sqrt`, conversions) correctly rounded, the others (`exp`, `log`,
//! `tanh`, `erf`, `pow`, ...) within [`Rounding::transcendental_units`] units of roundoff `u` of
//! the result. With `a` and `b` the operands' values, `ea` and `eb` their bounds and `x` the
//! result (`T = transcendental_units * u`, `tiny` the type's smallest normal, for underflow):
//!
//! ```text
//! exact inputs, correctly rounded op     0 if x is representable in the type, else u |x|
//! add, subtract                          ea + eb + u |x|
//! multiply                               |a| eb + |b| ea + ea eb + u |x| + tiny
//! divide                                 (ea + |x| eb) / (|b| - eb) + u |x| + tiny  (inf if |b| <= eb)
//! maximum, minimum, clamp, abs, negate   the largest operand bound (exact ops)
//! exp, expm1, log, log1p, tanh,          the spread of f over [a - ea, a + ea] (f is monotone
//! logistic, erf, rsqrt                   there; inf outside its domain) + T |x| + tiny
//! sine, cosine                           ea (their slope is at most 1) + T |x| + tiny
//! sqrt, cbrt, pow, atan2, tan            the spread over the corners of the operand intervals + T |x|
//! floor, ceil, round                     f(a + ea) - f(a - ea) (0 for exact inputs)
//! compare, is-finite, convert to pred    0 when the answer is the same over the operand intervals,
//!                                        else 1 (either answer may come out)
//! select                                 the chosen branch's bound; with an uncertain predicate,
//!                                        max(et, ef) + |t - f|
//! convert                                0 for exact inputs; float to float ea + 2 u |x|; float to
//!                                        integer the spread of the truncations over a +- ea
//! integer ops                            exact (wrapping) for exact inputs; add, subtract, multiply,
//!                                        min, max carry bounds, the others are unbounded (inf)
//! ```
//!
//! Integer semantics are XLA's: two's complement wrapping, `x / 0 = -1` (all ones unsigned),
//! `x % 0 = x`, `MIN / -1 = MIN`, `MIN % -1 = 0`, shifts by the width or more give 0 (`-1` for
//! a negative value shifted right arithmetically), float-to-integer conversion truncates toward
//! zero and saturates, NaN converting to 0.

use crate::hlo::{ComparisonDirection, ElementwiseOp, integer_range, is_float_type};
use crate::xla::ElementType;

use super::numbers::{round_to, wrap};

/// How far an implementation may be from exact arithmetic, as multiples of the element type's
/// unit roundoff.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rounding {
    /// Units of roundoff of the result allowed to `exp`, `log`, `tanh`, `erf`, `pow` and the
    /// other functions that are not correctly rounded (default 16: C's libm is within 2, the
    /// polynomial `exp` of searched kernels within 8).
    pub transcendental_units: f64,
}

impl Default for Rounding {
    fn default() -> Self {
        Rounding { transcendental_units: 16.0 }
    }
}

/// The unit roundoff of a float type (half an ulp of 1); 0 for integers.
pub fn unit_roundoff(element_type: ElementType) -> f64 {
    match precision(element_type) {
        Some(p) => 2f64.powi(-p),
        None => 0.0,
    }
}

/// The significand bits of a float type (with the implicit bit); `None` for integers.
fn precision(element_type: ElementType) -> Option<i32> {
    use ElementType as E;
    Some(match element_type {
        E::F64 => 53,
        E::F32 => 24,
        E::F16 => 11,
        E::Bf16 => 8,
        E::F8E4M3Fn | E::F8E4M3Fnuz | E::F8E4M3B11Fnuz | E::F8E4M3 => 4,
        E::F8E5M2 | E::F8E5M2Fnuz => 3,
        E::F8E3M4 => 5,
        E::F8E8M0Fnu => 1,
        E::F4E2M1Fn => 2,
        _ => return None,
    })
}

/// The smallest normal value of a float type (what underflow may lose, absolutely).
fn tiny(element_type: ElementType) -> f64 {
    match element_type {
        ElementType::F64 => f64::MIN_POSITIVE,
        ElementType::F16 => 2f64.powi(-14),
        _ => f64::from(f32::MIN_POSITIVE),
    }
}

/// A number: a float's exact value or an integer's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// A float.
    F(f64),
    /// An integer or `pred` (0, 1).
    I(i128),
}

impl Num {
    /// As an `f64`.
    pub fn as_f64(self) -> f64 {
        match self {
            Num::F(x) => x,
            Num::I(x) => x as f64,
        }
    }

    /// As an `i128` (floats truncated; NaN is 0).
    pub fn as_i128(self) -> i128 {
        match self {
            Num::F(x) => x as i128,
            Num::I(x) => x,
        }
    }
}

/// A value with its error bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scalar {
    /// The exact value.
    pub value: Num,
    /// The bound on an implementation's distance from it.
    pub error: f64,
}

impl Scalar {
    /// An exact float.
    pub fn float(x: f64) -> Scalar {
        Scalar { value: Num::F(x), error: 0.0 }
    }

    /// An exact integer.
    pub fn int(x: i128) -> Scalar {
        Scalar { value: Num::I(x), error: 0.0 }
    }

    fn f(self) -> f64 {
        self.value.as_f64()
    }

    fn i(self) -> i128 {
        self.value.as_i128()
    }

    fn exact(self) -> bool {
        self.error == 0.0
    }
}

/// Whether `x` is a value of the float type `t` (so a correctly rounded op gives it exactly).
pub fn representable(x: f64, t: ElementType) -> bool {
    !x.is_finite()
        || (round_to(x, t) == x
            && matches!(t, ElementType::F32 | ElementType::F64 | ElementType::Bf16 | ElementType::F16))
}

/// The bound of a correctly rounded op's result `x` in type `t` from `propagated`, what the
/// operands' bounds contribute.
fn rounded(x: f64, t: ElementType, propagated: f64) -> f64 {
    if !x.is_finite() {
        return if propagated == 0.0 { 0.0 } else { f64::INFINITY };
    }
    if propagated == 0.0 && representable(x, t) {
        return 0.0;
    }
    let u = unit_roundoff(t);
    propagated + u * x.abs() + if x.abs() < tiny(t) { tiny(t) * u } else { 0.0 }
}

/// The bound of a function's result `x` (not correctly rounded) from `propagated`.
fn approximate(x: f64, t: ElementType, propagated: f64, rounding: &Rounding) -> f64 {
    if !x.is_finite() {
        return if propagated == 0.0 { 0.0 } else { f64::INFINITY };
    }
    propagated + rounding.transcendental_units * unit_roundoff(t) * x.abs() + tiny(t)
}

/// The largest distance from `x` of a function monotone over `[a - ea, a + ea]` at its ends
/// (infinity when an end is outside its domain or not finite).
fn monotone(x: f64, a: f64, ea: f64, f: impl Fn(f64) -> f64) -> f64 {
    if ea == 0.0 {
        return 0.0;
    }
    let (lo, hi) = (f(a - ea), f(a + ea));
    if lo.is_nan() || hi.is_nan() {
        return f64::INFINITY;
    }
    let d = (hi - x).abs().max((x - lo).abs());
    if d.is_nan() { f64::INFINITY } else { d }
}

/// The largest distance from `x` of `f` at the corners of the operands' intervals (for a
/// function monotone in each operand over them), or infinity when a corner is not finite.
fn corners(x: f64, points: &[(f64, f64)], f: impl Fn(&[f64]) -> f64) -> f64 {
    let mut worst = 0.0f64;
    let n = points.len();
    for mask in 0..(1u32 << n) {
        let args: Vec<f64> = (0..n)
            .map(|k| if mask & (1 << k) == 0 { points[k].0 - points[k].1 } else { points[k].0 + points[k].1 })
            .collect();
        let y = f(&args);
        if !y.is_finite() {
            return f64::INFINITY;
        }
        worst = worst.max((y - x).abs());
    }
    worst
}

/// An uncertain boolean: 0 when certain, 1 when either answer may come out.
fn uncertain(certain: bool) -> f64 {
    if certain { 0.0 } else { 1.0 }
}

/// Evaluates one elementwise op on scalars. `result` is the result's type; `operand_types` the
/// operands'. `Err` says why the op cannot be evaluated (unsupported types or ops).
pub fn elementwise(
    op: ElementwiseOp,
    result: ElementType,
    operand_types: &[ElementType],
    args: &[Scalar],
    rounding: &Rounding,
) -> Result<Scalar, String> {
    use ElementwiseOp as E;
    let arg = |k: usize| args[k];
    let float = is_float_type(result);
    match op {
        E::Convert => return Ok(convert(arg(0), operand_types[0], result)),
        E::BitcastConvert => return bitcast_convert(arg(0), operand_types[0], result),
        E::Compare(direction) => return Ok(compare(direction, arg(0), arg(1))),
        E::Select => return Ok(select(arg(0), arg(1), arg(2))),
        E::Clamp => {
            let (lo, x, hi) = (arg(0), arg(1), arg(2));
            let error = lo.error.max(x.error).max(hi.error);
            let value = if float {
                let v = nan_max(x.f(), lo.f());
                Num::F(nan_min(v, hi.f()))
            } else {
                Num::I(x.i().max(lo.i()).min(hi.i()))
            };
            return Ok(Scalar { value, error });
        }
        E::IsFinite => {
            let a = arg(0);
            return Ok(Scalar {
                value: Num::I(i128::from(a.f().is_finite())),
                error: uncertain(a.error.is_finite()),
            });
        }
        E::ReducePrecision | E::Real | E::Imag | E::Complex | E::StochasticConvert => {
            return Err(format!("`{}` is not evaluated", op.opcode()));
        }
        _ => {}
    }
    if result == ElementType::Pred || !float {
        return integer_op(op, result, args);
    }
    float_op(op, result, args, rounding)
}

/// The error bound of `ln(y)` when `y` is off by at most `error`: `ln(y / (y - error))`, 0 for
/// an exact `y` and unbounded when `y - error` may reach 0.
fn log_error(y: f64, error: f64) -> f64 {
    if error == 0.0 {
        0.0
    } else if y > error {
        (y / (y - error)).ln()
    } else {
        f64::INFINITY
    }
}

/// XLA's maximum: NaN if either is NaN.
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) }
}

/// XLA's minimum: NaN if either is NaN.
fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) }
}

fn float_op(
    op: ElementwiseOp,
    t: ElementType,
    args: &[Scalar],
    rounding: &Rounding,
) -> Result<Scalar, String> {
    use ElementwiseOp as E;
    let a = args[0];
    let (av, ea) = (a.f(), a.error);
    let two = args.get(1).copied();
    let (bv, eb) = two.map_or((0.0, 0.0), |b| (b.f(), b.error));
    let approx = |x: f64, propagated: f64| approximate(x, t, propagated, rounding);
    let (x, error) = match op {
        E::Add => {
            let x = av + bv;
            (x, rounded(x, t, ea + eb))
        }
        E::Subtract => {
            let x = av - bv;
            (x, rounded(x, t, ea + eb))
        }
        E::Multiply => {
            let x = av * bv;
            (x, rounded(x, t, av.abs() * eb + bv.abs() * ea + ea * eb))
        }
        E::Divide => {
            let x = av / bv;
            let propagated = if ea == 0.0 && eb == 0.0 {
                0.0
            } else if bv.abs() > eb {
                (ea + x.abs() * eb) / (bv.abs() - eb)
            } else {
                f64::INFINITY
            };
            (x, rounded(x, t, propagated))
        }
        E::Maximum => (nan_max(av, bv), ea.max(eb)),
        E::Minimum => (nan_min(av, bv), ea.max(eb)),
        E::Negate => (-av, ea),
        E::Abs => (av.abs(), ea),
        E::Copy => (av, ea),
        E::Sign => {
            let x = if av.is_nan() {
                f64::NAN
            } else if av == 0.0 {
                av
            } else {
                av.signum()
            };
            (x, if ea == 0.0 || av.abs() > ea { 0.0 } else { 2.0 })
        }
        E::Exponential => {
            let x = av.exp();
            (x, approx(x, if ea == 0.0 { 0.0 } else { x * ea.exp_m1() }))
        }
        E::ExponentialMinusOne => {
            let x = av.exp_m1();
            (x, approx(x, if ea == 0.0 { 0.0 } else { (x.abs() + 1.0) * ea.exp_m1() }))
        }
        E::Log => {
            let x = av.ln();
            (x, approx(x, log_error(av, ea)))
        }
        E::LogPlusOne => {
            let x = av.ln_1p();
            (x, approx(x, log_error(av + 1.0, ea)))
        }
        E::Tanh => {
            let x = av.tanh();
            (x, approx(x, ea.min(2.0)))
        }
        E::Logistic => {
            let x = 1.0 / (1.0 + (-av).exp());
            (x, approx(x, (ea / 4.0).min(1.0)))
        }
        E::Erf => {
            let x = erf(av);
            (x, approx(x, (1.13 * ea).min(2.0)))
        }
        E::Sine => {
            let x = av.sin();
            (x, approx(x, ea.min(2.0)))
        }
        E::Cosine => {
            let x = av.cos();
            (x, approx(x, ea.min(2.0)))
        }
        E::Tan => {
            let x = av.tan();
            let pole = |y: f64| (y / std::f64::consts::PI + 0.5).floor();
            let propagated = if ea == 0.0 {
                0.0
            } else if pole(av - ea) == pole(av + ea) {
                corners(x, &[(av, ea)], |p| p[0].tan())
            } else {
                f64::INFINITY
            };
            (x, approx(x, propagated))
        }
        E::Sqrt => {
            let x = av.sqrt();
            if ea == 0.0 {
                (x, rounded(x, t, 0.0))
            } else {
                let propagated = (av + ea).sqrt() - (av - ea).max(0.0).sqrt();
                (x, rounded(x, t, propagated))
            }
        }
        E::Rsqrt => {
            let x = 1.0 / av.sqrt();
            let propagated =
                if ea == 0.0 || av > ea { monotone(x, av, ea, |y| 1.0 / y.sqrt()) } else { f64::INFINITY };
            (x, approx(x, propagated))
        }
        E::Cbrt => {
            let x = av.cbrt();
            (x, approx(x, if ea == 0.0 { 0.0 } else { corners(x, &[(av, ea)], |p| p[0].cbrt()) }))
        }
        E::Power => {
            let x = xla_pow(av, bv);
            let propagated = if ea == 0.0 && eb == 0.0 {
                0.0
            } else if av > ea {
                corners(x, &[(av, ea), (bv, eb)], |p| p[0].powf(p[1]))
            } else {
                f64::INFINITY
            };
            (x, approx(x, propagated))
        }
        E::Atan2 => {
            let x = av.atan2(bv);
            let propagated = if ea == 0.0 && eb == 0.0 {
                0.0
            } else {
                let r = av.hypot(bv) - ea - eb;
                if r > 0.0 { (ea + eb) / r } else { f64::INFINITY }
            };
            (x, approx(x, propagated))
        }
        E::Remainder => {
            let x = av % bv;
            (x, if ea == 0.0 && eb == 0.0 { 0.0 } else { f64::INFINITY })
        }
        E::Floor | E::Ceil | E::RoundNearestEven | E::RoundNearestAfz => {
            let f = |y: f64| match op {
                E::Floor => y.floor(),
                E::Ceil => y.ceil(),
                E::RoundNearestEven => y.round_ties_even(),
                _ => y.round(),
            };
            let x = f(av);
            (x, if ea == 0.0 { 0.0 } else { (f(av + ea) - x).max(x - f(av - ea)) })
        }
        other => return Err(format!("`{}` is not defined on {t}", other.opcode())),
    };
    Ok(Scalar { value: Num::F(x), error })
}

/// XLA's `pow`: `pow(x, 0) = 1` for every `x` (NaN included), otherwise C's.
fn xla_pow(a: f64, b: f64) -> f64 {
    if b == 0.0 { 1.0 } else { a.powf(b) }
}

/// The error function (Abramowitz and Stegun 7.1.26 would be too coarse for a reference: this
/// sums its Taylor series for small arguments and the continued fraction of erfc for large).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let value = if a < 2.5 {
        // erf(a) = 2/sqrt(pi) * sum_n (-1)^n a^(2n+1) / (n! (2n+1))
        let mut term = a;
        let mut sum = a;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -a * a / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    } else if a < 6.0 {
        // erfc(a) = exp(-a^2) / sqrt(pi) * 1 / (a + 1/2 / (a + 1 / (a + 3/2 / (a + ...))))
        let mut fraction = a;
        for k in (1..60).rev() {
            fraction = a + f64::from(k) / 2.0 / fraction;
        }
        1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / fraction
    } else {
        1.0
    };
    value.copysign(x)
}

/// Whether `x direction y` holds (false for any order with a NaN, true for `Ne`).
fn holds<T: PartialOrd>(direction: ComparisonDirection, x: T, y: T) -> bool {
    use ComparisonDirection as D;
    match direction {
        D::Eq => x == y,
        D::Ne => x != y,
        D::Lt => x < y,
        D::Le => x <= y,
        D::Gt => x > y,
        D::Ge => x >= y,
    }
}

fn compare(direction: ComparisonDirection, a: Scalar, b: Scalar) -> Scalar {
    let (av, bv) = (a.value, b.value);
    let value = match (av, bv) {
        (Num::I(x), Num::I(y)) => holds(direction, x, y),
        _ => holds(direction, av.as_f64(), bv.as_f64()),
    };
    let error = if a.exact() && b.exact() {
        0.0
    } else {
        let (x, y) = (av.as_f64(), bv.as_f64());
        let spread = a.error + b.error;
        let d = x - y;
        let certain = match direction {
            ComparisonDirection::Eq | ComparisonDirection::Ne => d.abs() > spread,
            _ => d.abs() > spread || !d.is_finite(),
        };
        uncertain(certain)
    };
    Scalar { value: Num::I(i128::from(value)), error }
}

fn select(p: Scalar, t: Scalar, f: Scalar) -> Scalar {
    let chosen = if p.i() != 0 { t } else { f };
    if p.exact() {
        return chosen;
    }
    let spread = (t.value.as_f64() - f.value.as_f64()).abs();
    Scalar {
        value: chosen.value,
        error: t.error.max(f.error) + if spread.is_nan() { f64::INFINITY } else { spread },
    }
}

/// `convert`: between any two array types (see the module docs for the rules).
pub fn convert(a: Scalar, from: ElementType, to: ElementType) -> Scalar {
    if to == ElementType::Pred {
        let x = a.value.as_f64();
        let value = match a.value {
            Num::I(v) => v != 0,
            Num::F(v) => v != 0.0,
        };
        let certain = a.exact() || (x.abs() > a.error);
        return Scalar { value: Num::I(i128::from(value)), error: uncertain(certain) };
    }
    if is_float_type(to) {
        let x = round_to(a.value.as_f64(), to);
        let error = if a.exact() { 0.0 } else { a.error + 2.0 * unit_roundoff(to) * x.abs() };
        let _ = from;
        return Scalar { value: Num::F(x), error };
    }
    let (lo, hi) = integer_range(to).unwrap_or((0, 0));
    let to_int = |x: Num| -> i128 {
        match x {
            Num::I(v) => wrap(v, to),
            Num::F(v) if v.is_nan() => 0,
            Num::F(v) => {
                let t = v.trunc();
                if t <= lo as f64 {
                    lo
                } else if t >= hi as f64 {
                    hi
                } else {
                    t as i128
                }
            }
        }
    };
    let value = to_int(a.value);
    let error = if a.exact() {
        0.0
    } else {
        match a.value {
            Num::F(v) => {
                let low = to_int(Num::F(v - a.error));
                let high = to_int(Num::F(v + a.error));
                ((value - low).abs().max((high - value).abs())) as f64
            }
            Num::I(v) => {
                let spread = a.error.ceil() as i128;
                if v - spread >= lo && v + spread <= hi { a.error } else { f64::INFINITY }
            }
        }
    };
    Scalar { value: Num::I(value), error }
}

fn bitcast_convert(a: Scalar, from: ElementType, to: ElementType) -> Result<Scalar, String> {
    let bits: u64 = match (a.value, from) {
        (Num::F(x), ElementType::F32) => u64::from((x as f32).to_bits()),
        (Num::F(x), ElementType::F64) => x.to_bits(),
        (Num::F(x), ElementType::Bf16) => u64::from((x as f32).to_bits() >> 16),
        (Num::I(v), _) if !is_float_type(from) => (v as u64) & mask(from.bits()),
        _ => return Err(format!("`bitcast-convert` from {from} is not evaluated")),
    };
    let value = match to {
        ElementType::F32 => Num::F(f64::from(f32::from_bits(bits as u32))),
        ElementType::F64 => Num::F(f64::from_bits(bits)),
        ElementType::Bf16 => Num::F(f64::from(f32::from_bits((bits as u32) << 16))),
        t if !is_float_type(t) => Num::I(wrap(i128::from(bits), t)),
        t => return Err(format!("`bitcast-convert` to {t} is not evaluated")),
    };
    Ok(Scalar { value, error: if a.exact() { 0.0 } else { f64::INFINITY } })
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

fn integer_op(op: ElementwiseOp, t: ElementType, args: &[Scalar]) -> Result<Scalar, String> {
    use ElementwiseOp as E;
    let a = args[0].i();
    let b = args.get(1).map_or(0, |s| s.i());
    let (ea, eb) = (args[0].error, args.get(1).map_or(0.0, |s| s.error));
    let bits = t.bits();
    let signed = integer_range(t).is_some_and(|(lo, _)| lo < 0);
    let (lo, _) = integer_range(t).unwrap_or((0, 0));
    let pattern = |v: i128| -> u128 { (v as u128) & ((1u128 << bits) - 1) };
    let as_signed = |p: u128| -> i128 { wrap(p as i128, signed_of(bits)) };
    let value: i128 = match op {
        E::Add => a + b,
        E::Subtract => a - b,
        E::Multiply => a.wrapping_mul(b),
        E::Divide => {
            if b == 0 {
                -1
            } else if signed && a == lo && b == -1 {
                lo
            } else {
                a / b
            }
        }
        E::Remainder => {
            if b == 0 {
                a
            } else if signed && a == lo && b == -1 {
                0
            } else {
                a % b
            }
        }
        E::Maximum => a.max(b),
        E::Minimum => a.min(b),
        E::Negate => -a,
        E::Abs => a.abs(),
        E::Sign => a.signum(),
        E::Copy => a,
        E::Not => {
            if t == ElementType::Pred {
                i128::from(a == 0)
            } else {
                !a
            }
        }
        E::And => a & b,
        E::Or => a | b,
        E::Xor => a ^ b,
        E::Popcnt => i128::from(pattern(a).count_ones()),
        E::CountLeadingZeros => i128::from(pattern(a).leading_zeros()) - (128 - i128::from(bits)),
        E::ShiftLeft => {
            if b < 0 || b >= i128::from(bits) {
                0
            } else {
                (pattern(a) << b) as i128
            }
        }
        E::ShiftRightLogical => {
            if b < 0 || b >= i128::from(bits) {
                0
            } else {
                (pattern(a) >> b) as i128
            }
        }
        E::ShiftRightArithmetic => {
            let s = as_signed(pattern(a));
            if b < 0 || b >= i128::from(bits) { if s < 0 { -1 } else { 0 } } else { s >> b }
        }
        E::Power => integer_pow(a, b, t),
        other => return Err(format!("`{}` is not defined on {t}", other.opcode())),
    };
    let value = wrap(value, t);
    let error = if ea == 0.0 && eb == 0.0 {
        0.0
    } else {
        let spread = match op {
            E::Add | E::Subtract => ea + eb,
            E::Multiply => (a as f64).abs() * eb + (b as f64).abs() * ea + ea * eb,
            E::Maximum | E::Minimum | E::Negate | E::Abs | E::Copy => ea.max(eb),
            _ => f64::INFINITY,
        };
        let (lo, hi) = integer_range(t).unwrap_or((0, 0));
        if (value as f64 - spread) >= lo as f64 && (value as f64 + spread) <= hi as f64 {
            spread
        } else {
            f64::INFINITY
        }
    };
    Ok(Scalar { value: Num::I(value), error })
}

/// The signed type of a width (for arithmetic shifts of unsigned values).
fn signed_of(bits: u32) -> ElementType {
    match bits {
        8 => ElementType::S8,
        16 => ElementType::S16,
        32 => ElementType::S32,
        _ => ElementType::S64,
    }
}

/// XLA's integer power: by squaring, wrapping; a negative exponent gives 0 but for bases 1
/// and -1.
fn integer_pow(base: i128, exponent: i128, t: ElementType) -> i128 {
    if exponent < 0 {
        return match base {
            1 => 1,
            -1 => {
                if exponent % 2 == 0 {
                    1
                } else {
                    -1
                }
            }
            _ => 0,
        };
    }
    let (mut result, mut b, mut e) = (1i128, wrap(base, t), exponent);
    while e > 0 {
        if e & 1 == 1 {
            result = wrap(result.wrapping_mul(b), t);
        }
        b = wrap(b.wrapping_mul(b), t);
        e >>= 1;
    }
    result
}

/// The exponent of the lowest set bit of a finite non-zero float (`x` is a multiple of 2^q).
pub fn lowest_bit_exponent(x: f64) -> i32 {
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let mantissa = bits & ((1u64 << 52) - 1);
    let (significand, e) =
        if exponent == 0 { (mantissa, -1074) } else { (mantissa | (1u64 << 52), exponent - 1075) };
    if significand == 0 { i32::MAX } else { e + significand.trailing_zeros() as i32 }
}

/// The bound of a sum of `terms` (exact values, each with its bound) computed in type `t` in any
/// order, starting from nothing: 0 when every term is exact and every partial sum, in any order,
/// is representable (all terms are multiples of `2^q` and the sum of their magnitudes is below
/// `2^(q + precision)`); else `Σ e_i + n u Σ |x_i|` (each of the `n - 1` additions rounds a partial
/// sum of at most `Σ |x_i|`, and the final rounding adds one more).
pub fn sum_bound(t: ElementType, magnitude: f64, errors: f64, lowest_bit: i32, count: usize) -> f64 {
    let Some(p) = precision(t) else { return errors };
    if !magnitude.is_finite() {
        return if errors == 0.0 { 0.0 } else { f64::INFINITY };
    }
    if errors == 0.0 && (magnitude == 0.0 || magnitude < 2f64.powi(lowest_bit.saturating_add(p))) {
        return 0.0;
    }
    errors + count as f64 * unit_roundoff(t) * magnitude + tiny(t) * unit_roundoff(t) * count as f64
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn f32op(op: ElementwiseOp, args: &[Scalar]) -> Scalar {
        let types = vec![ElementType::F32; args.len()];
        elementwise(op, ElementType::F32, &types, args, &Rounding::default()).unwrap()
    }

    fn s32op(op: ElementwiseOp, args: &[i128]) -> i128 {
        let types = vec![ElementType::S32; args.len()];
        let args: Vec<Scalar> = args.iter().map(|&a| Scalar::int(a)).collect();
        elementwise(op, ElementType::S32, &types, &args, &Rounding::default()).unwrap().value.as_i128()
    }

    #[test]
    fn exact_results_stay_exact() {
        let s = f32op(ElementwiseOp::Add, &[Scalar::float(1.5), Scalar::float(0.25)]);
        assert_eq!(s, Scalar::float(1.75));
        let third = f32op(ElementwiseOp::Divide, &[Scalar::float(1.0), Scalar::float(3.0)]);
        assert!((third.error - (1.0 / 3.0) * 2f64.powi(-24)).abs() < 1e-12, "{third:?}");
        let m =
            f32op(ElementwiseOp::Maximum, &[Scalar { value: Num::F(1.0), error: 0.5 }, Scalar::float(2.0)]);
        assert_eq!((m.value, m.error), (Num::F(2.0), 0.5));
        assert!(
            f32op(ElementwiseOp::Maximum, &[Scalar::float(f64::NAN), Scalar::float(2.0)])
                .value
                .as_f64()
                .is_nan()
        );
    }

    #[test]
    fn transcendental_bounds() {
        let e = f32op(ElementwiseOp::Exponential, &[Scalar::float(1.0)]);
        let x = std::f64::consts::E;
        assert_eq!(e.value, Num::F(x));
        assert!(e.error >= 16.0 * 2f64.powi(-24) * x && e.error < 17.0 * 2f64.powi(-24) * x);
        let l = f32op(ElementwiseOp::Log, &[Scalar { value: Num::F(1.0), error: 2.0 }]);
        assert_eq!(l.error, f64::INFINITY);
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-15);
        assert!((erf(3.0) - 0.999_977_909_503_001_4).abs() < 1e-15);
        assert!((erf(-1.0) + 0.842_700_792_949_714_9).abs() < 1e-15);
    }

    #[test]
    fn comparisons_and_selects_know_when_they_are_uncertain() {
        let lt = |a: Scalar, b: Scalar| compare(ComparisonDirection::Lt, a, b);
        assert_eq!(lt(Scalar::float(1.0), Scalar::float(2.0)), Scalar::int(1));
        let close = lt(Scalar { value: Num::F(1.0), error: 0.6 }, Scalar { value: Num::F(2.0), error: 0.6 });
        assert_eq!(close.error, 1.0);
        let picked = select(close, Scalar::float(5.0), Scalar::float(3.0));
        assert_eq!((picked.value, picked.error), (Num::F(5.0), 2.0));
    }

    #[test]
    fn integers_follow_xla() {
        use ElementwiseOp as E;
        assert_eq!(s32op(E::Add, &[i128::from(i32::MAX), 1]), i128::from(i32::MIN));
        assert_eq!(s32op(E::Divide, &[7, 0]), -1);
        assert_eq!(s32op(E::Divide, &[i128::from(i32::MIN), -1]), i128::from(i32::MIN));
        assert_eq!(s32op(E::Divide, &[-7, 2]), -3);
        assert_eq!(s32op(E::Remainder, &[-7, 2]), -1);
        assert_eq!(s32op(E::Remainder, &[7, 0]), 7);
        assert_eq!(s32op(E::ShiftLeft, &[1, 31]), i128::from(i32::MIN));
        assert_eq!(s32op(E::ShiftLeft, &[1, 32]), 0);
        assert_eq!(s32op(E::ShiftRightArithmetic, &[-8, 40]), -1);
        assert_eq!(s32op(E::ShiftRightLogical, &[-8, 28]), 15);
        assert_eq!(s32op(E::CountLeadingZeros, &[1]), 31);
        assert_eq!(s32op(E::Popcnt, &[-1]), 32);
        assert_eq!(s32op(E::Power, &[3, 4]), 81);
        assert_eq!(s32op(E::Power, &[2, -1]), 0);
        assert_eq!(s32op(E::Not, &[0]), -1);
    }

    #[test]
    fn conversions_truncate_and_saturate() {
        let c = |x: f64| convert(Scalar::float(x), ElementType::F32, ElementType::S32).value.as_i128();
        assert_eq!(c(2.9), 2);
        assert_eq!(c(-2.9), -2);
        assert_eq!(c(1e20), i128::from(i32::MAX));
        assert_eq!(c(f64::NAN), 0);
        let near =
            convert(Scalar { value: Num::F(2.9999), error: 0.001 }, ElementType::F32, ElementType::S32);
        assert_eq!((near.value, near.error), (Num::I(2), 1.0));
        let b = convert(Scalar::float(1.0 + 3.0 / 256.0), ElementType::F32, ElementType::Bf16);
        assert_eq!(b, Scalar::float(1.0 + 4.0 / 256.0));
    }

    #[test]
    fn sums_of_multiples_of_a_power_of_two_are_exact() {
        assert_eq!(lowest_bit_exponent(0.75), -2);
        assert_eq!(lowest_bit_exponent(4.0), 2);
        assert_eq!(sum_bound(ElementType::F32, 100.0, 0.0, -8, 1000), 0.0);
        assert!(sum_bound(ElementType::F32, 2f64.powi(20), 0.0, -8, 1000) > 0.0);
    }
}
