//! Hostile and unusual modules: every one gets a clear error naming what is wrong (or compiles),
//! never a panic.

#![allow(clippy::unwrap_used)]

use morello_compile::{CompileError, CompileOptions, compile, list_specs};
use morello_core::target::Target;
use morello_search::Search;
use morello_xla::hlo::HloModule;

fn target() -> Target {
    Target::builtin("x86-avx2", 1).unwrap()
}

/// The error compiling `text` gives (reading it included).
fn error(text: &str) -> String {
    let module: HloModule = match text.parse() {
        Ok(m) => m,
        Err(e) => return e.to_string(),
    };
    let target = target();
    let search = Search::new(&target);
    match compile(&module, &target, &search, &CompileOptions { name: "m".into() }) {
        Ok(_) => panic!("compiled: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_modules_say_what_is_wrong() {
    for (text, message) in [
        (
            "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT s = f32[2] frobnicate(p)\n}",
            "instruction `s` in computation `e`: unknown opcode `frobnicate`",
        ),
        (
            "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT s = f32[2] add(p)\n}",
            "instruction `s` in computation `e`: `add` takes 2 operands, found 1",
        ),
        (
            "ENTRY e {\n  p = f32[2] parameter(0)\n  a = f32[2] add(p, b)\n  ROOT b = f32[2] add(a, p)\n}",
            "operand `b` is used before it is defined",
        ),
        (
            "f {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=g\n}\n\
             g {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=f\n}\n\
             ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=f\n}",
            "leads back to this computation (calls must not recurse)",
        ),
        (
            "ENTRY e {\n  a = f32[2] parameter(0)\n  b = s32[2] parameter(1)\n  ROOT s = f32[2] add(a, b)\n}",
            "instruction `s` in computation `e`: operand 1 (`b`) should have element type f32, but has s32",
        ),
        (
            "ENTRY e {\n  p = f32[1099511627776] parameter(0)\n  ROOT n = f32[1099511627776] negate(p)\n}",
            "instruction `p` in computation `e`: a value of 1099511627776 elements is more than",
        ),
        (
            "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT s = f32[4] sort(p), dimensions={0}\n}",
            "instruction `s` in computation `e`: `sort` is not compiled",
        ),
        (
            "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT c = f32[4] custom-call(p), custom_call_target=\"foo\"\n}",
            "instruction `c` in computation `e`: `custom-call` is not compiled",
        ),
        ("ENTRY e {\n  ROOT c = f32[100] constant({...})\n}", "instruction `c` in computation `e`:"),
        (
            "ENTRY e {\n  p = c64[2] parameter(0)\n  ROOT n = c64[2] negate(p)\n}",
            "c64 values are not compiled",
        ),
    ] {
        let got = error(text);
        assert!(got.contains(message), "{text}\n  gave: {got}\n  expected: {message}");
    }
}

#[test]
fn a_module_of_a_hundred_thousand_instructions_compiles() {
    // A chain of adds: the plan writes one buffer every MAX_INLINE_DEPTH ops, so no expression
    // nests deeper and nothing recurses with the chain's length.
    let mut text = String::from("ENTRY e {\n  x0 = f32[4] parameter(0)\n");
    for k in 1..100_000 {
        text += &format!("  x{k} = f32[4] add(x{}, x{})\n", k - 1, k - 1);
    }
    text += "  ROOT r = f32[4] negate(x99999)\n}";
    let module: HloModule = text.parse().unwrap();
    let target = target();
    let search = Search::new(&target);
    let compiled = compile(&module, &target, &search, &CompileOptions { name: "chain".into() }).unwrap();
    assert!(compiled.source.contains("void chain(const float *restrict x0, float *restrict result)"));
    assert!(list_specs(&module, &target).unwrap().is_empty());
}

#[test]
fn names_that_are_not_c_identifiers_are_refused() {
    let module: HloModule =
        "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}".parse().unwrap();
    let target = target();
    let search = Search::new(&target);
    for name in ["2fast", "morello_x", "m_arena", "int", "a-b", ""] {
        let error = compile(&module, &target, &search, &CompileOptions { name: name.into() }).unwrap_err();
        assert!(matches!(error, CompileError::Options(_)), "{name}: {error}");
    }
}
