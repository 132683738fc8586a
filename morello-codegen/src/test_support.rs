//! Helpers for tests that compile C (here and in the crates built on this one): find compilers,
//! or skip with a printed reason.

#![allow(clippy::print_stdout, reason = "a skipped test says why on its output")]

use morello_core::target::{Architecture, Target};

use crate::compiler::{AARCH64_CROSS_COMPILERS, CProgram, CompileOptions, Compiler, SourceUnit, Warnings};

/// The default compiler, or `None` after printing why the test is skipped.
pub fn compiler() -> Option<Compiler> {
    match Compiler::find() {
        Ok(compiler) => Some(compiler),
        Err(error) => {
            println!("skipped: {error}");
            None
        }
    }
}

/// gcc and clang, each if installed (empty, with a printed reason, if neither is).
pub fn gcc_and_clang() -> Vec<Compiler> {
    let found: Vec<Compiler> =
        ["gcc", "clang"].iter().filter_map(|c| Compiler::from_command(c).ok()).collect();
    if found.is_empty() {
        println!("skipped: neither gcc nor clang is installed");
    }
    for name in ["gcc", "clang"] {
        if !found.iter().any(|c| c.command() == name) {
            println!("note: {name} is not installed; not tested with it");
        }
    }
    found
}

/// The compilers a target's code is tested with: gcc and clang ([`gcc_and_clang`]) for the host's
/// architecture, else both cross compilers ([`cross_compilers`]).
pub fn compilers_for(target: &Target) -> Vec<Compiler> {
    match target.architecture() {
        Some(architecture) if Some(architecture) != Architecture::host() => cross_compilers(architecture),
        _ => gcc_and_clang(),
    }
}

/// The cross compilers for `architecture` that are installed, each with the emulator (empty,
/// with the printed reason and the command that installs them, if none is).
pub fn cross_compilers(architecture: Architecture) -> Vec<Compiler> {
    let mut found = Vec::new();
    for command in AARCH64_CROSS_COMPILERS {
        match Compiler::cross_with(command, architecture) {
            Ok(compiler) => found.push(compiler),
            Err(error) => println!("note: not tested with `{command}`: {error}"),
        }
    }
    if found.is_empty() {
        println!("skipped: no cross compiler for {architecture} code runs here");
    }
    found
}

/// Options that fail on any warning (emitted C must be warning-free).
pub fn strict() -> CompileOptions {
    CompileOptions { warnings: Warnings::Deny, ..CompileOptions::default() }
}

/// A one-unit program.
pub fn one_unit(source: String) -> CProgram {
    CProgram { units: vec![SourceUnit::new("main", source)], link_args: Vec::new() }
}
