//! Loop nests straight from the HLO semantics, one per node the plan gives loops.
//!
//! ```text
//! any op with an expression form   for each output index (in the layout's order, slowest
//!                                  first): buffer[offset] = its expression
//! reduce                           for each output index: accumulators from the inits, then for
//!                                  each index of the reduced dims (row-major): acc = f(acc, x)
//! reduce-window                    the same over the window, skipping padding and the holes of
//!                                  a base dilation
//! dot                              for each output index: the sum over the contracting dims
//! convolution                      for each output index: the sum over the feature group's
//!                                  input features and the window, as XLA's evaluator defines it
//! ```
//!
//! Accumulators are in the compute type (float for f32 and bf16, wrapping integers), so a
//! reduction's order is the evaluator's and its rounding within its bound.

use std::fmt::Write as _;

use morello_xla::hlo::{ArrayShape, ConvolutionDimensions, DotDimensions, ElementwiseOp, HloOp, WindowDim};

use super::Unit;
use super::ctype::{self, compute};
use super::expr::{CExpr, add, elementwise, mul, offset, paren};
use crate::graph::ValueId;

impl Unit<'_> {
    /// Declares a fresh accumulator in `ty`'s compute type, set to zero; returns its name.
    fn zeroed_accumulator(&mut self, ty: morello_xla::xla::ElementType) -> String {
        let acc = self.fresh("acc");
        let zero =
            if ctype::is_float(ty) { ctype::float_literal(0.0, ty) } else { ctype::int_literal(0, ty) };
        self.line(&format!("{} {acc} = {zero};", compute(ty)));
        acc
    }

    /// Loops over every index of `dims` in the physical order of `shape`'s layout (dims of size 1
    /// get the index `0`), calling `body` with the logical index; nothing for an empty shape.
    fn nest(
        &mut self,
        shape: &ArrayShape,
        body: impl FnOnce(&mut Self, &[String]) -> Result<(), String>,
    ) -> Result<(), String> {
        if shape.dims.contains(&0) {
            return Ok(());
        }
        let mut index = vec!["0".to_string(); shape.rank()];
        let mut opened = 0;
        for d in shape.major_to_minor() {
            if shape.dims[d] == 1 {
                continue;
            }
            let i = self.fresh("i");
            self.open(&format!("for (int64_t {i} = 0; {i} < {}; {i}++) {{", shape.dims[d]));
            index[d] = i;
            opened += 1;
        }
        body(self, &index)?;
        for _ in 0..opened {
            self.close();
        }
        Ok(())
    }

    /// Loops over the row-major index of `dims` (a reduction's or window's own dims).
    fn inner(
        &mut self,
        dims: &[i64],
        body: impl FnOnce(&mut Self, &[String]) -> Result<(), String>,
    ) -> Result<(), String> {
        let shape = ArrayShape::new(dims);
        self.nest(&shape, body)
    }

    /// The loops of node `id`, writing its buffers.
    pub(crate) fn loops(&mut self, id: usize) -> Result<(), String> {
        let node = &self.graph.nodes[id];
        let op = node.op().ok_or("a parameter has no loops")?.clone();
        match op {
            HloOp::Reduce { dimensions, .. } => self.reduce(id, &dimensions),
            HloOp::ReduceWindow { window, .. } => self.reduce_window(id, &window),
            HloOp::Dot(dims) => self.dot(id, &dims),
            HloOp::Convolution { window, dims, feature_group_count, batch_group_count } => {
                self.convolution(id, &window, &dims, feature_group_count, batch_group_count)
            }
            HloOp::Unknown { opcode } => Err(format!(
                "`{opcode}` is not compiled (the model has no semantics for it; see docs/compile.md for the ops that are)"
            )),
            _ => {
                let value = ValueId::of(id);
                let shape = self.graph.shape(value).clone();
                let target = self.buffer_names.get(&value).cloned().ok_or("no buffer")?;
                self.nest(&shape, |unit, index| {
                    let e = unit.compute(value, index)?;
                    let line = format!(
                        "{target}[{}] = {};",
                        offset(&shape, index),
                        ctype::store(&e.text, shape.element_type)
                    );
                    unit.line(&line);
                    Ok(())
                })
            }
        }
    }

    /// Writes `value` into the buffer `target` of `shape` (a result that is a copy).
    pub(crate) fn copy(&mut self, value: ValueId, shape: &ArrayShape, target: &str) -> Result<(), String> {
        self.nest(shape, |unit, index| {
            let e = unit.elem(value, index)?;
            let line = format!(
                "{target}[{}] = {};",
                offset(shape, index),
                ctype::store(&e.text, shape.element_type)
            );
            unit.line(&line);
            Ok(())
        })
    }

    /// A constant's table, in its layout's order.
    pub(crate) fn table(&self, value: ValueId) -> Result<String, String> {
        let shape = self.graph.shape(value);
        let Some(HloOp::Constant { literal: Some(literal), .. }) = self.graph.node(value).op() else {
            return Err("the constant's values are not in the module (printed as `{...}`): dump it with its large constants".into());
        };
        let t = super::storage(shape.element_type).ok_or("no C type")?;
        let n = literal.len();
        let strides = crate::views::layout_strides(shape);
        let row_major = morello_xla::eval::strides(&shape.dims);
        let mut by_position = vec![String::new(); n];
        for (linear, slot) in (0..n).map(|l| (l, l)) {
            // The element at row-major position `linear` goes to its buffer position.
            let mut rest = linear;
            let mut position = 0i64;
            for (d, &s) in row_major.iter().enumerate() {
                let i = (rest / s) as i64;
                rest %= s;
                position += i * strides[d];
            }
            let value = ctype::literal_value(literal.values(), slot, shape.element_type);
            by_position[position as usize] = ctype::store(&value, shape.element_type);
        }
        let mut text = format!("static const {t} {}[{}] = {{", self.buffer_names[&value], n.max(1));
        for (k, v) in by_position.iter().enumerate() {
            if k % 8 == 0 {
                text += "\n  ";
            }
            let _ = write!(text, "{v}, ");
        }
        text += "\n};\n";
        Ok(text)
    }

    /// One step of a fold: `acc = f(acc, x)` for each accumulator.
    fn fold_step(
        &mut self,
        to_apply: morello_xla::hlo::ComputationId,
        accs: &[(String, morello_xla::xla::ElementType)],
        xs: &[CExpr],
    ) -> Result<(), String> {
        let computation = self.graph.module.computation(to_apply).ok_or("no reducer")?;
        if accs.len() == 1 {
            // A reducer that is one op of its two parameters is written inline.
            if let Some((op, [a, b])) = computation.binary_op_of_parameters()
                && matches!(
                    op,
                    ElementwiseOp::Add
                        | ElementwiseOp::Maximum
                        | ElementwiseOp::Minimum
                        | ElementwiseOp::Multiply
                        | ElementwiseOp::And
                        | ElementwiseOp::Or
                )
            {
                let acc = CExpr { text: accs[0].0.clone(), ty: accs[0].1 };
                let pick = |n: usize| if n == 0 { acc.clone() } else { xs[0].clone() };
                let text = elementwise(op, accs[0].1, &[pick(a), pick(b)])?;
                let line = format!("{} = {text};", accs[0].0);
                self.line(&line);
                return Ok(());
            }
            let args: Vec<String> =
                std::iter::once(accs[0].0.clone()).chain(xs.iter().map(|x| x.text.clone())).collect();
            let line = format!("{} = {}({});", accs[0].0, self.function_name(to_apply), args.join(", "));
            self.line(&line);
            return Ok(());
        }
        let mut args: Vec<String> = accs.iter().map(|(a, _)| a.clone()).collect();
        args.extend(xs.iter().map(|x| x.text.clone()));
        args.extend(accs.iter().map(|(a, _)| format!("&{a}")));
        let line = format!("{}({});", self.function_name(to_apply), args.join(", "));
        self.line(&line);
        Ok(())
    }

    fn accumulators(
        &mut self,
        node: usize,
        n: usize,
    ) -> Result<Vec<(String, morello_xla::xla::ElementType)>, String> {
        let operands = self.graph.nodes[node].operands.clone();
        let mut accs = Vec::new();
        for k in 0..n {
            let init = self.elem(operands[n + k], &[])?;
            let name = self.fresh("acc");
            let line = format!("{} {name} = {};", compute(init.ty), init.text);
            self.line(&line);
            accs.push((name, init.ty));
        }
        Ok(accs)
    }

    fn store_accumulators(
        &mut self,
        node: usize,
        accs: &[(String, morello_xla::xla::ElementType)],
        index: &[String],
    ) {
        for (k, (acc, _)) in accs.iter().enumerate() {
            let value = ValueId { node, output: k };
            let shape = self.graph.shape(value).clone();
            let line = format!(
                "{}[{}] = {};",
                self.buffer_names[&value],
                offset(&shape, index),
                ctype::store(acc, shape.element_type)
            );
            self.line(&line);
        }
    }

    fn reduce(&mut self, id: usize, dimensions: &[usize]) -> Result<(), String> {
        let node = self.graph.nodes[id].clone();
        let Some(HloOp::Reduce { to_apply, .. }) = node.op() else { return Err("not a reduce".into()) };
        let n = node.operands.len() / 2;
        let input = self.graph.shape(node.operands[0]).clone();
        let kept: Vec<usize> = (0..input.rank()).filter(|d| !dimensions.contains(d)).collect();
        let reduced: Vec<i64> = dimensions.iter().map(|&d| input.dims[d]).collect();
        let mut sorted_dims = dimensions.to_vec();
        sorted_dims.sort_unstable();
        let out = node.outputs[0].clone();
        self.nest(&out, |unit, index| {
            let accs = unit.accumulators(id, n)?;
            let reduced_shape: Vec<i64> = sorted_dims.iter().map(|&d| input.dims[d]).collect();
            let _ = &reduced;
            unit.inner(&reduced_shape, |unit, r| {
                let mut at = vec!["0".to_string(); input.rank()];
                for (k, &d) in kept.iter().enumerate() {
                    at[d] = index[k].clone();
                }
                for (k, &d) in sorted_dims.iter().enumerate() {
                    at[d] = r[k].clone();
                }
                let xs: Vec<CExpr> =
                    (0..n).map(|k| unit.elem(node.operands[k], &at)).collect::<Result<_, _>>()?;
                unit.fold_step(*to_apply, &accs, &xs)
            })?;
            unit.store_accumulators(id, &accs, index);
            Ok(())
        })
    }

    fn reduce_window(&mut self, id: usize, window: &[WindowDim]) -> Result<(), String> {
        let node = self.graph.nodes[id].clone();
        let Some(HloOp::ReduceWindow { to_apply, .. }) = node.op() else {
            return Err("not a reduce-window".into());
        };
        let n = node.operands.len() / 2;
        let input = self.graph.shape(node.operands[0]).clone();
        let sizes: Vec<i64> = window.iter().map(|w| w.size).collect();
        let out = node.outputs[0].clone();
        self.nest(&out, |unit, index| {
            let accs = unit.accumulators(id, n)?;
            unit.inner(&sizes, |unit, w| {
                let (conditions, at) = window_positions(window, &input.dims, index, w);
                let xs: Vec<CExpr> =
                    (0..n).map(|k| unit.elem(node.operands[k], &at)).collect::<Result<_, _>>()?;
                if !conditions.is_empty() {
                    unit.open(&format!("if ({}) {{", conditions.join(" && ")));
                }
                unit.fold_step(*to_apply, &accs, &xs)?;
                if !conditions.is_empty() {
                    unit.close();
                }
                Ok(())
            })?;
            unit.store_accumulators(id, &accs, index);
            Ok(())
        })
    }

    fn dot(&mut self, id: usize, dims: &DotDimensions) -> Result<(), String> {
        let node = self.graph.nodes[id].clone();
        let (lhs_v, rhs_v) = (node.operands[0], node.operands[1]);
        let (lhs, rhs) = (self.graph.shape(lhs_v).clone(), self.graph.shape(rhs_v).clone());
        let out = node.outputs[0].clone();
        let ty = out.element_type;
        let free = |rank: usize, a: &[usize], b: &[usize]| -> Vec<usize> {
            (0..rank).filter(|d| !a.contains(d) && !b.contains(d)).collect()
        };
        let lhs_free = free(lhs.rank(), &dims.lhs_batch, &dims.lhs_contracting);
        let rhs_free = free(rhs.rank(), &dims.rhs_batch, &dims.rhs_contracting);
        let k_dims: Vec<i64> = dims.lhs_contracting.iter().map(|&d| lhs.dims[d]).collect();
        let (nb, nl) = (dims.lhs_batch.len(), lhs_free.len());
        let target = self.buffer_names[&ValueId::of(id)].clone();
        self.nest(&out, |unit, index| {
            let acc = unit.zeroed_accumulator(ty);
            unit.inner(&k_dims, |unit, k| {
                let mut l = vec!["0".to_string(); lhs.rank()];
                let mut r = vec!["0".to_string(); rhs.rank()];
                for b in 0..nb {
                    l[dims.lhs_batch[b]] = index[b].clone();
                    r[dims.rhs_batch[b]] = index[b].clone();
                }
                for (j, &d) in lhs_free.iter().enumerate() {
                    l[d] = index[nb + j].clone();
                }
                for (j, &d) in rhs_free.iter().enumerate() {
                    r[d] = index[nb + nl + j].clone();
                }
                for (j, (&a, &b)) in dims.lhs_contracting.iter().zip(&dims.rhs_contracting).enumerate() {
                    l[a] = k[j].clone();
                    r[b] = k[j].clone();
                }
                let a = unit.elem(lhs_v, &l)?;
                let b = unit.elem(rhs_v, &r)?;
                unit.accumulate(&acc, ty, &a, &b)
            })?;
            let line = format!("{target}[{}] = {};", offset(&out, index), ctype::store(&acc, ty));
            unit.line(&line);
            Ok(())
        })
    }

    /// `acc += a * b` in the accumulator's type (operands converted to it first).
    fn accumulate(
        &mut self,
        acc: &str,
        ty: morello_xla::xla::ElementType,
        a: &CExpr,
        b: &CExpr,
    ) -> Result<(), String> {
        let cast = |e: &CExpr| CExpr { text: format!("(({}){})", compute(ty), paren(&e.text)), ty };
        let product = elementwise(ElementwiseOp::Multiply, ty, &[cast(a), cast(b)])?;
        let sum = elementwise(
            ElementwiseOp::Add,
            ty,
            &[CExpr { text: acc.to_string(), ty }, CExpr { text: product, ty }],
        )?;
        self.line(&format!("{acc} = {sum};"));
        Ok(())
    }

    fn convolution(
        &mut self,
        id: usize,
        window: &[WindowDim],
        d: &ConvolutionDimensions,
        groups: i64,
        batch_groups: i64,
    ) -> Result<(), String> {
        let node = self.graph.nodes[id].clone();
        let (lhs_v, rhs_v) = (node.operands[0], node.operands[1]);
        let (lhs, rhs) = (self.graph.shape(lhs_v).clone(), self.graph.shape(rhs_v).clone());
        let out = node.outputs[0].clone();
        let ty = out.element_type;
        let input_batch = lhs.dims[d.lhs_batch];
        let input_features = lhs.dims[d.lhs_feature];
        let output_features = rhs.dims[d.rhs_output_feature];
        let (g, h) = (groups.max(1), batch_groups.max(1));
        let group_in = input_features / g;
        let group_out = (output_features / g).max(1);
        let depthwise = if h > 1 { (output_features / input_batch).max(1) } else { 1 };
        let batch_group_size = input_batch / h;
        let sizes: Vec<i64> = window.iter().map(|w| w.size).collect();
        let target = self.buffer_names[&ValueId::of(id)].clone();
        self.nest(&out, |unit, index| {
            let acc = unit.zeroed_accumulator(ty);
            let f = paren(&index[d.output_feature]);
            let group = if g > 1 { format!("({f} / {group_out})") } else { "0".into() };
            let batch = if h > 1 {
                format!(
                    "{} + ((({f} / {depthwise}) * {batch_group_size}) % {input_batch})",
                    paren(&index[d.output_batch])
                )
            } else {
                index[d.output_batch].clone()
            };
            unit.inner(&[group_in], |unit, c| {
                let feature = add(&mul(&group, group_in), &c[0]);
                unit.inner(&sizes, |unit, w| {
                    let mut l = vec!["0".to_string(); lhs.rank()];
                    let mut r = vec!["0".to_string(); rhs.rank()];
                    l[d.lhs_batch] = batch.clone();
                    l[d.lhs_feature] = feature.clone();
                    r[d.rhs_input_feature] = c[0].clone();
                    r[d.rhs_output_feature] = index[d.output_feature].clone();
                    let out_spatial: Vec<String> =
                        d.output_spatial.iter().map(|&s| index[s].clone()).collect();
                    let lhs_spatial_dims: Vec<i64> = d.lhs_spatial.iter().map(|&s| lhs.dims[s]).collect();
                    let (conditions, at) = window_positions(window, &lhs_spatial_dims, &out_spatial, w);
                    for (k, &s) in d.lhs_spatial.iter().enumerate() {
                        l[s] = at[k].clone();
                    }
                    for (k, wd) in window.iter().enumerate() {
                        r[d.rhs_spatial[k]] = if wd.reversal {
                            format!("{} - {}", wd.size - 1, paren(&w[k]))
                        } else {
                            w[k].clone()
                        };
                    }
                    let a = unit.elem(lhs_v, &l)?;
                    let b = unit.elem(rhs_v, &r)?;
                    if !conditions.is_empty() {
                        unit.open(&format!("if ({}) {{", conditions.join(" && ")));
                    }
                    unit.accumulate(&acc, ty, &a, &b)?;
                    if !conditions.is_empty() {
                        unit.close();
                    }
                    Ok(())
                })
            })?;
            let line = format!("{target}[{}] = {};", offset(&out, index), ctype::store(&acc, ty));
            unit.line(&line);
            Ok(())
        })
    }
}

/// For window position `w` of output index `o`, the conditions that the position is in the base
/// (not padding, not between dilated elements) and the base index it reads.
fn window_positions(
    window: &[WindowDim],
    base_dims: &[i64],
    o: &[String],
    w: &[String],
) -> (Vec<String>, Vec<String>) {
    let mut conditions = Vec::new();
    let mut at = Vec::new();
    for (k, wd) in window.iter().enumerate() {
        let mut p = add(&mul(&o[k], wd.stride), &mul(&w[k], wd.window_dilation));
        if wd.pad_low != 0 {
            p = format!("{} - {}", paren(&p), wd.pad_low);
        }
        let p = paren(&p);
        let extent = (base_dims[k] - 1).max(0) * wd.base_dilation + 1;
        // Windows start at or after the padded start and end at or before the padded end, so
        // only padding on a side can put a position outside the base.
        if wd.pad_low > 0 {
            conditions.push(format!("{p} >= 0"));
        }
        if wd.pad_high > 0 {
            conditions.push(format!("{p} < {extent}"));
        }
        if wd.base_dilation > 1 {
            conditions.push(format!("{p} % {} == 0", wd.base_dilation));
            at.push(format!("{p} / {}", wd.base_dilation));
        } else {
            at.push(p);
        }
    }
    (conditions, at)
}
