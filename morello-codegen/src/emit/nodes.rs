//! Lowering of the tree's nodes: loops, allocations, blocks, and the dispatch to kernels.
//!
//! ```text
//! Loop    for each iteration dim, in order (slowest first), with s = size / tile steps:
//!           s == 1                         no loop, origin 0
//!           a register operand spans it    unrolled: the inner nest once per step, origin i * tile
//!           otherwise                      for (int64_t x = 0; x < s; x++), origin x * tile
//!         so register indices are always constants; a parallel loop (no register operand)
//!         puts `#pragma omp parallel for [collapse(n)]` on its nest, and a loop over more than
//!         4 steps of a register block `#pragma GCC unroll 4` on its own. Then each boundary
//!         body once at its origin.
//! Alloc   { declare the buffer; prologue(old -> new); body on new; epilogue(new -> old); free }
//!         a cache view: the body on the same view
//! Block   the stages in order, each on its operands of the parent
//! ```
//!
//! Operand views move with the iteration origin exactly as in the reference interpreter: an
//! operand dim `i` (or a sliding `i + j`) starts at `origin_i (+ origin_j)`.

use morello_core::cost::register_block::is_register_block;
use morello_core::expr::{IndexExpr, Interval, Var};
use morello_core::imp::{AllocKind, Boundary, Impl, Node, Parallelism};
use morello_core::kernels::KernelKind;
use morello_core::spec::{PrimitiveKind, TensorSpec, matmul_axes};
use morello_core::target::LevelKind;

use super::buffers::{BufferInfo, Storage, View};
use super::vector::{VectorIsa, VectorType};
use super::{BUFFER_ALIGNMENT, Emitter, STACK_LIMIT_BYTES, c_type};
use crate::error::CodegenError;

/// Names per declaration line of registers.
const NAMES_PER_LINE: usize = 8;

/// How many steps of a register block the compiler is asked to unroll (`#pragma GCC unroll`, which
/// gcc and clang both read): a loop over `k` whose body is one step, a row of the vector side
/// loaded and the scalar side broadcast into the block's accumulators. gcc 12 leaves such a loop
/// rolled; unrolled by 4, as libxsmm's generated kernels are, a 6 x 64 f32 block streaming
/// unpacked `rhs` rows from L2 runs 5-10% faster at 512^3 (Intel Xeon, AVX-512), and a block
/// whose panel is packed in L1 as fast either way (`docs/codegen.md`, "Nodes").
const REGISTER_STEP_UNROLL: u32 = 4;

fn arithmetic(e: morello_core::expr::ExprError) -> CodegenError {
    CodegenError::Internal { reason: format!("index arithmetic: {e}") }
}

/// A loop's shape, shared by the levels of its nest.
struct LoopNest<'i> {
    kind: PrimitiveKind,
    tile: &'i [u32],
    steps: Vec<u32>,
    unroll: Vec<bool>,
    dim_names: Vec<String>,
    body: &'i Impl,
}

impl Emitter<'_> {
    /// Emits a node on its operand views.
    pub(crate) fn node(&mut self, imp: &Impl, views: &[View]) -> Result<(), CodegenError> {
        match &imp.node {
            Node::Loop { tile, parallelism, body, boundaries } => {
                self.loop_node(imp, views, tile, *parallelism, body, boundaries)
            }
            Node::Alloc { operand, kind, destination, prologue, body, epilogue } => match kind {
                AllocKind::CacheView => self.node(body, views),
                AllocKind::Buffer => self.alloc(
                    views,
                    *operand,
                    destination,
                    [prologue.as_deref(), Some(body.as_ref()), epilogue.as_deref()],
                ),
            },
            Node::Block { stages, temporaries } => {
                let scoped = !temporaries.is_empty();
                if scoped {
                    self.out.open("{");
                }
                let mut views = views.to_vec();
                let mut heaps = Vec::new();
                for t in temporaries {
                    let (view, heap) = self.declare_buffer(t)?;
                    views.push(view);
                    heaps.extend(heap);
                }
                for stage in stages {
                    let mut stage_views = Vec::with_capacity(stage.operands.len());
                    for (k, &i) in stage.operands.iter().enumerate() {
                        stage_views.push(match &stage.origins {
                            Some(origins) => {
                                let offset: Vec<IndexExpr> =
                                    origins[k].iter().map(|&o| IndexExpr::constant(i64::from(o))).collect();
                                views[i].shifted(&offset).map_err(arithmetic)?
                            }
                            None => views[i].clone(),
                        });
                    }
                    self.node(&stage.body, &stage_views)?;
                }
                for name in heaps {
                    self.out.line(format!("free({name});"));
                }
                if scoped {
                    self.out.close();
                }
                Ok(())
            }
            Node::AsMatmul { body } => {
                let geometry = imp.spec.kind.conv_geometry().ok_or_else(|| CodegenError::Internal {
                    reason: "a matmul view of a spec that is not a convolution".into(),
                })?;
                let inner: Vec<View> =
                    views.iter().zip(matmul_axes(&geometry)).map(|(v, axes)| v.through(&axes)).collect();
                self.node(body, &inner)
            }
            Node::Kernel(kernel) => self.kernel(*kernel, imp, views),
            Node::SpecApp { .. } => {
                Err(CodegenError::Unsolved { spec: imp.spec.display(self.target).to_string() })
            }
        }
    }

    fn loop_node(
        &mut self,
        imp: &Impl,
        views: &[View],
        tile: &[u32],
        parallelism: Parallelism,
        body: &Impl,
        boundaries: &[Boundary],
    ) -> Result<(), CodegenError> {
        let spec = &imp.spec;
        let rank = spec.shape.rank();
        let steps: Vec<u32> = spec.shape.dims().iter().zip(tile).map(|(&n, &t)| n / t).collect();
        let mut unroll = vec![false; rank];
        for (operand, dims) in spec.operands.iter().zip(spec.kind.operand_dims(rank)) {
            if self.level_kind(operand).counts_registers() {
                for d in dims {
                    unroll[d.first] = true;
                    if let Some(second) = d.second {
                        unroll[second] = true;
                    }
                }
            }
        }
        let rolled = (0..rank).filter(|&d| steps[d] > 1 && !unroll[d]).count();
        let unrolled = (0..rank).any(|d| steps[d] > 1 && unroll[d]);
        if parallelism == Parallelism::Parallel && rolled > 0 && !unrolled {
            self.parallel = true;
            let collapse = if rolled > 1 { format!(" collapse({rolled})") } else { String::new() };
            self.out.line(format!("#pragma omp parallel for{collapse} schedule(static)"));
        }
        let nest =
            LoopNest { kind: spec.kind, tile, steps, unroll, dim_names: spec.kind.dim_names(rank), body };
        let mut origin = vec![IndexExpr::constant(0); rank];
        self.nest(&nest, views, 0, &mut origin)?;
        for boundary in boundaries {
            let origin: Vec<IndexExpr> =
                boundary.origin.iter().map(|&o| IndexExpr::constant(i64::from(o))).collect();
            let inner = offset_views(spec.kind, views, &origin)?;
            self.node(&boundary.body, &inner)?;
        }
        Ok(())
    }

    fn nest(
        &mut self,
        nest: &LoopNest<'_>,
        views: &[View],
        dim: usize,
        origin: &mut Vec<IndexExpr>,
    ) -> Result<(), CodegenError> {
        if dim == origin.len() {
            let inner = offset_views(nest.kind, views, origin)?;
            return self.node(nest.body, &inner);
        }
        let (steps, tile) = (nest.steps[dim], i64::from(nest.tile[dim]));
        if steps == 1 {
            origin[dim] = IndexExpr::constant(0);
            return self.nest(nest, views, dim + 1, origin);
        }
        if nest.unroll[dim] {
            for i in 0..i64::from(steps) {
                origin[dim] = IndexExpr::constant(i * tile);
                self.nest(nest, views, dim + 1, origin)?;
            }
            return Ok(());
        }
        let symbol = u32::try_from(self.loop_names.len())
            .map_err(|_| CodegenError::Internal { reason: "more loop variables than fit in a u32".into() })?;
        let name = format!("{}_{}", nest.dim_names[dim], self.fresh());
        self.loop_names.push(name.clone());
        self.env.set(Var::Symbol(symbol), Interval::new(0, i64::from(steps) - 1));
        origin[dim] = IndexExpr::symbol(symbol).mul(tile).map_err(arithmetic)?;
        if steps > REGISTER_STEP_UNROLL && self.steps_a_register_block(nest, dim) {
            self.out.line(format!("#pragma GCC unroll {REGISTER_STEP_UNROLL}"));
        }
        self.out.open(format!("for (int64_t {name} = 0; {name} < {steps}; {name}++) {{"));
        self.nest(nest, views, dim + 1, origin)?;
        self.out.close();
        Ok(())
    }

    /// Whether dimension `dim` of `nest` walks the `k` of a register block one step at a time: its
    /// body is a register block ([`is_register_block`]) of one `k`, loading a row of one input and
    /// broadcasting the other.
    fn steps_a_register_block(&self, nest: &LoopNest<'_>, dim: usize) -> bool {
        let spec = &nest.body.spec;
        dim == 2 && spec.shape.dims().get(2) == Some(&1) && is_register_block(spec, self.target)
    }

    fn alloc(
        &mut self,
        views: &[View],
        operand: usize,
        destination: &TensorSpec,
        [prologue, body, epilogue]: [Option<&Impl>; 3],
    ) -> Result<(), CodegenError> {
        self.out.open("{");
        let (new, heap) = self.declare_buffer(destination)?;
        let old = views[operand].clone();
        if let Some(p) = prologue {
            self.node(p, &[old.clone(), new.clone()])?;
        }
        if let Some(b) = body {
            let mut inner = views.to_vec();
            inner[operand] = new.clone();
            self.node(b, &inner)?;
        }
        if let Some(e) = epilogue {
            self.node(e, &[new, old])?;
        }
        if let Some(name) = heap {
            self.out.line(format!("free({name});"));
        }
        self.out.close();
        Ok(())
    }

    /// Declares a buffer for `destination` (registers, a stack array, or a heap array whose name is
    /// returned to free) and returns the view of all of it.
    fn declare_buffer(&mut self, destination: &TensorSpec) -> Result<(View, Option<String>), CodegenError> {
        let id = self.fresh();
        let dtype = destination.dtype;
        let volume = destination.shape.volume();
        let c_name = c_type(dtype).c_name();
        let mut heap = None;
        let storage = match self.level_kind(destination) {
            LevelKind::VectorRegisters => {
                let lanes = destination.vector_size.ok_or_else(|| CodegenError::Internal {
                    reason: "a tensor in vector registers without a vector size".into(),
                })?;
                let vector = VectorType::new(VectorIsa::of(self.target), dtype, lanes)?;
                if let Some(feature) = vector.feature() {
                    self.require(feature, &format!("{}-byte vector registers", lanes * dtype.size_bytes()))?;
                }
                let prefix = format!("v{id}");
                self.declare(vector.c_type(), &prefix, volume / u64::from(lanes));
                Storage::Vectors { prefix, vector }
            }
            LevelKind::ScalarRegisters => {
                let prefix = format!("r{id}");
                self.declare(c_name, &prefix, volume);
                Storage::Scalars { prefix }
            }
            LevelKind::Cache | LevelKind::Memory => {
                let name = format!("buf{id}");
                let bytes = volume * u64::from(dtype.size_bytes());
                if bytes <= STACK_LIMIT_BYTES {
                    self.out.line(format!(
                        "{c_name} {name}[{volume}] __attribute__((aligned({BUFFER_ALIGNMENT})));"
                    ));
                } else {
                    let rounded = bytes.div_ceil(BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT;
                    self.out
                        .line(format!("{c_name} *{name} = aligned_alloc({BUFFER_ALIGNMENT}, {rounded}u);"));
                    self.out.line(format!("if ({name} == NULL) abort();"));
                    heap = Some(name.clone());
                }
                Storage::Memory { name }
            }
        };
        let view = self.add_buffer(BufferInfo::new(storage, &destination.shape, &destination.layout)?);
        Ok((view, heap))
    }

    /// Declares `count` variables `<prefix>_<j>` of a C type, a few per line.
    fn declare(&mut self, c_type: &str, prefix: &str, count: u64) {
        let names: Vec<String> = (0..count).map(|j| format!("{prefix}_{j}")).collect();
        for chunk in names.chunks(NAMES_PER_LINE) {
            self.out.line(format!("{c_type} {};", chunk.join(", ")));
        }
    }

    fn kernel(&mut self, kernel: KernelKind, imp: &Impl, views: &[View]) -> Result<(), CodegenError> {
        self.kernel_on(kernel, &imp.spec, views)
    }

    /// A kernel applied to `spec` on the operand views: its emitter, after checking that the
    /// target offers it and has the instructions it requires.
    pub(super) fn kernel_on(
        &mut self,
        kernel: KernelKind,
        spec: &morello_core::spec::LogicalSpec,
        views: &[View],
    ) -> Result<(), CodegenError> {
        if !self.target.kernels().contains(&kernel) {
            return Err(CodegenError::KernelUnavailable {
                kernel: kernel.name().to_string(),
                target: self.target.name().to_string(),
            });
        }
        for &feature in kernel.required_isa() {
            self.require(feature, kernel.name())?;
        }
        super::kernels::emit(self, kernel, spec, views)
    }
}

/// The operands' views for an iteration box starting at `origin` (relative to `views`).
fn offset_views(
    kind: PrimitiveKind,
    views: &[View],
    origin: &[IndexExpr],
) -> Result<Vec<View>, CodegenError> {
    kind.operand_dims(origin.len())
        .iter()
        .zip(views)
        .map(|(dims, view)| {
            let offset = dims
                .iter()
                .map(|d| {
                    let mut o = origin[d.first].mul(i64::from(d.scale))?;
                    if let Some(second) = d.second {
                        o = o.add(&origin[second].mul(i64::from(d.second_scale))?)?;
                    }
                    Ok(o)
                })
                .collect::<Result<Vec<_>, morello_core::expr::ExprError>>()
                .map_err(arithmetic)?;
            view.shifted(&offset).map_err(arithmetic)
        })
        .collect()
}
