//! Emitter tests.
