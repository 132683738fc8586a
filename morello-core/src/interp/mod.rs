//! The reference interpreter: executes specs and implementation trees on concrete buffers.
//!
//! It is the oracle of the search's tests (an `Impl` must compute what its spec says) and of the
//! verification of emitted C. Buffers hold each tensor's elements at the offsets its layout gives.
//! Executing an `Impl` walks the tree: loops run their bodies on tiles (views with an origin),
//! allocs create new buffers (poisoned, so reading what was never written shows up), kernels
//! execute their spec: its operator's semantics (`crate::operators`, each operator's file) on views
//! of the buffers. With [`Interpreter::check_layouts`] on, every node also checks that its
//! spec's operand layouts and contiguity describe the actual views (the search's claims about
//! tiles must be true, or the emitted code would be wrong).

pub(crate) mod values;

use crate::dtype::Dtype;
use crate::imp::{AllocKind, Impl, Node};
use crate::layout::{Layout, LayoutIndexer, LayoutView};
use crate::operators::{Operands, OperandsMut};
use crate::shape::Shape;
use crate::spec::{Axis, LogicalSpec, PrimitiveKind, TensorSpec, matmul_axes};
use crate::target::{LevelKind, Target};

pub use crate::operators::fill_value;
pub use values::{Value, convert, mul_add, round_bf16, wrap};

/// Why an execution failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InterpError {
    /// The tree still has an unsolved spec (a caller error: only complete trees execute).
    #[error("the implementation has an unsolved spec: {0}")]
    Unsolved(String),
    /// A buffer does not match its operand (a caller error).
    #[error("operand {operand}: {message}")]
    BadBuffer {
        /// Which operand.
        operand: usize,
        /// What is wrong.
        message: String,
    },
    /// A node's spec claims a layout or contiguity its actual data does not have (a bug in the
    /// rewrite that built the tree).
    #[error("{node} claims operand {operand} is `{claimed}`, but the data is `{actual}`")]
    LayoutMismatch {
        /// The node.
        node: String,
        /// Which operand.
        operand: usize,
        /// What the spec says.
        claimed: String,
        /// What the data is.
        actual: String,
    },
}

/// A tensor's buffer: its elements at the offsets its layout gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Buffer {
    /// The element type.
    pub dtype: Dtype,
    /// The elements, by buffer offset.
    pub values: Vec<Value>,
}

impl Buffer {
    /// A buffer for `tensor` holding `logical` (its elements in row-major order of the logical
    /// index), placed by the tensor's layout.
    ///
    /// # Errors
    /// [`InterpError::BadBuffer`] if the value count is wrong or the layout does not fit.
    pub fn from_logical(tensor: &TensorSpec, logical: &[Value]) -> Result<Buffer, InterpError> {
        let bad = |message: String| InterpError::BadBuffer { operand: 0, message };
        if logical.len() as u64 != tensor.shape.volume() {
            return Err(bad(format!("{} values for shape {}", logical.len(), tensor.shape)));
        }
        let indexer = tensor.layout.indexer(&tensor.shape).map_err(|e| bad(e.to_string()))?;
        let mut values = vec![poison(tensor.dtype); logical.len()];
        for (point, value) in tensor.shape.points().zip(logical) {
            values[indexer.offset(&point) as usize] = *value;
        }
        Ok(Buffer { dtype: tensor.dtype, values })
    }

    /// The elements in row-major order of the logical index.
    ///
    /// # Errors
    /// [`InterpError::BadBuffer`] if the layout does not fit.
    pub fn to_logical(&self, tensor: &TensorSpec) -> Result<Vec<Value>, InterpError> {
        let indexer = tensor
            .layout
            .indexer(&tensor.shape)
            .map_err(|e| InterpError::BadBuffer { operand: 0, message: e.to_string() })?;
        Ok(tensor.shape.points().map(|p| self.values[indexer.offset(&p) as usize]).collect())
    }
}

/// The value a new buffer starts with: NaN for floats, a recognisable pattern for integers.
fn poison(dtype: Dtype) -> Value {
    if dtype.is_float() { Value::Float(f32::NAN) } else { Value::Int(wrap(0x5a5a_5a5a, dtype)) }
}

/// A buffer with its full shape and layout.
struct Stored {
    buffer: Buffer,
    shape: Shape,
    layout: Layout,
    indexer: LayoutIndexer,
}

/// A window of a stored buffer: point `p` of the view is the buffer's point `origin` plus, for
/// each view dim `i` with an axis, `scale * p_i` along the axis' dim (plain views: dim `i`, step 1).
#[derive(Debug, Clone)]
struct View {
    buffer: usize,
    origin: Vec<u32>,
    axes: Vec<Option<Axis>>,
}

impl View {
    fn plain(buffer: usize, rank: usize) -> View {
        View {
            buffer,
            origin: vec![0; rank],
            axes: (0..rank).map(|dim| Some(Axis { dim, scale: 1 })).collect(),
        }
    }

    fn is_plain(&self) -> bool {
        self.axes.len() == self.origin.len()
            && self.axes.iter().enumerate().all(|(i, a)| *a == Some(Axis { dim: i, scale: 1 }))
    }

    /// The buffer point of a view point.
    fn global(&self, point: &[u32]) -> Vec<u32> {
        let mut global = self.origin.clone();
        for (axis, &p) in self.axes.iter().zip(point) {
            if let Some(a) = axis {
                global[a.dim] += a.scale * p;
            }
        }
        global
    }

    /// The view moved by `offset` (per view dim).
    fn shifted(&self, offset: &[u32]) -> View {
        View { buffer: self.buffer, origin: self.global(offset), axes: self.axes.clone() }
    }

    /// The view through `axes` (per dim of the new view, the dim of this view it reads).
    fn through(&self, axes: &[Option<Axis>]) -> View {
        let axes = axes
            .iter()
            .map(|a| a.and_then(|a| self.axes[a.dim].map(|b| Axis { dim: b.dim, scale: b.scale * a.scale })))
            .collect();
        View { buffer: self.buffer, origin: self.origin.clone(), axes }
    }
}

/// Executes specs and implementations.
#[derive(Debug, Clone, Copy)]
pub struct Interpreter<'a> {
    /// The target whose levels the specs name.
    pub target: &'a Target,
    /// Whether to check every node's claimed operand layouts against the data.
    pub check_layouts: bool,
}

impl<'a> Interpreter<'a> {
    /// An interpreter that checks layouts.
    pub fn new(target: &'a Target) -> Self {
        Interpreter { target, check_layouts: true }
    }

    /// Executes `spec` directly on `operands` (one dense buffer per operand, in its layout).
    ///
    /// # Errors
    /// [`InterpError::BadBuffer`] if a buffer does not fit its operand.
    pub fn execute_spec(&self, spec: &LogicalSpec, operands: &mut [Buffer]) -> Result<(), InterpError> {
        let (mut arena, views) = self.arena(spec, operands)?;
        run_spec(spec, &views, &mut arena);
        give_back(arena, operands);
        Ok(())
    }

    /// Executes an implementation on `operands` (one dense buffer per operand of its spec).
    ///
    /// # Errors
    /// [`InterpError`] if a buffer does not fit, the tree is incomplete, or a node's layouts lie.
    pub fn execute_impl(&self, imp: &Impl, operands: &mut [Buffer]) -> Result<(), InterpError> {
        let (mut arena, views) = self.arena(&imp.spec, operands)?;
        let result = self.run_impl(imp, &views, &mut arena);
        give_back(arena, operands);
        result
    }

    fn arena(
        &self,
        spec: &LogicalSpec,
        operands: &mut [Buffer],
    ) -> Result<(Vec<Stored>, Vec<View>), InterpError> {
        if operands.len() != spec.operands.len() {
            return Err(InterpError::BadBuffer {
                operand: operands.len(),
                message: format!("{} buffers for {} operands", operands.len(), spec.operands.len()),
            });
        }
        let mut arena = Vec::new();
        let mut views = Vec::new();
        for (i, (tensor, buffer)) in spec.operands.iter().zip(operands.iter_mut()).enumerate() {
            let bad = |message: String| InterpError::BadBuffer { operand: i, message };
            if !tensor.is_fully_contiguous() {
                return Err(bad("top-level operands must be whole, contiguous tensors".into()));
            }
            if buffer.values.len() as u64 != tensor.shape.volume() || buffer.dtype != tensor.dtype {
                return Err(bad(format!(
                    "expected {} {} values, found {} {}",
                    tensor.shape.volume(),
                    tensor.dtype,
                    buffer.values.len(),
                    buffer.dtype
                )));
            }
            let indexer = tensor.layout.indexer(&tensor.shape).map_err(|e| bad(e.to_string()))?;
            arena.push(Stored {
                buffer: std::mem::replace(buffer, Buffer { dtype: tensor.dtype, values: Vec::new() }),
                shape: tensor.shape.clone(),
                layout: tensor.layout.clone(),
                indexer,
            });
            views.push(View::plain(i, tensor.shape.rank()));
        }
        Ok((arena, views))
    }

    fn run_impl(&self, imp: &Impl, views: &[View], arena: &mut Vec<Stored>) -> Result<(), InterpError> {
        if self.check_layouts {
            self.check(imp, views, arena)?;
        }
        let spec = &imp.spec;
        match &imp.node {
            Node::Kernel(_) => {
                run_spec(spec, views, arena);
                Ok(())
            }
            Node::SpecApp { .. } => Err(InterpError::Unsolved(spec.display(self.target).to_string())),
            Node::Loop { tile, body, boundaries, .. } => {
                let steps: Vec<u32> = spec.shape.dims().iter().zip(tile).map(|(&n, &t)| n / t).collect();
                let grid = Shape::new(steps).expect("a loop has at least one full tile per dim");
                for index in grid.points() {
                    let origin: Vec<u32> = index.iter().zip(tile).map(|(&i, &t)| i * t).collect();
                    self.run_impl(body, &offset_views(spec.kind, views, &origin), arena)?;
                }
                for boundary in boundaries {
                    self.run_impl(&boundary.body, &offset_views(spec.kind, views, &boundary.origin), arena)?;
                }
                Ok(())
            }
            Node::Alloc { operand, kind, destination, prologue, body, epilogue } => {
                if *kind == AllocKind::CacheView {
                    return self.run_impl(body, views, arena);
                }
                let indexer = destination
                    .layout
                    .indexer(&destination.shape)
                    .map_err(|e| InterpError::BadBuffer { operand: *operand, message: e.to_string() })?;
                arena.push(Stored {
                    buffer: Buffer {
                        dtype: destination.dtype,
                        values: vec![poison(destination.dtype); destination.shape.volume() as usize],
                    },
                    shape: destination.shape.clone(),
                    layout: destination.layout.clone(),
                    indexer,
                });
                let new = View::plain(arena.len() - 1, destination.shape.rank());
                let old = views[*operand].clone();
                if let Some(p) = prologue {
                    self.run_impl(p, &[old.clone(), new.clone()], arena)?;
                }
                let mut inner = views.to_vec();
                inner[*operand] = new.clone();
                self.run_impl(body, &inner, arena)?;
                if let Some(e) = epilogue {
                    self.run_impl(e, &[new, old], arena)?;
                }
                arena.pop();
                Ok(())
            }
            Node::Block { stages, temporaries } => {
                let mut views = views.to_vec();
                for (j, t) in temporaries.iter().enumerate() {
                    let indexer = t.layout.indexer(&t.shape).map_err(|e| InterpError::BadBuffer {
                        operand: spec.operands.len() + j,
                        message: e.to_string(),
                    })?;
                    arena.push(Stored {
                        buffer: Buffer {
                            dtype: t.dtype,
                            values: vec![poison(t.dtype); t.shape.volume() as usize],
                        },
                        shape: t.shape.clone(),
                        layout: t.layout.clone(),
                        indexer,
                    });
                    views.push(View::plain(arena.len() - 1, t.shape.rank()));
                }
                for stage in stages {
                    let stage_views: Vec<View> = stage
                        .operands
                        .iter()
                        .enumerate()
                        .map(|(k, &i)| match &stage.origins {
                            Some(origins) => views[i].shifted(&origins[k]),
                            None => views[i].clone(),
                        })
                        .collect();
                    self.run_impl(&stage.body, &stage_views, arena)?;
                }
                for _ in temporaries {
                    arena.pop();
                }
                Ok(())
            }
            Node::AsMatmul { body } => {
                let Some(geometry) = spec.kind.conv_geometry() else {
                    return Err(InterpError::Unsolved(format!(
                        "{} is not a convolution to compute as a matmul",
                        spec.display(self.target)
                    )));
                };
                let inner: Vec<View> =
                    views.iter().zip(matmul_axes(&geometry)).map(|(v, axes)| v.through(&axes)).collect();
                self.run_impl(body, &inner, arena)
            }
        }
    }

    /// Checks that each operand's claimed layout and contiguity describe its view.
    fn check(&self, imp: &Impl, views: &[View], arena: &[Stored]) -> Result<(), InterpError> {
        for (i, (tensor, view)) in imp.spec.operands.iter().zip(views).enumerate() {
            if self.target.level(tensor.level).kind == LevelKind::ScalarRegisters {
                continue;
            }
            let stored = &arena[view.buffer];
            let mismatch = |actual: String| InterpError::LayoutMismatch {
                node: imp.describe(self.target),
                operand: i,
                claimed: tensor.display(self.target).to_string(),
                actual,
            };
            if !view.is_plain() {
                check_runs(tensor, view, stored).map_err(mismatch)?;
                continue;
            }
            let actual = LayoutView::dense(&stored.layout, &stored.shape)
                .and_then(|dense| dense.tile_at(&stored.shape, &tensor.shape, &view.origin))
                .map_err(|e| mismatch(format!("not a box of its buffer: {e}")))?;
            if actual.layout != tensor.layout || actual.contiguous_dims < tensor.contiguous_dims {
                return Err(mismatch(format!("{} c{}", actual.layout, actual.contiguous_dims)));
            }
            // Kernels use vector registers whole: a register operand must start on a register.
            if let (Node::Kernel(_), Some(lanes)) = (&imp.node, tensor.vector_size) {
                let start = stored.indexer.offset(&view.origin);
                if start % u64::from(lanes) != 0 {
                    return Err(mismatch(format!(
                        "a view starting at lane {start}, inside a register of {lanes}"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// For a view that is not a box of its buffer (a strided or relabelled one): the claimed
/// contiguous run, the innermost `contiguous_dims` physical dims of the claimed layout, must be
/// consecutive buffer offsets, checked point by point.
fn check_runs(tensor: &TensorSpec, view: &View, stored: &Stored) -> Result<(), String> {
    let claimed = tensor.layout.indexer(&tensor.shape).map_err(|e| e.to_string())?;
    let sizes = tensor.layout.physical_sizes(&tensor.shape).map_err(|e| e.to_string())?;
    let c = usize::from(tensor.contiguous_dims).min(sizes.len());
    let run: u64 = sizes[sizes.len() - c..].iter().product();
    let mut actual = vec![0u64; tensor.shape.volume() as usize];
    for point in tensor.shape.points() {
        actual[claimed.offset(&point) as usize] = stored.indexer.offset(&view.global(&point));
    }
    for (dense, pair) in actual.windows(2).enumerate() {
        if (dense as u64 + 1) % run != 0 && pair[1] != pair[0] + 1 {
            return Err(format!("offsets {} and {} in a run the spec claims contiguous", pair[0], pair[1]));
        }
    }
    Ok(())
}

fn give_back(arena: Vec<Stored>, operands: &mut [Buffer]) {
    for (slot, stored) in operands.iter_mut().zip(arena) {
        *slot = stored.buffer;
    }
}

fn offset_views(kind: PrimitiveKind, views: &[View], origin: &[u32]) -> Vec<View> {
    kind.operand_origins(origin).into_iter().zip(views).map(|(o, v)| v.shifted(&o)).collect()
}

fn read(arena: &[Stored], view: &View, point: &[u32]) -> Value {
    let stored = &arena[view.buffer];
    stored.buffer.values[stored.indexer.offset(&view.global(point)) as usize]
}

fn write(arena: &mut [Stored], view: &View, point: &[u32], value: Value) {
    let stored = &mut arena[view.buffer];
    let offset = stored.indexer.offset(&view.global(point)) as usize;
    stored.buffer.values[offset] = value;
}

/// A spec's operands as views of the arena, for its operator's semantics.
struct SpecOperands<'a> {
    spec: &'a LogicalSpec,
    views: &'a [View],
    arena: &'a mut [Stored],
}

impl Operands for SpecOperands<'_> {
    fn spec(&self) -> &LogicalSpec {
        self.spec
    }

    fn read(&self, operand: usize, point: &[u32]) -> Value {
        read(self.arena, &self.views[operand], point)
    }
}

impl OperandsMut for SpecOperands<'_> {
    fn write(&mut self, operand: usize, point: &[u32], value: Value) {
        write(self.arena, &self.views[operand], point, value);
    }
}

/// Executes a spec's semantics (its operator's, `crate::operators`) on views.
fn run_spec(spec: &LogicalSpec, views: &[View], arena: &mut [Stored]) {
    spec.kind.execute(&spec.shape, &mut SpecOperands { spec, views, arena });
}
