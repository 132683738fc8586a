//! Strided views: a value whose element `i` is element `offset + Σ strides[d] i[d]` of another
//! value's buffer, so a kernel can read it in place.
//!
//! Every value has one: its own buffer (in its layout) unless it is made by an op that only
//! moves elements, whose view follows from its operand's:
//!
//! ```text
//! transpose(dims)      strides'[k] = strides[dims[k]]
//! broadcast(dims)      strides'[dims[k]] = strides[k], 0 for the new dims
//! slice                offset += Σ start_d strides_d, strides'_d = stride_d strides_d
//! reverse(dims)        offset += (n_d - 1) strides_d, strides'_d = -strides_d
//! copy, convert to the same type      the same view
//! reshape              when the dims it merges are contiguous in the view (row-major over
//!                      groups of dims of equal volume), else none: the value is its own buffer
//! bitcast              a reshape of the physical orders
//! ```
//!
//! Views are computed in one pass in topological order (no recursion, so a chain of any length
//! is fine).

use morello_core::layout::{Layout, LayoutDim};
use morello_xla::hlo::{ArrayShape, ElementwiseOp, HloOp};

use crate::graph::{Graph, NodeKind, ValueId};

/// A strided view of a value's buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// The value whose buffer is read.
    pub base: ValueId,
    /// The offset, in elements of the base's buffer, of the view's element 0.
    pub offset: i64,
    /// Per logical dim of the viewed value, the step in the base's buffer.
    pub strides: Vec<i64>,
}

/// The strides of each logical dim of an array in its own buffer (its layout's physical order).
pub fn layout_strides(shape: &ArrayShape) -> Vec<i64> {
    let mut strides = vec![0i64; shape.rank()];
    let mut stride = 1i64;
    for &d in &shape.minor_to_major_or_default() {
        strides[d] = stride;
        stride = stride.saturating_mul(shape.dims[d]);
    }
    strides
}

/// Whether an op only moves its operand's elements (so its value may be a view).
pub fn is_view_op(op: &HloOp, operand: Option<&ArrayShape>, result: &ArrayShape) -> bool {
    match op {
        HloOp::Transpose { .. }
        | HloOp::Broadcast { .. }
        | HloOp::Slice { .. }
        | HloOp::Reverse { .. }
        | HloOp::Reshape
        | HloOp::Bitcast
        | HloOp::Elementwise(ElementwiseOp::Copy) => true,
        HloOp::Elementwise(ElementwiseOp::Convert) => {
            operand.is_some_and(|o| o.element_type == result.element_type)
        }
        _ => false,
    }
}

/// The view of every value of the graph, by node and output.
pub fn views(graph: &Graph) -> Vec<Vec<View>> {
    let mut out: Vec<Vec<View>> = Vec::with_capacity(graph.nodes.len());
    for (id, node) in graph.nodes.iter().enumerate() {
        let own = |output: usize| View {
            base: ValueId { node: id, output },
            offset: 0,
            strides: layout_strides(&node.outputs[output]),
        };
        let derived = match &node.kind {
            NodeKind::Op(op) if node.outputs.len() == 1 && node.operands.len() == 1 => {
                let operand = node.operands[0];
                let from = graph.shape(operand);
                if is_view_op(op, Some(from), &node.outputs[0]) {
                    derive(op, &out[operand.node][operand.output], from, &node.outputs[0])
                } else {
                    None
                }
            }
            _ => None,
        };
        let views = match derived {
            Some(view) => vec![view],
            None => (0..node.outputs.len()).map(own).collect(),
        };
        out.push(views);
    }
    out
}

/// The view of an op's result from its operand's view.
fn derive(op: &HloOp, view: &View, from: &ArrayShape, to: &ArrayShape) -> Option<View> {
    let mut v = view.clone();
    match op {
        HloOp::Transpose { dimensions } => v.strides = dimensions.iter().map(|&d| view.strides[d]).collect(),
        HloOp::Broadcast { dimensions } => {
            let mut strides = vec![0i64; to.rank()];
            for (k, &d) in dimensions.iter().enumerate() {
                strides[d] = view.strides[k];
            }
            v.strides = strides;
        }
        HloOp::Slice { dims } => {
            for (d, s) in dims.iter().enumerate() {
                v.offset = v.offset.checked_add(s.start.checked_mul(view.strides[d])?)?;
                v.strides[d] = view.strides[d].checked_mul(s.stride)?;
            }
        }
        HloOp::Reverse { dimensions } => {
            for &d in dimensions {
                v.offset = v.offset.checked_add((from.dims[d] - 1).max(0).checked_mul(view.strides[d])?)?;
                v.strides[d] = -view.strides[d];
            }
        }
        HloOp::Reshape => v.strides = reshape_strides(&from.dims, &view.strides, &to.dims)?,
        HloOp::Bitcast => {
            let from_order = from.major_to_minor();
            let to_order = to.major_to_minor();
            let from_dims: Vec<i64> = from_order.iter().map(|&d| from.dims[d]).collect();
            let from_strides: Vec<i64> = from_order.iter().map(|&d| view.strides[d]).collect();
            let to_dims: Vec<i64> = to_order.iter().map(|&d| to.dims[d]).collect();
            let physical = reshape_strides(&from_dims, &from_strides, &to_dims)?;
            let mut strides = vec![0i64; to.rank()];
            for (k, &d) in to_order.iter().enumerate() {
                strides[d] = physical[k];
            }
            v.strides = strides;
        }
        _ => {}
    }
    Some(v)
}

/// The strides of a row-major reshape of a strided view from `dims` to `new_dims`, when every
/// group of dims merged is contiguous in the view; `None` otherwise.
pub fn reshape_strides(dims: &[i64], strides: &[i64], new_dims: &[i64]) -> Option<Vec<i64>> {
    if dims.contains(&0) || new_dims.contains(&0) {
        return Some(vec![0; new_dims.len()]);
    }
    let old: Vec<(i64, i64)> =
        dims.iter().zip(strides).filter(|(d, _)| **d != 1).map(|(&d, &s)| (d, s)).collect();
    let mut result = vec![0i64; new_dims.len()];
    let new: Vec<usize> = (0..new_dims.len()).filter(|&k| new_dims[k] != 1).collect();
    let (mut i, mut j) = (0usize, 0usize);
    while i < old.len() && j < new.len() {
        // One group: old dims i..i2 and new dims j..j2 of equal volume.
        let (mut i2, mut j2) = (i + 1, j + 1);
        let (mut a, mut b) = (old[i].0, new_dims[new[j]]);
        while a != b {
            if a < b {
                a = a.checked_mul(old.get(i2)?.0)?;
                i2 += 1;
            } else {
                b = b.checked_mul(new_dims[*new.get(j2)?])?;
                j2 += 1;
            }
        }
        for k in i..i2 - 1 {
            if old[k].1 != old[k + 1].1.checked_mul(old[k + 1].0)? {
                return None;
            }
        }
        let mut stride = old[i2 - 1].1;
        for k in (j..j2).rev() {
            result[new[k]] = stride;
            stride = stride.checked_mul(new_dims[new[k]])?;
        }
        i = i2;
        j = j2;
    }
    (i == old.len() && j == new.len()).then_some(result)
}

/// One dim of a spec operand: the values' dims it merges (row-major, in this order).
pub type Group = Vec<usize>;

/// A spec operand read in place: the layout of its groups (slowest first) and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenseOperand {
    /// The base buffer.
    pub base: ValueId,
    /// The offset of element 0 in the base buffer.
    pub offset: i64,
    /// The size of each group.
    pub sizes: Vec<u32>,
    /// The layout of the groups (a permutation, slowest first).
    pub layout: Layout,
}

/// The groups of a view as a dense tensor in some order of the groups: each group's dims
/// contiguous in the view in their order, and the groups, sorted by stride, packed without
/// gaps; `None` when the view is not such a tensor (a broadcast, a slice with gaps, a reversal).
pub fn dense(view: &View, dims: &[i64], groups: &[Group]) -> Option<DenseOperand> {
    let mut sizes = Vec::with_capacity(groups.len());
    let mut group_strides = Vec::with_capacity(groups.len());
    for group in groups {
        let members: Vec<usize> = group.iter().copied().filter(|&d| dims[d] != 1).collect();
        let size: i64 = group.iter().map(|&d| dims[d]).product();
        for pair in members.windows(2) {
            if view.strides[pair[0]] != view.strides[pair[1]].checked_mul(dims[pair[1]])? {
                return None;
            }
        }
        let stride = members.last().map_or(0, |&d| view.strides[d]);
        if size > 1 && stride <= 0 {
            return None;
        }
        sizes.push(u32::try_from(size).ok().filter(|&s| s >= 1)?);
        group_strides.push(stride);
    }
    // Physical order: size-1 groups first, then by decreasing stride.
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&g| (sizes[g] != 1, std::cmp::Reverse(group_strides[g]), g));
    let mut expected = 1i64;
    for &g in order.iter().rev() {
        if sizes[g] == 1 {
            continue;
        }
        if group_strides[g] != expected {
            return None;
        }
        expected = expected.checked_mul(i64::from(sizes[g]))?;
    }
    let layout = Layout::new(order.iter().map(|&g| LayoutDim::dynamic(g as u8)).collect()).ok()?;
    Some(DenseOperand { base: view.base, offset: view.offset, sizes, layout })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn reshapes_of_contiguous_groups_are_views() {
        // [128, 768] row-major to [128, 12, 64]: the second dim splits.
        assert_eq!(reshape_strides(&[128, 768], &[768, 1], &[128, 12, 64]), Some(vec![768, 64, 1]));
        // The transpose of a [4, 6] row-major buffer cannot merge its dims.
        assert_eq!(reshape_strides(&[6, 4], &[1, 6], &[24]), None);
        // Size-1 dims come and go freely.
        assert_eq!(reshape_strides(&[3, 1], &[1, 7], &[1, 3]), Some(vec![0, 1]));
        assert_eq!(reshape_strides(&[2, 3, 4], &[12, 4, 1], &[6, 4]), Some(vec![4, 1]));
    }

    #[test]
    fn dense_groups_give_a_layout() {
        let transposed = View { base: ValueId::of(0), offset: 0, strides: vec![1, 3] };
        // A [3, 4] view of a row-major [4, 3] buffer, as matmul [k, n] groups.
        let d = dense(&transposed, &[3, 4], &[vec![], vec![0], vec![1]]).unwrap();
        assert_eq!(d.sizes, vec![1, 3, 4]);
        assert_eq!(d.layout.to_string(), "[0, 2, 1]");
        let broadcast = View { base: ValueId::of(0), offset: 0, strides: vec![0, 1] };
        assert_eq!(dense(&broadcast, &[3, 4], &[vec![0], vec![1]]), None);
        // [m, b, k] row-major with groups [b], [m], [k].
        let mbk = View { base: ValueId::of(0), offset: 5, strides: vec![768, 64, 1] };
        let d = dense(&mbk, &[128, 12, 64], &[vec![1], vec![0], vec![2]]).unwrap();
        assert_eq!((d.offset, d.layout.to_string()), (5, "[1, 0, 2]".to_string()));
    }
}
