//! The softmax pattern along the last dim, as `Softmax [m, n]` (`m` the other dims merged):
//!
//! ```text
//! mx = reduce(x, -inf), dimensions={last}, to_apply=maximum      (maybe maximum(mx, -inf) after)
//! e  = exponential(subtract(x, broadcast(mx)))
//! s  = reduce(e, 0), dimensions={last}, to_apply=add
//! y  = divide(e, broadcast(s))      or   multiply(e, broadcast(divide(1, s)))   (XLA's form)
//! ```
//!
//! `x` is one value (the plan writes it to a buffer when it is an expression), every step but
//! `y` has no other reader, and `x` and `y` are f32, row-major in their last dim.

use morello_core::dtype::Dtype;
use morello_core::spec::PrimitiveKind;
use morello_xla::hlo::{ElementwiseOp, HloOp};
use morello_xla::xla::ElementType;

use super::{Context, Input, Recognized, size};
use crate::graph::ValueId;

/// The softmax whose result is node `y`, if `y` ends the pattern.
pub(crate) fn softmax(cx: &Context<'_>, y: usize) -> Option<Result<Recognized, String>> {
    let graph = cx.graph;
    let node = &graph.nodes[y];
    let shape = &node.outputs[0];
    let rank = shape.rank();
    if rank == 0 || shape.element_type != ElementType::F32 {
        return None;
    }
    let last = rank - 1;
    let mut absorbed: Vec<usize> = Vec::new();
    // y = e / broadcast(s), or e * broadcast(1 / s).
    let (e, s) = match cx.elementwise(y)? {
        ElementwiseOp::Divide => {
            let (e, b) = (node.operands[0], node.operands[1]);
            let s = cx.base(b);
            cx.is_broadcast_of(b, s, &[last]).then_some((e, s))?
        }
        ElementwiseOp::Multiply => {
            let pick = |e: ValueId, b: ValueId| -> Option<(ValueId, ValueId)> {
                let r = cx.base(b);
                if !cx.is_broadcast_of(b, r, &[last]) || cx.elementwise(r.node) != Some(ElementwiseOp::Divide)
                {
                    return None;
                }
                let (one, s) = (graph.nodes[r.node].operands[0], graph.nodes[r.node].operands[1]);
                (cx.constant_value(one) == Some(1.0)).then_some((e, s))
            };
            let (a, b) = (node.operands[0], node.operands[1]);
            let (e, s) = pick(a, b).or_else(|| pick(b, a))?;
            absorbed.push(cx.base(if e == a { b } else { a }).node);
            (e, s)
        }
        _ => return None,
    };
    // s = reduce(e, 0) over the last dim with an add.
    let init = reduction(cx, s, last, ElementwiseOp::Add)?;
    if init != 0.0 || graph.nodes[s.node].operands[0] != e {
        return None;
    }
    // e = exp(x - broadcast(mx)).
    if cx.elementwise(e.node) != Some(ElementwiseOp::Exponential) {
        return None;
    }
    let d = graph.nodes[e.node].operands[0];
    if cx.elementwise(d.node) != Some(ElementwiseOp::Subtract) {
        return None;
    }
    let (x, bm) = (graph.nodes[d.node].operands[0], graph.nodes[d.node].operands[1]);
    let mut mx = cx.base(bm);
    if !cx.is_broadcast_of(bm, mx, &[last]) {
        return None;
    }
    if cx.elementwise(mx.node) == Some(ElementwiseOp::Maximum) {
        // maximum(mx, -inf), as jax.nn.softmax writes it: the same value.
        let operands = &graph.nodes[mx.node].operands;
        let inner = operands.iter().copied().find(|&o| cx.constant_value(o) != Some(f64::NEG_INFINITY))?;
        if operands.iter().filter(|&&o| cx.constant_value(o) == Some(f64::NEG_INFINITY)).count() != 1 {
            return None;
        }
        absorbed.push(mx.node);
        mx = inner;
    }
    let init = reduction(cx, mx, last, ElementwiseOp::Maximum)?;
    if init != f64::NEG_INFINITY || graph.nodes[mx.node].operands[0] != x {
        return None;
    }
    absorbed.extend([mx.node, d.node, e.node, s.node]);
    // Broadcasts and reciprocals between them.
    let steps: Vec<usize> = absorbed.clone();
    let within = |v: ValueId, extra: &[usize]| {
        let mut allowed = steps.clone();
        allowed.push(y);
        allowed.extend_from_slice(extra);
        cx.only_read_by(v, &allowed)
    };
    let all_inside = [ValueId::of(mx.node), d, e, s].into_iter().all(|v| within(v, &[]))
        && absorbed.iter().all(|&n| within(ValueId::of(n), &[]))
        && !absorbed.iter().any(|n| cx.taken.contains(n));
    if !all_inside || cx.graph.shape(x).element_type != ElementType::F32 {
        return None;
    }
    let dims = &shape.dims;
    let outer: Vec<usize> = (0..last).collect();
    let (Some(m), Some(n)) = (size(dims, &outer), size(dims, &[last])) else {
        return Some(Err("a dimension is empty or above 2^31 elements".into()));
    };
    absorbed.sort_unstable();
    absorbed.dedup();
    Some(Ok(Recognized {
        top: y,
        absorbed,
        kind: PrimitiveKind::Softmax,
        shape: vec![m, n],
        inputs: vec![Input { value: x, groups: vec![outer.clone(), vec![last]] }],
        output_groups: vec![outer, vec![last]],
        dtype: Dtype::F32,
        what: "softmax".into(),
    }))
}

/// The init of `value` when it is a reduce over exactly dim `dim` whose reducer is `op` of its
/// two parameters, with a constant init.
fn reduction(cx: &Context<'_>, value: ValueId, dim: usize, op: ElementwiseOp) -> Option<f64> {
    let node = &cx.graph.nodes[value.node];
    let HloOp::Reduce { dimensions, to_apply } = node.op()? else { return None };
    if dimensions.as_slice() != [dim] || node.operands.len() != 2 {
        return None;
    }
    let module_reducer = cx.reducer_op(*to_apply)?;
    if module_reducer != op {
        return None;
    }
    cx.constant_value(node.operands[1])
}
