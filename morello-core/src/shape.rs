//! Tensor shapes: a list of dimension sizes, each at least 1.
//!
//! A [`Shape`] is validated once, when it is built: no zero dimension, no dimension above
//! [`MAX_DIM`], and a volume that fits in `i64` (so every buffer offset does). Code that holds a
//! `Shape` can multiply its dims without overflow checks. Text form: `6x8`, `1x64x64`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// The largest dimension size a shape may have (2^31).
pub const MAX_DIM: u32 = 1 << 31;

/// The most dimensions a shape may have.
pub const MAX_RANK: usize = 32;

/// Why a shape is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// The text had no dimensions (the user wrote nothing).
    #[error("a shape needs at least one dimension, such as `6x8`")]
    Empty,
    /// A dimension was zero (the user's input).
    #[error("dimension {index} is zero; every dimension must be at least 1")]
    ZeroDim {
        /// Which dimension.
        index: usize,
    },
    /// A dimension exceeded [`MAX_DIM`] (the user's input).
    #[error("dimension {index} is {size}, above the limit of 2^31 (2147483648)")]
    DimTooLarge {
        /// Which dimension.
        index: usize,
        /// Its size, as written (it may not fit any integer type).
        size: String,
    },
    /// A dimension was not a number (the user's input).
    #[error("dimension {index} (`{text}`) is not a positive integer")]
    NotANumber {
        /// Which dimension.
        index: usize,
        /// The offending text.
        text: String,
    },
    /// Dimensions separated by something that looks like a separator but is not `x` or `,` (the
    /// user's input, e.g. `4X4X4` or `4*4*4`).
    #[error("dimensions are separated by a lowercase `x`, as in `{suggestion}`, not `{found}`")]
    Separator {
        /// The character written between dimensions.
        found: char,
        /// The shape with `x` in its place.
        suggestion: String,
    },
    /// More than [`MAX_RANK`] dimensions (the user's input).
    #[error("a shape may have at most {MAX_RANK} dimensions, found {0}")]
    TooManyDims(usize),
    /// The number of elements does not fit in 64 bits (the user's input).
    #[error("the shape has more than 2^63 - 1 elements")]
    VolumeOverflow,
}

/// A validated tensor shape.
///
/// # Invariants
/// Every dimension is in `[1, MAX_DIM]` and the product of all dimensions is at most `i64::MAX`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "Vec<u32>", into = "Vec<u32>")]
pub struct Shape(SmallVec<[u32; 4]>);

impl Shape {
    /// A shape with the given dimensions.
    ///
    /// # Errors
    /// [`ShapeError`] if a dimension is zero or too large, or the volume overflows.
    pub fn new(dims: Vec<u32>) -> Result<Self, ShapeError> {
        Self::from_slice(&dims)
    }

    /// A shape with the given dimensions, without an intermediate `Vec`.
    ///
    /// # Errors
    /// [`ShapeError`] if a dimension is zero or too large, or the volume overflows.
    pub fn from_slice(dims: &[u32]) -> Result<Self, ShapeError> {
        if dims.len() > MAX_RANK {
            return Err(ShapeError::TooManyDims(dims.len()));
        }
        let mut volume: i64 = 1;
        for (index, &size) in dims.iter().enumerate() {
            if size == 0 {
                return Err(ShapeError::ZeroDim { index });
            }
            if size > MAX_DIM {
                return Err(ShapeError::DimTooLarge { index, size: size.to_string() });
            }
            volume = volume.checked_mul(i64::from(size)).ok_or(ShapeError::VolumeOverflow)?;
        }
        Ok(Shape(SmallVec::from_slice(dims)))
    }

    /// The dimension sizes.
    pub fn dims(&self) -> &[u32] {
        &self.0
    }

    /// Bytes the shape holds on the heap: 0 up to four dims (stored inline), else its buffer.
    pub fn heap_bytes(&self) -> usize {
        if self.0.spilled() { self.0.capacity() * size_of::<u32>() } else { 0 }
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// The size of dimension `i`.
    ///
    /// # Panics
    /// If `i >= rank` (a caller bug, never user input).
    pub fn dim(&self, i: usize) -> u32 {
        self.0[i]
    }

    /// The number of elements (fits in `i64` by the invariant).
    pub fn volume(&self) -> u64 {
        self.0.iter().map(|&d| u64::from(d)).product()
    }

    /// Every logical point of the shape, in row-major order.
    pub fn points(&self) -> impl Iterator<Item = Vec<u32>> + '_ {
        let volume = self.volume();
        (0..volume).map(move |mut linear| {
            let mut point = vec![0u32; self.rank()];
            for (slot, &size) in point.iter_mut().zip(&self.0).rev() {
                *slot = (linear % u64::from(size)) as u32;
                linear /= u64::from(size);
            }
            point
        })
    }
}

impl TryFrom<Vec<u32>> for Shape {
    type Error = ShapeError;

    fn try_from(dims: Vec<u32>) -> Result<Self, ShapeError> {
        Shape::new(dims)
    }
}

impl From<Shape> for Vec<u32> {
    fn from(shape: Shape) -> Self {
        shape.0.to_vec()
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("x")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// Parses `6x8` (also accepts `6,8` and `[6, 8]`).
impl FromStr for Shape {
    type Err = ShapeError;

    fn from_str(s: &str) -> Result<Self, ShapeError> {
        let body = s.trim().trim_start_matches('[').trim_end_matches(']').trim();
        if body.is_empty() {
            return Err(ShapeError::Empty);
        }
        let separator = |c: char| matches!(c, 'X' | '×' | '*');
        if let Some(found) = body.chars().find(|&c| separator(c)) {
            if body.chars().all(|c| c.is_ascii_digit() || c == 'x' || separator(c)) {
                let suggestion = body.chars().map(|c| if separator(c) { 'x' } else { c }).collect();
                return Err(ShapeError::Separator { found, suggestion });
            }
        }
        let dims = body
            .split(['x', ','])
            .enumerate()
            .map(|(index, part)| {
                let part = part.trim();
                match part.parse::<u64>() {
                    Ok(0) => Err(ShapeError::ZeroDim { index }),
                    Ok(size) if size > u64::from(MAX_DIM) => {
                        Err(ShapeError::DimTooLarge { index, size: part.to_string() })
                    }
                    Ok(size) => Ok(size as u32),
                    Err(_) if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) => {
                        Err(ShapeError::DimTooLarge { index, size: part.to_string() })
                    }
                    Err(_) => Err(ShapeError::NotANumber { index, text: part.to_string() }),
                }
            })
            .collect::<Result<Vec<u32>, ShapeError>>()?;
        Shape::new(dims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        let s: Shape = "6x8".parse().unwrap();
        assert_eq!(s.dims(), &[6, 8]);
        assert_eq!(s.to_string(), "6x8");
        assert_eq!("[2, 3, 4]".parse::<Shape>().unwrap().to_string(), "2x3x4");
        assert_eq!(s.points().nth(9), Some(vec![1, 1]));
    }

    #[test]
    fn rejects_bad_shapes() {
        assert_eq!("".parse::<Shape>(), Err(ShapeError::Empty));
        assert_eq!("6x0".parse::<Shape>(), Err(ShapeError::ZeroDim { index: 1 }));
        assert_eq!("6xa".parse::<Shape>(), Err(ShapeError::NotANumber { index: 1, text: "a".into() }));
        assert_eq!("6x".parse::<Shape>(), Err(ShapeError::NotANumber { index: 1, text: String::new() }));
        assert_eq!(
            "4294967296".parse::<Shape>(),
            Err(ShapeError::DimTooLarge { index: 0, size: "4294967296".to_string() })
        );
        assert_eq!("2147483648x2147483648x2147483648".parse::<Shape>(), Err(ShapeError::VolumeOverflow));
        assert!("99999999999999999999999".parse::<Shape>().is_err());
        // A size past u64 is named as written, not as the largest u64.
        assert_eq!(
            "18446744073709551616x1x1".parse::<Shape>().unwrap_err().to_string(),
            "dimension 0 is 18446744073709551616, above the limit of 2^31 (2147483648)"
        );
        assert_eq!(
            "4X4X4".parse::<Shape>().unwrap_err().to_string(),
            "dimensions are separated by a lowercase `x`, as in `4x4x4`, not `X`"
        );
        assert_eq!(
            "2*3".parse::<Shape>(),
            Err(ShapeError::Separator { found: '*', suggestion: "2x3".into() })
        );
    }
}
