//! Every JAX fixture, as XLA received it and as its CPU compiler optimised it, compiles and
//! verifies against the reference evaluator; two compile fixtures (searched kernels and plain
//! loop nests) also for `arm-neon`, cross-compiled with both AArch64 compilers and run under qemu.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::path::{Path, PathBuf};

use morello_codegen::{BuildDir, Compiler, Warnings, test_support};
use morello_compile::{CompileOptions, VerifyModuleOptions, compile, default_name, verify_module};
use morello_core::target::Target;
use morello_search::Search;
use morello_xla::hlo::HloModule;

fn fixtures(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        .collect();
    files.sort();
    files
}

fn check(path: &Path, target: &Target, search: &Search<'_>) {
    let Some(compiler) = test_support::compiler() else { return };
    check_with(path, target, search, &compiler);
}

/// Compiles the module at `path` for `target`, builds it with `compiler` (warnings are errors),
/// runs it and verifies every result.
fn check_with(path: &Path, target: &Target, search: &Search<'_>, compiler: &Compiler) {
    let text = std::fs::read_to_string(path).unwrap();
    let module: HloModule = text.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let options = CompileOptions { name: default_name(&module) };
    let compiled =
        compile(&module, target, search, &options).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let verify = VerifyModuleOptions {
        warnings: Warnings::Deny,
        build_dir: BuildDir::Temporary,
        ..VerifyModuleOptions::default()
    };
    let outcome = verify_module(&module, &compiled, compiler, &verify)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), compiled.source));
    assert!(outcome.verified, "{}: {}\n{}", path.display(), outcome.mismatch.unwrap(), compiled.source);
    println!(
        "{} on {} with {compiler}: verified, {} elements, max error {:e}, {} searched",
        path.file_name().unwrap().to_string_lossy(),
        target.name(),
        outcome.elements,
        outcome.max_abs_error,
        compiled.searched.len()
    );
}

#[test]
fn the_indexing_fixtures_compile_and_verify() {
    let target = Target::builtin("x86-avx2", 1).unwrap();
    if !morello_codegen::host_features().contains(&morello_core::target::IsaFeature::Avx2) {
        println!("skipped: this host does not run AVX2");
        return;
    }
    let search = Search::new(&target);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../morello-xla/fixtures/jax");
    let files = fixtures(&dir);
    assert_eq!(files.len(), 12);
    for path in files {
        check(&path, &target, &search);
    }
}

/// The whole module's C for `arm-neon` (NEON kernels, the loop nests and the module's helpers)
/// compiles without warnings with both AArch64 cross compilers and verifies under qemu (natively on
/// an AArch64 host); skipped, with the command that installs them, without the cross tools.
#[test]
fn compile_fixtures_verify_on_arm_neon() {
    let target = Target::builtin("arm-neon", 1).unwrap();
    let compilers = test_support::compilers_for(&target);
    let search = Search::new(&target);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/jax");
    for name in ["layernorm_dense_small.hlo", "resnet_block_small.hlo"] {
        for compiler in &compilers {
            check_with(&dir.join(name), &target, &search, compiler);
        }
    }
}
