//! The C expression of one element of a value at an index (one C `int64_t` expression per
//! logical dim): a load from its buffer when it has one, else its op applied to its operands'
//! elements, which are expressions in turn (the plan bounds how deep that goes).
//!
//! ```text
//! buffer            name[Σ index_d stride_d]      (bf16 loaded to float, pred to int)
//! elementwise       the op on the operands' elements (scalar operands at [])
//! broadcast         the operand at index[dimensions[k]]
//! transpose         the operand at index' with index'[dimensions[k]] = index[k]
//! reshape, bitcast  row-major (bitcast: physical) linear index regrouped: only the groups of
//!                   dims whose volumes match are linearised, so splits and merges cost a
//!                   division each and size-1 dims nothing
//! slice, reverse    start + stride index, size - 1 - index
//! pad               in the operand's strided footprint ? operand : padding value
//! concatenate       a chain of ?: on the concatenated dim
//! dynamic-slice     the operand at index + offsets clamped so the window fits
//! dynamic-update-   inside the (clamped) window ? update : operand
//! slice
//! gather            the operand at the clamped start read from the indices, plus the offset
//! iota, constant    the index; the literal (scalars) or the table (arrays)
//! map               the computation's C function on the operands' elements
//! ```

use morello_xla::hlo::{ArrayShape, ElementwiseOp, GatherDimensions, HloOp, PadDim};
use morello_xla::xla::ElementType;

use super::Unit;
use super::ctype::{self, compute, helper_suffix, is_float, math_suffix, unsigned};
use crate::graph::{NodeKind, ValueId};
use crate::views::layout_strides;

/// A C expression and the element type of its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CExpr {
    pub text: String,
    pub ty: ElementType,
}

/// `a + b` for index expressions, dropping zeros.
pub(crate) fn add(a: &str, b: &str) -> String {
    match (a, b) {
        ("0", _) => b.to_string(),
        (_, "0") => a.to_string(),
        _ => format!("{a} + {b}"),
    }
}

/// `a * k` for an index expression and a constant.
pub(crate) fn mul(a: &str, k: i64) -> String {
    match (a, k) {
        (_, 0) | ("0", _) => "0".into(),
        (_, 1) => a.to_string(),
        _ if a.contains(' ') => format!("({a}) * {k}"),
        _ => format!("{a} * {k}"),
    }
}

/// Parenthesised unless a single token.
pub(crate) fn paren(a: &str) -> String {
    if a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') { a.to_string() } else { format!("({a})") }
}

/// The offset of an index in a buffer of `shape` (its layout).
pub(crate) fn offset(shape: &ArrayShape, index: &[String]) -> String {
    let strides = layout_strides(shape);
    let mut text = "0".to_string();
    for (d, i) in index.iter().enumerate() {
        if shape.dims[d] != 1 {
            text = add(&text, &mul(i, strides[d]));
        }
    }
    text
}

/// Groups of dims of equal volume between two shapes (size-1 dims left out): each pair of
/// ranges of `a`'s and `b`'s dims (indices into the full lists).
fn regroup(a: &[i64], b: &[i64]) -> Option<Vec<(Vec<usize>, Vec<usize>)>> {
    let aa: Vec<usize> = (0..a.len()).filter(|&d| a[d] != 1).collect();
    let bb: Vec<usize> = (0..b.len()).filter(|&d| b[d] != 1).collect();
    let mut groups = Vec::new();
    let (mut i, mut j) = (0usize, 0usize);
    while i < aa.len() && j < bb.len() {
        let (mut i2, mut j2) = (i + 1, j + 1);
        let (mut x, mut y) = (a[aa[i]], b[bb[j]]);
        while x != y {
            if x < y {
                x = x.checked_mul(a[*aa.get(i2)?])?;
                i2 += 1;
            } else {
                y = y.checked_mul(b[*bb.get(j2)?])?;
                j2 += 1;
            }
        }
        groups.push((aa[i..i2].to_vec(), bb[j..j2].to_vec()));
        i = i2;
        j = j2;
    }
    (i == aa.len() && j == bb.len()).then_some(groups)
}

/// The operand index of a row-major reshape from `from` dims to `to` dims at `index` (of `to`).
pub(crate) fn reshape_index(from: &[i64], to: &[i64], index: &[String]) -> Vec<String> {
    let mut out = vec!["0".to_string(); from.len()];
    if from.contains(&0) || to.contains(&0) {
        return out;
    }
    let groups = regroup(from, to).unwrap_or_default();
    for (a, b) in groups {
        if a.len() == 1 && b.len() == 1 {
            out[a[0]] = index[b[0]].clone();
            continue;
        }
        // The group's linear index from `to`'s dims, then split into `from`'s.
        let mut linear = "0".to_string();
        for &d in &b {
            linear = add(&mul(&paren(&linear), to[d]), &index[d]);
        }
        let linear = paren(&linear);
        let mut inner: i64 = a.iter().map(|&d| from[d]).product();
        for (k, &d) in a.iter().enumerate() {
            inner /= from[d];
            let q = if inner == 1 { linear.clone() } else { format!("{linear} / {inner}") };
            out[d] = if k == 0 { q } else { format!("({q}) % {}", from[d]) };
        }
    }
    out
}

impl Unit<'_> {
    /// The element of `value` at `index`: a load from its buffer, or its op's expression.
    pub(crate) fn elem(&self, value: ValueId, index: &[String]) -> Result<CExpr, String> {
        let shape = self.graph.shape(value);
        if let Some(name) = self.buffer_names.get(&value) {
            let text = ctype::load(&format!("{name}[{}]", offset(shape, index)), shape.element_type);
            return Ok(CExpr { text, ty: shape.element_type });
        }
        self.compute(value, index)
    }

    /// The element of `value` at `index` computed by its op from its operands' elements.
    pub(crate) fn compute(&self, value: ValueId, index: &[String]) -> Result<CExpr, String> {
        let shape = self.graph.shape(value);
        let ty = shape.element_type;
        let node = self.graph.node(value);
        let op = match &node.kind {
            NodeKind::Op(op) => op,
            NodeKind::Parameter { .. } => return Err("a parameter without a buffer".into()),
        };
        let operand = |k: usize| node.operands[k];
        let text = match op {
            HloOp::Constant { literal: Some(literal), .. } if literal.len() == 1 => {
                ctype::literal_value(literal.values(), 0, ty)
            }
            HloOp::Constant { .. } => return Err("a constant without its values".into()),
            HloOp::Iota { dimension } => format!("(({})({}))", compute(ty), index[*dimension]),
            HloOp::Elementwise(e) => {
                let mut args = Vec::with_capacity(node.operands.len());
                for &o in &node.operands {
                    let at: Vec<String> =
                        if self.graph.shape(o).rank() == 0 { Vec::new() } else { index.to_vec() };
                    args.push(self.elem(o, &at)?);
                }
                elementwise(*e, ty, &args)?
            }
            HloOp::Broadcast { dimensions } => {
                let at: Vec<String> = dimensions.iter().map(|&d| index[d].clone()).collect();
                return self.elem(operand(0), &at);
            }
            HloOp::Transpose { dimensions } => {
                let mut at = vec![String::new(); index.len()];
                for (k, &d) in dimensions.iter().enumerate() {
                    at[d] = index[k].clone();
                }
                return self.elem(operand(0), &at);
            }
            HloOp::Reshape => {
                let from = self.graph.shape(operand(0));
                let at = reshape_index(&from.dims, &shape.dims, index);
                return self.elem(operand(0), &at);
            }
            HloOp::Bitcast => {
                let from = self.graph.shape(operand(0));
                let (from_order, to_order) = (from.major_to_minor(), shape.major_to_minor());
                let from_dims: Vec<i64> = from_order.iter().map(|&d| from.dims[d]).collect();
                let to_dims: Vec<i64> = to_order.iter().map(|&d| shape.dims[d]).collect();
                let physical: Vec<String> = to_order.iter().map(|&d| index[d].clone()).collect();
                let at_physical = reshape_index(&from_dims, &to_dims, &physical);
                let mut at = vec!["0".to_string(); from.rank()];
                for (k, &d) in from_order.iter().enumerate() {
                    at[d] = at_physical[k].clone();
                }
                let inner = self.elem(operand(0), &at)?;
                return Ok(CExpr { text: inner.text, ty });
            }
            HloOp::Slice { dims } => {
                let at: Vec<String> = dims
                    .iter()
                    .zip(index)
                    .map(|(s, i)| add(&s.start.to_string(), &mul(i, s.stride)))
                    .collect();
                return self.elem(operand(0), &at);
            }
            HloOp::Reverse { dimensions } => {
                let at: Vec<String> = index
                    .iter()
                    .enumerate()
                    .map(|(d, i)| {
                        if dimensions.contains(&d) {
                            format!("{} - {}", shape.dims[d] - 1, paren(i))
                        } else {
                            i.clone()
                        }
                    })
                    .collect();
                return self.elem(operand(0), &at);
            }
            HloOp::Pad { dims } => self.pad(operand(0), operand(1), dims, index)?,
            HloOp::Concatenate { dimension } => {
                let mut start = 0i64;
                let mut pieces = Vec::new();
                for &o in &node.operands {
                    let size = self.graph.shape(o).dims[*dimension];
                    let mut at = index.to_vec();
                    at[*dimension] = if start == 0 {
                        index[*dimension].clone()
                    } else {
                        format!("{} - {start}", paren(&index[*dimension]))
                    };
                    pieces.push((start + size, self.elem(o, &at)?.text));
                    start += size;
                }
                let mut text = pieces.pop().map(|(_, t)| t).unwrap_or_default();
                while let Some((end, piece)) = pieces.pop() {
                    text = format!("({} < {end} ? {piece} : {text})", paren(&index[*dimension]));
                }
                text
            }
            HloOp::DynamicSlice { sizes } => {
                let from = self.graph.shape(operand(0));
                let mut at = Vec::with_capacity(index.len());
                for (d, i) in index.iter().enumerate() {
                    let start = self.elem(node.operands[1 + d], &[])?;
                    let hi = (from.dims[d] - sizes[d]).max(0);
                    at.push(format!("{} + m_clamp64((int64_t)({}), 0, {hi})", paren(i), start.text));
                }
                return self.elem(operand(0), &at);
            }
            HloOp::DynamicUpdateSlice => {
                let update = self.graph.shape(operand(1));
                let mut inside = Vec::new();
                let mut at = Vec::new();
                for (d, i) in index.iter().enumerate() {
                    let start = self.elem(node.operands[2 + d], &[])?;
                    let hi = (shape.dims[d] - update.dims[d]).max(0);
                    let t = format!("({} - m_clamp64((int64_t)({}), 0, {hi}))", paren(i), start.text);
                    inside.push(format!("{t} >= 0 && {t} < {}", update.dims[d]));
                    at.push(t);
                }
                let updated = self.elem(operand(1), &at)?.text;
                let kept = self.elem(operand(0), index)?.text;
                if inside.is_empty() {
                    updated
                } else {
                    format!("(({}) ? {updated} : {kept})", inside.join(" && "))
                }
            }
            HloOp::Gather(dims) => self.gather(operand(0), operand(1), dims, shape, index)?,
            HloOp::Map { to_apply } => {
                let args: Vec<String> = node
                    .operands
                    .iter()
                    .map(|&o| self.elem(o, index).map(|e| e.text))
                    .collect::<Result<_, _>>()?;
                format!("{}({})", self.function_name(*to_apply), args.join(", "))
            }
            other => return Err(format!("`{}` has no expression form (it needs a buffer)", other.opcode())),
        };
        Ok(CExpr { text, ty })
    }

    fn pad(
        &self,
        operand: ValueId,
        value: ValueId,
        dims: &[PadDim],
        index: &[String],
    ) -> Result<String, String> {
        let from = self.graph.shape(operand);
        let mut conditions = Vec::new();
        let mut at = Vec::new();
        for (d, (p, i)) in dims.iter().zip(index).enumerate() {
            let n = from.dims[d];
            let step = p.interior + 1;
            let t = if p.low == 0 { i.clone() } else { format!("({} - {})", paren(i), p.low) };
            if p.low > 0 || p.high > 0 || p.interior > 0 || p.low < 0 {
                conditions.push(format!("{t} >= 0"));
                conditions.push(format!("{t} < {}", (n - 1).max(0) * step + 1));
            }
            if step > 1 {
                conditions.push(format!("{t} % {step} == 0"));
                at.push(format!("{t} / {step}"));
            } else {
                at.push(t);
            }
        }
        let inner = self.elem(operand, &at)?.text;
        let padding = self.elem(value, &[])?.text;
        Ok(if conditions.is_empty() {
            inner
        } else {
            format!("(({}) ? {inner} : {padding})", conditions.join(" && "))
        })
    }

    fn gather(
        &self,
        operand: ValueId,
        indices: ValueId,
        dims: &GatherDimensions,
        result: &ArrayShape,
        index: &[String],
    ) -> Result<String, String> {
        let from = self.graph.shape(operand);
        let index_shape = self.graph.shape(indices);
        let rank = from.rank();
        let batch_out: Vec<usize> = (0..result.rank()).filter(|d| !dims.offset_dims.contains(d)).collect();
        let index_dims: Vec<usize> =
            (0..index_shape.rank()).filter(|&d| d != dims.index_vector_dim).collect();
        let window: Vec<usize> = (0..rank)
            .filter(|d| !dims.collapsed_slice_dims.contains(d) && !dims.operand_batching_dims.contains(d))
            .collect();
        let mut start = vec!["0".to_string(); rank];
        for (k, &d) in dims.start_index_map.iter().enumerate() {
            let mut at = vec!["0".to_string(); index_shape.rank()];
            for (j, &s) in index_dims.iter().enumerate() {
                at[s] = index[batch_out[j]].clone();
            }
            if dims.index_vector_dim < index_shape.rank() {
                at[dims.index_vector_dim] = k.to_string();
            }
            let value = self.elem(indices, &at)?.text;
            let hi = (from.dims[d] - dims.slice_sizes[d]).max(0);
            start[d] = format!("m_clamp64((int64_t)({value}), 0, {hi})");
        }
        for (&o, &i) in dims.operand_batching_dims.iter().zip(&dims.start_indices_batching_dims) {
            let j = index_dims.iter().position(|&s| s == i).unwrap_or(0);
            start[o] = index[batch_out[j]].clone();
        }
        for (k, &d) in window.iter().enumerate() {
            start[d] = add(&start[d], &index[dims.offset_dims[k]]);
        }
        Ok(self.elem(operand, &start)?.text)
    }
}

/// The C expression of an elementwise op of result type `ty` on `args`.
pub(crate) fn elementwise(op: ElementwiseOp, ty: ElementType, args: &[CExpr]) -> Result<String, String> {
    use ElementwiseOp as E;
    let a = |k: usize| paren(&args[k].text);
    let from = args.first().map_or(ty, |x| x.ty);
    if let E::Compare(direction) = op {
        let symbol = match direction {
            morello_xla::hlo::ComparisonDirection::Eq => "==",
            morello_xla::hlo::ComparisonDirection::Ne => "!=",
            morello_xla::hlo::ComparisonDirection::Lt => "<",
            morello_xla::hlo::ComparisonDirection::Le => "<=",
            morello_xla::hlo::ComparisonDirection::Gt => ">",
            morello_xla::hlo::ComparisonDirection::Ge => ">=",
        };
        return Ok(format!("({} {symbol} {})", a(0), a(1)));
    }
    match op {
        E::Select => return Ok(format!("({} ? {} : {})", a(0), a(1), a(2))),
        E::Convert => return convert(&args[0], ty),
        E::BitcastConvert => return bitcast_convert(&args[0], ty),
        E::IsFinite => return Ok(format!("(isfinite({}) ? 1 : 0)", a(0))),
        E::Copy => return Ok(args[0].text.clone()),
        _ => {}
    }
    if is_float(ty) {
        let f = math_suffix(ty);
        let one = if ty == ElementType::F64 { "1.0" } else { "1.0f" };
        let double = ty == ElementType::F64;
        return Ok(match op {
            E::Add => format!("({} + {})", a(0), a(1)),
            E::Subtract => format!("({} - {})", a(0), a(1)),
            E::Multiply => format!("({} * {})", a(0), a(1)),
            E::Divide => format!("({} / {})", a(0), a(1)),
            E::Maximum => format!("{}({}, {})", if double { "m_max" } else { "m_maxf" }, a(0), a(1)),
            E::Minimum => format!("{}({}, {})", if double { "m_min" } else { "m_minf" }, a(0), a(1)),
            E::Negate => format!("(-{})", a(0)),
            E::Abs => format!("fabs{f}({})", a(0)),
            E::Sign => format!("{}({})", if double { "m_sign" } else { "m_signf" }, a(0)),
            E::Exponential => format!("exp{f}({})", a(0)),
            E::ExponentialMinusOne => format!("expm1{f}({})", a(0)),
            E::Log => format!("log{f}({})", a(0)),
            E::LogPlusOne => format!("log1p{f}({})", a(0)),
            E::Tanh => format!("tanh{f}({})", a(0)),
            E::Sqrt => format!("sqrt{f}({})", a(0)),
            E::Rsqrt => format!("({one} / sqrt{f}({}))", a(0)),
            E::Cbrt => format!("cbrt{f}({})", a(0)),
            E::Logistic => format!("({one} / ({one} + exp{f}(-{})))", a(0)),
            E::Sine => format!("sin{f}({})", a(0)),
            E::Cosine => format!("cos{f}({})", a(0)),
            E::Tan => format!("tan{f}({})", a(0)),
            E::Erf => format!("erf{f}({})", a(0)),
            E::Floor => format!("floor{f}({})", a(0)),
            E::Ceil => format!("ceil{f}({})", a(0)),
            E::RoundNearestEven => format!("rint{f}({})", a(0)),
            E::RoundNearestAfz => format!("round{f}({})", a(0)),
            E::Power => format!("pow{f}({}, {})", a(0), a(1)),
            E::Remainder => format!("fmod{f}({}, {})", a(0), a(1)),
            E::Atan2 => format!("atan2{f}({}, {})", a(0), a(1)),
            E::Clamp => {
                let (max, min) = if double { ("m_max", "m_min") } else { ("m_maxf", "m_minf") };
                format!("{min}({max}({}, {}), {})", a(1), a(0), a(2))
            }
            other => return Err(format!("`{}` on {ty} is not compiled", other.opcode())),
        });
    }
    let _ = from;
    if ty == ElementType::Pred {
        return Ok(match op {
            E::Not => format!("(!{})", a(0)),
            E::And => format!("({} & {})", a(0), a(1)),
            E::Or => format!("({} | {})", a(0), a(1)),
            E::Xor => format!("({} ^ {})", a(0), a(1)),
            E::Maximum => format!("({} | {})", a(0), a(1)),
            E::Minimum => format!("({} & {})", a(0), a(1)),
            E::Clamp => format!("(({} | {}) & {})", a(1), a(0), a(2)),
            other => return Err(format!("`{}` on pred is not compiled", other.opcode())),
        });
    }
    let (t, u, s) = (compute(ty), unsigned(ty), helper_suffix(ty));
    let bits = ty.bits();
    Ok(match op {
        E::Add => format!("(({t})(({u}){} + ({u}){}))", a(0), a(1)),
        E::Subtract => format!("(({t})(({u}){} - ({u}){}))", a(0), a(1)),
        E::Multiply => format!("(({t})(({u}){} * ({u}){}))", a(0), a(1)),
        E::Divide => format!("m_div_{s}({}, {})", a(0), a(1)),
        E::Remainder => format!("m_rem_{s}({}, {})", a(0), a(1)),
        E::Maximum => format!("m_max_{s}({}, {})", a(0), a(1)),
        E::Minimum => format!("m_min_{s}({}, {})", a(0), a(1)),
        E::Negate => format!("(({t})(-({u}){}))", a(0)),
        E::Abs => format!("m_abs_{s}({})", a(0)),
        E::Sign => format!("m_sign_{s}({})", a(0)),
        E::Not => format!("(({t})(~({u}){}))", a(0)),
        E::And => format!("(({t})(({u}){} & ({u}){}))", a(0), a(1)),
        E::Or => format!("(({t})(({u}){} | ({u}){}))", a(0), a(1)),
        E::Xor => format!("(({t})(({u}){} ^ ({u}){}))", a(0), a(1)),
        E::ShiftLeft => format!("m_shl_{s}({}, {})", a(0), a(1)),
        E::ShiftRightLogical => format!("m_shrl_{s}({}, {})", a(0), a(1)),
        E::ShiftRightArithmetic => {
            let signed = match bits {
                8 => "int8_t",
                16 => "int16_t",
                32 => "int32_t",
                _ => "int64_t",
            };
            format!("(({t})m_shra((int64_t)({signed}){}, (int64_t){}, {bits}))", a(0), a(1))
        }
        E::Popcnt => format!("(({t})__builtin_popcountll((unsigned long long)({u}){}))", a(0)),
        E::CountLeadingZeros => format!("m_clz_{s}({})", a(0)),
        E::Power => format!("m_pow_{s}({}, {})", a(0), a(1)),
        E::Clamp => format!("m_min_{s}(m_max_{s}({}, {}), {})", a(1), a(0), a(2)),
        other => return Err(format!("`{}` on {ty} is not compiled", other.opcode())),
    })
}

/// `convert` of `x` to `to`.
fn convert(x: &CExpr, to: ElementType) -> Result<String, String> {
    let a = paren(&x.text);
    let from = x.ty;
    if to == ElementType::Pred {
        return Ok(format!("({a} != 0)"));
    }
    if is_float(to) {
        let c = compute(to);
        return Ok(match to {
            ElementType::Bf16 => format!("m_round_bf16((float){a})"),
            _ => format!("(({c}){a})"),
        });
    }
    let t = compute(to);
    if is_float(from) {
        if to == ElementType::U64 {
            return Ok(format!("m_ftou64((double){a})"));
        }
        let (lo, hi) = morello_xla::hlo::integer_range(to).ok_or_else(|| format!("no range for {to}"))?;
        return Ok(format!("(({t})m_ftoi((double){a}, {lo}.0, {hi}.0))"));
    }
    Ok(format!("(({t}){a})"))
}

/// `bitcast-convert` of `x` to `to` (types of one width).
fn bitcast_convert(x: &CExpr, to: ElementType) -> Result<String, String> {
    let a = paren(&x.text);
    let t = compute(to);
    Ok(match (x.ty, to) {
        (ElementType::F32, _) if !is_float(to) => format!("(({t})m_f32_bits({a}))"),
        (_, ElementType::F32) if !is_float(x.ty) => format!("m_bits_f32((uint32_t){a})"),
        (ElementType::F64, _) if !is_float(to) => format!("(({t})m_f64_bits({a}))"),
        (_, ElementType::F64) if !is_float(x.ty) => format!("m_bits_f64((uint64_t){a})"),
        (ElementType::Bf16, _) if !is_float(to) => format!("(({t})m_f32_to_bf16({a}))"),
        (_, ElementType::Bf16) if !is_float(x.ty) => format!("m_bf16_to_f32((uint16_t){a})"),
        (f, t2) if !is_float(f) && !is_float(t2) => format!("(({t}){a})"),
        (f, t2) => return Err(format!("`bitcast-convert` from {f} to {t2} is not compiled")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reshapes_divide_only_where_dims_split() {
        let i: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        assert_eq!(reshape_index(&[128, 768], &[128, 12, 64], &i), vec!["a", "(b * 64 + c)"]);
        let j: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        assert_eq!(reshape_index(&[2, 3, 4], &[6, 4], &j), vec!["a / 3", "(a) % 3", "b"]);
        assert_eq!(reshape_index(&[3, 1], &[1, 3], &j), vec!["b", "0"]);
    }
}
