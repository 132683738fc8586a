//! A convolution's lowerings: its split into unpadded regions (`CanonicalSpec::padding_regions`)
//! and its reading as a matmul over the same buffers (`CanonicalSpec::as_matmul`,
//! [`matmul_axes`]). The operator itself, its geometry ([`ConvGeometry`]: strides, dilations,
//! padding, and their text) and its operand dims are `crate::operators`' `conv.rs`.

use super::{CanonicalSpec, ConvGeometry, FillValue, LogicalSpec, PrimitiveKind, SpecError, TensorSpec};
use crate::layout::{Layout, LayoutDim, LayoutView, PhysDim};
use crate::shape::Shape;
use crate::target::{LevelKind, Target};

/// Where one dim of an operand of a lowered spec reads its parent operand: the parent's dim and
/// the step (`Axis { dim: 3, scale: 2 }`: point `p` is the parent's point `2 p` along dim 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    /// The parent operand's dim.
    pub dim: usize,
    /// The step along it.
    pub scale: u32,
}

/// For each operand of a convolution lowered to a matmul ([`CanonicalSpec::as_matmul`]), where each
/// matmul operand dim reads the convolution's operand (`None`: a dim of extent 1 that reads
/// nothing, the filters' batch):
///
/// ```text
/// lhs [b, m, k]  = image [b, c, h, w]:    b -> b, m -> w (step stride_w), k -> c
/// rhs [b, k, n]  = filters [f, c, fh, fw]: b -> -, k -> c, n -> f
/// out [b, m, n]  = out [b, f, h, w]:       b -> b, m -> w, n -> f
/// ```
pub fn matmul_axes(geometry: &ConvGeometry) -> [Vec<Option<Axis>>; 3] {
    let axis = |dim: usize, scale: u32| Some(Axis { dim, scale });
    [
        vec![axis(0, 1), axis(3, u32::from(geometry.stride[1])), axis(1, 1)],
        vec![None, axis(1, 1), axis(0, 1)],
        vec![axis(0, 1), axis(3, 1), axis(1, 1)],
    ]
}

/// One stage of a padded convolution split into regions ([`CanonicalSpec::padding_regions`]).
#[derive(Debug, Clone)]
pub struct PaddingRegion {
    /// The region's spec: an unpadded convolution, or a zero fill of outputs that read only padding.
    pub spec: CanonicalSpec,
    /// The parent's operand behind each of the region's operands.
    pub operands: Vec<usize>,
    /// Where each of the region's operands starts in that parent operand.
    pub origins: Vec<Vec<u32>>,
}

/// A run of output rows (or columns) whose windows read the same filter taps inside the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Band {
    /// First output row of the run.
    start: u32,
    /// Output rows in the run.
    len: u32,
    /// First filter tap inside the image.
    tap: u32,
    /// Taps inside the image (0: the rows read only padding).
    taps: u32,
}

/// The bands of one spatial axis: output rows `0..out`, `taps` filter taps, image extent `image`.
fn bands(out: u32, taps: u32, image: u32, stride: u32, dilation: u32, pad_before: u32) -> Vec<Band> {
    let (stride, dilation, pad) = (i64::from(stride), i64::from(dilation), i64::from(pad_before));
    let mut result: Vec<Band> = Vec::new();
    for row in 0..out {
        let base = stride * i64::from(row) - pad;
        // Taps t with 0 <= base + dilation t <= image - 1.
        let lo = if base >= 0 { 0 } else { (-base + dilation - 1) / dilation };
        let hi = (i64::from(image) - 1 - base).div_euclid(dilation).min(i64::from(taps) - 1);
        let (tap, count) = if hi < lo { (0, 0) } else { (lo as u32, (hi - lo + 1) as u32) };
        match result.last_mut() {
            Some(band) if band.tap == tap && band.taps == count => band.len += 1,
            _ => result.push(Band { start: row, len: 1, tap, taps: count }),
        }
    }
    result
}

/// Layout dims relabelled by `axes` (the new dim `i` is parent dim `axes[i].dim`).
fn relabel(
    operand: &TensorSpec,
    axes: &[Option<Axis>],
    shape: &Shape,
    target: &Target,
) -> Result<TensorSpec, SpecError> {
    let layout_error = |source| SpecError::Layout { operand: 0, source };
    let scalar = target.level(operand.level).kind == LevelKind::ScalarRegisters;
    let mut dims = Vec::new();
    let mut contiguous = usize::from(operand.contiguous_dims);
    let physical = operand.layout.dims();
    for (position, ld) in physical.iter().enumerate() {
        let Some(new) = axes.iter().position(|a| a.is_some_and(|a| a.dim == usize::from(ld.logical))) else {
            if operand.shape.dim(usize::from(ld.logical)) > 1 {
                return Err(SpecError::Lowering("a dim of extent above 1 has no place in the matmul"));
            }
            continue;
        };
        let axis = axes[new].expect("found by position");
        if axis.scale > 1 && shape.dim(new) > 1 {
            // A strided dim keeps its order but no run continues through it.
            let planes = physical.iter().filter(|d| d.logical == ld.logical).count();
            if planes > 1 || ld.kind != PhysDim::Dynamic {
                return Err(SpecError::Lowering("a strided dim must be one plain physical dim"));
            }
            contiguous = contiguous.min(physical.len() - 1 - position);
        }
        dims.push(LayoutDim { logical: new as u8, kind: ld.kind });
    }
    let (layout, contiguous_dims) = if scalar {
        let dense = LayoutView::dense(&Layout::row_major(shape.rank() as u8), shape).map_err(layout_error)?;
        (dense.layout, dense.contiguous_dims)
    } else {
        let layout = Layout::new(dims).map_err(layout_error)?;
        let view = LayoutView::from_parts(&layout, contiguous as u8, shape).map_err(layout_error)?;
        (view.layout, view.contiguous_dims)
    };
    // The lowered view's strides are not the operand's runs: its pitch is left unknown (no set
    // conflicts are counted for it).
    Ok(operand.view(shape.clone(), layout, contiguous_dims))
}

impl CanonicalSpec {
    /// The matmul a convolution with a one-row output and a 1x1 window is, on the same buffers
    /// (operand dims as in [`matmul_axes`]): `MatmulAccum [1, w, c, f]` for `ConvAccum [1, f, c, 1,
    /// w, 1, 1]`. `None` for other specs (another kind, a batch, more rows, a larger window or
    /// padding).
    ///
    /// # Errors
    /// [`SpecError::Lowering`] when an operand's layout cannot be read as a matmul operand (a
    /// strided dim that is packed).
    pub fn as_matmul(&self, target: &Target) -> Option<Result<CanonicalSpec, SpecError>> {
        let PrimitiveKind::Conv { accum, geometry } = self.kind else { return None };
        let [b, f, c, h, w, fh, fw] = *self.shape.dims() else { return None };
        if geometry.is_padded() || b != 1 || h != 1 || fh != 1 || fw != 1 {
            return None;
        }
        let build = || -> Result<CanonicalSpec, SpecError> {
            let shapes = PrimitiveKind::Matmul { accum }.operand_shapes(
                &Shape::new(vec![1, w, c, f])
                    .map_err(|source| SpecError::OperandShape { operand: 0, source })?,
            )?;
            let operands = self
                .operands
                .iter()
                .zip(matmul_axes(&geometry))
                .zip(&shapes)
                .map(|((operand, axes), shape)| relabel(operand, &axes, shape, target))
                .collect::<Result<Vec<_>, _>>()?;
            LogicalSpec {
                kind: PrimitiveKind::Matmul { accum },
                shape: Shape::new(vec![1, w, c, f]).expect("dims of a valid shape"),
                operands,
                serial_only: self.serial_only,
            }
            .canonicalize(target)
        };
        Some(build())
    }

    /// A padded convolution as unpadded convolutions over regions of its output: along each
    /// spatial axis the output rows whose windows read the same filter taps inside the image form
    /// a band, and each pair of a row band and a column band is one region, a convolution over
    /// those taps and the image box they read (or a zero fill of its output, if its windows read
    /// only padding). The regions cover the output exactly once. `None` for other specs.
    ///
    /// # Errors
    /// [`SpecError`] if a region's spec is invalid (it cannot be, for a valid spec).
    pub fn padding_regions(&self, target: &Target) -> Option<Result<Vec<PaddingRegion>, SpecError>> {
        let PrimitiveKind::Conv { accum, geometry } = self.kind else { return None };
        if !geometry.is_padded() {
            return None;
        }
        let [b, f, c, h, w, fh, fw] = *self.shape.dims() else { return None };
        let image = &self.operands[0].shape;
        let axis_bands = |axis: usize, out: u32, taps: u32| {
            let (before, _) = geometry.pad(axis);
            bands(
                out,
                taps,
                image.dim(2 + axis),
                u32::from(geometry.stride[axis]),
                u32::from(geometry.dilation[axis]),
                before,
            )
        };
        let (rows, cols) = (axis_bands(0, h, fh), axis_bands(1, w, fw));
        let mut regions = Vec::new();
        let view = |i: usize, shape: &Shape, origin: &[u32]| -> Result<TensorSpec, SpecError> {
            let o = &self.operands[i];
            let parent = LayoutView { layout: o.layout.clone(), contiguous_dims: o.contiguous_dims };
            let tiled = parent
                .tile_at(&o.shape, shape, origin)
                .map_err(|source| SpecError::Layout { operand: i, source })?;
            Ok(TensorSpec {
                shape: shape.clone(),
                layout: tiled.layout,
                contiguous_dims: tiled.contiguous_dims,
                ..o.clone()
            })
        };
        let shape_of = |dims: Vec<u32>| {
            Shape::new(dims).map_err(|source| SpecError::OperandShape { operand: 0, source })
        };
        let build = || -> Result<Vec<PaddingRegion>, SpecError> {
            for row in &rows {
                for col in &cols {
                    let out_shape = shape_of(vec![b, f, row.len, col.len])?;
                    let out_origin = vec![0, 0, row.start, col.start];
                    if row.taps == 0 || col.taps == 0 {
                        if accum {
                            continue;
                        }
                        let out = view(2, &out_shape, &out_origin)?;
                        regions.push(PaddingRegion {
                            spec: CanonicalSpec::fill(FillValue::Zero, &out, self.serial_only, target)?,
                            operands: vec![2],
                            origins: vec![out_origin],
                        });
                        continue;
                    }
                    let kind = PrimitiveKind::Conv { accum, geometry: geometry.unpadded() };
                    let shape = shape_of(vec![b, f, c, row.len, col.len, row.taps, col.taps])?;
                    let shapes = kind.operand_shapes(&shape)?;
                    let position = |axis: usize, band: &Band| {
                        let (before, _) = geometry.pad(axis);
                        u32::from(geometry.stride[axis]) * band.start
                            + u32::from(geometry.dilation[axis]) * band.tap
                            - before
                    };
                    let origins = vec![
                        vec![0, 0, position(0, row), position(1, col)],
                        vec![0, 0, row.tap, col.tap],
                        out_origin,
                    ];
                    let operands =
                        (0..3).map(|i| view(i, &shapes[i], &origins[i])).collect::<Result<Vec<_>, _>>()?;
                    let spec = LogicalSpec { kind, shape, operands, serial_only: self.serial_only }
                        .canonicalize(target)?;
                    regions.push(PaddingRegion { spec, operands: vec![0, 1, 2], origins });
                }
            }
            Ok(regions)
        };
        Some(build())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn bands_group_rows_that_read_the_same_taps() {
        // 3 taps, pad 1, stride 1 over 8 rows: row 0 misses tap 0, row 7 misses tap 2.
        let got = bands(8, 3, 8, 1, 1, 1);
        assert_eq!(
            got,
            vec![
                Band { start: 0, len: 1, tap: 1, taps: 2 },
                Band { start: 1, len: 6, tap: 0, taps: 3 },
                Band { start: 7, len: 1, tap: 0, taps: 2 },
            ]
        );
        // Stride 2, pad 0 before: 4 outputs over 8 rows (pad 1 after), the last misses tap 2.
        assert_eq!(bands(4, 3, 8, 2, 1, 0).last(), Some(&Band { start: 3, len: 1, tap: 0, taps: 2 }));
        // Padding wider than the window: a row that reads only padding.
        assert_eq!(bands(3, 1, 1, 1, 1, 1)[0], Band { start: 0, len: 1, tap: 0, taps: 0 });
    }

    #[test]
    fn geometry_text_round_trips() {
        for text in ["", ":s2x2", ":d2x1", ":p1x1x1x1", ":s2x1:d2x2:p0x1x0x1"] {
            let g = ConvGeometry::parse_suffix(text).unwrap();
            assert_eq!(g.to_string(), text);
        }
        assert!(ConvGeometry::parse_suffix(":s0x1").unwrap_err().to_string().contains("stride"));
        assert!(ConvGeometry::parse_suffix(":q1").is_err());
        assert!(ConvGeometry::parse_suffix(":p1x1").is_err());
        assert!(ConvGeometry::parse_suffix(":é1x1").is_err());
    }
}
