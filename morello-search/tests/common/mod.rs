//! Helpers shared by the search's integration tests.

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
    assert_eq!(by_impl, by_spec, "{}", imp.render(t));
}
