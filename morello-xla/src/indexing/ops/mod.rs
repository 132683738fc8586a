//! The indexing maps of one HLO instruction, in both directions, as seed 003 defines them.
//!
//! *Output-to-input*: for one output array of the instruction (the instruction's result, or
//! one element of a tuple result), a map from an output index to the indices of each operand
//! it reads. *Input-to-output*: for one operand array, a map from an operand index to the
//! output indices that read it. The two directions relate the same pairs, swapped.
//!
//! Ops without operands (parameter, constant, iota) have no maps. Elementwise ops, tuple and
//! get-tuple-element are identities; every other op has a file here. For a fusion this module
//! only names the called computation; `analysis.rs` composes its maps (with `fusion.rs`). Every map returned is simplified; maps of a
//! single op may be empty (a zero-sized operand), maps composed through a fusion never are.
//!
//! Scalar operands that supply a value rather than data (the init of a reduce or
//! reduce-window, the padding value of a pad) are read by every output element.

mod broadcast;
mod concatenate;
mod convolution;
mod dot;
mod dynamic_slice;
mod gather;
mod pad;
mod reduce;
mod reduce_window;
mod reshape;
mod reverse;
mod slice;
mod transpose;

use crate::hlo::{ArrayShape, ComputationId, HloComputation, HloInstruction, HloOp, InstrId};
use morello_core::expr::{IndexExpr, Interval};

use super::map::var_index;
use super::{IndexingError, IndexingMap};

/// Whether a list of maps is the whole relation, or an op on the way has no map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Completeness {
    /// The maps are the whole relation (none at all: XLA's KNOWN EMPTY).
    Complete,
    /// Some path goes through an op without a map (XLA's undefined map): the maps list only
    /// what is known, and more may be related.
    Unknown,
}

/// The maps from one output of an instruction to one array of one of its operands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandMaps {
    /// The operand position (for a fusion, also the callee's parameter number).
    pub operand: usize,
    /// Which array of the operand: 0, or the tuple element of a tuple-shaped operand.
    pub operand_output: usize,
    /// The distinct maps, in the order they were found; their union is what is read.
    pub maps: Vec<IndexingMap>,
    /// Whether `maps` is everything that is read.
    pub completeness: Completeness,
}

/// The maps from one array of one operand of an instruction to one of its outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputMaps {
    /// Which array of the operand the maps start from.
    pub operand_output: usize,
    /// Which output of the instruction: 0, or the tuple element of a tuple result.
    pub output: usize,
    /// The distinct maps, in the order they were found; their union is what is written.
    pub maps: Vec<IndexingMap>,
    /// Whether `maps` is everything that is written.
    pub completeness: Completeness,
}

/// The maps from one output of an instruction to one value of its computation that it reads
/// (directly or through other instructions): XLA's grouped output-to-input indexing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueMaps {
    /// The instruction whose value is read.
    pub instruction: InstrId,
    /// Which array of it: 0, or the tuple element of a tuple result.
    pub output: usize,
    /// The distinct maps, in the order they were found; their union is what is read.
    pub maps: Vec<IndexingMap>,
    /// Whether `maps` is everything that is read.
    pub completeness: Completeness,
}

/// The maps of one instruction: its own, or, for a fusion, those of the computation it calls
/// (which the caller composes; this module knows nothing of computations).
pub(super) enum OpMaps<T> {
    /// The instruction's maps, simplified.
    Maps(Vec<T>),
    /// A fusion: the maps are those of this computation's root and parameters.
    Calls(ComputationId),
}

/// One instruction in its context, with checked access to its shapes.
pub(super) struct Op<'a> {
    computation: &'a HloComputation,
    instr: &'a HloInstruction,
}

impl<'a> Op<'a> {
    pub(super) fn new(computation: &'a HloComputation, id: InstrId) -> Result<Self, IndexingError> {
        let instr = computation.instruction(id).ok_or_else(|| {
            IndexingError::NoSuch(format!("instruction {} of computation `{}`", id.0, computation.name))
        })?;
        Ok(Op { computation, instr })
    }

    pub(super) fn operand_instruction(&self, position: usize) -> Result<&'a HloInstruction, IndexingError> {
        self.instr
            .operands
            .get(position)
            .and_then(|id| self.computation.instruction(*id))
            .ok_or_else(|| IndexingError::NoSuch(format!("operand {position} of `{}`", self.instr.name)))
    }

    fn operand(&self, position: usize) -> Result<&'a ArrayShape, IndexingError> {
        self.operand_instruction(position)?.shape.arrays().first().ok_or_else(|| {
            IndexingError::NoSuch(format!("an array in operand {position} of `{}`", self.instr.name))
        })
    }

    fn output(&self, output: usize) -> Result<&'a ArrayShape, IndexingError> {
        self.instr
            .shape
            .arrays()
            .get(output)
            .ok_or_else(|| IndexingError::NoSuch(format!("output {output} of `{}`", self.instr.name)))
    }

    fn num_outputs(&self) -> usize {
        self.instr.shape.arrays().len()
    }

    fn num_operands(&self) -> usize {
        self.instr.operands.len()
    }
}

/// Output-to-input maps of one instruction (simplified), one entry per operand array read.
pub(super) fn op_output_to_input(
    computation: &HloComputation,
    id: InstrId,
    output: usize,
) -> Result<OpMaps<OperandMaps>, IndexingError> {
    let op = Op::new(computation, id)?;
    let out = op.output(output)?;
    let maps = match &op.instr.op {
        HloOp::Parameter { .. } | HloOp::Constant { .. } | HloOp::Iota { .. } => Vec::new(),
        HloOp::Elementwise(_) => (0..op.num_operands())
            .map(|i| elementwise_output_to_input(&op, out, i))
            .collect::<Result<_, _>>()?,
        HloOp::Map { .. } => vec![IndexingMap::identity(&out.dims); op.num_operands()],
        HloOp::Convolution { window, dims, feature_group_count, batch_group_count } => {
            convolution::output_to_input(
                op.operand(0)?,
                op.operand(1)?,
                out,
                &convolution::Convolution {
                    window,
                    dims,
                    feature_group_count: *feature_group_count,
                    batch_group_count: *batch_group_count,
                },
            )?
        }
        HloOp::DynamicSlice { sizes } => {
            let outer = &op.operand(0)?.dims;
            let known = dynamic_slice::known_offsets(&scalar_constants(&op, 1)?, outer, sizes);
            let mut maps = vec![dynamic_slice::window_to_outer(sizes, outer, &known)?];
            maps.extend((1..op.num_operands()).map(|_| scalar_read(out)).collect::<Result<Vec<_>, _>>()?);
            maps
        }
        HloOp::DynamicUpdateSlice => {
            let mut maps = vec![
                IndexingMap::identity(&out.dims),
                dynamic_slice::outer_to_window(&out.dims, &op.operand(1)?.dims, &[])?,
            ];
            maps.extend((2..op.num_operands()).map(|_| scalar_read(out)).collect::<Result<Vec<_>, _>>()?);
            maps
        }
        HloOp::Gather(dims) => {
            let values = match op.operand_instruction(1)?.op {
                HloOp::Iota { dimension } => gather::StartValues::Iota(dimension),
                HloOp::Constant { scalar: Some(value), .. } => gather::StartValues::Scalar(value),
                _ => gather::StartValues::Unknown,
            };
            let (to_operand, to_indices) =
                gather::output_to_input(op.operand(0)?, op.operand(1)?, out, dims, &values)?;
            let mut operand_maps: Vec<IndexingMap> = Vec::new();
            for map in to_operand {
                let map = map.simplify()?;
                if !map.is_known_empty() && !operand_maps.contains(&map) {
                    operand_maps.push(map);
                }
            }
            let complete = |operand, maps| OperandMaps {
                operand,
                operand_output: 0,
                maps,
                completeness: Completeness::Complete,
            };
            return Ok(OpMaps::Maps(vec![
                complete(0, operand_maps),
                complete(1, vec![to_indices.simplify()?]),
            ]));
        }
        HloOp::Unknown { .. } | HloOp::Call { .. } => {
            let mut unknown = Vec::new();
            for operand in 0..op.num_operands() {
                for operand_output in 0..op.operand_instruction(operand)?.shape.arrays().len() {
                    unknown.push(OperandMaps {
                        operand,
                        operand_output,
                        maps: Vec::new(),
                        completeness: Completeness::Unknown,
                    });
                }
            }
            return Ok(OpMaps::Maps(unknown));
        }
        HloOp::Broadcast { dimensions } => vec![select_dims(out, dimensions)?],
        HloOp::Transpose { dimensions } => vec![transpose::output_to_input(out, dimensions)?],
        HloOp::Reverse { dimensions } => vec![reverse::map(out, dimensions)?],
        HloOp::Reduce { dimensions, .. } => {
            reduce::output_to_input(op.operand(0)?, out, dimensions, op.num_operands())?
        }
        HloOp::Slice { dims } => vec![slice::output_to_input(out, dims)?],
        HloOp::Reshape => vec![reshape::reshape(out, op.operand(0)?)?],
        HloOp::Bitcast => vec![reshape::bitcast(out, op.operand(0)?)?],
        HloOp::Concatenate { dimension } => {
            concatenate::output_to_input(&operand_arrays(&op)?, out, *dimension)?
        }
        HloOp::Dot(dims) => dot::output_to_input(op.operand(0)?, op.operand(1)?, out, dims)?,
        HloOp::Pad { dims } => pad::output_to_input(op.operand(0)?, out, dims)?,
        HloOp::ReduceWindow { window, .. } => {
            reduce_window::output_to_input(op.operand(0)?, out, window, op.num_operands())?
        }
        HloOp::Fusion { calls } => return Ok(OpMaps::Calls(*calls)),
        HloOp::Tuple => return single(output, 0, IndexingMap::identity(&out.dims)),
        HloOp::GetTupleElement { index } => return single(0, *index, IndexingMap::identity(&out.dims)),
    };
    maps.into_iter()
        .enumerate()
        .map(|(operand, map)| {
            Ok(OperandMaps {
                operand,
                operand_output: 0,
                maps: vec![map.simplify()?],
                completeness: Completeness::Complete,
            })
        })
        .collect::<Result<_, _>>()
        .map(OpMaps::Maps)
}

fn single(
    operand: usize,
    operand_output: usize,
    map: IndexingMap,
) -> Result<OpMaps<OperandMaps>, IndexingError> {
    Ok(OpMaps::Maps(vec![OperandMaps {
        operand,
        operand_output,
        maps: vec![map.simplify()?],
        completeness: Completeness::Complete,
    }]))
}

fn operand_arrays<'a>(op: &Op<'a>) -> Result<Vec<&'a ArrayShape>, IndexingError> {
    (0..op.num_operands()).map(|i| op.operand(i)).collect()
}

/// Input-to-output maps of one instruction (simplified) from one array of one operand, one
/// entry per output that reads it.
pub(super) fn op_input_to_output(
    computation: &HloComputation,
    id: InstrId,
    operand: usize,
    operand_output: usize,
) -> Result<OpMaps<OutputMaps>, IndexingError> {
    let op = Op::new(computation, id)?;
    let input = op
        .operand_instruction(operand)?
        .shape
        .arrays()
        .get(operand_output)
        .ok_or_else(|| IndexingError::NoSuch(format!("output {operand_output} of operand {operand}")))?;
    let to_each_output = |map: IndexingMap| -> Vec<(usize, IndexingMap)> {
        (0..op.num_outputs()).map(|k| (k, map.clone())).collect()
    };
    let maps: Vec<(usize, IndexingMap)> = match &op.instr.op {
        HloOp::Parameter { .. } | HloOp::Constant { .. } | HloOp::Iota { .. } => Vec::new(),
        HloOp::Elementwise(_) if input.rank() == 0 && op.output(0)?.rank() > 0 => {
            vec![(0, broadcast::input_to_output(input, op.output(0)?, &[])?)]
        }
        HloOp::Elementwise(_) | HloOp::Map { .. } => vec![(0, IndexingMap::identity(&input.dims))],
        HloOp::DynamicSlice { sizes } if operand == 0 => {
            let known = dynamic_slice::known_offsets(&scalar_constants(&op, 1)?, &input.dims, sizes);
            vec![(0, dynamic_slice::outer_to_window(&input.dims, sizes, &known)?)]
        }
        HloOp::DynamicUpdateSlice if operand == 0 => vec![(0, IndexingMap::identity(&input.dims))],
        HloOp::DynamicUpdateSlice if operand == 1 => {
            vec![(0, dynamic_slice::window_to_outer(&input.dims, &op.output(0)?.dims, &[])?)]
        }
        HloOp::DynamicSlice { .. } | HloOp::DynamicUpdateSlice => {
            vec![(0, broadcast::input_to_output(input, op.output(0)?, &[])?)]
        }
        // XLA has no input-to-output map of a convolution or a gather either.
        HloOp::Unknown { .. } | HloOp::Call { .. } | HloOp::Convolution { .. } | HloOp::Gather(_) => {
            let unknown = (0..op.num_outputs())
                .map(|output| OutputMaps {
                    operand_output,
                    output,
                    maps: Vec::new(),
                    completeness: Completeness::Unknown,
                })
                .collect();
            return Ok(OpMaps::Maps(unknown));
        }
        HloOp::Broadcast { dimensions } => {
            vec![(0, broadcast::input_to_output(input, op.output(0)?, dimensions)?)]
        }
        HloOp::Transpose { dimensions } => vec![(0, select_dims(input, dimensions)?)],
        HloOp::Reverse { dimensions } => vec![(0, reverse::map(input, dimensions)?)],
        HloOp::Reduce { dimensions, .. } => {
            to_each_output(input_or_init(&op, operand, || reduce::input_to_output(input, dimensions))?)
        }
        HloOp::Slice { dims } => vec![(0, slice::input_to_output(input, op.output(0)?, dims)?)],
        HloOp::Reshape => vec![(0, reshape::reshape(input, op.output(0)?)?)],
        HloOp::Bitcast => vec![(0, reshape::bitcast(input, op.output(0)?)?)],
        HloOp::Concatenate { dimension } => {
            vec![(0, concatenate::input_to_output(&operand_arrays(&op)?, operand, *dimension)?)]
        }
        HloOp::Dot(dims) => {
            vec![(0, dot::input_to_output(op.operand(0)?, op.operand(1)?, op.output(0)?, dims, operand)?)]
        }
        HloOp::Pad { dims } => vec![(0, pad::input_to_output(input, op.output(0)?, dims, operand)?)],
        HloOp::ReduceWindow { window, .. } => to_each_output(input_or_init(&op, operand, || {
            reduce_window::input_to_output(op.operand(0)?, op.output(0)?, window)
        })?),
        HloOp::Fusion { calls } => return Ok(OpMaps::Calls(*calls)),
        HloOp::Tuple => vec![(operand, IndexingMap::identity(&input.dims))],
        HloOp::GetTupleElement { index } if *index == operand_output => {
            vec![(0, IndexingMap::identity(&input.dims))]
        }
        HloOp::GetTupleElement { .. } => Vec::new(),
    };
    maps.into_iter()
        .map(|(output, map)| {
            Ok(OutputMaps {
                operand_output,
                output,
                maps: vec![map.simplify()?],
                completeness: Completeness::Complete,
            })
        })
        .collect::<Result<_, _>>()
        .map(OpMaps::Maps)
}

/// The value of every operand from `first` on that is an integer scalar constant (`None` for
/// the others).
fn scalar_constants(op: &Op<'_>, first: usize) -> Result<Vec<Option<i64>>, IndexingError> {
    (first..op.num_operands())
        .map(|i| {
            Ok(match op.operand_instruction(i)?.op {
                HloOp::Constant { scalar, .. } => scalar,
                _ => None,
            })
        })
        .collect()
}

/// An elementwise op's map from its output to operand `position`: the identity, or
/// `(d...) -> ()` for a scalar operand (`select`'s predicate, `clamp`'s bounds).
fn elementwise_output_to_input(
    op: &Op<'_>,
    out: &ArrayShape,
    position: usize,
) -> Result<IndexingMap, IndexingError> {
    if op.operand(position)?.rank() == 0 && out.rank() > 0 {
        scalar_read(out)
    } else {
        Ok(IndexingMap::identity(&out.dims))
    }
}

/// `d_i`.
fn d(i: usize) -> IndexExpr {
    IndexExpr::dim(var_index(i))
}

/// `s_j`.
fn s(j: usize) -> IndexExpr {
    IndexExpr::symbol(var_index(j))
}

/// The ranges `[0, size - 1]` of every dimension.
fn index_ranges(dims: &[i64]) -> Vec<Interval> {
    dims.iter().map(|&size| Interval::indices(size)).collect()
}

/// `(d...) -> (results)` over every index of `dims`: no symbols, no constraints.
fn over(dims: &[i64], results: Vec<IndexExpr>) -> Result<IndexingMap, IndexingError> {
    over_with_symbols(dims, Vec::new(), results)
}

/// `(d...)[s...] -> (results)` over every index of `dims`, the symbols ranging over `symbols`;
/// no constraints.
fn over_with_symbols(
    dims: &[i64],
    symbols: Vec<Interval>,
    results: Vec<IndexExpr>,
) -> Result<IndexingMap, IndexingError> {
    IndexingMap::new(index_ranges(dims), symbols, results, Vec::new())
}

/// `(d_0, d_1, ...) -> (d_{picked_0}, d_{picked_1}, ...)` over every index of `shape`: a
/// broadcast's output-to-input map (`picked` its dimensions) and a transpose's input-to-output
/// map (`picked` its permutation).
fn select_dims(shape: &ArrayShape, picked: &[usize]) -> Result<IndexingMap, IndexingError> {
    over(&shape.dims, picked.iter().map(|&k| d(k)).collect())
}

/// The map from operand `operand` of a variadic reduce or reduce-window to an output:
/// `input_map` for one of the inputs, [`every_output`] for one of the inits (the second half
/// of the operands).
fn input_or_init(
    op: &Op<'_>,
    operand: usize,
    input_map: impl FnOnce() -> Result<IndexingMap, IndexingError>,
) -> Result<IndexingMap, IndexingError> {
    if operand >= op.num_operands() / 2 { every_output(op.output(0)?) } else { input_map() }
}

/// `(d...) -> ()`: every output element reads the scalar (an init, a padding value, a
/// predicate or bound of `select` and `clamp`, a start index).
fn scalar_read(output: &ArrayShape) -> Result<IndexingMap, IndexingError> {
    over(&output.dims, Vec::new())
}

/// `()[s...] -> (s...)` over the output: the map from a scalar to every output element that
/// reads it.
fn every_output(output: &ArrayShape) -> Result<IndexingMap, IndexingError> {
    let results = (0..output.rank()).map(s).collect();
    IndexingMap::new(Vec::new(), index_ranges(&output.dims), results, Vec::new())
}

/// The maps of a variadic reduce or reduce-window to its `operands`: `to_input` for each of
/// the `operands / 2` inputs, then [`scalar_read`] for each init.
fn inputs_then_inits(
    to_input: IndexingMap,
    output: &ArrayShape,
    operands: usize,
) -> Result<Vec<IndexingMap>, IndexingError> {
    let to_init = scalar_read(output)?;
    let n = operands / 2;
    Ok((0..operands).map(|i| if i < n { to_input.clone() } else { to_init.clone() }).collect())
}
