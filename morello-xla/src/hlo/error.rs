//! Why an HLO module is invalid: every error names the computation and, where there is one,
//! the instruction, so a reader can add the line number.

use std::fmt;

use super::shape::join;

/// An invalid HLO module (the module's author's fault), located by computation and instruction.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct HloError {
    /// The computation's name.
    pub computation: String,
    /// The instruction's name, when the problem is in one instruction.
    pub instruction: Option<String>,
    /// What is wrong.
    pub kind: HloErrorKind,
}

impl fmt::Display for HloError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.instruction {
            Some(name) => {
                write!(f, "instruction `{name}` in computation `{}`: {}", self.computation, self.kind)
            }
            None => write!(f, "computation `{}`: {}", self.computation, self.kind),
        }
    }
}

/// The ways an HLO module can be invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HloErrorKind {
    /// Two computations share a name.
    #[error("another computation has the same name")]
    DuplicateComputation,
    /// The entry computation id does not exist.
    #[error("the entry computation {index} does not exist")]
    NoSuchEntry {
        /// The id given.
        index: usize,
    },
    /// Two instructions of one computation share a name.
    #[error("another instruction of the computation has the same name")]
    DuplicateInstruction,
    /// The root id does not exist.
    #[error("the root instruction {index} does not exist")]
    NoSuchRoot {
        /// The id given.
        index: usize,
    },
    /// An operand is not an earlier instruction of the computation.
    #[error("operand {position} refers to instruction {index}, which is not defined before this one")]
    OperandNotDefinedBefore {
        /// The operand position.
        position: usize,
        /// The instruction id it refers to.
        index: usize,
    },
    /// A parameter number is repeated or leaves a gap.
    #[error("parameter number {number} is repeated or leaves a gap (parameters are numbered 0, 1, ...)")]
    ParameterNumber {
        /// The offending number.
        number: usize,
    },
    /// A called computation does not exist.
    #[error("calls computation {index}, which does not exist")]
    NoSuchComputation {
        /// The callee id.
        index: usize,
    },
    /// A call leads back to a computation already being called (calls must not recurse).
    #[error("calls `{callee}`, which leads back to this computation (calls must not recurse)")]
    RecursiveCall {
        /// The callee's name.
        callee: String,
    },
    /// The op has the wrong number of operands.
    #[error("`{opcode}` takes {expected} operands, found {found}")]
    OperandCount {
        /// The opcode.
        opcode: &'static str,
        /// How many it takes (as text: `2`, `an even number of`, `at least 1`).
        expected: String,
        /// How many were given.
        found: usize,
    },
    /// A dimension size is negative.
    #[error("{what} has a negative dimension size {size}")]
    NegativeDimension {
        /// Which shape.
        what: String,
        /// The size.
        size: i64,
    },
    /// The number of elements of a shape does not fit in 64 bits.
    #[error("{what} has more than 2^63 - 1 elements")]
    VolumeOverflow {
        /// Which shape.
        what: String,
    },
    /// A layout is not a permutation of the dimensions.
    #[error("{what} has layout {{{}}}, which is not a permutation of its {rank} dimensions", join(.minor_to_major))]
    BadLayout {
        /// Which shape.
        what: String,
        /// The layout.
        minor_to_major: Vec<usize>,
        /// The rank of the shape.
        rank: usize,
    },
    /// A shape is a tuple where an array is required.
    #[error("{what} must be an array, not a tuple")]
    ExpectedArray {
        /// Which shape.
        what: String,
    },
    /// A shape is an array where a tuple is required.
    #[error("{what} must be a tuple")]
    ExpectedTuple {
        /// Which shape.
        what: String,
    },
    /// An attribute has the wrong number of entries.
    #[error("`{attribute}` has {found} entries, expected {expected}")]
    AttributeLength {
        /// The attribute.
        attribute: &'static str,
        /// The required number.
        expected: usize,
        /// The number given.
        found: usize,
    },
    /// A dimension number is not below the rank.
    #[error("`{attribute}` names dimension {dimension}, but the rank is {rank}")]
    DimensionOutOfRange {
        /// The attribute.
        attribute: &'static str,
        /// The dimension number.
        dimension: usize,
        /// The rank.
        rank: usize,
    },
    /// A dimension number appears twice.
    #[error("`{attribute}` names dimension {dimension} twice")]
    RepeatedDimension {
        /// The attribute.
        attribute: &'static str,
        /// The dimension number.
        dimension: usize,
    },
    /// A transpose's dimensions are not a permutation.
    #[error("dimensions={{{}}} is not a permutation of 0..{rank}", join(.dimensions))]
    NotAPermutation {
        /// The dimensions given.
        dimensions: Vec<usize>,
        /// The rank.
        rank: usize,
    },
    /// A shape differs from the one the op's attributes and operands imply.
    #[error("{what} should have shape [{}], but has [{}]", join(.expected), join(.found))]
    ShapeMismatch {
        /// Which shape.
        what: String,
        /// The shape implied by the op.
        expected: Vec<i64>,
        /// The shape given.
        found: Vec<i64>,
    },
    /// A reshape or bitcast changes the number of elements.
    #[error("the operand has {operand} elements but the result has {result}")]
    ElementCountMismatch {
        /// Elements of the operand.
        operand: i64,
        /// Elements of the result.
        result: i64,
    },
    /// A slice reads outside its operand.
    #[error("slice [{start}:{limit}] of dimension {dimension} is outside [0, {size}]")]
    SliceOutOfBounds {
        /// The dimension.
        dimension: usize,
        /// The start.
        start: i64,
        /// The limit.
        limit: i64,
        /// The operand's size in that dimension.
        size: i64,
    },
    /// An attribute that must be positive is not.
    #[error("{attribute} of dimension {dimension} is {value}, but must be at least 1")]
    NotPositive {
        /// The attribute (`stride`, `window size`, ...).
        attribute: &'static str,
        /// The dimension.
        dimension: usize,
        /// The value.
        value: i64,
    },
    /// A pad's interior padding is negative.
    #[error("interior padding of dimension {dimension} is {interior}, but must be at least 0")]
    NegativeInterior {
        /// The dimension.
        dimension: usize,
        /// The value.
        interior: i64,
    },
    /// A dot pairs two dimensions of different sizes.
    #[error(
        "{kind} dimension {lhs_dim} of the lhs has size {lhs_size} but {kind} dimension {rhs_dim} of the rhs has size {rhs_size}"
    )]
    DotSizeMismatch {
        /// `contracting` or `batch`.
        kind: &'static str,
        /// The lhs dimension.
        lhs_dim: usize,
        /// The rhs dimension.
        rhs_dim: usize,
        /// Its size in the lhs.
        lhs_size: i64,
        /// Its size in the rhs.
        rhs_size: i64,
    },
    /// A tuple index is not below the tuple's size.
    #[error("index {index} is outside a tuple of {size} elements")]
    TupleIndexOutOfRange {
        /// The index.
        index: usize,
        /// The tuple's size.
        size: usize,
    },
    /// A fusion's operand count differs from its computation's parameter count.
    #[error("has {operands} operands but the called computation has {parameters} parameters")]
    FusionParameterCount {
        /// Operands of the fusion.
        operands: usize,
        /// Parameters of the callee.
        parameters: usize,
    },
    /// An element type differs from the one the op requires.
    #[error("{what} should have {expected}, but has {found}")]
    ElementType {
        /// Which value.
        what: String,
        /// What it should be (`element type f32`, or a kind such as `an integer type`).
        expected: String,
        /// The element type given.
        found: crate::xla::ElementType,
    },
    /// Arithmetic on the op's sizes overflows 64 bits.
    #[error("the sizes overflow 64-bit arithmetic")]
    Overflow,
}
