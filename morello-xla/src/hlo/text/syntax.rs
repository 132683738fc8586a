//! The first pass over HLO text: its structure (header, computations, instructions, operands,
//! attributes) as spans of text, before any name is resolved or any attribute is interpreted.
//!
//! Shapes are read here (with [`XlaShape`]'s parser), opcodes are checked against the
//! supported list as soon as they are read, and constant literals are skipped as balanced
//! groups whatever they contain.

use crate::xla::{XlaShape, fragment_of};

use super::cursor::{Cursor, Span};
use super::{HloTextError, HloTextErrorKind, is_xla_opcode};

/// The name given to the computation of a module written as a bare list of instructions.
pub(super) const BARE_COMPUTATION_NAME: &str = "main";

/// A module as written.
pub(super) struct RawModule<'a> {
    /// The name after `HloModule`, if there is a header.
    pub name: Option<&'a str>,
    pub computations: Vec<RawComputation<'a>>,
}

/// A computation as written.
pub(super) struct RawComputation<'a> {
    pub name: &'a str,
    /// Where the name (or, for a bare list, the first instruction) is.
    pub span: Span,
    /// Where `ENTRY` is, if the computation is marked so.
    pub entry: Option<Span>,
    pub instructions: Vec<RawInstruction<'a>>,
}

/// An instruction as written.
pub(super) struct RawInstruction<'a> {
    pub name: &'a str,
    /// Where the name is.
    pub span: Span,
    /// Where `ROOT` is, if the instruction is marked so.
    pub root: Option<Span>,
    pub shape: XlaShape,
    pub shape_span: Span,
    pub opcode: &'a str,
    pub opcode_span: Span,
    pub arguments: Arguments<'a>,
    pub attributes: Vec<RawAttribute<'a>>,
}

/// What is between the parentheses after the opcode.
pub(super) enum Arguments<'a> {
    /// `parameter(N)`.
    ParameterNumber(i64, Span),
    /// `constant(...)`: the literal's text, between the parentheses, and where it starts.
    Literal(&'a str, Span),
    /// Every other opcode: operands.
    Operands(Vec<RawOperand<'a>>),
}

/// An operand as written: a name, possibly preceded by a shape.
pub(super) struct RawOperand<'a> {
    pub name: &'a str,
    pub span: Span,
    pub shape: Option<(XlaShape, Span)>,
}

/// `key=value`.
pub(super) struct RawAttribute<'a> {
    pub key: &'a str,
    pub key_span: Span,
    pub value: &'a str,
    pub value_span: Span,
}

/// Reads the structure of a whole module.
pub(super) fn module<'a>(cursor: &mut Cursor<'a>) -> Result<RawModule<'a>, HloTextError> {
    let mut name = None;
    let start = cursor.offset();
    if matches!(cursor.name(), Some(("HloModule", _))) {
        name = Some(cursor.expect_name("the module's name after `HloModule`")?.0);
        while cursor.eat(',') {
            attribute(cursor)?;
        }
        stack_frame_tables(cursor)?;
    } else {
        cursor.set_offset(start);
    }
    let mut computations: Vec<RawComputation<'a>> = Vec::new();
    let mut bare: Option<RawComputation<'a>> = None;
    while !cursor.at_end() {
        let item_start = cursor.offset();
        let first = cursor.name();
        let is_instruction = match first {
            Some(("ROOT", _)) => true,
            Some(("ENTRY", _)) => false,
            // After a name, `=` starts an instruction and `{` or `(` a computation; anything
            // else is an error, reported as the kind of item read so far.
            Some(_) => match cursor.peek() {
                Some('=') => true,
                Some('{' | '(') => false,
                _ => bare.is_some(),
            },
            None => {
                return Err(
                    cursor.unexpected("expected a computation (`name {`) or an instruction (`name = ...`)")
                );
            }
        };
        cursor.set_offset(item_start);
        if is_instruction {
            if !computations.is_empty() {
                return Err(
                    cursor.unexpected("expected a computation (`name {`): instructions belong inside one")
                );
            }
            let instruction = instruction(cursor).map_err(|e| e.in_computation(BARE_COMPUTATION_NAME))?;
            let computation = bare.get_or_insert_with(|| RawComputation {
                name: BARE_COMPUTATION_NAME,
                span: instruction.span,
                entry: None,
                instructions: Vec::new(),
            });
            computation.instructions.push(instruction);
        } else {
            if bare.is_some() {
                return Err(cursor.unexpected(
                    "expected an instruction (`name = ...`): a module is either computations or one list of instructions",
                ));
            }
            computations.push(computation(cursor)?);
        }
    }
    computations.extend(bare);
    Ok(RawModule { name, computations })
}

/// The tables of source locations XLA prints after the header (`FileNames`, `FunctionNames`,
/// `FileLocations`, `StackFrames`), each a keyword and lines `number value`, the value a string
/// or a `{...}` group: skipped.
fn stack_frame_tables(cursor: &mut Cursor<'_>) -> Result<(), HloTextError> {
    const TABLES: [&str; 4] = ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];
    loop {
        let start = cursor.offset();
        match cursor.name() {
            Some((word, _)) if TABLES.contains(&word) => {}
            _ => {
                cursor.set_offset(start);
                return Ok(());
            }
        }
        loop {
            let row = cursor.offset();
            if cursor.integer("a table row number").is_err() {
                cursor.set_offset(row);
                break;
            }
            match cursor.peek() {
                Some('"') => {
                    cursor.skip_string()?;
                }
                Some('{') => {
                    cursor.skip_group()?;
                }
                _ => return Err(cursor.unexpected("expected a string or `{...}` in a stack-frame table")),
            }
        }
    }
}

/// `[ENTRY] name [(parameters) -> shape] (, key=value)* { instruction* }`.
fn computation<'a>(cursor: &mut Cursor<'a>) -> Result<RawComputation<'a>, HloTextError> {
    let entry = cursor.keyword("ENTRY");
    let (name, span) = cursor.expect_name("a computation name")?;
    let in_computation = |e: HloTextError| e.in_computation(name);
    if cursor.peek() == Some('(') {
        cursor.skip_group().map_err(in_computation)?;
        if cursor.eat_str("->") {
            shape(cursor, LayoutAfterSpace::Body).map_err(in_computation)?;
        }
    }
    // Attributes after the signature (`execution_thread="main"`) are read and ignored.
    while cursor.eat(',') {
        attribute(cursor).map_err(in_computation)?;
    }
    cursor.expect('{', "`{` starting the computation's instructions").map_err(in_computation)?;
    let mut instructions = Vec::new();
    while !cursor.eat('}') {
        if cursor.at_end() {
            return Err(in_computation(cursor.unexpected("expected `}` closing the computation")));
        }
        instructions.push(instruction(cursor).map_err(in_computation)?);
    }
    Ok(RawComputation { name, span, entry, instructions })
}

/// `[ROOT] name = shape opcode(arguments) (, key=value)*`.
fn instruction<'a>(cursor: &mut Cursor<'a>) -> Result<RawInstruction<'a>, HloTextError> {
    let root = cursor.keyword("ROOT");
    let (name, span) = cursor.expect_name("an instruction name")?;
    let in_instruction = |e: HloTextError| e.in_instruction(name);
    let rest = |cursor: &mut Cursor<'a>| -> Result<RawInstruction<'a>, HloTextError> {
        cursor.expect('=', "`=` after the instruction name")?;
        let (shape, shape_span) = shape(cursor, LayoutAfterSpace::Layout)?;
        let (opcode, opcode_span) = cursor.expect_name("an opcode such as `add`")?;
        if !is_xla_opcode(opcode) {
            let kind = HloTextErrorKind::UnknownOpcode { opcode: fragment_of(opcode) };
            return Err(cursor.error_at(opcode_span, kind));
        }
        let arguments = arguments(cursor, opcode)?;
        let mut attributes = Vec::new();
        while cursor.eat(',') {
            attributes.push(attribute(cursor)?);
        }
        Ok(RawInstruction { name, span, root, shape, shape_span, opcode, opcode_span, arguments, attributes })
    };
    rest(cursor).map_err(in_instruction)
}

/// The parenthesised arguments after an opcode.
fn arguments<'a>(cursor: &mut Cursor<'a>, opcode: &str) -> Result<Arguments<'a>, HloTextError> {
    if cursor.peek() != Some('(') {
        return Err(cursor.unexpected(format!("expected `(` after `{opcode}`")));
    }
    match opcode {
        "constant" => {
            let span = cursor.skip_group()?;
            let text = cursor.slice(span);
            let inner = text.get(1..text.len().saturating_sub(1)).unwrap_or_default();
            Ok(Arguments::Literal(
                inner,
                Span::new(span.start + 1, span.end.saturating_sub(1).max(span.start + 1)),
            ))
        }
        "parameter" => {
            cursor.expect('(', "`(`")?;
            let (number, span) = cursor.integer("a parameter number")?;
            cursor.expect(')', "`)` after the parameter number")?;
            Ok(Arguments::ParameterNumber(number, span))
        }
        _ => {
            cursor.expect('(', "`(`")?;
            let mut operands = Vec::new();
            if !cursor.eat(')') {
                loop {
                    operands.push(operand(cursor)?);
                    if cursor.eat(')') {
                        break;
                    }
                    cursor.expect(',', "`,` or `)` after an operand")?;
                }
            }
            Ok(Arguments::Operands(operands))
        }
    }
}

/// `[shape] name`.
fn operand<'a>(cursor: &mut Cursor<'a>) -> Result<RawOperand<'a>, HloTextError> {
    cursor.skip_space();
    let start = cursor.offset();
    let written_shape = match cursor.peek() {
        Some('(') => Some(shape(cursor, LayoutAfterSpace::Layout)?),
        _ => {
            let word = cursor.name();
            let shaped = word.is_some() && cursor.peek() == Some('[');
            cursor.set_offset(start);
            if shaped { Some(shape(cursor, LayoutAfterSpace::Layout)?) } else { None }
        }
    };
    let (name, span) = cursor.expect_name("an operand name")?;
    Ok(RawOperand { name, span, shape: written_shape })
}

/// `key=value`, the value being a balanced group, a string, or a word (possibly empty).
pub(super) fn attribute<'a>(cursor: &mut Cursor<'a>) -> Result<RawAttribute<'a>, HloTextError> {
    let (key, key_span) = cursor.expect_name("an attribute such as `dimensions={0}`")?;
    cursor.expect('=', "`=` after the attribute name")?;
    // An empty value ends at the end of its line (XLA prints a rank-0 `pad` as `padding=`): the
    // next line's first word is not the value.
    cursor.skip_blanks();
    if cursor.rest().is_empty() || cursor.rest().starts_with(['\n', '\r']) {
        let at = cursor.offset();
        return Ok(RawAttribute { key, key_span, value: "", value_span: Span::at(at) });
    }
    let value_span = match cursor.peek() {
        Some('(' | '[' | '{') => cursor.skip_group()?,
        Some('"') => cursor.skip_string()?,
        _ => cursor.take_while(|c| {
            !c.is_whitespace() && !matches!(c, ',' | '(' | ')' | '[' | ']' | '{' | '}' | '"')
        }),
    };
    let value = cursor.slice(value_span);
    Ok(RawAttribute { key, key_span, value, value_span })
}

/// What a `{` after a shape's dimensions and some spaces is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LayoutAfterSpace {
    /// The shape's layout (`f32[2,3] {0,1} bitcast(p)`, as XLA's tests write it): in an
    /// instruction or an operand, an opcode or a name follows a shape, never a `{`.
    Layout,
    /// The body of the computation whose signature ends with this shape (`-> f32[2] {`).
    Body,
}

/// A shape: a tuple `( ... )`, or `type[dims]` with an optional layout `{...}`, read with
/// [`XlaShape`]'s parser.
fn shape(cursor: &mut Cursor<'_>, after_space: LayoutAfterSpace) -> Result<(XlaShape, Span), HloTextError> {
    cursor.skip_space();
    let start = cursor.offset();
    if cursor.peek() == Some('(') {
        cursor.skip_group()?;
    } else {
        if cursor.take_while(|c| c.is_ascii_alphanumeric()).is_empty() {
            return Err(cursor.unexpected("expected a shape such as `f32[10,20]`"));
        }
        if !cursor.eat('[') {
            return Err(cursor.unexpected("expected `[` after the element type of a shape"));
        }
        // The dimensions, and what XLA's dynamic sizes use, up to `]`; the shape parser reads
        // them.
        cursor.take_while(|c| c.is_ascii_digit() || c.is_ascii_whitespace() || ",<=?-".contains(c));
        if !cursor.rest().starts_with(']') {
            return Err(cursor.unexpected("expected `,` or `]` in the dimensions of a shape"));
        }
        cursor.advance(1);
        // A layout follows the dimensions, directly or (in an instruction) after spaces.
        let end_of_dims = cursor.offset();
        if after_space == LayoutAfterSpace::Layout {
            cursor.skip_blanks();
        }
        if cursor.rest().starts_with('{') {
            cursor.skip_group()?;
        } else {
            cursor.set_offset(end_of_dims);
        }
    }
    let span = Span::new(start, cursor.offset());
    let text = cursor.slice(span);
    let shape = text.parse::<XlaShape>().map_err(|error| {
        cursor.error_at(span, HloTextErrorKind::Shape { shape: fragment_of(text), error })
    })?;
    Ok((shape, span))
}
