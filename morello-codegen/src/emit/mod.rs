//! The emitter: an implementation tree ([`Impl`]) to a self-contained C translation unit.
//!
//! The unit holds `#include`s, the helpers the kernel calls (`helpers.rs`), optionally the tree
//! as a comment, and one function
//!
//! ```text
//! void kernel(const float *restrict lhs, const float *restrict rhs, float *restrict out)
//! ```
//!
//! with one pointer parameter per spec operand, in operand order (`lhs, rhs, out` for matmuls,
//! `image, filters, out` for convolutions, `src, dst` for moves, `out` for fills), `const` on
//! inputs, typed by dtype (bf16 as its bits in `uint16_t`). Each parameter points to the
//! operand's whole buffer in its layout.
//!
//! Lowering, node by node (details in `nodes.rs` and `buffers.rs`):
//!
//! ```text
//! Loop         nested C `for` loops with constant bounds over the full tiles (row-major over
//!              the tile grid), then each boundary body once; dims that move a register
//!              operand are unrolled; parallel loops get `#pragma omp parallel for collapse(n)`
//! Alloc        buffer: a new array (stack when at most 64 KiB, else aligned heap), vector
//!              variables or scalar variables, in the destination layout; prologue, body,
//!              epilogue; a cache view emits nothing and keeps the same buffer
//! Block        the stages in order
//! Kernel       its emitter in `kernels/`, one file per kernel
//! SpecApp      an error: the tree is not complete
//! ```
//!
//! Output is deterministic: the same tree and target give the same bytes.

mod buffers;
mod cexpr;
pub mod helpers;
mod kernels;
pub mod lone;
mod nodes;
#[cfg(test)]
mod tests;
pub mod vector;
mod writer;

use std::collections::BTreeSet;

use morello_core::dtype::Dtype;
use morello_core::expr::{IndexExpr, RangeEnv};
use morello_core::imp::Impl;
use morello_core::spec::{Direction, LogicalSpec};
use morello_core::target::{LevelKind, Target};

use crate::compiler::OpenMp;
use crate::error::CodegenError;
use crate::harness::{CType, KernelParam, KernelSignature, ParamRole};
use morello_core::target::IsaFeature;

use buffers::{BufferInfo, Storage, View};
use cexpr::CExprPrinter;
use helpers::Helper;
use writer::CWriter;

/// The default name of the emitted kernel function.
pub const DEFAULT_KERNEL_NAME: &str = "kernel";

/// Arrays up to this many bytes live on the stack; larger ones on the heap. 64 KiB holds any
/// buffer packed for an L1 (a heap allocation per packed panel costs 1-3% of a 256^3 matmul).
pub const STACK_LIMIT_BYTES: u64 = 64 * 1024;

/// Alignment in bytes of every array the kernel allocates (a cache line, and the widest vector).
pub const BUFFER_ALIGNMENT: u64 = 64;

/// Instruction-set features only some kernels need: compiled in only when the code uses them,
/// so a host without them still runs every other kernel of the target (an AArch64 core without
/// the dot-product extension runs `arm-neon`'s f32 code).
pub const KERNEL_ONLY_FEATURES: [IsaFeature; 2] = [IsaFeature::Avx512bf16, IsaFeature::Dotprod];

/// Whether the implementation tree is printed as a comment above the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImplComment {
    /// Print it (the default).
    #[default]
    Include,
    /// Leave it out.
    Omit,
}

/// How to emit a kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmitConfig {
    /// The C function name (a C identifier not starting with `morello_`).
    pub name: String,
    /// Whether to print the tree as a comment.
    pub comment: ImplComment,
}

impl Default for EmitConfig {
    fn default() -> Self {
        EmitConfig { name: DEFAULT_KERNEL_NAME.to_string(), comment: ImplComment::Include }
    }
}

/// An emitted kernel: its C text and what it takes to build and call it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmittedKernel {
    /// The translation unit (no `main`).
    pub source: String,
    /// The function's name and parameters, for the harnesses.
    pub signature: KernelSignature,
    /// The `-m` features to compile with: the target's, minus [`KERNEL_ONLY_FEATURES`] the code
    /// does not use.
    pub features: Vec<IsaFeature>,
    /// Whether the code has parallel loops (compile and link with OpenMP).
    pub openmp: OpenMp,
}

/// The C translation unit of an implementation, with the default name `kernel` and the tree as
/// a comment.
///
/// ```
/// use morello_core::imp::Impl;
/// use morello_core::kernels::KernelKind;
/// use morello_core::spec::LogicalSpec;
/// use morello_core::target::Target;
///
/// let target = Target::builtin("x86-avx2", 1).unwrap();
/// let spec = LogicalSpec::parse("FillZero(4x4, f32 GL row-major)", &target)
///     .unwrap()
///     .canonicalize(&target)
///     .unwrap();
/// let imp = Impl::kernel(spec, KernelKind::MemsetZero, &target);
/// let c = morello_codegen::emit_c(&imp, &target).unwrap();
/// assert!(c.contains("void kernel(float *restrict out)"));
/// assert!(c.contains("memset(out, 0, 64);"));
/// ```
///
/// # Errors
/// See [`emit_kernel`].
pub fn emit_c(imp: &Impl, target: &Target) -> Result<String, CodegenError> {
    Ok(emit_kernel(imp, target, &EmitConfig::default())?.source)
}

/// Emits an implementation as C, with its signature and build requirements.
///
/// # Errors
/// [`CodegenError::Unsolved`] if the tree has an unsolved spec; [`CodegenError::KernelUnavailable`]
/// if it uses a kernel the target does not offer; [`CodegenError::MissingIsa`] if the code needs an
/// instruction-set feature the target lacks; [`CodegenError::InvalidSignature`] for a bad name;
/// [`CodegenError::Unsupported`] for what C cannot express here (root operands in registers, a
/// vector width x86 does not have).
pub fn emit_kernel(imp: &Impl, target: &Target, config: &EmitConfig) -> Result<EmittedKernel, CodegenError> {
    let signature = kernel_signature(&imp.spec, &config.name)?;
    signature.validate()?;
    let mut emitter = Emitter::new(target);
    let mut roots = Vec::new();
    for (i, (operand, param)) in imp.spec.operands.iter().zip(&signature.params).enumerate() {
        let level = target.level(operand.level);
        if level.kind.counts_registers() || !operand.is_fully_contiguous() {
            return Err(CodegenError::Unsupported {
                reason: format!(
                    "operand {i} ({}) must be a whole tensor in memory or a cache to be a kernel parameter",
                    operand.display(target)
                ),
            });
        }
        let storage = Storage::Memory { name: param.name.clone() };
        roots.push(emitter.add_buffer(BufferInfo::new(storage, &operand.shape, &operand.layout)?));
    }
    emitter.out.open(format!("{} {{", definition(&signature)));
    emitter.node(imp, &roots)?;
    emitter.out.close();
    let body = std::mem::take(&mut emitter.out).finish();

    let features = compile_features(target, &emitter.features);
    let openmp = if emitter.parallel { OpenMp::Enabled } else { OpenMp::Disabled };
    let mut comment = format!("/* morello kernel `{}` for target {}:\n", config.name, target.name());
    comment.push_str(&format!(" * {}\n", comment_safe(&imp.spec.display(target).to_string())));
    comment.push_str(&build_comment(&features, openmp));
    if config.comment == ImplComment::Include {
        comment.push_str(" *\n");
        for line in imp.render(target).lines() {
            comment.push_str(&format!(" *   {}\n", comment_safe(line.trim_end())));
        }
    }
    comment.push_str(" */\n");
    let header = vector::VectorIsa::of(target).header();
    let source = translation_unit(comment, header, emitter.needs_math, &emitter.helpers, &body);
    Ok(EmittedKernel { source, signature, features, openmp })
}

/// The comment lines that say how to compile a unit that needs `features` and `openmp`: the flags
/// morello compiles and verifies it with (the `-m` flags enable the instructions its intrinsics
/// use, without which it does not compile).
pub(crate) fn build_comment(features: &[IsaFeature], openmp: OpenMp) -> String {
    let mut flags: Vec<&str> = vec!["-O3", "-std=gnu11"];
    flags.extend(crate::isa::compiler_flags(features));
    if openmp == OpenMp::Enabled {
        flags.push("-fopenmp");
    }
    let mut lines = format!(" * compile: cc {} -c kernel.c\n", flags.join(" "));
    if features.iter().any(|f| f.architecture() == morello_core::target::Architecture::Aarch64) {
        lines.push_str(
            " *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)\n",
        );
    }
    if openmp == OpenMp::Enabled {
        lines.push_str(
            " *   (its parallel loops use OpenMP: link with -fopenmp too; without it they run serially)\n",
        );
    }
    lines
}

/// A translation unit: `comment`, the `#include`s (`intrinsics`, the header of the target's vector
/// intrinsics, first), the `helpers`' definitions, then `body`.
fn translation_unit(
    comment: String,
    intrinsics: &str,
    needs_math: bool,
    helpers: &BTreeSet<Helper>,
    body: &str,
) -> String {
    let mut source = comment;
    let mut headers = vec![intrinsics, "stdint.h", "stdlib.h", "string.h"];
    if needs_math {
        headers.push("math.h");
    }
    for h in headers {
        source.push_str(&format!("#include <{h}>\n"));
    }
    let helpers = helpers::definitions(helpers);
    if !helpers.is_empty() {
        source.push('\n');
        source.push_str(&helpers);
    }
    source.push('\n');
    source.push_str(body);
    source
}

/// The kernel's signature for a spec: one parameter per operand, named as its operator names it
/// (`lhs`, `rhs`, `out`), sized by the operand's buffer, `Input` / `Output` / `InOut` by its direction.
///
/// # Errors
/// [`CodegenError::InvalidSignature`] if a buffer is too large for this machine.
pub fn kernel_signature(spec: &LogicalSpec, name: &str) -> Result<KernelSignature, CodegenError> {
    let names = spec.kind.operand_names();
    let params = spec
        .operands
        .iter()
        .zip(spec.kind.directions())
        .zip(names)
        .map(|((operand, direction), name)| {
            let elements =
                usize::try_from(operand.shape.volume()).map_err(|_| CodegenError::InvalidSignature {
                    reason: format!("operand `{name}` is too large for this machine"),
                })?;
            let role = match direction {
                Direction::In => ParamRole::Input,
                Direction::Out => ParamRole::Output,
                Direction::InOut => ParamRole::InOut,
            };
            Ok(KernelParam::new(name, c_type(operand.dtype), elements, role))
        })
        .collect::<Result<Vec<_>, CodegenError>>()?;
    Ok(KernelSignature::new(name, params))
}

/// The C element type of a dtype (bf16 as its bits).
pub fn c_type(dtype: Dtype) -> CType {
    match dtype {
        Dtype::F32 => CType::F32,
        Dtype::U32 => CType::U32,
        Dtype::I32 => CType::I32,
        Dtype::U16 => CType::U16,
        Dtype::I16 => CType::I16,
        Dtype::U8 => CType::U8,
        Dtype::I8 => CType::I8,
        Dtype::Bf16 => CType::Bf16,
    }
}

/// The function definition's first line, with `restrict` on every pointer.
fn definition(signature: &KernelSignature) -> String {
    let params: Vec<String> = signature
        .params
        .iter()
        .map(|p| {
            let qualifier = if p.role == ParamRole::Input { "const " } else { "" };
            format!("{qualifier}{} *restrict {}", p.c_type.c_name(), p.name)
        })
        .collect();
    format!("void {}({})", signature.name, params.join(", "))
}

/// Text that cannot end a C comment early.
fn comment_safe(text: &str) -> String {
    text.replace("*/", "* /")
}

/// The features to compile with: the target's and those they imply, minus the kernel-only ones
/// the code does not use, in [`IsaFeature::ALL`] order.
pub fn compile_features(target: &Target, used: &BTreeSet<IsaFeature>) -> Vec<IsaFeature> {
    target
        .isa_with_implied()
        .into_iter()
        .filter(|f| !KERNEL_ONLY_FEATURES.contains(f) || used.contains(f))
        .collect()
}

/// The state of one emission: the C written so far, buffers, loop variables and what the code
/// needs.
pub(crate) struct Emitter<'t> {
    pub(crate) target: &'t Target,
    pub(crate) out: CWriter,
    pub(crate) buffers: Vec<BufferInfo>,
    /// C names of the loop variables, indexed by their symbol number.
    pub(crate) loop_names: Vec<String>,
    /// Ranges of the loop variables.
    pub(crate) env: RangeEnv,
    /// A counter for fresh names.
    next_name: usize,
    pub(crate) helpers: BTreeSet<Helper>,
    pub(crate) features: BTreeSet<IsaFeature>,
    pub(crate) parallel: bool,
    pub(crate) needs_math: bool,
}

impl<'t> Emitter<'t> {
    fn new(target: &'t Target) -> Self {
        Emitter {
            target,
            out: CWriter::default(),
            buffers: Vec::new(),
            loop_names: Vec::new(),
            env: RangeEnv::new(),
            next_name: 0,
            helpers: BTreeSet::new(),
            features: BTreeSet::new(),
            parallel: false,
            needs_math: false,
        }
    }

    /// Registers a buffer and returns the view of all of it.
    pub(crate) fn add_buffer(&mut self, buffer: BufferInfo) -> View {
        let rank = buffer.rank;
        self.buffers.push(buffer);
        View::whole(self.buffers.len() - 1, rank)
    }

    /// A fresh number for a name.
    pub(crate) fn fresh(&mut self) -> usize {
        self.next_name += 1;
        self.next_name - 1
    }

    /// The C text of an index expression over the loop variables in scope.
    pub(crate) fn c_expr(&mut self, expr: &IndexExpr) -> Result<String, CodegenError> {
        let mut used = Vec::new();
        let text = CExprPrinter { names: &self.loop_names, env: &self.env }.print(expr, &mut used)?;
        self.helpers.extend(used);
        Ok(text)
    }

    /// Records that the code uses `feature`, which the target must have.
    ///
    /// # Errors
    /// [`CodegenError::MissingIsa`] if the target lacks it.
    pub(crate) fn require(&mut self, feature: IsaFeature, what: &str) -> Result<(), CodegenError> {
        if !self.target.has_isa(feature) {
            return Err(CodegenError::MissingIsa {
                target: self.target.name().to_string(),
                feature: feature.name().to_string(),
                what: what.to_string(),
            });
        }
        self.features.insert(feature);
        Ok(())
    }

    /// Records that the code uses fused multiply-adds: `fma` on x86, part of NEON on AArch64.
    ///
    /// # Errors
    /// [`CodegenError::MissingIsa`] if the target lacks them.
    pub(crate) fn require_fused_multiply_add(&mut self, what: &str) -> Result<(), CodegenError> {
        match vector::VectorIsa::of(self.target) {
            vector::VectorIsa::X86 => self.require(IsaFeature::Fma, what),
            vector::VectorIsa::Neon => self.require(IsaFeature::Neon, what),
        }
    }

    /// Whether the target has a feature (for optional instructions such as FMA).
    pub(crate) fn has(&self, feature: IsaFeature) -> bool {
        self.target.has_isa(feature)
    }

    /// The kind of a tensor's level.
    pub(crate) fn level_kind(&self, tensor: &morello_core::spec::TensorSpec) -> LevelKind {
        self.target.level(tensor.level).kind
    }
}
