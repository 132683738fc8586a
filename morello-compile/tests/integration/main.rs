//! The HLO compiler's integration tests, one module per subject in one binary (one link of the
//! workspace instead of one per file): every op family the loops emit (`ops`), every JAX fixture
//! (`jax_fixtures`), hostile and unusual modules (`hostile`) and `profile_module` (`profile`), each
//! compiled module verified against the reference evaluator.

mod hostile;
mod jax_fixtures;
mod ops;
mod profile;
