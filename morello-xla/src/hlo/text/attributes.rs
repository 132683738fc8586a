//! Attribute values of the supported opcodes, and the [`HloOp`] an opcode and its attributes
//! make.
//!
//! ```text
//! dimensions={0,2}                     dimension numbers (also iota_dimension=0, index=1)
//! slice={[5:10:1], [3:20:7], [0:50]}   start:limit[:stride] per dimension (stride 1 if omitted)
//! padding=1_4_1x4_8_0                  low_high[_interior] per dimension, joined by `x`
//! window={size=1x512 pad=0_0x0_0 stride=1x2 lhs_dilate=1x1 rhs_dilate=1x1}
//! lhs_batch_dims={0} rhs_batch_dims={0} lhs_contracting_dims={2} rhs_contracting_dims={1}
//! to_apply=%add  calls=%fused          computation names, `%` optional
//! direction=LT                         EQ, NE, LT, LE, GT, GE
//! dynamic_slice_sizes={2,1}           window sizes of a dynamic-slice
//! dim_labels=b01f_01io->b01f           convolution: batch, feature, spatial digits, kernel i/o
//! feature_group_count=2  batch_group_count=2   (default 1)
//! offset_dims={1,2} collapsed_slice_dims={} start_index_map={0,1} index_vector_dim=1
//! slice_sizes={7,8,4} operand_batching_dims={} start_indices_batching_dims={}   gather
//! ```
//!
//! Attributes an opcode does not use (`metadata`, `kind`, `sharding`, `backend_config`, ...) are
//! ignored; `rhs_reversal` of a window is read and kept (it does not change which elements a
//! window covers, only their order). An attribute given twice is an error.

use std::collections::HashMap;

use morello_core::text::Cursor;

use crate::hlo::{
    ComparisonDirection, ConvolutionDimensions, DotDimensions, ElementwiseOp, GatherDimensions, HloOp,
    PadDim, SliceDim, WindowDim,
};

use super::HloTextErrorKind;
use super::cursor::{Span, is_name_char};
use super::syntax::{Arguments, RawAttribute, RawInstruction};

/// An error at a span, placed later in its computation and instruction.
pub(super) type Located = (Span, HloTextErrorKind);

/// The attributes of one instruction by name.
pub(super) struct Attributes<'r, 'a> {
    opcode: &'static str,
    by_key: HashMap<&'a str, &'r RawAttribute<'a>>,
}

impl<'r, 'a> Attributes<'r, 'a> {
    /// Indexes the attributes; an attribute given twice is an error.
    pub fn new(opcode: &'static str, attributes: &'r [RawAttribute<'a>]) -> Result<Self, Located> {
        let mut by_key = HashMap::new();
        for attribute in attributes {
            if by_key.insert(attribute.key, attribute).is_some() {
                let kind = HloTextErrorKind::RepeatedAttribute { attribute: attribute.key.to_string() };
                return Err((attribute.key_span, kind));
            }
        }
        Ok(Attributes { opcode, by_key })
    }

    /// Reads an optional attribute with `parse`.
    fn optional<T>(
        &self,
        key: &'static str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<Option<T>, Located> {
        let Some(attribute) = self.by_key.get(key) else { return Ok(None) };
        parse(attribute.value).map(Some).map_err(|message| {
            let kind = HloTextErrorKind::BadAttribute {
                attribute: key,
                value: attribute.value.to_string(),
                message,
            };
            (attribute.value_span, kind)
        })
    }

    /// Reads a required attribute with `parse`; `at` is where to report it missing.
    fn required<T>(
        &self,
        key: &'static str,
        at: Span,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<T, Located> {
        self.optional(key, parse)?
            .ok_or((at, HloTextErrorKind::MissingAttribute { opcode: self.opcode, attribute: key }))
    }

    /// An attribute's value as written, if it is given.
    fn value(&self, key: &str) -> Option<&'a str> {
        self.by_key.get(key).map(|a| a.value)
    }

    /// The span of an attribute's value, if it is given.
    fn value_span(&self, key: &str) -> Option<Span> {
        self.by_key.get(key).map(|a| a.value_span)
    }
}

/// The op of an instruction whose opcode is supported. `computations` maps the module's
/// computation names to their ids.
pub(super) fn op(instr: &RawInstruction<'_>, computations: &HashMap<&str, usize>) -> Result<HloOp, Located> {
    let opcode = canonical_opcode(instr.opcode);
    let at = instr.opcode_span;
    let attributes = Attributes::new(opcode, &instr.attributes)?;
    let callee = |key: &'static str| -> Result<crate::hlo::ComputationId, Located> {
        let name = attributes.required(key, at, computation_name)?;
        match computations.get(name.as_str()) {
            Some(&id) => Ok(crate::hlo::ComputationId(id)),
            None => {
                let span = attributes.value_span(key).unwrap_or(at);
                Err((span, HloTextErrorKind::UndefinedComputation { attribute: key, name }))
            }
        }
    };
    let dimensions = || attributes.required("dimensions", at, dimension_list);
    Ok(match opcode {
        "parameter" => match instr.arguments {
            Arguments::ParameterNumber(number, span) => match usize::try_from(number) {
                Ok(number) => HloOp::Parameter { number },
                Err(_) => {
                    let kind = HloTextErrorKind::Syntax {
                        message: "expected a parameter number of at least 0".to_string(),
                        found: number.to_string(),
                    };
                    return Err((span, kind));
                }
            },
            _ => {
                return Err((
                    at,
                    HloTextErrorKind::Syntax {
                        message: "expected a parameter number".to_string(),
                        found: String::new(),
                    },
                ));
            }
        },
        "constant" => {
            HloOp::Constant { scalar: integer_scalar(instr), literal: super::literal::read(instr)? }
        }
        "iota" => HloOp::Iota { dimension: attributes.required("iota_dimension", at, dimension)? },
        "compare" => {
            let direction = attributes.required("direction", at, comparison_direction)?;
            HloOp::Elementwise(ElementwiseOp::Compare(direction))
        }
        "broadcast" => HloOp::Broadcast { dimensions: dimensions()? },
        "transpose" => HloOp::Transpose { dimensions: dimensions()? },
        "reverse" => HloOp::Reverse { dimensions: dimensions()? },
        "reduce" => HloOp::Reduce { dimensions: dimensions()?, to_apply: callee("to_apply")? },
        "slice" => HloOp::Slice { dims: attributes.required("slice", at, slice)? },
        "reshape" => HloOp::Reshape,
        "bitcast" => HloOp::Bitcast,
        "concatenate" => {
            let dims = dimensions()?;
            let [dimension] = dims[..] else {
                let span = attributes.value_span("dimensions").unwrap_or(at);
                let kind = HloTextErrorKind::BadAttribute {
                    attribute: "dimensions",
                    value: attributes.value("dimensions").unwrap_or_default().to_string(),
                    message: "a concatenate names exactly one dimension".to_string(),
                };
                return Err((span, kind));
            };
            HloOp::Concatenate { dimension }
        }
        "dot" => {
            let list = |key| attributes.optional(key, dimension_list).map(Option::unwrap_or_default);
            HloOp::Dot(DotDimensions {
                lhs_batch: list("lhs_batch_dims")?,
                rhs_batch: list("rhs_batch_dims")?,
                lhs_contracting: list("lhs_contracting_dims")?,
                rhs_contracting: list("rhs_contracting_dims")?,
            })
        }
        "pad" => HloOp::Pad { dims: attributes.required("padding", at, padding)? },
        "reduce-window" => HloOp::ReduceWindow {
            window: attributes.required("window", at, window)?,
            to_apply: callee("to_apply")?,
        },
        "fusion" => HloOp::Fusion { calls: callee("calls")? },
        "call" => HloOp::Call { to_apply: callee("to_apply")? },
        "tuple" => HloOp::Tuple,
        "get-tuple-element" => HloOp::GetTupleElement { index: attributes.required("index", at, dimension)? },
        "map" => HloOp::Map { to_apply: callee("to_apply")? },
        "dynamic-slice" => {
            let sizes = attributes.required("dynamic_slice_sizes", at, dimension_list)?;
            HloOp::DynamicSlice {
                sizes: sizes.into_iter().map(|s| i64::try_from(s).unwrap_or(i64::MAX)).collect(),
            }
        }
        "dynamic-update-slice" => HloOp::DynamicUpdateSlice,
        "gather" => {
            let list = |key| attributes.optional(key, dimension_list).map(Option::unwrap_or_default);
            let slice_sizes = attributes.required("slice_sizes", at, dimension_list)?;
            HloOp::Gather(GatherDimensions {
                offset_dims: attributes.required("offset_dims", at, dimension_list)?,
                collapsed_slice_dims: list("collapsed_slice_dims")?,
                start_index_map: attributes.required("start_index_map", at, dimension_list)?,
                index_vector_dim: attributes.required("index_vector_dim", at, dimension)?,
                slice_sizes: slice_sizes.into_iter().map(|s| i64::try_from(s).unwrap_or(i64::MAX)).collect(),
                operand_batching_dims: list("operand_batching_dims")?,
                start_indices_batching_dims: list("start_indices_batching_dims")?,
            })
        }
        "convolution" => {
            let count = |key| attributes.optional(key, group_count).map(|c| c.unwrap_or(1));
            HloOp::Convolution {
                window: attributes.optional("window", window)?.unwrap_or_default(),
                dims: attributes.required("dim_labels", at, dim_labels)?,
                feature_group_count: count("feature_group_count")?,
                batch_group_count: count("batch_group_count")?,
            }
        }
        other => match ElementwiseOp::from_opcode(other) {
            Some(op) => HloOp::Elementwise(op),
            None if super::OPCODES_WITHOUT_MAPS.contains(&other) => HloOp::Unknown { opcode: other },
            None => {
                let kind = HloTextErrorKind::UnknownOpcode { opcode: other.to_string() };
                return Err((at, kind));
            }
        },
    })
}

/// The value of an integer scalar constant (`s32[] constant(42)`); `None` for any other.
fn integer_scalar(instr: &RawInstruction<'_>) -> Option<i64> {
    let array = instr.shape.as_array()?;
    if !array.dims().is_empty() || !array.element_type().is_integer() {
        return None;
    }
    match instr.arguments {
        Arguments::Literal(text, _) => text.trim().parse().ok(),
        _ => None,
    }
}

/// The opcode as a `'static` string (the syntax pass accepted only XLA's opcodes).
fn canonical_opcode(opcode: &str) -> &'static str {
    super::SUPPORTED_OPCODES
        .iter()
        .chain(super::OPCODES_WITHOUT_MAPS)
        .copied()
        .find(|&o| o == opcode)
        .unwrap_or("unknown")
}

/// One attribute value read with the workspace's text cursor; errors are messages that the
/// caller places at the value's span.
struct Scan<'a> {
    cursor: Cursor<'a>,
}

impl<'a> Scan<'a> {
    fn new(text: &'a str) -> Self {
        Scan { cursor: Cursor::new(text) }
    }

    fn eat(&mut self, c: char) -> bool {
        self.cursor.eat(c)
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) { Ok(()) } else { Err(format!("expected `{c}` {}", self.where_())) }
    }

    fn where_(&mut self) -> String {
        match self.cursor.peek() {
            Some(c) => format!("at `{}`", c.escape_default()),
            None => "at the end".to_string(),
        }
    }

    fn integer(&mut self) -> Result<i64, String> {
        let Some(integer) = self.cursor.integer() else {
            return Err(format!("expected an integer {}", self.where_()));
        };
        integer
            .to_i64()
            .ok_or_else(|| format!("`{}` is outside the 64-bit integers", self.cursor.slice(integer.span)))
    }

    fn finish(mut self) -> Result<(), String> {
        if self.cursor.at_end() { Ok(()) } else { Err(format!("unexpected text {}", self.where_())) }
    }
}

/// A text that is one integer and nothing else.
fn one_integer(text: &str) -> Result<i64, String> {
    let mut scan = Scan::new(text);
    let value = scan.integer()?;
    scan.finish()?;
    Ok(value)
}

/// A dimension number: a non-negative integer.
fn dimension(text: &str) -> Result<usize, String> {
    to_dimension(one_integer(text)?)
}

fn to_dimension(value: i64) -> Result<usize, String> {
    usize::try_from(value).map_err(|_| format!("dimension numbers are at least 0, not {value}"))
}

/// A text that is `{item, item, ...}` (perhaps empty), each item read by `item`.
fn braced_list<T>(
    text: &str,
    mut item: impl FnMut(&mut Scan<'_>) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let mut scan = Scan::new(text);
    scan.expect('{')?;
    let mut out = Vec::new();
    if !scan.eat('}') {
        loop {
            out.push(item(&mut scan)?);
            if scan.eat('}') {
                break;
            }
            scan.expect(',')?;
        }
    }
    scan.finish()?;
    Ok(out)
}

/// `{0, 2}`.
fn dimension_list(text: &str) -> Result<Vec<usize>, String> {
    braced_list(text, |scan| to_dimension(scan.integer()?))
}

/// `{[5:10:1], [3:20]}`.
fn slice(text: &str) -> Result<Vec<SliceDim>, String> {
    braced_list(text, |scan| {
        scan.expect('[')?;
        let start = scan.integer()?;
        scan.expect(':')?;
        let limit = scan.integer()?;
        let stride = if scan.eat(':') { scan.integer()? } else { 1 };
        scan.expect(']')?;
        Ok(SliceDim { start, limit, stride })
    })
}

/// Splits `1x2x3` into its parts (none for an empty text).
fn by_x(text: &str) -> Vec<&str> {
    if text.trim().is_empty() { Vec::new() } else { text.split('x').collect() }
}

/// Integers separated by `_`.
fn underscored(text: &str) -> Result<Vec<i64>, String> {
    text.split('_').map(one_integer).collect()
}

/// `1_4_1x4_8_0`: low, high and optional interior padding per dimension.
fn padding(text: &str) -> Result<Vec<PadDim>, String> {
    by_x(text)
        .into_iter()
        .map(|part| match underscored(part)?[..] {
            [low, high] => Ok(PadDim { low, high, interior: 0 }),
            [low, high, interior] => Ok(PadDim { low, high, interior }),
            _ => Err(format!("`{part}` should be low_high or low_high_interior")),
        })
        .collect()
}

/// `{size=1x512 pad=0_0x0_0 stride=1x2 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}`.
/// `feature_group_count=2`: a count of at least 1.
fn group_count(text: &str) -> Result<i64, String> {
    match text.trim().parse::<i64>() {
        Ok(count) if count >= 1 => Ok(count),
        _ => Err("a group count is an integer of at least 1".to_string()),
    }
}

/// `b01f_01io->b01f`: the lhs, rhs and output labels of a convolution.
fn dim_labels(text: &str) -> Result<ConvolutionDimensions, String> {
    let shape = "dim_labels are written like `b01f_01io->b01f`";
    let (inputs, output) = text.trim().split_once("->").ok_or(shape)?;
    let (lhs, rhs) = inputs.split_once('_').ok_or(shape)?;
    let (lhs_batch, lhs_feature, lhs_spatial) = labels(lhs, ['b', 'f'])?;
    let (rhs_output_feature, rhs_input_feature, rhs_spatial) = labels(rhs, ['o', 'i'])?;
    let (output_batch, output_feature, output_spatial) = labels(output, ['b', 'f'])?;
    if rhs_spatial.len() != lhs_spatial.len() || output_spatial.len() != lhs_spatial.len() {
        return Err(format!("`{text}` gives the three shapes different numbers of spatial dimensions"));
    }
    Ok(ConvolutionDimensions {
        lhs_batch,
        lhs_feature,
        lhs_spatial,
        rhs_input_feature,
        rhs_output_feature,
        rhs_spatial,
        output_batch,
        output_feature,
        output_spatial,
    })
}

/// One shape's labels: the positions of the two letters, then of the spatial digits `0..n`.
fn labels(text: &str, letters: [char; 2]) -> Result<(usize, usize, Vec<usize>), String> {
    let mut found = [None, None];
    let mut spatial: Vec<Option<usize>> = vec![None; text.len().saturating_sub(2)];
    for (position, c) in text.chars().enumerate() {
        let slot = if let Some(k) = letters.iter().position(|&l| l == c) {
            &mut found[k]
        } else {
            let digit = c.to_digit(10).map(|d| d as usize).filter(|&d| d < spatial.len());
            let Some(digit) = digit else {
                return Err(format!(
                    "`{text}`: `{c}` is not one of {}, {} or a spatial digit below {}",
                    letters[0],
                    letters[1],
                    spatial.len()
                ));
            };
            &mut spatial[digit]
        };
        if slot.replace(position).is_some() {
            return Err(format!("`{text}` names `{c}` twice"));
        }
    }
    match found {
        [Some(a), Some(b)] => {
            Ok((a, b, spatial.into_iter().map(|p| p.expect("every digit was seen once")).collect()))
        }
        _ => Err(format!("`{text}` needs both `{}` and `{}`", letters[0], letters[1])),
    }
}

fn window(text: &str) -> Result<Vec<WindowDim>, String> {
    let inner = text
        .trim()
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(|| "a window is written `{size=AxB ...}`".to_string())?;
    let mut fields: HashMap<&str, &str> = HashMap::new();
    for item in inner.split_whitespace() {
        let (key, value) = item.split_once('=').ok_or_else(|| format!("`{item}` should be `key=value`"))?;
        if !matches!(key, "size" | "stride" | "pad" | "lhs_dilate" | "rhs_dilate" | "rhs_reversal") {
            return Err(format!(
                "unknown window field `{key}` (known: size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal)"
            ));
        }
        if fields.insert(key, value).is_some() {
            return Err(format!("the window field `{key}` is given twice"));
        }
    }
    if fields.is_empty() {
        return Ok(Vec::new());
    }
    let size = fields.get("size").ok_or_else(|| "the window has no `size=`".to_string())?;
    let size = integers_by_x(size)?;
    let rank = size.len();
    let numbers = |key: &str, default: i64| -> Result<Vec<i64>, String> {
        match fields.get(key) {
            None => Ok(vec![default; rank]),
            Some(value) => {
                let values = integers_by_x(value)?;
                if values.len() == rank {
                    Ok(values)
                } else {
                    Err(format!("`{key}` has {} entries but `size` has {rank}", values.len()))
                }
            }
        }
    };
    let stride = numbers("stride", 1)?;
    let lhs_dilate = numbers("lhs_dilate", 1)?;
    let rhs_dilate = numbers("rhs_dilate", 1)?;
    let reversal = numbers("rhs_reversal", 0)?;
    if let Some(bad) = reversal.iter().find(|&&r| r != 0 && r != 1) {
        return Err(format!("`rhs_reversal` entries are 0 or 1, not {bad}"));
    }
    let pad: Vec<(i64, i64)> = match fields.get("pad") {
        None => vec![(0, 0); rank],
        Some(value) => {
            let parts = by_x(value);
            if parts.len() != rank {
                return Err(format!("`pad` has {} entries but `size` has {rank}", parts.len()));
            }
            parts
                .into_iter()
                .map(|part| match underscored(part)?[..] {
                    [low, high] => Ok((low, high)),
                    _ => Err(format!("`{part}` should be low_high")),
                })
                .collect::<Result<_, String>>()?
        }
    };
    Ok((0..rank)
        .map(|k| WindowDim {
            size: size[k],
            stride: stride[k],
            pad_low: pad[k].0,
            pad_high: pad[k].1,
            window_dilation: rhs_dilate[k],
            base_dilation: lhs_dilate[k],
            reversal: reversal[k] == 1,
        })
        .collect())
}

/// `1x512`.
fn integers_by_x(text: &str) -> Result<Vec<i64>, String> {
    by_x(text).into_iter().map(one_integer).collect()
}

/// A computation name, `%` optional.
fn computation_name(text: &str) -> Result<String, String> {
    let name = text.strip_prefix('%').unwrap_or(text);
    if !name.is_empty() && name.chars().all(is_name_char) {
        Ok(name.to_string())
    } else {
        Err("expected a computation name".to_string())
    }
}

/// `EQ`, `NE`, `LT`, `LE`, `GT` or `GE`.
fn comparison_direction(text: &str) -> Result<ComparisonDirection, String> {
    ComparisonDirection::from_name(text.trim())
        .ok_or_else(|| "expected a direction: EQ, NE, LT, LE, GT or GE".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(dimension_list("{0, 2}"), Ok(vec![0, 2]));
        assert_eq!(dimension_list("{}"), Ok(vec![]));
        assert!(dimension_list("{-1}").unwrap_err().contains("at least 0"));
        assert!(dimension_list("{0,}").is_err());
        assert_eq!(
            slice("{[5:10:1], [3:20]}"),
            Ok(vec![
                SliceDim { start: 5, limit: 10, stride: 1 },
                SliceDim { start: 3, limit: 20, stride: 1 }
            ])
        );
        assert_eq!(
            padding("1_4_1x-4_8"),
            Ok(vec![PadDim { low: 1, high: 4, interior: 1 }, PadDim { low: -4, high: 8, interior: 0 }])
        );
        assert_eq!(padding(""), Ok(vec![]));
        assert!(padding("1_2_3_4").is_err());
        assert!(padding("1__2").is_err());
        let w = window("{size=1x512 pad=0_0x1_2 stride=1x3 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}");
        assert_eq!(
            w,
            Ok(vec![
                WindowDim {
                    size: 1,
                    stride: 1,
                    pad_low: 0,
                    pad_high: 0,
                    window_dilation: 2,
                    base_dilation: 1,
                    reversal: false
                },
                WindowDim {
                    size: 512,
                    stride: 3,
                    pad_low: 1,
                    pad_high: 2,
                    window_dilation: 1,
                    base_dilation: 2,
                    reversal: true
                },
            ])
        );
        assert_eq!(window("{}"), Ok(vec![]));
        assert!(window("{size=2 stride=1x1}").unwrap_err().contains("entries"));
        assert!(window("{size=2 foo=1}").unwrap_err().contains("unknown window field"));
        assert_eq!(computation_name("%add.1"), Ok("add.1".to_string()));
        assert_eq!(comparison_direction("LT"), Ok(ComparisonDirection::Lt));
        assert!(dimension("99999999999999999999").is_err());
    }
}
