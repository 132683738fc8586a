//! `morello.search(spec, ...)`: a spec's best implementation, searched with the memo table the
//! CLI uses (the target's default table, `db=PATH`, or none with `no_db=True`).

use std::sync::Arc;
use std::time::Duration;

use morello_core::dtype::OperandDtypes;
use morello_core::spec::{CanonicalSpec, SpecBuilder, parse_epilogue, parse_limits};
use morello_core::target::Target;
use morello_search::Memo;
use morello_search::db::TableLocation;
use pyo3::prelude::*;

use crate::context::Context;
use crate::error::{bad_input, to_py};
use crate::implementation::PyImpl;
use crate::target::load_target;

/// What a spec's shorthand leaves open (the spec flags of the CLI).
#[derive(Debug, Clone, Default)]
pub struct SpecOptions {
    /// The operands' dtypes (`f32`, `u32`, `bf16`, `u8s8s32`, ...).
    pub dtype: String,
    /// A matmul's batch.
    pub batch: u32,
    /// Whether the output is accumulated into.
    pub accum: bool,
    /// A matmul's epilogue (`bias`, `bias,relu`, `bias,gelu`).
    pub epilogue: Option<String>,
    /// A matmul's rhs layout.
    pub rhs_layout: Option<String>,
    /// A move's source layout.
    pub from_layout: Option<String>,
    /// A move's destination layout.
    pub to_layout: Option<String>,
}

/// The canonical spec `text` names for `target`: a shorthand (`matmul 64x64x64`) with `options`,
/// or the full spec text.
///
/// # Errors
/// What [`SpecBuilder`] reports, as a `MorelloError`.
pub fn build_spec(text: &str, options: &SpecOptions, target: &Target) -> PyResult<CanonicalSpec> {
    let dtypes: OperandDtypes =
        options.dtype.parse().map_err(|e| bad_input(format!("invalid dtype `{}`: {e}", options.dtype)))?;
    let mut builder = SpecBuilder::parse(text).map_err(to_py)?.dtypes(dtypes).batch(options.batch);
    if options.accum {
        builder = builder.accumulate();
    }
    if let Some(layout) = &options.rhs_layout {
        builder = builder.rhs_layout(layout.clone());
    }
    if let Some(layout) = &options.from_layout {
        builder = builder.from_layout(layout.clone());
    }
    if let Some(layout) = &options.to_layout {
        builder = builder.to_layout(layout.clone());
    }
    if let Some(epilogue) = &options.epilogue {
        builder = builder.epilogue(parse_epilogue(epilogue).map_err(bad_input)?);
    }
    builder.build(target).map_err(to_py)
}

/// A spec and the context to search it in, from `morello.search`'s arguments: what
/// [`search`] and the schedules start from.
#[pyclass(module = "morello._morello", frozen)]
pub struct Prepared {
    /// The target, limits, table and search options.
    pub context: Arc<Context>,
    /// The spec.
    pub spec: CanonicalSpec,
}

/// Reads a spec and the search's options (see the Python docstring of `morello.search`, which
/// documents every argument).
#[pyfunction]
#[pyo3(signature = (
    spec, *, target = "x86", dtype = "f32", batch = 1, accum = false, epilogue = None,
    rhs_layout = None, from_layout = None, to_layout = None, memory = None, processors = None,
    db = None, no_db = false, jobs = None, time_limit = None
))]
#[allow(clippy::too_many_arguments, reason = "Python keyword arguments, one per CLI flag")]
pub fn prepare(
    spec: &str,
    target: &str,
    dtype: &str,
    batch: u32,
    accum: bool,
    epilogue: Option<String>,
    rhs_layout: Option<String>,
    from_layout: Option<String>,
    to_layout: Option<String>,
    memory: Option<String>,
    processors: Option<u32>,
    db: Option<std::path::PathBuf>,
    no_db: bool,
    jobs: Option<usize>,
    time_limit: Option<f64>,
) -> PyResult<Prepared> {
    let options =
        SpecOptions { dtype: dtype.to_string(), batch, accum, epilogue, rhs_layout, from_layout, to_layout };
    let (context, spec) = context_and_spec(
        spec,
        target,
        processors,
        options,
        memory.as_deref(),
        TableChoice { db, no_db },
        jobs,
        time_limit,
    )?;
    Ok(Prepared { context, spec })
}

/// The best implementation of a prepared spec.
#[pyfunction]
pub fn search(py: Python<'_>, prepared: &Prepared) -> PyResult<PyImpl> {
    let solution = prepared.context.best(py, &prepared.spec)?;
    Ok(PyImpl::new(Arc::clone(&prepared.context), solution))
}

/// The memo table a call names (`db=PATH`, `no_db=True`, or neither: the target's default).
#[derive(Debug, Clone, Default)]
pub struct TableChoice {
    /// `db=PATH`.
    pub db: Option<std::path::PathBuf>,
    /// `no_db=True`.
    pub no_db: bool,
}

/// The context and canonical spec of a call's arguments.
///
/// # Errors
/// Bad input, as a `MorelloError` that says which argument.
#[allow(clippy::too_many_arguments, reason = "Python keyword arguments, one per CLI flag")]
fn context_and_spec(
    spec: &str,
    target: &str,
    processors: Option<u32>,
    options: SpecOptions,
    memory: Option<&str>,
    table: TableChoice,
    jobs: Option<usize>,
    time_limit: Option<f64>,
) -> PyResult<(Arc<Context>, CanonicalSpec)> {
    let target = load_target(target, processors)?;
    let spec = build_spec(spec, &options, &target)?;
    let limits = match memory {
        Some(text) => {
            parse_limits(text, &target).map_err(|e| bad_input(format!("invalid memory `{text}`: {e}")))?
        }
        None => target.capacities(),
    };
    let location = match (table.db, table.no_db) {
        (Some(_), true) => return Err(bad_input("give db=PATH or no_db=True, not both")),
        (Some(path), false) => TableLocation::File(path),
        (None, true) => TableLocation::Memory,
        (None, false) => TableLocation::Default,
    };
    if jobs == Some(0) {
        return Err(bad_input("jobs must be at least 1"));
    }
    let time_limit = match time_limit {
        None => None,
        Some(seconds) if seconds.is_finite() && seconds > 0.0 => Some(Duration::from_secs_f64(seconds)),
        Some(seconds) => {
            return Err(bad_input(format!("time_limit must be a positive number of seconds, not {seconds}")));
        }
    };
    let context = Arc::new(Context {
        target,
        limits,
        location,
        memory_memo: Arc::new(Memo::new()),
        threads: jobs,
        time_limit,
    });
    Ok((context, spec))
}
