//! The command-line tool's integration tests that run in seconds, one module per subject, in one
//! binary (one link of the workspace instead of one per file): each runs `morello` as a user
//! does and checks its output, exit status and files. The slower end-to-end tests (compiling and
//! running kernels, signals, shards, clusters, fault injection) are in `tests/e2e/`, and the
//! documents' examples in `tests/docs.rs`.

#[path = "../common/mod.rs"]
mod common;

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
