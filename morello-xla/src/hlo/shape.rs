//! Shapes of HLO values: an array (element type, dims and an optional layout) or a one-level
//! tuple of arrays.
//!
//! No indexing map depends on the element type; evaluating and compiling a module do. Nested
//! tuples are outside the supported subset (a reader should reject them).

use std::fmt;

use crate::xla::ElementType;

/// The shape of an array value: its element type, dimension sizes and, optionally, its layout.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArrayShape {
    /// The element type (`f32`, `s32`, `pred`, ...).
    pub element_type: ElementType,
    /// The dimension sizes, major (slowest) first in logical order; each at least 0.
    pub dims: Vec<i64>,
    /// The layout as XLA's `minor_to_major` permutation of `0..rank`; `None` is the default
    /// (row-major, `{rank-1, ..., 1, 0}`).
    pub minor_to_major: Option<Vec<usize>>,
}

impl ArrayShape {
    /// An `f32` array shape with the default layout.
    pub fn new(dims: &[i64]) -> Self {
        ArrayShape::typed(ElementType::F32, dims)
    }

    /// An array shape of `element_type` with the default layout.
    pub fn typed(element_type: ElementType, dims: &[i64]) -> Self {
        ArrayShape { element_type, dims: dims.to_vec(), minor_to_major: None }
    }

    /// An `f32` array shape with an explicit `minor_to_major` layout.
    pub fn with_layout(dims: &[i64], minor_to_major: &[usize]) -> Self {
        ArrayShape {
            element_type: ElementType::F32,
            dims: dims.to_vec(),
            minor_to_major: Some(minor_to_major.to_vec()),
        }
    }

    /// The same dims and layout with another element type.
    pub fn with_element_type(mut self, element_type: ElementType) -> Self {
        self.element_type = element_type;
        self
    }

    /// The number of elements (a validated module's arrays have at most 2^63 - 1).
    pub fn volume(&self) -> i64 {
        self.dims.iter().fold(1i64, |v, &d| v.saturating_mul(d))
    }

    /// The `minor_to_major` order, the default (`rank-1, ..., 0`) when none is given.
    pub fn minor_to_major_or_default(&self) -> Vec<usize> {
        match &self.minor_to_major {
            Some(order) => order.clone(),
            None => (0..self.rank()).rev().collect(),
        }
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The physical order of the dimensions, major (slowest) first: the reverse of
    /// `minor_to_major`, or `0..rank` for the default layout.
    pub fn major_to_minor(&self) -> Vec<usize> {
        match &self.minor_to_major {
            Some(order) => order.iter().rev().copied().collect(),
            None => (0..self.rank()).collect(),
        }
    }
}

/// The shape of an HLO value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HloShape {
    /// An array.
    Array(ArrayShape),
    /// A tuple of arrays (one level).
    Tuple(Vec<ArrayShape>),
}

impl HloShape {
    /// An `f32` array shape with the default layout.
    pub fn array(dims: &[i64]) -> Self {
        HloShape::Array(ArrayShape::new(dims))
    }

    /// A tuple of `f32` arrays with default layouts.
    pub fn tuple(elements: &[&[i64]]) -> Self {
        HloShape::Tuple(elements.iter().map(|dims| ArrayShape::new(dims)).collect())
    }

    /// The arrays this value consists of: one for an array, the elements for a tuple. The
    /// indexing analysis calls their positions the value's *outputs*.
    pub fn arrays(&self) -> &[ArrayShape] {
        match self {
            HloShape::Array(array) => std::slice::from_ref(array),
            HloShape::Tuple(elements) => elements,
        }
    }

    /// The array, if this is an array shape.
    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            HloShape::Array(array) => Some(array),
            HloShape::Tuple(_) => None,
        }
    }
}

/// Prints dims as `[10, 20]`, with the layout as `{1, 0}` when it is explicit.
impl fmt::Display for ArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", join(&self.dims))?;
        if let Some(order) = &self.minor_to_major {
            write!(f, "{{{}}}", join(order))?;
        }
        Ok(())
    }
}

/// Prints an array as [`ArrayShape`] does and a tuple as `([2], [3, 4])`.
impl fmt::Display for HloShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HloShape::Array(array) => write!(f, "{array}"),
            HloShape::Tuple(elements) => write!(f, "({})", join(elements)),
        }
    }
}

pub(crate) fn join<T: fmt::Display>(values: &[T]) -> String {
    values.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}
