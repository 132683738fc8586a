//! [`Array`]: an evaluated value, its elements in row-major order of the logical dims (layouts
//! do not matter to values), each with a bound on how far an implementation's result may be.
//!
//! Floats are `f64` (the exact result of each op, as far as `f64` holds it), integers and `pred`
//! `i128` (wrapped to their type after every op, as XLA's integers wrap).

use crate::hlo::{Literal, LiteralValues, is_float_type};
use crate::xla::ElementType;

use super::EvalError;
pub use super::numbers::{f32_to_bf16, round_to, wrap};

/// The elements of an array.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// Float elements.
    Float(Vec<f64>),
    /// Integer and `pred` elements (in the type's range).
    Int(Vec<i128>),
}

impl Data {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Data::Float(v) => v.len(),
            Data::Int(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` as an `f64` (integers converted, large ones rounded).
    pub fn get_f64(&self, i: usize) -> f64 {
        match self {
            Data::Float(v) => v[i],
            Data::Int(v) => v[i] as f64,
        }
    }
}

/// A value of the module: element type, logical dims, elements and their error bounds.
///
/// # Invariants
/// `data` and `error` hold `volume(dims)` entries; `data` is `Float` exactly for float types.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// The element type.
    pub element_type: ElementType,
    /// The logical dims.
    pub dims: Vec<i64>,
    /// The elements, row-major.
    pub data: Data,
    /// Per element, a bound on `|implementation - data|` for an implementation that computes
    /// each op in the element type (see [`super::Rounding`]); 0 where it must be exact, infinite
    /// where nothing can be said.
    pub error: Vec<f64>,
}

/// The number of elements of `dims` (a validated module's fit in `usize` on 64-bit hosts).
pub fn volume(dims: &[i64]) -> usize {
    dims.iter().map(|&d| usize::try_from(d).unwrap_or(0)).product()
}

/// Row-major strides of `dims`, in elements.
pub fn strides(dims: &[i64]) -> Vec<usize> {
    let mut strides = vec![1usize; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * usize::try_from(dims[k + 1]).unwrap_or(0);
    }
    strides
}

/// Advances a row-major multi-index over `dims`; false once it wraps past the end.
pub fn next_index(index: &mut [i64], dims: &[i64]) -> bool {
    for k in (0..dims.len()).rev() {
        index[k] += 1;
        if index[k] < dims[k] {
            return true;
        }
        index[k] = 0;
    }
    false
}

/// Calls `f` with every multi-index of `dims` in row-major order and its linear position.
pub fn for_each_index(dims: &[i64], mut f: impl FnMut(&[i64], usize)) {
    let n = volume(dims);
    if n == 0 {
        return;
    }
    let mut index = vec![0i64; dims.len()];
    for linear in 0..n {
        f(&index, linear);
        next_index(&mut index, dims);
    }
}

impl Array {
    /// An array of floats with no error (the values should be values of the type: see
    /// [`round_to`]).
    pub fn floats(element_type: ElementType, dims: &[i64], values: Vec<f64>) -> Array {
        let n = values.len();
        Array { element_type, dims: dims.to_vec(), data: Data::Float(values), error: vec![0.0; n] }
    }

    /// An array of integers (or `pred`) with no error, wrapped to the type.
    pub fn ints(element_type: ElementType, dims: &[i64], values: Vec<i128>) -> Array {
        let n = values.len();
        let values = values.into_iter().map(|v| wrap(v, element_type)).collect();
        Array { element_type, dims: dims.to_vec(), data: Data::Int(values), error: vec![0.0; n] }
    }

    /// An array of `dims` with every element `value` (rounded or wrapped to the type).
    pub fn filled(element_type: ElementType, dims: &[i64], value: f64) -> Array {
        let n = volume(dims);
        if is_float_type(element_type) {
            Array::floats(element_type, dims, vec![round_to(value, element_type); n])
        } else {
            Array::ints(element_type, dims, vec![value as i128; n])
        }
    }

    /// The value of a constant: floats rounded to the element type.
    pub fn from_literal(literal: &Literal) -> Array {
        let t = literal.element_type();
        match literal.values() {
            LiteralValues::Floats(v) => {
                Array::floats(t, literal.dims(), v.iter().map(|&x| round_to(x, t)).collect())
            }
            LiteralValues::Integers(v) => Array::ints(t, literal.dims(), v.clone()),
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Whether every element is exact (error 0).
    pub fn is_exact(&self) -> bool {
        self.error.iter().all(|&e| e == 0.0)
    }

    /// The element at `linear` as a [`Scalar`](super::scalar::Scalar).
    pub(crate) fn scalar(&self, linear: usize) -> super::scalar::Scalar {
        let value = match &self.data {
            Data::Float(v) => super::scalar::Num::F(v[linear]),
            Data::Int(v) => super::scalar::Num::I(v[linear]),
        };
        super::scalar::Scalar { value, error: self.error[linear] }
    }

    /// An array built from scalars of one type (in row-major order).
    pub(crate) fn from_scalars(
        element_type: ElementType,
        dims: &[i64],
        scalars: impl IntoIterator<Item = super::scalar::Scalar>,
    ) -> Array {
        let mut error = Vec::new();
        let data = if is_float_type(element_type) {
            let mut v = Vec::new();
            for s in scalars {
                v.push(s.value.as_f64());
                error.push(s.error);
            }
            Data::Float(v)
        } else {
            let mut v = Vec::new();
            for s in scalars {
                v.push(s.value.as_i128());
                error.push(s.error);
            }
            Data::Int(v)
        };
        Array { element_type, dims: dims.to_vec(), data, error }
    }

    /// The elements at `positions` (linear), in that order, with the given dims.
    pub(crate) fn gather_linear(&self, dims: &[i64], positions: &[usize]) -> Array {
        let data = match &self.data {
            Data::Float(v) => Data::Float(positions.iter().map(|&p| v[p]).collect()),
            Data::Int(v) => Data::Int(positions.iter().map(|&p| v[p]).collect()),
        };
        let error = positions.iter().map(|&p| self.error[p]).collect();
        Array { element_type: self.element_type, dims: dims.to_vec(), data, error }
    }

    /// Checks that the array has this type and these dims.
    pub(crate) fn expect(
        &self,
        element_type: ElementType,
        dims: &[i64],
        what: &str,
    ) -> Result<(), EvalError> {
        if self.element_type != element_type || self.dims != dims || self.error.len() != self.data.len() {
            return Err(EvalError::Arguments {
                reason: format!(
                    "{what} should be {element_type}{dims:?}, but is {}{:?}",
                    self.element_type, self.dims
                ),
            });
        }
        if volume(dims) != self.data.len() {
            return Err(EvalError::Arguments {
                reason: format!("{what} has {} elements for dims {dims:?}", self.data.len()),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_and_rounding() {
        assert_eq!(wrap(128, ElementType::S8), -128);
        assert_eq!(wrap(-1, ElementType::U32), 4294967295);
        assert_eq!(wrap(1 << 40, ElementType::S32), 0);
        assert_eq!(wrap(7, ElementType::Pred), 1);
        assert_eq!(round_to(0.1, ElementType::F32), f64::from(0.1f32));
        assert_eq!(round_to(1.0 + 1.0 / 256.0, ElementType::Bf16), 1.0, "a tie goes to even");
        assert_eq!(round_to(1.0 + 3.0 / 256.0, ElementType::Bf16), 1.0 + 4.0 / 256.0);
        assert_eq!(round_to(1.0 + 1.0 / 4096.0, ElementType::F16), 1.0);
        assert_eq!(round_to(70000.0, ElementType::F16), f64::INFINITY);
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
        let mut seen = Vec::new();
        for_each_index(&[2, 2], |i, l| seen.push((i.to_vec(), l)));
        assert_eq!(seen[3], (vec![1, 1], 3));
    }
}
