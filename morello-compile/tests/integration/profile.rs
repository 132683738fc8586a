//! `profile_module`: a module with a searched dot, a loop nest and a tuple result built with its
//! steps timed (without warnings), each step named and the steps within the call.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use morello_codegen::{Warnings, test_support};
use morello_compile::{
    CompileOptions, ProfileOptions, VerifyModuleOptions, compile, profile_module, verify_module,
};
use morello_core::target::{IsaFeature, Target};
use morello_search::Search;
use morello_xla::hlo::HloModule;

const MODULE: &str = "HloModule p\n\nENTRY e {\n x = f32[16,32] parameter(0)\n w = f32[32,8] parameter(1)\n \
    y = f32[16,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n \
    r = f32[16,8] exponential(y)\n \
    ROOT t = (f32[16,8], f32[16,32]) tuple(r, x)\n}\n";

#[test]
fn every_step_is_timed_and_named() {
    if !morello_codegen::host_features().contains(&IsaFeature::Avx2) {
        println!("skipped: this host does not run AVX2");
        return;
    }
    let Some(compiler) = test_support::compiler() else { return };
    let module: HloModule = MODULE.parse().unwrap();
    let target = Target::builtin("x86-avx2", 1).unwrap();
    let compiled =
        compile(&module, &target, &Search::new(&target), &CompileOptions { name: "p".into() }).unwrap();
    let whats: Vec<&str> = compiled.steps.iter().map(|s| s.what.as_str()).collect();
    assert!(whats.iter().any(|w| w.starts_with("searched")), "{whats:?}");
    assert!(whats.iter().any(|w| w.starts_with("loops")), "{whats:?}");
    assert!(whats.iter().any(|w| w.starts_with("copied to result 1")), "{whats:?}");
    // Without MORELLO_PROFILE the step macros are empty: the unit builds without warnings and
    // computes the module.
    let verify = VerifyModuleOptions { warnings: Warnings::Deny, ..VerifyModuleOptions::default() };
    assert!(verify_module(&module, &compiled, &compiler, &verify).unwrap().verified);
    let options = ProfileOptions { min_seconds: 0.01, warnings: Warnings::Deny, ..ProfileOptions::default() };
    let profile = profile_module(&compiled, &compiler, &options).unwrap();
    assert!(profile.calls >= 3, "{profile:?}");
    assert_eq!(profile.steps.len(), compiled.steps.len());
    for (step, named) in profile.steps.iter().zip(&compiled.steps) {
        assert_eq!((&step.instruction, &step.what), (&named.instruction, &named.what));
        assert!(step.seconds_per_call >= 0.0 && step.seconds_per_call.is_finite(), "{step:?}");
    }
    let sum: f64 = profile.steps.iter().map(|s| s.seconds_per_call).sum();
    assert!(sum > 0.0 && sum <= profile.seconds_per_call, "{profile:?}");
    let bad = ProfileOptions { min_seconds: f64::NAN, ..ProfileOptions::default() };
    assert!(profile_module(&compiled, &compiler, &bad).is_err());
}
