//! The activation applied to a value: the elementwise ops on top of it that read nothing else
//! (but scalar constants), recognised by what they compute rather than how they are written.
//!
//! JAX writes GELU's tanh form as a dozen multiplies, adds and a `tanh`, in an order that
//! depends on the version; ReLU as `maximum(x, 0)` in either operand order. So the region on top
//! of `x` (every elementwise op whose operands are `x`, the region or a broadcast constant, with
//! no reader outside the region but the one top node) is evaluated at sample points with the
//! reference evaluator's scalar ops and compared with ReLU and the tanh-form GELU. A region that
//! computes neither is left alone (it runs as loops after the kernel).

use morello_core::spec::Activation;
use morello_xla::eval::scalar::{Num, Rounding, Scalar, elementwise};
use morello_xla::hlo::HloOp;
use morello_xla::xla::ElementType;

use super::Context;
use crate::graph::ValueId;

/// How far past the last region node the scan for more goes.
const SCAN: usize = 64;

/// The activation on top of node `x`: the node computing it (`x` itself for none), the nodes
/// it absorbs (the region without the top) and which activation it is.
pub(crate) fn on_top(cx: &Context<'_>, x: usize) -> (usize, Vec<usize>, Activation) {
    let none = (x, Vec::new(), Activation::Identity);
    let graph = cx.graph;
    let shape = &graph.nodes[x].outputs[0];
    if shape.element_type != ElementType::F32 || cx.results.contains(&ValueId::of(x)) {
        return none;
    }
    let mut region: Vec<usize> = Vec::new();
    let mut last = x;
    for id in x + 1..graph.nodes.len() {
        if id > last + SCAN {
            break;
        }
        let node = &graph.nodes[id];
        let Some(HloOp::Elementwise(_)) = node.op() else { continue };
        if node.outputs.len() != 1
            || node.outputs[0].dims != shape.dims
            || node.outputs[0].element_type != ElementType::F32
        {
            continue;
        }
        let inside = node.operands.iter().all(|o| {
            (o.output == 0 && (o.node == x || region.contains(&o.node))) || cx.constant_value(*o).is_some()
        });
        let reads_region = node.operands.iter().any(|o| o.node == x || region.contains(&o.node));
        if inside && reads_region && !cx.taken.contains(&id) {
            region.push(id);
            last = id;
        }
    }
    // The region's exits: members read outside it (or results).
    let member = |n: usize| n == x || region.contains(&n);
    let exits: Vec<usize> = std::iter::once(x)
        .chain(region.iter().copied())
        .filter(|&n| {
            cx.results.contains(&ValueId::of(n)) || cx.readers(ValueId::of(n)).iter().any(|&r| !member(r))
        })
        .collect();
    let [top] = exits[..] else { return none };
    if top == x {
        return none;
    }
    // Only the part of the region the top depends on.
    let mut needed = vec![top];
    let mut k = 0;
    while k < needed.len() {
        for o in &graph.nodes[needed[k]].operands {
            if region.contains(&o.node) && !needed.contains(&o.node) {
                needed.push(o.node);
            }
        }
        k += 1;
    }
    region.retain(|n| needed.contains(n));
    let Some(activation) = classify(cx, x, &region, top) else { return none };
    let absorbed: Vec<usize> = region.into_iter().filter(|&n| n != top).collect();
    (top, absorbed, activation)
}

/// Which activation `top` computes of `x` through `region` (in topological order), if any.
fn classify(cx: &Context<'_>, x: usize, region: &[usize], top: usize) -> Option<Activation> {
    let samples: Vec<f64> =
        (-40..=40).map(|k| f64::from(k) / 5.0).chain([0.013, -0.027, 0.5e-3, 37.5, -41.0]).collect();
    let mut relu = true;
    let mut gelu = true;
    for &s in &samples {
        let y = evaluate(cx, x, region, top, s)?;
        let close = |want: f64| (y - want).abs() <= 1e-5 * (1.0 + want.abs());
        relu &= close(Activation::Relu.apply(s));
        gelu &= close(Activation::Gelu.apply(s));
    }
    match (relu, gelu) {
        (true, _) => Some(Activation::Relu),
        (false, true) => Some(Activation::Gelu),
        _ => None,
    }
}

/// The region's value at `top` when `x` is `s`.
fn evaluate(cx: &Context<'_>, x: usize, region: &[usize], top: usize, s: f64) -> Option<f64> {
    let mut values: Vec<(usize, f64)> = vec![(x, s)];
    let mut order: Vec<usize> = region.to_vec();
    order.sort_unstable();
    for &n in &order {
        let node = &cx.graph.nodes[n];
        let op = cx.elementwise(n)?;
        let args: Vec<Scalar> = node
            .operands
            .iter()
            .map(|o| {
                values
                    .iter()
                    .find(|(k, _)| *k == o.node && o.output == 0)
                    .map(|&(_, v)| v)
                    .or_else(|| cx.constant_value(*o))
                    .map(Scalar::float)
            })
            .collect::<Option<_>>()?;
        let types = vec![ElementType::F32; args.len()];
        let result = elementwise(op, ElementType::F32, &types, &args, &Rounding::default()).ok()?;
        let Num::F(v) = result.value else { return None };
        values.push((n, v));
    }
    values.iter().find(|(k, _)| *k == top).map(|&(_, v)| v)
}
