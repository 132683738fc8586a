//! The entry points of the analysis: the maps of an instruction, and of a whole computation.
//!
//! This is the one place that joins the maps of single ops (`ops/`) with composition through a
//! computation (`fusion.rs`): a fusion's maps are those of the computation it calls, whose
//! instructions may be fusions again. Nothing here recurses, so a chain of fusions nested any
//! depth deep needs no stack:
//!
//! ```text
//! query    a walk (fusion.rs) asks each instruction's maps; a fusion's are looked up in the
//!          maps of called computations computed so far (`Callees`)
//! missing  a fusion whose callee's maps are not there yet stops the walk and names them; they
//!          are computed first, on an explicit stack (a callee's own walk may name its callees
//!          in turn), then the walk runs again
//! ```
//!
//! Each called computation's maps are computed once per query (the walk that stopped is run
//! again, once per missing callee), and errors are kept with them, so a callee whose maps fail is
//! an error only for a query that reaches it.

use std::cell::Cell;
use std::collections::HashMap;

use crate::hlo::{ComputationId, HloComputation, HloModule, InstrId};

use super::fusion::{output_to_parameters, output_to_values, value_to_outputs};
use super::ops::{Op, OpMaps, op_input_to_output, op_output_to_input};
use super::{IndexingError, OperandMaps, OutputMaps, ValueMaps};

/// The maps from output `output` of an instruction to every array of its operands it reads.
///
/// For a fusion, the maps are composed through the called computation, one list per
/// parameter, each deduplicated after simplification.
///
/// # Errors
/// [`IndexingError::NoSuch`] if the computation, instruction or output does not exist;
/// [`IndexingError::TooManyMaps`] if a fusion reads a value in too many distinct ways;
/// [`IndexingError::Arithmetic`] on overflow.
pub fn output_to_input(
    module: &HloModule,
    computation: ComputationId,
    instruction: InstrId,
    output: usize,
) -> Result<Vec<OperandMaps>, IndexingError> {
    let comp = lookup(module, computation)?;
    Callees::run(module, |callees| callees.output_to_input(comp, instruction, output))
}

/// The maps from every array of operand `operand` of an instruction to the outputs that read
/// it.
///
/// # Errors
/// As [`output_to_input`], and [`IndexingError::NoSuch`] if the operand does not exist.
pub fn input_to_output(
    module: &HloModule,
    computation: ComputationId,
    instruction: InstrId,
    operand: usize,
) -> Result<Vec<OutputMaps>, IndexingError> {
    let computation = lookup(module, computation)?;
    let arrays = Op::new(computation, instruction)?.operand_instruction(operand)?.shape.arrays().len();
    Callees::run(module, |callees| {
        let mut out = Vec::new();
        for operand_output in 0..arrays {
            out.extend(callees.input_to_output(computation, instruction, operand, operand_output)?);
        }
        Ok(out)
    })
}

/// The maps from output `output` of a computation's root to every array of every parameter,
/// one entry per parameter array in parameter order (a parameter the output never reads has an
/// empty list). For a fusion instruction, the parameters are its operands.
///
/// # Errors
/// [`IndexingError::NoSuch`] if the computation or output does not exist;
/// [`IndexingError::TooManyMaps`] if a value collects more than
/// [`MAX_MAPS_PER_VALUE`](super::MAX_MAPS_PER_VALUE) maps; [`IndexingError::Arithmetic`] on
/// overflow.
pub fn computation_output_to_parameters(
    module: &HloModule,
    computation: ComputationId,
    output: usize,
) -> Result<Vec<OperandMaps>, IndexingError> {
    let comp = lookup(module, computation)?;
    Callees::run(module, |callees| callees.output_to_parameters(comp, output))
}

/// The maps from array `parameter_output` of parameter `parameter` of a computation to every
/// output of its root, one entry per root output (an output that never reads the parameter has
/// an empty list).
///
/// # Errors
/// As [`computation_output_to_parameters`], and [`IndexingError::NoSuch`] if the parameter does
/// not exist.
pub fn computation_parameter_to_outputs(
    module: &HloModule,
    computation: ComputationId,
    parameter: usize,
    parameter_output: usize,
) -> Result<Vec<OutputMaps>, IndexingError> {
    let comp = lookup(module, computation)?;
    Callees::run(module, |callees| callees.parameter_to_outputs(comp, parameter, parameter_output))
}

/// The maps from output `output` of one instruction of a computation to every value of the
/// computation it reads, directly or through other instructions, itself included (the
/// identity), in definition order: XLA's `ComputeGroupedOutputToInputIndexing`. A value read
/// in several ways has several maps.
///
/// # Errors
/// As [`computation_output_to_parameters`], and [`IndexingError::NoSuch`] if the instruction or
/// output does not exist.
pub fn computation_output_to_values(
    module: &HloModule,
    computation: ComputationId,
    instruction: InstrId,
    output: usize,
) -> Result<Vec<ValueMaps>, IndexingError> {
    let comp = lookup(module, computation)?;
    Callees::run(module, |callees| {
        output_to_values(comp, instruction, output, |id, out| callees.output_to_input(comp, id, out))
    })
}

/// The maps from output `output` of one instruction of a computation to every output of the
/// computation's root that reads it (XLA's epilogue indexing,
/// `ComputeEpilogueInputToOutputIndexing`, from the instruction to the root); one entry per
/// root output.
///
/// # Errors
/// As [`computation_output_to_values`].
pub fn computation_value_to_outputs(
    module: &HloModule,
    computation: ComputationId,
    instruction: InstrId,
    output: usize,
) -> Result<Vec<OutputMaps>, IndexingError> {
    let comp = lookup(module, computation)?;
    Callees::run(module, |callees| {
        value_to_outputs(comp, instruction, output, |id, operand, operand_output| {
            callees.input_to_output(comp, id, operand, operand_output)
        })
    })
}

/// The maps of a called computation that a walk needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    /// From output `.1` of computation `.0`'s root to its parameters.
    Output(ComputationId, usize),
    /// From array `.2` of parameter `.1` of computation `.0` to its root's outputs.
    Parameter(ComputationId, usize, usize),
}

/// The maps of the computations that fusions call, computed callees first, and the one a walk
/// found missing.
struct Callees<'m> {
    module: &'m HloModule,
    outputs: HashMap<(ComputationId, usize), Result<Vec<OperandMaps>, IndexingError>>,
    parameters: HashMap<(ComputationId, usize, usize), Result<Vec<OutputMaps>, IndexingError>>,
    /// Set by a lookup that found a callee's maps missing (the walk then returns an error that
    /// is never shown: the maps are computed and the walk runs again).
    missing: Cell<Option<Key>>,
}

impl<'m> Callees<'m> {
    /// Runs `query` until no callee's maps it needs are missing, computing them in between.
    fn run<T>(
        module: &'m HloModule,
        query: impl Fn(&Callees<'m>) -> Result<T, IndexingError>,
    ) -> Result<T, IndexingError> {
        let mut callees =
            Callees { module, outputs: HashMap::new(), parameters: HashMap::new(), missing: Cell::new(None) };
        loop {
            let result = query(&callees);
            match callees.missing.take() {
                None => return result,
                Some(key) => callees.compute(key),
            }
        }
    }

    /// Computes the maps `key` names, and first every callee's they need, on an explicit stack.
    fn compute(&mut self, key: Key) {
        let mut stack = vec![key];
        while let Some(&key) = stack.last() {
            if self.has(key) {
                stack.pop();
                continue;
            }
            match key {
                Key::Output(computation, output) => {
                    let result = lookup(self.module, computation)
                        .and_then(|comp| self.output_to_parameters(comp, output));
                    match self.missing.take() {
                        Some(callee) => stack.push(callee),
                        None => {
                            self.outputs.insert((computation, output), result);
                        }
                    }
                }
                Key::Parameter(computation, parameter, array) => {
                    let result = lookup(self.module, computation)
                        .and_then(|comp| self.parameter_to_outputs(comp, parameter, array));
                    match self.missing.take() {
                        Some(callee) => stack.push(callee),
                        None => {
                            self.parameters.insert((computation, parameter, array), result);
                        }
                    }
                }
            }
        }
    }

    fn has(&self, key: Key) -> bool {
        match key {
            Key::Output(c, o) => self.outputs.contains_key(&(c, o)),
            Key::Parameter(c, p, a) => self.parameters.contains_key(&(c, p, a)),
        }
    }

    /// Says that the walk in progress needs `key`'s maps first; the error it returns is dropped.
    fn need(&self, key: Key) -> IndexingError {
        self.missing.set(Some(key));
        IndexingError::NoSuch("the maps of a called computation (computed first)".into())
    }

    fn output_to_parameters(
        &self,
        comp: &HloComputation,
        output: usize,
    ) -> Result<Vec<OperandMaps>, IndexingError> {
        output_to_parameters(comp, output, |id, out| self.output_to_input(comp, id, out))
    }

    fn parameter_to_outputs(
        &self,
        comp: &HloComputation,
        parameter: usize,
        parameter_output: usize,
    ) -> Result<Vec<OutputMaps>, IndexingError> {
        let param = *comp.parameters().get(parameter).ok_or_else(|| {
            IndexingError::NoSuch(format!("parameter {parameter} of computation `{}`", comp.name))
        })?;
        value_to_outputs(comp, param, parameter_output, |id, operand, operand_output| {
            self.input_to_output(comp, id, operand, operand_output)
        })
    }

    /// The output-to-input maps of one instruction (a fusion's from its callee's, if computed).
    fn output_to_input(
        &self,
        computation: &HloComputation,
        id: InstrId,
        output: usize,
    ) -> Result<Vec<OperandMaps>, IndexingError> {
        match op_output_to_input(computation, id, output)? {
            OpMaps::Maps(maps) => Ok(maps),
            OpMaps::Calls(callee) => match self.outputs.get(&(callee, output)) {
                Some(result) => result.clone(),
                None => Err(self.need(Key::Output(callee, output))),
            },
        }
    }

    /// The input-to-output maps of one instruction (a fusion's from its callee's, if computed).
    fn input_to_output(
        &self,
        computation: &HloComputation,
        id: InstrId,
        operand: usize,
        operand_output: usize,
    ) -> Result<Vec<OutputMaps>, IndexingError> {
        match op_input_to_output(computation, id, operand, operand_output)? {
            OpMaps::Maps(maps) => Ok(maps),
            OpMaps::Calls(callee) => match self.parameters.get(&(callee, operand, operand_output)) {
                Some(result) => result.clone(),
                None => Err(self.need(Key::Parameter(callee, operand, operand_output))),
            },
        }
    }
}

fn lookup(module: &HloModule, id: ComputationId) -> Result<&HloComputation, IndexingError> {
    module.computation(id).ok_or_else(|| IndexingError::NoSuch(format!("computation {}", id.0)))
}
