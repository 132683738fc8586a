//! The command-line tool's integration tests that run in seconds, one module per subject, in one
//! binary (one link of the workspace instead of one per file): each runs `morello` as a user
//! does and checks its output, exit status and files; `compile` compiles and verifies the JAX
//! fixtures end to end, and `architecture` checks `ARCHITECTURE.md` and the documents' links
//! against the repository. The slower end-to-end tests (compiling and running kernels, signals,
//! shards, clusters, fault injection) are in `tests/e2e/`, and the documents' examples in
//! `tests/docs.rs` (a binary of its own: it changes the working directory).

#[path = "../common/mod.rs"]
mod common;

mod architecture;
mod compile;
mod db;
mod errors;
mod indexing;
mod kernels;
mod layout;
mod modules;
mod schedule;
mod search;
mod wisdom;
mod xla;
