//! [`HloTextError`]: why HLO text could not be read, located by line, column, computation and
//! instruction.
//!
//! Every variant is the fault of the text's author. A message reads like
//! ``"line 4, column 3, instruction `t` in computation `f`: dimensions={0, 0} is not a permutation of 0..2"``
//! and is one line: quoted text has its control characters escaped and is cut short when long.

use std::fmt;

use crate::hlo::HloErrorKind;
use crate::xla::XlaError;

/// HLO text that cannot be read, with where the problem is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct HloTextError {
    /// The 1-based line of the problem (for an invalid instruction, the line of its name).
    pub line: usize,
    /// The 1-based column, in characters.
    pub column: usize,
    /// The computation the problem is in, once its name has been read.
    pub computation: Option<String>,
    /// The instruction the problem is in, once its name has been read.
    pub instruction: Option<String>,
    /// What is wrong (boxed, so results stay small).
    pub kind: Box<HloTextErrorKind>,
}

impl HloTextError {
    /// This error placed in computation `name`, unless it already names its computation.
    pub(super) fn in_computation(mut self, name: &str) -> Self {
        self.computation.get_or_insert_with(|| name.to_string());
        self
    }

    /// This error placed at instruction `name`, unless it already names its instruction.
    pub(super) fn in_instruction(mut self, name: &str) -> Self {
        self.instruction.get_or_insert_with(|| name.to_string());
        self
    }
}

impl fmt::Display for HloTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)?;
        match (&self.instruction, &self.computation) {
            (Some(instruction), Some(computation)) => {
                write!(f, ", instruction `{instruction}` in computation `{computation}`")?;
            }
            (Some(instruction), None) => write!(f, ", instruction `{instruction}`")?,
            (None, Some(computation)) => write!(f, ", computation `{computation}`")?,
            (None, None) => {}
        }
        write!(f, ": {}", self.kind)
    }
}

/// The ways HLO text can be wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HloTextErrorKind {
    /// The text does not follow the module syntax.
    #[error("{message}, found {}", quoted(.found))]
    Syntax {
        /// What was expected.
        message: String,
        /// The text found instead (empty at the end of the text).
        found: String,
    },
    /// A shape's text is not a valid XLA shape.
    #[error("invalid shape `{shape}`: {error}")]
    Shape {
        /// The shape's text (columns in `error` count from its start).
        shape: String,
        /// Why it is invalid.
        error: XlaError,
    },
    /// A valid XLA shape outside the supported subset.
    #[error("{message}")]
    UnsupportedShape {
        /// What is not supported.
        message: String,
    },
    /// A word where an opcode goes that is not one of XLA's opcodes.
    #[error("unknown opcode `{opcode}`: XLA has no such opcode")]
    UnknownOpcode {
        /// The opcode as written.
        opcode: String,
    },
    /// An operand names no instruction of the computation.
    #[error("operand `{name}` is not defined in this computation")]
    UndefinedOperand {
        /// The operand's name.
        name: String,
    },
    /// An operand names an instruction defined later in the computation.
    #[error("operand `{name}` is used before it is defined (on line {defined_on_line})")]
    OperandUsedBeforeDefinition {
        /// The operand's name.
        name: String,
        /// The line where it is defined.
        defined_on_line: usize,
    },
    /// An operand is written with a shape other than the one its instruction has.
    #[error("operand `{name}` is written with shape {written} but is defined with shape {defined}")]
    OperandShapeMismatch {
        /// The operand's name.
        name: String,
        /// The shape written with the operand.
        written: String,
        /// The shape of its definition.
        defined: String,
    },
    /// A `to_apply=` or `calls=` names no computation of the module.
    #[error("`{attribute}` names computation `{name}`, which is not defined in the module")]
    UndefinedComputation {
        /// The attribute.
        attribute: &'static str,
        /// The computation's name.
        name: String,
    },
    /// A constant's literal does not match its shape or element type.
    #[error("invalid literal: {message}")]
    BadLiteral {
        /// What is wrong.
        message: String,
    },
    /// A required attribute is missing.
    #[error("`{opcode}` needs the attribute `{attribute}=`")]
    MissingAttribute {
        /// The opcode.
        opcode: &'static str,
        /// The attribute.
        attribute: &'static str,
    },
    /// An attribute is given twice.
    #[error("the attribute `{attribute}=` is given twice")]
    RepeatedAttribute {
        /// The attribute.
        attribute: String,
    },
    /// An attribute's value is not in its syntax.
    #[error("invalid `{attribute}={}`: {message}", crate::xla::fragment_of(.value))]
    BadAttribute {
        /// The attribute.
        attribute: &'static str,
        /// Its value as written.
        value: String,
        /// What is wrong.
        message: String,
    },
    /// Two instructions of one computation, or two computations, share a name.
    #[error("the name `{name}` is already defined on line {first_line}")]
    DuplicateName {
        /// The name.
        name: String,
        /// The line of the first definition.
        first_line: usize,
    },
    /// More than one instruction of a computation is marked `ROOT`.
    #[error("a second `ROOT` (the first is on line {first_line})")]
    SecondRoot {
        /// The line of the first `ROOT`.
        first_line: usize,
    },
    /// More than one computation is marked `ENTRY`.
    #[error("a second `ENTRY` computation (the first is on line {first_line})")]
    SecondEntry {
        /// The line of the first `ENTRY`.
        first_line: usize,
    },
    /// A computation without instructions.
    #[error("the computation has no instructions")]
    EmptyComputation,
    /// Text without any computation or instruction.
    #[error("the module has no computations")]
    EmptyModule,
    /// Something valid in XLA that the indexing analysis does not support.
    #[error("{message}")]
    Unsupported {
        /// What is not supported.
        message: String,
    },
    /// The module is well formed but an op disagrees with its shapes or attributes.
    #[error("{0}")]
    Invalid(HloErrorKind),
}

/// Quoted text for a message: `` `tok` ``, or `the end of the text` when empty.
fn quoted(found: &str) -> String {
    if found.is_empty() { "the end of the text".to_string() } else { format!("`{found}`") }
}
