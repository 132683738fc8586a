//! The module as one graph: the entry computation with every `fusion` and `call` inlined,
//! tuples and their elements resolved, and equal instructions merged.
//!
//! ```text
//! parameter p (a tuple: one node per element)   Parameter { index }     a pointer the caller passes
//! fusion(xs), call(xs)                           the callee's nodes, its parameters bound to xs
//! tuple(xs), get-tuple-element(t), index=i       no node: the element is the value itself
//! any other instruction                          Op { op }, with one output per array of its shape
//! ```
//!
//! Two instructions with the same op, operands and shapes are one node (XLA copies cheap
//! producers into every fusion that reads them; merged, the softmax's `x * scale` read by both
//! its maximum and its exponent is one value again). Ops without a model (`HloOp::Unknown`) are
//! never merged.
//!
//! Limits, so that a hostile module gets an error rather than exhausting the machine: calls nest
//! at most [`MAX_CALL_DEPTH`] deep and the graph holds at most [`MAX_NODES`] nodes.

use std::collections::HashMap;

use morello_xla::hlo::{ArrayShape, ComputationId, HloModule, HloOp, HloShape};

use crate::CompileError;

/// The deepest nesting of fusions and calls inlined.
pub const MAX_CALL_DEPTH: usize = 64;

/// The most nodes a flattened module may have.
pub const MAX_NODES: usize = 1 << 20;

/// One array of the graph: output `output` of node `node`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ValueId {
    /// The node.
    pub node: usize,
    /// Which of its outputs (0 but for variadic reductions).
    pub output: usize,
}

impl ValueId {
    /// Output 0 of `node`.
    pub fn of(node: usize) -> ValueId {
        ValueId { node, output: 0 }
    }
}

/// What a node is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// Array `index` of the entry's parameters (a tuple parameter's elements in order).
    Parameter {
        /// The position among the flattened parameter arrays.
        index: usize,
    },
    /// An instruction.
    Op(HloOp),
}

/// One node: an instruction of some computation, inlined.
#[derive(Debug, Clone)]
pub struct Node {
    /// What it computes.
    pub kind: NodeKind,
    /// Its name, with the fusions and calls it was inlined through: `fusion.2/add.1`.
    pub name: String,
    /// The computation it was written in.
    pub computation: String,
    /// The instruction it was written as.
    pub instruction: String,
    /// Its arrays (one but for variadic reductions).
    pub outputs: Vec<ArrayShape>,
    /// The arrays it reads.
    pub operands: Vec<ValueId>,
}

impl Node {
    /// The op, for an `Op` node.
    pub fn op(&self) -> Option<&HloOp> {
        match &self.kind {
            NodeKind::Op(op) => Some(op),
            NodeKind::Parameter { .. } => None,
        }
    }
}

/// The flattened module. Nodes are in a topological order (operands first).
#[derive(Debug, Clone)]
pub struct Graph<'m> {
    /// The module (its reducer computations are read where they are used).
    pub module: &'m HloModule,
    /// The nodes.
    pub nodes: Vec<Node>,
    /// The entry's parameter arrays, in order, with their names.
    pub parameters: Vec<(String, ValueId)>,
    /// The entry root's arrays, in order.
    pub results: Vec<ValueId>,
    /// The shapes (with the layouts) the entry root gives its arrays.
    pub result_shapes: Vec<ArrayShape>,
}

impl Graph<'_> {
    /// The shape of a value.
    pub fn shape(&self, value: ValueId) -> &ArrayShape {
        &self.nodes[value.node].outputs[value.output]
    }

    /// The node of a value.
    pub fn node(&self, value: ValueId) -> &Node {
        &self.nodes[value.node]
    }

    /// For each value, the nodes reading it (a node reading it twice is listed twice).
    pub fn consumers(&self) -> HashMap<ValueId, Vec<usize>> {
        let mut consumers: HashMap<ValueId, Vec<usize>> = HashMap::new();
        for (id, node) in self.nodes.iter().enumerate() {
            for &operand in &node.operands {
                consumers.entry(operand).or_default().push(id);
            }
        }
        consumers
    }
}

/// A value while inlining: an array, or the elements of a tuple.
type Inlined = Vec<ValueId>;

struct Builder<'m> {
    module: &'m HloModule,
    nodes: Vec<Node>,
    merged: HashMap<(HloOp, Vec<ValueId>, Vec<ArrayShape>), usize>,
}

/// Flattens the entry computation of a validated module.
///
/// # Errors
/// [`CompileError::Unsupported`] for calls nested deeper than [`MAX_CALL_DEPTH`], more than
/// [`MAX_NODES`] nodes, or a tuple where an array is needed.
pub fn flatten(module: &HloModule) -> Result<Graph<'_>, CompileError> {
    let mut builder = Builder { module, nodes: Vec::new(), merged: HashMap::new() };
    let entry = module.entry();
    let mut parameters = Vec::new();
    let mut args = Vec::new();
    for param in entry.parameters() {
        let instr = &entry.instructions[param.0];
        let mut arrays = Vec::new();
        for (k, shape) in instr.shape.arrays().iter().enumerate() {
            let index = parameters.len();
            let name = match &instr.shape {
                HloShape::Array(_) => instr.name.clone(),
                HloShape::Tuple(_) => format!("{}.{k}", instr.name),
            };
            builder.nodes.push(Node {
                kind: NodeKind::Parameter { index },
                name: name.clone(),
                computation: entry.name.clone(),
                instruction: instr.name.clone(),
                outputs: vec![shape.clone()],
                operands: Vec::new(),
            });
            let value = ValueId::of(builder.nodes.len() - 1);
            parameters.push((name, value));
            arrays.push(value);
        }
        args.push(arrays);
    }
    let results = builder.inline(module.entry_id(), args, "", 0)?;
    let result_shapes = entry.root_instruction().map(|r| r.shape.arrays().to_vec()).unwrap_or_default();
    Ok(Graph { module, nodes: builder.nodes, parameters, results, result_shapes })
}

impl Builder<'_> {
    fn inline(
        &mut self,
        id: ComputationId,
        args: Vec<Inlined>,
        prefix: &str,
        depth: usize,
    ) -> Result<Inlined, CompileError> {
        let computation = &self.module.computations()[id.0];
        let unsupported = |instruction: &str, reason: String| CompileError::Unsupported {
            computation: computation.name.clone(),
            instruction: instruction.to_string(),
            reason,
        };
        if depth > MAX_CALL_DEPTH {
            return Err(unsupported(
                &computation.root_instruction().map(|r| r.name.clone()).unwrap_or_default(),
                format!("fusions and calls nest more than {MAX_CALL_DEPTH} deep"),
            ));
        }
        let mut values: Vec<Inlined> = Vec::with_capacity(computation.instructions.len());
        for instr in &computation.instructions {
            let operand = |k: usize| -> &Inlined { &values[instr.operands[k].0] };
            let value = match &instr.op {
                HloOp::Parameter { number } => args
                    .get(*number)
                    .cloned()
                    .ok_or_else(|| unsupported(&instr.name, format!("no argument for parameter {number}")))?,
                HloOp::Tuple => {
                    let mut elements = Vec::new();
                    for k in 0..instr.operands.len() {
                        match operand(k).as_slice() {
                            [single] => elements.push(*single),
                            _ => return Err(unsupported(&instr.name, "a tuple of tuples".into())),
                        }
                    }
                    elements
                }
                HloOp::GetTupleElement { index } => {
                    let element = operand(0).get(*index).copied();
                    vec![
                        element
                            .ok_or_else(|| unsupported(&instr.name, format!("no tuple element {index}")))?,
                    ]
                }
                HloOp::Fusion { calls: callee } | HloOp::Call { to_apply: callee } => {
                    let callee_args: Vec<Inlined> =
                        (0..instr.operands.len()).map(|k| operand(k).clone()).collect();
                    self.inline(*callee, callee_args, &format!("{prefix}{}/", instr.name), depth + 1)?
                }
                op => {
                    let mut operands = Vec::with_capacity(instr.operands.len());
                    for k in 0..instr.operands.len() {
                        match operand(k).as_slice() {
                            [single] => operands.push(*single),
                            _ => {
                                return Err(unsupported(
                                    &instr.name,
                                    format!("operand {k} is a tuple, which `{}` cannot read", op.opcode()),
                                ));
                            }
                        }
                    }
                    let outputs = instr.shape.arrays().to_vec();
                    let node = self.add(op, operands, outputs, || Node {
                        kind: NodeKind::Op(op.clone()),
                        name: format!("{prefix}{}", instr.name),
                        computation: computation.name.clone(),
                        instruction: instr.name.clone(),
                        outputs: Vec::new(),
                        operands: Vec::new(),
                    })?;
                    (0..instr.shape.arrays().len()).map(|output| ValueId { node, output }).collect()
                }
            };
            values.push(value);
        }
        Ok(values.swap_remove(computation.root.0))
    }

    /// The node for `op` on `operands`: an equal one already made, or a new one.
    fn add(
        &mut self,
        op: &HloOp,
        operands: Vec<ValueId>,
        outputs: Vec<ArrayShape>,
        node: impl FnOnce() -> Node,
    ) -> Result<usize, CompileError> {
        let mergeable = !matches!(op, HloOp::Unknown { .. });
        let key = (op.clone(), operands.clone(), outputs.clone());
        if mergeable {
            if let Some(&id) = self.merged.get(&key) {
                return Ok(id);
            }
        }
        let mut node = node();
        if self.nodes.len() >= MAX_NODES {
            return Err(CompileError::Unsupported {
                computation: node.computation,
                instruction: node.instruction,
                reason: format!(
                    "the module has more than {MAX_NODES} instructions once its fusions and calls are inlined"
                ),
            });
        }
        node.operands = operands;
        node.outputs = outputs;
        self.nodes.push(node);
        let id = self.nodes.len() - 1;
        if mergeable {
            self.merged.insert(key, id);
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn fusions_calls_and_tuples_disappear_and_equal_instructions_merge() {
        let module: HloModule = "f {\n  p = f32[4] parameter(0)\n  c = f32[] constant(2)\n  b = f32[4] broadcast(c), dimensions={}\n  \
            ROOT m = f32[4] multiply(p, b)\n}\n\
            g {\n  p = f32[4] parameter(0)\n  c = f32[] constant(2)\n  b = f32[4] broadcast(c), dimensions={}\n  \
            m = f32[4] multiply(p, b)\n  ROOT t = (f32[4], f32[4]) tuple(m, p)\n}\n\
            ENTRY e {\n  x = (f32[4], f32[4]) parameter(0)\n  x0 = f32[4] get-tuple-element(x), index=0\n  \
            a = f32[4] fusion(x0), kind=kLoop, calls=f\n  t = (f32[4], f32[4]) call(x0), to_apply=g\n  \
            b = f32[4] get-tuple-element(t), index=0\n  ROOT s = f32[4] add(a, b)\n}"
            .parse()
            .unwrap();
        let graph = flatten(&module).unwrap();
        let names: Vec<&str> = graph.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["x.0", "x.1", "a/c", "a/b", "a/m", "s"]);
        assert_eq!(graph.parameters.len(), 2);
        assert_eq!(
            graph.nodes[5].operands,
            vec![ValueId::of(4), ValueId::of(4)],
            "f and g compute one value"
        );
    }

    #[test]
    fn deep_calls_are_refused() {
        let mut text = String::new();
        text += "c0 {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n";
        for k in 1..=70 {
            text += &format!(
                "c{k} {{\n  p = f32[] parameter(0)\n  ROOT n = f32[] call(p), to_apply=c{}\n}}\n",
                k - 1
            );
        }
        text += "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c70\n}";
        let module: HloModule = text.parse().unwrap();
        let error = flatten(&module).unwrap_err().to_string();
        assert!(error.contains("nest more than 64 deep"), "{error}");
    }
}
