//! `reverse`: each reversed dimension counts down from its upper bound; the map is its own
//! inverse, so both directions are the same map.
//!
//! ```text
//! (d_0, ...) -> (e_0, ...),  e_k = (size_k - 1) - d_k if k is reversed, else d_k
//! ```

use crate::hlo::ArrayShape;
use crate::indexing::{IndexingError, IndexingMap};

use super::{d, over};

pub(super) fn map(shape: &ArrayShape, dimensions: &[usize]) -> Result<IndexingMap, IndexingError> {
    let results = shape
        .dims
        .iter()
        .enumerate()
        .map(|(k, &size)| if dimensions.contains(&k) { d(k).neg()?.add_constant(size - 1) } else { Ok(d(k)) })
        .collect::<Result<Vec<_>, _>>()?;
    over(&shape.dims, results)
}
