//! `morello.Impl` (native part): a solved implementation of a spec, what it costs, its tree, its
//! C, the model's next best, and the entry points of `compile()` and `bench()`.

use std::sync::Arc;

use morello_codegen::{EmitConfig, emit_kernel};
use morello_measure::ranking::{Ranked, choose};
use morello_search::schedule::schedule_text;
use morello_search::{ActionConfig, Solution, VariantCosts};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::bench::{BenchOptions, Other, bench_json};
use crate::context::Context;
use crate::error::{bad_input, to_py};
use crate::kernel::Library;

/// A solved implementation of a spec under a target's cost model.
#[pyclass(name = "Impl", module = "morello._morello", frozen)]
pub struct PyImpl {
    context: Arc<Context>,
    solution: Solution,
}

impl PyImpl {
    /// An implementation found in `context`.
    pub fn new(context: Arc<Context>, solution: Solution) -> Self {
        PyImpl { context, solution }
    }

    /// The search context it was found in.
    pub fn context(&self) -> &Arc<Context> {
        &self.context
    }

    /// The solution.
    pub fn solution(&self) -> &Solution {
        &self.solution
    }
}

#[pymethods]
impl PyImpl {
    /// The cost under the target's cost model (lower is better; `docs/cost-model.md`).
    #[getter]
    fn cost(&self) -> u64 {
        self.solution.cost
    }

    /// The spec it implements, as spec text.
    #[getter]
    fn spec(&self) -> String {
        self.solution.imp.spec.display(&self.context.target).to_string()
    }

    /// The target's name.
    #[getter]
    fn target(&self) -> String {
        self.context.target.name().to_string()
    }

    /// Peak memory per level (bytes for caches and memory, registers for register files).
    #[getter]
    fn peaks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (i, level) in self.context.target.levels().iter().enumerate() {
            dict.set_item(&level.name, self.solution.imp.peaks.0[i])?;
        }
        Ok(dict)
    }

    /// The search's statistics: specs solved, memo hits, actions, seconds, why it stopped.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let report = &self.solution.report;
        let dict = PyDict::new(py);
        dict.set_item("specs_solved", report.specs_solved)?;
        dict.set_item("memo_hits", report.memo_hits)?;
        dict.set_item("actions", report.actions)?;
        dict.set_item("seconds", report.wall_time.as_secs_f64())?;
        dict.set_item("estimated_memory_bytes", report.estimated_memory)?;
        dict.set_item("stop", report.stop.to_string())?;
        dict.set_item("optimal", report.optimal())?;
        Ok(dict)
    }

    /// The implementation tree as `morello search` prints it.
    fn tree(&self) -> String {
        self.solution.imp.render(&self.context.target)
    }

    /// The tree as JSON (what `morello search --emit json` prints under `impl`).
    fn json(&self) -> PyResult<String> {
        serde_json::to_string(&self.solution.imp).map_err(to_py)
    }

    /// The C translation unit (`morello search --emit c`): one function `kernel` taking a pointer
    /// per operand.
    fn c_source(&self) -> PyResult<String> {
        Ok(emit_kernel(&self.solution.imp, &self.context.target, &EmitConfig::default())
            .map_err(to_py)?
            .source)
    }

    /// The implementation as schedule text (`morello search --emit schedule`): read back by
    /// `Schedule.apply_text` (or `morello search --schedule FILE`), it gives the same tree.
    fn schedule(&self) -> PyResult<String> {
        schedule_text(&self.solution.imp, &self.context.target, &ActionConfig::default()).map_err(to_py)
    }

    /// The model's `k` best implementations of the same spec whose C differs: this one first,
    /// then the cheapest trees that take another action at one node (as `morello bench --top-k`
    /// times them).
    fn top_k(&self, py: Python<'_>, k: usize) -> PyResult<Vec<PyImpl>> {
        if k == 0 {
            return Err(bad_input("top_k needs k of at least 1"));
        }
        let spec = &self.solution.imp.spec;
        let wanted = k.saturating_mul(4).saturating_add(8);
        let solutions =
            self.context.solve(py, |search| search.solve_variants(spec, wanted, VariantCosts::Distinct))?;
        let target = &self.context.target;
        let ranked: Vec<Ranked<'_>> =
            solutions.iter().map(|s| Ranked { imp: &s.imp, cost: s.cost }).collect();
        let chosen = py.detach(|| choose(&ranked, target, Some(k), 0.0)).map_err(to_py)?;
        Ok(chosen
            .indices
            .iter()
            .map(|&i| PyImpl::new(Arc::clone(&self.context), solutions[i].clone()))
            .collect())
    }

    /// Emits the kernel and builds it as a shared library (verified first against the reference
    /// interpreter when `verify`); `morello.Impl.compile()` loads it.
    #[pyo3(signature = (verify = true))]
    fn library(&self, py: Python<'_>, verify: bool) -> PyResult<Library> {
        Library::build(py, &self.solution.imp, &self.context.target, verify)
    }

    /// `morello bench --json` for this implementation: verified, then timed beside `baselines`.
    #[pyo3(signature = (baselines, samples, min_sample_seconds, threads, seed, caches, cpu = None, versus = Vec::new()))]
    #[allow(clippy::too_many_arguments, reason = "Python keyword arguments, one per CLI flag")]
    fn bench_json(
        &self,
        py: Python<'_>,
        baselines: Vec<String>,
        samples: usize,
        min_sample_seconds: f64,
        threads: usize,
        seed: u64,
        caches: &str,
        cpu: Option<usize>,
        versus: Vec<(String, PyRef<'_, PyImpl>)>,
    ) -> PyResult<String> {
        let options = BenchOptions {
            baselines,
            samples,
            min_sample_seconds,
            threads,
            seed,
            caches: caches.to_string(),
            cpu,
        };
        let others: Vec<Other<'_>> = versus
            .iter()
            .map(|(name, other)| Other {
                name: name.clone(),
                target: &other.context().target,
                solution: other.solution(),
            })
            .collect();
        bench_json(py, &self.context().target, self.solution(), &others, &options)
    }

    fn __repr__(&self) -> String {
        format!(
            "<morello.Impl cost {} of {} on {}>",
            self.solution.cost,
            self.spec(),
            self.context.target.name()
        )
    }
}
