//! A small builder that numbers instructions as they are added; validation happens once, in
//! [`HloModule::new`](super::HloModule::new).

use super::{HloComputation, HloInstruction, HloOp, HloShape, InstrId};

/// Builds an [`HloComputation`] one instruction at a time, in definition order.
#[derive(Debug, Clone)]
pub struct ComputationBuilder {
    name: String,
    instructions: Vec<HloInstruction>,
}

impl ComputationBuilder {
    /// An empty computation called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        ComputationBuilder { name: name.into(), instructions: Vec::new() }
    }

    /// Appends an instruction and returns its id.
    pub fn add(
        &mut self,
        name: impl Into<String>,
        shape: HloShape,
        op: HloOp,
        operands: &[InstrId],
    ) -> InstrId {
        self.instructions.push(HloInstruction { name: name.into(), shape, op, operands: operands.to_vec() });
        InstrId(self.instructions.len() - 1)
    }

    /// The id of the instruction with this name, if it was added.
    pub fn find(&self, name: &str) -> Option<InstrId> {
        self.instructions.iter().position(|i| i.name == name).map(InstrId)
    }

    /// The shape of an instruction already added.
    pub fn shape(&self, id: InstrId) -> Option<&HloShape> {
        self.instructions.get(id.0).map(|i| &i.shape)
    }

    /// The computation with `root` as its result.
    pub fn finish(self, root: InstrId) -> HloComputation {
        HloComputation { name: self.name, instructions: self.instructions, root }
    }
}
