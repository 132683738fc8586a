//! `morello.MorelloError`: every error of the package, carrying the Rust error's text (its
//! sources joined with `: `), so that Python shows what the CLI would say.

use std::fmt::Display;

use pyo3::PyErr;
use pyo3::exceptions::PyException;

pyo3::create_exception!(
    morello,
    MorelloError,
    PyException,
    "An error of morello: bad input (a spec, a target, an option), a search that stopped, a kernel \
     that did not compile or verify. The message is the Rust error's text."
);

/// A [`MorelloError`] with `error`'s text and those of its sources.
pub fn morello_error(error: &(dyn std::error::Error + 'static)) -> PyErr {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text += &format!(": {cause_text}");
        }
        source = cause.source();
    }
    MorelloError::new_err(text)
}

/// A [`MorelloError`] with a message.
pub fn bad_input(message: impl Display) -> PyErr {
    MorelloError::new_err(message.to_string())
}

/// Converts a library error into a [`MorelloError`] (`.map_err(to_py)?`).
pub fn to_py<E: std::error::Error + 'static>(error: E) -> PyErr {
    morello_error(&error)
}
