//! One kernel by itself, outside an implementation tree: the emitter's own C statements for a
//! kernel applied to a spec, its operands bound to C names the caller declares. Calibration's
//! microbenchmarks run kernels this way, so what they time is what the emitter writes.

use std::collections::BTreeSet;

use morello_core::kernels::KernelKind;
use morello_core::spec::LogicalSpec;
use morello_core::target::{IsaFeature, LevelKind, Target};

use super::buffers::{BufferInfo, Storage};
use super::helpers::Helper;
use super::vector::VectorType;
use super::{Emitter, c_type};
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
                let vector = VectorType::new(operand.dtype, lanes)?;
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
    Ok(LoneKernel { operands, statements, helpers: e.helpers, features: e.features })
}
