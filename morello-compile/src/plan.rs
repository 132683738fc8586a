//! What every node of the graph becomes, and where every value that has a buffer lives.
//!
//! ```text
//! 1. recognise   softmax patterns, dots (with bias and activation epilogues), convolutions
//!                (recognize/): a searched kernel writes the top node's value; the nodes it
//!                computes on the way are absorbed; each input is read in place when its view
//!                is dense in an order of the spec operand's dims, else written to a buffer
//! 2. materialise results; kernels' inputs and outputs; reductions, window reductions and the
//!                dots and convolutions that run as loops; ops read more than once (through
//!                views: a broadcast that repeats a value counts as many reads), so nothing is
//!                computed twice; the operands of loop-nest dots, convolutions and window
//!                reductions (read many times each); and one op in every chain of
//!                MAX_INLINE_DEPTH inlined ops
//! 3. lower       a materialised view (a transpose or copy that must be written) of a dense
//!                buffer is a searched `Move`; every other materialised op is a loop nest
//!                writing its buffer, with the ops it reads inlined as expressions
//! 4. place       parameters and results are the caller's; array constants static tables; the
//!                rest in one arena by live ranges (`arena.rs`)
//! ```

use std::collections::{BTreeMap, BTreeSet};

use morello_core::layout::Layout;
use morello_core::shape::Shape;
use morello_core::spec::{CanonicalSpec, LogicalSpec, PrimitiveKind, TensorSpec};
use morello_core::target::Target;
use morello_xla::hlo::{ArrayShape, HloOp};
use morello_xla::xla::ElementType;

use crate::CompileError;
use crate::arena::{self, Request};
use crate::graph::{Graph, NodeKind, ValueId};
use crate::recognize::{self, Context, Recognized, is_view, spec_dtype};
use crate::views::{self, DenseOperand, View, dense, layout_strides};

/// The longest chain of ops inlined into one expression before one of them gets a buffer.
pub const MAX_INLINE_DEPTH: usize = 32;

/// The most elements one value may have.
pub const MAX_ELEMENTS: u64 = 1 << 34;

/// Where a searched kernel's operand starts: a value's buffer and an offset in it (elements).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelOperand {
    /// The value whose buffer is read.
    pub base: ValueId,
    /// The offset of the operand's first element.
    pub offset: i64,
}

/// A kernel input copied into a row-major scratch buffer by a searched `Move` just before the
/// kernel (when the model finds the copy and the row-major kernel cheaper than reading the input
/// where it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandCopy {
    /// Which input of the kernel.
    pub input: usize,
    /// The move.
    pub spec: CanonicalSpec,
    /// What it reads.
    pub from: KernelOperand,
    /// The scratch buffer's bytes.
    pub bytes: u64,
    /// Its offset in the arena (set when the plan is placed).
    pub offset: u64,
}

/// One way to run a recognised kernel: its spec, where its inputs start, and the copies made
/// first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The kernel's spec.
    pub spec: CanonicalSpec,
    /// Where each input starts (a copied input's entry is what the copy reads).
    pub inputs: Vec<KernelOperand>,
    /// The inputs copied first.
    pub copies: Vec<OperandCopy>,
}

/// What a node becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lowering {
    /// An entry parameter: the caller's buffer.
    Parameter,
    /// A constant: a literal where it is read, or a static table.
    Constant,
    /// No code of its own: an expression where it is read, or a view of a buffer.
    Inlined,
    /// Computed inside the searched kernel of node `into`.
    Absorbed {
        /// The kernel's node.
        into: usize,
    },
    /// A searched kernel writes the node's buffer.
    Searched {
        /// The spec.
        spec: CanonicalSpec,
        /// Where each input operand starts (the output is the node's buffer).
        inputs: Vec<KernelOperand>,
        /// Inputs copied to scratch buffers first.
        copies: Vec<OperandCopy>,
        /// What it is, for the report.
        what: String,
    },
    /// A loop nest writes the node's buffer.
    Loops {
        /// Why no spec computes it.
        reason: String,
    },
    /// Not read by any result: no code.
    Dead,
}

/// Where a value with a buffer lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffer {
    /// The caller's parameter array of this index.
    Parameter(usize),
    /// The caller's result array of this index.
    Result(usize),
    /// The arena, at this byte offset.
    Arena(u64),
    /// A static table in the unit.
    Constant,
}

/// The plan of a module.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Per node, what it becomes.
    pub lowering: Vec<Lowering>,
    /// The values that have a buffer, and where.
    pub buffers: BTreeMap<ValueId, Buffer>,
    /// Results written by a copy loop from another value (a parameter, a constant, a value
    /// that is also another result or in another layout): result index and value.
    pub copies: Vec<(usize, ValueId)>,
    /// The arena's bytes.
    pub arena_bytes: u64,
    /// Every value's view.
    pub views: Vec<Vec<View>>,
    /// The ways to run each recognised kernel that has more than one.
    pub candidates: BTreeMap<usize, Vec<Candidate>>,
    /// The arena's values and their requests, before placing.
    requests: Vec<(ValueId, Request)>,
}

impl Plan {
    /// The searched nodes and the ways to run each, in node order (one way for most).
    pub fn candidates_by_node(&self) -> Vec<(usize, Vec<Candidate>)> {
        self.lowering
            .iter()
            .enumerate()
            .filter_map(|(n, l)| match l {
                Lowering::Searched { spec, inputs, copies, .. } => Some((
                    n,
                    self.candidates.get(&n).cloned().unwrap_or_else(|| {
                        vec![Candidate { spec: spec.clone(), inputs: inputs.clone(), copies: copies.clone() }]
                    }),
                )),
                _ => None,
            })
            .collect()
    }

    /// Runs searched node `node` the way `candidate` says (then [`Plan::place`] again).
    pub fn choose(&mut self, node: usize, candidate: &Candidate) {
        if let Lowering::Searched { spec, inputs, copies, .. } = &mut self.lowering[node] {
            *spec = candidate.spec.clone();
            *inputs = candidate.inputs.clone();
            *copies = candidate.copies.clone();
        }
    }

    /// Places the arena: the values' buffers and the chosen copies' scratch buffers.
    pub fn place(&mut self) {
        let mut requests: Vec<Request> = self.requests.iter().map(|(_, r)| *r).collect();
        let mut scratch = Vec::new();
        for (node, lowering) in self.lowering.iter().enumerate() {
            if let Lowering::Searched { copies, .. } = lowering {
                for (k, copy) in copies.iter().enumerate() {
                    scratch.push((node, k));
                    requests.push(Request { bytes: copy.bytes, first: node, last: node });
                }
            }
        }
        let (offsets, arena_bytes) = arena::place(&requests);
        let values = self.requests.len();
        for ((value, _), &offset) in self.requests.iter().zip(&offsets) {
            self.buffers.insert(*value, Buffer::Arena(offset));
        }
        for (&(node, k), &offset) in scratch.iter().zip(&offsets[values..]) {
            if let Lowering::Searched { copies, .. } = &mut self.lowering[node] {
                copies[k].offset = offset;
            }
        }
        self.arena_bytes = arena_bytes;
    }

    /// Whether a value has a buffer.
    pub fn has_buffer(&self, value: ValueId) -> bool {
        self.buffers.contains_key(&value)
    }
}

/// Plans a graph; `refused` lists nodes the search found no implementation for (with the
/// reason), which run as loops.
///
/// # Errors
/// [`CompileError::Unsupported`] for values too large to hold.
pub fn plan_without(
    graph: &Graph<'_>,
    target: &Target,
    refused: &BTreeMap<usize, String>,
) -> Result<Plan, CompileError> {
    let views = views::views(graph);
    let n = graph.nodes.len();
    let live = live_nodes(graph);
    for node in graph.nodes.iter().enumerate().filter(|(id, _)| live[*id]).map(|(_, n)| n) {
        for shape in &node.outputs {
            let elements =
                shape.dims.iter().fold(1u64, |v, &d| v.saturating_mul(u64::try_from(d).unwrap_or(0)));
            if elements > MAX_ELEMENTS {
                return Err(CompileError::Unsupported {
                    computation: node.computation.clone(),
                    instruction: node.instruction.clone(),
                    reason: format!(
                        "a value of {elements} elements is more than the {MAX_ELEMENTS} a compiled module may hold"
                    ),
                });
            }
        }
    }
    let mut cx = Context::new(graph, &views);
    let mut lowering: Vec<Lowering> = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(id, node)| match &node.kind {
            _ if !live[id] => Lowering::Dead,
            NodeKind::Parameter { .. } => Lowering::Parameter,
            NodeKind::Op(HloOp::Constant { .. }) => Lowering::Constant,
            NodeKind::Op(_) => Lowering::Inlined,
        })
        .collect();
    let mut materialised: BTreeSet<ValueId> = BTreeSet::new();
    let mut reasons: BTreeMap<usize, String> = refused.clone();

    // 1. Recognise, most valuable first.
    let mut candidates: BTreeMap<usize, Vec<Candidate>> = BTreeMap::new();
    let mut accept = |cx: &mut Context<'_>,
                      lowering: &mut Vec<Lowering>,
                      materialised: &mut BTreeSet<ValueId>,
                      reasons: &mut BTreeMap<usize, String>,
                      recognized: Recognized| {
        let top = recognized.top;
        match searched(cx, &recognized, target) {
            Ok((mut ways, needs)) => {
                let first = ways.remove(0);
                if !ways.is_empty() {
                    let mut all = vec![first.clone()];
                    all.extend(ways);
                    candidates.insert(top, all);
                }
                lowering[top] = Lowering::Searched {
                    spec: first.spec,
                    inputs: first.inputs,
                    copies: first.copies,
                    what: recognized.what.clone(),
                };
                for &a in &recognized.absorbed {
                    lowering[a] = Lowering::Absorbed { into: top };
                }
                cx.taken.insert(top);
                cx.taken.extend(&recognized.absorbed);
                cx.absorbed.extend(&recognized.absorbed);
                materialised.insert(ValueId::of(top));
                materialised.extend(needs);
            }
            Err(reason) => {
                reasons.insert(top, reason);
            }
        }
    };
    for (id, &is_live) in live.iter().enumerate() {
        if !is_live || refused.contains_key(&id) || cx.taken.contains(&id) {
            continue;
        }
        if let Some(result) = recognize::softmax(&cx, id) {
            match result {
                Ok(r) if !r.absorbed.iter().any(|a| refused.contains_key(a)) => {
                    accept(&mut cx, &mut lowering, &mut materialised, &mut reasons, r);
                }
                Ok(_) => {}
                Err(reason) => {
                    reasons.insert(id, reason);
                }
            }
        }
    }
    for (id, &is_live) in live.iter().enumerate() {
        if !is_live || refused.contains_key(&id) || cx.taken.contains(&id) {
            continue;
        }
        let result = match cx.op(id) {
            Some(HloOp::Dot(_)) => match recognize::dot(&cx, id, true) {
                // The search had no implementation of the matmul with its epilogue: try it alone.
                Ok(r) if refused.contains_key(&r.top) => recognize::dot(&cx, id, false),
                other => other,
            },
            Some(HloOp::Convolution { .. }) => recognize::convolution(&cx, id),
            _ => continue,
        };
        match result {
            Ok(r) if refused.contains_key(&r.top) => {}
            Ok(r) => accept(&mut cx, &mut lowering, &mut materialised, &mut reasons, r),
            Err(reason) => {
                reasons.insert(id, reason);
            }
        }
    }

    // 2. Materialise.
    let mut copies = Vec::new();
    let mut results: BTreeMap<ValueId, usize> = BTreeMap::new();
    for (k, &value) in graph.results.iter().enumerate() {
        let shape = graph.shape(value);
        // A result that is another value's buffer seen in the result's layout (a reshape, a
        // bitcast, a transpose that only relabels): that value writes the result directly.
        if is_view(graph, value.node) {
            let view = &views[value.node][value.output];
            let base = view.base;
            let wanted = layout_strides(&graph.result_shapes[k]);
            let same_bytes = view.offset == 0
                && graph.shape(base).volume() == shape.volume()
                && graph.shape(base).element_type == shape.element_type
                && view.strides.iter().zip(&wanted).zip(&shape.dims).all(|((s, w), &d)| d == 1 || s == w);
            let writes = matches!(lowering[base.node], Lowering::Inlined | Lowering::Searched { .. })
                && !results.contains_key(&base)
                && !graph.results.contains(&base)
                && graph.nodes[base.node].outputs.len() == 1;
            if same_bytes && writes {
                results.insert(base, k);
                materialised.insert(base);
                continue;
            }
        }
        let same_layout =
            shape.minor_to_major_or_default() == graph.result_shapes[k].minor_to_major_or_default();
        let own = matches!(lowering[value.node], Lowering::Inlined | Lowering::Searched { .. });
        if own && same_layout && !results.contains_key(&value) {
            results.insert(value, k);
            materialised.insert(value);
        } else {
            copies.push((k, value));
            if !matches!(lowering[value.node], Lowering::Parameter | Lowering::Constant) {
                materialised.insert(value);
            }
        }
    }
    let inlinable = |lowering: &[Lowering], id: usize| matches!(lowering[id], Lowering::Inlined);
    for (id, node) in graph.nodes.iter().enumerate() {
        if !inlinable(&lowering, id) {
            continue;
        }
        let op = node.op().expect("parameters are not inlined");
        let heavy = matches!(
            op,
            HloOp::Reduce { .. }
                | HloOp::ReduceWindow { .. }
                | HloOp::Dot(_)
                | HloOp::Convolution { .. }
                | HloOp::Unknown { .. }
        );
        if heavy || node.outputs.len() > 1 {
            for output in 0..node.outputs.len() {
                materialised.insert(ValueId { node: id, output });
            }
        }
        if matches!(op, HloOp::Dot(_) | HloOp::Convolution { .. } | HloOp::ReduceWindow { .. }) {
            for &operand in &node.operands {
                let base = views[operand.node][operand.output].base;
                if matches!(lowering[base.node], Lowering::Inlined) && !is_cheap(graph, base.node) {
                    materialised.insert(base);
                }
            }
        }
    }
    // Ops read more than once, counting reads through views (a broadcast that repeats a value
    // counts as many), from the last node back.
    let mut reads: Vec<u64> = vec![0; n];
    for id in (0..n).rev() {
        if matches!(lowering[id], Lowering::Dead) {
            continue;
        }
        let node = &graph.nodes[id];
        let own = if is_view(graph, id) && !materialised.contains(&ValueId::of(id)) {
            let expands = matches!(node.op(), Some(HloOp::Broadcast { .. }))
                && node.outputs[0].volume() > graph.shape(node.operands[0]).volume();
            if expands { u64::MAX / 4 } else { reads[id] }
        } else {
            1
        };
        for operand in &node.operands {
            reads[operand.node] = reads[operand.node].saturating_add(own);
        }
    }
    for (id, &count) in reads.iter().enumerate() {
        if inlinable(&lowering, id) && !is_view(graph, id) && !is_cheap(graph, id) && count > 1 {
            materialised.insert(ValueId::of(id));
        }
    }
    // Break long chains of inlined ops.
    let mut depth = vec![0usize; n];
    for id in 0..n {
        if !inlinable(&lowering, id) || materialised.contains(&ValueId::of(id)) {
            continue;
        }
        let d = 1 + graph.nodes[id].operands.iter().map(|o| depth[o.node]).max().unwrap_or(0);
        if d > MAX_INLINE_DEPTH {
            materialised.insert(ValueId::of(id));
        } else {
            depth[id] = d;
        }
    }

    // 3. Lower what is materialised.
    for value in &materialised {
        let id = value.node;
        if !inlinable(&lowering, id) {
            continue;
        }
        let node = &graph.nodes[id];
        if is_view(graph, id) {
            if let Ok((spec, input)) = moved(graph, &views, id, target) {
                let base = input.base;
                let has_buffer = materialised.contains(&base)
                    || matches!(
                        lowering[base.node],
                        Lowering::Parameter | Lowering::Constant | Lowering::Searched { .. }
                    );
                if has_buffer && base.node != id {
                    lowering[id] = Lowering::Searched {
                        spec,
                        inputs: vec![input],
                        copies: Vec::new(),
                        what: "move".into(),
                    };
                    continue;
                }
            }
        }
        let op = node.op().expect("parameters are not inlined");
        let reason = reasons.get(&id).cloned().unwrap_or_else(|| default_reason(op));
        lowering[id] = Lowering::Loops { reason };
    }
    // Kernels' in-place inputs keep their bases' buffers.
    for l in &lowering {
        if let Lowering::Searched { inputs, .. } = l {
            for input in inputs {
                if matches!(lowering[input.base.node], Lowering::Inlined) {
                    // A base that is an inlined op: its own loops write it.
                    materialised.insert(input.base);
                }
            }
        }
    }
    for value in materialised.clone() {
        let id = value.node;
        if matches!(lowering[id], Lowering::Inlined) {
            let op = graph.nodes[id].op().expect("parameters are not inlined");
            lowering[id] =
                Lowering::Loops { reason: reasons.get(&id).cloned().unwrap_or_else(|| default_reason(op)) };
        }
    }

    // 4. Place.
    let mut buffers: BTreeMap<ValueId, Buffer> = BTreeMap::new();
    for (id, node) in graph.nodes.iter().enumerate() {
        match (&node.kind, &lowering[id]) {
            (NodeKind::Parameter { index }, _) => {
                buffers.insert(ValueId::of(id), Buffer::Parameter(*index));
            }
            (_, Lowering::Constant) if node.outputs[0].rank() > 0 => {
                buffers.insert(ValueId::of(id), Buffer::Constant);
            }
            _ => {}
        }
    }
    for (&value, &k) in &results {
        buffers.insert(value, Buffer::Result(k));
    }
    let positions = evaluation_positions(graph, &lowering);
    let mut last_read: BTreeMap<ValueId, usize> = BTreeMap::new();
    for (c, node) in graph.nodes.iter().enumerate() {
        for &o in &node.operands {
            let last = last_read.entry(o).or_insert(positions[c]);
            *last = (*last).max(positions[c]);
        }
    }
    let mut requests = Vec::new();
    let mut placed = Vec::new();
    for &value in &materialised {
        if buffers.contains_key(&value) {
            continue;
        }
        let shape = graph.shape(value);
        let bytes = u64::try_from(shape.volume())
            .unwrap_or(0)
            .saturating_mul(u64::from(byte_width(shape.element_type)));
        let first = value.node;
        let mut last = last_read.get(&value).copied().unwrap_or(first).max(first);
        if copies.iter().any(|&(_, v)| v == value) {
            last = usize::MAX;
        }
        requests.push(Request { bytes, first, last });
        placed.push(value);
    }
    let requests = placed.into_iter().zip(requests).collect();
    let mut plan = Plan { lowering, buffers, copies, arena_bytes: 0, views, candidates, requests };
    plan.place();
    Ok(plan)
}

/// The bytes C stores one element of a type in.
pub fn byte_width(element_type: ElementType) -> u32 {
    element_type.byte_width().max(1)
}

/// Nodes a result depends on.
fn live_nodes(graph: &Graph<'_>) -> Vec<bool> {
    let mut live = vec![false; graph.nodes.len()];
    for r in &graph.results {
        live[r.node] = true;
    }
    for id in (0..graph.nodes.len()).rev() {
        if live[id] {
            for o in &graph.nodes[id].operands {
                live[o.node] = true;
            }
        }
    }
    live
}

/// Ops that cost nothing to read again: parameters, constants, iotas.
fn is_cheap(graph: &Graph<'_>, id: usize) -> bool {
    matches!(
        graph.nodes[id].kind,
        NodeKind::Parameter { .. } | NodeKind::Op(HloOp::Constant { .. } | HloOp::Iota { .. })
    )
}

/// Why an op runs as loops, when nothing more specific was found.
fn default_reason(op: &HloOp) -> String {
    match op {
        HloOp::Reduce { .. } => {
            "no spec computes a reduction alone (softmax's are searched as Softmax)".into()
        }
        HloOp::ReduceWindow { .. } => "no spec computes a window reduction".into(),
        HloOp::Elementwise(e) => {
            format!("elementwise `{}` has no spec; its loop computes what it reads inline", e.opcode())
        }
        other => format!("`{}` has no spec", other.opcode()),
    }
}

/// The step at which each node's code runs: its own for nodes with code, the latest of its
/// readers' for nodes computed where they are read.
fn evaluation_positions(graph: &Graph<'_>, lowering: &[Lowering]) -> Vec<usize> {
    let n = graph.nodes.len();
    let mut positions: Vec<usize> = (0..n).collect();
    let mut latest: Vec<Option<usize>> = vec![None; n];
    for id in (0..n).rev() {
        let own = match lowering[id] {
            Lowering::Inlined | Lowering::Absorbed { .. } => latest[id].unwrap_or(id),
            _ => id,
        };
        positions[id] = own;
        for o in &graph.nodes[id].operands {
            latest[o.node] = Some(latest[o.node].map_or(own, |l| l.max(own)));
        }
    }
    positions
}

/// The ways to run a recognised kernel (the first reads every input where it is; for a matmul
/// whose rhs is not `n`-fastest, the second copies it to row-major scratch first), and the
/// values it needs buffers for.
fn searched(
    cx: &Context<'_>,
    r: &Recognized,
    target: &Target,
) -> Result<(Vec<Candidate>, Vec<ValueId>), String> {
    let graph = cx.graph;
    let mut dense_inputs = Vec::new();
    let mut needs = Vec::new();
    for (k, input) in r.inputs.iter().enumerate() {
        let dims = &graph.shape(input.value).dims;
        let in_place = dense(cx.view(input.value), dims, &input.groups).filter(|d| readable(cx, d.base));
        let operand = match in_place {
            Some(d) => d,
            None => {
                let own =
                    View { base: input.value, offset: 0, strides: layout_strides(graph.shape(input.value)) };
                let Some(d) = dense(&own, dims, &input.groups) else {
                    return Err(format!(
                        "operand {k} (`{}`) has a layout in which the {} cannot read it",
                        graph.node(input.value).name,
                        r.what
                    ));
                };
                if !readable(cx, input.value) {
                    return Err(format!("operand {k} is computed inside another kernel"));
                }
                d
            }
        };
        needs.push(operand.base);
        dense_inputs.push(operand);
    }
    let top_shape = &graph.nodes[r.top].outputs[0];
    let own = View { base: ValueId::of(r.top), offset: 0, strides: layout_strides(top_shape) };
    let out = dense(&own, &top_shape.dims, &r.output_groups)
        .ok_or("the result's layout is not one a spec can write")?;
    let shape = Shape::new(r.shape.clone()).map_err(|e| e.to_string())?;
    // Per input: read in place, or (a matmul's rhs with `n` not fastest) copied first.
    let copyable = matches!(r.kind, PrimitiveKind::Matmul { .. } | PrimitiveKind::MatmulBias { .. });
    let mut options: Vec<Vec<Option<OperandCopy>>> = Vec::new();
    for (k, d) in dense_inputs.iter().enumerate() {
        let mut choices = vec![None];
        let row_major = Layout::row_major(d.layout.len() as u8);
        // A matmul's vector loads read rows of its rhs: a rhs whose `n` is not its fastest dim
        // may pay to copy; its lhs is read a scalar at a time.
        let n_fastest = d.layout.dims().last().is_some_and(|l| l.logical == 2);
        if copyable && k == 1 && !n_fastest && d.layout != row_major {
            let row = DenseOperand { layout: row_major, ..d.clone() };
            let logical = LogicalSpec {
                kind: PrimitiveKind::Move,
                shape: Shape::new(d.sizes.clone()).map_err(|e| e.to_string())?,
                operands: vec![tensor(d, r.dtype, target), tensor(&row, r.dtype, target)],
                serial_only: false,
            };
            if let Ok(spec) = logical.canonicalize(target) {
                let bytes =
                    d.sizes.iter().map(|&s| u64::from(s)).product::<u64>() * u64::from(r.dtype.size_bytes());
                choices.push(Some(OperandCopy {
                    input: k,
                    spec,
                    from: KernelOperand { base: d.base, offset: d.offset },
                    bytes,
                    offset: 0,
                }));
            }
        }
        options.push(choices);
    }
    let mut ways = Vec::new();
    let combinations: usize = options.iter().map(Vec::len).product();
    for mut index in 0..combinations {
        let mut operands = Vec::new();
        let mut inputs = Vec::new();
        let mut copies = Vec::new();
        for (k, choices) in options.iter().enumerate() {
            let choice = &choices[index % choices.len()];
            index /= choices.len();
            let d = &dense_inputs[k];
            inputs.push(KernelOperand { base: d.base, offset: d.offset });
            match choice {
                None => operands.push(tensor(d, r.dtype, target)),
                Some(copy) => {
                    let row = DenseOperand { layout: Layout::row_major(d.layout.len() as u8), ..d.clone() };
                    operands.push(tensor(&row, r.dtype, target));
                    copies.push(copy.clone());
                }
            }
        }
        operands.push(tensor(&out, r.dtype, target));
        let logical = LogicalSpec { kind: r.kind, shape: shape.clone(), operands, serial_only: false };
        match logical.canonicalize(target) {
            Ok(spec) => ways.push(Candidate { spec, inputs, copies }),
            Err(e) if ways.is_empty() && copies.is_empty() => {
                return Err(format!("{} has no valid spec here: {e}", r.what));
            }
            Err(_) => {}
        }
    }
    Ok((ways, needs))
}

/// Whether a value's buffer is there to read (not inside another kernel).
fn readable(cx: &Context<'_>, value: ValueId) -> bool {
    !cx.absorbed.contains(&value.node)
}

/// The spec operand of a dense operand.
fn tensor(operand: &DenseOperand, dtype: morello_core::dtype::Dtype, target: &Target) -> TensorSpec {
    TensorSpec {
        contiguous_dims: operand.layout.len() as u8,
        shape: Shape::new(operand.sizes.clone()).expect("sizes are between 1 and 2^31"),
        dtype,
        level: target.home_level(),
        layout: operand.layout.clone(),
        vector_size: None,
        pitch: None,
    }
}

/// A `Move` writing view node `id` from the dense buffer it views.
fn moved(
    graph: &Graph<'_>,
    views: &[Vec<View>],
    id: usize,
    target: &Target,
) -> Result<(CanonicalSpec, KernelOperand), String> {
    let shape: &ArrayShape = &graph.nodes[id].outputs[0];
    let dtype = spec_dtype(shape.element_type).ok_or("no move spec for this element type")?;
    if shape.rank() == 0 {
        return Err("a scalar".into());
    }
    let groups: Vec<Vec<usize>> = (0..shape.rank()).map(|d| vec![d]).collect();
    let src = dense(&views[id][0], &shape.dims, &groups).ok_or("the source is not a dense buffer")?;
    let own = View { base: ValueId::of(id), offset: 0, strides: layout_strides(shape) };
    let dst = dense(&own, &shape.dims, &groups).ok_or("the destination is not dense")?;
    let sizes = Shape::new(src.sizes.clone()).map_err(|e| e.to_string())?;
    let logical = LogicalSpec {
        kind: PrimitiveKind::Move,
        shape: sizes,
        operands: vec![tensor(&src, dtype, target), tensor(&dst, dtype, target)],
        serial_only: false,
    };
    let spec = logical.canonicalize(target).map_err(|e| e.to_string())?;
    Ok((spec, KernelOperand { base: src.base, offset: src.offset }))
}
