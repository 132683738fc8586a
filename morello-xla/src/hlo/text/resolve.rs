//! The second pass: names resolved to ids, shapes converted, ops built from their attributes,
//! then [`HloModule::new`] validates everything and its errors are placed back in the text.

use std::collections::HashMap;

use crate::hlo::{
    ArrayShape, ComputationId, ElementwiseOp, HloComputation, HloError, HloErrorKind, HloInstruction,
    HloModule, HloOp, HloShape, InstrId,
};
use crate::xla::{self, XlaShape};

use super::attributes;
use super::cursor::{Cursor, Span};
use super::syntax::{Arguments, RawComputation, RawInstruction, RawModule};
use super::{HloTextError, HloTextErrorKind};

/// Builds and validates the module.
pub(super) fn module(cursor: &Cursor<'_>, raw: &RawModule<'_>) -> Result<HloModule, HloTextError> {
    let Some(last) = raw.computations.len().checked_sub(1) else {
        let end = Span::at(cursor.end_offset());
        return Err(cursor.error_at(end, HloTextErrorKind::EmptyModule));
    };
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let mut entry: Option<usize> = None;
    for (index, computation) in raw.computations.iter().enumerate() {
        let place = |kind| {
            let mut e = cursor.error_at(computation.span, kind);
            e.computation = Some(computation.name.to_string());
            e
        };
        if let Some(&first) = ids.get(computation.name) {
            let first_line = line(cursor, raw.computations[first].span);
            return Err(place(HloTextErrorKind::DuplicateName {
                name: computation.name.to_string(),
                first_line,
            }));
        }
        ids.insert(computation.name, index);
        if let Some(span) = computation.entry {
            if let Some(first) = entry.and_then(|e| raw.computations[e].entry) {
                let mut e =
                    cursor.error_at(span, HloTextErrorKind::SecondEntry { first_line: line(cursor, first) });
                e.computation = Some(computation.name.to_string());
                return Err(e);
            }
            entry = Some(index);
        }
    }
    let computations = raw
        .computations
        .iter()
        .map(|computation| self::computation(cursor, computation, &ids))
        .collect::<Result<Vec<_>, _>>()?;
    let entry = entry.unwrap_or(last);
    let name = raw.name.unwrap_or(raw.computations[entry].name);
    HloModule::new(name, computations, ComputationId(entry)).map_err(|e| locate(cursor, raw, e))
}

fn line(cursor: &Cursor<'_>, span: Span) -> usize {
    cursor.line_column(span.start).0
}

/// One computation: instruction names, the root, and every instruction's shape, operands and op.
fn computation(
    cursor: &Cursor<'_>,
    raw: &RawComputation<'_>,
    computation_ids: &HashMap<&str, usize>,
) -> Result<HloComputation, HloTextError> {
    let error = |span: Span, instruction: Option<&str>, kind| {
        let mut e = cursor.error_at(span, kind);
        e.computation = Some(raw.name.to_string());
        e.instruction = instruction.map(str::to_string);
        e
    };
    let Some(last) = raw.instructions.len().checked_sub(1) else {
        return Err(error(raw.span, None, HloTextErrorKind::EmptyComputation));
    };
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let mut root: Option<usize> = None;
    for (index, instr) in raw.instructions.iter().enumerate() {
        if let Some(&first) = ids.get(instr.name) {
            let first_line = line(cursor, raw.instructions[first].span);
            let kind = HloTextErrorKind::DuplicateName { name: instr.name.to_string(), first_line };
            return Err(error(instr.span, Some(instr.name), kind));
        }
        ids.insert(instr.name, index);
        if let Some(span) = instr.root {
            if let Some(first) = root.and_then(|r| raw.instructions[r].root) {
                let kind = HloTextErrorKind::SecondRoot { first_line: line(cursor, first) };
                return Err(error(span, Some(instr.name), kind));
            }
            root = Some(index);
        }
    }
    let mut instructions = Vec::with_capacity(raw.instructions.len());
    for (index, instr) in raw.instructions.iter().enumerate() {
        let at = |span: Span, kind| error(span, Some(instr.name), kind);
        let shape = hlo_shape(&instr.shape).map_err(|kind| at(instr.shape_span, kind))?;
        let mut operands = Vec::new();
        if let Arguments::Operands(list) = &instr.arguments {
            for operand in list {
                let Some(&id) = ids.get(operand.name) else {
                    let kind = HloTextErrorKind::UndefinedOperand { name: operand.name.to_string() };
                    return Err(at(operand.span, kind));
                };
                let definition = &raw.instructions[id];
                if id >= index {
                    let kind = HloTextErrorKind::OperandUsedBeforeDefinition {
                        name: operand.name.to_string(),
                        defined_on_line: line(cursor, definition.span),
                    };
                    return Err(at(operand.span, kind));
                }
                if let Some((written, span)) = &operand.shape {
                    if !same_type_and_dims(written, &definition.shape) {
                        let kind = HloTextErrorKind::OperandShapeMismatch {
                            name: operand.name.to_string(),
                            written: xla::fragment_of(&written.to_string()),
                            defined: xla::fragment_of(&definition.shape.to_string()),
                        };
                        return Err(at(*span, kind));
                    }
                }
                operands.push(InstrId(id));
            }
        }
        let mut op = attributes::op(instr, computation_ids).map_err(|(span, kind)| at(span, kind))?;
        // A bitcast-convert between types of different widths adds or removes a minor
        // dimension: not elementwise, and without a map here.
        if op == HloOp::Elementwise(ElementwiseOp::BitcastConvert) {
            let operand_dims =
                operands.first().and_then(|id| raw.instructions[id.0].shape.as_array()).map(|a| a.dims());
            if operand_dims != instr.shape.as_array().map(|a| a.dims()) {
                op = HloOp::Unknown { opcode: "bitcast-convert" };
            }
        }
        if instr.opcode == "bitcast" {
            let operand = operands.first().map(|id| &raw.instructions[id.0]);
            check_bitcast(instr, operand).map_err(|kind| at(instr.opcode_span, kind))?;
        }
        instructions.push(HloInstruction { name: instr.name.to_string(), shape, op, operands });
    }
    Ok(HloComputation { name: raw.name.to_string(), instructions, root: InstrId(root.unwrap_or(last)) })
}

/// The model's shape: element types kept, layouts kept as `minor_to_major` when they are not
/// the default (tiles are dropped).
fn hlo_shape(shape: &XlaShape) -> Result<HloShape, HloTextErrorKind> {
    match shape {
        XlaShape::Array(array) => Ok(HloShape::Array(hlo_array(array))),
        XlaShape::Bufferless(array) => Err(HloTextErrorKind::UnsupportedShape {
            message: format!("`{}`: {}", xla::fragment_of(&array.to_string()), array.why_no_buffer()),
        }),
        XlaShape::Tuple(elements) => elements
            .iter()
            .map(|element| {
                element.as_array().map(hlo_array).ok_or_else(|| HloTextErrorKind::UnsupportedShape {
                    message: format!(
                        "nested tuple shapes such as `{}` are not supported",
                        xla::fragment_of(&shape.to_string())
                    ),
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(HloShape::Tuple),
    }
}

fn hlo_array(array: &xla::ArrayShape) -> ArrayShape {
    let dims: Vec<i64> = array
        .dims()
        .iter()
        .map(|&d| i64::try_from(d).expect("an XLA ArrayShape's sizes are at most 2^63 - 1"))
        .collect();
    let minor_to_major = array.layout().minor_to_major();
    let default = minor_to_major.iter().copied().eq((0..dims.len()).rev());
    ArrayShape {
        element_type: array.element_type(),
        dims,
        minor_to_major: (!default).then(|| minor_to_major.to_vec()),
    }
}

/// Whether two shapes have the same element types and dimensions (layouts may differ).
fn same_type_and_dims(a: &XlaShape, b: &XlaShape) -> bool {
    match (a, b) {
        (XlaShape::Array(a), XlaShape::Array(b)) => {
            a.element_type() == b.element_type() && a.dims() == b.dims()
        }
        (XlaShape::Tuple(a), XlaShape::Tuple(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_type_and_dims(x, y))
        }
        _ => false,
    }
}

/// A bitcast's meaning is a reshape of the buffers in layout order: tiled or padded layouts and
/// element types of different sizes would change that, so they are refused.
fn check_bitcast(
    instr: &RawInstruction<'_>,
    operand: Option<&RawInstruction<'_>>,
) -> Result<(), HloTextErrorKind> {
    let unsupported = |message: String| HloTextErrorKind::Unsupported { message };
    let shapes = [Some(("the result", &instr.shape)), operand.map(|o| ("the operand", &o.shape))];
    let mut bits = Vec::new();
    for (what, shape) in shapes.into_iter().flatten() {
        for (_, array) in shape.arrays() {
            let layout = array.layout();
            if !layout.tiles().is_empty() || layout.padded_dimensions().is_some() {
                return Err(unsupported(format!(
                    "a bitcast whose {} has a tiled or padded layout (`{}`) is not supported",
                    what.trim_start_matches("the "),
                    xla::fragment_of(&array.to_string())
                )));
            }
            bits.push(array.element_type().bits());
        }
    }
    if bits.windows(2).any(|w| w[0] != w[1]) {
        return Err(unsupported(
            "a bitcast between element types of different sizes is not supported".to_string(),
        ));
    }
    Ok(())
}

/// Places a validation error on the attribute or instruction it is about.
fn locate(cursor: &Cursor<'_>, raw: &RawModule<'_>, error: HloError) -> HloTextError {
    let computation = raw.computations.iter().find(|c| c.name == error.computation);
    let instruction = computation
        .zip(error.instruction.as_deref())
        .and_then(|(c, name)| c.instructions.iter().find(|i| i.name == name));
    let attribute = instruction
        .zip(attribute_of(&error.kind))
        .and_then(|(instr, key)| instr.attributes.iter().find(|a| a.key == key).map(|a| a.value_span));
    let span =
        attribute.or(instruction.map(|i| i.span)).or(computation.map(|c| c.span)).unwrap_or(Span::at(0));
    let mut located = cursor.error_at(span, HloTextErrorKind::Invalid(error.kind));
    located.computation = Some(error.computation);
    located.instruction = error.instruction;
    located
}

/// The attribute a validation error is about, when there is one.
fn attribute_of(kind: &HloErrorKind) -> Option<&'static str> {
    match kind {
        HloErrorKind::NotAPermutation { .. } => Some("dimensions"),
        HloErrorKind::SliceOutOfBounds { .. } => Some("slice"),
        HloErrorKind::NegativeInterior { .. } => Some("padding"),
        HloErrorKind::AttributeLength { attribute, .. }
        | HloErrorKind::DimensionOutOfRange { attribute, .. }
        | HloErrorKind::RepeatedDimension { attribute, .. } => attribute.split_whitespace().next(),
        HloErrorKind::NotPositive { attribute, .. } => Some(match *attribute {
            "stride" => "slice",
            _ => "window",
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_layouts_are_dropped() {
        let shape: XlaShape = "f32[2,3]{1,0}".parse().unwrap();
        assert_eq!(hlo_shape(&shape), Ok(HloShape::array(&[2, 3])));
        let shape: XlaShape = "(f32[2,3]{0,1}, s32[])".parse().unwrap();
        let expected = HloShape::Tuple(vec![
            ArrayShape::with_layout(&[2, 3], &[0, 1]),
            ArrayShape::typed(xla::ElementType::S32, &[]),
        ]);
        assert_eq!(hlo_shape(&shape), Ok(expected));
        let nested: XlaShape = "((f32[2]), s32[])".parse().unwrap();
        assert!(hlo_shape(&nested).is_err());
    }
}
