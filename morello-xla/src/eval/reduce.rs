//! `reduce`, `reduce-window` and `map`: a computation applied to elements.
//!
//! Each output element folds its inputs in row-major order of the reduced (or window) dims,
//! starting from the init: `acc = f(acc, x)`, as XLA's evaluator does; a reduce-window skips
//! padding positions. A reducer whose root is `add`, `maximum` or `minimum` of its two
//! parameters is read directly; the bound of a sum is then independent of the order
//! ([`sum_bound`]: an implementation may add in any order, as vectorised code does); a maximum's
//! is the largest of its terms'. Any other reducer (and every `map`) evaluates its computation
//! per element, with the per-op bounds of `scalar.rs` in that order.

use crate::hlo::{ArrayShape, ComputationId, ElementwiseOp, HloShape, WindowDim, is_float_type};
use crate::xla::ElementType;

use super::array::{Array, for_each_index, strides, volume};
use super::scalar::{Num, Scalar, lowest_bit_exponent, sum_bound};
use super::{Evaluator, NestedError, Value};

/// What a reducer computes, when it is one elementwise op of its two parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Simple {
    Add,
    Max,
    Min,
}

fn simple(ev: &Evaluator<'_>, to_apply: ComputationId) -> Option<Simple> {
    match ev.module.computations()[to_apply.0].binary_op_of_parameters()?.0 {
        ElementwiseOp::Add => Some(Simple::Add),
        ElementwiseOp::Maximum => Some(Simple::Max),
        ElementwiseOp::Minimum => Some(Simple::Min),
        _ => None,
    }
}

/// One output's accumulator.
#[derive(Clone)]
enum Accumulator {
    Sum { value: f64, int: i128, magnitude: f64, errors: f64, lowest_bit: i32, count: usize },
    Extreme(Scalar),
    General(Vec<Scalar>),
}

struct Fold<'e, 'm> {
    ev: &'e Evaluator<'m>,
    to_apply: ComputationId,
    simple: Option<Simple>,
    /// The types of the accumulators (the inits') and of the inputs.
    init_types: Vec<ElementType>,
    input_types: Vec<ElementType>,
}

impl Fold<'_, '_> {
    fn start(&self, inits: &[Scalar]) -> Accumulator {
        match self.simple {
            Some(Simple::Add) => {
                let mut acc = Accumulator::Sum {
                    value: 0.0,
                    int: 0,
                    magnitude: 0.0,
                    errors: 0.0,
                    lowest_bit: i32::MAX,
                    count: 0,
                };
                self.add_term(&mut acc, inits[0]);
                acc
            }
            Some(_) => Accumulator::Extreme(inits[0]),
            None => Accumulator::General(inits.to_vec()),
        }
    }

    fn add_term(&self, acc: &mut Accumulator, x: Scalar) {
        let Accumulator::Sum { value, int, magnitude, errors, lowest_bit, count } = acc else { return };
        match x.value {
            Num::F(v) => {
                *value += v;
                *magnitude += v.abs();
                if v != 0.0 && v.is_finite() {
                    *lowest_bit = (*lowest_bit).min(lowest_bit_exponent(v));
                }
            }
            Num::I(v) => *int = super::numbers::wrap(*int + v, self.init_types[0]),
        }
        *errors += x.error;
        *count += 1;
    }

    fn step(&self, acc: &mut Accumulator, inputs: &[Scalar]) -> Result<(), NestedError> {
        match acc {
            Accumulator::Sum { .. } => self.add_term(acc, inputs[0]),
            Accumulator::Extreme(current) => {
                let x = inputs[0];
                let max = self.simple == Some(Simple::Max);
                let value = match (current.value, x.value) {
                    (Num::F(a), Num::F(b)) => Num::F(if a.is_nan() || b.is_nan() {
                        f64::NAN
                    } else if max {
                        a.max(b)
                    } else {
                        a.min(b)
                    }),
                    (a, b) => {
                        let (a, b) = (a.as_i128(), b.as_i128());
                        Num::I(if max { a.max(b) } else { a.min(b) })
                    }
                };
                *current = Scalar { value, error: current.error.max(x.error) };
            }
            Accumulator::General(accs) => {
                let mut args: Vec<Value> = Vec::with_capacity(accs.len() * 2);
                for (s, &t) in accs.iter().zip(&self.init_types) {
                    args.push(Value::Array(Array::from_scalars(t, &[], [*s])));
                }
                for (s, &t) in inputs.iter().zip(&self.input_types) {
                    args.push(Value::Array(Array::from_scalars(t, &[], [*s])));
                }
                let result = self.ev.computation(self.to_apply, args)?;
                let arrays = result.arrays();
                if arrays.len() != accs.len() {
                    return Err(NestedError::Here("the reducer returns the wrong number of values".into()));
                }
                for (a, r) in accs.iter_mut().zip(arrays) {
                    *a = r.scalar(0);
                }
            }
        }
        Ok(())
    }

    /// Folds the elements at `linear` of every input into `acc` (`args` is scratch, one per input).
    fn step_at(
        &self,
        acc: &mut Accumulator,
        inputs: &[&Array],
        linear: usize,
        args: &mut [Scalar],
    ) -> Result<(), NestedError> {
        for (arg, input) in args.iter_mut().zip(inputs) {
            *arg = input.scalar(linear);
        }
        self.step(acc, args)
    }

    fn finish(&self, acc: Accumulator) -> Vec<Scalar> {
        match acc {
            Accumulator::Sum { value, int, magnitude, errors, lowest_bit, count } => {
                let t = self.init_types[0];
                if is_float_type(t) {
                    vec![Scalar {
                        value: Num::F(value),
                        error: sum_bound(t, magnitude, errors, lowest_bit, count),
                    }]
                } else {
                    vec![Scalar { value: Num::I(int), error: errors }]
                }
            }
            Accumulator::Extreme(s) => vec![s],
            Accumulator::General(accs) => accs,
        }
    }
}

/// The fold of a reduction's operands (`n` inputs, then their `n` initial values) by `to_apply`,
/// the inputs, and the initial values as scalars.
fn fold<'e, 'm, 'a>(
    ev: &'e Evaluator<'m>,
    to_apply: ComputationId,
    operands: &'a [&'a Array],
) -> (Fold<'e, 'm>, &'a [&'a Array], Vec<Scalar>) {
    let (inputs, inits) = operands.split_at(operands.len() / 2);
    let simple = if inputs.len() == 1 { simple(ev, to_apply) } else { None };
    let fold = Fold {
        ev,
        to_apply,
        simple,
        init_types: inits.iter().map(|a| a.element_type).collect(),
        input_types: inputs.iter().map(|a| a.element_type).collect(),
    };
    (fold, inputs, inits.iter().map(|a| a.scalar(0)).collect())
}

fn results(shape: &HloShape, per_output: Vec<Vec<Scalar>>) -> Value {
    let arrays: Vec<Array> = shape
        .arrays()
        .iter()
        .enumerate()
        .map(|(k, a)| Array::from_scalars(a.element_type, &a.dims, per_output.iter().map(|s| s[k])))
        .collect();
    match shape {
        HloShape::Array(_) => Value::Array(arrays.into_iter().next().expect("one array")),
        HloShape::Tuple(_) => Value::Tuple(arrays),
    }
}

/// `reduce(inputs..., inits...)` over `dimensions`.
pub(super) fn reduce(
    ev: &Evaluator<'_>,
    operands: &[&Array],
    dimensions: &[usize],
    to_apply: ComputationId,
    shape: &HloShape,
) -> Result<Value, NestedError> {
    let (f, inputs, inits) = fold(ev, to_apply, operands);
    let dims = &inputs[0].dims;
    let kept: Vec<usize> = (0..dims.len()).filter(|d| !dimensions.contains(d)).collect();
    let out_dims: Vec<i64> = kept.iter().map(|&d| dims[d]).collect();
    let out_strides = strides(&out_dims);
    let mut accs = vec![f.start(&inits); volume(&out_dims)];
    let mut failure = None;
    let mut args = vec![Scalar::int(0); inputs.len()];
    for_each_index(dims, |index, linear| {
        if failure.is_some() {
            return;
        }
        let o: usize = kept.iter().zip(&out_strides).map(|(&d, &s)| index[d] as usize * s).sum();
        if let Err(e) = f.step_at(&mut accs[o], inputs, linear, &mut args) {
            failure = Some(e);
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(results(shape, accs.into_iter().map(|a| f.finish(a)).collect()))
}

/// `reduce-window(inputs..., inits...)`: each window's base positions, padding skipped.
pub(super) fn reduce_window(
    ev: &Evaluator<'_>,
    operands: &[&Array],
    window: &[WindowDim],
    to_apply: ComputationId,
    shape: &HloShape,
) -> Result<Value, NestedError> {
    let (f, inputs, inits) = fold(ev, to_apply, operands);
    let input = inputs[0];
    let out_dims = shape.arrays()[0].dims.clone();
    let window_dims: Vec<i64> = window.iter().map(|w| w.size).collect();
    let in_strides = strides(&input.dims);
    let mut per_output = Vec::with_capacity(volume(&out_dims));
    let mut failure: Option<NestedError> = None;
    let mut args = vec![Scalar::int(0); inputs.len()];
    for_each_index(&out_dims, |out, _| {
        let mut acc = f.start(&inits);
        for_each_index(&window_dims, |w, _| {
            if failure.is_some() {
                return;
            }
            let mut p = 0usize;
            for (d, wd) in window.iter().enumerate() {
                let base = out[d] * wd.stride + w[d] * wd.window_dilation - wd.pad_low;
                let extent = (input.dims[d] - 1) * wd.base_dilation + 1;
                if base < 0 || base >= extent || base % wd.base_dilation != 0 {
                    return;
                }
                p += (base / wd.base_dilation) as usize * in_strides[d];
            }
            if let Err(e) = f.step_at(&mut acc, inputs, p, &mut args) {
                failure = Some(e);
            }
        });
        per_output.push(f.finish(acc));
    });
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(results(shape, per_output))
}

/// `map(operands...)`: the computation applied to each index's elements.
pub(super) fn map(
    ev: &Evaluator<'_>,
    operands: &[&Array],
    to_apply: ComputationId,
    result: &ArrayShape,
) -> Result<Array, NestedError> {
    let mut out = Vec::with_capacity(volume(&result.dims));
    for i in 0..volume(&result.dims) {
        let args: Vec<Value> = operands
            .iter()
            .map(|a| Value::Array(Array::from_scalars(a.element_type, &[], [a.scalar(i)])))
            .collect();
        let value = ev.computation(to_apply, args)?;
        let arrays = value.arrays();
        let first = arrays
            .first()
            .ok_or_else(|| NestedError::Here("the mapped computation returns nothing".into()))?;
        out.push(first.scalar(0));
    }
    Ok(Array::from_scalars(result.element_type, &result.dims, out))
}
