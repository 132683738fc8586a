//! `dot` as `Matmul [b, m, k, n]`: the batch dims, the lhs's free dims, the contracting dims and
//! the rhs's free dims each merge into one spec dim (in their order), so batch and contracting
//! dims may sit anywhere in either operand; each operand's layout is the order of its merged
//! dims in memory. A bias added along the output's `n` dims and an activation on top make it
//! `MatmulBias`.

use morello_core::dtype::Dtype;
use morello_core::spec::{Activation, PrimitiveKind};
use morello_xla::hlo::{ElementwiseOp, HloOp};

use super::{Context, Input, Recognized, activation, size, spec_dtype};
use crate::graph::ValueId;
use crate::views::{Group, dense};

/// The matmul (with its epilogue, when there is one and `epilogue` asks for it) of dot node
/// `node`, or why there is none.
pub(crate) fn dot(cx: &Context<'_>, node: usize, epilogue: bool) -> Result<Recognized, String> {
    let graph = cx.graph;
    let n = &graph.nodes[node];
    let Some(HloOp::Dot(dims)) = n.op() else { return Err("not a dot".into()) };
    let (lhs_v, rhs_v) = (n.operands[0], n.operands[1]);
    let (lhs, rhs, out) = (graph.shape(lhs_v), graph.shape(rhs_v), &n.outputs[0]);
    let dtype = spec_dtype(out.element_type).filter(|d| {
        matches!(d, Dtype::F32 | Dtype::I32 | Dtype::U32)
            && lhs.element_type == out.element_type
            && rhs.element_type == out.element_type
    });
    let Some(dtype) = dtype else {
        return Err(format!(
            "a {} x {} -> {} dot has no spec (searched matmuls take f32, s32 or u32 operands of the result's type)",
            lhs.element_type, rhs.element_type, out.element_type
        ));
    };
    let free = |rank: usize, a: &[usize], b: &[usize]| -> Group {
        (0..rank).filter(|d| !a.contains(d) && !b.contains(d)).collect()
    };
    let lhs_free = free(lhs.rank(), &dims.lhs_batch, &dims.lhs_contracting);
    let rhs_free = free(rhs.rank(), &dims.rhs_batch, &dims.rhs_contracting);
    let (nb, nm) = (dims.lhs_batch.len(), lhs_free.len());
    let out_groups: Vec<Group> =
        vec![(0..nb).collect(), (nb..nb + nm).collect(), (nb + nm..out.rank()).collect()];
    let sizes = [
        size(&lhs.dims, &dims.lhs_batch),
        size(&lhs.dims, &lhs_free),
        size(&lhs.dims, &dims.lhs_contracting),
        size(&rhs.dims, &rhs_free),
    ];
    let [Some(b), Some(m), Some(k), Some(nn)] = sizes else {
        return Err("a dimension is empty or above 2^31 elements, which specs cannot hold".into());
    };
    let mut inputs = vec![
        Input { value: lhs_v, groups: vec![dims.lhs_batch.clone(), lhs_free, dims.lhs_contracting.clone()] },
        Input { value: rhs_v, groups: vec![dims.rhs_batch.clone(), dims.rhs_contracting.clone(), rhs_free] },
    ];
    let mut recognized = Recognized {
        top: node,
        absorbed: Vec::new(),
        kind: PrimitiveKind::Matmul { accum: false },
        shape: vec![b, m, k, nn],
        inputs: Vec::new(),
        output_groups: out_groups.clone(),
        dtype,
        what: "matmul".into(),
    };
    if dtype == Dtype::F32 && epilogue {
        if let Some((add, bias)) = bias_add(cx, node, &out_groups[2]) {
            let (top, region, activation) = activation::on_top(cx, add);
            inputs.push(Input { value: bias, groups: vec![out_groups[2].clone()] });
            recognized.kind = PrimitiveKind::MatmulBias { activation };
            recognized.top = top;
            recognized.absorbed = std::iter::once(node)
                .chain(std::iter::once(add).filter(|&a| a != top))
                .chain(region)
                .collect();
            recognized.what = match activation {
                Activation::Identity => "matmul with its bias".into(),
                a => format!("matmul with its bias and {}", a.name()),
            };
        }
    }
    recognized.inputs = inputs;
    Ok(recognized)
}

/// The `add` of a bias along the `n` dims to the dot's value, when the dot has no other reader:
/// the add node and the bias value.
fn bias_add(cx: &Context<'_>, dot: usize, n_dims: &[usize]) -> Option<(usize, ValueId)> {
    let value = ValueId::of(dot);
    let readers = cx.readers(value);
    let [add] = readers.iter().copied().collect::<Vec<_>>()[..] else { return None };
    if cx.results.contains(&value)
        || cx.taken.contains(&add)
        || cx.elementwise(add) != Some(ElementwiseOp::Add)
    {
        return None;
    }
    let node = &cx.graph.nodes[add];
    let position = node.operands.iter().position(|&o| o == value)?;
    let bias = node.operands[1 - position];
    if node.operands[position.min(1)..].iter().filter(|&&o| o == value).count() > 1 {
        return None;
    }
    let view = cx.view(bias);
    let dims = &cx.graph.shape(bias).dims;
    let rank = dims.len();
    if (0..rank).any(|d| !n_dims.contains(&d) && view.strides[d] != 0 && dims[d] != 1) {
        return None;
    }
    let operand = dense(view, dims, &[n_dims.to_vec()])?;
    let contiguous = n_dims.iter().rev().find(|&&d| dims[d] != 1).is_none_or(|&d| view.strides[d] == 1);
    (contiguous
        && operand.sizes.len() == 1
        && cx.graph.shape(bias).element_type == cx.graph.nodes[dot].outputs[0].element_type)
        .then_some((add, bias))
}
