//! Verifying a compiled module: build its C with the verification harness of
//! `morello-codegen`, run it once on seeded inputs, and compare every element of every result
//! with `morello-xla`'s reference evaluator.
//!
//! ```text
//! inputs    the harness's seeded values (Buffer::from_seed: floats multiples of 1/16 in
//!           [-2, 2), integers over their whole range), pred masked to 0 or 1, in each
//!           parameter's layout; the evaluator gets the same values
//! compare   floats: |got - want| <= 2 e, e the evaluator's bound for the element (its per-op
//!           rules, in morello_xla::eval); NaN only where the reference is NaN, infinities equal;
//!           integers and pred: exact, unless a float conversion upstream gives a bound
//!           an element whose bound is infinite is not compared, and counted
//! ```
//!
//! The factor 2 covers the reference's own `f64` rounding and orders of evaluation the bound's
//! first-order rules do not count.

use std::fmt;

use morello_codegen::{
    Buffer, BuildDir, CProgram, CodegenError, CompileOptions, Compiler, SourceUnit, VerifyInputs, Warnings,
    run_verify, verify_program_source,
};
use morello_xla::eval::{Array, Data, EvalError, EvalOptions, evaluate, for_each_index};
use morello_xla::hlo::{ArrayShape, HloModule, is_float_type};
use morello_xla::xla::ElementType;

use crate::CompiledModule;
use crate::views::layout_strides;

/// How to verify a module.
#[derive(Debug, Clone)]
pub struct VerifyModuleOptions {
    /// The seed of the inputs.
    pub seed: u64,
    /// Where the C files and the binary go.
    pub build_dir: BuildDir,
    /// Whether compiler warnings fail the build.
    pub warnings: Warnings,
    /// The evaluator's options (its rounding model and size limit).
    pub eval: EvalOptions,
}

impl Default for VerifyModuleOptions {
    fn default() -> Self {
        VerifyModuleOptions {
            seed: 1,
            build_dir: BuildDir::Temporary,
            warnings: Warnings::Report,
            eval: EvalOptions::default(),
        }
    }
}

/// The first result element out of tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultMismatch {
    /// The result's position (a tuple root's element).
    pub result: usize,
    /// The instruction computing it.
    pub instruction: String,
    /// The element's logical index.
    pub index: Vec<i64>,
    /// What the compiled module wrote.
    pub got: f64,
    /// What the evaluator computed.
    pub expected: f64,
    /// The allowed difference.
    pub tolerance: f64,
}

impl fmt::Display for ResultMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let index: Vec<String> = self.index.iter().map(ToString::to_string).collect();
        write!(
            f,
            "result {} (`{}`) at [{}] is {}, expected {} (tolerance {:e})",
            self.result,
            self.instruction,
            index.join(", "),
            self.got,
            self.expected,
            self.tolerance
        )
    }
}

/// The outcome of a verification.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleVerification {
    /// Whether every compared element is within its tolerance.
    pub verified: bool,
    /// Result elements compared.
    pub elements: u64,
    /// Elements not compared because their bound is infinite.
    pub unbounded: u64,
    /// The largest difference seen.
    pub max_abs_error: f64,
    /// The largest tolerance of a compared element.
    pub max_tolerance: f64,
    /// The first element out of tolerance.
    pub mismatch: Option<ResultMismatch>,
    /// The seed of the inputs.
    pub seed: u64,
}

/// Why a module could not be verified.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A parameter or result has an element type the harness has no buffers for.
    #[error("{0}")]
    Unsupported(String),
    /// Building or running the program failed.
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    /// The reference evaluator failed.
    #[error("the reference evaluator: {0}")]
    Eval(#[from] Box<EvalError>),
}

/// Builds, runs and checks a compiled module.
///
/// # Errors
/// [`VerifyError`]: element types without harness buffers, build or run failures, evaluator
/// failures (a mismatch is not an error: see [`ModuleVerification::mismatch`]).
pub fn verify_module(
    module: &HloModule,
    compiled: &CompiledModule,
    compiler: &Compiler,
    options: &VerifyModuleOptions,
) -> Result<ModuleVerification, VerifyError> {
    let signature = compiled.signature.clone().ok_or_else(|| {
        VerifyError::Unsupported(
            "the verification harness has buffers of f32, bf16 and 8- to 32-bit integers only; a parameter or \
             result of this module has another type"
                .into(),
        )
    })?;
    let entry = module.entry();
    let parameters: Vec<ArrayShape> =
        entry.parameters().iter().flat_map(|p| entry.instructions[p.0].shape.arrays().to_vec()).collect();
    let results: Vec<ArrayShape> =
        entry.root_instruction().map(|r| r.shape.arrays().to_vec()).unwrap_or_default();
    if parameters.iter().chain(&results).any(|a| a.volume() == 0) {
        return Err(VerifyError::Unsupported("an empty parameter or result has nothing to verify".into()));
    }
    let mut inputs = Vec::new();
    let mut arguments = Vec::new();
    for (k, shape) in parameters.iter().enumerate() {
        let param = &signature.params[k];
        let mut buffer = Buffer::from_seed(param.c_type, param.elements, options.seed, k);
        if shape.element_type == ElementType::Pred {
            if let Buffer::U8(v) = &mut buffer {
                v.iter_mut().for_each(|x| *x &= 1);
            }
        }
        arguments.push(argument(shape, &buffer));
        inputs.push(buffer);
    }
    let source = verify_program_source(&signature, &compiled.source)?;
    let program = CProgram { units: vec![SourceUnit::new("verify", source)], link_args: Vec::new() };
    let compile = CompileOptions {
        features: compiled.features.clone(),
        openmp: compiled.openmp,
        warnings: options.warnings,
    };
    let build = compiler.build_in(&program, &compile, &options.build_dir)?;
    let run = run_verify(&build, &signature, &VerifyInputs::Buffers(inputs))?;
    let expected = evaluate(module, &arguments, &options.eval).map_err(Box::new)?;
    let mut outcome = ModuleVerification {
        verified: true,
        elements: 0,
        unbounded: 0,
        max_abs_error: 0.0,
        max_tolerance: 0.0,
        mismatch: None,
        seed: options.seed,
    };
    for (k, (shape, want)) in results.iter().zip(&expected).enumerate() {
        let got = &run.params[parameters.len() + k];
        compare(k, &compiled.result_instructions[k], shape, got, want, &mut outcome);
    }
    outcome.verified = outcome.mismatch.is_none();
    Ok(outcome)
}

/// The value of buffer position `p` as an `f64` or integer.
fn read(buffer: &Buffer, p: usize, element_type: ElementType) -> (f64, i128) {
    match buffer {
        Buffer::F32(v) => (f64::from(v[p]), 0),
        Buffer::Bf16(v) => (f64::from(f32::from_bits(u32::from(v[p]) << 16)), 0),
        Buffer::U32(v) => (f64::from(v[p]), i128::from(v[p])),
        Buffer::I32(v) => (f64::from(v[p]), i128::from(v[p])),
        Buffer::U16(v) => (f64::from(v[p]), i128::from(v[p])),
        Buffer::I16(v) => (f64::from(v[p]), i128::from(v[p])),
        Buffer::U8(v) if element_type == ElementType::Pred => {
            let b = i128::from(v[p] != 0);
            (b as f64, b)
        }
        Buffer::U8(v) => (f64::from(v[p]), i128::from(v[p])),
        Buffer::I8(v) => (f64::from(v[p]), i128::from(v[p])),
    }
}

/// The evaluator's argument holding a parameter buffer's values (buffer positions in the layout
/// to row-major logical order).
fn argument(shape: &ArrayShape, buffer: &Buffer) -> Array {
    let strides = layout_strides(shape);
    let mut floats = Vec::new();
    let mut ints = Vec::new();
    for_each_index(&shape.dims, |index, _| {
        let p: i64 = index.iter().zip(&strides).map(|(&i, &s)| i * s).sum();
        let (f, i) = read(buffer, p as usize, shape.element_type);
        floats.push(f);
        ints.push(i);
    });
    if is_float_type(shape.element_type) {
        Array::floats(shape.element_type, &shape.dims, floats)
    } else {
        Array::ints(shape.element_type, &shape.dims, ints)
    }
}

fn compare(
    k: usize,
    instruction: &str,
    shape: &ArrayShape,
    got: &Buffer,
    want: &Array,
    out: &mut ModuleVerification,
) {
    let strides = layout_strides(shape);
    let float = is_float_type(shape.element_type);
    for_each_index(&shape.dims, |index, linear| {
        let p: i64 = index.iter().zip(&strides).map(|(&i, &s)| i * s).sum();
        let (g, gi) = read(got, p as usize, shape.element_type);
        let bound = want.error[linear];
        out.elements += 1;
        if !bound.is_finite() {
            out.unbounded += 1;
            return;
        }
        let tolerance = 2.0 * bound;
        let (ok, difference, expected) = match &want.data {
            Data::Float(v) if float => {
                let w = v[linear];
                let ok = if w.is_nan() {
                    g.is_nan()
                } else if w.is_infinite() {
                    g == w || (g - w).abs() <= tolerance
                } else {
                    (g - w).abs() <= tolerance
                };
                let difference = if w.is_finite() && g.is_finite() { (g - w).abs() } else { 0.0 };
                (ok, difference, w)
            }
            Data::Int(v) => {
                let w = v[linear];
                let d = (gi - w).abs() as f64;
                (d <= tolerance, d, w as f64)
            }
            Data::Float(v) => {
                let w = v[linear];
                ((g - w).abs() <= tolerance, (g - w).abs(), w)
            }
        };
        out.max_abs_error = out.max_abs_error.max(difference);
        out.max_tolerance = out.max_tolerance.max(tolerance);
        if !ok && out.mismatch.is_none() {
            out.mismatch = Some(ResultMismatch {
                result: k,
                instruction: instruction.to_string(),
                index: index.to_vec(),
                got: g,
                expected,
                tolerance,
            });
        }
    });
}
