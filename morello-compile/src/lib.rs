//! morello-compile: an HLO module to one C function, with every part that maps to a morello
//! spec searched and the rest emitted as plain loop nests from the HLO semantics.
//!
//! ```text
//! HloModule ──flatten──► Graph ──plan──► Plan ──search each spec──► Impls ──emit──► NAME.c, NAME.h
//! (morello-xla)          graph.rs        plan.rs, recognize/        (morello-search)  emit/
//!                                        views.rs, arena.rs                           (codegen's kernels)
//! ```
//!
//! - [`graph`]: the entry computation with fusions and calls inlined, tuples resolved and
//!   equal instructions merged;
//! - [`views`]: which values are strided views of a buffer (reshapes, transposes, broadcasts,
//!   slices of it), so a searched kernel reads an operand in place;
//! - `recognize/`: what maps to a spec: dots to `Matmul` (batch and contracting dims anywhere;
//!   operands in their layouts) with bias and activation epilogues as `MatmulBias`, the softmax
//!   pattern as `Softmax`, 2-D convolutions as `Conv`, transposes and copies as `Move`;
//! - [`plan`]: what every node becomes (a searched kernel, a loop nest writing a buffer, an
//!   expression inlined into its readers, or a view) and the buffers, placed in one arena by
//!   their live ranges (`arena.rs`);
//! - `emit/`: the C unit (the searched kernels from `morello-codegen`, then the entry function)
//!   and its header;
//! - [`verify`]: compile the C with a `main`, run it on seeded inputs and compare every result
//!   with `morello-xla`'s reference evaluator, per element within its bound;
//! - [`profile`]: compile the C with its steps timed, run it, and say where a call's time goes.
//!
//! The library does no I/O but running the C compiler and the programs it builds (through
//! `morello-codegen`) and never prints; [`compile`] takes a configured [`Search`], so the caller
//! chooses the memo table, the threads and the limits.

mod arena;
mod emit;
pub mod graph;
pub mod plan;
pub mod profile;
mod recognize;
pub mod verify;
pub mod views;

use morello_codegen::{CodegenError, KernelSignature, OpenMp};
use morello_core::cost::Cost;
use morello_core::imp::Impl;
use morello_core::spec::CanonicalSpec;
use morello_core::target::{IsaFeature, Target};
use morello_search::{Search, SearchError};
use morello_xla::hlo::{HloError, HloModule};

pub use plan::{Lowering, Plan};
pub use profile::{ModuleProfile, ProfileOptions, StepTime, profile_module};
pub use verify::{ModuleVerification, ResultMismatch, VerifyError, VerifyModuleOptions, verify_module};

/// Why a module does not compile.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The module breaks XLA's element-type rules (the module's fault).
    #[error("{0}")]
    Types(#[from] HloError),
    /// Something valid in XLA that this compiler does not compile (an opcode without a model,
    /// an element type C cannot hold here), naming the instruction.
    #[error("instruction `{instruction}` in computation `{computation}`: {reason}")]
    Unsupported {
        /// The computation.
        computation: String,
        /// The instruction.
        instruction: String,
        /// What is not supported.
        reason: String,
    },
    /// The search stopped (cancelled, out of time or memory) on a spec of the module.
    #[error("searching {spec} (for `{instruction}`): {source}")]
    Search {
        /// The instruction the spec is for.
        instruction: String,
        /// The spec.
        spec: String,
        /// Why.
        source: SearchError,
    },
    /// Emitting a searched kernel as C failed.
    #[error("emitting the kernel of `{instruction}`: {source}")]
    Codegen {
        /// The instruction.
        instruction: String,
        /// Why.
        source: CodegenError,
    },
    /// The options are invalid (the caller's fault).
    #[error("{0}")]
    Options(String),
}

/// How to compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileOptions {
    /// The name of the C function and of the files (a C identifier not starting with `morello_`).
    pub name: String,
}

/// A compiled module.
#[derive(Debug, Clone)]
pub struct CompiledModule {
    /// The C function's name (and of `NAME.c` and `NAME.h`).
    pub name: String,
    /// The translation unit `NAME.c`.
    pub source: String,
    /// The header `NAME.h`.
    pub header: String,
    /// The entry function's parameters for the harnesses: the module's parameters (inputs),
    /// then its results (outputs), each a whole buffer in its XLA layout; `None` when one has an
    /// element type the harnesses have no buffers for (f64, 64-bit integers).
    pub signature: Option<KernelSignature>,
    /// The instruction computing each result.
    pub result_instructions: Vec<String>,
    /// The name of every node of the plan (an instruction, with the fusions it is inside).
    pub node_names: Vec<String>,
    /// The `-m` features the unit needs.
    pub features: Vec<IsaFeature>,
    /// Whether a searched kernel has parallel loops (compile and link with OpenMP).
    pub openmp: OpenMp,
    /// The bytes of the arena holding the intermediates.
    pub arena_bytes: u64,
    /// What each instruction became.
    pub plan: Plan,
    /// The searched specs: the instruction, the spec and the cost of its implementation.
    pub searched: Vec<SearchedSpec>,
    /// The entry function's steps in the order they run, as [`profile_module`] times them.
    pub steps: Vec<ModuleStep>,
}

/// One step of the entry function: a searched kernel (with the copies of its inputs), a loop
/// nest, or the copy of a value to a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleStep {
    /// The instruction it computes (with the fusions it is inside).
    pub instruction: String,
    /// What it is: `searched Matmul`, `loops (reduce)`, `copied to result 0`.
    pub what: String,
}

/// One kernel of the module and what the search found for it.
#[derive(Debug, Clone)]
pub struct SearchedSpec {
    /// The instruction (with the fusions it is inside: `fusion.2/dot.1`).
    pub instruction: String,
    /// The kernel's spec.
    pub spec: CanonicalSpec,
    /// The cost of the best implementation of the spec and of the copies of its inputs made
    /// first, under the target's model.
    pub cost: Cost,
    /// The inputs copied to row-major scratch first, and the moves that copy them.
    pub copies: Vec<(usize, CanonicalSpec)>,
}

/// The C name a module's text suggests: its name with every character outside `[A-Za-z0-9_]`
/// replaced by `_` (`jit_mlp_layer`), prefixed with `m_` if it would not start with a letter.
pub fn default_name(module: &HloModule) -> String {
    emit::identifier(module.name(), "module")
}

/// The specs a module's searched parts need, in the order of the module, without duplicates:
/// what `morello precompute --specs` takes.
///
/// # Errors
/// As [`compile`], before any search.
pub fn list_specs(module: &HloModule, target: &Target) -> Result<Vec<(String, CanonicalSpec)>, CompileError> {
    let graph = graph::flatten(module_checked(module)?)?;
    let plan = plan::plan_without(&graph, target, &std::collections::BTreeMap::new())?;
    let mut out: Vec<(String, CanonicalSpec)> = Vec::new();
    for (node, candidates) in plan.candidates_by_node() {
        for candidate in candidates {
            for spec in std::iter::once(candidate.spec).chain(candidate.copies.into_iter().map(|c| c.spec)) {
                if !out.iter().any(|(_, s)| *s == spec) {
                    out.push((graph.nodes[node].name.clone(), spec));
                }
            }
        }
    }
    Ok(out)
}

fn module_checked(module: &HloModule) -> Result<&HloModule, CompileError> {
    module.check_element_types()?;
    Ok(module)
}

/// Compiles a module for `target`: plans it, searches every spec with `search` (which holds
/// the memo table), and emits the C unit and its header.
///
/// # Errors
/// [`CompileError`]: ill-typed modules, ops without a model, a search that stopped, a kernel that
/// does not emit.
pub fn compile(
    module: &HloModule,
    target: &Target,
    search: &Search<'_>,
    options: &CompileOptions,
) -> Result<CompiledModule, CompileError> {
    emit::check_name(&options.name)?;
    let graph = graph::flatten(module_checked(module)?)?;
    // A spec the search has no implementation for runs as plain loops: plan again without it
    // (the specs already solved come from the memo).
    let mut refused = std::collections::BTreeMap::new();
    'plan: loop {
        let mut plan = plan::plan_without(&graph, target, &refused)?;
        let mut kernels = Vec::new();
        let mut searched = Vec::new();
        for (node, candidates) in plan.candidates_by_node() {
            let instruction = graph.nodes[node].name.clone();
            // The cheapest way under the model: the kernel plus the copies it reads.
            let mut best: Option<(Cost, plan::Candidate, Vec<Impl>)> = None;
            let mut failure = None;
            for candidate in candidates {
                let mut total: Cost = 0;
                let mut imps = Vec::new();
                let mut ok = true;
                for spec in std::iter::once(&candidate.spec).chain(candidate.copies.iter().map(|c| &c.spec)) {
                    match search.solve(spec) {
                        Ok(solution) => {
                            total = total.saturating_add(solution.cost);
                            imps.push(solution.imp);
                        }
                        Err(source @ SearchError::Stopped { .. }) => {
                            return Err(CompileError::Search {
                                instruction,
                                spec: spec.display(target).to_string(),
                                source,
                            });
                        }
                        Err(other) => {
                            failure.get_or_insert(other);
                            ok = false;
                            break;
                        }
                    }
                }
                if ok && best.as_ref().is_none_or(|(cost, _, _)| total < *cost) {
                    best = Some((total, candidate, imps));
                }
            }
            let Some((cost, candidate, imps)) = best else {
                let reason = failure.map_or_else(String::new, |e| e.to_string());
                refused.insert(node, format!("the search found no implementation: {reason}"));
                continue 'plan;
            };
            plan.choose(node, &candidate);
            let copies = candidate.copies.iter().map(|c| (c.input, c.spec.clone())).collect();
            searched.push(SearchedSpec { instruction, spec: candidate.spec.clone(), cost, copies });
            kernels.push((node, imps));
        }
        plan.place();
        return emit::module(&graph, plan, kernels, target, &options.name, searched);
    }
}
