//! A plain-data model of XLA HLO modules, for the subset the indexing analysis understands.
//!
//! An [`HloModule`] is a list of [`HloComputation`]s, one of them the entry. A computation is a
//! list of [`HloInstruction`]s in definition order; each has a name, a [`HloShape`] (an array or
//! a one-level tuple of arrays), an [`HloOp`] with the opcode's attributes, and operands that
//! refer to earlier instructions of the same computation by [`InstrId`].
//!
//! ```text
//! module      = computations (in any order) + entry
//! computation = instructions in definition order + root
//! instruction = name, shape, op (opcode and attributes), operands (earlier instructions)
//! ```
//!
//! [`HloModule::new`] validates everything once: names, operand order, parameter numbers, calls
//! (which must not recurse), and every op's attributes against its operand and result shapes (a transpose
//! that is not a permutation, a slice out of bounds, a dot whose contracting sizes differ, ...).
//! Errors are [`HloError`]s that name the computation and the instruction. Code holding an
//! `HloModule` can rely on those checks.
//!
//! [`text`] reads HLO module text into these values (`text.parse::<HloModule>()`), with errors
//! that give the line, column and instruction ([`HloTextError`]); [`crate::indexing`] computes
//! indexing maps from them; [`crate::eval`] evaluates them. The model itself is data and
//! validation only. Element types are modelled (no map depends on them, but evaluating and
//! compiling a module do), and so are constants' literals ([`Literal`]); layouts are, as
//! `minor_to_major`, because a bitcast's meaning depends on them.
//!
//! ```
//! use morello_xla::hlo::{
//!     ComputationBuilder, ComputationId, HloModule, HloOp, HloShape,
//! };
//! let mut f = ComputationBuilder::new("f");
//! let p0 = f.add("p0", HloShape::array(&[20]), HloOp::Parameter { number: 0 }, &[]);
//! let bc = f.add(
//!     "bc0",
//!     HloShape::array(&[10, 20, 30]),
//!     HloOp::Broadcast { dimensions: vec![1] },
//!     &[p0],
//! );
//! let module = HloModule::new("m", vec![f.finish(bc)], ComputationId(0)).unwrap();
//! assert_eq!(module.entry().root_instruction().unwrap().name, "bc0");
//! ```

mod builder;
mod error;
mod literal;
mod op;
mod shape;
pub mod text;
mod types;
mod validate;

pub use builder::ComputationBuilder;
pub use error::{HloError, HloErrorKind};
pub use literal::{Literal, LiteralValues, integer_range, is_float_type};
pub use op::{
    ComparisonDirection, ConvolutionDimensions, DotDimensions, ElementwiseOp, GatherDimensions, HloOp,
    PadDim, SliceDim, WindowDim,
};
pub use shape::{ArrayShape, HloShape};
pub use text::{HloTextError, HloTextErrorKind, SUPPORTED_OPCODES};
pub(crate) use validate::padded_size;

/// The position of an instruction in its computation's instruction list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstrId(pub usize);

/// The position of a computation in its module's computation list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputationId(pub usize);

/// One HLO instruction: `name = shape opcode(operands), attributes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HloInstruction {
    /// The instruction's name, unique in its computation.
    pub name: String,
    /// The shape of its result.
    pub shape: HloShape,
    /// The opcode and its attributes.
    pub op: HloOp,
    /// The operands, each an earlier instruction of the same computation.
    pub operands: Vec<InstrId>,
}

/// A computation: instructions in definition order and the one that is the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HloComputation {
    /// The computation's name, unique in its module.
    pub name: String,
    /// The instructions; operands always refer to earlier ones.
    pub instructions: Vec<HloInstruction>,
    /// The result (`ROOT`) instruction.
    pub root: InstrId,
}

impl HloComputation {
    /// The instruction with this id, if it exists.
    pub fn instruction(&self, id: InstrId) -> Option<&HloInstruction> {
        self.instructions.get(id.0)
    }

    /// The id of the instruction with this name, if any.
    pub fn instruction_by_name(&self, name: &str) -> Option<InstrId> {
        self.instructions.iter().position(|i| i.name == name).map(InstrId)
    }

    /// The root instruction (always present in a validated [`HloModule`]).
    pub fn root_instruction(&self) -> Option<&HloInstruction> {
        self.instruction(self.root)
    }

    /// The `parameter` instructions by parameter number (validated modules number them `0..n`).
    pub fn parameters(&self) -> Vec<InstrId> {
        let mut params: Vec<(usize, InstrId)> = self
            .instructions
            .iter()
            .enumerate()
            .filter_map(|(i, instr)| match instr.op {
                HloOp::Parameter { number } => Some((number, InstrId(i))),
                _ => None,
            })
            .collect();
        params.sort();
        params.into_iter().map(|(_, id)| id).collect()
    }

    /// The elementwise op, when the computation is nothing but that op of its two parameters (a
    /// reducer such as `add(x0, x1)`), with the parameter numbers in operand order (`[1, 0]` for
    /// `add(x1, x0)`).
    pub fn binary_op_of_parameters(&self) -> Option<(ElementwiseOp, [usize; 2])> {
        let root = self.root_instruction()?;
        let HloOp::Elementwise(op) = root.op else { return None };
        let parameter = |o: &InstrId| match self.instructions[o.0].op {
            HloOp::Parameter { number } => Some(number),
            _ => None,
        };
        let [Some(a), Some(b)] = root.operands.iter().map(parameter).collect::<Vec<_>>()[..] else {
            return None;
        };
        let mut sorted = [a, b];
        sorted.sort_unstable();
        (sorted == [0, 1] && self.parameters().len() == 2).then_some((op, [a, b]))
    }
}

/// A validated HLO module.
///
/// # Invariants
/// - Computation names are unique; instruction names are unique in their computation.
/// - Every operand refers to an earlier instruction of the same computation, and every root
///   exists, so definition order is a topological order.
/// - Parameters of each computation are numbered `0..n` without gaps or repeats.
/// - Called computations (`to_apply`, `calls`) exist and calls never recurse: the call graph is
///   acyclic.
/// - Every instruction's attributes agree with its operand and result shapes, as checked by
///   [`HloModule::new`] (see [`HloErrorKind`] for the list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HloModule {
    name: String,
    computations: Vec<HloComputation>,
    entry: ComputationId,
}

impl HloModule {
    /// Validates and builds a module; computations may be listed in any order.
    ///
    /// # Errors
    /// The first [`HloError`] found, naming the computation and the instruction.
    pub fn new(
        name: impl Into<String>,
        computations: Vec<HloComputation>,
        entry: ComputationId,
    ) -> Result<Self, HloError> {
        validate::module(&computations, entry)?;
        Ok(HloModule { name: name.into(), computations, entry })
    }

    /// The module's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Every computation, in the order given.
    pub fn computations(&self) -> &[HloComputation] {
        &self.computations
    }

    /// The computation with this id, if it exists.
    pub fn computation(&self, id: ComputationId) -> Option<&HloComputation> {
        self.computations.get(id.0)
    }

    /// The id of the computation with this name, if any.
    pub fn computation_by_name(&self, name: &str) -> Option<ComputationId> {
        self.computations.iter().position(|c| c.name == name).map(ComputationId)
    }

    /// The id of the entry computation.
    pub fn entry_id(&self) -> ComputationId {
        self.entry
    }

    /// The entry computation.
    pub fn entry(&self) -> &HloComputation {
        &self.computations[self.entry.0]
    }

    /// Checks the element types of every instruction against XLA's rules (operands of an add
    /// of one type, a pred predicate, integer offsets, ...), which the indexing analysis does
    /// not need and [`HloModule::new`] does not check; evaluating or compiling a module does.
    ///
    /// # Errors
    /// The first [`HloErrorKind::ElementType`], naming the computation and the instruction.
    pub fn check_element_types(&self) -> Result<(), HloError> {
        types::check(self)
    }
}

#[cfg(test)]
mod tests;
