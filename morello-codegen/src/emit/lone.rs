//! One kernel by itself, outside an implementation tree: the emitter's own C statements for a
//! kernel applied to a spec, its operands bound to C names the caller declares. Calibration's
//! microbenchmarks run kernels this way, so what they time is what the emitter writes.

use std::collections::BTreeSet;

use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;
use morello_core::target::{IsaFeature, LevelKind, Target};

use super::buffers::{BufferInfo, Storage};
use super::helpers::Helper;
use super::vector::{VectorIsa, VectorType};
use super::{EmittedKernel, Emitter, c_type, comment_safe, compile_features, definition, kernel_signature};
use crate::compiler::OpenMp;
use crate::error::CodegenError;
use crate::harness::CType;

/// How the statements of a [`LoneKernel`] reach one operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoneOperand {
    /// In memory or a cache: the pointer `name` (to `c_type`) to the operand's first element, its
    /// elements at their offsets in the operand's layout.
    Memory {
        /// The pointer's C name.
        name: String,
        /// The element type.
        c_type: CType,
    },
    /// In vector registers: the variables `<prefix>_0 .. <prefix>_{count - 1}` of `vector`.
    Vectors {
        /// The variables' common prefix.
        prefix: String,
        /// Their type.
        vector: VectorType,
        /// How many.
        count: u64,
    },
    /// In scalar registers: the variables `<prefix>_0 .. <prefix>_{count - 1}` of `c_type`, one
    /// per element in layout order.
    Scalars {
        /// The variables' common prefix.
        prefix: String,
        /// Their type.
        c_type: CType,
        /// How many.
        count: u64,
    },
}

/// A kernel's C statements on named operands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoneKernel {
    /// Each operand's C names, in operand order (the caller declares them).
    pub operands: Vec<LoneOperand>,
    /// The statements (a block), indented by `indent` levels.
    pub statements: String,
    /// The helper functions the statements call.
    pub helpers: BTreeSet<Helper>,
    /// The instruction-set features the statements use.
    pub features: BTreeSet<IsaFeature>,
    /// Whether the statements use `math.h` (`INFINITY`).
    pub needs_math: bool,
}

/// The statements of `kernel` applied to `spec` on `target`, operand `i` named `names[i]`
/// (a pointer, or the prefix of register variables, by the operand's level), indented by
/// `indent` levels of two spaces.
///
/// # Errors
/// [`CodegenError::KernelUnavailable`] if the target does not offer the kernel;
/// [`CodegenError::Unsupported`] if the kernel does not apply to `spec` or `names` has not one
/// name per operand; [`CodegenError::MissingIsa`] and the emitter's errors as for a tree.
pub fn lone_kernel(
    kernel: KernelKind,
    spec: &LogicalSpec,
    target: &Target,
    names: &[String],
    indent: usize,
) -> Result<LoneKernel, CodegenError> {
    if !kernel.applies(spec, target) {
        return Err(CodegenError::Unsupported {
            reason: format!("{kernel} does not apply to {}", spec.display(target)),
        });
    }
    if names.len() != spec.operands.len() {
        return Err(CodegenError::Unsupported {
            reason: format!(
                "{} names for the {} operands of {}",
                names.len(),
                spec.operands.len(),
                spec.display(target)
            ),
        });
    }
    let mut e = Emitter::new(target);
    for _ in 0..indent {
        e.out.open("");
    }
    let mut operands = Vec::new();
    let mut views = Vec::new();
    for (operand, name) in spec.operands.iter().zip(names) {
        let volume = operand.shape.volume();
        let (storage, lone) = match e.level_kind(operand) {
            LevelKind::VectorRegisters => {
                let lanes = operand.vector_size.ok_or_else(|| CodegenError::Internal {
                    reason: "a tensor in vector registers without a vector size".into(),
                })?;
                let vector = VectorType::new(VectorIsa::of(target), operand.dtype, lanes)?;
                if let Some(feature) = vector.feature() {
                    e.require(feature, "the operand's vector registers")?;
                }
                let count = volume / u64::from(lanes);
                (
                    Storage::Vectors { prefix: name.clone(), vector },
                    LoneOperand::Vectors { prefix: name.clone(), vector, count },
                )
            }
            LevelKind::ScalarRegisters => (
                Storage::Scalars { prefix: name.clone() },
                LoneOperand::Scalars { prefix: name.clone(), c_type: c_type(operand.dtype), count: volume },
            ),
            LevelKind::Cache | LevelKind::Memory => (
                Storage::Memory { name: name.clone() },
                LoneOperand::Memory { name: name.clone(), c_type: c_type(operand.dtype) },
            ),
        };
        views.push(e.add_buffer(BufferInfo::new(storage, &operand.shape, &operand.layout)?));
        operands.push(lone);
    }
    e.kernel_on(kernel, spec, &views)?;
    // The indentation was opened with empty lines: drop them.
    let statements: String =
        e.out.finish().lines().filter(|l| !l.trim().is_empty()).map(|l| format!("{l}\n")).collect();
    Ok(LoneKernel {
        operands,
        statements,
        helpers: e.helpers,
        features: e.features,
        needs_math: e.needs_math,
    })
}

/// A kernel by itself as a C function ([`lone_function`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoneFunction {
    /// The translation unit, to build and verify like any emitted kernel.
    pub kernel: EmittedKernel,
    /// The same unit with the helper functions named in its comment but not defined (their C is
    /// the same for every kernel): the kernel's golden file.
    pub listing: String,
}

/// The statements of `kernel` applied to `spec` on `target` ([`lone_kernel`]) as a C function
/// `name` with the kernel signature of the spec (one pointer per operand to its buffer in the
/// operand's layout, as [`crate::emit_kernel`]'s): register operands are loaded from their
/// parameter's buffer before the statements and stored back after them when written. The
/// per-kernel golden files are these functions, verified against the reference like any kernel,
/// so the C they check is the C calibration times.
///
/// # Errors
/// As [`lone_kernel`]; [`CodegenError::InvalidSignature`] for a bad name.
pub fn lone_function(
    kernel: KernelKind,
    spec: &LogicalSpec,
    target: &Target,
    name: &str,
) -> Result<LoneFunction, CodegenError> {
    let signature = kernel_signature(spec, name)?;
    signature.validate()?;
    let names: Vec<String> = spec
        .operands
        .iter()
        .zip(&signature.params)
        .map(|(operand, param)| {
            if target.level(operand.level).kind.counts_registers() {
                format!("{}_r", param.name)
            } else {
                param.name.clone()
            }
        })
        .collect();
    let lone = lone_kernel(kernel, spec, target, &names, 1)?;
    let mut loads = String::new();
    let mut stores = String::new();
    for (operand, param) in lone.operands.iter().zip(&signature.params) {
        let buffer = &param.name;
        let written = param.role.is_written();
        match operand {
            LoneOperand::Memory { .. } => {}
            LoneOperand::Vectors { prefix, vector, count } => {
                for j in 0..*count {
                    let at = match j * u64::from(vector.lanes) {
                        0 => buffer.clone(),
                        offset => format!("{buffer} + {offset}"),
                    };
                    let var = format!("{prefix}_{j}");
                    loads.push_str(&format!("  {} {var} = {};\n", vector.c_type(), vector.load(&at)));
                    if written {
                        stores.push_str(&format!("  {};\n", vector.store(&at, &var)));
                    }
                }
            }
            LoneOperand::Scalars { prefix, c_type, count } => {
                for j in 0..*count {
                    loads.push_str(&format!("  {} {prefix}_{j} = {buffer}[{j}];\n", c_type.c_name()));
                    if written {
                        stores.push_str(&format!("  {buffer}[{j}] = {prefix}_{j};\n"));
                    }
                }
            }
        }
    }
    let body = format!("{} {{\n{loads}{}{stores}}}\n", definition(&signature), lone.statements);
    let mut comment = format!(
        "/* morello kernel `{kernel}` by itself, as function `{name}` for target {}:\n * {}\n",
        target.name(),
        comment_safe(&spec.display(target).to_string())
    );
    let features = compile_features(target, &lone.features);
    comment.push_str(&super::build_comment(&features, OpenMp::Disabled));
    if !lone.helpers.is_empty() {
        let helpers: Vec<String> = lone.helpers.iter().map(|h| format!("{h:?}")).collect();
        comment.push_str(&format!(" * helpers (emit/helpers.rs): {}\n", helpers.join(", ")));
    }
    comment.push_str(" */\n");
    let header = VectorIsa::of(target).header();
    let listing = super::translation_unit(comment.clone(), header, lone.needs_math, &BTreeSet::new(), &body);
    let source = super::translation_unit(comment, header, lone.needs_math, &lone.helpers, &body);
    Ok(LoneFunction {
        kernel: EmittedKernel { source, signature, features, openmp: OpenMp::Disabled },
        listing,
    })
}
