//! Indexing maps through a whole computation: the composition of the maps of its instructions.
//!
//! Output-to-input walks the instructions from the root (or any instruction) back to the
//! parameters (reverse
//! definition order, so every user of a value is done before the value). Each value collects the
//! maps from the root output to it: for every map `a` reaching an instruction and every map `m`
//! of that instruction to one of its operands, `compose(a, m)` reaches the operand.
//! Input-to-output walks forward from one parameter (or any instruction) to the root the same
//! way.
//!
//! A value read along several paths keeps one map per distinct way it is read (the seed's
//! `p0 + transpose(p0)` has two); maps equal after simplification are kept once (the seed's
//! chain of transposes has one), and maps known to be empty are dropped (they relate nothing).
//!
//! An op without a map (an edge whose [`Completeness`] is `Unknown`) makes its operand's maps
//! unknown, and so everything reached from there: the result for a parameter is then the maps
//! found along the other paths, marked `Unknown`.
//!
//! The walks take the maps of one instruction from their caller (`analysis.rs`, which recurses
//! into nested fusions through them), so this file depends on no op.

use crate::hlo::{HloComputation, HloOp, InstrId};

use super::{Completeness, IndexingError, IndexingMap, OperandMaps, OutputMaps, ValueMaps, compose};

/// The most distinct maps one value of a computation may collect before the analysis gives up
/// with [`IndexingError::TooManyMaps`].
pub const MAX_MAPS_PER_VALUE: usize = 256;

/// The maps from output `output` of a computation's root to every array of every parameter
/// (see `computation_output_to_parameters`), given the output-to-input maps of one
/// instruction, `maps_of(instruction, output)`.
pub(super) fn output_to_parameters(
    comp: &HloComputation,
    output: usize,
    maps_of: impl Fn(InstrId, usize) -> Result<Vec<OperandMaps>, IndexingError>,
) -> Result<Vec<OperandMaps>, IndexingError> {
    let sets = walk_back(comp, comp.root, output, maps_of)?;
    Ok(comp
        .parameters()
        .into_iter()
        .enumerate()
        .flat_map(|(number, id)| {
            let arrays = sets.maps[id.0].clone();
            let unknown = sets.unknown[id.0].clone();
            arrays.into_iter().zip(unknown).enumerate().map(move |(operand_output, (maps, unknown))| {
                OperandMaps { operand: number, operand_output, maps, completeness: completeness(unknown) }
            })
        })
        .collect())
}

/// The maps from output `output` of instruction `start` to every value of the computation it
/// reads, itself included (the identity), in definition order (see
/// `computation_output_to_values`).
pub(super) fn output_to_values(
    comp: &HloComputation,
    start: InstrId,
    output: usize,
    maps_of: impl Fn(InstrId, usize) -> Result<Vec<OperandMaps>, IndexingError>,
) -> Result<Vec<ValueMaps>, IndexingError> {
    let sets = walk_back(comp, start, output, maps_of)?;
    let mut out = Vec::new();
    for (index, (arrays, unknown)) in sets.maps.into_iter().zip(sets.unknown).enumerate() {
        for (output, (maps, unknown)) in arrays.into_iter().zip(unknown).enumerate() {
            if !maps.is_empty() || unknown {
                out.push(ValueMaps {
                    instruction: InstrId(index),
                    output,
                    maps,
                    completeness: completeness(unknown),
                });
            }
        }
    }
    Ok(out)
}

/// Walks from output `output` of `start` back to everything it reads.
fn walk_back<'a>(
    comp: &'a HloComputation,
    start: InstrId,
    output: usize,
    maps_of: impl Fn(InstrId, usize) -> Result<Vec<OperandMaps>, IndexingError>,
) -> Result<Sets<'a>, IndexingError> {
    let mut sets = Sets::new(comp);
    let start_shape =
        comp.instruction(start).and_then(|r| r.shape.arrays().get(output)).ok_or_else(|| {
            IndexingError::NoSuch(format!("output {output} of instruction {} of `{}`", start.0, comp.name))
        })?;
    sets.add(start, output, IndexingMap::identity(&start_shape.dims))?;
    for index in (0..=start.0).rev() {
        let id = InstrId(index);
        let instr = &comp.instructions[index];
        if matches!(instr.op, HloOp::Parameter { .. }) {
            continue;
        }
        for out in 0..instr.shape.arrays().len() {
            let reaching = std::mem::take(&mut sets.maps[index][out]);
            let unknown = sets.unknown[index][out];
            if reaching.is_empty() && !unknown {
                continue;
            }
            for edge in maps_of(id, out)? {
                let Some(&target) = instr.operands.get(edge.operand) else { continue };
                if unknown || edge.completeness == Completeness::Unknown {
                    sets.mark_unknown(target, edge.operand_output);
                }
                for a in &reaching {
                    for m in &edge.maps {
                        sets.add(target, edge.operand_output, compose(a, m)?)?;
                    }
                }
            }
            sets.maps[index][out] = reaching;
        }
    }
    Ok(sets)
}

/// The maps from array `start_output` of instruction `start` of a computation to every output
/// of its root (see `computation_parameter_to_outputs`), given the input-to-output maps of one
/// instruction, `maps_of(instruction, operand, operand_output)`.
pub(super) fn value_to_outputs(
    comp: &HloComputation,
    start: InstrId,
    start_output: usize,
    maps_of: impl Fn(InstrId, usize, usize) -> Result<Vec<OutputMaps>, IndexingError>,
) -> Result<Vec<OutputMaps>, IndexingError> {
    let shape =
        comp.instruction(start).and_then(|i| i.shape.arrays().get(start_output)).ok_or_else(|| {
            IndexingError::NoSuch(format!(
                "output {start_output} of instruction {} of `{}`",
                start.0, comp.name
            ))
        })?;
    let mut sets = Sets::new(comp);
    sets.add(start, start_output, IndexingMap::identity(&shape.dims))?;
    for index in start.0 + 1..comp.instructions.len() {
        let instr = &comp.instructions[index];
        for (position, operand) in instr.operands.iter().enumerate() {
            for operand_output in 0..sets.maps[operand.0].len() {
                let reaching = sets.maps[operand.0][operand_output].clone();
                let unknown = sets.unknown[operand.0][operand_output];
                if reaching.is_empty() && !unknown {
                    continue;
                }
                for edge in maps_of(InstrId(index), position, operand_output)? {
                    if unknown || edge.completeness == Completeness::Unknown {
                        sets.mark_unknown(InstrId(index), edge.output);
                    }
                    for a in &reaching {
                        for m in &edge.maps {
                            sets.add(InstrId(index), edge.output, compose(a, m)?)?;
                        }
                    }
                }
            }
        }
    }
    let root = &sets.maps[comp.root.0];
    let unknown = &sets.unknown[comp.root.0];
    Ok(root
        .iter()
        .zip(unknown)
        .enumerate()
        .map(|(output, (maps, &unknown))| OutputMaps {
            operand_output: start_output,
            output,
            maps: maps.clone(),
            completeness: completeness(unknown),
        })
        .collect())
}

fn completeness(unknown: bool) -> Completeness {
    if unknown { Completeness::Unknown } else { Completeness::Complete }
}

/// The maps reaching every array of every instruction.
struct Sets<'a> {
    computation: &'a HloComputation,
    maps: Vec<Vec<Vec<IndexingMap>>>,
    /// Whether a path through an op without a map reaches each array.
    unknown: Vec<Vec<bool>>,
}

impl<'a> Sets<'a> {
    fn new(computation: &'a HloComputation) -> Self {
        let maps =
            computation.instructions.iter().map(|i| vec![Vec::new(); i.shape.arrays().len()]).collect();
        let unknown = computation.instructions.iter().map(|i| vec![false; i.shape.arrays().len()]).collect();
        Sets { computation, maps, unknown }
    }

    /// Marks an array as reached through an op without a map.
    fn mark_unknown(&mut self, id: InstrId, output: usize) {
        if let Some(flag) = self.unknown.get_mut(id.0).and_then(|outputs| outputs.get_mut(output)) {
            *flag = true;
        }
    }

    /// Adds a map unless it is known empty or already present.
    fn add(&mut self, id: InstrId, output: usize, map: IndexingMap) -> Result<(), IndexingError> {
        if map.is_known_empty() {
            return Ok(());
        }
        let Some(set) = self.maps.get_mut(id.0).and_then(|outputs| outputs.get_mut(output)) else {
            return Err(IndexingError::NoSuch(format!("output {output} of instruction {}", id.0)));
        };
        if set.contains(&map) {
            return Ok(());
        }
        if set.len() >= MAX_MAPS_PER_VALUE {
            let instruction = self.computation.instructions[id.0].name.clone();
            return Err(IndexingError::TooManyMaps { instruction, limit: MAX_MAPS_PER_VALUE });
        }
        set.push(map);
        Ok(())
    }
}
