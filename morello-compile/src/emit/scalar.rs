//! The computations reducers and maps apply, as C functions of scalars:
//!
//! ```c
//! static inline float NAME_f3(float p0, float p1) {          one result: returned
//!   const float v2 = (p0 + p1);
//!   return v2;
//! }
//! static inline void NAME_f7(float p0, int32_t p1, float p2, int32_t p3,
//!                            float *r0, int32_t *r1) { ... }  a tuple: through pointers
//! ```
//!
//! Parameters and values are in their compute types. The instructions allowed are those on
//! scalars: parameters, constants, elementwise ops, tuples and their elements, reshapes,
//! broadcasts and copies of scalars, and calls or fusions of such computations (which are
//! functions of their own, emitted first).

use std::fmt::Write as _;

use morello_xla::hlo::{ComputationId, HloOp, HloShape};

use super::Unit;
use super::ctype::{self, compute};
use super::expr::{CExpr, elementwise};

impl Unit<'_> {
    /// The C name of a computation's function.
    pub(crate) fn function_name(&self, id: ComputationId) -> String {
        format!("{}_f{}", self.name, id.0)
    }

    /// The functions of the computations `roots` apply and those they call, callees first.
    pub(crate) fn functions(&self, roots: &[ComputationId]) -> Result<String, String> {
        let mut order: Vec<ComputationId> = Vec::new();
        let mut stack: Vec<(ComputationId, bool)> = roots.iter().map(|&r| (r, false)).collect();
        while let Some((id, expanded)) = stack.pop() {
            if order.contains(&id) {
                continue;
            }
            if expanded {
                order.push(id);
                continue;
            }
            if stack.len() > 10_000 {
                return Err("reducers call too many computations".into());
            }
            stack.push((id, true));
            let computation = self.graph.module.computation(id).ok_or("no such computation")?;
            for instr in &computation.instructions {
                if let HloOp::Call { to_apply: callee } | HloOp::Fusion { calls: callee } = instr.op {
                    if !order.contains(&callee) {
                        stack.push((callee, false));
                    }
                }
            }
        }
        let mut text = String::new();
        for id in order {
            text += &self.function(id)?;
        }
        Ok(text)
    }

    fn function(&self, id: ComputationId) -> Result<String, String> {
        let computation = self.graph.module.computation(id).ok_or("no such computation")?;
        let name = self.function_name(id);
        let mut params = Vec::new();
        for (k, p) in computation.parameters().iter().enumerate() {
            let shape = computation.instructions[p.0].shape.as_array().ok_or("a tuple parameter")?;
            if shape.rank() != 0 {
                return Err(format!(
                    "`{}` takes arrays; reducers and maps apply scalar computations",
                    computation.name
                ));
            }
            params.push(format!("{} p{k}", compute(shape.element_type)));
        }
        let root = &computation.instructions[computation.root.0];
        let results = root.shape.arrays();
        if results.iter().any(|a| a.rank() != 0) {
            return Err(format!(
                "`{}` returns arrays; reducers and maps apply scalar computations",
                computation.name
            ));
        }
        let single = matches!(root.shape, HloShape::Array(_));
        if !single {
            for (k, a) in results.iter().enumerate() {
                params.push(format!("{} *r{k}", compute(a.element_type)));
            }
        }
        let result_type = if single { compute(results[0].element_type) } else { "void" };
        let mut body = format!("static inline {result_type} {name}({}) {{\n", params.join(", "));
        for k in 0..computation.parameters().len() {
            let _ = writeln!(body, "  (void)p{k};");
        }
        // Each instruction's value: the C names (or literals) of its scalars.
        let mut values: Vec<Vec<CExpr>> = Vec::with_capacity(computation.instructions.len());
        for (k, instr) in computation.instructions.iter().enumerate() {
            let operand = |j: usize| -> &Vec<CExpr> { &values[instr.operands[j].0] };
            let ty = instr.shape.as_array().map(|a| a.element_type);
            let scalars: Vec<CExpr> = match &instr.op {
                HloOp::Parameter { number } => {
                    let ty = ty.ok_or("a tuple parameter")?;
                    vec![CExpr { text: format!("p{number}"), ty }]
                }
                HloOp::Constant { literal: Some(literal), .. } if literal.len() == 1 => {
                    let ty = ty.ok_or("a tuple constant")?;
                    vec![CExpr { text: ctype::literal_value(literal.values(), 0, ty), ty }]
                }
                HloOp::Elementwise(op) => {
                    let ty = ty.ok_or("a tuple result")?;
                    let args: Vec<CExpr> = (0..instr.operands.len()).map(|j| operand(j)[0].clone()).collect();
                    let text = elementwise(*op, ty, &args)?;
                    let _ = writeln!(body, "  const {} v{k} = {text};", compute(ty));
                    vec![CExpr { text: format!("v{k}"), ty }]
                }
                HloOp::Reshape | HloOp::Broadcast { .. } | HloOp::Bitcast | HloOp::Transpose { .. } => {
                    let ty = ty.ok_or("a tuple result")?;
                    vec![CExpr { text: operand(0)[0].text.clone(), ty }]
                }
                HloOp::Tuple => (0..instr.operands.len()).map(|j| operand(j)[0].clone()).collect(),
                HloOp::GetTupleElement { index } => {
                    vec![operand(0).get(*index).cloned().ok_or("no such tuple element")?]
                }
                HloOp::Call { to_apply: callee } | HloOp::Fusion { calls: callee } => {
                    let args: Vec<String> = (0..instr.operands.len())
                        .flat_map(|j| operand(j).iter().map(|e| e.text.clone()))
                        .collect();
                    let callee_name = self.function_name(*callee);
                    match &instr.shape {
                        HloShape::Array(a) => {
                            let _ = writeln!(
                                body,
                                "  const {} v{k} = {callee_name}({});",
                                compute(a.element_type),
                                args.join(", ")
                            );
                            vec![CExpr { text: format!("v{k}"), ty: a.element_type }]
                        }
                        HloShape::Tuple(elements) => {
                            let mut out = Vec::new();
                            let mut pointers = Vec::new();
                            for (j, a) in elements.iter().enumerate() {
                                let _ = writeln!(body, "  {} v{k}_{j};", compute(a.element_type));
                                pointers.push(format!("&v{k}_{j}"));
                                out.push(CExpr { text: format!("v{k}_{j}"), ty: a.element_type });
                            }
                            let all: Vec<String> = args.into_iter().chain(pointers).collect();
                            let _ = writeln!(body, "  {callee_name}({});", all.join(", "));
                            out
                        }
                    }
                }
                other => {
                    return Err(format!(
                        "`{}` in `{}`: reducers and maps apply computations of scalar elementwise ops",
                        other.opcode(),
                        computation.name
                    ));
                }
            };
            values.push(scalars);
        }
        let root_values = &values[computation.root.0];
        if single {
            let _ = writeln!(body, "  return {};", root_values[0].text);
        } else {
            for (k, v) in root_values.iter().enumerate() {
                let _ = writeln!(body, "  *r{k} = {};", v.text);
            }
        }
        body += "}\n";
        Ok(body)
    }
}
