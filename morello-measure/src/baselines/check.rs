//! Checking a baseline before it is timed: it is built into a verification program (the
//! harness of `morello-codegen`), run once on the benchmark's seeded inputs, and its output
//! compared with the f64 [`reference`](super::reference). The reference is computed once per
//! problem, when the first baseline needs it.
//!
//! A baseline may print lines starting with [`NOTE_PREFIX`] on standard error while it sets
//! itself up (oneDNN says which implementation and layouts it chose); they become the set's
//! notes.

use morello_codegen::CodegenError;
use morello_codegen::compiler::{CProgram, CompileOptions, Compiler, SourceUnit, Warnings};
use morello_codegen::harness::{Buffer, VerifyInputs, run_verify, verify_program_source};

use super::reference::{Reference, check, reference};
use super::{BaselineOptions, Problem, first_error_line};
use crate::bench::{CCandidate, PrepareRustKernel};

/// The start of a line a baseline prints on standard error to describe itself.
pub(super) const NOTE_PREFIX: &str = "morello-baseline-note: ";

/// Checks baselines of one problem on one set of seeded inputs.
pub(super) struct Checker<'a> {
    compiler: &'a Compiler,
    problem: &'a Problem,
    seed: u64,
    /// The read parameters' contents, in signature order.
    inputs: Vec<Buffer>,
    /// Whether `inputs` were given rather than generated from `seed`.
    given: bool,
    reference: Option<Result<Reference, String>>,
}

impl<'a> Checker<'a> {
    pub(super) fn new(compiler: &'a Compiler, problem: &'a Problem, options: &BaselineOptions) -> Self {
        let signature = problem.signature("inputs");
        let inputs = signature
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.role.is_read())
            .map(|(i, p)| Buffer::from_seed(p.c_type, p.elements, options.seed, i))
            .collect();
        Checker { compiler, problem, seed: options.seed, inputs, given: false, reference: None }
    }

    /// A checker on the given contents of the read parameters (in signature order) instead of
    /// seeded ones: inputs chosen to reach the cases seeded ones rarely do.
    #[cfg(test)]
    pub(super) fn on_inputs(compiler: &'a Compiler, problem: &'a Problem, inputs: Vec<Buffer>) -> Self {
        Checker { compiler, problem, seed: 0, inputs, given: true, reference: None }
    }

    fn reference(&mut self) -> Result<&Reference, String> {
        let (problem, inputs) = (self.problem, &self.inputs);
        self.reference.get_or_insert_with(|| reference(problem, inputs)).as_ref().map_err(Clone::clone)
    }

    /// Runs a C baseline once and compares its output; returns its notes.
    ///
    /// # Errors
    /// One line: it did not build, did not run, or disagrees with the reference.
    pub(super) fn check_c(&mut self, candidate: &CCandidate) -> Result<Vec<String>, String> {
        let label = &candidate.entry.label;
        let signature = self.problem.signature(candidate.entry.function.clone());
        let main = verify_program_source(&signature, "").map_err(|e| format!("{label}: {e}"))?;
        let mut program = CProgram {
            units: vec![SourceUnit::new("verify_main", main)],
            link_args: candidate.link_args.clone(),
        };
        program.units.extend(candidate.unit.iter().cloned());
        let options = CompileOptions { warnings: Warnings::Report, ..CompileOptions::default() };
        let build = self.compiler.build(&program, &options).map_err(|error| {
            let detail = match &error {
                CodegenError::CompileFailed { stderr, .. } => first_error_line(stderr),
                other => other.to_string(),
            };
            format!("{label}: does not build for {} ({detail})", self.problem.describe())
        })?;
        let inputs = if self.given {
            VerifyInputs::Buffers(self.inputs.clone())
        } else {
            VerifyInputs::Seed(self.seed)
        };
        let run = run_verify(&build, &signature, &inputs).map_err(|e| {
            format!("{label}: failed on {} ({})", self.problem.describe(), first_error_line(&e.to_string()))
        })?;
        let out = run.params.last().ok_or_else(|| format!("{label}: no output"))?;
        self.compare(label, out)?;
        Ok(run.stderr.lines().filter_map(|l| l.strip_prefix(NOTE_PREFIX)).map(str::to_string).collect())
    }

    /// Runs a Rust baseline once and compares its output.
    ///
    /// # Errors
    /// One line: it could not be prepared, or disagrees with the reference.
    pub(super) fn check_rust(&mut self, label: &str, prepare: PrepareRustKernel) -> Result<(), String> {
        let signature = self.problem.signature("inputs");
        let mut read = self.inputs.iter();
        let params: Vec<Buffer> = signature
            .params
            .iter()
            .map(|p| {
                if p.role.is_read() {
                    read.next().cloned().unwrap_or_else(|| Buffer::zeros(p.c_type, p.elements))
                } else {
                    Buffer::zeros(p.c_type, p.elements)
                }
            })
            .collect();
        let mut kernel = prepare(&params).map_err(|e| format!("{label}: {e}"))?;
        kernel.run();
        let out = kernel.written().pop().ok_or_else(|| format!("{label}: no output"))?;
        self.compare(label, &out)
    }

    fn compare(&mut self, label: &str, out: &Buffer) -> Result<(), String> {
        let description = self.problem.describe();
        let reference = self.reference().map_err(|e| format!("{label}: no reference ({e})"))?;
        check(reference, out).map(|_| ()).map_err(|mismatch| {
            format!("{label}: disagrees with the reference on {description} ({mismatch}); not timed")
        })
    }
}
