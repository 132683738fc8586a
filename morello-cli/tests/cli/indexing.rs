//! End-to-end tests of `morello indexing`: seed 003's examples and more modules, written as HLO
//! text here, checked against an independent oracle; random three-op fusions; and bad input.
//!
//! The oracle does not use indexing maps. It *runs* the module on values whose elements are
//! sets of dependencies: element `i` of operand `k` starts as `{(k, i)}`, and each op computes
//! its output elements the way an implementation of the op would (a reduce accumulates every
//! input element into its output element, a pad writes every input element to its padded
//! position, a reduce-window slides its window over the padded, dilated base, a bitcast goes
//! through a buffer in layout order, a fusion runs its computation), taking the union of the
//! dependencies instead of computing values. What an output element ends up depending on is
//! what it reads. Reduce and reduce-window inits and the padding value of a pad are read by
//! every output element, as seed 003 defines them.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use crate::common;

// ---------------------------------------------------------------------------------------------
// Modules, written here as plain data and printed as HLO text.

#[derive(Debug, Clone, PartialEq)]
struct Array {
    ty: &'static str,
    dims: Vec<i64>,
    layout: Option<Vec<usize>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Array(Array),
    Tuple(Vec<Array>),
}

impl Shape {
    fn arrays(&self) -> Vec<Array> {
        match self {
            Shape::Array(a) => vec![a.clone()],
            Shape::Tuple(elements) => elements.clone(),
        }
    }

    fn text(&self) -> String {
        match self {
            Shape::Array(a) => array_text(a),
            Shape::Tuple(elements) => {
                format!("({})", elements.iter().map(array_text).collect::<Vec<_>>().join(", "))
            }
        }
    }
}

fn array_text(a: &Array) -> String {
    let layout = a.layout.as_ref().map(|l| format!("{{{}}}", list(l))).unwrap_or_default();
    format!("{}[{}]{layout}", a.ty, list(&a.dims))
}

fn list<T: ToString>(values: &[T]) -> String {
    values.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// An f32 array with the default layout.
fn f32s(dims: &[i64]) -> Shape {
    Shape::Array(Array { ty: "f32", dims: dims.to_vec(), layout: None })
}

fn typed(ty: &'static str, dims: &[i64]) -> Shape {
    Shape::Array(Array { ty, dims: dims.to_vec(), layout: None })
}

fn laid_out(dims: &[i64], minor_to_major: &[usize]) -> Shape {
    Shape::Array(Array { ty: "f32", dims: dims.to_vec(), layout: Some(minor_to_major.to_vec()) })
}

fn tuple(shapes: &[Shape]) -> Shape {
    Shape::Tuple(shapes.iter().flat_map(Shape::arrays).collect())
}

/// One dimension of a window: size, stride, low and high padding, window and base dilation.
#[derive(Debug, Clone, Copy)]
struct Win {
    size: i64,
    stride: i64,
    low: i64,
    high: i64,
    window_dilation: i64,
    base_dilation: i64,
}

fn win(size: i64, stride: i64) -> Win {
    Win { size, stride, low: 0, high: 0, window_dilation: 1, base_dilation: 1 }
}

#[derive(Debug, Clone)]
enum Op {
    Parameter(usize),
    Constant,
    Iota(usize),
    Elementwise(&'static str),
    Compare(&'static str),
    Broadcast(Vec<usize>),
    Transpose(Vec<usize>),
    Reverse(Vec<usize>),
    Reduce(Vec<usize>, &'static str),
    Slice(Vec<[i64; 3]>),
    Reshape,
    Bitcast,
    Concatenate(usize),
    Dot {
        lhs_batch: Vec<usize>,
        rhs_batch: Vec<usize>,
        lhs_contracting: Vec<usize>,
        rhs_contracting: Vec<usize>,
    },
    Pad(Vec<[i64; 3]>),
    ReduceWindow(Vec<Win>, &'static str),
    Fusion(&'static str),
    Tuple,
    GetTupleElement(usize),
}

#[derive(Debug, Clone)]
struct Instr {
    name: String,
    shape: Shape,
    op: Op,
    operands: Vec<String>,
}

#[derive(Debug, Clone)]
struct Comp {
    name: String,
    entry: bool,
    instrs: Vec<Instr>,
}

impl Comp {
    fn new(name: &str) -> Self {
        Comp { name: name.to_string(), entry: false, instrs: Vec::new() }
    }

    fn entry(name: &str) -> Self {
        Comp { entry: true, ..Comp::new(name) }
    }

    /// Adds the next parameter.
    fn param(mut self, name: &str, shape: Shape) -> Self {
        let number = self.instrs.iter().filter(|i| matches!(i.op, Op::Parameter(_))).count();
        self.instrs.push(Instr {
            name: name.to_string(),
            shape,
            op: Op::Parameter(number),
            operands: vec![],
        });
        self
    }

    /// Adds an instruction; the last one added is the root.
    fn op(mut self, name: &str, shape: Shape, op: Op, operands: &[&str]) -> Self {
        let operands = operands.iter().map(|s| s.to_string()).collect();
        self.instrs.push(Instr { name: name.to_string(), shape, op, operands });
        self
    }

    fn instr(&self, name: &str) -> &Instr {
        self.instrs.iter().find(|i| i.name == name).unwrap_or_else(|| panic!("no `{name}`"))
    }
}

/// A reducer of `n` pairs of f32 scalars.
fn reducer(name: &str, n: usize) -> Comp {
    let mut c = Comp::new(name);
    for k in 0..2 * n {
        c = c.param(&format!("x{k}"), f32s(&[]));
    }
    if n == 1 {
        return c.op("m", f32s(&[]), Op::Elementwise("maximum"), &["x0", "x1"]);
    }
    let mut names = Vec::new();
    for k in 0..n {
        let (a, b) = (format!("x{k}"), format!("x{}", k + n));
        c = c.op(&format!("m{k}"), f32s(&[]), Op::Elementwise("maximum"), &[&a, &b]);
        names.push(format!("m{k}"));
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    c.op("t", tuple(&vec![f32s(&[]); n]), Op::Tuple, &refs)
}

#[derive(Debug, Clone)]
struct Module {
    comps: Vec<Comp>,
}

impl Module {
    fn new(comps: Vec<Comp>) -> Self {
        Module { comps }
    }

    fn comp(&self, name: &str) -> &Comp {
        self.comps.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no computation `{name}`"))
    }

    fn entry(&self) -> &Comp {
        self.comps.iter().find(|c| c.entry).unwrap_or_else(|| self.comps.last().expect("a computation"))
    }

    /// The HLO text. `dump_style` writes it as XLA dumps do: `%` names, operand shapes, layouts
    /// on every array, metadata.
    fn text(&self, dump_style: bool) -> String {
        let mut out = String::from("HloModule test\n\n");
        for c in &self.comps {
            let entry = if c.entry { "ENTRY " } else { "" };
            let pct = if dump_style { "%" } else { "" };
            out += &format!("{entry}{pct}{} {{\n", c.name);
            let last = c.instrs.len() - 1;
            for (i, instr) in c.instrs.iter().enumerate() {
                let root = if i == last { "ROOT " } else { "" };
                let shape = if dump_style { with_layouts(&instr.shape).text() } else { instr.shape.text() };
                let operands: Vec<String> = instr
                    .operands
                    .iter()
                    .map(|name| {
                        if dump_style {
                            format!("{} %{name}", with_layouts(&c.instr(name).shape).text())
                        } else {
                            name.clone()
                        }
                    })
                    .collect();
                let (opcode, args, attributes) = op_text(&instr.op, &operands, pct);
                let metadata = if dump_style { ", metadata={op_name=\"test\" source_line=1}" } else { "" };
                out += &format!(
                    "  {root}{pct}{} = {shape} {opcode}({args}){attributes}{metadata}\n",
                    instr.name
                );
            }
            out += "}\n\n";
        }
        out
    }
}

/// The shape with its default layout written out.
fn with_layouts(shape: &Shape) -> Shape {
    let fill = |a: &Array| Array {
        layout: Some(a.layout.clone().unwrap_or_else(|| (0..a.dims.len()).rev().collect())),
        ..a.clone()
    };
    match shape {
        Shape::Array(a) => Shape::Array(fill(a)),
        Shape::Tuple(elements) => Shape::Tuple(elements.iter().map(fill).collect()),
    }
}

fn op_text(op: &Op, operands: &[String], pct: &str) -> (&'static str, String, String) {
    let args = operands.join(", ");
    let dims = |d: &[usize]| format!(", dimensions={{{}}}", list(d));
    match op {
        Op::Parameter(n) => ("parameter", n.to_string(), String::new()),
        Op::Constant => ("constant", "0".to_string(), String::new()),
        Op::Iota(d) => ("iota", args, format!(", iota_dimension={d}")),
        Op::Elementwise(name) => (name, args, String::new()),
        Op::Compare(direction) => ("compare", args, format!(", direction={direction}")),
        Op::Broadcast(d) => ("broadcast", args, dims(d)),
        Op::Transpose(d) => ("transpose", args, dims(d)),
        Op::Reverse(d) => ("reverse", args, dims(d)),
        Op::Reduce(d, reducer) => ("reduce", args, format!("{}, to_apply={pct}{reducer}", dims(d))),
        Op::Slice(s) => {
            let parts: Vec<String> = s.iter().map(|[a, b, c]| format!("[{a}:{b}:{c}]")).collect();
            ("slice", args, format!(", slice={{{}}}", parts.join(", ")))
        }
        Op::Reshape => ("reshape", args, String::new()),
        Op::Bitcast => ("bitcast", args, String::new()),
        Op::Concatenate(d) => ("concatenate", args, dims(&[*d])),
        Op::Dot { lhs_batch, rhs_batch, lhs_contracting, rhs_contracting } => (
            "dot",
            args,
            format!(
                ", lhs_batch_dims={{{}}}, rhs_batch_dims={{{}}}, lhs_contracting_dims={{{}}}, rhs_contracting_dims={{{}}}",
                list(lhs_batch),
                list(rhs_batch),
                list(lhs_contracting),
                list(rhs_contracting)
            ),
        ),
        Op::Pad(p) => {
            let parts: Vec<String> = p.iter().map(|[l, h, i]| format!("{l}_{h}_{i}")).collect();
            ("pad", args, format!(", padding={}", parts.join("x")))
        }
        Op::ReduceWindow(w, reducer) => {
            let field = |f: &dyn Fn(&Win) -> String| w.iter().map(f).collect::<Vec<_>>().join("x");
            let window = format!(
                "size={} stride={} pad={} lhs_dilate={} rhs_dilate={}",
                field(&|w| w.size.to_string()),
                field(&|w| w.stride.to_string()),
                field(&|w| format!("{}_{}", w.low, w.high)),
                field(&|w| w.base_dilation.to_string()),
                field(&|w| w.window_dilation.to_string()),
            );
            let window = if w.is_empty() { String::new() } else { window };
            ("reduce-window", args, format!(", window={{{window}}}, to_apply={pct}{reducer}"))
        }
        Op::Fusion(callee) => ("fusion", args, format!(", kind=kLoop, calls={pct}{callee}")),
        Op::Tuple => ("tuple", args, String::new()),
        Op::GetTupleElement(i) => ("get-tuple-element", args, format!(", index={i}")),
    }
}

// ---------------------------------------------------------------------------------------------
// The oracle: run the module on sets of dependencies.

/// A source element: (operand or parameter position, tuple element, index).
type Source = (usize, usize, Vec<i64>);
type Deps = BTreeSet<Source>;

/// One array of dependency sets, row-major.
#[derive(Debug, Clone)]
struct Tensor {
    dims: Vec<i64>,
    cells: Vec<Deps>,
}

/// The arrays of a value (one, or the elements of a tuple).
type Value = Vec<Tensor>;

fn volume(dims: &[i64]) -> usize {
    dims.iter().product::<i64>() as usize
}

/// Every index of `dims`, row-major.
fn indices(dims: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &size in dims {
        out = out.into_iter().flat_map(|p| (0..size).map(move |v| [p.clone(), vec![v]].concat())).collect();
    }
    out
}

fn row_major(index: &[i64], dims: &[i64]) -> usize {
    index.iter().zip(dims).fold(0, |acc, (&i, &n)| acc * n + i) as usize
}

fn inside(index: &[i64], dims: &[i64]) -> bool {
    index.iter().zip(dims).all(|(&i, &n)| 0 <= i && i < n)
}

impl Tensor {
    fn empty(dims: &[i64]) -> Self {
        Tensor { dims: dims.to_vec(), cells: vec![Deps::new(); volume(dims)] }
    }

    /// Each element depends on itself only: source `(position, element, index)`.
    fn sources(dims: &[i64], position: usize, element: usize) -> Self {
        let cells = indices(dims).into_iter().map(|i| BTreeSet::from([(position, element, i)])).collect();
        Tensor { dims: dims.to_vec(), cells }
    }

    fn at(&self, index: &[i64]) -> &Deps {
        &self.cells[row_major(index, &self.dims)]
    }

    fn add(&mut self, index: &[i64], deps: &Deps) {
        let cell = row_major(index, &self.dims);
        self.cells[cell].extend(deps.iter().cloned());
    }

    /// The union of every element (what a scalar init contributes everywhere).
    fn all(&self) -> Deps {
        self.cells.iter().flatten().cloned().collect()
    }

    /// Adds `deps` to every element (what each one reads, as reduce inits or a pad value).
    fn add_everywhere(&mut self, deps: &Deps) {
        for cell in &mut self.cells {
            cell.extend(deps.iter().cloned());
        }
    }
}

/// The value of each operand (or parameter) as its own sources.
fn source_value(shape: &Shape, position: usize) -> Value {
    shape.arrays().iter().enumerate().map(|(e, a)| Tensor::sources(&a.dims, position, e)).collect()
}

/// Runs a computation on parameter values.
fn run_computation(module: &Module, comp: &Comp, params: &[Value]) -> Value {
    let mut env: BTreeMap<&str, Value> = BTreeMap::new();
    for instr in &comp.instrs {
        let value = match instr.op {
            Op::Parameter(n) => params[n].clone(),
            _ => {
                let args: Vec<Value> = instr.operands.iter().map(|o| env[o.as_str()].clone()).collect();
                run_op(module, comp, instr, &args)
            }
        };
        env.insert(&instr.name, value);
    }
    env.remove(comp.instrs.last().expect("a root").name.as_str()).expect("the root ran")
}

/// The position of `index` in a buffer laid out by `layout` (minor to major).
fn buffer_position(index: &[i64], dims: &[i64], layout: &Option<Vec<usize>>) -> usize {
    let order: Vec<usize> = layout.clone().unwrap_or_else(|| (0..dims.len()).rev().collect());
    let (mut position, mut stride) = (0, 1);
    for d in order {
        position += index[d] * stride;
        stride *= dims[d];
    }
    position as usize
}

/// Runs one op of `comp` on the dependency sets of its operands.
fn run_op(module: &Module, comp: &Comp, instr: &Instr, args: &[Value]) -> Value {
    let out_arrays = instr.shape.arrays();
    let out_dims = out_arrays[0].dims.clone();
    let arg = |k: usize| &args[k][0];
    let mut out = Tensor::empty(&out_dims);
    match &instr.op {
        Op::Parameter(_) | Op::Constant | Op::Iota(_) => {}
        Op::Elementwise(_) | Op::Compare(_) => {
            for a in args {
                for (cell, deps) in out.cells.iter_mut().zip(&a[0].cells) {
                    cell.extend(deps.iter().cloned());
                }
            }
        }
        Op::Broadcast(dims) => {
            for o in indices(&out_dims) {
                let j: Vec<i64> = dims.iter().map(|&d| o[d]).collect();
                out.add(&o, arg(0).at(&j));
            }
        }
        Op::Transpose(perm) => {
            // Operand dimension perm[i] becomes result dimension i.
            for j in indices(&arg(0).dims) {
                let o: Vec<i64> = perm.iter().map(|&p| j[p]).collect();
                out.add(&o, arg(0).at(&j));
            }
        }
        Op::Reverse(dims) => {
            for j in indices(&arg(0).dims) {
                let o: Vec<i64> = (0..j.len())
                    .map(|k| if dims.contains(&k) { out_dims[k] - 1 - j[k] } else { j[k] })
                    .collect();
                out.add(&o, arg(0).at(&j));
            }
        }
        Op::Reduce(dims, _) => {
            // Start every output from all inits, then accumulate every input element into the
            // output element its kept dimensions name. Each output reads every input.
            let n = args.len() / 2;
            out.add_everywhere(&(n..2 * n).flat_map(|k| arg(k).all()).collect());
            for k in 0..n {
                for j in indices(&arg(k).dims) {
                    let kept: Vec<i64> = (0..j.len()).filter(|d| !dims.contains(d)).map(|d| j[d]).collect();
                    out.add(&kept, arg(k).at(&j));
                }
            }
            return vec![out; out_arrays.len()];
        }
        Op::Slice(s) => {
            for j in indices(&arg(0).dims) {
                let hit = s.iter().zip(&j).all(|([start, limit, stride], &x)| {
                    x >= *start && x < *limit && (x - start) % stride == 0
                });
                if hit {
                    let o: Vec<i64> =
                        s.iter().zip(&j).map(|([start, _, stride], &x)| (x - start) / stride).collect();
                    out.add(&o, arg(0).at(&j));
                }
            }
        }
        Op::Reshape => out.cells = arg(0).cells.clone(),
        Op::Bitcast => {
            let (in_array, out_array) = (&args[0][0], &out_arrays[0]);
            let operand_layout = &comp.instr(&instr.operands[0]).shape.arrays()[0].layout;
            let mut buffer = vec![Deps::new(); volume(&in_array.dims)];
            for j in indices(&in_array.dims) {
                buffer[buffer_position(&j, &in_array.dims, operand_layout)] = in_array.at(&j).clone();
            }
            for o in indices(&out_dims) {
                let b = &buffer[buffer_position(&o, &out_dims, &out_array.layout)];
                out.add(&o, b);
            }
        }
        Op::Concatenate(d) => {
            let mut offset = 0;
            for a in args {
                for j in indices(&a[0].dims) {
                    let mut o = j.clone();
                    o[*d] += offset;
                    out.add(&o, a[0].at(&j));
                }
                offset += a[0].dims[*d];
            }
        }
        Op::Dot { lhs_batch, rhs_batch, lhs_contracting, rhs_contracting } => {
            let (lhs, rhs) = (arg(0), arg(1));
            let free = |rank: usize, a: &[usize], b: &[usize]| -> Vec<usize> {
                (0..rank).filter(|d| !a.contains(d) && !b.contains(d)).collect()
            };
            let lhs_free = free(lhs.dims.len(), lhs_batch, lhs_contracting);
            let rhs_free = free(rhs.dims.len(), rhs_batch, rhs_contracting);
            for l in indices(&lhs.dims) {
                for r in indices(&rhs.dims) {
                    let batch_match = lhs_batch.iter().zip(rhs_batch).all(|(&a, &b)| l[a] == r[b]);
                    let contract_match =
                        lhs_contracting.iter().zip(rhs_contracting).all(|(&a, &b)| l[a] == r[b]);
                    if batch_match && contract_match {
                        let mut o: Vec<i64> = lhs_batch.iter().map(|&a| l[a]).collect();
                        o.extend(lhs_free.iter().map(|&a| l[a]));
                        o.extend(rhs_free.iter().map(|&b| r[b]));
                        out.add(&o, lhs.at(&l));
                        out.add(&o, rhs.at(&r));
                    }
                }
            }
        }
        Op::Pad(p) => {
            out.add_everywhere(&arg(1).all());
            for j in indices(&arg(0).dims) {
                let o: Vec<i64> =
                    p.iter().zip(&j).map(|([low, _, interior], &x)| low + x * (interior + 1)).collect();
                if inside(&o, &out_dims) {
                    out.add(&o, arg(0).at(&j));
                }
            }
        }
        Op::ReduceWindow(window, _) => {
            let n = args.len() / 2;
            out.add_everywhere(&(n..2 * n).flat_map(|k| arg(k).all()).collect());
            for k in 0..n {
                // The base: the input dilated and padded, holes empty.
                let input = arg(k);
                let base_dims: Vec<i64> = window
                    .iter()
                    .zip(&input.dims)
                    .map(|(w, &size)| {
                        w.low + w.high + if size == 0 { 0 } else { (size - 1) * w.base_dilation + 1 }
                    })
                    .collect();
                let mut base: BTreeMap<Vec<i64>, &Deps> = BTreeMap::new();
                for j in indices(&input.dims) {
                    let q: Vec<i64> =
                        window.iter().zip(&j).map(|(w, &x)| w.low + x * w.base_dilation).collect();
                    if inside(&q, &base_dims) {
                        base.insert(q, input.at(&j));
                    }
                }
                let sizes: Vec<i64> = window.iter().map(|w| w.size).collect();
                for o in indices(&out_dims) {
                    for offsets in indices(&sizes) {
                        let q: Vec<i64> = window
                            .iter()
                            .zip(o.iter().zip(&offsets))
                            .map(|(w, (&x, &t))| x * w.stride + t * w.window_dilation)
                            .collect();
                        if let Some(deps) = base.get(&q) {
                            out.add(&o, deps);
                        }
                    }
                }
            }
            return vec![out; out_arrays.len()];
        }
        Op::Fusion(callee) => return run_computation(module, module.comp(callee), args),
        Op::Tuple => return args.iter().map(|a| a[0].clone()).collect(),
        Op::GetTupleElement(i) => return vec![args[0][*i].clone()],
    }
    vec![out]
}

/// What the maps are asked for.
#[derive(Debug, Clone, Copy)]
enum Subject<'a> {
    /// An instruction, by computation and name.
    Instruction(&'a str, &'a str),
    /// A whole computation.
    Computation(&'a str),
}

/// A (from, to) pair of ends: (kind, index, tuple element).
type End = (String, usize, usize);
type Relations = BTreeMap<(End, End), BTreeSet<(Vec<i64>, Vec<i64>)>>;

/// The oracle's output-to-input relations.
fn oracle(module: &Module, subject: Subject) -> Relations {
    let (output, kind) = match subject {
        Subject::Instruction(c, name) => {
            let comp = module.comp(c);
            let instr = comp.instr(name);
            let args: Vec<Value> = instr
                .operands
                .iter()
                .enumerate()
                .map(|(k, o)| source_value(&comp.instr(o).shape, k))
                .collect();
            (run_op(module, comp, instr, &args), "operand")
        }
        Subject::Computation(c) => {
            let comp = module.comp(c);
            let params: Vec<Value> = comp
                .instrs
                .iter()
                .filter_map(|i| match i.op {
                    Op::Parameter(n) => Some((n, source_value(&i.shape, n))),
                    _ => None,
                })
                .collect::<BTreeMap<_, _>>()
                .into_values()
                .collect();
            (run_computation(module, comp, &params), "parameter")
        }
    };
    let mut relations = Relations::new();
    for (t, tensor) in output.iter().enumerate() {
        for o in indices(&tensor.dims) {
            for (position, element, index) in tensor.at(&o) {
                let key = (("output".to_string(), t, 0), (kind.to_string(), *position, *element));
                relations.entry(key).or_default().insert((o.clone(), index.clone()));
            }
        }
    }
    relations
}

fn invert(relations: &Relations) -> Relations {
    relations
        .iter()
        .map(|((from, to), pairs)| {
            ((to.clone(), from.clone()), pairs.iter().map(|(a, b)| (b.clone(), a.clone())).collect())
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Running `morello indexing`.

fn morello(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    use std::io::Write;
    let mut command = Command::new(env!("CARGO_BIN_EXE_morello"));
    command.args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    command.stdin(if stdin.is_some() { std::process::Stdio::piped() } else { std::process::Stdio::null() });
    let mut child = command.spawn().expect("morello runs");
    if let Some(text) = stdin {
        // morello may exit before reading (bad arguments): a closed pipe is not a failure.
        let written = child.stdin.take().expect("a pipe").write_all(text.as_bytes());
        if let Err(e) = written {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
        }
    }
    common::parts(child.wait_with_output().expect("morello finishes"))
}

/// Runs `morello indexing - ARGS` on the module's text (read from standard input).
fn indexing(text: &str, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["indexing", "-"];
    all.extend(args);
    morello(&all, Some(text))
}

fn subject_args(subject: Subject<'_>) -> Vec<String> {
    match subject {
        Subject::Instruction(c, name) => {
            vec!["--computation".into(), c.into(), "--instruction".into(), name.into()]
        }
        Subject::Computation(c) => vec!["--computation".into(), c.into()],
    }
}

fn end(value: &serde_json::Value) -> End {
    let number = |v: &serde_json::Value| v.as_u64().expect("an index") as usize;
    (
        value["kind"].as_str().expect("a kind").to_string(),
        number(&value["index"]),
        value.get("tuple_index").map_or(0, number),
    )
}

fn index(value: &serde_json::Value) -> Vec<i64> {
    value.as_array().expect("an index").iter().map(|v| v.as_i64().expect("an integer")).collect()
}

/// The relations `morello indexing --json --enumerate` prints (the union of each (from, to)'s
/// maps), and the number of maps per (from, to).
fn cli_relations(
    text: &str,
    extra: &[String],
) -> (Relations, BTreeMap<(End, End), usize>, serde_json::Value) {
    let mut args: Vec<&str> = vec!["--json", "--enumerate"];
    args.extend(extra.iter().map(String::as_str));
    let (code, stdout, stderr) = indexing(text, &args);
    assert_eq!(code, 0, "{args:?}: {stderr}\n{text}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let mut relations = Relations::new();
    let mut counts = BTreeMap::new();
    for entry in json.as_array().expect("an array") {
        let key = (end(&entry["from"]), end(&entry["to"]));
        *counts.entry(key.clone()).or_insert(0) += 1;
        let set = relations.entry(key).or_default();
        for pair in entry["pairs"].as_array().expect("pairs") {
            set.insert((index(&pair[0]), index(&pair[1])));
        }
    }
    relations.retain(|_, pairs| !pairs.is_empty());
    (relations, counts, json)
}

/// Checks both directions of `subject` against the oracle, in both text styles; returns the
/// out-to-in JSON.
fn check(module: &Module, subject: Subject<'_>) -> serde_json::Value {
    let mut expected = oracle(module, subject);
    expected.retain(|_, pairs| !pairs.is_empty());
    let mut first = None;
    for dump_style in [false, true] {
        let text = module.text(dump_style);
        let mut args = subject_args(subject);
        let (out_to_in, _, json) = cli_relations(&text, &args);
        assert_eq!(out_to_in, expected, "out-to-in of {subject:?}\n{text}");
        check_endpoints(module, subject, &json);
        first.get_or_insert(json);
        args.extend(["--direction".to_string(), "in-to-out".to_string()]);
        let (in_to_out, _, json) = cli_relations(&text, &args);
        assert_eq!(in_to_out, invert(&expected), "in-to-out of {subject:?}\n{text}");
        check_endpoints(module, subject, &json);
    }
    first.expect("ran")
}

/// Every endpoint names the right instruction and has its shape.
fn check_endpoints(module: &Module, subject: Subject<'_>, json: &serde_json::Value) {
    let (result, sources): (&Instr, Vec<&Instr>) = match subject {
        Subject::Instruction(c, name) => {
            let comp = module.comp(c);
            let instr = comp.instr(name);
            (instr, instr.operands.iter().map(|o| comp.instr(o)).collect())
        }
        Subject::Computation(c) => {
            let comp = module.comp(c);
            let mut params: Vec<(usize, &Instr)> = comp
                .instrs
                .iter()
                .filter_map(|i| if let Op::Parameter(n) = i.op { Some((n, i)) } else { None })
                .collect();
            params.sort_by_key(|p| p.0);
            (comp.instrs.last().expect("a root"), params.into_iter().map(|p| p.1).collect())
        }
    };
    for entry in json.as_array().expect("an array") {
        for side in ["from", "to"] {
            let e = &entry[side];
            let (kind, position, element) = end(e);
            let (instr, dims) = if kind == "output" {
                (result, result.shape.arrays()[position].dims.clone())
            } else {
                let instr = sources[position];
                (instr, instr.shape.arrays()[element].dims.clone())
            };
            assert_eq!(e["name"], instr.name.as_str(), "{e}");
            assert_eq!(index(&e["shape"]), dims, "{e}");
            let is_tuple = kind != "output" && matches!(instr.shape, Shape::Tuple(_));
            assert_eq!(e.get("tuple_index").is_some(), is_tuple, "{e}");
        }
    }
}

/// The maps' texts in the out-to-in JSON.
fn map_texts(json: &serde_json::Value) -> Vec<String> {
    json.as_array().expect("an array").iter().map(|e| e["map"].as_str().expect("text").to_string()).collect()
}

/// A module whose entry is the given computation with a single op `name` at the root.
fn one_op(params: &[(&str, Shape)], name: &str, shape: Shape, op: Op, operands: &[&str]) -> Module {
    let mut c = Comp::entry("main");
    for (p, s) in params {
        c = c.param(p, s.clone());
    }
    Module::new(vec![reducer("max", 1), reducer("max2", 2), c.op(name, shape, op, operands)])
}

/// Checks the computation `f`, alone in its module, against the oracle, and asserts the texts of
/// its maps (one per parameter, in order).
fn assert_computation_maps(f: Comp, expected: &[&str]) {
    let name = f.name.clone();
    let m = Module::new(vec![f]);
    let json = check(&m, Subject::Computation(&name));
    assert_eq!(map_texts(&json), expected);
}

fn root(module: &Module) -> Subject<'_> {
    let entry = module.entry();
    Subject::Instruction(&entry.name, &entry.instrs.last().expect("a root").name)
}

// ---------------------------------------------------------------------------------------------
// Seed 003's examples (small sizes where the seed's would not enumerate quickly).

#[test]
fn seed_elementwise() {
    let m = one_op(
        &[("p0", f32s(&[10, 20])), ("p1", f32s(&[10, 20]))],
        "add",
        f32s(&[10, 20]),
        Op::Elementwise("add"),
        &["p0", "p1"],
    );
    let json = check(&m, root(&m));
    assert_eq!(map_texts(&json), vec!["(d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]"; 2]);
}

#[test]
fn seed_broadcast() {
    let m = one_op(&[("p0", f32s(&[20]))], "bc0", f32s(&[10, 20, 30]), Op::Broadcast(vec![1]), &["p0"]);
    let json = check(&m, root(&m));
    assert_eq!(
        map_texts(&json),
        ["(d0, d1, d2) -> (d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]"]
    );
}

#[test]
fn seed_transpose() {
    let m = one_op(
        &[("p0", f32s(&[3, 5, 2, 4]))],
        "transpose",
        f32s(&[3, 2, 4, 5]),
        Op::Transpose(vec![0, 2, 3, 1]),
        &["p0"],
    );
    let json = check(&m, root(&m));
    assert_eq!(
        map_texts(&json),
        [
            "(d0, d1, d2, d3) -> (d0, d3, d1, d2), domain: d0 in [0, 2], d1 in [0, 1], d2 in [0, 3], d3 in [0, 4]"
        ]
    );
}

#[test]
fn seed_reverse() {
    let m = one_op(
        &[("p0", f32s(&[1, 17, 9, 9]))],
        "reverse",
        f32s(&[1, 17, 9, 9]),
        Op::Reverse(vec![1, 2]),
        &["p0"],
    );
    let json = check(&m, root(&m));
    assert_eq!(
        map_texts(&json),
        [
            "(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3), domain: d0 in [0, 0], d1 in [0, 16], d2 in [0, 8], d3 in [0, 8]"
        ]
    );
}

#[test]
fn seed_variadic_reduce() {
    let c = Comp::entry("main")
        .param("p0", f32s(&[25, 10]))
        .op("p0_init", f32s(&[]), Op::Constant, &[])
        .param("p1", typed("f32", &[25, 10]))
        .op("p1_init", f32s(&[]), Op::Constant, &[])
        .op(
            "reduce",
            tuple(&[f32s(&[10]), f32s(&[10])]),
            Op::Reduce(vec![0], "max2"),
            &["p0", "p1", "p0_init", "p1_init"],
        );
    let m = Module::new(vec![reducer("max2", 2), c]);
    let json = check(&m, root(&m));
    // Each of the two outputs reads both inputs and both inits.
    assert_eq!(json.as_array().unwrap().len(), 8);
}

#[test]
fn seed_strided_slice() {
    let m = one_op(
        &[("p0", f32s(&[10, 20, 50]))],
        "slice",
        f32s(&[5, 3, 25]),
        Op::Slice(vec![[5, 10, 1], [3, 20, 7], [0, 50, 2]]),
        &["p0"],
    );
    let json = check(&m, root(&m));
    assert_eq!(
        map_texts(&json),
        ["(d0, d1, d2) -> (d0 + 5, d1 * 7 + 3, d2 * 2), domain: d0 in [0, 4], d1 in [0, 2], d2 in [0, 24]"]
    );
}

#[test]
fn seed_reshapes() {
    for (from, to) in
        [(&[4, 8][..], &[32][..]), (&[32], &[4, 8]), (&[4, 8], &[2, 4, 4]), (&[4, 8, 12], &[32, 3, 4])]
    {
        let m = one_op(&[("p0", f32s(from))], "reshape", f32s(to), Op::Reshape, &["p0"]);
        check(&m, root(&m));
    }
}

#[test]
fn seed_bitcast_is_transpose_reshape_transpose() {
    let cases = [
        (laid_out(&[3, 4], &[0, 1]), laid_out(&[4, 3], &[1, 0])),
        (laid_out(&[2, 3, 4], &[1, 2, 0]), laid_out(&[6, 4], &[0, 1])),
        (f32s(&[2, 6]), laid_out(&[3, 4], &[0, 1])),
    ];
    for (from, to) in cases {
        let m = one_op(&[("p0", from)], "bitcast", to, Op::Bitcast, &["p0"]);
        check(&m, root(&m));
    }
}

#[test]
fn seed_concatenate() {
    let m = one_op(
        &[("p0", f32s(&[3, 50])), ("p1", f32s(&[3, 30]))],
        "concat",
        f32s(&[3, 80]),
        Op::Concatenate(1),
        &["p0", "p1"],
    );
    let json = check(&m, root(&m));
    assert_eq!(
        map_texts(&json),
        [
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 49]",
            "(d0, d1) -> (d0, d1 - 50), domain: d0 in [0, 2], d1 in [50, 79]"
        ]
    );
    let three = one_op(
        &[("a", f32s(&[2, 3])), ("b", f32s(&[1, 3])), ("c", f32s(&[4, 3]))],
        "concat",
        f32s(&[7, 3]),
        Op::Concatenate(0),
        &["a", "b", "c"],
    );
    check(&three, root(&three));
}

#[test]
fn seed_dot() {
    let dims = Op::Dot {
        lhs_batch: vec![0],
        rhs_batch: vec![0],
        lhs_contracting: vec![2],
        rhs_contracting: vec![1],
    };
    let m = one_op(
        &[("p0", f32s(&[4, 8, 16])), ("p1", f32s(&[4, 16, 6]))],
        "dot",
        f32s(&[4, 8, 6]),
        dims,
        &["p0", "p1"],
    );
    let json = check(&m, root(&m));
    assert_eq!(
        map_texts(&json),
        [
            "(d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 3], d1 in [0, 7], d2 in [0, 5], s0 in [0, 15]",
            "(d0, d1, d2)[s0] -> (d0, s0, d2), domain: d0 in [0, 3], d1 in [0, 7], d2 in [0, 5], s0 in [0, 15]",
        ]
    );
    let two_contracting = Op::Dot {
        lhs_batch: vec![],
        rhs_batch: vec![],
        lhs_contracting: vec![0, 2],
        rhs_contracting: vec![2, 0],
    };
    let m = one_op(
        &[("a", f32s(&[2, 3, 4])), ("b", f32s(&[4, 5, 2]))],
        "dot",
        f32s(&[3, 5]),
        two_contracting,
        &["a", "b"],
    );
    check(&m, root(&m));
}

/// Seed 003's pad: `p0` [4, 4] padded with the scalar `p1` to [12, 16] (rows: 1 low, 4 high,
/// 1 between; columns: 4 low, 8 high).
fn seed_pad() -> Module {
    one_op(
        &[("p0", f32s(&[4, 4])), ("p1", f32s(&[]))],
        "pad",
        f32s(&[12, 16]),
        Op::Pad(vec![[1, 4, 1], [4, 8, 0]]),
        &["p0", "p1"],
    )
}

#[test]
fn seed_pad_maps() {
    let m = seed_pad();
    let json = check(&m, root(&m));
    assert_eq!(
        map_texts(&json),
        [
            "(d0, d1) -> (d0 floordiv 2, d1 - 4), domain: d0 in [1, 7], d1 in [4, 7], d0 mod 2 in [1, 1]",
            "(d0, d1) -> (), domain: d0 in [0, 11], d1 in [0, 15]",
        ]
    );
    let negative = one_op(
        &[("p0", f32s(&[5, 4])), ("p1", f32s(&[]))],
        "pad",
        f32s(&[7, 3]),
        Op::Pad(vec![[-2, 0, 1], [1, -2, 0]]),
        &["p0", "p1"],
    );
    check(&negative, root(&negative));
}

#[test]
fn seed_reduce_window() {
    let m = one_op(
        &[("p0", f32s(&[16, 34]))],
        "reduce-window",
        f32s(&[16, 3]),
        Op::ReduceWindow(vec![win(1, 1), win(32, 1)], "max"),
        &["p0", "c_inf"],
    );
    // The seed's init is a constant defined before the op.
    let mut m = m;
    let entry = m.comps.last_mut().unwrap();
    entry
        .instrs
        .insert(1, Instr { name: "c_inf".into(), shape: f32s(&[]), op: Op::Constant, operands: vec![] });
    let json = check(&m, root(&m));
    assert_eq!(
        map_texts(&json)[0],
        "(d0, d1)[s0] -> (d0, d1 + s0), domain: d0 in [0, 15], d1 in [0, 2], s0 in [0, 31]"
    );
    // Padding, strides and both dilations.
    let window = vec![
        Win { size: 2, stride: 2, low: 1, high: 0, window_dilation: 1, base_dilation: 2 },
        Win { size: 2, stride: 1, low: 0, high: 2, window_dilation: 2, base_dilation: 1 },
    ];
    let m = one_op(
        &[("p0", f32s(&[3, 4])), ("v", f32s(&[]))],
        "rw",
        f32s(&[3, 4]),
        Op::ReduceWindow(window, "max"),
        &["p0", "v"],
    );
    check(&m, root(&m));
    // Variadic.
    let m = one_op(
        &[("a", f32s(&[4])), ("b", f32s(&[4])), ("i", f32s(&[])), ("j", f32s(&[]))],
        "rw",
        tuple(&[f32s(&[2]), f32s(&[2])]),
        Op::ReduceWindow(vec![win(2, 2)], "max2"),
        &["a", "b", "i", "j"],
    );
    check(&m, root(&m));
}

#[test]
fn seed_fusion_one_input_two_maps() {
    let f = Comp::new("f")
        .param("p0", f32s(&[6, 6]))
        .op("transpose_p0", laid_out(&[6, 6], &[0, 1]), Op::Transpose(vec![1, 0]), &["p0"])
        .op("a0", f32s(&[6, 6]), Op::Elementwise("add"), &["p0", "transpose_p0"]);
    assert_computation_maps(
        f,
        &[
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 5], d1 in [0, 5]",
            "(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 5]",
        ],
    );
}

/// The seed's chain of transposes, fused and called from an entry computation.
fn transposes() -> Module {
    let f = Comp::new("fused")
        .param("p0", f32s(&[4, 2, 5]))
        .op("lhs_transpose_1", f32s(&[2, 4, 5]), Op::Transpose(vec![1, 0, 2]), &["p0"])
        .op("lhs_e", f32s(&[2, 4, 5]), Op::Elementwise("exponential"), &["lhs_transpose_1"])
        .op("lhs_transpose_2", f32s(&[2, 5, 4]), Op::Transpose(vec![0, 2, 1]), &["lhs_e"])
        .op("rhs_transpose_1", f32s(&[5, 2, 4]), Op::Transpose(vec![2, 1, 0]), &["p0"])
        .op("rhs_log", f32s(&[5, 2, 4]), Op::Elementwise("exponential"), &["rhs_transpose_1"])
        .op("rhs_transpose_2", f32s(&[2, 5, 4]), Op::Transpose(vec![1, 0, 2]), &["rhs_log"])
        .op("add", f32s(&[2, 5, 4]), Op::Elementwise("add"), &["lhs_transpose_2", "rhs_transpose_2"]);
    let e = Comp::entry("main").param("x", f32s(&[4, 2, 5])).op(
        "fusion",
        f32s(&[2, 5, 4]),
        Op::Fusion("fused"),
        &["x"],
    );
    Module::new(vec![f, e])
}

#[test]
fn seed_fusion_chain_of_transposes_deduplicates() {
    let m = transposes();
    let json = check(&m, root(&m));
    assert_eq!(
        map_texts(&json),
        ["(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 1], d1 in [0, 4], d2 in [0, 3]"]
    );
    check(&m, Subject::Computation("fused"));
    check(&m, Subject::Instruction("fused", "lhs_transpose_2"));
}

#[test]
fn seed_softmax() {
    let f = Comp::new("softmax")
        .param("p0", f32s(&[2, 3, 5]))
        .op("c", f32s(&[]), Op::Constant, &[])
        .op("max", f32s(&[2, 3]), Op::Reduce(vec![2], "max"), &["p0", "c"])
        .op("bmax", f32s(&[2, 3, 5]), Op::Broadcast(vec![0, 1]), &["max"])
        .op("sub", f32s(&[2, 3, 5]), Op::Elementwise("subtract"), &["p0", "bmax"])
        .op("exp", f32s(&[2, 3, 5]), Op::Elementwise("exponential"), &["sub"])
        .op("sum", f32s(&[2, 3]), Op::Reduce(vec![2], "max"), &["exp", "c"])
        .op("bsum", f32s(&[2, 3, 5]), Op::Broadcast(vec![0, 1]), &["sum"])
        .op("div", f32s(&[2, 3, 5]), Op::Elementwise("divide"), &["exp", "bsum"]);
    let e = Comp::entry("main").param("x", f32s(&[2, 3, 5])).op(
        "fusion",
        f32s(&[2, 3, 5]),
        Op::Fusion("softmax"),
        &["x"],
    );
    let m = Module::new(vec![reducer("max", 1), f, e]);
    let json = check(&m, root(&m));
    assert_eq!(
        map_texts(&json),
        [
            "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 4]",
            "(d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 4], s0 in [0, 4]",
        ]
    );
}

#[test]
fn seed_chained_reshapes_cancel() {
    let f = Comp::new("f")
        .param("p0", f32s(&[10, 10, 10]))
        .op("reshape1", f32s(&[50, 20]), Op::Reshape, &["p0"])
        .op("reshape2", f32s(&[10, 10, 10]), Op::Reshape, &["reshape1"]);
    assert_computation_maps(
        f,
        &["(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"],
    );
}

#[test]
fn docs_worked_example() {
    let f = Comp::new("f")
        .param("p0", f32s(&[4, 4]))
        .param("v", f32s(&[]))
        .op("pad", f32s(&[12, 16]), Op::Pad(vec![[1, 4, 1], [4, 8, 0]]), &["p0", "v"])
        .op("s", f32s(&[6, 4]), Op::Slice(vec![[1, 12, 2], [4, 8, 1]]), &["pad"]);
    assert_computation_maps(
        f,
        &[
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 3]",
            "(d0, d1) -> (), domain: d0 in [0, 5], d1 in [0, 3]",
        ],
    );
}

#[test]
fn multi_output_fusion_tuples_and_get_tuple_element() {
    let f = Comp::new("fused")
        .param("a", f32s(&[3, 4]))
        .param("b", f32s(&[4, 3]))
        .op("t", f32s(&[3, 4]), Op::Transpose(vec![1, 0]), &["b"])
        .op("sum", f32s(&[3, 4]), Op::Elementwise("add"), &["a", "t"])
        .op("r", f32s(&[4, 3]), Op::Reverse(vec![0]), &["b"])
        .op("out", tuple(&[f32s(&[3, 4]), f32s(&[4, 3])]), Op::Tuple, &["sum", "r"]);
    let e = Comp::entry("main")
        .param("x", f32s(&[3, 4]))
        .param("y", f32s(&[4, 3]))
        .op("fusion", tuple(&[f32s(&[3, 4]), f32s(&[4, 3])]), Op::Fusion("fused"), &["x", "y"])
        .op("g", f32s(&[4, 3]), Op::GetTupleElement(1), &["fusion"]);
    let m = Module::new(vec![f, e]);
    check(&m, root(&m));
    check(&m, Subject::Instruction("main", "fusion"));
    check(&m, Subject::Computation("fused"));
    // A fusion taking a tuple: its parameter's arrays are told apart by "tuple_index".
    let g = Comp::new("g")
        .param("pt", tuple(&[f32s(&[2]), f32s(&[3])]))
        .op("e1", f32s(&[3]), Op::GetTupleElement(1), &["pt"])
        .op("n", f32s(&[3]), Op::Elementwise("negate"), &["e1"]);
    let e = Comp::entry("main")
        .param("x", f32s(&[2]))
        .param("y", f32s(&[3]))
        .op("tu", tuple(&[f32s(&[2]), f32s(&[3])]), Op::Tuple, &["x", "y"])
        .op("fusion", f32s(&[3]), Op::Fusion("g"), &["tu"]);
    let m = Module::new(vec![g, e]);
    let json = check(&m, root(&m));
    // Element 0 of the tuple is never read: XLA's KNOWN EMPTY.
    assert_eq!(json[0]["to"]["tuple_index"], 0);
    assert_eq!(json[0]["map"], "KNOWN EMPTY");
    assert_eq!(json[1]["to"]["tuple_index"], 1);
    check(&m, Subject::Instruction("main", "tu"));
}

#[test]
fn every_elementwise_opcode_and_ops_without_operands() {
    for (op, arity) in [
        ("add", 2),
        ("subtract", 2),
        ("multiply", 2),
        ("divide", 2),
        ("maximum", 2),
        ("minimum", 2),
        ("exponential", 1),
        ("log", 1),
        ("negate", 1),
        ("tanh", 1),
        ("convert", 1),
    ] {
        let operands = ["a", "b"][..arity].to_vec();
        let m = one_op(
            &[("a", f32s(&[2, 3])), ("b", f32s(&[2, 3]))],
            "x",
            f32s(&[2, 3]),
            Op::Elementwise(op),
            &operands,
        );
        check(&m, root(&m));
    }
    let m = one_op(
        &[("c", typed("pred", &[2, 3])), ("a", f32s(&[2, 3])), ("b", f32s(&[2, 3]))],
        "x",
        f32s(&[2, 3]),
        Op::Elementwise("select"),
        &["c", "a", "b"],
    );
    check(&m, root(&m));
    let m = one_op(
        &[("a", f32s(&[2, 3])), ("b", f32s(&[2, 3]))],
        "x",
        typed("pred", &[2, 3]),
        Op::Compare("GE"),
        &["a", "b"],
    );
    check(&m, root(&m));
    for (op, shape) in [(Op::Iota(1), typed("s32", &[2, 3])), (Op::Constant, f32s(&[2]))] {
        let m = one_op(&[], "x", shape, op, &[]);
        let (code, stdout, stderr) = indexing(&m.text(false), &["--json"]);
        assert_eq!((code, stdout.as_str()), (0, "[]\n"), "{stderr}");
        let (code, stdout, _) = indexing(&m.text(false), &[]);
        assert_eq!(code, 0);
        assert!(stdout.contains("no maps"), "{stdout}");
    }
}

// ---------------------------------------------------------------------------------------------
// Random three-op fusions, against the oracle.

/// The random choices of one module, all drawn from one proptest `u64` seed.
struct Rng(StdRng);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(StdRng::seed_from_u64(seed))
    }

    /// A number in `[0, n)` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n.max(1))
    }

    /// A number in `[lo, hi]`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        self.0.random_range(lo..=hi)
    }

    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        p.shuffle(&mut self.0);
        p
    }
}

/// Appends a random op reading `input` (with dims `dims`) to the fused computation; extra
/// operands become new parameters. Returns the new computation, the op's name and its dims.
fn random_op(rng: &mut Rng, comp: Comp, input: &str, dims: &[i64], n: usize) -> (Comp, String, Vec<i64>) {
    let name = format!("op{n}");
    let rank = dims.len();
    let params = comp.instrs.iter().filter(|i| matches!(i.op, Op::Parameter(_))).count();
    let extra = format!("q{params}");
    // Transposes get three chances in fifteen: their permutations are where conventions differ.
    let (comp, op, out, operands): (Comp, Op, Vec<i64>, Vec<String>) = match rng.below(15) {
        0 => (comp, Op::Elementwise("negate"), dims.to_vec(), vec![input.into()]),
        1 => (comp, Op::Elementwise("add"), dims.to_vec(), vec![input.into(), input.into()]),
        2 | 13 | 14 => {
            let p = rng.permutation(rank);
            let out = p.iter().map(|&d| dims[d]).collect();
            (comp, Op::Transpose(p), out, vec![input.into()])
        }
        3 => {
            let d: Vec<usize> = (0..rank).filter(|_| rng.below(2) == 0).collect();
            (comp, Op::Reverse(d), dims.to_vec(), vec![input.into()])
        }
        4 if rank < 3 => {
            let at = rng.below(rank + 1);
            let mut out = dims.to_vec();
            out.insert(at, rng.range(1, 3));
            let map = (0..rank).map(|d| if d < at { d } else { d + 1 }).collect();
            (comp, Op::Broadcast(map), out, vec![input.into()])
        }
        5 if rank > 0 => {
            let d: Vec<usize> = (0..rank).filter(|_| rng.below(2) == 0).collect();
            let out = (0..rank).filter(|k| !d.contains(k)).map(|k| dims[k]).collect();
            let comp = comp.param(&extra, f32s(&[]));
            (comp, Op::Reduce(d, "max"), out, vec![input.into(), extra])
        }
        6 => {
            let mut s = Vec::new();
            let mut out = Vec::new();
            for &size in dims {
                let start = rng.range(0, size);
                let limit = rng.range(start, size);
                let stride = rng.range(1, 3);
                s.push([start, limit, stride]);
                out.push((limit - start + stride - 1) / stride);
            }
            (comp, Op::Slice(s), out, vec![input.into()])
        }
        7 => {
            let mut p = Vec::new();
            let mut out = Vec::new();
            for &size in dims {
                let (mut low, mut high, interior) = (rng.range(-1, 2), rng.range(-1, 2), rng.range(0, 1));
                let body = if size == 0 { 0 } else { size + (size - 1) * interior };
                if body + low + high < 0 {
                    (low, high) = (0, 0);
                }
                p.push([low, high, interior]);
                out.push(body + low + high);
            }
            let comp = comp.param(&extra, f32s(&[]));
            (comp, Op::Pad(p), out, vec![input.into(), extra])
        }
        8 => {
            // Merge two neighbours, split a dimension, or flatten.
            let mut out = dims.to_vec();
            match rng.below(3) {
                0 if rank >= 2 => {
                    let at = rng.below(rank - 1);
                    let merged = out[at] * out[at + 1];
                    out.splice(at..at + 2, [merged]);
                }
                1 if rank > 0 && rank < 3 && dims.iter().any(|&s| s % 2 == 0 && s > 0) => {
                    let at = dims.iter().position(|&s| s % 2 == 0 && s > 0).expect("an even size");
                    out.splice(at..=at, [2, dims[at] / 2]);
                }
                _ => out = vec![dims.iter().product()],
            }
            (comp, Op::Reshape, out, vec![input.into()])
        }
        9 => {
            let out = if rng.below(2) == 0 { vec![dims.iter().product()] } else { dims.to_vec() };
            let layout = rng.permutation(out.len());
            let shape = laid_out(&out, &layout);
            let comp = comp.op(&name, shape, Op::Bitcast, &[input]);
            return (comp, name, out);
        }
        10 if rank > 0 => {
            let d = rng.below(rank);
            let mut other = dims.to_vec();
            other[d] = rng.range(1, 3);
            let mut out = dims.to_vec();
            out[d] += other[d];
            let comp = comp.param(&extra, f32s(&other));
            let operands =
                if rng.below(2) == 0 { vec![input.into(), extra] } else { vec![extra, input.into()] };
            (comp, Op::Concatenate(d), out, operands)
        }
        11 if rank > 0 => {
            let cols = rng.range(1, 3);
            let rhs = [dims[rank - 1], cols];
            let comp = comp.param(&extra, f32s(&rhs));
            let mut out = dims[..rank - 1].to_vec();
            out.push(cols);
            let op = Op::Dot {
                lhs_batch: vec![],
                rhs_batch: vec![],
                lhs_contracting: vec![rank - 1],
                rhs_contracting: vec![0],
            };
            (comp, op, out, vec![input.into(), extra])
        }
        12 => {
            let mut window = Vec::new();
            let mut out = Vec::new();
            for &size in dims {
                let w = Win {
                    size: rng.range(1, 3),
                    stride: rng.range(1, 2),
                    low: rng.range(0, 1),
                    high: rng.range(0, 1),
                    window_dilation: rng.range(1, 2),
                    base_dilation: rng.range(1, 2),
                };
                let padded = w.low + w.high + if size == 0 { 0 } else { (size - 1) * w.base_dilation + 1 };
                let span = (w.size - 1) * w.window_dilation + 1;
                out.push(if padded < span { 0 } else { (padded - span) / w.stride + 1 });
                window.push(w);
            }
            let comp = comp.param(&extra, f32s(&[]));
            (comp, Op::ReduceWindow(window, "max"), out, vec![input.into(), extra])
        }
        _ => (comp, Op::Elementwise("exponential"), dims.to_vec(), vec![input.into()]),
    };
    let refs: Vec<&str> = operands.iter().map(String::as_str).collect();
    (comp.op(&name, f32s(&out), op, &refs), name, out)
}

fn random_module(seed: u64) -> Module {
    let mut rng = Rng::new(seed);
    let rank = rng.below(3).max(1) + 1;
    let dims: Vec<i64> = (0..rank).map(|_| rng.range(1, 4)).collect();
    let fused = Comp::new("fused").param("q0", f32s(&dims));
    let (fused, first, dims) = random_op(&mut rng, fused, "q0", &dims, 1);
    let (fused, second, dims) = random_op(&mut rng, fused, &first, &dims, 2);
    let (fused, _, out) = random_op(&mut rng, fused, &second, &dims, 3);
    let mut entry = Comp::entry("main");
    let mut names = Vec::new();
    for instr in &fused.instrs {
        if matches!(instr.op, Op::Parameter(_)) {
            let name = format!("x{}", names.len());
            entry = entry.param(&name, instr.shape.clone());
            names.push(name);
        }
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let entry = entry.op("fusion", f32s(&out), Op::Fusion("fused"), &refs);
    Module::new(vec![reducer("max", 1), fused, entry])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_three_op_fusions_agree_with_the_oracle(seed in any::<u64>()) {
        let m = random_module(seed);
        check(&m, root(&m));
        check(&m, Subject::Instruction("fused", "op3"));
    }
}

// ---------------------------------------------------------------------------------------------
// Arguments, text output and bad input.

fn run_err(text: &str, args: &[&str]) -> String {
    let (code, stdout, stderr) = indexing(text, args);
    assert_eq!(
        code, 2,
        "should be refused with status 2: {args:?}\nstdout: {stdout}\nstderr: {stderr}\n{text}"
    );
    assert!(stdout.is_empty(), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr.trim_end().to_string()
}

#[test]
fn text_output() {
    let m = seed_pad();
    let (code, stdout, stderr) = indexing(&m.text(false), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "output-to-input maps of `pad` (pad) in computation `main`\n\n\
         output 0 `pad` [12, 16] -> operand 0 `p0` [4, 4]:\n  (d0, d1) -> (d0 floordiv 2, d1 - 4)\n  domain:\n  \
         d0 in [1, 7]\n  d1 in [4, 7]\n  d0 mod 2 in [1, 1]\n\n\
         output 0 `pad` [12, 16] -> operand 1 `p1` []:\n  (d0, d1) -> ()\n  domain:\n  d0 in [0, 11]\n  d1 in [0, 15]\n"
    );
    let (code, stdout, _) =
        indexing(&m.text(false), &["--direction", "in-to-out", "--operand", "p0", "--enumerate"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("input-to-output maps of `pad`"), "{stdout}");
    assert!(
        stdout.contains(
            "operand 0 `p0` [4, 4] -> output 0 `pad` [12, 16]:\n  (d0, d1) -> (d0 * 2 + 1, d1 + 4)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("  pairs (16):\n    (0, 0) -> (1, 4)\n"), "{stdout}");
    assert!(!stdout.contains("p1"), "{stdout}");
}

#[test]
fn reads_a_file_and_finds_instructions_in_any_computation() {
    let m = transposes();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("module.hlo");
    std::fs::write(&path, m.text(true)).expect("written");
    let file = path.to_str().expect("a UTF-8 path");
    let (code, stdout, stderr) =
        morello(&["indexing", file, "--instruction", "%rhs_transpose_1", "--json"], None);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(json[0]["from"]["name"], "rhs_transpose_1");
    assert_eq!(json[0]["to"]["name"], "p0");
    let (code, _, stderr) = morello(&["indexing", "/nonexistent/module.hlo"], None);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("error: cannot read /nonexistent/module.hlo"), "{stderr}");
}

#[test]
fn bad_arguments() {
    let m = transposes();
    let text = m.text(false);
    assert_eq!(run_err(&text, &["--instruction", "nope"]), "error: no instruction `nope` in the module");
    assert_eq!(
        run_err(&text, &["--computation", "nope"]),
        "error: no computation `nope` in the module; its computations are `fused`, `main`"
    );
    assert_eq!(
        run_err(&text, &["--operand", "3"]),
        "error: --operand 3: `fusion` has 1 operand (numbered from 0): 0 `x`"
    );
    assert_eq!(
        run_err(&text, &["--computation", "fused", "--operand", "q"]),
        "error: --operand q: no parameter of computation `fused` has that name; it has 0 `p0`"
    );
    let (code, _, stderr) = indexing(&text, &["--direction", "sideways"]);
    assert_eq!(code, 2, "{stderr}");
    let twice = Module::new(vec![
        Comp::new("a").param("p", f32s(&[2])).op("n", f32s(&[2]), Op::Elementwise("negate"), &["p"]),
        Comp::new("b").param("p", f32s(&[2])).op("n", f32s(&[2]), Op::Elementwise("negate"), &["p"]),
        Comp::entry("main").param("x", f32s(&[2])),
    ]);
    assert_eq!(
        run_err(&twice.text(false), &["--instruction", "n"]),
        "error: instruction `n` is defined in computations `a`, `b`; choose one with --computation"
    );
}

#[test]
fn enumeration_refuses_more_than_a_million_pairs() {
    let m =
        one_op(&[("p0", f32s(&[1001, 1000]))], "n", f32s(&[1001, 1000]), Op::Elementwise("negate"), &["p0"]);
    let message = run_err(&m.text(false), &["--json", "--enumerate"]);
    assert_eq!(
        message,
        "error: --enumerate: the map from output 0 `n` [1001, 1000] to operand 0 `p0` [1001, 1000] relates more than \
         1000000 pairs, the most it lists for one map (leave out --enumerate to see the map)"
    );
    // Without --enumerate the map is printed.
    let (code, stdout, _) = indexing(&m.text(false), &["--json"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("d0 in [0, 1000]"), "{stdout}");
    // Exactly a million pairs are listed.
    let m =
        one_op(&[("p0", f32s(&[1000, 1000]))], "n", f32s(&[1000, 1000]), Op::Elementwise("negate"), &["p0"]);
    let (code, stdout, stderr) = indexing(&m.text(false), &["--json", "--enumerate"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.lines().filter(|l| l.starts_with("      [[")).count(), 1_000_000);
}

#[test]
fn ops_without_maps_are_unknown_and_unread_operands_known_empty() {
    let text = "HloModule m\nENTRY main {\n  p0 = f32[4] parameter(0)\n  i = s32[2,1] parameter(1)\n  \
                ROOT g = f32[2] custom-call(p0, i), custom_call_target=\"lookup\"\n}";
    let (code, stdout, stderr) = indexing(text, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("output 0 `g` [2] -> operand 0 `p0` [4]:\n  unknown"), "{stdout}");
    let (code, stdout, _) = indexing(text, &["--json", "--enumerate"]);
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json[1]["map"], "unknown");
    assert!(json[1].get("pairs").is_none());
    let fused = "HloModule m\nf {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  \
                 ROOT n = f32[4] negate(a)\n}\nENTRY main {\n  x = f32[4] parameter(0)\n  y = f32[4] parameter(1)\n  \
                 ROOT fu = f32[4] fusion(x, y), kind=kLoop, calls=f\n}";
    let (code, stdout, _) = indexing(fused, &["--enumerate"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("-> operand 1 `y` [4]:\n  KNOWN EMPTY\n  pairs (0):"), "{stdout}");
}

#[test]
fn bad_modules_give_the_line_and_the_instruction() {
    let cases = [
        (
            "HloModule m\nENTRY main {\n  p0 = f32[2] parameter(0)\n  ROOT x = f32[2] negate(p0\n}",
            "error: invalid HLO module `-`: line 5, column 1, instruction `x` in computation `main`: expected `,` or `)` after an operand, found `}`",
        ),
        (
            "HloModule m\nENTRY main {\n  p0 = f32[2] parameter(0)\n  ROOT g = f32[2] gatherr(p0, p0)\n}",
            "error: invalid HLO module `-`: line 4, column 19, instruction `g` in computation `main`: unknown opcode `gatherr`: XLA has no such opcode",
        ),
        (
            "HloModule m\nENTRY main {\n  p0 = f32[2] parameter(0)\n  a = f32[2] add(p0, b)\n  ROOT b = f32[2] negate(p0)\n}",
            "error: invalid HLO module `-`: line 4, column 22, instruction `a` in computation `main`: operand `b` is used before it is defined (on line 5)",
        ),
        (
            "HloModule m\nENTRY main {\n  p0 = f32[2,3] parameter(0)\n  ROOT t = f32[3,2] transpose(p0), dimensions={1,1}\n}",
            "error: invalid HLO module `-`: line 4, column 47, instruction `t` in computation `main`: dimensions={1, 1} is not a permutation of 0..2",
        ),
        (
            "HloModule m\nENTRY main {\n  p0 = f32[10] parameter(0)\n  ROOT s = f32[3] slice(p0),\n    slice={[8:11:1]}\n}",
            "error: invalid HLO module `-`: line 5, column 11, instruction `s` in computation `main`: slice [8:11] of dimension 0 is outside [0, 10]",
        ),
        (
            "HloModule m\nENTRY main {\n  a = f32[2,3] parameter(0)\n  b = f32[4,5] parameter(1)\n  \
             ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
            "error: invalid HLO module `-`: line 5, column 8, instruction `d` in computation `main`: contracting dimension 1 of the lhs has size 3 but contracting dimension 0 of the rhs has size 4",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(run_err(text, &[]), expected, "\n{text}");
    }
}

/// A rank-0 `pad` prints as `padding=` at the end of its line; the next line is not its value.
#[test]
fn a_rank_0_pad_in_a_fusion() {
    let fused = Comp::new("fused")
        .param("q0", f32s(&[3]))
        .param("q1", f32s(&[]))
        .op("op1", f32s(&[]), Op::Reduce(vec![0], "max"), &["q0", "q1"])
        .param("q2", f32s(&[]))
        .op("op2", f32s(&[]), Op::Pad(vec![]), &["op1", "q2"])
        .op("op3", f32s(&[]), Op::Elementwise("negate"), &["op2"]);
    let entry = Comp::entry("main").param("x0", f32s(&[3])).param("x1", f32s(&[])).param("x2", f32s(&[]));
    let entry = entry.op("fusion", f32s(&[]), Op::Fusion("fused"), &["x0", "x1", "x2"]);
    let m = Module::new(vec![reducer("max", 1), fused, entry]);
    assert!(m.text(false).contains("padding=\n"), "{}", m.text(false));
    check(&m, root(&m));
    check(&m, Subject::Instruction("fused", "op3"));
}

#[test]
fn gather_maps_as_xla_gives_them() {
    // XLA's GatherOp test (indexing_analysis_test.cc), as a user would ask it.
    let text = "HloModule m\nENTRY main {\n  operand = f32[33,76,70] parameter(0)\n  indices = s32[1806,2] parameter(1)\n  \
                ROOT r = f32[1806,7,8,4] gather(operand, indices), offset_dims={1,2,3}, collapsed_slice_dims={}, \
                start_index_map={0,1}, index_vector_dim=1, slice_sizes={7,8,4}\n}";
    let (code, stdout, stderr) = indexing(text, &["--json"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        json[0]["map"],
        "(d0, d1, d2, d3)[s0, s1] -> (d1 + s0, d2 + s1, d3), domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], \
         d3 in [0, 3], s0 in [0, 26], s1 in [0, 68]"
    );
    assert_eq!(
        json[1]["map"],
        "(d0, d1, d2, d3)[s0] -> (d0, s0), domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3], \
         s0 in [0, 1]"
    );
    // XLA has no input-to-output map of a gather, and morello says so.
    let (code, stdout, _) = indexing(text, &["--direction", "in-to-out", "--operand", "0"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("unknown"), "{stdout}");
}

#[test]
fn physical_maps_as_xla_gives_them() {
    // XLA's PhysicalLayoutTestOutputPermutation (indexing_analysis_test.cc).
    let text = "HloModule m\nENTRY e {\n  p0 = f32[10, 20, 30] parameter(0)\n  \
                ROOT add0 = f32[10, 20, 30]{1, 0, 2} exponential(p0)\n}";
    let (code, stdout, stderr) = indexing(text, &["--physical"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("physical output-to-input maps of `add0`"), "{stdout}");
    assert!(
        stdout.contains(
            "output 0 `add0` [30, 10, 20] -> operand 0 `p0` [10, 20, 30]:\n  (d0, d1, d2) -> (d1, d2, d0)\n  domain:\n  \
             d0 in [0, 29]\n  d1 in [0, 9]\n  d2 in [0, 19]"
        ),
        "{stdout}"
    );
    let (code, stdout, _) = indexing(text, &["--physical", "--direction", "in-to-out", "--json"]);
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        json[0]["map"],
        "(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]"
    );
    assert_eq!(json[0]["to"]["shape"], serde_json::json!([30, 10, 20]));
    assert_eq!(
        run_err(text, &["--physical", "--computation", "e"]),
        "error: --physical needs one instruction: add --instruction NAME"
    );
}

/// A chain of 10,000 nested fusions gets its maps (it overflowed the stack: status 134).
#[test]
fn deeply_nested_fusions_get_their_maps() {
    let depth = 10_000;
    let mut text = String::from("HloModule deep\n\n");
    text += &format!(
        "c{depth} {{\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] reverse(p), dimensions={{0}}\n}}\n\n"
    );
    for level in (1..depth).rev() {
        text += &format!(
            "c{level} {{\n  p = f32[4] parameter(0)\n  ROOT f = f32[4] fusion(p), kind=kLoop, calls=c{}\n}}\n\n",
            level + 1
        );
    }
    text += "ENTRY main {\n  p = f32[4] parameter(0)\n  ROOT f = f32[4] fusion(p), kind=kLoop, calls=c1\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.hlo");
    std::fs::write(&path, text).unwrap();
    let (code, stdout, stderr) = common::morello(&["indexing", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("(d0) -> (-d0 + 3)"), "{stdout}");
}
