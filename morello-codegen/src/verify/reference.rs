//! The reference results an emitted kernel is compared with, and the magnitudes its tolerance
//! scales with.
//!
//! The references compute the same thing:
//!
//! - the reference interpreter ([`Interpreter::execute_spec`], which runs the operator's semantics
//!   from its file in `morello_core::operators`) for every spec up to [`INTERPRETER_LIMIT`]
//!   multiply-adds (or elements, for moves and fills), and above it for operators without a
//!   fast reference ([`FAST_REFERENCES`]);
//! - for larger matmuls, [`fast_matmul`]: the operands gathered into row-major arrays through
//!   their layouts' indexers, then a plain triple loop in f64 (floats) or wrapping i64
//!   (integers), split by rows over the available cores. It is checked against the interpreter
//!   in the tests;
//! - for larger convolutions, [`fast_conv`]: the same with the image gathered as NHWC and the
//!   filters as FHWC, each output a dot product over channels of the taps inside the image.
//!
//! What an element may differ by is the operator's [`Tolerance`]: for sums and epilogues, the
//! magnitude `M = |initial out| + Σ |a·b|` of each float element comes from the same computation on
//! absolute values; for softmax and its passes, the operator gives each row's relative bound.

use morello_core::interp::{Buffer as InterpBuffer, Interpreter, Value, wrap};
use morello_core::layout::LayoutIndexer;
use morello_core::operators::{Operands, Operator, RelativeBounds, Tolerance};
use morello_core::shape::Shape;
use morello_core::spec::LogicalSpec;
use morello_core::target::Target;

use crate::error::CodegenError;
use crate::harness::Buffer;

/// Above this many multiply-adds a matmul is checked with `fast_matmul` instead of the
/// interpreter (64^3: the interpreter takes about a second there in a debug build).
pub const INTERPRETER_LIMIT: u64 = 1 << 18;

/// The expected contents of every operand and, for floats, each element's magnitude.
#[derive(Debug, Clone)]
pub(crate) struct Reference {
    /// Each operand's expected values, by buffer offset.
    pub values: Vec<Vec<Value>>,
    /// Each operand's magnitudes by buffer offset (`None` for operands without a reduction).
    pub magnitudes: Vec<Option<Vec<f64>>>,
    /// Which reference computed it.
    pub method: ReferenceMethod,
}

/// Which reference computed the expected values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ReferenceMethod {
    /// The reference interpreter executing the spec.
    Interpreter,
    /// The fast f64 / i64 matmul of this module.
    FastMatmul,
    /// The fast f64 / i64 convolution of this module.
    FastConv,
}

impl std::fmt::Display for ReferenceMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReferenceMethod::Interpreter => "the reference interpreter",
            ReferenceMethod::FastMatmul => "the fast matmul reference",
            ReferenceMethod::FastConv => "the fast convolution reference",
        })
    }
}

/// A harness buffer as interpreter values (the same element order: by buffer offset).
pub(crate) fn to_values(buffer: &Buffer) -> Vec<Value> {
    match buffer {
        Buffer::F32(v) => v.iter().map(|&x| Value::Float(x)).collect(),
        Buffer::Bf16(v) => v.iter().map(|&b| Value::Float(f32::from_bits(u32::from(b) << 16))).collect(),
        Buffer::U32(v) => v.iter().map(|&x| Value::Int(i64::from(x))).collect(),
        Buffer::I32(v) => v.iter().map(|&x| Value::Int(i64::from(x))).collect(),
        Buffer::U16(v) => v.iter().map(|&x| Value::Int(i64::from(x))).collect(),
        Buffer::I16(v) => v.iter().map(|&x| Value::Int(i64::from(x))).collect(),
        Buffer::U8(v) => v.iter().map(|&x| Value::Int(i64::from(x))).collect(),
        Buffer::I8(v) => v.iter().map(|&x| Value::Int(i64::from(x))).collect(),
    }
}

fn absolute(values: &[Value]) -> Vec<Value> {
    values
        .iter()
        .map(|v| match *v {
            Value::Float(x) => Value::Float(x.abs()),
            Value::Int(i) => Value::Int(i),
        })
        .collect()
}

/// A reference faster than the interpreter for large specs of one operator.
type FastReference = fn(&LogicalSpec, &[Vec<Value>]) -> Result<Reference, CodegenError>;

/// The operators with a fast reference above [`INTERPRETER_LIMIT`] points, and that reference.
const FAST_REFERENCES: [(Operator, FastReference); 3] =
    [(Operator::Matmul, fast_matmul), (Operator::MatmulBias, fast_matmul), (Operator::Conv, fast_conv)];

/// Computes the reference for `spec` from its operands' initial contents (by buffer offset), with
/// each element's magnitude or relative bound as its operator's tolerance says.
pub(crate) fn reference(
    spec: &LogicalSpec,
    target: &Target,
    initial: &[Vec<Value>],
) -> Result<Reference, CodegenError> {
    if spec.shape.volume() > INTERPRETER_LIMIT {
        let operator = spec.kind.operator();
        if let Some((_, fast)) = FAST_REFERENCES.iter().find(|(o, _)| *o == operator) {
            return fast(spec, initial);
        }
    }
    let values = interpret(spec, target, initial)?;
    let tolerance = spec.kind.tolerance();
    if let Tolerance::Relative(bounds) = tolerance {
        if let Some(factors) = relative_bounds(spec, initial, bounds) {
            return Ok(Reference { values, magnitudes: factors, method: ReferenceMethod::Interpreter });
        }
    }
    let reduces = !spec.kind.reduction_dims().is_empty();
    let epilogue = spec.kind.activation().is_some();
    let magnitudes = if (reduces || epilogue) && spec.output().dtype.is_float() {
        let abs: Vec<Vec<Value>> = initial.iter().map(|v| absolute(v)).collect();
        // The magnitude of an epilogue's argument: the same sum without the activation.
        let kind = match tolerance {
            Tolerance::Epilogue { argument, .. } => argument,
            _ => spec.kind,
        };
        let plain = LogicalSpec { kind, ..spec.clone() };
        let m = interpret(&plain, target, &abs)?;
        m.into_iter()
            .enumerate()
            .map(|(i, values)| (i == spec.output_index()).then(|| values.iter().map(as_f64).collect()))
            .collect()
    } else {
        vec![None; initial.len()]
    };
    Ok(Reference { values, magnitudes, method: ReferenceMethod::Interpreter })
}

fn interpret(
    spec: &LogicalSpec,
    target: &Target,
    initial: &[Vec<Value>],
) -> Result<Vec<Vec<Value>>, CodegenError> {
    let mut buffers: Vec<InterpBuffer> = spec
        .operands
        .iter()
        .zip(initial)
        .map(|(o, values)| InterpBuffer { dtype: o.dtype, values: values.clone() })
        .collect();
    Interpreter::new(target)
        .execute_spec(spec, &mut buffers)
        .map_err(|e| CodegenError::Internal { reason: format!("the reference interpreter failed: {e}") })?;
    Ok(buffers.into_iter().map(|b| b.values).collect())
}

/// The initial values of a spec's operands, by buffer offset, read by logical point.
struct Initial<'a> {
    spec: &'a LogicalSpec,
    values: &'a [Vec<Value>],
    indexers: Vec<LayoutIndexer>,
}

impl Operands for Initial<'_> {
    fn spec(&self) -> &LogicalSpec {
        self.spec
    }

    fn read(&self, operand: usize, point: &[u32]) -> Value {
        let offset = self.indexers[operand].offset(point) as usize;
        self.values[operand].get(offset).copied().unwrap_or(Value::Float(f32::NAN))
    }
}

/// Each written element's relative bound (its `magnitudes`) from the operator's per-row bounds
/// ([`Tolerance::Relative`], e.g. softmax's `2 (e + D u) + (n + 3) u`), by buffer offset; `None`
/// when an operand's layout does not index its shape (never, for a valid spec).
fn relative_bounds(
    spec: &LogicalSpec,
    initial: &[Vec<Value>],
    bounds: RelativeBounds,
) -> Option<Vec<Option<Vec<f64>>>> {
    let indexers: Vec<LayoutIndexer> =
        spec.operands.iter().map(|t| t.layout.indexer(&t.shape).ok()).collect::<Option<_>>()?;
    let rows = bounds(spec.kind, &spec.shape, &Initial { spec, values: initial, indexers });
    let per_element = |operand: usize, rows: &[f64]| -> Option<Vec<f64>> {
        let tensor = &spec.operands[operand];
        let indexer = tensor.layout.indexer(&tensor.shape).ok()?;
        let mut out = vec![0.0; tensor.shape.volume() as usize];
        for point in tensor.shape.points() {
            out[indexer.offset(&point) as usize] = *rows.get(point[0] as usize)?;
        }
        Some(out)
    };
    rows.iter()
        .enumerate()
        .map(|(operand, rows)| match rows {
            Some(rows) => per_element(operand, rows).map(Some),
            None => Some(None),
        })
        .collect()
}

/// A value as f64.
pub(crate) fn as_f64(v: &Value) -> f64 {
    match *v {
        Value::Float(x) => f64::from(x),
        Value::Int(i) => i as f64,
    }
}

/// The matmul `out (+)= lhs * rhs` with f64 or wrapping i64 accumulation, through the operands'
/// layouts.
pub(crate) fn fast_matmul(spec: &LogicalSpec, initial: &[Vec<Value>]) -> Result<Reference, CodegenError> {
    if !matches!(spec.kind.operator(), Operator::Matmul | Operator::MatmulBias) {
        return Err(CodegenError::Internal { reason: "the fast reference only does matmuls".into() });
    }
    let (accum, epilogue) = (spec.kind.accumulates(), spec.kind.activation());
    let &[b, m, k, n] = spec.shape.dims() else {
        return Err(CodegenError::Internal { reason: "a matmul's iteration shape has rank 4".into() });
    };
    let (b, m, k, n) = (b as usize, m as usize, k as usize, n as usize);
    // Each operand gathered in row-major order of its logical index.
    let gather = |i: usize| -> Result<Vec<Value>, CodegenError> {
        let operand = &spec.operands[i];
        let indexer = operand
            .layout
            .indexer(&operand.shape)
            .map_err(|e| CodegenError::Internal { reason: format!("operand {i}: {e}") })?;
        Ok(operand.shape.points().map(|p| initial[i][indexer.offset(&p) as usize]).collect())
    };
    let out_tensor = spec.output();
    let out_dtype = out_tensor.dtype;
    let float = out_dtype.is_float();
    let int = |v: &Value| if let Value::Int(i) = v { *i } else { 0 };
    // Plain numbers, so the inner loop vectorises.
    let (lhs, rhs) = (gather(0)?, gather(1)?);
    let init: Vec<Value> = if accum { gather(2)? } else { vec![Value::Int(0); b * m * n] };
    let bias: Vec<f64> =
        if epilogue.is_some() { gather(2)?.iter().map(as_f64).collect() } else { Vec::new() };
    let (lhs_f, rhs_f): (Vec<f64>, Vec<f64>) = if float {
        (lhs.iter().map(as_f64).collect(), rhs.iter().map(as_f64).collect())
    } else {
        (Vec::new(), Vec::new())
    };
    let (lhs_i, rhs_i): (Vec<i64>, Vec<i64>) = if float {
        (Vec::new(), Vec::new())
    } else {
        (lhs.iter().map(int).collect(), rhs.iter().map(int).collect())
    };
    let rows = b * m;
    // One row of the output (values and magnitudes) per (batch, row).
    let row = |r: usize| -> (Vec<Value>, Vec<f64>) {
        let batch = r / m;
        let lhs_row = r * k..(r + 1) * k;
        let rhs_batch = batch * k * n;
        let init_row = &init[r * n..(r + 1) * n];
        if float {
            let mut acc: Vec<f64> = init_row.iter().map(as_f64).collect();
            let mut mag: Vec<f64> = acc.iter().map(|x| x.abs()).collect();
            for (p, &a) in lhs_f[lhs_row].iter().enumerate() {
                let start = rhs_batch + p * n;
                for ((acc, mag), &b) in acc.iter_mut().zip(mag.iter_mut()).zip(&rhs_f[start..start + n]) {
                    let product = a * b;
                    *acc += product;
                    *mag += product.abs();
                }
            }
            if let Some(activation) = epilogue {
                for (j, (acc, mag)) in acc.iter_mut().zip(mag.iter_mut()).enumerate() {
                    // The kernel rounds the sum to f32 before adding the bias.
                    *acc = activation.apply(f64::from((*acc as f32) + (bias[j] as f32)));
                    *mag += bias[j].abs();
                }
            }
            (acc.into_iter().map(|x| Value::Float(x as f32)).collect(), mag)
        } else {
            let mut acc: Vec<i64> = init_row.iter().map(int).collect();
            for (p, &a) in lhs_i[lhs_row].iter().enumerate() {
                let start = rhs_batch + p * n;
                for (acc, &b) in acc.iter_mut().zip(&rhs_i[start..start + n]) {
                    *acc = acc.wrapping_add(a.wrapping_mul(b));
                }
            }
            (acc.into_iter().map(|x| Value::Int(wrap(x, out_dtype))).collect(), Vec::new())
        }
    };
    let results = parallel_map(rows, row)?;
    with_output(spec, initial, results, n, ReferenceMethod::FastMatmul)
}

/// The convolution `out (+)= image * filters` with f64 or wrapping i64 accumulation, through the
/// operands' layouts, padding, strides and dilations.
pub(crate) fn fast_conv(spec: &LogicalSpec, initial: &[Vec<Value>]) -> Result<Reference, CodegenError> {
    let internal = |reason: &str| CodegenError::Internal { reason: reason.into() };
    let Some(geometry) = spec.kind.conv_geometry() else {
        return Err(internal("the fast convolution reference only does convolutions"));
    };
    let accum = spec.kind.accumulates();
    let &[b, f, c, oh, ow, fh, fw] = spec.shape.dims() else {
        return Err(internal("a convolution's iteration shape has rank 7"));
    };
    let [_, _, ih, iw] = *spec.operands[0].shape.dims() else {
        return Err(internal("a convolution's image has rank 4"));
    };
    let u = |x: u32| x as usize;
    let (b, f, c, oh, ow, fh, fw, ih, iw) = (u(b), u(f), u(c), u(oh), u(ow), u(fh), u(fw), u(ih), u(iw));
    let out_dtype = spec.output().dtype;
    let float = out_dtype.is_float();
    let int = |v: &Value| if let Value::Int(i) = v { *i } else { 0 };
    // Operand `i` gathered with its logical dims permuted by `order` (row-major in that order).
    let gather = |i: usize, order: [usize; 4]| -> Result<Vec<Value>, CodegenError> {
        let operand = &spec.operands[i];
        let indexer = operand
            .layout
            .indexer(&operand.shape)
            .map_err(|e| CodegenError::Internal { reason: format!("operand {i}: {e}") })?;
        let dims = operand.shape.dims();
        let permuted: Vec<u32> = order.iter().map(|&d| dims[d]).collect();
        let shape = Shape::new(permuted).map_err(|e| internal(&e.to_string()))?;
        Ok(shape
            .points()
            .map(|p| {
                let mut logical = [0u32; 4];
                for (k, &d) in order.iter().enumerate() {
                    logical[d] = p[k];
                }
                initial[i][indexer.offset(&logical) as usize]
            })
            .collect())
    };
    // Image as [b][h][w][c], filters as [f][fh][fw][c], output as [b][f][h][w].
    let image = gather(0, [0, 2, 3, 1])?;
    let filters = gather(1, [0, 2, 3, 1])?;
    let init: Vec<Value> =
        if accum { gather(2, [0, 1, 2, 3])? } else { vec![Value::Int(0); b * f * oh * ow] };
    let to_f = |v: &[Value]| v.iter().map(as_f64).collect::<Vec<f64>>();
    let to_i = |v: &[Value]| v.iter().map(int).collect::<Vec<i64>>();
    let (image_f, filters_f) = if float { (to_f(&image), to_f(&filters)) } else { (Vec::new(), Vec::new()) };
    let (image_i, filters_i) = if float { (Vec::new(), Vec::new()) } else { (to_i(&image), to_i(&filters)) };
    let (sh, sw) = (usize::from(geometry.stride[0]), usize::from(geometry.stride[1]));
    let (dh, dw) = (usize::from(geometry.dilation[0]), usize::from(geometry.dilation[1]));
    let (pt, pl) = (usize::from(geometry.padding[0]), usize::from(geometry.padding[2]));
    // One (batch, filter) plane of the output per task: values and magnitudes.
    let plane = |task: usize| -> (Vec<Value>, Vec<f64>) {
        let (batch, filter) = (task / f, task % f);
        let mut values = Vec::with_capacity(oh * ow);
        let mut mags = Vec::with_capacity(oh * ow);
        for y in 0..oh {
            for x in 0..ow {
                let at = ((batch * f + filter) * oh + y) * ow + x;
                let (mut acc_f, mut mag, mut acc_i) =
                    (as_f64(&init[at]), as_f64(&init[at]).abs(), int(&init[at]));
                for ky in 0..fh {
                    let Some(row) = (y * sh + ky * dh).checked_sub(pt).filter(|&r| r < ih) else { continue };
                    for kx in 0..fw {
                        let Some(col) = (x * sw + kx * dw).checked_sub(pl).filter(|&q| q < iw) else {
                            continue;
                        };
                        let img = ((batch * ih + row) * iw + col) * c;
                        let flt = ((filter * fh + ky) * fw + kx) * c;
                        if float {
                            for (a, w) in image_f[img..img + c].iter().zip(&filters_f[flt..flt + c]) {
                                acc_f += a * w;
                                mag += (a * w).abs();
                            }
                        } else {
                            for (a, w) in image_i[img..img + c].iter().zip(&filters_i[flt..flt + c]) {
                                acc_i = acc_i.wrapping_add(a.wrapping_mul(*w));
                            }
                        }
                    }
                }
                if float {
                    values.push(Value::Float(acc_f as f32));
                    mags.push(mag);
                } else {
                    values.push(Value::Int(wrap(acc_i, out_dtype)));
                }
            }
        }
        (values, mags)
    };
    let planes = parallel_map(b * f, plane)?;
    with_output(spec, initial, planes, oh * ow, ReferenceMethod::FastConv)
}

/// `f` of each of `0..count`, in order, computed on up to the machine's parallelism in
/// contiguous runs of indices.
///
/// # Errors
/// [`CodegenError::Internal`] if a thread panicked.
fn parallel_map<T: Send>(count: usize, f: impl Fn(usize) -> T + Sync) -> Result<Vec<T>, CodegenError> {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).min(count.max(1));
    let chunk = count.div_ceil(threads);
    let results: Vec<T> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let f = &f;
                scope.spawn(move || ((t * chunk)..((t + 1) * chunk).min(count)).map(f).collect::<Vec<_>>())
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    if results.len() != count {
        return Err(CodegenError::Internal { reason: "a reference thread panicked".into() });
    }
    Ok(results)
}

/// The reference of `spec` by `method`: the operands' `initial` contents with the output's
/// replaced by `runs`, each `chunk_len` consecutive output elements in row-major order (their
/// values and, for a float output, their magnitudes), scattered through the output's layout.
///
/// # Errors
/// [`CodegenError::Internal`] if the output's layout does not index its shape.
fn with_output(
    spec: &LogicalSpec,
    initial: &[Vec<Value>],
    runs: Vec<(Vec<Value>, Vec<f64>)>,
    chunk_len: usize,
    method: ReferenceMethod,
) -> Result<Reference, CodegenError> {
    let out_index = spec.output_index();
    let out_tensor = spec.output();
    let float = out_tensor.dtype.is_float();
    let indexer = out_tensor
        .layout
        .indexer(&out_tensor.shape)
        .map_err(|e| CodegenError::Internal { reason: format!("output: {e}") })?;
    let volume = runs.len() * chunk_len;
    let mut values = vec![Value::Int(0); volume];
    let mut magnitudes = vec![0.0; volume];
    for (point, linear) in out_tensor.shape.points().zip(0..volume) {
        let offset = indexer.offset(&point) as usize;
        let (run, j) = (linear / chunk_len, linear % chunk_len);
        values[offset] = runs[run].0[j];
        if float {
            magnitudes[offset] = runs[run].1[j];
        }
    }
    let mut all_values = initial.to_vec();
    all_values[out_index] = values;
    let mut all_magnitudes = vec![None; spec.operands.len()];
    if float {
        all_magnitudes[out_index] = Some(magnitudes);
    }
    Ok(Reference { values: all_values, magnitudes: all_magnitudes, method })
}
