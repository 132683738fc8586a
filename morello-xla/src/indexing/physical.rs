//! Indexing maps between *physical* indices: an array's dimensions in memory order, most major
//! first (the reverse of its `minor_to_major`), as XLA's `use_physical_layout` option gives
//! them. The logical maps of `analysis.rs`, composed with each shape's layout permutation:
//!
//! ```text
//! physical output -> logical output -> (the instruction's map) -> logical operand -> physical operand
//! f32[10,20,30]{1,0,2}: physical (p0, p1, p2) is logical (p1, p2, p0), p0 over 30 values
//! ```

use crate::hlo::{ArrayShape, ComputationId, HloComputation, HloInstruction, HloModule, InstrId};

use super::map::var_index;
use super::{IndexingError, IndexingMap, OperandMaps, OutputMaps, compose, input_to_output, output_to_input};
use morello_core::expr::{IndexExpr, Interval};

/// [`output_to_input`] between physical indices: from output `output` of an instruction, in
/// its memory order, to each operand array in its memory order.
///
/// # Errors
/// As [`output_to_input`].
pub fn physical_output_to_input(
    module: &HloModule,
    computation: ComputationId,
    instruction: InstrId,
    output: usize,
) -> Result<Vec<OperandMaps>, IndexingError> {
    let instr = Instruction::find(module, computation, instruction)?;
    let out_shape = array(instr.instr.shape.arrays(), output)?;
    let mut maps = output_to_input(module, computation, instruction, output)?;
    for entry in &mut maps {
        let in_shape = array(instr.operand(entry.operand)?.shape.arrays(), entry.operand_output)?;
        to_physical(&mut entry.maps, out_shape, in_shape)?;
    }
    Ok(maps)
}

/// [`input_to_output`] between physical indices: from each array of operand `operand`, in its
/// memory order, to each output in its memory order.
///
/// # Errors
/// As [`input_to_output`].
pub fn physical_input_to_output(
    module: &HloModule,
    computation: ComputationId,
    instruction: InstrId,
    operand: usize,
) -> Result<Vec<OutputMaps>, IndexingError> {
    let instr = Instruction::find(module, computation, instruction)?;
    let operand_instr = instr.operand(operand)?;
    let mut maps = input_to_output(module, computation, instruction, operand)?;
    for entry in &mut maps {
        let in_shape = array(operand_instr.shape.arrays(), entry.operand_output)?;
        let out_shape = array(instr.instr.shape.arrays(), entry.output)?;
        to_physical(&mut entry.maps, in_shape, out_shape)?;
    }
    Ok(maps)
}

/// An instruction found by its ids, with its computation to find its operands.
struct Instruction<'m> {
    computation: &'m HloComputation,
    computation_id: ComputationId,
    instr: &'m HloInstruction,
}

impl<'m> Instruction<'m> {
    fn find(module: &'m HloModule, computation: ComputationId, id: InstrId) -> Result<Self, IndexingError> {
        let comp = module.computation(computation).ok_or_else(|| no_such(computation))?;
        let instr = comp.instruction(id).ok_or_else(|| no_such(computation))?;
        Ok(Instruction { computation: comp, computation_id: computation, instr })
    }

    /// The instruction that is operand `position`.
    fn operand(&self, position: usize) -> Result<&'m HloInstruction, IndexingError> {
        let operand = self.instr.operands.get(position).and_then(|id| self.computation.instruction(*id));
        operand.ok_or_else(|| no_such(self.computation_id))
    }
}

fn no_such(computation: ComputationId) -> IndexingError {
    IndexingError::NoSuch(format!("an instruction or operand in computation {}", computation.0))
}

/// Turns logical maps from `from` to `to` into maps between their physical indices.
fn to_physical(maps: &mut [IndexingMap], from: &ArrayShape, to: &ArrayShape) -> Result<(), IndexingError> {
    for map in maps {
        let logical = compose(&physical_to_logical(from), map)?;
        *map = compose(&logical, &logical_to_physical(to))?.simplify()?;
    }
    Ok(())
}

fn array(arrays: &[ArrayShape], index: usize) -> Result<&ArrayShape, IndexingError> {
    arrays.get(index).ok_or_else(|| IndexingError::NoSuch(format!("array {index} of a tuple")))
}

/// `(p...) -> (logical index)`, over the physical sizes: physical dim `k` is logical dim
/// `major_to_minor[k]`.
fn physical_to_logical(shape: &ArrayShape) -> IndexingMap {
    let order = shape.major_to_minor();
    let mut results = vec![IndexExpr::constant(0); order.len()];
    for (k, &logical) in order.iter().enumerate() {
        results[logical] = IndexExpr::dim(var_index(k));
    }
    let ranges = order.iter().map(|&logical| Interval::indices(shape.dims[logical])).collect();
    IndexingMap { dim_ranges: ranges, symbol_ranges: Vec::new(), results, constraints: Vec::new() }
}

/// `(d...) -> (physical index)`, over the logical sizes.
fn logical_to_physical(shape: &ArrayShape) -> IndexingMap {
    let results = shape.major_to_minor().iter().map(|&logical| IndexExpr::dim(var_index(logical))).collect();
    let ranges = shape.dims.iter().map(|&size| Interval::indices(size)).collect();
    IndexingMap { dim_ranges: ranges, symbol_ranges: Vec::new(), results, constraints: Vec::new() }
}
