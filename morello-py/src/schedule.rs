//! `morello.Schedule`: the first rewrites of a spec by hand, completed by the search
//! (`morello_search::schedule`, whose module docs say where each step goes).
//!
//! ```text
//! morello.Schedule("matmul 512x512x512").tile_out([1, 64, 512]).to_accum().split(64)
//!        .pack(1, "L2", "[0, 2, 1, 2 p(16)]").synthesize()      -> morello.Impl
//! ```
//!
//! The Python object keeps its steps as data ([`Item`]) and checks each as it is added, by applying
//! them all to a fresh [`Schedule`] (steps do not search, so this is quick): a refused step raises
//! `MorelloError` with the Rust refusal (the step, the spec it met and why) and is not kept.
//! `synthesize()` applies them with a search that reads and fills the table, the GIL released
//! and Ctrl-C cancelling it, as `morello.search` does.

use std::sync::Arc;

use morello_core::spec::CanonicalSpec;
use morello_search::schedule::{Copy, Schedule, ScheduleError, Step};
use morello_search::{Search, Solution};
use pyo3::prelude::*;

use crate::context::Context;
use crate::error::{bad_input, to_py};
use crate::implementation::PyImpl;
use crate::search::Prepared;

/// One entry of a schedule as the Python object keeps it.
#[derive(Debug, Clone)]
enum Item {
    /// A step on the default leaf.
    Step(Step),
    /// Steps on the node at a path.
    Sub(Vec<usize>, Vec<Item>),
    /// Lines of the text form.
    Text(String),
}

/// Applies `items` to `schedule` in order.
fn apply(schedule: &mut Schedule<'_>, items: &[Item]) -> Result<(), ScheduleError> {
    for item in items {
        match item {
            Item::Step(step) => {
                schedule.step(step)?;
            }
            Item::Sub(path, items) => {
                schedule.subschedule(path, |sub| apply(sub, items))?;
            }
            Item::Text(text) => {
                schedule.apply_text(text)?;
            }
        }
    }
    Ok(())
}

/// A schedule of a spec under construction (see the module docs). The steps' methods return the
/// schedule, so they chain.
#[pyclass(name = "Schedule", module = "morello._morello")]
pub struct PySchedule {
    context: Arc<Context>,
    spec: CanonicalSpec,
    /// The steps added to this schedule (or to the node a `subschedule` names).
    items: Vec<Item>,
    /// For the schedule a `subschedule` callback sees: the enclosing schedules' items and the
    /// path, outermost first.
    outer: Vec<(Vec<Item>, Vec<usize>)>,
}

impl PySchedule {
    /// Every item from the root, this schedule's wrapped in the `sub` blocks of its enclosing ones.
    fn all_items(&self, items: Vec<Item>) -> Vec<Item> {
        self.outer.iter().rev().fold(items, |inner, (before, path)| {
            let mut all = before.clone();
            all.push(Item::Sub(path.clone(), inner));
            all
        })
    }

    /// A schedule of the spec in a search without a table, with `items` applied (no search runs).
    fn applied<'s>(&self, search: Search<'s>, items: &[Item]) -> Result<Schedule<'s>, ScheduleError> {
        let mut schedule = Schedule::with_search(&self.spec, search);
        apply(&mut schedule, items)?;
        Ok(schedule)
    }

    /// Adds `item` if the schedule with it applies; else raises the refusal and keeps none.
    fn push(&mut self, item: Item) -> PyResult<()> {
        let mut items = self.items.clone();
        items.push(item);
        let all = self.all_items(items.clone());
        let search = Search::new(&self.context.target).limits(self.context.limits);
        self.applied(search, &all).map_err(to_py)?;
        self.items = items;
        Ok(())
    }

    fn add(mut slf: PyRefMut<'_, Self>, step: Step) -> PyResult<PyRefMut<'_, Self>> {
        slf.push(Item::Step(step))?;
        Ok(slf)
    }
}

#[pymethods]
impl PySchedule {
    /// A schedule of a prepared spec with no step yet.
    #[new]
    fn new(prepared: &Prepared) -> Self {
        PySchedule {
            context: Arc::clone(&prepared.context),
            spec: prepared.spec.clone(),
            items: Vec::new(),
            outer: Vec::new(),
        }
    }

    /// The schedule of the spec an implementation implements, in its context (its target and
    /// table).
    #[staticmethod]
    fn of(imp: &PyImpl) -> Self {
        PySchedule {
            context: Arc::clone(imp.context()),
            spec: imp.solution().imp.spec.clone(),
            items: Vec::new(),
            outer: Vec::new(),
        }
    }

    /// The scheduled spec, as spec text.
    #[getter]
    fn spec(&self) -> String {
        self.spec.display(&self.context.target).to_string()
    }

    /// Tiles the output to `shape` (one serial loop per dim that changes, outermost first).
    fn tile_out(slf: PyRefMut<'_, Self>, shape: Vec<u32>) -> PyResult<PyRefMut<'_, Self>> {
        Self::add(slf, Step::TileOut { shape })
    }

    /// Tiles the one reduction dim to `size` (the spec must accumulate: see `to_accum`).
    fn split(slf: PyRefMut<'_, Self>, size: u32) -> PyResult<PyRefMut<'_, Self>> {
        Self::add(slf, Step::Split { size })
    }

    /// Tiles the iteration dim named `dim` (`b`, `m`, `k`, `n` for a matmul) to `size`.
    fn tile(slf: PyRefMut<'_, Self>, dim: String, size: u32) -> PyResult<PyRefMut<'_, Self>> {
        Self::add(slf, Step::Tile { dim, size })
    }

    /// One parallel loop over tiles of the output of `shape`.
    fn parallel(slf: PyRefMut<'_, Self>, shape: Vec<u32>) -> PyResult<PyRefMut<'_, Self>> {
        Self::add(slf, Step::Parallel { shape })
    }

    /// Moves operand `operand` (its index or name: `0`, `"lhs"`) to `level`, in `layout` and
    /// with vectors of `vector_size` elements (any the search offers when `None`): a cache view
    /// when the search offers one, else a new buffer.
    #[pyo3(signature = (operand, level, layout = None, vector_size = None))]
    fn move_to<'py>(
        slf: PyRefMut<'py, Self>,
        operand: &Bound<'py, PyAny>,
        level: String,
        layout: Option<String>,
        vector_size: Option<u32>,
    ) -> PyResult<PyRefMut<'py, Self>> {
        let operand = operand_name(operand)?;
        Self::add(slf, Step::MoveTo { operand, level, layout, vector_size, copy: Copy::ViewOrBuffer })
    }

    /// Copies operand `operand` into a new buffer at `level` in `layout` (a packed panel, say):
    /// as `move_to`, never a cache view.
    #[pyo3(signature = (operand, level, layout, vector_size = None))]
    fn pack<'py>(
        slf: PyRefMut<'py, Self>,
        operand: &Bound<'py, PyAny>,
        level: String,
        layout: String,
        vector_size: Option<u32>,
    ) -> PyResult<PyRefMut<'py, Self>> {
        let operand = operand_name(operand)?;
        Self::add(slf, Step::MoveTo { operand, level, layout: Some(layout), vector_size, copy: Copy::Buffer })
    }

    /// Zeroes the output, then accumulates into it (the steps go on to the accumulating stage).
    fn to_accum(slf: PyRefMut<'_, Self>) -> PyResult<PyRefMut<'_, Self>> {
        Self::add(slf, Step::ToAccum)
    }

    /// Computes the first `size` of the reduction as it is, then accumulates the rest.
    fn peel(slf: PyRefMut<'_, Self>, size: u32) -> PyResult<PyRefMut<'_, Self>> {
        Self::add(slf, Step::Peel { size })
    }

    /// Implements the default leaf with the kernel named `kernel` (`morello kernels` lists them).
    fn select(slf: PyRefMut<'_, Self>, kernel: String) -> PyResult<PyRefMut<'_, Self>> {
        Self::add(slf, Step::Select { kernel })
    }

    /// Applies schedule text (the form `morello search --schedule FILE` reads and
    /// `Impl.schedule()` prints: one step per line, `#` comments, `sub PATH { ... }` blocks).
    fn apply_text(mut slf: PyRefMut<'_, Self>, text: String) -> PyResult<PyRefMut<'_, Self>> {
        slf.push(Item::Text(text))?;
        Ok(slf)
    }

    /// Schedules the node at `path` (child indices: a loop's body then its boundaries; a move's
    /// copy in, body, copy out; a block's stages) with `steps`, a callable that receives a
    /// schedule of that node and adds steps to it.
    fn subschedule<'py>(
        mut slf: PyRefMut<'py, Self>,
        path: Vec<usize>,
        steps: &Bound<'py, PyAny>,
    ) -> PyResult<PyRefMut<'py, Self>> {
        let mut outer = slf.outer.clone();
        outer.push((slf.items.clone(), path.clone()));
        let sub = Py::new(
            steps.py(),
            PySchedule {
                context: Arc::clone(&slf.context),
                spec: slf.spec.clone(),
                items: Vec::new(),
                outer,
            },
        )?;
        // The node must exist before the callback runs.
        slf.push(Item::Sub(path.clone(), Vec::new()))?;
        slf.items.pop();
        steps.call1((sub.clone_ref(steps.py()),))?;
        let items = sub.borrow(steps.py()).items.clone();
        slf.push(Item::Sub(path, items))?;
        Ok(slf)
    }

    /// The sub-specs no step has implemented yet, in execution order (spec text).
    fn open_leaves(&self) -> PyResult<Vec<String>> {
        let search = Search::new(&self.context.target).limits(self.context.limits);
        let schedule = self.applied(search, &self.all_items(self.items.clone())).map_err(to_py)?;
        let target = &self.context.target;
        Ok(schedule.open_leaves().iter().map(|s| s.display(target).to_string()).collect())
    }

    /// The tree so far (open leaves as unsolved leaves of cost 0), as `morello search` prints trees.
    fn tree(&self) -> PyResult<String> {
        let search = Search::new(&self.context.target).limits(self.context.limits);
        let schedule = self.applied(search, &self.all_items(self.items.clone())).map_err(to_py)?;
        Ok(schedule.partial_impl().render(&self.context.target))
    }

    /// Completes every open leaf from the memo table (searching what is missing) and returns the
    /// implementation, an ordinary `Impl`.
    fn synthesize(&self, py: Python<'_>) -> PyResult<PyImpl> {
        if !self.outer.is_empty() {
            return Err(bad_input(
                "synthesize() the schedule subschedule() was called on, not the one its callback receives",
            ));
        }
        let items = self.items.clone();
        let (imp, report) = self.context.solve(py, |search| {
            let mut schedule = self.applied(search.clone(), &items)?;
            let imp = schedule.synthesize()?;
            Ok::<_, ScheduleError>((imp, schedule.report().clone()))
        })?;
        let solution = Solution { cost: imp.cost, imp, report };
        self.context.warn_unless_optimal(py, &solution)?;
        Ok(PyImpl::new(Arc::clone(&self.context), solution))
    }

    fn __repr__(&self) -> String {
        format!("<morello.Schedule of {} with {} steps>", self.spec(), self.items.len())
    }
}

/// An operand as a step names it: an index (`1`) or a name (`"rhs"`).
fn operand_name(operand: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(index) = operand.extract::<usize>() {
        return Ok(index.to_string());
    }
    operand
        .extract::<String>()
        .map_err(|_| bad_input("an operand is its index (0, 1, ...) or its name (\"lhs\", ...)"))
}
