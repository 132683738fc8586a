//! `convolution` as `Conv [b, f, c, h, w, fh, fw]` (logical NCHW and FCHW, any layouts): two
//! spatial dims, one feature group and one batch group, no base dilation or kernel reversal,
//! non-negative padding, f32. The image, filters and output are read in the layouts the HLO
//! gives them (NHWC and HWIO as JAX emits them are permutations like any other).

use morello_core::dtype::Dtype;
use morello_core::shape::Shape;
use morello_core::spec::{ConvGeometry, PrimitiveKind};
use morello_xla::hlo::HloOp;
use morello_xla::xla::ElementType;

use super::{Context, Input, Recognized};

/// The convolution of node `node`, or why it has no spec.
pub(crate) fn convolution(cx: &Context<'_>, node: usize) -> Result<Recognized, String> {
    let graph = cx.graph;
    let n = &graph.nodes[node];
    let Some(HloOp::Convolution { window, dims, feature_group_count, batch_group_count }) = n.op() else {
        return Err("not a convolution".into());
    };
    let (lhs_v, rhs_v) = (n.operands[0], n.operands[1]);
    let (lhs, rhs, out) = (graph.shape(lhs_v), graph.shape(rhs_v), &n.outputs[0]);
    if [lhs, rhs, out].iter().any(|s| s.element_type != ElementType::F32) {
        return Err("searched convolutions take f32 images, filters and outputs".into());
    }
    if window.len() != 2 {
        return Err(format!("searched convolutions are 2-D; this one has {} spatial dims", window.len()));
    }
    if *feature_group_count != 1 || *batch_group_count != 1 {
        return Err("grouped convolutions have no spec".into());
    }
    if window.iter().any(|w| w.base_dilation != 1 || w.reversal || w.pad_low < 0 || w.pad_high < 0) {
        return Err("base dilation, kernel reversal and negative padding have no spec".into());
    }
    let narrow =
        |v: i64| u16::try_from(v).map_err(|_| format!("{v} is above the 65535 a spec geometry holds"));
    let geometry = ConvGeometry {
        stride: [narrow(window[0].stride)?, narrow(window[1].stride)?],
        dilation: [narrow(window[0].window_dilation)?, narrow(window[1].window_dilation)?],
        padding: [
            narrow(window[0].pad_low)?,
            narrow(window[0].pad_high)?,
            narrow(window[1].pad_low)?,
            narrow(window[1].pad_high)?,
        ],
    };
    let size = |v: i64| u32::try_from(v).ok().filter(|s| (1..=1 << 31).contains(s));
    let sizes = [
        size(lhs.dims[dims.lhs_batch]),
        size(rhs.dims[dims.rhs_output_feature]),
        size(lhs.dims[dims.lhs_feature]),
        size(out.dims[dims.output_spatial[0]]),
        size(out.dims[dims.output_spatial[1]]),
        size(rhs.dims[dims.rhs_spatial[0]]),
        size(rhs.dims[dims.rhs_spatial[1]]),
    ];
    let shape: Vec<u32> = sizes
        .iter()
        .map(|s| s.ok_or("a dimension is empty or above 2^31 elements"))
        .collect::<Result<_, _>>()?;
    let kind = PrimitiveKind::Conv { accum: false, geometry };
    // The spec's image is what its windows read: rows past the last window are not in it.
    let iteration = Shape::new(shape.clone()).map_err(|e| e.to_string())?;
    let shapes = kind.operand_shapes(&iteration).map_err(|e| e.to_string())?;
    let image = shapes[0].dims();
    let (h, w) = (lhs.dims[dims.lhs_spatial[0]], lhs.dims[dims.lhs_spatial[1]]);
    if i64::from(image[2]) != h || i64::from(image[3]) != w {
        return Err(format!(
            "the windows read {}x{} of the {h}x{w} image (a stride leaves the last rows or columns unread), \
             which a spec cannot say",
            image[2], image[3]
        ));
    }
    Ok(Recognized {
        top: node,
        absorbed: Vec::new(),
        kind,
        shape,
        inputs: vec![
            Input {
                value: lhs_v,
                groups: vec![
                    vec![dims.lhs_batch],
                    vec![dims.lhs_feature],
                    vec![dims.lhs_spatial[0]],
                    vec![dims.lhs_spatial[1]],
                ],
            },
            Input {
                value: rhs_v,
                groups: vec![
                    vec![dims.rhs_output_feature],
                    vec![dims.rhs_input_feature],
                    vec![dims.rhs_spatial[0]],
                    vec![dims.rhs_spatial[1]],
                ],
            },
        ],
        output_groups: vec![
            vec![dims.output_batch],
            vec![dims.output_feature],
            vec![dims.output_spatial[0]],
            vec![dims.output_spatial[1]],
        ],
        dtype: Dtype::F32,
        what: "convolution".into(),
    })
}
