//! The entry points of the analysis: the maps of an instruction, and of a whole computation.
//!
//! This is the one place that joins the maps of single ops (`ops/`) with composition through a
//! computation (`fusion.rs`): a fusion's maps are those of the computation it calls, whose
//! instructions may be fusions again, so the recursion lives here and neither of the two
//! depends on the other.

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
    instruction_output_to_input(module, lookup(module, computation)?, instruction, output)
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
    let mut out = Vec::new();
    for operand_output in 0..arrays {
        out.extend(instruction_input_to_output(module, computation, instruction, operand, operand_output)?);
    }
    Ok(out)
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
    output_to_parameters(comp, output, |id, out| instruction_output_to_input(module, comp, id, out))
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
    let param = *comp.parameters().get(parameter).ok_or_else(|| {
        IndexingError::NoSuch(format!("parameter {parameter} of computation `{}`", comp.name))
    })?;
    value_to_outputs(comp, param, parameter_output, |id, operand, operand_output| {
        instruction_input_to_output(module, comp, id, operand, operand_output)
    })
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
    output_to_values(comp, instruction, output, |id, out| instruction_output_to_input(module, comp, id, out))
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
    value_to_outputs(comp, instruction, output, |id, operand, operand_output| {
        instruction_input_to_output(module, comp, id, operand, operand_output)
    })
}

fn instruction_output_to_input(
    module: &HloModule,
    computation: &HloComputation,
    id: InstrId,
    output: usize,
) -> Result<Vec<OperandMaps>, IndexingError> {
    match op_output_to_input(computation, id, output)? {
        OpMaps::Maps(maps) => Ok(maps),
        OpMaps::Calls(callee) => computation_output_to_parameters(module, callee, output),
    }
}

fn instruction_input_to_output(
    module: &HloModule,
    computation: &HloComputation,
    id: InstrId,
    operand: usize,
    operand_output: usize,
) -> Result<Vec<OutputMaps>, IndexingError> {
    match op_input_to_output(computation, id, operand, operand_output)? {
        OpMaps::Maps(maps) => Ok(maps),
        OpMaps::Calls(callee) => computation_parameter_to_outputs(module, callee, operand, operand_output),
    }
}

fn lookup(module: &HloModule, id: ComputationId) -> Result<&HloComputation, IndexingError> {
    module.computation(id).ok_or_else(|| IndexingError::NoSuch(format!("computation {}", id.0)))
}
