//! XLA shapes: [`ArrayShape`] (element type, dimensions, layout) and [`XlaShape`] (an array or a
//! tuple of shapes), with the helpers the shape page describes: negative dimension numbers, the
//! true number of dimensions, buffer sizes, and `IndexUtil`-style linear indexing.
//!
//! An [`ArrayShape`] is validated once, when it is built, so every method after that is total:
//! sizes, offsets and byte counts cannot overflow.

use super::tiling::{self, BufferPosition, Geometry, XlaIndexer};
use super::{ElementType, XlaError, XlaLayout};

/// An array: element type, dimension sizes (in dimension-number order) and layout.
///
/// # Invariants
/// Every dimension is at most `2^63 - 1`; `minor_to_major` is a permutation of the dimensions;
/// `padded_dimensions`, if set, has one width per dimension, each at least its size; each tile
/// spans at most the dimensions of what it tiles; the tiled, padded buffer's size in elements
/// and in bytes fits in `i64`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayShape {
    element_type: ElementType,
    dims: Vec<u64>,
    dynamic: Vec<bool>,
    layout: XlaLayout,
    geometry: Geometry,
}

impl ArrayShape {
    /// An array with this layout.
    ///
    /// ```
    /// use morello_xla::xla::{ArrayShape, ElementType, Tile, XlaLayout};
    /// let layout = XlaLayout::new(vec![1, 0]).with_tiles(vec![Tile::new(vec![2, 2]).unwrap()]);
    /// let shape = ArrayShape::new(ElementType::F32, vec![3, 5], layout).unwrap();
    /// assert_eq!(shape.to_string(), "f32[3,5]{1,0:T(2,2)}");
    /// assert_eq!(shape.buffer_elements(), 24);
    /// assert_eq!(shape.linear_index(&[2, 3]).unwrap(), 17);
    /// ```
    ///
    /// # Errors
    /// [`XlaError`] naming the first rule of the invariants that is broken.
    pub fn new(element_type: ElementType, dims: Vec<u64>, layout: XlaLayout) -> Result<ArrayShape, XlaError> {
        let geometry = Geometry::new(element_type, &dims, &layout)?;
        let dynamic = vec![false; dims.len()];
        Ok(ArrayShape { element_type, dims, dynamic, layout, geometry })
    }

    /// This shape with the dimensions marked `true` bounded dynamic (`<=N`): their size is an
    /// upper bound, which XLA allocates the buffer for; offsets are those of the bound.
    ///
    /// # Errors
    /// [`XlaError::IndexRank`] unless there is one flag per dimension.
    pub fn with_dynamic_dimensions(mut self, dynamic: Vec<bool>) -> Result<ArrayShape, XlaError> {
        if dynamic.len() != self.dims.len() {
            return Err(XlaError::IndexRank { len: dynamic.len(), rank: self.dims.len() });
        }
        self.dynamic = dynamic;
        Ok(self)
    }

    /// Whether dimension `dimension` (a dimension number) is bounded dynamic (`<=N`).
    pub fn is_dynamic_dimension(&self, dimension: usize) -> bool {
        self.dynamic.get(dimension).copied().unwrap_or(false)
    }

    /// Each dimension's size as the text writes it.
    pub fn dim_sizes(&self) -> Vec<DimSize> {
        self.dims
            .iter()
            .zip(&self.dynamic)
            .map(|(&size, &dynamic)| if dynamic { DimSize::Bounded(size) } else { DimSize::Static(size) })
            .collect()
    }

    /// An array with the default layout (major to minor, untiled, `S(0)`).
    ///
    /// # Errors
    /// [`XlaError`] if a dimension or the buffer is too large.
    pub fn with_default_layout(element_type: ElementType, dims: Vec<u64>) -> Result<ArrayShape, XlaError> {
        let layout = XlaLayout::default_for_rank(dims.len());
        ArrayShape::new(element_type, dims, layout)
    }

    /// The element type.
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// The dimension sizes, in dimension-number order.
    pub fn dims(&self) -> &[u64] {
        &self.dims
    }

    /// The layout.
    pub fn layout(&self) -> &XlaLayout {
        &self.layout
    }

    /// The number of dimensions (what older XLA documents call the rank).
    pub fn num_dims(&self) -> usize {
        self.dims.len()
    }

    /// The true number of dimensions: how many have a size greater than 1.
    pub fn true_num_dims(&self) -> usize {
        self.dims.iter().filter(|&&d| d > 1).count()
    }

    /// The dimension number that `dimension` denotes, counting from the end when negative
    /// (`-1` is the last dimension).
    ///
    /// # Errors
    /// [`XlaError::DimensionOutOfRange`] outside `-num_dims..num_dims`.
    pub fn dimension_index(&self, dimension: i64) -> Result<usize, XlaError> {
        let rank = self.dims.len();
        let out_of_range = || XlaError::DimensionOutOfRange { dimension, rank };
        let resolved = if dimension < 0 {
            rank.checked_sub(usize::try_from(dimension.unsigned_abs()).map_err(|_| out_of_range())?)
        } else {
            usize::try_from(dimension).ok().filter(|&d| d < rank)
        };
        resolved.ok_or_else(out_of_range)
    }

    /// The size of dimension `dimension`, counting from the end when negative.
    ///
    /// # Errors
    /// [`XlaError::DimensionOutOfRange`] outside `-num_dims..num_dims`.
    pub fn dimension_size(&self, dimension: i64) -> Result<u64, XlaError> {
        Ok(self.dims[self.dimension_index(dimension)?])
    }

    /// The number of elements (the product of the sizes; 1 for a scalar).
    pub fn element_count(&self) -> u64 {
        // With no zero size, at most the buffer size: every bound is at least its dimension's size.
        if self.dims.contains(&0) { 0 } else { self.dims.iter().product() }
    }

    /// The bounds of the buffer after every tiling, most major first (before tail padding).
    ///
    /// For `f32[3,5]{1,0:T(2,2)}` this is `[2, 3, 2, 2]`: 2 x 3 tiles of 2 x 2 elements.
    pub fn tiled_dims(&self) -> &[u64] {
        self.geometry.tiled_dims()
    }

    /// The number of elements the buffer holds, padding of every kind included.
    pub fn buffer_elements(&self) -> u64 {
        self.geometry.buffer_elements
    }

    /// The buffer's size in bytes, as XLA's `ShapeUtil::ByteSizeOf` counts it: elements times
    /// the type's byte width (a whole byte per sub-byte element), or packed `E(n)` bits each
    /// (rounded up to a byte); 0 for `token[]`, the pointer size 8 for `opaque[]`.
    pub fn buffer_bytes(&self) -> u64 {
        self.geometry.buffer_bytes
    }

    /// The position in the buffer of the element at `index` (XLA's
    /// `MultidimensionalIndexToLinearIndex`).
    ///
    /// # Errors
    /// [`XlaError::IndexRank`] or [`XlaError::IndexOutOfBounds`] for an index outside the array.
    pub fn linear_index(&self, index: &[u64]) -> Result<u64, XlaError> {
        self.check_index(index)?;
        Ok(self.indexer().offset(index))
    }

    /// What is at buffer position `linear`: an element's index, or padding (XLA's
    /// `LinearIndexToMultidimensionalIndex`, extended to padded layouts).
    ///
    /// # Errors
    /// [`XlaError::LinearIndexOutOfBounds`] at or past the buffer's end.
    pub fn multi_index(&self, linear: u64) -> Result<BufferPosition, XlaError> {
        if linear >= self.buffer_elements() {
            return Err(XlaError::LinearIndexOutOfBounds {
                index: linear,
                buffer_elements: self.buffer_elements(),
            });
        }
        Ok(tiling::position(&self.geometry, &self.dims, linear))
    }

    /// A fast offset calculator for this array (no checks, no allocation per element).
    pub fn indexer(&self) -> XlaIndexer {
        XlaIndexer::new(&self.geometry, &self.dims)
    }

    fn check_index(&self, index: &[u64]) -> Result<(), XlaError> {
        if index.len() != self.dims.len() {
            return Err(XlaError::IndexRank { len: index.len(), rank: self.dims.len() });
        }
        for (dimension, (&coordinate, &size)) in index.iter().zip(&self.dims).enumerate() {
            if coordinate >= size {
                return Err(XlaError::IndexOutOfBounds { dimension, coordinate, size });
            }
        }
        Ok(())
    }
}

/// The size of one dimension as the text writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DimSize {
    /// A fixed size, `5`.
    Static(u64),
    /// A bounded dynamic size, `<=5`: at most the bound, known at run time.
    Bounded(u64),
    /// An unbounded dynamic size, `?`: known only at run time.
    Unbounded,
}

/// An array that has no dense buffer to lay out: one with an unbounded dimension (`?`), whose
/// size is known only at run time, or a sparse one (a `D(..)` entry other than dense, whose
/// storage is index and value buffers). It is read, checked and printed, but has no geometry.
///
/// # Invariants
/// At least one dimension is [`DimSize::Unbounded`] or the layout is sparse; the layout's
/// `minor_to_major` is a permutation of the dimensions, its split configurations name existing
/// ones and its `D(..)`, if any, has one entry per dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferlessArrayShape {
    element_type: ElementType,
    dims: Vec<DimSize>,
    layout: XlaLayout,
}

impl BufferlessArrayShape {
    /// An array with these sizes and layout, at least one size unbounded or the layout sparse.
    ///
    /// The reader calls it only for such arrays; the others are [`ArrayShape`]s.
    ///
    /// # Errors
    /// [`XlaError`] naming the broken rule.
    pub(crate) fn new(
        element_type: ElementType,
        dims: Vec<DimSize>,
        layout: XlaLayout,
    ) -> Result<Self, XlaError> {
        if !element_type.is_array_element() {
            return Err(XlaError::NotAnArrayElement { element_type });
        }
        for (dimension, size) in dims.iter().enumerate() {
            match *size {
                DimSize::Static(size) | DimSize::Bounded(size) if size > super::layout::MAX_SIZE => {
                    return Err(XlaError::DimTooLarge { dimension, size });
                }
                _ => {}
            }
        }
        tiling::check_layout_for_rank(&layout, dims.len())?;
        debug_assert!(layout.is_sparse() || dims.contains(&DimSize::Unbounded), "a dense array has a buffer");
        Ok(BufferlessArrayShape { element_type, dims, layout })
    }

    /// The element type.
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// The dimension sizes, in dimension-number order.
    pub fn dims(&self) -> &[DimSize] {
        &self.dims
    }

    /// The layout.
    pub fn layout(&self) -> &XlaLayout {
        &self.layout
    }

    /// Why the array has no buffer: [`XlaError::Unbounded`] naming the first unbounded
    /// dimension, or [`XlaError::Sparse`].
    pub fn why_no_buffer(&self) -> XlaError {
        match self.dims.iter().position(|d| *d == DimSize::Unbounded) {
            Some(dimension) => XlaError::Unbounded { dimension },
            None => XlaError::Sparse,
        }
    }
}

/// An XLA shape: an array, or a tuple of shapes (possibly empty, possibly nested).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XlaShape {
    /// An array.
    Array(ArrayShape),
    /// A tuple of shapes.
    Tuple(Vec<XlaShape>),
    /// An array without a dense buffer: an unbounded dimension (`?`) or a sparse layout.
    Bufferless(BufferlessArrayShape),
}

impl XlaShape {
    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            XlaShape::Array(array) => Some(array),
            XlaShape::Tuple(_) | XlaShape::Bufferless(_) => None,
        }
    }

    /// Every array in the shape with its shape index (the path of tuple positions leading to
    /// it, as XLA's `ShapeIndex`), depth first in tuple order; an array alone has index `[]`.
    /// Arrays without a buffer (an unbounded dimension, a sparse layout) are not listed.
    pub fn arrays(&self) -> Vec<(Vec<usize>, &ArrayShape)> {
        let mut out = Vec::new();
        collect_arrays(self, &mut Vec::new(), &mut out);
        out
    }
}

fn collect_arrays<'a>(
    shape: &'a XlaShape,
    path: &mut Vec<usize>,
    out: &mut Vec<(Vec<usize>, &'a ArrayShape)>,
) {
    match shape {
        XlaShape::Array(array) => out.push((path.clone(), array)),
        XlaShape::Bufferless(_) => {}
        XlaShape::Tuple(elements) => {
            for (i, element) in elements.iter().enumerate() {
                path.push(i);
                collect_arrays(element, path, out);
                path.pop();
            }
        }
    }
}

impl From<ArrayShape> for XlaShape {
    fn from(array: ArrayShape) -> Self {
        XlaShape::Array(array)
    }
}
