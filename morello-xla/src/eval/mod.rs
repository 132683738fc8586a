//! A reference evaluator of HLO modules: every op of the model with defined semantics, on
//! [`Array`]s of exact values (`f64` accumulation for floats, wrapping `i128` for integers),
//! each element carrying a bound on how far an implementation that computes in the module's
//! element types may be from it ([`Rounding`]; the rules are in `scalar.rs`, `reduce.rs` and
//! `contract.rs`).
//!
//! ```text
//! elementwise       scalar.rs (XLA's integer and NaN semantics)
//! data movement     movement.rs: broadcast, transpose, reverse, reshape, bitcast (through the
//!                   layouts), slice, concatenate, pad, dynamic-slice, dynamic-update-slice,
//!                   gather (every form the model holds, starts clamped as XLA clamps them), iota
//! reductions        reduce.rs: reduce and reduce-window with any reducer computation (adds,
//!                   maxima, minima read directly; others evaluated per element)
//! contractions      contract.rs: dot (batch and contracting dims anywhere) and convolution
//!                   (dim labels, strides, padding, both dilations, reversal, feature and batch
//!                   groups)
//! calls             fusion, call and map evaluate their computation; tuples and their elements
//! ```
//!
//! Opcodes without a model (`scatter`, `sort`, `while`, `custom-call`, ...), complex numbers and
//! `reduce-precision` are an [`EvalError::Unsupported`] naming the instruction. The evaluator
//! does no I/O and never panics on a module [`HloModule::new`] accepted; it refuses values of more
//! than [`EvalOptions::max_elements`] elements before allocating them.
//!
//! ```
//! use morello_xla::eval::{Array, EvalOptions, evaluate};
//! use morello_xla::hlo::HloModule;
//! use morello_xla::xla::ElementType;
//!
//! let module: HloModule = "ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT m = f32[2] multiply(a, a)\n}".parse()?;
//! let a = Array::floats(ElementType::F32, &[2], vec![1.5, -2.0]);
//! let results = evaluate(&module, &[a], &EvalOptions::default())?;
//! assert_eq!(results[0].data, morello_xla::eval::Data::Float(vec![2.25, 4.0]));
//! assert_eq!(results[0].error, vec![0.0, 0.0], "both products are f32 values");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod array;
mod contract;
mod movement;
mod numbers;
mod reduce;
pub mod scalar;
#[cfg(test)]
mod tests;

use crate::hlo::{ComputationId, HloComputation, HloError, HloInstruction, HloModule, HloOp, HloShape};
pub use array::{Array, Data, f32_to_bf16, for_each_index, next_index, round_to, strides, volume, wrap};
pub use scalar::{Rounding, unit_roundoff};

/// Why a module could not be evaluated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// The module breaks XLA's element-type rules (the module's fault).
    #[error("{0}")]
    Types(#[from] HloError),
    /// The arguments do not match the entry's parameters (the caller's fault).
    #[error("bad arguments: {reason}")]
    Arguments {
        /// What is wrong.
        reason: String,
    },
    /// An op this evaluator does not evaluate.
    #[error("instruction `{instruction}` in computation `{computation}`: {reason}")]
    Unsupported {
        /// The computation.
        computation: String,
        /// The instruction.
        instruction: String,
        /// What is not supported.
        reason: String,
    },
    /// A value is larger than the evaluator may allocate.
    #[error(
        "instruction `{instruction}` in computation `{computation}` has {elements} elements, more than the \
         evaluator's limit of {limit}"
    )]
    TooLarge {
        /// The computation.
        computation: String,
        /// The instruction.
        instruction: String,
        /// Its elements.
        elements: u128,
        /// The limit.
        limit: usize,
    },
}

/// How the evaluator runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalOptions {
    /// The rounding model the error bounds are for.
    pub rounding: Rounding,
    /// The most elements any one value may have (default 2^28).
    pub max_elements: usize,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions { rounding: Rounding::default(), max_elements: 1 << 28 }
    }
}

/// The value of an instruction: an array or a tuple of arrays.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An array.
    Array(Array),
    /// A tuple of arrays.
    Tuple(Vec<Array>),
}

impl Value {
    /// The arrays of the value (one for an array).
    pub fn arrays(&self) -> &[Array] {
        match self {
            Value::Array(a) => std::slice::from_ref(a),
            Value::Tuple(elements) => elements,
        }
    }

    fn into_arrays(self) -> Vec<Array> {
        match self {
            Value::Array(a) => vec![a],
            Value::Tuple(elements) => elements,
        }
    }
}

/// Evaluates the entry computation on `arguments`, one array per array of the entry's parameters
/// (a tuple parameter's elements in order), and returns the root's arrays (a tuple's elements in
/// order).
///
/// # Errors
/// [`EvalError`]: ill-typed modules, arguments of the wrong type or dims, unsupported ops, values
/// above the size limit.
pub fn evaluate(
    module: &HloModule,
    arguments: &[Array],
    options: &EvalOptions,
) -> Result<Vec<Array>, EvalError> {
    module.check_element_types()?;
    let entry = module.entry();
    let mut given = arguments.iter();
    let mut values = Vec::new();
    for param in entry.parameters() {
        let instr = &entry.instructions[param.0];
        let mut arrays = Vec::new();
        for (k, shape) in instr.shape.arrays().iter().enumerate() {
            let argument = given.next().ok_or_else(|| EvalError::Arguments {
                reason: format!("too few arguments: none for parameter `{}`", instr.name),
            })?;
            let what = if instr.shape.as_array().is_some() {
                format!("the argument of `{}`", instr.name)
            } else {
                format!("element {k} of the argument of `{}`", instr.name)
            };
            argument.expect(shape.element_type, &shape.dims, &what)?;
            arrays.push(argument.clone());
        }
        values.push(match &instr.shape {
            HloShape::Array(_) => Value::Array(arrays.remove(0)),
            HloShape::Tuple(_) => Value::Tuple(arrays),
        });
    }
    if given.next().is_some() {
        return Err(EvalError::Arguments {
            reason: format!("{} arguments given, too many", arguments.len()),
        });
    }
    let evaluator = Evaluator { module, options, depth: std::cell::Cell::new(0) };
    Ok(evaluator.computation(module.entry_id(), values)?.into_arrays())
}

/// Evaluates computations of one module.
pub(crate) struct Evaluator<'m> {
    pub(crate) module: &'m HloModule,
    pub(crate) options: &'m EvalOptions,
    /// How deeply calls are nested at the moment (at most [`MAX_CALL_DEPTH`]).
    depth: std::cell::Cell<usize>,
}

/// The deepest nesting of fusions, calls and reducers the evaluator follows.
pub const MAX_CALL_DEPTH: usize = 64;

/// Where an op failed, before the instruction is named.
pub(crate) type OpResult<T> = Result<T, String>;

impl Evaluator<'_> {
    /// Evaluates a computation on its parameters' values (by parameter number).
    pub(crate) fn computation(&self, id: ComputationId, params: Vec<Value>) -> Result<Value, EvalError> {
        let computation = &self.module.computations()[id.0];
        if self.depth.get() >= MAX_CALL_DEPTH {
            return Err(EvalError::Unsupported {
                computation: computation.name.clone(),
                instruction: computation.root_instruction().map(|r| r.name.clone()).unwrap_or_default(),
                reason: format!("fusions, calls and reducers nest more than {MAX_CALL_DEPTH} deep"),
            });
        }
        self.depth.set(self.depth.get() + 1);
        let result = self.computation_body(computation, params);
        self.depth.set(self.depth.get() - 1);
        result
    }

    fn computation_body(&self, computation: &HloComputation, params: Vec<Value>) -> Result<Value, EvalError> {
        let n = computation.instructions.len();
        // The last instruction that reads each value, so values are dropped once read.
        let mut last_use = vec![0usize; n];
        for (i, instr) in computation.instructions.iter().enumerate() {
            for operand in &instr.operands {
                last_use[operand.0] = i;
            }
        }
        last_use[computation.root.0] = usize::MAX;
        let mut params: Vec<Option<Value>> = params.into_iter().map(Some).collect();
        let mut values: Vec<Option<Value>> = vec![None; n];
        for (i, instr) in computation.instructions.iter().enumerate() {
            let value = if let HloOp::Parameter { number } = instr.op {
                params.get_mut(number).and_then(Option::take).ok_or_else(|| EvalError::Arguments {
                    reason: format!("no value for parameter {number} of `{}`", computation.name),
                })?
            } else {
                let operands: Vec<&Value> = instr
                    .operands
                    .iter()
                    .map(|o| {
                        values[o.0]
                            .as_ref()
                            .expect("operands are evaluated before use and kept until their last use")
                    })
                    .collect();
                self.check_size(computation, instr)?;
                self.instruction(computation, instr, &operands)?
            };
            values[i] = Some(value);
            for operand in &instr.operands {
                if last_use[operand.0] == i {
                    values[operand.0] = None;
                }
            }
        }
        Ok(values[computation.root.0].take().expect("the root is evaluated and kept"))
    }

    fn check_size(&self, computation: &HloComputation, instr: &HloInstruction) -> Result<(), EvalError> {
        for array in instr.shape.arrays() {
            let elements =
                array.dims.iter().fold(1u128, |v, &d| v.saturating_mul(u128::try_from(d).unwrap_or(0)));
            if elements > self.options.max_elements as u128 {
                return Err(EvalError::TooLarge {
                    computation: computation.name.clone(),
                    instruction: instr.name.clone(),
                    elements,
                    limit: self.options.max_elements,
                });
            }
        }
        Ok(())
    }

    fn instruction(
        &self,
        computation: &HloComputation,
        instr: &HloInstruction,
        operands: &[&Value],
    ) -> Result<Value, EvalError> {
        let unsupported = |reason: String| EvalError::Unsupported {
            computation: computation.name.clone(),
            instruction: instr.name.clone(),
            reason,
        };
        let arrays = || -> Result<Vec<&Array>, EvalError> {
            operands
                .iter()
                .map(|v| match v {
                    Value::Array(a) => Ok(a),
                    Value::Tuple(_) => Err(unsupported("a tuple operand where an array is needed".into())),
                })
                .collect()
        };
        let result = || {
            instr
                .shape
                .as_array()
                .ok_or_else(|| unsupported("a tuple result where an array is needed".into()))
        };
        let array = |r: OpResult<Array>| r.map(Value::Array).map_err(unsupported);
        match &instr.op {
            HloOp::Parameter { .. } => Err(unsupported("a parameter outside its place".into())),
            HloOp::Constant { literal, .. } => match literal {
                Some(literal) => Ok(Value::Array(Array::from_literal(literal))),
                None => Err(unsupported(
                    "the constant's values are not in the module (printed as `{...}`, or a tuple or complex \
                     constant): dump the module with its large constants"
                        .into(),
                )),
            },
            HloOp::Elementwise(op) => array(movement::elementwise(self, *op, result()?, &arrays()?)),
            HloOp::Iota { dimension } => array(movement::iota(result()?, *dimension)),
            HloOp::Broadcast { dimensions } => {
                array(movement::broadcast(arrays()?[0], result()?, dimensions))
            }
            HloOp::Transpose { dimensions } => array(movement::transpose(arrays()?[0], dimensions)),
            HloOp::Reverse { dimensions } => array(movement::reverse(arrays()?[0], dimensions)),
            HloOp::Reshape => array(Ok(movement::reshape(arrays()?[0], &result()?.dims))),
            HloOp::Bitcast => {
                let operand = &computation.instructions[instr.operands[0].0].shape;
                let from = operand.as_array().ok_or_else(|| unsupported("a bitcast of a tuple".into()))?;
                array(Ok(movement::bitcast(arrays()?[0], from, result()?)))
            }
            HloOp::Slice { dims } => array(Ok(movement::slice(arrays()?[0], dims))),
            HloOp::Concatenate { dimension } => array(Ok(movement::concatenate(&arrays()?, *dimension))),
            HloOp::Pad { dims } => {
                array(Ok(movement::pad(arrays()?[0], arrays()?[1], dims, &result()?.dims)))
            }
            HloOp::DynamicSlice { sizes } => array(movement::dynamic_slice(&arrays()?, sizes)),
            HloOp::DynamicUpdateSlice => array(movement::dynamic_update_slice(&arrays()?)),
            HloOp::Gather(dims) => array(movement::gather(arrays()?[0], arrays()?[1], dims, result()?)),
            HloOp::Dot(dims) => {
                array(contract::dot(arrays()?[0], arrays()?[1], dims, result()?, self.options))
            }
            HloOp::Convolution { window, dims, feature_group_count, batch_group_count } => {
                let conv = contract::Convolution {
                    window,
                    dims,
                    feature_group_count: *feature_group_count,
                    batch_group_count: *batch_group_count,
                };
                array(contract::convolution(arrays()?[0], arrays()?[1], &conv, result()?, self.options))
            }
            HloOp::Reduce { dimensions, to_apply } => {
                reduce::reduce(self, &arrays()?, dimensions, *to_apply, &instr.shape)
                    .map_err(|e| e.at(computation, instr))
            }
            HloOp::ReduceWindow { window, to_apply } => {
                reduce::reduce_window(self, &arrays()?, window, *to_apply, &instr.shape)
                    .map_err(|e| e.at(computation, instr))
            }
            HloOp::Map { to_apply } => reduce::map(self, &arrays()?, *to_apply, result()?)
                .map(Value::Array)
                .map_err(|e| e.at(computation, instr)),
            HloOp::Fusion { calls: callee } | HloOp::Call { to_apply: callee } => {
                self.computation(*callee, operands.iter().map(|v| (*v).clone()).collect())
            }
            HloOp::Tuple => Ok(Value::Tuple(arrays()?.into_iter().cloned().collect())),
            HloOp::GetTupleElement { index } => match operands[0] {
                Value::Tuple(elements) => elements
                    .get(*index)
                    .cloned()
                    .map(Value::Array)
                    .ok_or_else(|| unsupported(format!("no tuple element {index}"))),
                Value::Array(_) => Err(unsupported("get-tuple-element of an array".into())),
            },
            HloOp::Unknown { opcode } => Err(unsupported(format!(
                "`{opcode}` is not evaluated (ops of the model are: every elementwise op, data movement, \
                 reductions, dot, convolution, gather, calls and fusions)"
            ))),
        }
    }
}

/// An error inside an op that evaluates a computation: either already an [`EvalError`] (from
/// the callee) or a message about this instruction.
pub(crate) enum NestedError {
    Eval(Box<EvalError>),
    Here(String),
}

impl NestedError {
    fn at(self, computation: &HloComputation, instr: &HloInstruction) -> EvalError {
        match self {
            NestedError::Eval(e) => *e,
            NestedError::Here(reason) => EvalError::Unsupported {
                computation: computation.name.clone(),
                instruction: instr.name.clone(),
                reason,
            },
        }
    }
}

impl From<EvalError> for NestedError {
    fn from(e: EvalError) -> Self {
        NestedError::Eval(Box::new(e))
    }
}

impl From<String> for NestedError {
    fn from(e: String) -> Self {
        NestedError::Here(e)
    }
}
