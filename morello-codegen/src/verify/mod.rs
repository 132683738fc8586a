//! Verification of emitted kernels: seeded inputs, one run of the compiled kernel, and an
//! element-by-element comparison with a reference of the spec.
//!
//! The harness fills every read parameter from a seed ([`crate::harness::Buffer::from_seed`]:
//! integers over their whole range, floats multiples of 1/16 in `[-2, 2)`), the kernel runs once,
//! and every written parameter is compared with the reference (`reference.rs`: the interpreter, or
//! a fast matmul for large matmuls) at every logical point:
//!
//! ```text
//! integers, moves, fills:   exact (bit for bit)
//! float reductions:         |got - want| <= 2 (n + 1) u M
//!     n = reduction length (terms summed into one output element: K for a matmul,
//!         C * FH * FW for a convolution)
//!     u = unit roundoff of the output dtype (2^-24 for f32, 2^-8 for bf16)
//!     M = |initial output| + Σ |a b| over the element's terms
//! ```
//!
//! Each of the kernel's and the reference's sums is within `n u M` (to first order) of the exact
//! sum whatever the order of additions or fusing of multiply-adds, hence the factor 2; the extra
//! `u M` covers the final rounding to the output dtype. With the seeded inputs a product is a
//! multiple of 1/256 below 4 in magnitude, so sums of up to 16384 terms are exact in f32 and the
//! error is usually 0.

mod reference;
#[cfg(test)]
mod tests;

use std::fmt;

use morello_core::dtype::Dtype;
use morello_core::imp::Impl;
use morello_core::interp::Value;
use morello_core::operators::Tolerance;
use morello_core::spec::{Activation, LogicalSpec};
use morello_core::target::Target;
use serde::Serialize;

use crate::compiler::{Build, BuildDir, CProgram, CompileOptions, Compiler, OpenMp, SourceUnit, Warnings};
use crate::emit::{EmitConfig, EmittedKernel, ImplComment, emit_kernel};
use crate::error::CodegenError;
use crate::harness::{
    Buffer, KernelSignature, VerifyInputs, run_verify_selected, verify_many_program_source,
};

pub use reference::{INTERPRETER_LIMIT, ReferenceMethod};

/// How to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyOptions {
    /// The seed of the inputs.
    pub seed: u64,
    /// Where the C files and the binary go.
    pub build_dir: BuildDir,
    /// Whether compiler warnings fail the build (tests deny them).
    pub warnings: Warnings,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions { seed: 1, build_dir: BuildDir::Temporary, warnings: Warnings::Report }
    }
}

/// The first element that differs from the reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// The parameter's name, e.g. `out`.
    pub param: String,
    /// The logical index of the element.
    pub point: Vec<u32>,
    /// Its offset in the parameter's buffer.
    pub offset: u64,
    /// What the kernel wrote.
    pub got: f64,
    /// What the reference computed.
    pub expected: f64,
    /// The allowed difference (0 for exact comparisons).
    pub tolerance: f64,
    /// The spec, as text.
    pub spec: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let point: Vec<String> = self.point.iter().map(u32::to_string).collect();
        write!(
            f,
            "{}[{}] (buffer offset {}) is {}, expected {} (tolerance {:e}) in {}",
            self.param,
            point.join(", "),
            self.offset,
            self.got,
            self.expected,
            self.tolerance,
            self.spec
        )
    }
}

/// The outcome of comparing a kernel's outputs with the reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verification {
    /// Whether every element is within tolerance.
    pub verified: bool,
    /// The largest absolute difference seen (0 for exact matches).
    pub max_abs_error: f64,
    /// The largest tolerance of any element (0 when the comparison is exact).
    pub max_tolerance: f64,
    /// The reduction length `n` of the tolerance (1 when nothing is summed).
    pub reduction_length: u64,
    /// Elements compared.
    pub elements: u64,
    /// The first element out of tolerance.
    pub mismatch: Option<Mismatch>,
    /// What computed the expected values.
    pub reference: ReferenceMethod,
    /// The seed of the inputs.
    pub seed: u64,
}

/// A kernel emitted, built, run and compared.
#[derive(Debug)]
pub struct VerifiedKernel {
    /// The emitted kernel.
    pub kernel: EmittedKernel,
    /// The comparison.
    pub verification: Verification,
}

/// The unit roundoff of a float dtype.
fn unit_roundoff(dtype: Dtype) -> f64 {
    if dtype == Dtype::Bf16 { 2f64.powi(-8) } else { 2f64.powi(-24) }
}

/// The number of terms summed into one output element.
pub fn reduction_length(spec: &LogicalSpec) -> u64 {
    spec.kind.reduction_dims().iter().map(|&d| u64::from(spec.shape.dim(d))).product()
}

/// Compares a kernel's parameters after a run with the reference of `spec`, given the seed the
/// inputs came from.
///
/// # Errors
/// [`CodegenError::BadBuffer`] if the parameters do not fit the spec; [`CodegenError::Internal`]
/// if the reference fails.
pub fn check_outputs(
    spec: &LogicalSpec,
    target: &Target,
    signature: &KernelSignature,
    after: &[Buffer],
    seed: u64,
) -> Result<Verification, CodegenError> {
    if after.len() != spec.operands.len() || signature.params.len() != spec.operands.len() {
        return Err(CodegenError::BadBuffer {
            param: signature.name.clone(),
            reason: format!("{} buffers for {} operands", after.len(), spec.operands.len()),
        });
    }
    // The initial contents: regenerated from the seed for read parameters; outputs start as 0xff
    // bytes in the harness, which the reference overwrites (every element of an output is written).
    let initial: Vec<Vec<Value>> = signature
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let buffer = if p.role.is_read() {
                Buffer::from_seed(p.c_type, p.elements, seed, i)
            } else {
                Buffer::zeros(p.c_type, p.elements)
            };
            reference::to_values(&buffer)
        })
        .collect();
    let expected = reference::reference(spec, target, &initial)?;
    let n = reduction_length(spec);
    let mut verification = Verification {
        verified: true,
        max_abs_error: 0.0,
        max_tolerance: 0.0,
        reduction_length: n,
        elements: 0,
        mismatch: None,
        reference: expected.method,
        seed,
    };
    for (i, (param, tensor)) in signature.params.iter().zip(&spec.operands).enumerate() {
        if !param.role.is_written() {
            continue;
        }
        let got = reference::to_values(&after[i]);
        let want = &expected.values[i];
        let indexer = tensor
            .layout
            .indexer(&tensor.shape)
            .map_err(|e| CodegenError::Internal { reason: format!("operand {i}: {e}") })?;
        let scale = (2 * (n + 1)) as f64 * unit_roundoff(tensor.dtype);
        for point in tensor.shape.points() {
            let offset = indexer.offset(&point);
            let at = offset as usize;
            let (g, w) = (got.get(at).copied(), want.get(at).copied());
            let (Some(g), Some(w)) = (g, w) else {
                return Err(CodegenError::BadBuffer {
                    param: param.name.clone(),
                    reason: format!("no element at offset {offset}"),
                });
            };
            let tolerance = match &expected.magnitudes[i] {
                Some(m) => tolerance(spec, scale, m[at], reference::as_f64(&w)),
                None => 0.0,
            };
            let (gf, wf) = (reference::as_f64(&g), reference::as_f64(&w));
            let same = match (g, w) {
                (Value::Float(a), Value::Float(b)) if expected.magnitudes[i].is_none() => {
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
                }
                (Value::Float(a), Value::Float(b)) => {
                    (a.is_nan() && b.is_nan()) || a == b || (gf - wf).abs() <= tolerance
                }
                (a, b) => a == b,
            };
            verification.elements += 1;
            verification.max_tolerance = verification.max_tolerance.max(tolerance);
            let error = (gf - wf).abs();
            if error.is_finite() {
                verification.max_abs_error = verification.max_abs_error.max(error);
            }
            if !same && verification.mismatch.is_none() {
                verification.verified = false;
                verification.mismatch = Some(Mismatch {
                    param: param.name.clone(),
                    point,
                    offset,
                    got: gf,
                    expected: wf,
                    tolerance,
                    spec: spec.display(target).to_string(),
                });
            }
        }
    }
    Ok(verification)
}

/// The tolerance of one float element, as the spec's operator says ([`Tolerance`]): relative bounds
/// per element for softmax and its passes (`magnitude` is the bound, from the operator's file);
/// `2 (n + 1) u M` for sums (`scale` is `2 (n + 1) u`); for an epilogue `act(s + bias)`, the error
/// of its argument (`2 (n + 2) u M` with `M` including `|bias|`) times the activation's slope
/// bound, plus for gelu `16 u |want|` and `2^-120` (the polynomial exp and the divide; an
/// underflowing tail).
fn tolerance(spec: &LogicalSpec, scale: f64, magnitude: f64, want: f64) -> f64 {
    match spec.kind.tolerance() {
        // Results below 2^-120 (an exp that underflows) may be off by that much.
        Tolerance::Relative(_) => magnitude * want.abs() + 2f64.powi(-120),
        Tolerance::Epilogue { activation, .. } => {
            let u = unit_roundoff(spec.output().dtype);
            let n = reduction_length(spec) as f64;
            let argument = 2.0 * (n + 2.0) * u * magnitude;
            let gelu =
                if activation == Activation::Gelu { 16.0 * u * want.abs() + 2f64.powi(-120) } else { 0.0 };
            activation.slope_bound() * argument + gelu
        }
        Tolerance::Sum | Tolerance::Exact => scale * magnitude,
    }
}

/// The most memory verifying a kernel with this signature takes at once, in bytes (an estimate
/// from below), so that a command can refuse up front what this machine cannot run:
///
/// ```text
/// harness   every parameter's buffer, in the C program
/// morello   after the program ends: the buffers read back, and per element of every parameter
///           its initial value, the reference's value and (reductions) its magnitude as `Value`s,
///           plus per written element the value read back and the f64 tolerance
/// ```
///
/// The two do not overlap in time, so the estimate is the larger (saturating at `u64::MAX`).
pub fn verification_bytes(signature: &KernelSignature) -> u64 {
    let value = size_of::<Value>() as u128;
    let mut harness: u128 = 0;
    let mut morello: u128 = 0;
    for param in &signature.params {
        let elements = param.elements as u128;
        let bytes = elements * param.c_type.size_bytes() as u128;
        harness += bytes;
        morello += bytes + 3 * value * elements;
        if param.role.is_written() {
            morello += (value + size_of::<f64>() as u128) * elements;
        }
    }
    u64::try_from(harness.max(morello)).unwrap_or(u64::MAX)
}

/// Emits, builds, runs and checks one implementation.
///
/// # Errors
/// Whatever emitting, compiling or running fails with (a host lacking the target's instructions
/// is [`CodegenError::MissingHostFeatures`]). A wrong result is not an error: see
/// [`Verification::verified`].
pub fn verify_impl(
    imp: &Impl,
    target: &Target,
    compiler: &Compiler,
    options: &VerifyOptions,
) -> Result<VerifiedKernel, CodegenError> {
    let mut all = verify_impls(&[imp], target, compiler, options)?;
    all.pop().ok_or_else(|| CodegenError::Internal { reason: "no result for one kernel".into() })
}

/// Emits several implementations for one target as kernels `kernel0`, `kernel1`, ... of one
/// program (one compile), runs and checks each.
///
/// # Errors
/// As [`verify_impl`], for the first that fails.
pub fn verify_impls(
    imps: &[&Impl],
    target: &Target,
    compiler: &Compiler,
    options: &VerifyOptions,
) -> Result<Vec<VerifiedKernel>, CodegenError> {
    let single = imps.len() == 1;
    let kernels = imps
        .iter()
        .enumerate()
        .map(|(i, imp)| {
            let name =
                if single { crate::emit::DEFAULT_KERNEL_NAME.to_string() } else { format!("kernel{i}") };
            emit_kernel(imp, target, &EmitConfig { name, comment: ImplComment::Include })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let specs: Vec<&LogicalSpec> = imps.iter().map(|imp| &*imp.spec).collect();
    verify_kernels(kernels.into_iter().zip(specs).collect(), target, compiler, options)
}

/// Builds emitted kernels (of distinct names) into one program (one compile), runs each and checks
/// it against the reference of its spec.
///
/// # Errors
/// As [`verify_impl`], for the first that fails.
pub fn verify_kernels(
    kernels: Vec<(EmittedKernel, &LogicalSpec)>,
    target: &Target,
    compiler: &Compiler,
    options: &VerifyOptions,
) -> Result<Vec<VerifiedKernel>, CodegenError> {
    let emitted: Vec<EmittedKernel> = kernels.iter().map(|(kernel, _)| kernel.clone()).collect();
    let build = build_kernels(&emitted, compiler, options)?;
    let mut results = Vec::with_capacity(kernels.len());
    for (kernel, spec) in kernels {
        let run = run_verify_selected(&build, &kernel.signature, &VerifyInputs::Seed(options.seed))?;
        let verification = check_outputs(spec, target, &kernel.signature, &run.params, options.seed)?;
        results.push(VerifiedKernel { kernel, verification });
    }
    Ok(results)
}

/// One verification program for several emitted kernels.
///
/// # Errors
/// [`CodegenError::CompileFailed`] and the other build errors.
pub fn build_kernels(
    kernels: &[EmittedKernel],
    compiler: &Compiler,
    options: &VerifyOptions,
) -> Result<Build, CodegenError> {
    let mut features = Vec::new();
    for kernel in kernels {
        for f in &kernel.features {
            if !features.contains(f) {
                features.push(*f);
            }
        }
    }
    features.sort();
    let openmp =
        if kernels.iter().any(|k| k.openmp == OpenMp::Enabled) { OpenMp::Enabled } else { OpenMp::Disabled };
    let source: String = kernels.iter().map(|k| k.source.as_str()).collect::<Vec<_>>().join("\n");
    let signatures: Vec<KernelSignature> = kernels.iter().map(|k| k.signature.clone()).collect();
    let program = CProgram {
        units: vec![SourceUnit::new("verify", verify_many_program_source(&signatures, &source)?)],
        link_args: Vec::new(),
    };
    let compile = CompileOptions { features, openmp, warnings: options.warnings };
    compiler.build_in(&program, &compile, &options.build_dir)
}
