//! The values of a `constant`: an array literal of one element type, in row-major order.
//!
//! Floats are kept as the decimal the text wrote, read into an `f64` (a reader of the module
//! rounds them to the element type when it uses them); integers of every width and `pred` are
//! kept exactly, as `i128` (`u64` values above 2^63 included; `pred` as 0 and 1).
//! Equality and hashing compare float values by their bits, so a `NaN` equals itself.

use std::hash::{Hash, Hasher};

use crate::xla::ElementType;

/// The elements of a literal, in row-major order of its dims.
#[derive(Debug, Clone)]
pub enum LiteralValues {
    /// Float elements (`f16`, `bf16`, `f32`, `f64`, ...), as read.
    Floats(Vec<f64>),
    /// Integer elements, and `pred` as 0 or 1.
    Integers(Vec<i128>),
}

impl LiteralValues {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            LiteralValues::Floats(v) => v.len(),
            LiteralValues::Integers(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PartialEq for LiteralValues {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (LiteralValues::Floats(a), LiteralValues::Floats(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (LiteralValues::Integers(a), LiteralValues::Integers(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for LiteralValues {}

impl Hash for LiteralValues {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            LiteralValues::Floats(v) => {
                0u8.hash(state);
                for x in v {
                    x.to_bits().hash(state);
                }
            }
            LiteralValues::Integers(v) => {
                1u8.hash(state);
                v.hash(state);
            }
        }
    }
}

/// A constant's value: element type, dims and the elements in row-major order.
///
/// # Invariants
/// The number of values is the product of the dims; floats for float element types, integers
/// (in the type's range, 0 or 1 for `pred`) for the others.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Literal {
    element_type: ElementType,
    dims: Vec<i64>,
    values: LiteralValues,
}

/// Whether an element type holds floats (as opposed to integers and `pred`).
pub fn is_float_type(element_type: ElementType) -> bool {
    use ElementType as E;
    matches!(
        element_type,
        E::F16
            | E::Bf16
            | E::F32
            | E::F64
            | E::F8E4M3Fn
            | E::F8E5M2
            | E::F8E4M3Fnuz
            | E::F8E5M2Fnuz
            | E::F8E4M3B11Fnuz
            | E::F8E3M4
            | E::F8E4M3
            | E::F8E8M0Fnu
            | E::F4E2M1Fn
    )
}

/// The range of an integer element type (`pred` is `[0, 1]`); `None` for other types.
pub fn integer_range(element_type: ElementType) -> Option<(i128, i128)> {
    use ElementType as E;
    let bits = i128::from(element_type.bits());
    match element_type {
        E::Pred => Some((0, 1)),
        E::S1 | E::S2 | E::S4 | E::S8 | E::S16 | E::S32 | E::S64 => {
            Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1))
        }
        E::U1 | E::U2 | E::U4 | E::U8 | E::U16 | E::U32 | E::U64 => Some((0, (1i128 << bits) - 1)),
        _ => None,
    }
}

impl Literal {
    /// A literal from its parts.
    ///
    /// # Errors
    /// A message when the values do not fit the dims or the element type.
    pub fn new(element_type: ElementType, dims: &[i64], values: LiteralValues) -> Result<Self, String> {
        let count =
            dims.iter().try_fold(1usize, |acc, &d| usize::try_from(d).ok().and_then(|d| acc.checked_mul(d)));
        if count != Some(values.len()) {
            return Err(format!(
                "{} values for a shape of {} elements",
                values.len(),
                count.map_or_else(|| "too many".to_string(), |c| c.to_string())
            ));
        }
        match (&values, is_float_type(element_type), integer_range(element_type)) {
            (LiteralValues::Floats(_), true, _) => {}
            (LiteralValues::Integers(v), _, Some((lo, hi))) => {
                if let Some(bad) = v.iter().find(|x| !(lo..=hi).contains(*x)) {
                    return Err(format!("{bad} is outside the range of {element_type} ([{lo}, {hi}])"));
                }
            }
            _ => return Err(format!("the values do not have the kind of {element_type}")),
        }
        Ok(Literal { element_type, dims: dims.to_vec(), values })
    }

    /// A scalar float literal.
    pub fn float_scalar(element_type: ElementType, value: f64) -> Result<Self, String> {
        Literal::new(element_type, &[], LiteralValues::Floats(vec![value]))
    }

    /// The element type.
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// The dims.
    pub fn dims(&self) -> &[i64] {
        &self.dims
    }

    /// The elements in row-major order.
    pub fn values(&self) -> &LiteralValues {
        &self.values
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the literal has no elements.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn values_must_fit_the_shape_and_type() {
        let ok = Literal::new(ElementType::S8, &[2], LiteralValues::Integers(vec![-128, 127])).unwrap();
        assert_eq!(ok.len(), 2);
        let error = Literal::new(ElementType::S8, &[2], LiteralValues::Integers(vec![0, 128])).unwrap_err();
        assert!(error.contains("outside the range of s8"), "{error}");
        let error = Literal::new(ElementType::F32, &[3], LiteralValues::Floats(vec![0.0])).unwrap_err();
        assert!(error.contains("1 values for a shape of 3 elements"), "{error}");
        let error = Literal::new(ElementType::F32, &[], LiteralValues::Integers(vec![1])).unwrap_err();
        assert!(error.contains("kind of f32"), "{error}");
        assert_eq!(integer_range(ElementType::U64), Some((0, (1i128 << 64) - 1)));
        assert_eq!(integer_range(ElementType::Pred), Some((0, 1)));
    }

    #[test]
    fn nan_equals_itself() {
        let a = Literal::float_scalar(ElementType::F32, f64::NAN).unwrap();
        assert_eq!(a, a.clone());
    }
}
