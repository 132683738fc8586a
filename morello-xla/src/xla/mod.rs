//! XLA shapes and layouts: the HLO shape text, tiling, padding, memory spaces, linear indexing,
//! and the bridge to morello [`Layout`](morello_core::layout::Layout)s.
//!
//! An XLA array shape such as `bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}` is an element type,
//! dimension sizes, and a layout: the order of the dimensions in memory (`minor_to_major`, most
//! minor first), tilings applied one after the other, padding (partial tiles,
//! `tail_padding_alignment_in_elements`, and the older `padded_dimensions`), and a memory space.
//!
//! - `element.rs`: [`ElementType`], names and sizes (sub-byte types packed);
//! - `layout.rs`: [`XlaLayout`], [`Tile`], [`MemorySpace`];
//! - `shape.rs`: [`ArrayShape`] (validated) and [`XlaShape`] (array or tuple), with the helpers
//!   of XLA's shape page: negative dimension numbers, true number of dimensions, buffer sizes;
//! - `tiling.rs`: what a layout means for addresses, linear <-> multi-index ([`XlaIndexer`],
//!   [`BufferPosition`]);
//! - `text.rs`: reading and canonical printing of the text form;
//! - `bridge.rs`: conversion to and from morello layouts ([`MorelloArray`], [`BridgeError`]);
//! - `error.rs`: [`XlaError`].
//!
//! ```
//! use morello_xla::xla::{ArrayShape, BufferPosition, MemorySpace};
//! let shape: ArrayShape = "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}".parse().unwrap();
//! assert_eq!(shape.to_string(), "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}");
//! assert_eq!(shape.layout().memory_space(), MemorySpace::VMEM);
//! assert_eq!(shape.buffer_bytes(), 32 * 32 * 4096 * 2);
//! // Rows 0 and 1 of a column sit next to each other (bf16 pairs in 32-bit words), then the
//! // next column.
//! assert_eq!(shape.linear_index(&[0, 1, 0]).unwrap(), 1);
//! assert_eq!(shape.multi_index(2).unwrap(), BufferPosition::Element(vec![0, 0, 1]));
//! assert_eq!(shape.to_morello().unwrap().layout.to_string(), "[0, 1, 2, 1 p(4), 2 p(128), 1 p(2)]");
//! ```
//!
//! Nothing here does I/O, and nothing panics on a value a user can write: every size is checked
//! against XLA's `int64` limit when a shape is built, and text errors quote the offending part
//! of the text with its column.

mod bridge;
mod element;
mod error;
mod layout;
mod shape;
mod text;
mod tiling;

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use bridge::{BridgeError, MorelloArray};
pub use element::ElementType;
pub use error::XlaError;
pub(crate) use error::fragment_of;
pub use layout::{DimLevel, DimLevelType, MemorySpace, SplitConfig, Tile, TileDim, XlaLayout};
pub use shape::{ArrayShape, BufferlessArrayShape, DimSize, XlaShape};
pub use tiling::{BufferPosition, PaddingKind, XlaIndexer};
