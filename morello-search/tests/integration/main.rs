//! The search's integration tests, one module per subject in one binary (one link instead of one
//! per file): whole searches (`search`), steering them (`control`: cancellation, deadlines,
//! checkpoints, the memory budget), and optimality against exhaustive enumeration
//! (`optimality`), and schedules by hand completed by the search (`schedule`).

mod common;

mod control;
mod optimality;
mod schedule;
mod search;
