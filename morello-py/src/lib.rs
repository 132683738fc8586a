//! The native module of the `morello` Python package, `morello._morello`: searches, their
//! implementations, compiled kernels and benchmarks, bound with pyo3.
//!
//! The package's Python part (`python/morello/`) wraps it: `search()` (`search.rs`) returns an
//! `Impl` (`implementation.rs`), whose `compile()` loads the kernel this module builds as a
//! shared library (`Library`, `kernel.rs`) with Python's ctypes, and whose `bench()` parses
//! the JSON of `morello bench --json` that [`morello_measure::report`] writes for both.
//!
//! ```text
//! target.rs          target names (built-in, tuned to this host's caches, or a target file)
//! search.rs          search(): spec text and options to a solved Impl, with the memo table
//! cancel.rs          a search on a worker thread, the GIL released, Ctrl-C polled and cancelling
//! implementation.rs  Impl: cost, tree, C, top-k, and the entry points of compile and bench
//! kernel.rs          Library: the C kernel as a shared library, and how numpy sees its buffers
//! schedule.rs        Schedule: hand steps checked as they are added, synthesize() completing them
//! bench.rs           bench(): the same measurement and JSON as `morello bench --json`
//! error.rs           MorelloError, carrying the Rust error's text
//! ```
//!
//! Not here: no unsafe code (the library is loaded by ctypes in Python), no printing, no signal
//! handlers of its own (Python's SIGINT handler sets the flag this module polls).

mod bench;
mod cancel;
mod context;
mod error;
mod implementation;
mod kernel;
mod schedule;
mod search;
mod target;

use pyo3::prelude::*;

/// The native module `morello._morello`.
#[pymodule]
#[pyo3(name = "_morello")]
fn native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("MorelloError", module.py().get_type::<error::MorelloError>())?;
    module.add_class::<implementation::PyImpl>()?;
    module.add_class::<kernel::Library>()?;
    module.add_class::<schedule::PySchedule>()?;
    module.add_class::<search::Prepared>()?;
    module.add_function(wrap_pyfunction!(search::prepare, module)?)?;
    module.add_function(wrap_pyfunction!(search::search, module)?)?;
    module.add("MODEL_VERSION", morello_search::db::MODEL_VERSION)?;
    Ok(())
}
