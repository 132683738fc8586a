//! The element-type rules of XLA's shape inference, for the ops that evaluate and compile:
//! [`HloModule::check_element_types`](super::HloModule::check_element_types).
//!
//! ```text
//! arithmetic, min/max, bitwise, clamp      operands and result of one type
//! exp, log, tanh, erf, ... , is-finite     a float operand (is-finite: a pred result)
//! compare                                  operands of one type, a pred result
//! select                                   a pred predicate, branches and result of one type
//! convert                                  any array type to any other
//! bitcast-convert                          types of one width
//! data movement (broadcast ... gather)     the result has the (data) operand's type; the
//!                                          offsets and start indices are integers
//! reduce, reduce-window                    inits and results of one type each; the reducer
//!                                          takes (accumulators, elements) and returns them
//! map, fusion, call                        operands are the callee's parameters, the result its root
//! dot, convolution                         numeric operands and result (mixed precision allowed)
//! tuple, get-tuple-element                 the elements' types
//! ```
//!
//! The indexing analysis does not need these rules, so [`HloModule::new`](super::HloModule::new)
//! does not check them: only what evaluates values does.

use super::literal::is_float_type;
use super::{
    ArrayShape, ComputationId, ElementwiseOp, HloComputation, HloError, HloErrorKind, HloInstruction,
    HloModule, HloOp, HloShape,
};
use crate::xla::ElementType;

type Check = Result<(), HloErrorKind>;

/// Checks every instruction of every computation.
pub(super) fn check(module: &HloModule) -> Result<(), HloError> {
    for computation in module.computations() {
        for instr in &computation.instructions {
            let rules = Rules { module, computation, instr };
            rules.check().map_err(|kind| HloError {
                computation: computation.name.clone(),
                instruction: Some(instr.name.clone()),
                kind,
            })?;
        }
    }
    Ok(())
}

struct Rules<'a> {
    module: &'a HloModule,
    computation: &'a HloComputation,
    instr: &'a HloInstruction,
}

fn mismatch(what: impl Into<String>, expected: impl Into<String>, found: ElementType) -> HloErrorKind {
    HloErrorKind::ElementType { what: what.into(), expected: expected.into(), found }
}

fn is_numeric(t: ElementType) -> bool {
    t.is_integer() || is_float_type(t)
}

impl Rules<'_> {
    fn operand_instr(&self, position: usize) -> &HloInstruction {
        &self.computation.instructions[self.instr.operands[position].0]
    }

    /// Operand `position`'s array (validated modules have arrays where the op needs them).
    fn operand(&self, position: usize) -> Option<&ArrayShape> {
        self.instr.operands.get(position).and_then(|_| self.operand_instr(position).shape.as_array())
    }

    fn operand_type(&self, position: usize) -> Option<ElementType> {
        self.operand(position).map(|a| a.element_type)
    }

    fn what(&self, position: usize) -> String {
        format!("operand {position} (`{}`)", self.operand_instr(position).name)
    }

    fn result_type(&self) -> Option<ElementType> {
        self.instr.shape.as_array().map(|a| a.element_type)
    }

    /// Operands in `positions` have type `expected`.
    fn operands_are(&self, positions: impl IntoIterator<Item = usize>, expected: ElementType) -> Check {
        for position in positions {
            if let Some(t) = self.operand_type(position) {
                if t != expected {
                    return Err(mismatch(self.what(position), format!("element type {expected}"), t));
                }
            }
        }
        Ok(())
    }

    fn result_is(&self, expected: ElementType) -> Check {
        match self.result_type() {
            Some(t) if t != expected => Err(mismatch("the result", format!("element type {expected}"), t)),
            _ => Ok(()),
        }
    }

    /// Operands in `positions` have an integer type.
    fn integers(&self, positions: impl IntoIterator<Item = usize>) -> Check {
        for position in positions {
            if let Some(t) = self.operand_type(position) {
                if !t.is_integer() {
                    return Err(mismatch(self.what(position), "an integer type", t));
                }
            }
        }
        Ok(())
    }

    fn check(&self) -> Check {
        let n = self.instr.operands.len();
        match &self.instr.op {
            HloOp::Parameter { .. } | HloOp::Constant { .. } | HloOp::Unknown { .. } => Ok(()),
            HloOp::Iota { .. } => match self.result_type() {
                Some(t) if !is_numeric(t) => Err(mismatch("the result", "a numeric type", t)),
                _ => Ok(()),
            },
            HloOp::Elementwise(op) => self.elementwise(*op),
            HloOp::Broadcast { .. }
            | HloOp::Transpose { .. }
            | HloOp::Reverse { .. }
            | HloOp::Slice { .. }
            | HloOp::Reshape
            | HloOp::Concatenate { .. } => {
                let t = self.result_type();
                t.map_or(Ok(()), |t| self.operands_are(0..n, t))
            }
            HloOp::Bitcast => Ok(()),
            HloOp::Pad { .. } => self.result_type().map_or(Ok(()), |t| self.operands_are(0..2, t)),
            HloOp::DynamicSlice { .. } => {
                self.result_type().map_or(Ok(()), |t| self.operands_are([0], t))?;
                self.integers(1..n)
            }
            HloOp::DynamicUpdateSlice => {
                self.result_type().map_or(Ok(()), |t| self.operands_are([0, 1], t))?;
                self.integers(2..n)
            }
            HloOp::Gather(_) => {
                self.result_type().map_or(Ok(()), |t| self.operands_are([0], t))?;
                self.integers([1])
            }
            HloOp::Dot(_) | HloOp::Convolution { .. } => {
                for position in 0..n {
                    if let Some(t) = self.operand_type(position) {
                        if !is_numeric(t) {
                            return Err(mismatch(self.what(position), "a numeric type", t));
                        }
                    }
                }
                match self.result_type() {
                    Some(t) if !is_numeric(t) => Err(mismatch("the result", "a numeric type", t)),
                    _ => Ok(()),
                }
            }
            HloOp::Reduce { to_apply, .. } | HloOp::ReduceWindow { to_apply, .. } => self.reducer(*to_apply),
            HloOp::Map { to_apply } => self.callee(*to_apply, false),
            HloOp::Fusion { calls } => self.callee(*calls, true),
            HloOp::Call { to_apply } => self.callee(*to_apply, true),
            HloOp::Tuple => {
                let HloShape::Tuple(elements) = &self.instr.shape else { return Ok(()) };
                for (position, element) in elements.iter().enumerate() {
                    self.operands_are([position], element.element_type)?;
                }
                Ok(())
            }
            HloOp::GetTupleElement { index } => {
                let HloShape::Tuple(elements) = &self.operand_instr(0).shape else { return Ok(()) };
                elements.get(*index).map_or(Ok(()), |e| self.result_is(e.element_type))
            }
        }
    }

    fn elementwise(&self, op: ElementwiseOp) -> Check {
        use ElementwiseOp as E;
        let n = self.instr.operands.len();
        let Some(result) = self.result_type() else { return Ok(()) };
        match op {
            E::Convert | E::StochasticConvert | E::Real | E::Imag | E::Complex => Ok(()),
            E::BitcastConvert => match self.operand_type(0) {
                Some(t) if t.bits() != result.bits() => {
                    Err(mismatch(self.what(0), format!("a type of {} bits", result.bits()), t))
                }
                _ => Ok(()),
            },
            E::Compare(_) => {
                self.result_is(ElementType::Pred)?;
                self.operand_type(0).map_or(Ok(()), |t| self.operands_are(0..n, t))
            }
            E::IsFinite => {
                self.result_is(ElementType::Pred)?;
                match self.operand_type(0) {
                    Some(t) if !is_float_type(t) => Err(mismatch(self.what(0), "a float type", t)),
                    _ => Ok(()),
                }
            }
            E::Select => {
                self.operands_are([0], ElementType::Pred)?;
                self.operands_are(1..n, result)
            }
            E::Exponential
            | E::Log
            | E::Tanh
            | E::Sqrt
            | E::Rsqrt
            | E::Cbrt
            | E::Logistic
            | E::Sine
            | E::Cosine
            | E::Tan
            | E::Erf
            | E::ExponentialMinusOne
            | E::LogPlusOne
            | E::Floor
            | E::Ceil
            | E::RoundNearestEven
            | E::RoundNearestAfz
            | E::Atan2
            | E::ReducePrecision => {
                if !is_float_type(result) {
                    return Err(mismatch("the result", "a float type", result));
                }
                self.operands_are(0..n, result)
            }
            E::Not | E::And | E::Or | E::Xor => {
                if !(result.is_integer() || result == ElementType::Pred) {
                    return Err(mismatch("the result", "an integer type or pred", result));
                }
                self.operands_are(0..n, result)
            }
            E::Popcnt
            | E::CountLeadingZeros
            | E::ShiftLeft
            | E::ShiftRightArithmetic
            | E::ShiftRightLogical => {
                if !result.is_integer() {
                    return Err(mismatch("the result", "an integer type", result));
                }
                self.operands_are(0..n, result)
            }
            E::Add
            | E::Subtract
            | E::Multiply
            | E::Divide
            | E::Maximum
            | E::Minimum
            | E::Negate
            | E::Abs
            | E::Sign
            | E::Power
            | E::Remainder
            | E::Copy
            | E::Clamp => self.operands_are(0..n, result),
        }
    }

    /// A reducer takes `n` accumulators (the inits' types) then `n` elements (the inputs'
    /// types) and returns the accumulators; the results have the inits' types.
    fn reducer(&self, to_apply: ComputationId) -> Check {
        let n = self.instr.operands.len() / 2;
        let Some(callee) = self.module.computation(to_apply) else { return Ok(()) };
        let params = callee.parameters();
        let types = |positions: std::ops::Range<usize>| -> Vec<Option<ElementType>> {
            positions.map(|p| self.operand_type(p)).collect()
        };
        let (inputs, inits) = (types(0..n), types(n..2 * n));
        for (k, param) in params.iter().enumerate() {
            let expected = if k < n { inits.get(k) } else { inputs.get(k - n) };
            let found = callee.instructions[param.0].shape.as_array().map(|a| a.element_type);
            if let (Some(Some(expected)), Some(found)) = (expected, found) {
                if *expected != found {
                    return Err(mismatch(
                        format!("parameter {k} of the reducer `{}`", callee.name),
                        format!("element type {expected}"),
                        found,
                    ));
                }
            }
        }
        let root = &callee.instructions[callee.root.0].shape;
        for (k, (array, init)) in root.arrays().iter().zip(&inits).enumerate() {
            if let Some(init) = init {
                if array.element_type != *init {
                    return Err(mismatch(
                        format!("result {k} of the reducer `{}`", callee.name),
                        format!("element type {init}"),
                        array.element_type,
                    ));
                }
            }
        }
        for (k, (array, init)) in self.instr.shape.arrays().iter().zip(&inits).enumerate() {
            if let Some(init) = init {
                if array.element_type != *init {
                    let what = if n == 1 { "the result".to_string() } else { format!("result element {k}") };
                    return Err(mismatch(what, format!("element type {init}"), array.element_type));
                }
            }
        }
        Ok(())
    }

    /// The operands are the callee's parameters and (unless `map`, whose callee is scalar) the
    /// result is its root.
    fn callee(&self, callee: ComputationId, whole: bool) -> Check {
        let Some(callee) = self.module.computation(callee) else { return Ok(()) };
        for (position, param) in callee.parameters().iter().enumerate() {
            let param = &callee.instructions[param.0];
            let Some(operand) = self.instr.operands.get(position) else { continue };
            let operand = &self.computation.instructions[operand.0];
            for (k, (a, b)) in param.shape.arrays().iter().zip(operand.shape.arrays()).enumerate() {
                if a.element_type != b.element_type {
                    let what = if param.shape.as_array().is_some() {
                        self.what(position)
                    } else {
                        format!("element {k} of {}", self.what(position))
                    };
                    return Err(mismatch(what, format!("element type {}", a.element_type), b.element_type));
                }
            }
        }
        let root = &callee.instructions[callee.root.0].shape;
        for (k, (a, b)) in root.arrays().iter().zip(self.instr.shape.arrays()).enumerate() {
            if a.element_type != b.element_type {
                let what = if whole && root.as_array().is_none() {
                    format!("result element {k}")
                } else {
                    "the result".to_string()
                };
                return Err(mismatch(what, format!("element type {}", a.element_type), b.element_type));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use crate::hlo::HloModule;

    fn check(body: &str) -> Result<(), String> {
        let module: HloModule = body.parse().map_err(|e| format!("{e}"))?;
        module.check_element_types().map_err(|e| e.to_string())
    }

    #[test]
    fn well_typed_modules_pass() {
        check(
            "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n\
             ENTRY e {\n p = f32[4,3] parameter(0)\n i = s32[] parameter(1)\n z = f32[] constant(0)\n\
             c = pred[4,3] compare(p, p), direction=LT\n s = f32[4,3] select(c, p, p)\n\
             d = f32[2,3] dynamic-slice(s, i, i), dynamic_slice_sizes={2,3}\n\
             ROOT r = f32[3] reduce(d, z), dimensions={0}, to_apply=add\n}",
        )
        .unwrap();
    }

    #[test]
    fn type_errors_name_the_instruction() {
        for (body, message) in [
            (
                "ENTRY e {\n a = f32[2] parameter(0)\n b = s32[2] parameter(1)\n ROOT s = f32[2] add(a, b)\n}",
                "instruction `s` in computation `e`: operand 1 (`b`) should have element type f32, but has s32",
            ),
            (
                "ENTRY e {\n a = f32[2] parameter(0)\n ROOT c = f32[2] compare(a, a), direction=LT\n}",
                "the result should have element type pred, but has f32",
            ),
            (
                "ENTRY e {\n a = f32[4] parameter(0)\n i = f32[] parameter(1)\n ROOT d = f32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}\n}",
                "operand 1 (`i`) should have an integer type, but has f32",
            ),
            (
                "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n\
                 ENTRY e {\n p = s32[4] parameter(0)\n z = s32[] constant(0)\n ROOT r = s32[] reduce(p, z), dimensions={0}, to_apply=add\n}",
                "parameter 0 of the reducer `add` should have element type s32, but has f32",
            ),
            (
                "ENTRY e {\n a = s32[2] parameter(0)\n ROOT x = s32[2] exponential(a)\n}",
                "the result should have a float type, but has s32",
            ),
        ] {
            let error = check(body).unwrap_err();
            assert!(error.contains(message), "{error}");
        }
    }
}
