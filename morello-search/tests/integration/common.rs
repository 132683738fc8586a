//! Helpers shared by the modules of the search's integration tests.

#![allow(clippy::unwrap_used)]

use morello_core::imp::Impl;
use morello_core::interp::{Buffer, Interpreter, Value, wrap};
use morello_core::target::Target;

/// Runs `imp` and its spec on the same deterministic inputs and compares the results.
pub fn check_with_interpreter(imp: &Impl, t: &Target) {
    let buffers: Vec<Buffer> = imp
        .spec
        .operands
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let values: Vec<Value> = (0..o.shape.volume() as usize)
                .map(|j| {
                    let v = ((j * 5 + i * 7) % 11) as i64 - 5;
                    if o.dtype.is_float() { Value::Float(v as f32) } else { Value::Int(wrap(v, o.dtype)) }
                })
                .collect();
            Buffer::from_logical(o, &values).unwrap()
        })
        .collect();
    let interp = Interpreter::new(t);
    let (mut by_impl, mut by_spec) = (buffers.clone(), buffers);
    interp.execute_impl(imp, &mut by_impl).unwrap_or_else(|e| panic!("{e}\n{}", imp.render(t)));
    interp.execute_spec(&imp.spec, &mut by_spec).unwrap();
    let agree = by_impl.iter().zip(&by_spec).all(|(got, want)| {
        got.dtype == want.dtype
            && got.values.len() == want.values.len()
            && got.values.iter().zip(&want.values).all(|(g, w)| close(*g, *w))
    });
    assert!(agree, "{}\n got: {by_impl:?}\nwant: {by_spec:?}", imp.render(t));
}

/// Integers exactly; floats within a relative 1e-5 (and 1e-30 absolute): kernels evaluate `exp`
/// and GELU's `tanh` by polynomials and sum in their own order, while every result of the integer
/// valued inputs above that involves neither is exact, so a wrong kernel is off by far more.
fn close(got: Value, want: Value) -> bool {
    match (got, want) {
        (Value::Float(g), Value::Float(w)) => (g - w).abs() <= 1e-5 * w.abs() + 1e-30,
        (g, w) => g == w,
    }
}
