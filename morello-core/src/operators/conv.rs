//! `Conv`: 2-D convolution of an NCHW image with FCHW filters (logical orders; any layout, NHWC
//! and HWIO included), with strides, dilations and zero padding (`Conv`, `ConvAccum`, each followed
//! by its geometry's attributes: `Conv:s2x2:p0x1x0x1`).
//!
//! ```text
//! ordinal:  9
//! forms:    Conv, ConvAccum (accum: true); the geometry (strides s, dilations d, padding) is
//!           printed after the name (`:sHxW`, `:dHxW`, `:pTOPxBOTTOMxLEFTxRIGHT`, defaults left out)
//! space:    [b, f, c, h, w, fh, fw]
//! operands: image [b, c, s (h - 1) + d (fh - 1) + 1 - pads, ...] in, filters [f, c, fh, fw] in,
//!           out [b, f, h, w] out (in and out accumulating)
//! reduces:  c, fh, fw; the accumulating twin starts from zero
//! dtypes:   image and filters alike, out the same or wider (bf16 into f32)
//! computes: out[b, f, h, w] (+)= Σ_{c, fh, fw} image[b, c, s h + d fh - pad, ...] filters[f, c, fh, fw],
//!           taps in the padding skipped
//! verified: as a matmul with k = c fh fw
//! parts:    padded: the unpadded convolution of each region (nothing else applies);
//!           unpadded: the matmul it is, on the same levels
//! ```
//!
//! The iteration space of a convolution is `[b, f, c, h, w, fh, fw]` (output rows `h`, output
//! columns `w`, filter taps `fh`, `fw`). The image element a point reads is
//!
//! ```text
//! image row    = stride_h * h + dilation_h * fh - pad_top        (a zero when outside the image)
//! image column = stride_w * w + dilation_w * fw - pad_left
//! image rows   = stride_h * (H - 1) + dilation_h * (FH - 1) + 1 - pad_top - pad_bottom
//! ```
//!
//! A tile of a convolution keeps the geometry; only tiles over `b`, `f` and `c` keep the padding
//! (a padded convolution is split into unpadded regions first, `CanonicalSpec::padding_regions` in
//! `crate::spec`), so every padded spec covers its whole image. The search reaches kernels only
//! through its parts: `actions/conv.rs` splits a padded one into regions, and a convolution with
//! one output row and a 1x1 window is computed as the matmul it is (`AsMatmul`).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{
    AbstractSpec, Accumulation, Arithmetic, Attributes, Direction, FillValue, FrontierLevels, KernelReach,
    OperandDim, OperandRole, OperatorDefinition, Parts, PrimitiveKind, contraction_dtypes, operand,
    plain_contraction, sum_tolerance,
};
use crate::dtype::Dtype;
use crate::shape::Shape;
use crate::target::{LevelId, Target};

pub(super) const DEFINITION: OperatorDefinition = OperatorDefinition::new(
    &[
        (PrimitiveKind::Conv { accum: false, geometry: ConvGeometry::UNIT }, "Conv"),
        (PrimitiveKind::Conv { accum: true, geometry: ConvGeometry::UNIT }, "ConvAccum"),
    ],
    &OPERANDS,
    operand_dims,
    contraction_dtypes,
    plain_contraction,
    sum_tolerance,
    description,
    |m| format!("Conv(1x2x2x3x3x2x2, f32 {m} row-major, f32 {m} row-major, f32 {m} row-major)"),
)
.rank(7, Some(&["b", "f", "c", "h", "w", "fh", "fw"]))
.reductions(&[2, 5, 6])
.accumulating(Accumulation { accumulates, twin, init: FillValue::Zero })
.family(family)
.attributes(Attributes { parse, print })
.arithmetic(Arithmetic::MultiplyAdd)
.frontier_levels(FrontierLevels::ReachingOperands)
.parts(parts, KernelReach::Parts)
.memory_bound(never_memory_bound);

const OPERANDS: [OperandRole; 3] =
    [operand("image", Direction::In), operand("filters", Direction::In), operand("out", Direction::Out)];

impl PrimitiveKind {
    /// A convolution's geometry (`None` for other kinds).
    pub fn conv_geometry(self) -> Option<ConvGeometry> {
        match self {
            PrimitiveKind::Conv { geometry, .. } => Some(geometry),
            _ => None,
        }
    }
}

fn operand_dims(kind: PrimitiveKind, _: usize) -> Vec<Vec<OperandDim>> {
    let g = kind.conv_geometry().unwrap_or(ConvGeometry::UNIT);
    vec![
        vec![OperandDim::one(0), OperandDim::one(2), window(3, 5, &g, 0), window(4, 6, &g, 1)],
        vec![OperandDim::one(1), OperandDim::one(2), OperandDim::one(5), OperandDim::one(6)],
        vec![OperandDim::one(0), OperandDim::one(1), OperandDim::one(3), OperandDim::one(4)],
    ]
}

/// The image dim of output dim `first` and filter dim `second` along spatial axis `axis`.
fn window(first: usize, second: usize, g: &ConvGeometry, axis: usize) -> OperandDim {
    let (pad_before, pad_after) = g.pad(axis);
    OperandDim {
        first,
        second: Some(second),
        scale: u32::from(g.stride[axis]),
        second_scale: u32::from(g.dilation[axis]),
        pad_before,
        pad_after,
    }
}

fn accumulates(kind: PrimitiveKind) -> bool {
    matches!(kind, PrimitiveKind::Conv { accum: true, .. })
}

fn twin(kind: PrimitiveKind) -> Option<PrimitiveKind> {
    match kind {
        PrimitiveKind::Conv { accum: false, geometry } => Some(PrimitiveKind::Conv { accum: true, geometry }),
        _ => None,
    }
}

/// The form: the geometry is an attribute, not part of the name.
fn family(kind: PrimitiveKind) -> PrimitiveKind {
    match kind {
        PrimitiveKind::Conv { accum, .. } => PrimitiveKind::Conv { accum, geometry: ConvGeometry::UNIT },
        other => other,
    }
}

fn parse(kind: PrimitiveKind, text: &str) -> Result<PrimitiveKind, String> {
    let geometry = ConvGeometry::parse_suffix(text).map_err(|e| e.to_string())?;
    Ok(PrimitiveKind::Conv { accum: accumulates(kind), geometry })
}

fn print(kind: PrimitiveKind, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match kind.conv_geometry() {
        Some(geometry) => write!(f, "{geometry}"),
        None => Ok(()),
    }
}

/// Padded: the unpadded convolution of its regions, at the same levels, and nothing else.
/// Unpadded: the matmul it is (besides tiling, moves and zero-then-accumulate).
fn parts(kind: PrimitiveKind, levels: &[LevelId], dtypes: &[Dtype], _: &Target) -> Parts {
    let PrimitiveKind::Conv { accum, geometry } = kind else { return Parts::None };
    let part = |kind| vec![vec![AbstractSpec { kind, levels: levels.to_vec(), dtypes: dtypes.to_vec() }]];
    if geometry.is_padded() {
        Parts::Only(part(PrimitiveKind::Conv { accum, geometry: geometry.unpadded() }))
    } else {
        Parts::Also(part(PrimitiveKind::Matmul { accum }))
    }
}

fn description(kind: PrimitiveKind) -> &'static str {
    if accumulates(kind) { "an accumulating convolution (out += ...)" } else { "a convolution" }
}

fn never_memory_bound(_: &Shape) -> bool {
    false
}

/// Strides, dilations and zero padding of a 2-D convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ConvGeometry {
    /// Output step along image rows and columns.
    pub stride: [u16; 2],
    /// Distance between filter taps along rows and columns.
    pub dilation: [u16; 2],
    /// Zero rows and columns added around the image: top, bottom, left, right.
    pub padding: [u16; 4],
}

impl Default for ConvGeometry {
    fn default() -> Self {
        ConvGeometry::UNIT
    }
}

/// Why a geometry's text does not parse or its values are out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvGeometryError {
    /// Malformed text.
    #[error("convolution attribute `{0}` is not `sHxW`, `dHxW` or `pTOPxBOTTOMxLEFTxRIGHT`")]
    Syntax(String),
    /// A stride or dilation of zero.
    #[error("convolution {0} must be at least 1")]
    Zero(&'static str),
}

impl ConvGeometry {
    /// Stride 1, dilation 1, no padding.
    pub const UNIT: ConvGeometry = ConvGeometry { stride: [1, 1], dilation: [1, 1], padding: [0, 0, 0, 0] };

    /// Whether any side is padded.
    pub fn is_padded(&self) -> bool {
        self.padding.iter().any(|&p| p > 0)
    }

    /// The same geometry without padding.
    pub fn unpadded(&self) -> ConvGeometry {
        ConvGeometry { padding: [0; 4], ..*self }
    }

    /// Padding before and after along spatial axis `axis` (0 rows, 1 columns).
    pub fn pad(&self, axis: usize) -> (u32, u32) {
        (u32::from(self.padding[2 * axis]), u32::from(self.padding[2 * axis + 1]))
    }

    /// Parses the attributes after a kind name (`:s2x2:p1x1x1x1`; empty for the default).
    ///
    /// # Errors
    /// [`ConvGeometryError`] for malformed text or a zero stride or dilation.
    pub fn parse_suffix(text: &str) -> Result<ConvGeometry, ConvGeometryError> {
        let mut g = ConvGeometry::UNIT;
        for part in text.split(':').filter(|p| !p.is_empty()) {
            let syntax = || ConvGeometryError::Syntax(part.to_string());
            let tag = part.chars().next().map_or(0, char::len_utf8);
            let (tag, rest) = part.split_at(tag);
            let numbers: Vec<u16> =
                rest.split('x').map(|n| n.parse::<u16>().map_err(|_| syntax())).collect::<Result<_, _>>()?;
            match (tag, numbers.as_slice()) {
                ("s", [h, w]) => g.stride = [*h, *w],
                ("d", [h, w]) => g.dilation = [*h, *w],
                ("p", [t, b, l, r]) => g.padding = [*t, *b, *l, *r],
                _ => return Err(syntax()),
            }
        }
        if g.stride.contains(&0) {
            return Err(ConvGeometryError::Zero("stride"));
        }
        if g.dilation.contains(&0) {
            return Err(ConvGeometryError::Zero("dilation"));
        }
        Ok(g)
    }
}

/// The suffix of the kind name: `:s2x2:d1x1:p1x1x1x1` with default parts left out.
impl fmt::Display for ConvGeometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.stride != [1, 1] {
            write!(f, ":s{}x{}", self.stride[0], self.stride[1])?;
        }
        if self.dilation != [1, 1] {
            write!(f, ":d{}x{}", self.dilation[0], self.dilation[1])?;
        }
        if self.is_padded() {
            let [t, b, l, r] = self.padding;
            write!(f, ":p{t}x{b}x{l}x{r}")?;
        }
        Ok(())
    }
}
