//! What maps to a morello spec, in the order of its value: dots (with their bias and activation
//! epilogues), the softmax pattern, convolutions. Transposes and copies that must be written
//! become moves where the plan materialises them (`plan.rs`).
//!
//! A recognizer returns a [`Recognized`]: the node whose value the kernel writes, the nodes the
//! kernel computes on the way (absorbed: they get no code of their own), the spec's kind and
//! iteration shape, and for each input the value it reads and how the value's dims group into
//! the spec operand's dims. The plan then reads each input in place when its view is a dense
//! tensor in some order of the groups (a spec layout), or writes it to a buffer first.

mod activation;
mod conv;
mod dot;
mod softmax;

use std::collections::{BTreeSet, HashMap};

use morello_core::dtype::Dtype;
use morello_core::spec::PrimitiveKind;
use morello_xla::hlo::{ComputationId, ElementwiseOp, HloOp, LiteralValues};
use morello_xla::xla::ElementType;

use crate::graph::{Graph, NodeKind, ValueId};
use crate::views::{Group, View, is_view_op};

pub(crate) use conv::convolution;
pub(crate) use dot::dot;
pub(crate) use softmax::softmax;

/// One input of a recognised kernel: a value and the groups of its dims that make the spec
/// operand's dims.
#[derive(Debug, Clone)]
pub(crate) struct Input {
    pub value: ValueId,
    pub groups: Vec<Group>,
}

/// A part of the graph one searched kernel computes.
#[derive(Debug, Clone)]
pub(crate) struct Recognized {
    /// The node whose value the kernel writes (to that node's buffer).
    pub top: usize,
    /// Nodes the kernel computes on the way, which get no code of their own.
    pub absorbed: Vec<usize>,
    /// The spec's kind.
    pub kind: PrimitiveKind,
    /// The iteration shape.
    pub shape: Vec<u32>,
    /// The inputs, in the spec's operand order.
    pub inputs: Vec<Input>,
    /// How the top value's dims group into the output operand's dims.
    pub output_groups: Vec<Group>,
    /// The element type of every operand.
    pub dtype: Dtype,
    /// What it is, for the report (`matmul with bias and gelu`).
    pub what: String,
}

/// What the recognizers look at.
pub(crate) struct Context<'g> {
    pub graph: &'g Graph<'g>,
    pub views: &'g [Vec<View>],
    /// For each value, the nodes that read it directly or through ops that only move elements
    /// (each once).
    pub readers: HashMap<ValueId, BTreeSet<usize>>,
    /// Values the caller receives (they must be written, so nothing may absorb them).
    pub results: BTreeSet<ValueId>,
    /// Nodes already taken by a recognised kernel (its top and what it absorbs).
    pub taken: BTreeSet<usize>,
    /// Nodes computed inside a recognised kernel (whose values are never in a buffer).
    pub absorbed: BTreeSet<usize>,
}

impl<'g> Context<'g> {
    pub fn new(graph: &'g Graph<'g>, views: &'g [Vec<View>]) -> Context<'g> {
        let results: BTreeSet<ValueId> = graph.results.iter().copied().collect();
        let mut readers: HashMap<ValueId, BTreeSet<usize>> = HashMap::new();
        for (id, node) in graph.nodes.iter().enumerate().rev() {
            for &operand in &node.operands {
                let through = is_view(graph, id) && !results.contains(&ValueId::of(id));
                let set: BTreeSet<usize> = if through {
                    readers.get(&ValueId::of(id)).cloned().unwrap_or_default()
                } else {
                    BTreeSet::from([id])
                };
                readers.entry(operand).or_default().extend(set);
            }
        }
        Context { graph, views, readers, results, taken: BTreeSet::new(), absorbed: BTreeSet::new() }
    }

    /// The op of a node (`None` for parameters).
    pub fn op(&self, node: usize) -> Option<&'g HloOp> {
        self.graph.nodes[node].op()
    }

    /// The nodes reading a value (through views).
    pub fn readers(&self, value: ValueId) -> BTreeSet<usize> {
        self.readers.get(&value).cloned().unwrap_or_default()
    }

    /// The elementwise op a reducer applies, when its root is one op of its two parameters.
    pub fn reducer_op(&self, to_apply: ComputationId) -> Option<ElementwiseOp> {
        self.graph.module.computation(to_apply)?.binary_op_of_parameters().map(|(op, _)| op)
    }

    /// Whether every reader of `value` is in `allowed` and it is not a result.
    pub fn only_read_by(&self, value: ValueId, allowed: &[usize]) -> bool {
        !self.results.contains(&value) && self.readers(value).iter().all(|r| allowed.contains(r))
    }

    /// The view of a value.
    pub fn view(&self, value: ValueId) -> &View {
        &self.views[value.node][value.output]
    }

    /// The value a value views (itself unless made by ops that only move elements).
    pub fn base(&self, value: ValueId) -> ValueId {
        self.view(value).base
    }

    /// Whether `value` is `base` broadcast along `dims` of `value` (each other dim read as the
    /// base's next dim in order): its view reads the base with stride 0 along `dims` and the
    /// base's own layout strides along the rest.
    pub fn is_broadcast_of(&self, value: ValueId, base: ValueId, dims: &[usize]) -> bool {
        let view = self.view(value);
        if view.base != base || view.offset != 0 {
            return false;
        }
        let own = crate::views::layout_strides(self.graph.shape(base));
        let base_dims = &self.graph.shape(base).dims;
        let mut k = 0;
        for (d, &stride) in view.strides.iter().enumerate() {
            if dims.contains(&d) {
                if stride != 0 {
                    return false;
                }
            } else {
                let Some(&expected) = own.get(k) else { return false };
                if stride != expected && base_dims[k] != 1 {
                    return false;
                }
                k += 1;
            }
        }
        k == own.len()
    }

    /// The value of a scalar constant `value` is a broadcast of (its view has stride 0 in every
    /// dim and reads a one-element constant), as an `f64`.
    pub fn constant_value(&self, value: ValueId) -> Option<f64> {
        let view = self.view(value);
        if view.strides.iter().any(|&s| s != 0) || view.offset != 0 {
            return None;
        }
        match self.op(view.base.node)? {
            HloOp::Constant { literal: Some(literal), .. } if literal.len() == 1 => match literal.values() {
                LiteralValues::Floats(v) => Some(v[0]),
                LiteralValues::Integers(v) => Some(v[0] as f64),
            },
            _ => None,
        }
    }

    /// The elementwise op of a node, if it is one.
    pub fn elementwise(&self, node: usize) -> Option<ElementwiseOp> {
        match self.op(node)? {
            HloOp::Elementwise(op) => Some(*op),
            _ => None,
        }
    }
}

/// Whether a node only moves its operand's elements.
pub(crate) fn is_view(graph: &Graph, node: usize) -> bool {
    let n = &graph.nodes[node];
    match &n.kind {
        NodeKind::Op(op) if n.operands.len() == 1 && n.outputs.len() == 1 => {
            is_view_op(op, Some(graph.shape(n.operands[0])), &n.outputs[0])
        }
        _ => false,
    }
}

/// The spec dtype of an element type, for the types searched kernels take.
pub(crate) fn spec_dtype(element_type: ElementType) -> Option<Dtype> {
    Some(match element_type {
        ElementType::F32 => Dtype::F32,
        ElementType::Bf16 => Dtype::Bf16,
        ElementType::S32 => Dtype::I32,
        ElementType::U32 => Dtype::U32,
        ElementType::S16 => Dtype::I16,
        ElementType::U16 => Dtype::U16,
        ElementType::S8 => Dtype::I8,
        ElementType::U8 => Dtype::U8,
        _ => return None,
    })
}

/// A size of the iteration shape: the product of `dims` (1 for none), if it fits a spec.
pub(crate) fn size(dims: &[i64], group: &[usize]) -> Option<u32> {
    let product = group.iter().try_fold(1i64, |p, &d| p.checked_mul(dims[d]))?;
    u32::try_from(product).ok().filter(|s| (1..=1 << 31).contains(s))
}
