//! A [`Context`]: what every call on a search's result needs to search again (top-k, schedules):
//! the target, the memory limits, the table and the search options.

use std::sync::Arc;
use std::time::Duration;

use morello_core::spec::CanonicalSpec;
use morello_core::target::{MemVec, Target};
use morello_search::db::{DbError, OpenTable, Schema, TableLocation};
use morello_search::{ActionConfig, CancelToken, Memo, Search, Solution};
use pyo3::exceptions::PyRuntimeWarning;
use pyo3::prelude::*;

use crate::cancel::run_cancellable;
use crate::error::to_py;

/// A target and how to search on it: what an implementation keeps to search again (top-k,
/// schedules).
#[derive(Debug)]
pub struct Context {
    /// The target.
    pub target: Target,
    /// The memory limits of the search (the target's capacities unless `memory=` was given).
    pub limits: MemVec,
    /// Where the memo table is.
    pub location: TableLocation,
    /// The memo table of a search without a file (`no_db=True`), kept so that later calls reuse
    /// what it solved; searches with a file open the file each time (it has what they saved).
    pub memory_memo: Arc<Memo>,
    /// Search threads (`None`: all cores).
    pub threads: Option<usize>,
    /// A time limit per search.
    pub time_limit: Option<Duration>,
}

impl Context {
    /// Runs `solve` with a search configured by this context, reading and filling its table (saved
    /// afterwards, also when interrupted), the GIL released and Ctrl-C cancelling it.
    ///
    /// # Errors
    /// A bad table, a search error, or `KeyboardInterrupt`.
    pub fn solve<T: Send, E: std::error::Error + Send + 'static>(
        &self,
        py: Python<'_>,
        solve: impl FnOnce(&Search<'_>) -> Result<T, E> + Send,
    ) -> PyResult<T> {
        let (mut table, memo) = self.open_table(py)?;
        let token = CancelToken::new();
        let mut search = Search::new(&self.target).limits(self.limits).cancel(token.clone()).memo(memo);
        if let Some(threads) = self.threads {
            search = search.threads(threads);
        }
        if let Some(limit) = self.time_limit {
            search = search.time_limit(limit);
        }
        let (result, interrupted) = run_cancellable(py, &token, || solve(&search))?;
        drop(search);
        if let Some(table) = &mut table {
            if let Err(e) = py.detach(|| table.save(&mut |_| {})) {
                warn(py, &format!("{e}; what this search solved is not saved"))?;
            }
        }
        if let Some(interrupt) = interrupted {
            return Err(interrupt);
        }
        result.map_err(to_py)
    }

    /// The table to search with, and its memo (the context's own when it has no file). A table
    /// the system refuses (no cache directory, no permission) costs a warning and is replaced by
    /// one in memory, as in the CLI.
    fn open_table(&self, py: Python<'_>) -> PyResult<(Option<OpenTable<'_>>, Arc<Memo>)> {
        if matches!(self.location, TableLocation::Memory) {
            return Ok((None, Arc::clone(&self.memory_memo)));
        }
        match py.detach(|| OpenTable::open(&self.location, &self.target, ActionConfig::default())) {
            Ok(table) => {
                let memo = table.memo();
                Ok((Some(table), memo))
            }
            Err(e @ (DbError::Io { .. } | DbError::NoCacheDirectory | DbError::NotAFile { .. })) => {
                warn(py, &format!("{e}; searching without a table (nothing is saved)"))?;
                let table = OpenTable::in_memory(Schema::new(&self.target, ActionConfig::default()));
                let memo = table.memo();
                Ok((None, memo))
            }
            Err(e) => Err(to_py(e)),
        }
    }

    /// The best implementation of `spec`, with a warning when the search stopped at its time
    /// limit (then it is the best a quick search found, and may not be optimal).
    ///
    /// # Errors
    /// As [`Context::solve`].
    pub fn best(&self, py: Python<'_>, spec: &CanonicalSpec) -> PyResult<Solution> {
        let solution = self.solve(py, |search| search.solve(spec))?;
        self.warn_unless_optimal(py, &solution)?;
        Ok(solution)
    }

    /// A `RuntimeWarning` when `solution` is not optimal (the search stopped at its time limit).
    ///
    /// # Errors
    /// A warning turned into an error by Python's warning filters.
    pub fn warn_unless_optimal(&self, py: Python<'_>, solution: &Solution) -> PyResult<()> {
        if !solution.report.optimal() {
            warn(
                py,
                &format!(
                    "the search stopped before finishing ({}); this is the best implementation a quick \
                     search of fewer tile sizes found, and it may not be optimal",
                    solution.report.stop
                ),
            )?;
        }
        Ok(())
    }
}

/// Issues a Python `RuntimeWarning`.
fn warn(py: Python<'_>, message: &str) -> PyResult<()> {
    let category = py.get_type::<PyRuntimeWarning>();
    let message = std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default();
    PyErr::warn(py, &category, &message, 1)
}
